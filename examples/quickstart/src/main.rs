//! Morello's main job in one command: a GEMM of a realistic shape, found by the search at build
//! time (no schedule), checked against the reference evaluator, then timed on one thread beside
//! the pure-Rust libraries a user would otherwise call and the machine's measured FMA peak.

mod kernels;
mod peak;

use morello::KernelError;
use morello_core::reference::{HostTensor, compare, evaluate};
use morello_core::spec::Spec;
use peak::Vectors;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// The shape: `out[M×N] = lhs[M×K] · rhs[K×N]`.
const M: usize = 128;
const K: usize = 768;
const N: usize = 768;

/// A call that writes the product into `out`.
type Run<'a> = Box<dyn FnMut(&mut [f32]) + 'a>;

/// A kernel's safe wrapper: `lhs`, `rhs`, `out`.
type Gemm = fn(&[f32], &[f32], &mut [f32]);

/// A kernel's fallible wrapper.
type TryGemm = fn(&[f32], &[f32], &mut [f32]) -> Result<(), KernelError>;

/// One implementation to time: its name and a call writing `out`.
struct Contender<'a> {
    name: String,
    run: Run<'a>,
}

fn main() {
    let (kernel, spec_text, vectors) = chosen_kernel();
    let spec: Spec = spec_text.parse().expect("the kernel's Spec parses");
    println!("{spec_text}");
    println!("found by the search at build time for the {} target (no schedule)", vectors.target_name());

    let inputs: Vec<HostTensor> =
        spec.operands().iter().zip(1..).map(|(t, seed)| HostTensor::random(t, seed)).collect();
    let (a, b) = (inputs[0].to_elements::<f32>(), inputs[1].to_elements::<f32>());
    let mut contenders = vec![
        Contender { name: "Morello (synthesized)".to_owned(), run: Box::new(|c: &mut [f32]| kernel(&a, &b, c)) },
        Contender { name: "gemm 0.19".to_owned(), run: Box::new(|c: &mut [f32]| gemm_crate(&a, &b, c)) },
        Contender {
            name: "matrixmultiply 0.3".to_owned(),
            run: Box::new(|c: &mut [f32]| matrixmultiply_crate(&a, &b, c)),
        },
    ];

    eprint!("checking every output against the reference evaluator ... ");
    let mut expected = inputs.clone();
    let tolerances = evaluate(spec.logical(), &mut expected);
    for contender in &mut contenders {
        let mut out = vec![f32::NAN; M * N];
        (contender.run)(&mut out);
        let mut actual = inputs.clone();
        actual[2] = HostTensor::from_elements(&spec.operands()[2], &out);
        if let Err(e) = compare(spec.logical(), &expected, &actual, &tolerances) {
            eprintln!();
            eprintln!("{} disagrees with the reference evaluator: {e}", contender.name);
            std::process::exit(1);
        }
    }
    eprintln!("all {} outputs of each agree", M * N);

    eprint!("measuring the FMA peak ... ");
    let peak = peak::fma_peak_gflops(vectors);
    eprintln!("{peak:.1} GFLOP/s");
    let times = time_in_turns(&mut contenders);

    let flops = 2.0 * (M * K * N) as f64;
    let gflops = |t: Duration| flops / t.as_secs_f64() / 1e9;
    let morello = gflops(times[0]);
    println!();
    println!("one thread, median of {ROUNDS} rounds, {} FMA peak {peak:.1} GFLOP/s", cpu_name());
    println!("| implementation | GFLOP/s | % of FMA peak | Morello / it |");
    println!("|---|---|---|---|");
    for (contender, &time) in contenders.iter().zip(&times) {
        let g = gflops(time);
        println!("| {} | {g:.1} | {:.1}% | {:.2}× |", contender.name, 100.0 * g / peak, morello / g);
    }
}

/// The AVX-512 kernel if this CPU runs it, else the AVX2 one: the call, its Spec and its vectors.
fn chosen_kernel() -> (Gemm, &'static str, Vectors) {
    let probe = |f: TryGemm| {
        let mut c = vec![0.0; M * N];
        f(&vec![0.0; M * K], &vec![0.0; K * N], &mut c)
    };
    match probe(kernels::try_projection_avx512) {
        Ok(()) => (kernels::projection_avx512, kernels::PROJECTION_AVX512_SPEC, Vectors::Avx512),
        Err(KernelError::UnsupportedCpu { .. }) => match probe(kernels::try_projection_avx2) {
            Ok(()) => (kernels::projection_avx2, kernels::PROJECTION_AVX2_SPEC, Vectors::Avx2),
            Err(e) => {
                eprintln!("this example needs an x86-64 CPU with AVX2 and FMA at least: {e}");
                std::process::exit(1);
            }
        },
        Err(e) => panic!("{e}"),
    }
}

/// Rounds of timing: each times every contender once, in turn.
const ROUNDS: usize = 5;

/// The median time per call of each contender, timed in turns: each round runs every contender
/// for at least 0.2 s after one untimed call, so a slow spell of the machine falls on all of
/// them alike.
fn time_in_turns(contenders: &mut [Contender]) -> Vec<Duration> {
    let mut out = vec![0.0f32; M * N];
    let mut per_round: Vec<Vec<Duration>> = vec![Vec::new(); contenders.len()];
    for round in 1..=ROUNDS {
        eprint!("\rtiming, round {round} of {ROUNDS} ... ");
        for (contender, times) in contenders.iter_mut().zip(&mut per_round) {
            (contender.run)(black_box(&mut out));
            let start = Instant::now();
            let mut calls = 0u32;
            while calls == 0 || start.elapsed() < Duration::from_millis(200) {
                (contender.run)(black_box(&mut out));
                calls += 1;
            }
            times.push(start.elapsed() / calls);
        }
    }
    eprintln!("done");
    per_round
        .into_iter()
        .map(|mut times| {
            times.sort();
            times[times.len() / 2]
        })
        .collect()
}

/// `gemm::gemm` on one thread, row-major.
fn gemm_crate(a: &[f32], b: &[f32], c: &mut [f32]) {
    assert!(a.len() == M * K && b.len() == K * N && c.len() == M * N);
    // SAFETY: row-major strides of M×K, K×N and M×N matrices of the lengths checked above.
    unsafe {
        gemm::gemm(
            M,
            N,
            K,
            c.as_mut_ptr(),
            1,
            N as isize,
            false,
            a.as_ptr(),
            1,
            K as isize,
            b.as_ptr(),
            1,
            N as isize,
            0.0f32,
            1.0f32,
            false,
            false,
            false,
            gemm::Parallelism::None,
        )
    }
}

/// `matrixmultiply::sgemm` (single-threaded without its `threading` feature), row-major.
fn matrixmultiply_crate(a: &[f32], b: &[f32], c: &mut [f32]) {
    assert!(a.len() == M * K && b.len() == K * N && c.len() == M * N);
    // SAFETY: row-major strides of M×K, K×N and M×N matrices of the lengths checked above.
    unsafe {
        matrixmultiply::sgemm(
            M,
            K,
            N,
            1.0,
            a.as_ptr(),
            K as isize,
            1,
            b.as_ptr(),
            N as isize,
            1,
            0.0,
            c.as_mut_ptr(),
            N as isize,
            1,
        )
    }
}

/// The CPU's model name and a comma, for the table's heading.
fn cpu_name() -> String {
    morello_core::harness::cpu_model_name().map_or_else(|| "this CPU,".to_owned(), |n| format!("{n},"))
}
