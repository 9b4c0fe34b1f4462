//! Kernels that `tests/many_threads.rs` calls from many application threads at once: kernels
//! keeping heap buffers between calls, kernels with parallel loops, both in one kernel, and
//! plain synthesized ones.

morello::kernel! {
    /// Packs a matrix into 16-wide column strips through a column-major copy of it. The copy
    /// (128 KiB) is too large for the stack, so the generated C takes it from the kernel's
    /// spare heap buffers (`morello_take_buffer`) and gives it back after the call.
    pub fn relayout_through_heap(Move(1x128x256, (f32, GL), (f32, GL, [0, 2, 1, 2 p16])))
    schedule {
        move_param(0, GL, col_major);
        synthesize_all;
    }

    /// A matrix product whose four row blocks run as iterations of one parallel loop.
    pub fn matmul_row_blocks(Matmul(1x32x16x16, (f32, GL), (f32, GL), (f32, GL)))
    schedule {
        tile([1, 8, 16, 16], parallel);
        synthesize_all;
    }

    /// Both at once: each of the four parallel iterations (one row each) copies all of `rhs`
    /// (80 KiB) into a column-major heap buffer, so iterations running at once (of one call
    /// or of several calls) each take their own spare buffer.
    pub fn matmul_heap_per_iteration(Matmul(1x4x256x80, (f32, GL), (f32, GL), (f32, GL)))
    schedule {
        tile([1, 1, 256, 80], parallel);
        move_param(1, GL, col_major);
        synthesize_all;
    }

    /// A small f32 matrix product, implemented entirely by synthesis.
    pub fn matmul_synthesized(Matmul(1x8x16x8, (f32, GL), (f32, GL), (f32, GL)));

    /// A u32 matrix product with odd sizes (exact, wrapping arithmetic), entirely synthesized.
    pub fn matmul_u32_synthesized(Matmul(1x5x6x7, (u32, GL), (u32, GL), (u32, GL)));

    /// The heap-buffer-per-parallel-iteration kernel as portable C, so the test runs a heap
    /// buffer inside a parallel loop on every x86 machine, AVX2 or not.
    #[target(portable)]
    pub fn matmul_heap_per_iteration_portable(Matmul(1x4x256x80, (f32, GL), (f32, GL), (f32, GL)))
    schedule {
        tile([1, 1, 256, 80], parallel);
        move_param(1, GL, col_major);
        synthesize_all;
    }
}
