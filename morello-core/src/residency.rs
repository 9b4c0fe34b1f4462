//! Residency: which cache holds a Spec's data ([`residency`]), and what the hardware caches do
//! whatever the program says.
//!
//! A fill of global-memory data into L1 emits no code (it is a hardware cache fill), so where a
//! program places it changes nothing in the C. The paper's model still charges for it: a
//! program that fills small tiles inside a loop pays global memory's weight for every line on
//! every iteration, while the same C with the fill hoisted pays it once. On the machine both run
//! alike: data whose footprint fits in L1 stays there after its first touch.
//!
//! So a Spec *held in L1* — one with operands in global memory whose data, with its operands
//! already in L1, fits in the target's L1 (see [`held_in_l1`]) — has one rewrite: the cache
//! fill of its first global-memory operand (then of the next, and so on). A program that
//! filled its tiles deeper is the same C as the one with the fills hoisted, which the search
//! still finds; it now costs what the hardware does with it: the lines once from global
//! memory, every touch after that from L1.
//!
//! Whether a Spec is held depends on the Spec alone, not on its memory limits: a Spec then has
//! the same rewrites at every limit, so its cost can only grow as its limits shrink, which the
//! search's memory-limit boxes and the database rely on. The fills still take their lines from
//! the limits, like any cache fill, so a held Spec whose limits leave too little L1 (what
//! enclosing rewrites allocated there) has no implementation: its data would not stay in L1.

use crate::level::Level;
use crate::spec::{LogicalSpec, Spec, SpecKind};
use crate::target::{Residency, Target};

/// Whether `spec` is held in L1: a primitive with operands in global memory whose cache lines
/// (what their fills take there:
/// [`TensorSpec::l1_footprint_bytes`](crate::tensor::TensorSpec::l1_footprint_bytes)), with
/// those of its operands already in L1, fit in the target's L1 — allocated in operand order
/// from its capacity, each allocation leaving the permitted limit below what is left, as memory
/// limits do. So a held Spec's fills always fit at the target's largest limits.
pub fn held_in_l1(spec: &Spec, target: &Target) -> bool {
    if !matches!(spec.logical().kind(), SpecKind::Primitive(_))
        || !spec.operands().iter().any(|t| t.level() == Level::GL)
    {
        return false;
    }
    let mut limits = Some(target.max_limits());
    for t in spec.operands().iter().filter(|t| matches!(t.level(), Level::GL | Level::L1)) {
        limits = limits.and_then(|l| l.allocate(Level::L1, t.l1_footprint_bytes(target), target));
    }
    limits.is_some()
}

/// The operand whose cache fill is the only rewrite of a Spec held in L1: its first operand in
/// global memory.
pub fn forced_fill_operand(spec: &Spec, target: &Target) -> Option<usize> {
    if !held_in_l1(spec, target) {
        return None;
    }
    spec.operands().iter().position(|t| t.level() == Level::GL)
}

/// Where `spec`'s data is held: the innermost cache in which the lines of its operands in
/// global memory and L1 fit (each cache holds what those further in hold), each operand taking
/// [`TensorSpec::cache_footprint_lines`](crate::tensor::TensorSpec::cache_footprint_lines) of
/// its capacity (runs a whole page apart fill the same sets); [`Residency::Memory`] if none
/// does or if nothing of it is in global memory.
pub fn residency(spec: &LogicalSpec, target: &Target) -> Residency {
    lines_held(spec, target, |_| 1).map_or(Residency::Memory, |(residency, _)| residency)
}

