//! The peers: OpenBLAS (`cblas_sgemm`, `cblas_sgemv`), oneDNN's matmul primitive with
//! prepacked weights, and the `faer`, `gemm` (with `x86-v4`) and `matrixmultiply` crates.

use crate::workload::{Inputs, Workload};
use std::ffi::{CStr, c_char, c_int, c_void};
use std::num::NonZeroUsize;

/// A call that computes all of `c` (which holds garbage before) from a contender's inputs.
pub type Run<'a> = Box<dyn FnMut(&mut [f32]) + 'a>;

/// One implementation of a workload, ready to run on its inputs.
pub struct Contender<'a> {
    /// Its name in the table.
    pub name: String,
    /// Computes the product.
    pub run: Run<'a>,
}

impl<'a> Contender<'a> {
    /// A contender that calls `f` with each of `items` in turn, one per call: the copies of `b`
    /// (see [`Inputs`]), or whatever was prepared for each copy.
    pub fn rotating<T: 'a>(name: impl Into<String>, items: Vec<T>, mut f: impl FnMut(&T, &mut [f32]) + 'a) -> Self {
        let mut next = 0;
        let run = Box::new(move |c: &mut [f32]| {
            f(&items[next], c);
            next = (next + 1) % items.len();
        });
        Contender { name: name.into(), run }
    }
}

const CBLAS_ROW_MAJOR: c_int = 101;
const CBLAS_NO_TRANS: c_int = 111;
const CBLAS_TRANS: c_int = 112;

#[link(name = "openblas")]
unsafe extern "C" {
    fn cblas_sgemm(
        layout: c_int,
        trans_a: c_int,
        trans_b: c_int,
        m: c_int,
        n: c_int,
        k: c_int,
        alpha: f32,
        a: *const f32,
        lda: c_int,
        b: *const f32,
        ldb: c_int,
        beta: f32,
        c: *mut f32,
        ldc: c_int,
    );
    fn cblas_sgemv(
        layout: c_int,
        trans: c_int,
        m: c_int,
        n: c_int,
        alpha: f32,
        a: *const f32,
        lda: c_int,
        x: *const f32,
        incx: c_int,
        beta: f32,
        y: *mut f32,
        incy: c_int,
    );
    fn openblas_set_num_threads(threads: c_int);
}

#[repr(C)]
struct DnnlMatmul {
    _private: [u8; 0],
}

unsafe extern "C" {
    fn bench_dnnl_matmul_create(
        m: i64,
        k: i64,
        n: i64,
        bf16: c_int,
        b: *const c_void,
        err: *mut c_char,
        err_len: usize,
    ) -> *mut DnnlMatmul;
    fn bench_dnnl_matmul_impl(p: *const DnnlMatmul) -> *const c_char;
    fn bench_dnnl_matmul_run(p: *mut DnnlMatmul, a: *const c_void, c: *mut f32) -> c_int;
    fn bench_dnnl_matmul_destroy(p: *mut DnnlMatmul);
    fn bench_set_omp_threads(threads: c_int);
}

/// A oneDNN matmul primitive with its weights reordered.
struct OneDnn(*mut DnnlMatmul);

impl OneDnn {
    /// A primitive for `w` with `b` (k×n elements of the workload's input dtype) reordered.
    fn new(w: &Workload, b: *const c_void) -> Result<Self, String> {
        let mut err = [0 as c_char; 256];
        let (m, k, n) = (w.m as i64, w.k as i64, w.n as i64);
        // SAFETY: `b` holds k×n elements of the declared dtype; `err` is writable for its length.
        let p = unsafe { bench_dnnl_matmul_create(m, k, n, c_int::from(w.bf16), b, err.as_mut_ptr(), err.len()) };
        if p.is_null() {
            // SAFETY: the shim wrote a NUL-terminated message.
            return Err(unsafe { CStr::from_ptr(err.as_ptr()) }.to_string_lossy().into_owned());
        }
        Ok(OneDnn(p))
    }

    /// Runs the product on `a` (m×k elements of the primitive's input dtype) into `c`.
    ///
    /// # Safety
    /// `a` must point to m×k elements of the dtype the primitive was created for, and `c` must
    /// hold m×n f32s.
    unsafe fn run(&self, a: *const c_void, c: &mut [f32]) {
        // SAFETY: the caller's contract; `self.0` is live while `self` is.
        let status = unsafe { bench_dnnl_matmul_run(self.0, a, c.as_mut_ptr()) };
        assert_eq!(status, 0, "oneDNN matmul failed with status {status}");
    }
}

impl Drop for OneDnn {
    fn drop(&mut self) {
        // SAFETY: created by bench_dnnl_matmul_create and dropped once.
        unsafe { bench_dnnl_matmul_destroy(self.0) }
    }
}

/// Sets every peer's thread count (OpenBLAS's pool and oneDNN's OpenMP runtime; the Rust crates
/// take it per call, and matrixmultiply from `MATMUL_NUM_THREADS`, which the driver sets).
pub fn set_threads(threads: usize) {
    let t = c_int::try_from(threads).expect("a thread count fits in an int");
    // SAFETY: both only set a global thread count.
    unsafe {
        openblas_set_num_threads(t);
        bench_set_omp_threads(t);
    }
}

fn int(x: usize) -> c_int {
    c_int::try_from(x).expect("a dimension fits in an int")
}

