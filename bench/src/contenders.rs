//! The Morello kernels as contenders, by workload.

use crate::kernels;
use crate::peers::Contender;
use crate::workload::{Inputs, Workload, rotate};

/// A Morello f32 kernel `c = a · b`.
type F32Kernel = fn(&[f32], &[f32], &mut [f32]);

/// Label of kernels found entirely by the search.
const SYNTHESIZED: &str = "Morello (synthesized)";
/// Label of kernels whose outer loops were scheduled by hand.
const BLOCKED: &str = "Morello (256³ blocks by hand, rest searched)";
/// The same with a parallel loop over bands of rows.
const BLOCKED_PARALLEL: &str = "Morello (parallel 256³ blocks by hand)";

/// The Morello kernels for `w`: the synthesized one, if the search produced one for its
/// shape, or labelled partly hand-scheduled ones (with parallel loops when `threads > 1`).
pub fn morello<'a>(w: &Workload, inputs: &'a Inputs, threads: usize) -> Vec<Contender<'a>> {
    if w.bf16 {
        let a = &inputs.a16;
        return match (w.m, w.k, w.n) {
            (1, 2048, 16384) => vec![Contender {
                name: SYNTHESIZED.to_owned(),
                run: rotate(inputs.b16_copies(), move |b, c| kernels::vecmat_bf16(a, b, c)),
            }],
            _ => Vec::new(),
        };
    }
    let kernels: &[(&str, F32Kernel)] = match (w.m, w.k, w.n) {
        (48, 48, 48) => &[(SYNTHESIZED, kernels::gemm48)],
        (64, 64, 64) => &[(SYNTHESIZED, kernels::gemm64)],
        (100, 100, 100) => &[(SYNTHESIZED, kernels::gemm100)],
        (256, 256, 256) => &[(SYNTHESIZED, kernels::gemm256)],
        (1024, 1024, 1024) if threads > 1 => {
            &[(BLOCKED, kernels::gemm1024_blocked), (BLOCKED_PARALLEL, kernels::gemm1024_blocked_parallel)]
        }
        (2048, 2048, 2048) if threads > 1 => {
            &[(BLOCKED, kernels::gemm2048_blocked), (BLOCKED_PARALLEL, kernels::gemm2048_blocked_parallel)]
        }
        (1024, 1024, 1024) => &[(BLOCKED, kernels::gemm1024_blocked)],
        (2048, 2048, 2048) => &[(BLOCKED, kernels::gemm2048_blocked)],
        (8, 512, 512) => &[(SYNTHESIZED, kernels::gemm8x512x512)],
        (1, 2048, 16384) => &[(SYNTHESIZED, kernels::vecmat_f32)],
        _ => &[],
    };
    let a = &inputs.a;
    kernels
        .iter()
        .map(|&(name, kernel)| Contender {
            name: name.to_owned(),
            run: rotate(inputs.b_copies(), move |b, c| kernel(a, b, c)),
        })
        .collect()
}
