//! Packs a weight matrix once into the layout its kernel's Spec declares, runs the product on
//! the packed weights and on the row-major ones, checks both against the reference evaluator,
//! and prints how long each takes.
//!
//! An inference engine packs its weights when it loads them; every later product reads the
//! packed copy. `bench/run` measures the same idea on the gemma.cpp shape beside OpenBLAS and
//! oneDNN; the timing here is only indicative.

mod kernels;

use morello_core::reference::{HostTensor, compare, evaluate};
use morello_core::spec::Spec;
use std::time::Instant;

const K: usize = 1024;
const N: usize = 4096;

/// `w` (row-major `K×N`) rearranged into the buffer order of the rhs of `spec_text`: each
/// element goes where the Spec's layout puts it (`Layout::buffer_index`), so the packing
/// follows the layout the kernel was synthesized for. For `[2, 1, 2 p16]`, element `(p, j)`
/// lands at `(j / 16)·16·K + 16p + j % 16`.
fn pack_for(spec_text: &str, w: &[f32]) -> Vec<f32> {
    let spec: Spec = spec_text.parse().expect("the kernel's Spec parses");
    let rhs = spec.operand(1);
    let mut packed = vec![0.0; K * N];
    for p in 0..K {
        for j in 0..N {
            let at = rhs.layout().buffer_index(rhs.shape(), &[0, p as u64, j as u64]);
            packed[at as usize] = w[p * N + j];
        }
    }
    packed
}

/// Checks `y = x · w` (`w` in the buffer order of the Spec's operand 1) with the reference
/// evaluator.
fn check(spec_text: &str, x: &[f32], w: &[f32], y: &[f32]) {
    let spec: Spec = spec_text.parse().expect("the kernel's Spec parses");
    let operands = spec.operands();
    let inputs = [HostTensor::from_elements(&operands[0], x), HostTensor::from_elements(&operands[1], w)];
    let mut expected = vec![inputs[0].clone(), inputs[1].clone(), HostTensor::zeros(&operands[2])];
    let tolerances = evaluate(spec.logical(), &mut expected);
    let actual = vec![inputs[0].clone(), inputs[1].clone(), HostTensor::from_elements(&operands[2], y)];
    compare(spec.logical(), &expected, &actual, &tolerances)
        .unwrap_or_else(|e| panic!("{spec_text} disagrees with the reference evaluator: {e}"));
}

/// The median time of `runs` calls of `f`, in seconds.
fn median_seconds(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[runs / 2]
}

fn main() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    };
    let x: Vec<f32> = (0..K).map(|_| next()).collect();
    let w: Vec<f32> = (0..K * N).map(|_| next()).collect();
    let packed = pack_for(kernels::VECMAT_PANELS_SPEC, &w);

    let mut y_row_major = vec![f32::NAN; N];
    let mut y_panels = vec![f32::NAN; N];
    kernels::vecmat_row_major(&x, &w, &mut y_row_major);
    kernels::vecmat_panels(&x, &packed, &mut y_panels);
    check(kernels::VECMAT_ROW_MAJOR_SPEC, &x, &w, &y_row_major);
    check(kernels::VECMAT_PANELS_SPEC, &x, &packed, &y_panels);
    println!("{}", kernels::VECMAT_PANELS_SPEC);
    println!("both kernels verified against the reference evaluator: y[0..4] = {:?}", &y_panels[..4]);

    let flops = 2.0 * (K * N) as f64;
    let row_major = median_seconds(51, || kernels::vecmat_row_major(&x, &w, &mut y_row_major));
    let panels = median_seconds(51, || kernels::vecmat_panels(&x, &packed, &mut y_panels));
    println!(
        "row-major weights {:.1} GFLOP/s, weights in panels {:.1} GFLOP/s (median of 51 calls; indicative only)",
        flops / row_major / 1e9,
        flops / panels / 1e9
    );
}
