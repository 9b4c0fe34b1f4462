//! The Morello kernels as contenders, by workload.

use crate::aligned::Placed;
use crate::kernels;
#[cfg(narrowed_kernels)]
use crate::kernels_narrowed;
use crate::peers::Contender;
use crate::prepack::pack_rhs;
use crate::workload::{Inputs, Workload};
use half::bf16;
use std::rc::Rc;

/// A Morello kernel `c = a · b` with inputs of type `T` and an f32 output.
type Kernel<T> = fn(&[T], &[T], &mut [f32]);
/// A labelled kernel, and whether it has parallel loops (those run only with several threads).
type Labelled<T> = (&'static str, Kernel<T>, bool);

/// Label of kernels found entirely by the search.
const SYNTHESIZED: &str = "Morello (synthesized)";
/// The same, reading `b` prepacked in pairs of rows (packed once, outside the timing).
const SYNTHESIZED_PAIRS: &str = "Morello (synthesized, b in row pairs)";
/// The same, reading `b` prepacked in panels of columns (of row pairs, for bf16).
const SYNTHESIZED_PANELS: &str = "Morello (synthesized, b in panels)";
/// The same inside a parallel loop over column halves.
const PANELS_PARALLEL: &str = "Morello (parallel by hand, b in panels)";
/// Label of kernels found entirely by the search in the narrowed search space (no relayouts of
/// the output within global memory; `kernels_narrowed.in.rs`).
#[cfg(narrowed_kernels)]
const SYNTHESIZED_NARROWED: &str = "Morello (synthesized, narrowed space)";
/// The same, reading `b` prepacked in panels of 64 columns.
#[cfg(narrowed_kernels)]
const SYNTHESIZED_NARROWED_PANELS: &str = "Morello (synthesized, b in panels, narrowed space)";
/// The same for kernels with parallel loops, which the search placed too.
#[cfg(narrowed_kernels)]
const SYNTHESIZED_NARROWED_PARALLEL: &str = "Morello (synthesized parallel, narrowed space)";
/// Label of kernels whose outer loops were scheduled by hand.
const BLOCKED: &str = "Morello (256³ blocks by hand, rest searched)";
/// The same with a parallel loop over bands of rows.
const BLOCKED_PARALLEL: &str = "Morello (parallel 256³ blocks by hand)";
/// Label of kernels scheduled by hand down to register tiles that run over the whole of `k`,
/// packing `b` inside.
const FULL_K: &str = "Morello (full-k tiles by hand, b packed inside)";
/// The same, reading `b` in place.
const FULL_K_IN_PLACE: &str = "Morello (full-k tiles by hand, b in place)";
/// The same, reading `b` prepacked in panels.
const PANELS_FULL_K: &str = "Morello (full-k tiles by hand, b in panels)";
/// The same inside a parallel loop over bands of rows.
const PANELS_FULL_K_PARALLEL: &str = "Morello (parallel full-k tiles by hand, b in panels)";
/// Label of the bf16 vector-matrix kernel over `b` in row pairs whose tiles of 8 pairs of rows
/// side by side were chosen by hand.
const PAIRS_SIDE_BY_SIDE: &str = "Morello (8 row pairs side by side by hand, b in row pairs)";
/// Label of vector-matrix kernels whose sweep over blocks of rows was scheduled by hand.
const ROW_BLOCKED: &str = "Morello (row blocks by hand, rest searched)";
/// The same inside a parallel loop over column halves.
const ROW_BLOCKED_PARALLEL: &str = "Morello (parallel row blocks by hand)";

/// Kernels that read `b` prepacked as the rhs of a Spec (a kernel's `*_SPEC`) declares, and
/// their labels; `b` is packed once for all of them.
type Prepacked<T> = (&'static str, &'static [Labelled<T>]);

/// The Morello kernels for `w`: the synthesized one, if the search produced one for its
/// shape, and labelled partly hand-scheduled ones (with parallel loops when `threads > 1`), on
/// `b` as given and on `b` prepacked.
pub fn morello<'a>(w: &Workload, inputs: &'a Inputs, threads: usize) -> Vec<Contender<'a>> {
    if w.bf16 {
        let (kernels, packed): (&[Labelled<bf16>], &[Prepacked<bf16>]) = match (w.m, w.k, w.n) {
            (1, 2048, 16384) => (
                &[
                    (SYNTHESIZED, kernels::vecmat_bf16, false),
                    (ROW_BLOCKED, kernels::vecmat_bf16_blocked, false),
                    (ROW_BLOCKED_PARALLEL, kernels::vecmat_bf16_blocked_parallel, true),
                ],
                &[
                    (
                        kernels::VECMAT_BF16_PAIRS_SPEC,
                        &[
                            (SYNTHESIZED_PAIRS, kernels::vecmat_bf16_pairs, false),
                            (PAIRS_SIDE_BY_SIDE, kernels::vecmat_bf16_pairs_side_by_side, false),
                        ],
                    ),
                    (
                        kernels::VECMAT_BF16_PANELS_SPEC,
                        &[
                            (SYNTHESIZED_PANELS, kernels::vecmat_bf16_panels, false),
                            (PANELS_PARALLEL, kernels::vecmat_bf16_panels_parallel, true),
                        ],
                    ),
                ],
            ),
            _ => (&[], &[]),
        };
        let copies = inputs.b16_copies();
        let mut all = contenders(kernels, &inputs.a16, copies.clone(), threads);
        all.extend(prepacked(packed, &inputs.a16, &inputs.b16, copies.len(), threads));
        return all;
    }
    let (kernels, packed): (&[Labelled<f32>], &[Prepacked<f32>]) = match (w.m, w.k, w.n) {
        (48, 48, 48) => (&[(SYNTHESIZED, kernels::gemm48, false)], &[]),
        (64, 64, 64) => (&[(SYNTHESIZED, kernels::gemm64, false)], &[]),
        (100, 100, 100) => (&[(SYNTHESIZED, kernels::gemm100, false)], &[]),
        (256, 256, 256) => (&[(SYNTHESIZED, kernels::gemm256, false)], &[]),
        (1024, 1024, 1024) => (
            &[
                (BLOCKED, kernels::gemm1024_blocked, false),
                (FULL_K, kernels::gemm1024_full_k, false),
                (BLOCKED_PARALLEL, kernels::gemm1024_blocked_parallel, true),
            ],
            &[(
                kernels::GEMM1024_PANELS_FULL_K_SPEC,
                &[
                    (PANELS_FULL_K, kernels::gemm1024_panels_full_k, false),
                    (PANELS_FULL_K_PARALLEL, kernels::gemm1024_panels_full_k_parallel, true),
                ],
            )],
        ),
        (2048, 2048, 2048) => (
            &[
                (BLOCKED, kernels::gemm2048_blocked, false),
                (FULL_K, kernels::gemm2048_full_k, false),
                (BLOCKED_PARALLEL, kernels::gemm2048_blocked_parallel, true),
            ],
            &[(
                kernels::GEMM2048_PANELS_FULL_K_SPEC,
                &[
                    (PANELS_FULL_K, kernels::gemm2048_panels_full_k, false),
                    (PANELS_FULL_K_PARALLEL, kernels::gemm2048_panels_full_k_parallel, true),
                ],
            )],
        ),
        (8, 512, 512) => (
            &[(SYNTHESIZED, kernels::gemm8x512x512, false), (FULL_K_IN_PLACE, kernels::gemm8x512x512_full_k, false)],
            &[],
        ),
        (1, 2048, 16384) => (
            &[
                (SYNTHESIZED, kernels::vecmat_f32, false),
                (ROW_BLOCKED, kernels::vecmat_f32_blocked, false),
                (ROW_BLOCKED_PARALLEL, kernels::vecmat_f32_blocked_parallel, true),
            ],
            &[(
                kernels::VECMAT_F32_PANELS_SPEC,
                &[
                    (SYNTHESIZED_PANELS, kernels::vecmat_f32_panels, false),
                    (PANELS_PARALLEL, kernels::vecmat_f32_panels_parallel, true),
                ],
            )],
        ),
        _ => (&[], &[]),
    };
    let (narrowed, narrowed_packed) = narrowed_kernels(w);
    let copies = inputs.b_copies();
    let mut all = contenders(narrowed, &inputs.a, copies.clone(), threads);
    all.extend(prepacked(narrowed_packed, &inputs.a, &inputs.b, copies.len(), threads));
    all.extend(contenders(kernels, &inputs.a, copies.clone(), threads));
    all.extend(prepacked(packed, &inputs.a, &inputs.b, copies.len(), threads));
    all
}

