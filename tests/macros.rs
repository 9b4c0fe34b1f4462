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
    assert!(err.to_string().contains("apply `to_accum` or `peel` first"), "{err}");
}

#[test]
fn every_primitive_can_be_written_in_spec() {
    let written = [
        (
            spec!(Matmul(2x4x8x16, (bf16, GL), (bf16, GL, col_major), (f32, GL))),
            "Matmul(2x4x8x16, (bf16, GL), (bf16, GL, col_major), (f32, GL))",
        ),
        (
            spec!(MatmulAccum(1x4x8x16, (u8, L1), (i8, L1), (i16, L1))),
            "MatmulAccum(1x4x8x16, (u8, L1), (i8, L1), (i16, L1))",
        ),
        (
            spec!(Conv(1x8x4x6x6x3x3, (f32, GL), (f32, GL), (f32, GL))),
            "Conv(1x8x4x6x6x3x3, (f32, GL), (f32, GL), (f32, GL))",
        ),
        (
            spec!(ConvAccum(1x8x4x6x6x3x3, (f32, GL), (f32, GL), (f32, GL))),
            "ConvAccum(1x8x4x6x6x3x3, (f32, GL), (f32, GL), (f32, GL))",
        ),
        (spec!(Move(4x16, (bf16, GL), (f32, GL, [0, 1, 1 oe8]))), "Move(4x16, (bf16, GL), (f32, GL, [0, 1, 1 oe8]))"),
        (spec!(FillZero(4x4, (u32, GL))), "FillZero(4x4, (u32, GL))"),
        (spec!(FillNegInf(4x4, (f32, L1))), "FillNegInf(4x4, (f32, L1))"),
        (spec!(FillMin(4x4, (i16, GL))), "FillMin(4x4, (i16, GL))"),
        (spec!(OnePrefix(4x4, (f32, GL), (f32, GL))), "OnePrefix(4x4, (f32, GL), (f32, GL))"),
        (spec!(Broadcast(4x4, dim = 1, (f32, GL), (f32, GL))), "Broadcast(4x4, dim=1, (f32, GL), (f32, GL))"),
        (spec!(DivideVec(4x4, (f32, GL), (f32, GL))), "DivideVec(4x4, (f32, GL), (f32, GL))"),
        (
            spec!(DivideVecScalar(4x4, scan = 1, (f32, GL), (f32, GL))),
            "DivideVecScalar(4x4, scan=1, (f32, GL), (f32, GL))",
        ),
        (spec!(Max(4x4, dim = 0, (u8, GL), (u8, GL))), "Max(4x4, dim=0, (u8, GL), (u8, GL))"),
        (spec!(MaxAccum(4x4, dim = 0, (u8, GL), (u8, GL))), "MaxAccum(4x4, dim=0, (u8, GL), (u8, GL))"),
        (spec!(Softmax(8x512, scan = 1, (f32, GL), (f32, GL))), "Softmax(8x512, scan=1, (f32, GL), (f32, GL))"),
        (
            spec!(SoftmaxComplete(8x512, scan = 1, (f32, GL), (f32, GL), (f32, GL), (f32, GL))),
            "SoftmaxComplete(8x512, scan=1, (f32, GL), (f32, GL), (f32, GL), (f32, GL))",
        ),
        (
            spec!(SoftmaxDenominator(8x512, scan = 1, (f32, GL), (f32, GL), (f32, GL))),
            "SoftmaxDenominator(8x512, scan=1, (f32, GL), (f32, GL), (f32, GL))",
        ),
        (
            spec!(SoftmaxDenominatorAccum(8x512, scan = 1, (f32, GL), (f32, GL), (f32, GL))),
            "SoftmaxDenominatorAccum(8x512, scan=1, (f32, GL), (f32, GL), (f32, GL))",
        ),
        (
            spec!(SoftmaxDenominatorAndMax(8x512, scan = 1, (f32, GL), (f32, GL), (f32, GL))),
            "SoftmaxDenominatorAndMax(8x512, scan=1, (f32, GL), (f32, GL), (f32, GL))",
        ),
        (
            spec!(SoftmaxDenominatorAndMaxAccum(8x512, scan = 1, (f32, GL), (f32, GL), (f32, GL))),
            "SoftmaxDenominatorAndMaxAccum(8x512, scan=1, (f32, GL), (f32, GL), (f32, GL))",
        ),
        (
            spec!(SoftmaxDenominatorAndMaxFromParts(8x8, scan = 1, (f32, GL), (f32, GL), (f32, GL), (f32, GL))),
            "SoftmaxDenominatorAndMaxFromParts(8x8, scan=1, (f32, GL), (f32, GL), (f32, GL), (f32, GL))",
        ),
        (
            spec!(SoftmaxDenominatorAndMaxFromPartsAccum(8x8, scan = 1, (f32, GL), (f32, GL), (f32, GL), (f32, GL))),
            "SoftmaxDenominatorAndMaxFromPartsAccum(8x8, scan=1, (f32, GL), (f32, GL), (f32, GL), (f32, GL))",
        ),
        (
            spec!(SoftmaxDenominatorAndUnscaled(8x512, scan = 1, (f32, GL), (f32, GL), (f32, GL))),
            "SoftmaxDenominatorAndUnscaled(8x512, scan=1, (f32, GL), (f32, GL), (f32, GL))",
        ),
        (
            spec!(SoftmaxDenominatorAndUnscaledFromMax(8x512, scan = 1, (f32, GL), (f32, GL), (f32, GL), (f32, GL))),
            "SoftmaxDenominatorAndUnscaledFromMax(8x512, scan=1, (f32, GL), (f32, GL), (f32, GL), (f32, GL))",
        ),
        (
            spec!(SoftmaxDenominatorAndUnscaledFromMaxAccum(
                8x512,
                scan = 1,
                (f32, GL),
                (f32, GL),
                (f32, GL),
                (f32, GL)
            )),
            "SoftmaxDenominatorAndUnscaledFromMaxAccum(8x512, scan=1, (f32, GL), (f32, GL), (f32, GL), (f32, GL))",
        ),
        (
            spec!(Compose([Softmax(1x64x128, scan=2), Matmul(1x64x32x128) -> f32], (f32, GL), (f32, GL), (f32, GL))),
            "Compose([Softmax(1x64x128, scan=2), Matmul(1x64x32x128) -> f32], (f32, GL), (f32, GL), (f32, GL))",
        ),
        (
            spec!((
                MatmulAccum(
                    1x4x128x16,
                    (bf16, L1, row_major),
                    (bf16, L1, col_major, c0),
                    (f32, VRF, row_major, v8),
                    serial
                ),
                [64, 1024, 32768, 1073741824]
            )),
            "(MatmulAccum(1x4x128x16, (bf16, L1, row_major), (bf16, L1, col_major, c0), (f32, VRF, row_major, v8), serial), [64, 1024, 32768, 1073741824])",
        ),
    ];
    let families: std::collections::BTreeSet<&str> = written
        .iter()
        .map(|(s, _)| match s.primitive() {
            Some(p) => p.name(),
            None => "Compose",
        })
        .collect();
    for name in morello_core::primitive::Primitive::names().chain(["Compose"]) {
        assert!(families.contains(name), "no spec! above writes {name}");
    }
    for (from_macro, text) in written {
        let parsed: Spec = text.parse().unwrap();
        assert_eq!(from_macro, parsed, "{text}");
        assert_eq!(from_macro.to_string().parse::<Spec>().unwrap(), from_macro);
    }
}