/// Every peer that implements `w`, on `threads` threads.
pub fn contenders<'a>(w: &Workload, inputs: &'a Inputs, threads: usize) -> Vec<Contender<'a>> {
    let Workload { m, k, n, bf16 } = *w;
    let mut out = Vec::new();
    if let Some(dnnl) = onednn(w, inputs) {
        out.push(dnnl);
    }
    if bf16 {
        return out; // no other peer multiplies bf16 into f32
    }
    let a = &inputs.a;
    let copies = inputs.b_copies();
    if w.is_vecmat() {
        out.push(Contender::rotating("OpenBLAS sgemv", copies.clone(), move |b: &&[f32], c| {
            // SAFETY: y = bᵀ·a with b a k×n row-major matrix; the slices have those lengths.
            unsafe {
                cblas_sgemv(
                    CBLAS_ROW_MAJOR,
                    CBLAS_TRANS,
                    int(k),
                    int(n),
                    1.0,
                    b.as_ptr(),
                    int(n),
                    a.as_ptr(),
                    1,
                    0.0,
                    c.as_mut_ptr(),
                    1,
                )
            }
        }));
    } else {
        out.push(Contender::rotating("OpenBLAS sgemm", copies.clone(), move |b: &&[f32], c| {
            // SAFETY: row-major m×k · k×n into m×n; the slices have those lengths.
            unsafe {
                cblas_sgemm(
                    CBLAS_ROW_MAJOR,
                    CBLAS_NO_TRANS,
                    CBLAS_NO_TRANS,
                    int(m),
                    int(n),
                    int(k),
                    1.0,
                    a.as_ptr(),
                    int(k),
                    b.as_ptr(),
                    int(n),
                    0.0,
                    c.as_mut_ptr(),
                    int(n),
                )
            }
        }));
    }
    let par =
        if threads == 1 { faer::Par::Seq } else { faer::Par::Rayon(NonZeroUsize::new(threads).expect("threads > 0")) };
    out.push(Contender::rotating("faer", copies.clone(), move |b: &&[f32], c| {
        let lhs = faer::MatRef::from_row_major_slice(a, m, k);
        let rhs = faer::MatRef::from_row_major_slice(b, k, n);
        let dst = faer::MatMut::from_row_major_slice_mut(c, m, n);
        faer::linalg::matmul::matmul(dst, faer::Accum::Replace, lhs, rhs, 1.0f32, par);
    }));
    let parallelism = if threads == 1 { gemm::Parallelism::None } else { gemm::Parallelism::Rayon(threads) };
    // The crate picks its code path at run time: AVX-512 (its `x86-v4` feature) where the CPU
    // has it, AVX2 and FMA otherwise.
    let gemm_label = if is_x86_feature_detected!("avx512f") { "gemm (x86-v4)" } else { "gemm (x86-v3)" };
    out.push(Contender::rotating(gemm_label, copies.clone(), move |b: &&[f32], c| {
        // SAFETY: row-major strides for m×k, k×n and m×n matrices of these lengths.
        unsafe {
            gemm::gemm(
                m,
                n,
                k,
                c.as_mut_ptr(),
                1,
                n as isize,
                false,
                a.as_ptr(),
                1,
                k as isize,
                b.as_ptr(),
                1,
                n as isize,
                0.0f32,
                1.0f32,
                false,
                false,
                false,
                parallelism,
            )
        }
    }));
    out.push(Contender::rotating("matrixmultiply", copies.clone(), move |b: &&[f32], c| {
        // SAFETY: row-major strides for m×k, k×n and m×n matrices of these lengths.
        unsafe {
            matrixmultiply::sgemm(
                m,
                k,
                n,
                1.0,
                a.as_ptr(),
                k as isize,
                1,
                b.as_ptr(),
                n as isize,
                1,
                0.0,
                c.as_mut_ptr(),
                n as isize,
                1,
            )
        }
    }));
    out
}

/// oneDNN's matmul with `b` prepacked (one primitive per copy of `b`, used in turn), or `None`
/// (with a note on stderr) if it cannot be made.
fn onednn<'a>(w: &Workload, inputs: &'a Inputs) -> Option<Contender<'a>> {
    let (a, copies): (*const c_void, Vec<*const c_void>) = if w.bf16 {
        (inputs.a16.as_ptr().cast(), inputs.b16_copies().iter().map(|b| b.as_ptr().cast()).collect())
    } else {
        (inputs.a.as_ptr().cast(), inputs.b_copies().iter().map(|b| b.as_ptr().cast()).collect())
    };
    let primitives: Vec<OneDnn> = match copies.into_iter().map(|b| OneDnn::new(w, b)).collect() {
        Ok(p) => p,
        Err(message) => {
            eprintln!("oneDNN cannot run {}: {message}", w.name());
            return None;
        }
    };
    // SAFETY: the primitive is live; the string lives as long as it.
    let implementation =
        unsafe { CStr::from_ptr(bench_dnnl_matmul_impl(primitives[0].0)) }.to_string_lossy().into_owned();
    // SAFETY: `a` holds m×k elements of the declared dtype and `c` m×n f32s (the table allocates
    // every output with m×n elements). The contender owns the primitives.
    Some(Contender::rotating(format!("oneDNN prepacked ({implementation})"), primitives, move |p, c| unsafe {
        p.run(a, c)
    }))
}