/// The kernels wholly searched in the narrowed space for the f32 workload `w`, on `b` as given
/// and on `b` prepacked (first in its table).
#[cfg(narrowed_kernels)]
fn narrowed_kernels(w: &Workload) -> (&'static [Labelled<f32>], &'static [Prepacked<f32>]) {
    // One arm per size of `NARROWED_SIZES`.
    match (w.m, w.k, w.n) {
        (1024, 1024, 1024) => (
            &[
                (SYNTHESIZED_NARROWED, kernels_narrowed::gemm1024_narrowed, false),
                (SYNTHESIZED_NARROWED_PARALLEL, kernels_narrowed::gemm1024_parallel_narrowed, true),
            ],
            &[(
                kernels_narrowed::GEMM1024_PANELS_SPEC,
                &[(SYNTHESIZED_NARROWED_PANELS, kernels_narrowed::gemm1024_panels, false)],
            )],
        ),
        (2048, 2048, 2048) => (
            &[
                (SYNTHESIZED_NARROWED, kernels_narrowed::gemm2048_narrowed, false),
                (SYNTHESIZED_NARROWED_PARALLEL, kernels_narrowed::gemm2048_parallel_narrowed, true),
            ],
            &[(
                kernels_narrowed::GEMM2048_PANELS_SPEC,
                &[(SYNTHESIZED_NARROWED_PANELS, kernels_narrowed::gemm2048_panels, false)],
            )],
        ),
        _ => (&[], &[]),
    }
}