/// The innermost cache holding `spec`'s data, and the cache lines of its operands in global
/// memory, each operand's times `reads(i)` (its index), if a cache holds it; in one pass over
/// its operands (the cost model asks for every node and every child it costs).
pub(crate) fn lines_held(
    spec: &LogicalSpec,
    target: &Target,
    reads: impl Fn(usize) -> u64,
) -> Option<(Residency, u64)> {
    let caches = Residency::CACHES.map(|r| target.cache(r).map(|c| c.capacity_bytes));
    let line = u64::from(target.line_bytes);
    let mut in_memory = 0u64;
    // The bytes each cache would hold: paged runs take more of a larger cache's capacity.
    let mut bytes = [0u64; Residency::CACHES.len()];
    for (i, t) in spec.operands().iter().enumerate() {
        let lines = match t.level() {
            Level::GL | Level::L1 => t.cache_lines(target),
            Level::RF | Level::VRF => continue,
        };
        if t.level() == Level::GL {
            in_memory = in_memory.saturating_add(lines.saturating_mul(reads(i)));
        }
        for (held, capacity) in bytes.iter_mut().zip(caches) {
            let Some(capacity) = capacity else { continue };
            let taken = if t.paged() { t.cache_footprint_lines(capacity, target) } else { lines };
            *held = held.saturating_add(taken * line);
        }
        // Once no cache can hold it, the rest of the operands cannot change that.
        if bytes.iter().zip(caches).all(|(&held, capacity)| capacity.is_none_or(|c| held > c)) {
            return None;
        }
    }
    if in_memory == 0 {
        return None;
    }
    Residency::CACHES
        .into_iter()
        .zip(caches.into_iter().zip(bytes))
        .find(|&(_, (capacity, held))| capacity.is_some_and(|c| held <= c))
        .map(|(residency, _)| (residency, in_memory))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::imp::ImplNode;
    use crate::rewrite::Action;
    use crate::target::X86_AVX512;

    /// The only rewrite of a Spec held in L1, as the search offers it.
    fn forced_fill(spec: &Spec, target: &Target) -> Option<Action> {
        forced_fill_operand(spec, target).map(|i| Action::cache_fill(i, spec.operand(i)))
    }

    fn spec(text: &str) -> Spec {
        Spec::parse_for(text, &X86_AVX512).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn a_spec_is_held_when_its_data_fits_in_l1() {
        // 3 × 4 KiB and 3 × 16 KiB in global memory fit in 48 KiB (48 - 16 leave 32, then 16,
        // then 0); 3 × 36 KiB do not.
        assert!(held_in_l1(&spec("Matmul(1x32x32x32, (f32, GL), (f32, GL), (f32, GL))"), &X86_AVX512));
        assert!(held_in_l1(&spec("Matmul(1x64x64x64, (f32, GL), (f32, GL), (f32, GL))"), &X86_AVX512));
        assert!(!held_in_l1(&spec("Matmul(1x96x96x96, (f32, GL), (f32, GL), (f32, GL))"), &X86_AVX512));
        // 3 × 20.25 KiB do not either: 20.25 KiB out of 48 leave 16 as a permitted limit.
        assert!(!held_in_l1(&spec("Matmul(1x72x72x72, (f32, GL), (f32, GL), (f32, GL))"), &X86_AVX512));
        // Operands already in L1 count: 32 KiB there leave too little for 32 KiB more.
        assert!(!held_in_l1(&spec("Matmul(1x64x128x64, (f32, L1), (f32, GL), (f32, GL))"), &X86_AVX512));
        assert!(held_in_l1(&spec("Matmul(1x16x32x64, (f32, L1), (f32, GL), (f32, GL))"), &X86_AVX512));
        // Nothing in global memory: nothing to hold.
        assert!(!held_in_l1(&spec("Matmul(1x4x4x4, (f32, L1), (f32, L1), (f32, L1))"), &X86_AVX512));
    }

    #[test]
    fn the_fills_of_a_held_spec_come_one_operand_at_a_time_from_its_limits() {
        let held = spec("(Matmul(1x8x8x8, (f32, GL), (f32, GL), (f32, GL)), [64, 2048, 1024, 1073741824])");
        let fill = forced_fill(&held, &X86_AVX512).expect("held");
        assert!(
            matches!(fill, Action::Move { operand: 0, dest: crate::rewrite::MoveDest { level: Level::L1, .. } }),
            "{fill}"
        );
        let ImplNode::Alloc(alloc) = fill.apply(&held, &X86_AVX512).expect("256 bytes fit") else { panic!("a move") };
        assert!(alloc.cache_miss && alloc.prologue.is_none() && alloc.epilogue.is_none());
        assert_eq!(alloc.body.spec.limits().get(Level::L1), 512, "1024 - 256 bytes, as a power of two");
        // The body is held in turn: its next fill is of the next operand in global memory.
        let next = forced_fill(&alloc.body.spec, &X86_AVX512).expect("still held");
        assert!(matches!(next, Action::Move { operand: 1, .. }), "{next}");
        // With no L1 left, a held Spec has no implementation.
        let starved = spec("(Matmul(1x8x8x8, (f32, GL), (f32, GL), (f32, GL)), [64, 2048, 0, 1073741824])");
        assert!(forced_fill(&starved, &X86_AVX512).unwrap().apply(&starved, &X86_AVX512).is_err());
    }

    #[test]
    fn a_held_spec_has_only_its_fill_and_others_keep_every_rewrite() {
        let held = spec("Matmul(1x8x8x8, (f32, GL), (f32, GL), (f32, GL))");
        assert_eq!(crate::search::actions(&held, &X86_AVX512), [forced_fill(&held, &X86_AVX512).unwrap()]);
        let large = spec("Matmul(1x96x96x96, (f32, GL), (f32, GL), (f32, GL))");
        assert_eq!(forced_fill(&large, &X86_AVX512), None);
        assert!(crate::search::actions(&large, &X86_AVX512).len() > 10);
    }
}
