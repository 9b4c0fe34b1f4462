//! Morello: fixed-shape tensor kernels, synthesized at build time, called through safe Rust
//! functions.
//!
//! Declare kernels with [`kernel!`] in a source file, compile them from `build.rs` with
//! [`morello-build`](https://docs.rs/morello-build), and call the generated functions:
//!
//! ```ignore
//! // src/kernels.rs
//! morello::kernel! {
//!     /// 64×64×64 f32 matrix multiplication, all operands row-major.
//!     pub fn matmul64(Matmul(1x64x64x64, (f32, GL), (f32, GL), (f32, GL)));
//! }
//!
//! // build.rs
//! fn main() {
//!     morello_build::Build::new().file("src/kernels.rs").compile("kernels");
//! }
//!
//! // application code
//! fn multiply(a: &[f32], b: &[f32], c: &mut [f32]) -> Result<(), morello::KernelError> {
//!     kernels::matmul64(a, b, c);          // panics on wrong lengths or an unsupported CPU
//!     kernels::try_matmul64(a, b, c)       // returns an error instead
//! }
//! ```
//!
//! Kernels target AVX2 by default; put `#[target(avx512)]` (AVX-512 F/BW/VL/BF16) or
//! `#[target(portable)]` (scalar C for any machine) before `fn` to choose another. Parallel
//! loops in kernels use a shared thread pool; see [`threads`] for the model and
//! [`with_max_threads`] to control it.
//!
//! This crate has no compiler dependencies at run time: it holds the macro re-export and the
//! small runtime the generated wrappers call.

#![warn(missing_docs)]
mod runtime;
pub mod threads;

pub use half::bf16;
pub use morello_macros::kernel;
pub use runtime::KernelError;
pub use threads::{max_threads, set_max_threads, with_max_threads};

#[doc(hidden)]
pub mod __private {
    pub use crate::runtime::{CpuSupport, check_len};
    pub use crate::threads::Runtime;
}
