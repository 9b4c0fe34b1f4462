//! Random well-formed cases: a Spec over any primitive (or a Compose pipeline), any dtype its
//! family takes, random layouts, levels, vector sizes, contiguity and memory limits, at shapes
//! small enough to search quickly — and a random partial schedule for the search to complete.
//!
//! Specs are drawn as text and parsed for the target, so the generator cannot build a Spec the
//! parser would refuse; draws the parser refuses are counted and drawn again.

use super::rng::FuzzRng;
use crate::dtype::Dtype;
use crate::primitive::{FillValue, Primitive};
use crate::rewrite::Action;
use crate::schedule::PartialImpl;
use crate::search::actions;
use crate::spec::{Spec, SpecKind};
use crate::target::Target;
use crate::tensor::TensorSpec;

/// Integer dtypes.
const INTS: [Dtype; 6] = [Dtype::U8, Dtype::I8, Dtype::U16, Dtype::I16, Dtype::U32, Dtype::I32];
/// Every dtype, floats twice as likely.
const DTYPES: [Dtype; 10] = [
    Dtype::F32,
    Dtype::F32,
    Dtype::Bf16,
    Dtype::Bf16,
    Dtype::U8,
    Dtype::I8,
    Dtype::U16,
    Dtype::I16,
    Dtype::U32,
    Dtype::I32,
];
/// Widening pairs a Move may upcast along.
const UPCASTS: [(Dtype, Dtype); 10] = [
    (Dtype::Bf16, Dtype::F32),
    (Dtype::U8, Dtype::U16),
    (Dtype::U8, Dtype::I16),
    (Dtype::U8, Dtype::U32),
    (Dtype::U8, Dtype::I32),
    (Dtype::I8, Dtype::I16),
    (Dtype::I8, Dtype::I32),
    (Dtype::U16, Dtype::U32),
    (Dtype::U16, Dtype::I32),
    (Dtype::I16, Dtype::I32),
];
/// Dimension sizes, small ones more often; odd sizes exercise boundary regions.
const SIZES: [u32; 11] = [1, 1, 2, 2, 3, 4, 4, 5, 7, 8, 16];

/// One drawn case before it is synthesized.
#[derive(Clone, Debug)]
pub struct Drawn {
    /// The Spec, as parsed for the target.
    pub spec: Spec,
    /// The rewrites applied by hand, in schedule syntax, before the search completes the rest.
    pub steps: Vec<String>,
    /// The schedule so far.
    pub partial: PartialImpl,
    /// What the case covers, for the per-family counts.
    pub labels: Labels,
}

/// What a case covers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Labels {
    /// The primitive's name, or `Compose[…]` with the stages' names.
    pub primitive: String,
    /// The operands' dtypes, deduplicated in order (`bf16→f32` for mixed ones).
    pub dtypes: String,
    /// Layout families of the operands (`row_major`, `col_major`, `packed`, `odd_even`,
    /// `permuted`, `register`), deduplicated and sorted.
    pub layouts: Vec<&'static str>,
    /// Levels of the operands, deduplicated and sorted.
    pub levels: Vec<&'static str>,
    /// Whether an operand declares its contiguity, the limits are below the target's, the
    /// Spec may run in parallel, it has a hand schedule, and (added once synthesized) whether
    /// its kernel has parallel loops.
    pub features: Vec<&'static str>,
}

/// How many draws the parser or the schedule refused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrawStats {
    /// Spec texts the parser refused.
    pub refused_specs: u64,
}

/// Draws a case: a Spec the target's parser accepts, and a random partial schedule.
pub fn draw(rng: &mut FuzzRng, target: &'static Target, stats: &mut DrawStats) -> Drawn {
    loop {
        let (text, contiguity) = spec_text(rng, target);
        let spec = match Spec::parse_for(&text, target) {
            Ok(spec) => spec,
            Err(_) => {
                stats.refused_specs += 1;
                continue;
            }
        };
        let partial = PartialImpl::new(spec.clone(), target);
        let spec = partial.root().spec.clone();
        let (partial, steps) = random_schedule(rng, partial, target);
        let mut labels = labels_of(&spec);
        if contiguity {
            labels.features.push("contiguity");
        }
        if spec.limits() != &target.max_limits() {
            labels.features.push("limits");
        }
        if !spec.logical().serial() {
            labels.features.push("parallel");
        }
        if !steps.is_empty() {
            labels.features.push("scheduled");
        }
        return Drawn { spec, steps, partial, labels };
    }
}

