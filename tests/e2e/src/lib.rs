//! Kernels for the end-to-end tests (see `tests/`).

pub mod concurrent;
pub mod kernels;
pub mod scheduled;
pub mod targets;
