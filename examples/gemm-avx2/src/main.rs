//! Runs the hand-scheduled 512³ GEMM, checks it against the reference evaluator, and reports
//! its speed next to a naive triple loop measured in the same run.

mod kernels;

use morello_core::reference::{HostTensor, compare, evaluate};
use morello_core::spec::Spec;
use std::hint::black_box;
use std::time::{Duration, Instant};

const N: usize = 512;

fn main() {
    let spec: Spec = kernels::GEMM512_SPEC.parse().expect("the kernel's Spec parses");
    let operands = spec.operands();
    let inputs: Vec<HostTensor> = operands.iter().zip(1..).map(|(t, seed)| HostTensor::random(t, seed)).collect();
    let a: Vec<f32> = inputs[0].to_elements();
    let b: Vec<f32> = inputs[1].to_elements();
    let mut c = vec![f32::NAN; N * N];

    kernels::gemm512(&a, &b, &mut c);
    let mut expected = inputs.clone();
    let tolerances = evaluate(spec.logical(), &mut expected);
    let mut actual = inputs;
    actual[2] = HostTensor::from_elements(&operands[2], &c);
    compare(spec.logical(), &expected, &actual, &tolerances).expect("gemm512 disagrees with the reference evaluator");
    println!("{}", kernels::GEMM512_SPEC);
    println!("verified against the reference evaluator (all {} outputs)", N * N);

    let flops = 2.0 * (N * N * N) as f64;
    let morello = measure(|| kernels::gemm512(black_box(&a), black_box(&b), black_box(&mut c)));
    let naive = measure(|| naive_matmul(black_box(&a), black_box(&b), black_box(&mut c)));
    let gflops = |t: Duration| flops / t.as_secs_f64() / 1e9;
    println!("morello (hand-scheduled): {:7.2} GFLOP/s (median of 5)", gflops(morello));
    println!("naive triple loop:        {:7.2} GFLOP/s (median of 5)", gflops(naive));
    println!("speedup over the naive loop: {:.1}x", naive.as_secs_f64() / morello.as_secs_f64());
}

/// The textbook i-j-k loop.
fn naive_matmul(a: &[f32], b: &[f32], c: &mut [f32]) {
    for i in 0..N {
        for j in 0..N {
            let mut sum = 0.0;
            for k in 0..N {
                sum += a[i * N + k] * b[k * N + j];
            }
            c[i * N + j] = sum;
        }
    }
}

/// Median time of one call, over 5 repetitions of at least 0.2 s each after a warm-up.
fn measure(mut f: impl FnMut()) -> Duration {
    f();
    let mut per_call: Vec<Duration> = (0..5)
        .map(|_| {
            let start = Instant::now();
            let mut calls = 0u32;
            while calls == 0 || start.elapsed() < Duration::from_millis(200) {
                f();
                calls += 1;
            }
            start.elapsed() / calls
        })
        .collect();
    per_call.sort();
    per_call[2]
}