/// Up to three random rewrites the search could apply, each at the schedule's default Spec.
fn random_schedule(rng: &mut FuzzRng, mut partial: PartialImpl, target: &'static Target) -> (PartialImpl, Vec<String>) {
    let mut steps = Vec::new();
    // The search never parallelizes Specs this small; start half of the Specs that may run in
    // parallel with a parallel tile, so that parallel loops (and ThreadSanitizer) get cases.
    let parallel_first = !partial.root().spec.logical().serial() && rng.chance(50);
    let wanted = if !parallel_first && rng.chance(40) { 0 } else { 1 + rng.below(3) };
    for _ in 0..wanted {
        let Ok(at) = partial.default_spec() else { break };
        let mut options: Vec<Action> = actions(at, target);
        if parallel_first && steps.is_empty() {
            // The search offers only a cache fill for a Spec that fits in L1: halve one
            // dimension in a parallel loop instead, where the rewrite allows it.
            let halves: Vec<Action> = (0..at.shape().len())
                .filter(|&d| at.shape()[d] > 1)
                .map(|d| {
                    let mut tile: Vec<u32> = at.shape().to_vec();
                    tile[d] = tile[d].div_ceil(2);
                    Action::Tile { tile: tile.as_slice().into(), parallel: true }
                })
                .filter(|a| a.apply(at, target).is_ok())
                .collect();
            if !halves.is_empty() {
                options = halves;
            }
        }
        // Choosing a microkernel ends the schedule; leave that to the search more often.
        if options.len() > 1 && !rng.chance(15) {
            options.retain(|a| !matches!(a, Action::Select { .. }));
        }
        if options.is_empty() {
            break;
        }
        let action = options.swap_remove(rng.index(options.len()));
        match partial.clone().apply(&action) {
            Ok(next) => {
                steps.push(action.to_string());
                partial = next;
            }
            Err(_) => break,
        }
    }
    (partial, steps)
}

/// A Spec in text, and whether an operand declares its contiguity.
fn spec_text(rng: &mut FuzzRng, target: &Target) -> (String, bool) {
    let mut contiguity = false;
    let body = if rng.chance(12) {
        compose_text(rng, target, &mut contiguity)
    } else {
        primitive_text(rng, target, &mut contiguity)
    };
    let serial = if rng.chance(75) { ", serial" } else { "" };
    let (head, tail) = body;
    let spec = format!("{head}{tail}{serial})");
    if rng.chance(20) { (format!("({spec}, {})", limits_text(rng, target)), contiguity) } else { (spec, contiguity) }
}

/// `Name(shape[, param=p]` and `, operands…`, without the closing parenthesis.
fn primitive_text(rng: &mut FuzzRng, target: &Target, contiguity: &mut bool) -> (String, String) {
    let names: Vec<&'static str> = Primitive::names().collect();
    let name = *rng.pick(&names);
    let probe = Primitive::from_name(name, 0).expect("a listed name");
    let rank = probe.def().rank.unwrap_or(*rng.pick(&[1, 2, 2, 2, 3, 3, 4]));
    let param = rng.below(rank as u64) as u8;
    let primitive = Primitive::from_name(name, param).expect("a listed name");
    let shape = shape(rng, rank);
    let dtypes = dtypes_for(rng, primitive);
    let operands: Vec<String> = (0..primitive.operand_count())
        .map(|i| {
            let operand_shape: Vec<u32> = primitive.operand_dims(i, rank).iter().map(|d| d.extent(&shape)).collect();
            operand_text(rng, target, &operand_shape, dtypes[i.min(dtypes.len() - 1)], contiguity)
        })
        .collect();
    let shape_text = shape.iter().map(u32::to_string).collect::<Vec<_>>().join("x");
    let param_text = primitive.def().param.map(|p| format!(", {p}={param}")).unwrap_or_default();
    (format!("{name}({shape_text}{param_text}"), format!(", {}", operands.join(", ")))
}

/// Dtypes for each operand of `p` (the last repeats for operands beyond the list).
fn dtypes_for(rng: &mut FuzzRng, p: Primitive) -> Vec<Dtype> {
    let one = *rng.pick(&DTYPES);
    match p {
        Primitive::Matmul { .. } | Primitive::Conv { .. } => match rng.below(10) {
            0..=4 => vec![one],
            5..=6 => vec![Dtype::Bf16, Dtype::Bf16, Dtype::F32],
            7 => vec![Dtype::Bf16, Dtype::F32, Dtype::F32],
            _ => vec![*rng.pick(&INTS), *rng.pick(&INTS), *rng.pick(&INTS)],
        },
        Primitive::Move if rng.chance(30) => {
            let (from, to) = *rng.pick(&UPCASTS);
            vec![from, to]
        }
        Primitive::Fill(FillValue::NegInf) => vec![*rng.pick(&[Dtype::F32, Dtype::Bf16])],
        p if p.name().starts_with("Softmax")
            || matches!(p, Primitive::DivideVec | Primitive::DivideVecScalar { .. }) =>
        {
            vec![*rng.pick(&[Dtype::F32, Dtype::F32, Dtype::Bf16])]
        }
        _ => vec![one],
    }
}

