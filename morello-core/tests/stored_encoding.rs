//! The database's encoding of decisions is an on-disk format: these bytes must never change
//! without a new file format version, and every rewrite must read back as itself.

use morello_core::db::stored::StoredAction;
use morello_core::dtype::Dtype;
use morello_core::kernels::KernelKind;
use morello_core::layout::{Layout, PhysDim};
use morello_core::level::Level;
use morello_core::rewrite::{Action, MoveDest, TempDest};
use morello_core::spec::{LayoutDecl, Spec};

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One rewrite of every kind, with its bytes.
fn samples() -> Vec<(Action, &'static str)> {
    let temp = TempDest { level: Level::VRF, layout: LayoutDecl::RowMajor, vector_size: Some(8) };
    let packed = TempDest {
        level: Level::L1,
        layout: LayoutDecl::Physical(vec![PhysDim::dynamic(0), PhysDim::packed(1, 8)]),
        vector_size: None,
    };
    let col_major = Layout::new(&[PhysDim::dynamic(2), PhysDim::dynamic(1)], Some(1), &[1, 16, 32]).unwrap();
    vec![
        (
            Action::Tile { tile: [1, 2, 16, 32].into_iter().collect(), parallel: true },
            "000000000400000000000000000102000000000001",
        ),
        (
            Action::Move {
                operand: 1,
                dest: MoveDest { level: Level::L1, layout: col_major, vector_size: None, dtype: Dtype::F32 },
            },
            "010000000102000000000000004c31020000000000000002000000000001000000000001000300000000000000663332",
        ),
        (
            Action::Move {
                operand: 2,
                dest: MoveDest { level: Level::VRF, layout: Layout::empty(), vector_size: Some(8), dtype: Dtype::F32 },
            },
            "0100000002030000000000000056524600000000000000000001080000000300000000000000663332",
        ),
        (Action::ToAccum, "02000000"),
        (
            Action::Select { kernel: KernelKind::BroadcastVecMultAdd },
            "03000000130000000000000042726f6164636173745665634d756c74416464",
        ),
        (
            Action::Bufferize { index: 1, dest: packed.clone() },
            "040000000102000000000000004c3102000000020000000000000000000000000001010800000000",
        ),
        (Action::SpatialSplit, "05000000"),
        (Action::BroadcastFirst { dest: temp.clone() }, "060000000300000000000000565246000000000108000000"),
        (Action::ToSoftmaxParts { denom: TempDest::at(Level::RF) }, "07000000020000000000000052460000000000"),
        (
            Action::ToSoftmaxPartsRecompute { max: TempDest::at(Level::RF), denom: packed.clone() },
            "0800000002000000000000005246000000000002000000000000004c3102000000020000000000000000000000000001010800000000",
        ),
        (Action::ToMaxAndDenominator, "09000000"),
        (Action::ToMaxAndUnscaled { max: temp }, "0a0000000300000000000000565246000000000108000000"),
        (
            Action::ParallelSplit { chunk: 256, partials: packed },
            "0b0000000001000002000000000000004c3102000000020000000000000000000000000001010800000000",
        ),
        (Action::Spread { bands: 4 }, "0c00000004000000"),
        (Action::Peel { size: 128 }, "0d00000080000000"),
    ]
}

#[test]
fn every_rewrite_keeps_its_bytes_and_reads_back() {
    let spec: Spec = "MatmulAccum(1x4x16x32, (f32, GL), (f32, GL), (f32, GL))".parse().unwrap();
    let mut wrong = Vec::new();
    for (action, expected) in samples() {
        let stored = StoredAction::encode(&action, spec.logical());
        let bytes = bincode::serialize(&stored).unwrap();
        if hex(&bytes) != expected {
            wrong.push(format!("{action}: {}", hex(&bytes)));
        }
        let read: StoredAction = bincode::deserialize(&bytes).unwrap();
        assert_eq!(read.decode(spec.logical()).as_ref(), Some(&action), "{action}");
    }
    assert!(wrong.is_empty(), "encodings changed:\n{}", wrong.join("\n"));
}
