//! Every kernel compiled by this crate's build.rs agrees with the reference evaluator.

use morello::KernelError;
use morello::bf16;
use morello_core::harness::cpu_supports;
use morello_core::reference::{Element, HostTensor, compare, evaluate};
use morello_core::spec::Spec;
use morello_core::target::X86_AVX512;
use morello_e2e::{kernels, scheduled, targets};

/// Random inputs for `spec_text`'s operands (outputs filled with a sentinel), the reference
/// result, and a checker for the kernel's result.
struct Case {
    spec: Spec,
    inputs: Vec<HostTensor>,
}

impl Case {
    fn new(spec_text: &str, seed: u64) -> Case {
        let spec: Spec = spec_text.parse().expect("kernel Specs parse");
        let inputs = spec.operands().iter().zip(seed..).map(|(t, s)| HostTensor::random(t, s)).collect();
        Case { spec, inputs }
    }

    fn elements<T: Element>(&self, i: usize) -> Vec<T> {
        self.inputs[i].to_elements()
    }

    /// Checks the buffers the kernel produced (one per operand) against the reference.
    fn check<T: Element>(&self, produced: &[&[T]]) {
        let actual: Vec<HostTensor> =
            self.spec.operands().iter().zip(produced).map(|(t, data)| HostTensor::from_elements(t, data)).collect();
        self.check_tensors(&actual);
    }

    /// Like `check`, for operands of different element types.
    fn check_tensors(&self, actual: &[HostTensor]) {
        let mut expected = self.inputs.clone();
        let tolerances = evaluate(self.spec.logical(), &mut expected);
        if let Err(mismatch) = compare(self.spec.logical(), &expected, actual, &tolerances) {
            panic!("{}: {mismatch}", self.spec);
        }
    }
}

#[test]
fn synthesized_f32_matmul() {
    let case = Case::new(kernels::MATMUL_F32_SPEC, 1);
    let (a, b) = (case.elements::<f32>(0), case.elements::<f32>(1));
    let mut c = vec![f32::NAN; 64];
    kernels::matmul_f32(&a, &b, &mut c);
    case.check(&[&a, &b, &c]);
}

#[test]
fn synthesized_u32_matmul_with_boundaries() {
    let case = Case::new(kernels::MATMUL_U32_ODD_SPEC, 2);
    let (a, b) = (case.elements::<u32>(0), case.elements::<u32>(1));
    let mut c = vec![0xdead_beef; 21];
    kernels::matmul_u32_odd(&a, &b, &mut c);
    case.check(&[&a, &b, &c]);
}

#[test]
fn synthesized_accumulation_reads_the_output() {
    let case = Case::new(kernels::MATMUL_ACCUM_SPEC, 3);
    let (a, b) = (case.elements::<f32>(0), case.elements::<f32>(1));
    let mut c = case.elements::<f32>(2);
    kernels::matmul_accum(&a, &b, &mut c);
    case.check(&[&a, &b, &c]);
}

#[test]
fn transpose_and_packing_moves() {
    let case = Case::new(kernels::TRANSPOSE_SPEC, 4);
    let src = case.elements::<f32>(0);
    let mut dst = vec![f32::NAN; 128];
    kernels::transpose(&src, &mut dst);
    case.check(&[&src, &dst]);

    let case = Case::new(kernels::PACK_STRIPS_SPEC, 5);
    let src = case.elements::<f32>(0);
    let mut dst = vec![f32::NAN; 64];
    kernels::pack_strips(&src, &mut dst);
    case.check(&[&src, &dst]);
}

#[test]
fn fill_zero() {
    let case = Case::new(kernels::ZERO_SPEC, 6);
    let mut out = case.elements::<u32>(0);
    kernels::zero(&mut out);
    case.check(&[&out]);
}