/// A shape of `rank` dimensions. The search's time grows steeply with the number of
/// dimensions above 1 (a Matmul of 2×2×2×2 searches 150 times the Specs of 1×8×8×8), so
/// higher ranks get smaller sizes, and the leading (batch) dimension is mostly 1.
fn shape(rng: &mut FuzzRng, rank: usize) -> Vec<u32> {
    let cap: u64 = match rank {
        1 | 2 => 256,
        3 => 64,
        _ => 48,
    };
    loop {
        let mut dims: Vec<u32> = (0..rank).map(|_| *rng.pick(&SIZES)).collect();
        if rank >= 3 && !rng.chance(15) {
            dims[0] = 1;
        }
        if dims.iter().map(|&d| u64::from(d)).product::<u64>() <= cap {
            return dims;
        }
    }
}

/// One operand of `shape`: `(dtype, level[, layout][, vN][, cN])`.
fn operand_text(rng: &mut FuzzRng, target: &Target, shape: &[u32], dtype: Dtype, contiguity: &mut bool) -> String {
    let volume: u64 = shape.iter().map(|&d| u64::from(d)).product();
    // Vector sizes that divide the operand, so its registers can be whole.
    let lanes: Vec<u32> =
        target.vector_lanes(dtype.size_bytes()).filter(|&l| volume.is_multiple_of(u64::from(l))).collect();
    let level = match rng.below(100) {
        0..=71 => "GL",
        72..=85 => "L1",
        86..=93 if !lanes.is_empty() => "VRF",
        _ if volume <= 16 => "RF",
        _ => "GL",
    };
    let mut parts = vec![dtype.name().to_owned(), level.to_owned()];
    if level != "RF" {
        let (layout, physical_dims) = layout_text(rng, shape);
        parts.push(layout);
        if level == "VRF" {
            parts.push(format!("v{}", rng.pick(&lanes)));
        }
        if rng.chance(10) {
            *contiguity = true;
            parts.push(format!("c{}", rng.below(physical_dims as u64 + 1)));
        }
    }
    format!("({})", parts.join(", "))
}

/// A layout for an operand of `shape`: row- or column-major, or a permutation with a packed
/// or odd-even strip of a size dividing its dimension; and its number of physical dimensions.
fn layout_text(rng: &mut FuzzRng, shape: &[u32]) -> (String, usize) {
    let rank = shape.len();
    let choice = rng.below(100);
    if choice < 50 {
        return ("row_major".to_owned(), rank);
    }
    if choice < 70 {
        return ("col_major".to_owned(), rank);
    }
    let mut order: Vec<usize> = (0..rank).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.index(i + 1));
    }
    let mut dims: Vec<String> = order.iter().map(usize::to_string).collect();
    // A strip of the innermost dimension would be the plain order again.
    let dim = if rank > 1 { order[rng.index(rank - 1)] } else { 0 };
    let kind = if choice < 85 { "p" } else { "oe" };
    // A packed strip as large as its dimension would be a plain order too.
    let strips: Vec<u32> = [2u32, 4, 8, 16]
        .into_iter()
        .filter(|s| shape[dim].is_multiple_of(*s) && (kind == "oe" || *s < shape[dim]))
        .collect();
    if strips.is_empty() || choice >= 95 {
        return (format!("[{}]", dims.join(", ")), rank);
    }
    let strip = rng.pick(&strips);
    dims.push(format!("{dim} {kind}{strip}"));
    (format!("[{}]", dims.join(", ")), rank + 1)
}

