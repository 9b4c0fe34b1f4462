//! `spec!` and `schedule!` evaluate to the values the notation describes.

use morello_core::cost::impl_cost;
use morello_core::kernels::KernelKind;
use morello_core::level::Level;
use morello_core::schedule::PartialImpl;
use morello_core::search::Synthesizer;
use morello_core::spec::{LayoutDecl, Spec};
use morello_core::target::X86_AVX2;
use morello_macros::{schedule, spec};

#[test]
fn spec_macro_builds_the_spec_its_text_describes() {
    let from_macro = spec!(MatmulAccum(1x4x4x16, (f32, RF), (f32, VRF, row_major, v8), (f32, L1), serial));
    let from_text: Spec =
        "MatmulAccum(1×4×4×16, (f32, RF), (f32, VRF, row_major, v8), (f32, L1, row_major), serial)".parse().unwrap();
    assert_eq!(from_macro, from_text);
    let with_limits = spec!((Move(4x4, (u8, GL), (u8, GL, col_major)), [64, 512, 1024, 4096]));
    assert_eq!(with_limits.limits().get(Level::L1), 1024);
}

#[test]
fn schedule_macro_matches_the_method_calls() {
    let by_macro = schedule!(MatmulAccum(1x4x4x16, (f32, RF), (f32, VRF, row_major, v8), (f32, L1), serial), {
        tile([1, 1, 1, 16]);
        move_param(2, VRF, row_major, v8);
        subschedule([1]) { select(BroadcastVecMultAdd); }
    })
    .unwrap();
    let spec = spec!(MatmulAccum(1x4x4x16, (f32, RF), (f32, VRF, row_major, v8), (f32, L1), serial));
    let by_hand = PartialImpl::new(spec.clone(), &X86_AVX2)
        .tile(&[1, 1, 1, 16])
        .and_then(|p| p.move_param(2, Level::VRF, Some(LayoutDecl::RowMajor), Some(8)))
        .and_then(|p| p.subschedule(&[1], |s| s.select(KernelKind::BroadcastVecMultAdd)))
        .unwrap();
    assert_eq!(by_macro.root(), by_hand.root());
    assert_eq!(by_macro.root().unscheduled().len(), 2, "the load and store are left");

    // With a Spec held in a variable, and finishing with synthesis.
    let complete = schedule!(spec, {
        tile([1, 1, 1, 16]);
        synthesize_all;
    })
    .unwrap();
    assert!(complete.is_complete());
    let cost = impl_cost(&complete, &X86_AVX2).unwrap();
    let tiled = PartialImpl::new(complete.spec.clone(), &X86_AVX2).tile(&[1, 1, 1, 16]).unwrap();
    let best = tiled.synthesize_all(&mut Synthesizer::new(&X86_AVX2)).unwrap();
    assert_eq!(cost, impl_cost(&best, &X86_AVX2).unwrap());
}

#[test]
fn schedule_errors_are_values_at_run_time() {
    let spec = spec!(Matmul(1x4x4x4, (f32, GL), (f32, GL), (f32, GL)));
    let err = schedule!(spec, {
        tile([1, 2, 2, 4]);
    })
    .unwrap_err();
    assert!(err.to_string().contains("apply `to_accum` first"), "{err}");
}