/// None: the benchmark was built with `MORELLO_BENCH_NARROWED=skip`.
#[cfg(not(narrowed_kernels))]
fn narrowed_kernels(_: &Workload) -> (&'static [Labelled<f32>], &'static [Prepacked<f32>]) {
    (&[], &[])
}

/// The sizes `n` of the f32 `n³` GEMMs that [`narrowed_kernels`] has kernels for.
const NARROWED_SIZES: [usize; 2] = [1024, 2048];

/// Whether this build left out `w`'s narrowed-space kernels (`MORELLO_BENCH_NARROWED=skip`).
pub fn narrowed_left_out(w: &Workload) -> bool {
    !cfg!(narrowed_kernels) && !w.bf16 && w.m == w.k && w.k == w.n && NARROWED_SIZES.contains(&w.n)
}

/// The kernels of `groups` as contenders on `a` and `copies` copies of `b` packed for each
/// group (see [`pack_rhs`]), placed as `b` is, leaving out those with parallel loops on one
/// thread.
fn prepacked<'a, T: Copy + Default + 'a>(
    groups: &[Prepacked<T>],
    a: &'a [T],
    b: &Placed<T>,
    copies: usize,
    threads: usize,
) -> Vec<Contender<'a>> {
    let mut out = Vec::new();
    for &(spec, kernels) in groups {
        let runnable: Vec<&Labelled<T>> =
            kernels.iter().filter(|&&(_, _, parallel)| !parallel || threads > 1).collect();
        if runnable.is_empty() {
            continue;
        }
        let packed: Rc<[Placed<T>]> = vec![Placed::new(&pack_rhs(b, spec), b.offset()); copies].into();
        for &&(name, kernel, _) in &runnable {
            let packed = packed.clone();
            out.push(Contender::rotating(name, (0..copies).collect(), move |&i, c| kernel(a, &packed[i], c)));
        }
    }
    out
}

/// `kernels` as contenders on `a` and each of `b_copies` in turn, leaving out those with
/// parallel loops on one thread.
fn contenders<'a, T>(
    kernels: &[Labelled<T>],
    a: &'a [T],
    b_copies: Vec<&'a [T]>,
    threads: usize,
) -> Vec<Contender<'a>> {
    kernels
        .iter()
        .filter(|&&(_, _, parallel)| !parallel || threads > 1)
        .map(|&(name, kernel, _)| Contender::rotating(name, b_copies.clone(), move |b, c| kernel(a, b, c)))
        .collect()
}
