// The Morello kernels for the benchmark's shapes, one file for both targets: `build.rs` writes
// it out for the target the benchmark is built for, filling in each parameter (a name between
// at-signs) with that target's value (`KernelParameters` in `bench/build.rs`). Kernels without
// a schedule are wholly found by the search; those with one are partly hand-scheduled and say
// so. All operands are row-major in memory unless their Spec gives a layout.

morello::kernel! {
    /// `c = a · b`, 48×48×48 f32.
    #[target(@target@)]
    pub fn gemm48(Matmul(1x48x48x48, (f32, GL), (f32, GL), (f32, GL), serial));

    /// `c = a · b`, 64×64×64 f32.
    #[target(@target@)]
    pub fn gemm64(Matmul(1x64x64x64, (f32, GL), (f32, GL), (f32, GL), serial));

    /// `c = a · b`, 100×100×100 f32.
    #[target(@target@)]
    pub fn gemm100(Matmul(1x100x100x100, (f32, GL), (f32, GL), (f32, GL), serial));

    /// `c = a · b`, 256×256×256 f32. Its search from an empty database takes minutes, longer
    /// than a build should: `morello-db synthesize --target @target@` can put it in the
    /// database first (see README.md).
    #[target(@target@)]
    pub fn gemm256(Matmul(1x256x256x256, (f32, GL), (f32, GL), (f32, GL), serial));

    /// `c = a · b`, 1024×1024×1024 f32, **partly hand-scheduled**: the schedule splits it into
    /// 256³ blocks by hand and the search (the 256³ answer above) implements each block. Shown
    /// beside the wholly searched `gemm1024_narrowed`, to show what the search's own blocking
    /// gains or loses against blocks chosen by hand.
    #[target(@target@)]
    pub fn gemm1024_blocked(Matmul(1x1024x1024x1024, (f32, GL), (f32, GL), (f32, GL), serial))
    schedule {
        to_accum;
        tile([1, 256, 256, 256]);
        synthesize_all;
    }

    /// `c = a · b`, 2048×2048×2048 f32, partly hand-scheduled like `gemm1024_blocked`.
    #[target(@target@)]
    pub fn gemm2048_blocked(Matmul(1x2048x2048x2048, (f32, GL), (f32, GL), (f32, GL), serial))
    schedule {
        to_accum;
        tile([1, 256, 256, 256]);
        synthesize_all;
    }

    /// `c = a · b`, 1024×1024×1024 f32, **hand-scheduled down to the register tile**: the kernel
    /// copies `b` into panels of @panel@ columns (`[2, 1, 2 p@panel@]`), then for each 256-row
    /// block of `a` and each panel runs 6×@panel@ register tiles over the whole of `k` (1024
    /// deep): each tile of `c` is summed in registers from start to end and stored once, while
    /// its panel of `b` (1024·@panel@ values) streams from L2. The search implements the copy
    /// and the register tiles. The search does not choose this plan.
    #[target(@target@)]
    pub fn gemm1024_full_k(Matmul(1x1024x1024x1024, (f32, GL), (f32, GL), (f32, GL), serial))
    schedule {
        move_param(1, GL, [2, 1, 2 p@panel@]);
        tile([1, 256, 1024, @panel@]);
        tile([1, 6, 1024, @panel@]);
        synthesize_all;
    }

    /// `c = a · b` as `gemm1024_full_k`, with `b` prepacked in panels of @panel@ columns
    /// (`[2, 1, 2 p@panel@]`, packed once outside the timing), so the kernel copies nothing.
    #[target(@target@)]
    pub fn gemm1024_panels_full_k(Matmul(1x1024x1024x1024, (f32, GL), (f32, GL, [2, 1, 2 p@panel@]), (f32, GL), serial))
    schedule {
        tile([1, 256, 1024, @panel@]);
        tile([1, 6, 1024, @panel@]);
        synthesize_all;
    }

    /// `c = a · b` as `gemm1024_panels_full_k` on several threads: a parallel loop over bands of
    /// 512 rows, then the same blocks and register tiles.
    #[target(@target@)]
    pub fn gemm1024_panels_full_k_parallel(Matmul(1x1024x1024x1024, (f32, GL), (f32, GL, [2, 1, 2 p@panel@]), (f32, GL)))
    schedule {
        tile([1, 512, 1024, 1024], parallel);
        tile([1, 256, 1024, @panel@]);
        tile([1, 6, 1024, @panel@]);
        synthesize_all;
    }

    /// `c = a · b`, 2048×2048×2048 f32, **hand-scheduled down to the register tile** like
    /// `gemm1024_full_k`: 6×@panel@ register tiles 2048 deep.
    #[target(@target@)]
    pub fn gemm2048_full_k(Matmul(1x2048x2048x2048, (f32, GL), (f32, GL), (f32, GL), serial))
    schedule {
        move_param(1, GL, [2, 1, 2 p@panel@]);
        tile([1, 256, 2048, @panel@]);
        tile([1, 6, 2048, @panel@]);
        synthesize_all;
    }

    /// `c = a · b` as `gemm2048_full_k`, with `b` prepacked in panels of @panel@ columns
    /// (`[2, 1, 2 p@panel@]`, packed once outside the timing), so the kernel copies nothing.
    #[target(@target@)]
    pub fn gemm2048_panels_full_k(Matmul(1x2048x2048x2048, (f32, GL), (f32, GL, [2, 1, 2 p@panel@]), (f32, GL), serial))
    schedule {
        tile([1, 256, 2048, @panel@]);
        tile([1, 6, 2048, @panel@]);
        synthesize_all;
    }

    /// `c = a · b` as `gemm2048_panels_full_k` on several threads: a parallel loop over bands of
    /// 1024 rows, then the same blocks and register tiles.
    #[target(@target@)]
    pub fn gemm2048_panels_full_k_parallel(Matmul(1x2048x2048x2048, (f32, GL), (f32, GL, [2, 1, 2 p@panel@]), (f32, GL)))
    schedule {
        tile([1, 1024, 2048, 2048], parallel);
        tile([1, 256, 2048, @panel@]);
        tile([1, 6, 2048, @panel@]);
        synthesize_all;
    }

    /// `c = a · b`, 1024×1024×1024 f32 on several threads, partly hand-scheduled: a parallel
    /// loop over 256-row bands, then `gemm1024_blocked`'s 256³ blocks.
    #[target(@target@)]
    pub fn gemm1024_blocked_parallel(Matmul(1x1024x1024x1024, (f32, GL), (f32, GL), (f32, GL)))
    schedule {
        to_accum;
        tile([1, 256, 1024, 1024], parallel);
        tile([1, 256, 256, 256]);
        synthesize_all;
    }

    /// `c = a · b`, 2048×2048×2048 f32 on several threads, partly hand-scheduled like
    /// `gemm1024_blocked_parallel`.
    #[target(@target@)]
    pub fn gemm2048_blocked_parallel(Matmul(1x2048x2048x2048, (f32, GL), (f32, GL), (f32, GL)))
    schedule {
        to_accum;
        tile([1, 256, 2048, 2048], parallel);
        tile([1, 256, 256, 256]);
        synthesize_all;
    }

    /// `c = a · b`, 8×512 times 512×512, f32.
    #[target(@target@)]
    pub fn gemm8x512x512(Matmul(1x8x512x512, (f32, GL), (f32, GL), (f32, GL), serial));

    /// `c = a · b` as `gemm8x512x512`, **hand-scheduled to the register tile**: strips of
    /// @strip@ columns (`b` read in place), each summed over all 512 values of `k` in registers
    /// (@strip_tiles@), the rest searched. The search finds this plan itself, filling `a` into L1
    /// once at the top: shown beside it to keep the two in step.
    #[target(@target@)]
    pub fn gemm8x512x512_full_k(Matmul(1x8x512x512, (f32, GL), (f32, GL), (f32, GL), serial))
    schedule {
        @strip_steps@
        synthesize_all;
    }

    /// `c = a · b`, a 2048-vector times a 2048×16384 matrix, f32 (the gemma.cpp shape).
    #[target(@target@)]
    pub fn vecmat_f32(Matmul(1x1x2048x16384, (f32, GL), (f32, GL), (f32, GL), serial));

    /// `c = a · b` as `vecmat_f32`, with `b` prepacked in panels of 16 columns (`[2, 1, 2 p16]`:
    /// element `(p, j)` at `(j / 16)·16·2048 + 16p + j % 16`), so the matrix is read in one
    /// sequential stream. The layout is chosen by hand; the kernel is wholly found by the
    /// search.
    #[target(@target@)]
    pub fn vecmat_f32_panels(Matmul(1x1x2048x16384, (f32, GL), (f32, GL, [2, 1, 2 p16]), (f32, GL), serial));

    /// `c = a · b` as `vecmat_f32_panels` on several threads, **partly hand-scheduled**: a
    /// parallel loop over the two column halves; the search implements each.
    #[target(@target@)]
    pub fn vecmat_f32_panels_parallel(Matmul(1x1x2048x16384, (f32, GL), (f32, GL, [2, 1, 2 p16]), (f32, GL)))
    schedule {
        to_accum;
        tile([1, 1, 2048, 8192], parallel);
        synthesize_all;
    }

    /// `c = a · b`, a 2048-vector times a 2048×16384 matrix, bf16 inputs and an f32 output.
    #[target(@target@)]
    pub fn vecmat_bf16(Matmul(1x1x2048x16384, (bf16, GL), (bf16, GL), (f32, GL), serial));

    /// `c = a · b` as `vecmat_bf16`, with `b` prepacked in pairs of rows (`[1, 2, 1 p2]`:
    /// element `(k, j)` at `(k / 2)·2n + 2j + k % 2`), the layout of AVX512-BF16's pair dot
    /// products; an inference engine packs its weights so once, as oneDNN does here. Wholly
    /// found by the search.
    #[target(@target@)]
    pub fn vecmat_bf16_pairs(Matmul(1x1x2048x16384, (bf16, GL), (bf16, GL, [1, 2, 1 p2]), (f32, GL), serial));

    /// `c = a · b` as `vecmat_bf16_pairs`, **hand-scheduled at the top**: tiles of 16 rows of
    /// `k` (8 pairs of rows, read side by side as 8 streams) by 256 columns, swept across every
    /// column before the next 16 rows; the search implements each tile. The searched kernel
    /// reads one pair of rows at a time in 16 KiB pieces 64 KiB apart, which the cost model
    /// streams as well as whole rows and costs below this plan, while this plan runs faster:
    /// a gap in the cost model, shown side by side.
    #[target(@target@)]
    pub fn vecmat_bf16_pairs_side_by_side(Matmul(1x1x2048x16384, (bf16, GL), (bf16, GL, [1, 2, 1 p2]), (f32, GL), serial))
    schedule {
        to_accum;
        tile([1, 1, 16, 256]);
        synthesize_all;
    }

    /// `c = a · b` as `vecmat_bf16_pairs`, with `b` prepacked in panels of 256 columns, each
    /// panel in pairs of rows (`[2, 1, 2 p256, 1 p2]`: element `(k, j)` at
    /// `(j / 256)·256k + (k / 2)·512 + 2(j % 256) + k % 2`), so the matrix is read in one
    /// sequential stream. The layout is chosen by hand; the kernel is wholly found by the search.
    #[target(@target@)]
    pub fn vecmat_bf16_panels(Matmul(1x1x2048x16384, (bf16, GL), (bf16, GL, [2, 1, 2 p256, 1 p2]), (f32, GL), serial));

    /// `c = a · b` as `vecmat_bf16_panels` on several threads, **partly hand-scheduled**: a
    /// parallel loop over the two column halves (32 panels each); the search implements each.
    #[target(@target@)]
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
    #[target(@target@)]
    pub fn vecmat_f32_blocked(Matmul(1x1x2048x16384, (f32, GL), (f32, GL), (f32, GL), serial))
    schedule {
        to_accum;
        tile([1, 1, 16, 16384]);
        synthesize_all;
    }

    /// `c = a · b` as `vecmat_bf16`, partly hand-scheduled like `vecmat_f32_blocked`.
    #[target(@target@)]
    pub fn vecmat_bf16_blocked(Matmul(1x1x2048x16384, (bf16, GL), (bf16, GL), (f32, GL), serial))
    schedule {
        to_accum;
        tile([1, 1, 16, 16384]);
        synthesize_all;
    }

    /// `c = a · b` as `vecmat_f32` on several threads, partly hand-scheduled: a parallel loop
    /// over the two column halves of `b` (and `c`), each swept in blocks of 16 rows like
    /// `vecmat_f32_blocked`.
    #[target(@target@)]
    pub fn vecmat_f32_blocked_parallel(Matmul(1x1x2048x16384, (f32, GL), (f32, GL), (f32, GL)))
    schedule {
        to_accum;
        tile([1, 1, 2048, 8192], parallel);
        tile([1, 1, 16, 8192]);
        synthesize_all;
    }

    /// `c = a · b` as `vecmat_bf16` on several threads, partly hand-scheduled like
    /// `vecmat_f32_blocked_parallel`.
    #[target(@target@)]
    pub fn vecmat_bf16_blocked_parallel(Matmul(1x1x2048x16384, (bf16, GL), (bf16, GL), (f32, GL)))
    schedule {
        to_accum;
        tile([1, 1, 2048, 8192], parallel);
        tile([1, 1, 16, 8192]);
        synthesize_all;
    }
}