/// A Compose pipeline: two Matmuls, Softmax then Matmul, Matmul then Softmax, or
/// Matmul → Softmax → Matmul (attention's shape).
fn compose_text(rng: &mut FuzzRng, target: &Target, contiguity: &mut bool) -> (String, String) {
    let d = |rng: &mut FuzzRng| *rng.pick(&[1u32, 2, 3, 4]);
    let (b, m, k, n, p) = (1, d(rng), d(rng), d(rng), d(rng));
    let mid = rng.pick(&[Dtype::F32, Dtype::F32, Dtype::Bf16]).name();
    let (stages, shapes): (String, Vec<[u32; 3]>) = match rng.below(4) {
        0 => (
            format!("Matmul({b}x{m}x{n}x{p}), Matmul({b}x{m}x{k}x{n}) -> {mid}"),
            vec![[b, n, p], [b, m, k], [b, k, n], [b, m, p]],
        ),
        1 => (
            format!("Softmax({b}x{m}x{n}, scan=2), Matmul({b}x{m}x{k}x{n}) -> f32"),
            vec![[b, m, k], [b, k, n], [b, m, n]],
        ),
        2 => (
            format!("Matmul({b}x{m}x{n}x{p}), Softmax({b}x{m}x{n}, scan=2) -> f32"),
            vec![[b, n, p], [b, m, n], [b, m, p]],
        ),
        _ => (
            format!("Matmul({b}x{m}x{n}x{p}), Softmax({b}x{m}x{n}, scan=2) -> f32, Matmul({b}x{m}x{k}x{n}) -> f32"),
            vec![[b, n, p], [b, m, k], [b, k, n], [b, m, p]],
        ),
    };
    let operands: Vec<String> = shapes.iter().map(|s| operand_text(rng, target, s, Dtype::F32, contiguity)).collect();
    (format!("Compose([{stages}]"), format!(", {}", operands.join(", ")))
}

/// Memory limits at or below the target's: each level's capacity, or a power of two a few
/// times smaller.
fn limits_text(rng: &mut FuzzRng, target: &Target) -> String {
    let values: Vec<u64> = target
        .max_limits()
        .bytes()
        .into_iter()
        .map(|capacity| {
            let shift = rng.below(4);
            if shift == 0 || capacity == 0 {
                capacity
            } else {
                1u64 << (63 - capacity.leading_zeros()).saturating_sub(shift as u32)
            }
        })
        .collect();
    format!("[{}]", values.iter().map(u64::to_string).collect::<Vec<_>>().join(", "))
}

/// The labels of a parsed Spec.
fn labels_of(spec: &Spec) -> Labels {
    let primitive = match spec.logical().kind() {
        SpecKind::Primitive(p) => p.name().to_owned(),
        SpecKind::Compose(stages) => {
            format!("Compose[{}]", stages.iter().map(|c| c.primitive.name()).collect::<Vec<_>>().join("+"))
        }
    };
    let mut dtypes: Vec<&str> = Vec::new();
    for t in spec.operands() {
        if !dtypes.contains(&t.dtype().name()) {
            dtypes.push(t.dtype().name());
        }
    }
    let mut layouts: Vec<&'static str> = spec.operands().iter().map(layout_family).collect();
    layouts.sort_unstable();
    layouts.dedup();
    let mut levels: Vec<&'static str> = spec.operands().iter().map(|t| t.level().name()).collect();
    levels.sort_unstable();
    levels.dedup();
    Labels { primitive, dtypes: dtypes.join("→"), layouts, levels, features: Vec::new() }
}

/// The layout family of an operand.
fn layout_family(t: &TensorSpec) -> &'static str {
    if !t.level().has_layout() {
        return "register";
    }
    let text = t.layout_syntax();
    if text.contains("oe") {
        "odd_even"
    } else if text.contains(" p") {
        "packed"
    } else if text.contains("col_major") {
        "col_major"
    } else if text.contains("row_major") || !text.contains('[') {
        "row_major"
    } else {
        "permuted"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::TargetId;
    use std::collections::BTreeSet;

    #[test]
    fn drawn_specs_cover_every_primitive_dtype_and_layout_family() {
        for id in TargetId::ALL {
            let target = id.target();
            let mut rng = FuzzRng::new(11);
            let (mut primitives, mut dtypes, mut layouts) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
            let mut parsed = 0;
            for _ in 0..3000 {
                let (text, _) = spec_text(&mut rng, target);
                let Ok(spec) = Spec::parse_for(&text, target) else { continue };
                parsed += 1;
                let labels = labels_of(&spec);
                primitives.insert(labels.primitive.split('[').next().unwrap_or_default().to_owned());
                dtypes.extend(spec.operands().iter().map(|t| t.dtype()));
                layouts.extend(labels.layouts);
            }
            assert!(parsed > 2000, "{id}: only {parsed} of 3000 drawn Specs parse");
            for name in Primitive::names() {
                assert!(primitives.contains(name), "{id}: no {name} drawn");
            }
            assert!(primitives.contains("Compose"), "{id}: no Compose drawn");
            assert_eq!(dtypes.len(), Dtype::ALL.len(), "{id}: dtypes {dtypes:?}");
            for family in ["row_major", "col_major", "packed", "odd_even", "register"] {
                assert!(layouts.contains(family), "{id}: no {family} layout drawn ({layouts:?})");
            }
        }
    }
}
