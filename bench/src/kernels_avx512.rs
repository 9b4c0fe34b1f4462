//! The Morello kernels for the benchmark's shapes on the AVX-512 target, synthesized in
//! `build.rs` on a CPU with AVX-512 (`kernels_avx2.rs` holds the same kernels for the others;
//! answers are kept in `target/morello/`; see README.md for searching the slow ones first with
//! `morello-db synthesize`). Kernels without a schedule are wholly found by the
//! search; those with one are partly hand-scheduled and say so. All operands are row-major in
//! memory.

morello::kernel! {
    /// `c = a · b`, 48×48×48 f32.
    #[target(avx512)]
    pub fn gemm48(Matmul(1x48x48x48, (f32, GL), (f32, GL), (f32, GL), serial));

    /// `c = a · b`, 64×64×64 f32.
    #[target(avx512)]
    pub fn gemm64(Matmul(1x64x64x64, (f32, GL), (f32, GL), (f32, GL), serial));

    /// `c = a · b`, 100×100×100 f32.
    #[target(avx512)]
    pub fn gemm100(Matmul(1x100x100x100, (f32, GL), (f32, GL), (f32, GL), serial));

    /// `c = a · b`, 256×256×256 f32. Its search took 182 s from an empty database, longer
    /// than a build should: `morello-db synthesize` can put it in the database first (see
    /// README.md).
    #[target(avx512)]
    pub fn gemm256(Matmul(1x256x256x256, (f32, GL), (f32, GL), (f32, GL), serial));

    /// `c = a · b`, 1024×1024×1024 f32, **partly hand-scheduled**: the schedule splits it into
    /// 256³ blocks by hand and the search (the 256³ answer above) implements each block. Shown
    /// beside the wholly searched `gemm1024_narrowed`: under cost model 5 the search's choice ran
    /// slower than these blocks; under model 6 the two run alike (`bench/README.md`).
    #[target(avx512)]
    pub fn gemm1024_blocked(Matmul(1x1024x1024x1024, (f32, GL), (f32, GL), (f32, GL), serial))
    schedule {
        to_accum;
        tile([1, 256, 256, 256]);
        synthesize_all;
    }

    /// `c = a · b`, 2048×2048×2048 f32, partly hand-scheduled like `gemm1024_blocked`.
    #[target(avx512)]
    pub fn gemm2048_blocked(Matmul(1x2048x2048x2048, (f32, GL), (f32, GL), (f32, GL), serial))
    schedule {
        to_accum;
        tile([1, 256, 256, 256]);
        synthesize_all;
    }

    /// `c = a · b`, 1024×1024×1024 f32, hand-scheduled like `gemm2048_packed` below (the same
    /// copies and register tiles, for each 256×512 block of `b`).
    #[target(avx512)]
    pub fn gemm1024_packed(Matmul(1x1024x1024x1024, (f32, GL), (f32, GL), (f32, GL), serial))
    schedule {
        to_accum;
        tile([1, 1024, 256, 512]);
        move_param(1, GL, [2, 1, 2 p64]);
        tile([1, 128, 256, 512]);
        move_param(0, GL);
        tile([1, 128, 128, 64]);
        tile([1, 6, 128, 64]);
        synthesize_all;
    }

    /// `c = a · b`, 2048×2048×2048 f32, **hand-scheduled down to the register tile**: for each
    /// 256×512 block of `b` (in the searched kernel's order), the kernel copies the block into
    /// panels of 64 columns, then for each 128×256 block of `a` copies it into 128 rows of 1 KiB,
    /// and runs 6-row register tiles over 128 values of `k` at a time. The search implements the
    /// copies and the register tiles. With a 32 KiB L1 the cost model ranked this plan 22%
    /// above the searched one, which it ran 9–11% faster than on the Zen 5 VM; with the
    /// target's 48 KiB the search also chooses 128-deep register tiles, and the two ran at the
    /// same speed (`bench/README.md`, "A 48 KiB L1 for the AVX-512 target").
    #[target(avx512)]
    pub fn gemm2048_packed(Matmul(1x2048x2048x2048, (f32, GL), (f32, GL), (f32, GL), serial))
    schedule {
        to_accum;
        tile([1, 2048, 1024, 2048]);
        tile([1, 2048, 1024, 512]);
        tile([1, 2048, 256, 512]);
        move_param(1, GL, [2, 1, 2 p64]);
        tile([1, 128, 256, 512]);
        move_param(0, GL);
        tile([1, 128, 128, 64]);
        tile([1, 6, 128, 64]);
        synthesize_all;
    }

    /// `c = a · b`, 1024×1024×1024 f32 on several threads, partly hand-scheduled: a parallel
    /// loop over 256-row bands, then `gemm1024_blocked`'s 256³ blocks.
    #[target(avx512)]
    pub fn gemm1024_blocked_parallel(Matmul(1x1024x1024x1024, (f32, GL), (f32, GL), (f32, GL)))
    schedule {
        to_accum;
        tile([1, 256, 1024, 1024], parallel);
        tile([1, 256, 256, 256]);
        synthesize_all;
    }

    /// `c = a · b`, 2048×2048×2048 f32 on several threads, partly hand-scheduled like
    /// `gemm1024_blocked_parallel`.
    #[target(avx512)]
    pub fn gemm2048_blocked_parallel(Matmul(1x2048x2048x2048, (f32, GL), (f32, GL), (f32, GL)))
    schedule {
        to_accum;
        tile([1, 256, 2048, 2048], parallel);
        tile([1, 256, 256, 256]);
        synthesize_all;
    }

    /// `c = a · b`, 8×512 times 512×512, f32.
    #[target(avx512)]
    pub fn gemm8x512x512(Matmul(1x8x512x512, (f32, GL), (f32, GL), (f32, GL), serial));

    /// `c = a · b`, a 2048-vector times a 2048×16384 matrix, f32 (the gemma.cpp shape).
    #[target(avx512)]
    pub fn vecmat_f32(Matmul(1x1x2048x16384, (f32, GL), (f32, GL), (f32, GL), serial));

    /// `c = a · b` as `vecmat_f32`, with `b` prepacked in panels of 16 columns (`[2, 1, 2 p16]`:
    /// element `(p, j)` at `(j / 16)·16·2048 + 16p + j % 16`), so the matrix is read in one
    /// sequential stream. The layout is chosen by hand; the kernel is wholly found by the
    /// search.
    #[target(avx512)]
    pub fn vecmat_f32_panels(Matmul(1x1x2048x16384, (f32, GL), (f32, GL, [2, 1, 2 p16]), (f32, GL), serial));

    /// `c = a · b` as `vecmat_f32_panels` on several threads, **partly hand-scheduled**: a
    /// parallel loop over the two column halves; the search implements each.
    #[target(avx512)]
    pub fn vecmat_f32_panels_parallel(Matmul(1x1x2048x16384, (f32, GL), (f32, GL, [2, 1, 2 p16]), (f32, GL)))
    schedule {
        to_accum;
        tile([1, 1, 2048, 8192], parallel);
        synthesize_all;
    }

    /// `c = a · b`, a 2048-vector times a 2048×16384 matrix, bf16 inputs and an f32 output.
    #[target(avx512)]
    pub fn vecmat_bf16(Matmul(1x1x2048x16384, (bf16, GL), (bf16, GL), (f32, GL), serial));

    /// `c = a · b` as `vecmat_bf16`, with `b` prepacked in pairs of rows (`[1, 2, 1 p2]`:
    /// element `(k, j)` at `(k / 2)·2n + 2j + k % 2`), the layout of AVX512-BF16's pair dot
    /// products; an inference engine packs its weights so once, as oneDNN does here. Wholly
    /// found by the search.
    #[target(avx512)]
    pub fn vecmat_bf16_pairs(Matmul(1x1x2048x16384, (bf16, GL), (bf16, GL, [1, 2, 1 p2]), (f32, GL), serial));

    /// `c = a · b` as `vecmat_bf16_pairs`, with `b` prepacked in panels of 256 columns, each
    /// panel in pairs of rows (`[2, 1, 2 p256, 1 p2]`: element `(k, j)` at
    /// `(j / 256)·256k + (k / 2)·512 + 2(j % 256) + k % 2`), so the matrix is read in one
    /// sequential stream. The layout is chosen by hand; the kernel is wholly found by the search.
    #[target(avx512)]
    pub fn vecmat_bf16_panels(Matmul(1x1x2048x16384, (bf16, GL), (bf16, GL, [2, 1, 2 p256, 1 p2]), (f32, GL), serial));

    /// `c = a · b` as `vecmat_bf16_panels` on several threads, **partly hand-scheduled**: a
    /// parallel loop over the two column halves (32 panels each); the search implements each.
    #[target(avx512)]
    pub fn vecmat_bf16_panels_parallel(Matmul(1x1x2048x16384, (bf16, GL), (bf16, GL, [2, 1, 2 p256, 1 p2]), (f32, GL)))
    schedule {
        to_accum;
        tile([1, 1, 2048, 8192], parallel);
        synthesize_all;
    }

    /// `c = a · b` as `vecmat_f32`, **partly hand-scheduled**: the schedule sweeps `b` in blocks
    /// of 16 whole rows, so each block streams 16 rows from memory side by side, instead of the
    /// searched kernel's column strips that jump 64 KiB from row to row; the search implements
    /// each block.
    #[target(avx512)]
    pub fn vecmat_f32_blocked(Matmul(1x1x2048x16384, (f32, GL), (f32, GL), (f32, GL), serial))
    schedule {
        to_accum;
        tile([1, 1, 16, 16384]);
        synthesize_all;
    }

    /// `c = a · b` as `vecmat_bf16`, partly hand-scheduled like `vecmat_f32_blocked`.
    #[target(avx512)]
    pub fn vecmat_bf16_blocked(Matmul(1x1x2048x16384, (bf16, GL), (bf16, GL), (f32, GL), serial))
    schedule {
        to_accum;
        tile([1, 1, 16, 16384]);
        synthesize_all;
    }

    /// `c = a · b` as `vecmat_f32` on several threads, partly hand-scheduled: a parallel loop
    /// over the two column halves of `b` (and `c`), each swept in blocks of 16 rows like
    /// `vecmat_f32_blocked`.
    #[target(avx512)]
    pub fn vecmat_f32_blocked_parallel(Matmul(1x1x2048x16384, (f32, GL), (f32, GL), (f32, GL)))
    schedule {
        to_accum;
        tile([1, 1, 2048, 8192], parallel);
        tile([1, 1, 16, 8192]);
        synthesize_all;
    }

    /// `c = a · b` as `vecmat_bf16` on several threads, partly hand-scheduled like
    /// `vecmat_f32_blocked_parallel`.
    #[target(avx512)]
    pub fn vecmat_bf16_blocked_parallel(Matmul(1x1x2048x16384, (bf16, GL), (bf16, GL), (f32, GL)))
    schedule {
        to_accum;
        tile([1, 1, 2048, 8192], parallel);
        tile([1, 1, 16, 8192]);
        synthesize_all;
    }
}