#[test]
fn figure_one_with_register_parameters() {
    let case = Case::new(scheduled::FIG1_SPEC, 7);
    let (lhs, rhs) = (case.elements::<f32>(0), case.elements::<f32>(1));
    let mut out = case.elements::<f32>(2);
    scheduled::fig1(&lhs, &rhs, &mut out);
    case.check(&[&lhs, &rhs, &out]);
}

#[test]
fn scheduled_gemm_with_boundary_rows() {
    let case = Case::new(scheduled::GEMM_TILED_SPEC, 8);
    let (a, b) = (case.elements::<f32>(0), case.elements::<f32>(1));
    let mut c = vec![f32::NAN; 320];
    scheduled::gemm_tiled(&a, &b, &mut c);
    case.check(&[&a, &b, &c]);
}

#[test]
fn wrong_lengths_are_errors_not_undefined_behaviour() {
    let (a, b) = (vec![0.0f32; 32], vec![0.0f32; 128]);
    let mut c = vec![0.0f32; 63];
    let err = kernels::try_matmul_f32(&a, &b, &mut c).unwrap_err();
    assert_eq!(err, KernelError::WrongLength { kernel: "matmul_f32", operand: "out", expected: 64, actual: 63 });
}

#[test]
#[should_panic(expected = "operand `lhs` must have 32 elements, but the slice has 31")]
fn the_panicking_wrapper_names_the_operand() {
    let (a, b) = (vec![0.0f32; 31], vec![0.0f32; 128]);
    let mut c = vec![0.0f32; 64];
    kernels::matmul_f32(&a, &b, &mut c);
}

/// Runs an AVX-512 kernel; returns false (after checking the error is honest) on a CPU
/// without AVX-512, where the wrapper must refuse to run it.
fn ran_on_avx512(result: Result<(), KernelError>) -> bool {
    let supported = cpu_supports(&X86_AVX512);
    match result {
        Ok(()) => {
            assert!(supported, "ran although this CPU lacks AVX-512 features");
            true
        }
        Err(KernelError::UnsupportedCpu { missing, .. }) => {
            assert!(!supported, "refused although the CPU has {missing:?}");
            eprintln!("note: this CPU lacks {missing:?}; the AVX-512 kernel was only compiled");
            false
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn softmax_on_avx512_and_portable() {
    let case = Case::new(targets::SOFTMAX_AVX512_SPEC, 9);
    let x = case.elements::<f32>(0);
    let mut y = vec![f32::NAN; 64];
    if ran_on_avx512(targets::try_softmax_avx512(&x, &mut y)) {
        case.check(&[&x, &y]);
    }
    let mut y = vec![f32::NAN; 64];
    targets::softmax_portable(&x, &mut y);
    case.check(&[&x, &y]);
}

#[test]
fn bf16_vector_matrix_product() {
    let case = Case::new(targets::VECMAT_BF16_SPEC, 10);
    let (a, b) = (case.elements::<bf16>(0), case.elements::<bf16>(1));
    let mut c = vec![f32::NAN; 32];
    if ran_on_avx512(targets::try_vecmat_bf16(&a, &b, &mut c)) {
        let ops = case.spec.operands();
        case.check_tensors(&[
            HostTensor::from_elements(&ops[0], &a),
            HostTensor::from_elements(&ops[1], &b),
            HostTensor::from_elements(&ops[2], &c),
        ]);
    }
}

#[test]
fn parallel_loops_honour_thread_limits_and_concurrent_callers() {
    let case = Case::new(targets::MATMUL_PARALLEL_SPEC, 11);
    let (a, b) = (case.elements::<f32>(0), case.elements::<f32>(1));
    for threads in [1, 2, 4] {
        let mut c = vec![f32::NAN; 128];
        morello::with_max_threads(threads, || targets::matmul_parallel(&a, &b, &mut c));
        case.check(&[&a, &b, &c]);
    }
    // Several application threads calling at once share the one pool.
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..20 {
                    let mut c = vec![f32::NAN; 128];
                    targets::matmul_parallel(&a, &b, &mut c);
                    case.check(&[&a, &b, &c]);
                }
            });
        }
    });
}