#[test]
fn target_attributes_choose_the_target() {
    use morello_core::target::{X86_AVX2 as AVX2, X86_AVX512};
    // 16-lane f32 registers exist on AVX-512 only.
    let wide = spec!(
        #[target(avx512)]
        MatmulAccum(1x1x1x16, (f32, RF), (f32, VRF, row_major, v16), (f32, VRF, row_major, v16))
    );
    assert_eq!(wide, Spec::parse_for(&wide.to_string(), &X86_AVX512).unwrap());
    assert!(Spec::parse_for(&wide.to_string(), &AVX2).is_err());
    assert_eq!(wide.limits(), &X86_AVX512.max_limits(), "limits default to the target's capacities");

    let scheduled = schedule!(
        #[target(avx512)]
        MatmulAccum(1x1x1x16, (f32, RF), (f32, VRF, row_major, v16), (f32, VRF, row_major, v16)),
        {
            select(BroadcastVecMultAdd);
        }
    )
    .unwrap();
    assert!(std::ptr::eq(scheduled.target(), &X86_AVX512));
    assert!(scheduled.is_complete());

    let portable = schedule!(
        #[target(portable)]
        Matmul(1x2x2x2, (f32, GL), (f32, GL), (f32, GL)),
        {
            synthesize_all;
        }
    )
    .unwrap();
    let mut in_vector_registers = Vec::new();
    portable.visit(&mut |n| {
        if n.spec.operands().iter().any(|t| t.level() == Level::VRF) {
            in_vector_registers.push(n.spec.to_string());
        }
    });
    assert!(in_vector_registers.is_empty(), "portable has no vector registers: {in_vector_registers:?}");
}
