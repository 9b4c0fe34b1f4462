//! One vector-matrix product, `y = x · W`, for two ways of storing the weights `W`. Both
//! kernels are found entirely by synthesis; only the Spec's layout of `W` differs.

morello::kernel! {
    /// `y = x · W` for a 1024-vector and a row-major 1024×4096 matrix.
    pub fn vecmat_row_major(Matmul(1x1x1024x4096, (f32, GL), (f32, GL), (f32, GL), serial));

    /// The same with `W` packed in panels of 16 columns, each panel stored row after row
    /// (`[2, 1, 2 p16]`: the column panel outermost, then the row, then the column in the
    /// panel), so the kernel reads `W` in one sequential stream.
    pub fn vecmat_panels(Matmul(1x1x1024x4096, (f32, GL), (f32, GL, [2, 1, 2 p16]), (f32, GL), serial));
}
