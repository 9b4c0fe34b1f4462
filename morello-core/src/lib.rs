//! The Morello compiler.
//!
//! Morello turns a *Spec* — a tensor computation with its operands' memory levels, layouts and
//! memory limits — into a fast C kernel, by rewriting the Spec into loops, moves and
//! microkernels. Rewrites can be chosen by hand (a schedule) or by synthesis, a dynamic program
//! over the paper's search space that minimizes an affine cost model. Synthesis results persist
//! in a spatial database ([`db`]) so each Spec is searched for once.

#![warn(missing_docs)]
/// The optimization level (`opt-level`) this crate was compiled at: `"0"` when a build
/// script's copy of the compiler is unoptimized, which makes synthesis many times slower (see
/// `morello-build`).
pub const COMPILED_OPT_LEVEL: &str = env!("MORELLO_CORE_OPT_LEVEL");

pub mod codegen;
pub mod cost;
pub mod db;
pub mod decision;
pub mod dtype;
pub mod fuzz;
mod fxhash;
pub mod harness;
pub mod imp;
pub mod index;
pub mod job;
pub mod kernels;
pub mod layout;
pub mod level;
pub mod limits;
pub mod primitive;
pub mod reference;
pub mod residency;
pub mod rewrite;
pub mod schedule;
pub mod search;
pub mod shape;
pub mod spec;
pub mod suite;
pub mod symbol;
pub mod syntax;
pub mod target;
pub mod tensor;
pub mod text_error;
pub mod view;
