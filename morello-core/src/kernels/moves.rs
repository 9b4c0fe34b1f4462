//! Data-movement microkernels (Move and OnePrefix): scalar copies and upcasts, whole-register
//! copies and upcasts, register permutations (transposes, interleaves: any relayout between
//! vector registers and L1, as shuffles), and `memcpy` between memory tensors of one layout.

use super::check::Checker;
use super::emit::{KernelEmitter, lane_slice, load_vectors, store_vectors, widen_bf16};
use super::{
    KernelDef, KernelMismatch, MEMORY, SCALAR, VECTOR, VECTOR_OR_L1, any_register_tiles, no_registers, operand_moves,
};
use crate::dtype::Dtype;
use crate::fxhash::FxHashMap;
use crate::level::Level;
use crate::primitive::Primitive;
use crate::shape::coordinates;
use crate::spec::LogicalSpec;
use crate::target::Target;
use crate::tensor::TensorSpec;
use std::cell::RefCell;

fn is_move(p: Primitive) -> bool {
    p == Primitive::Move
}

fn same_dtype(c: &Checker) -> Result<(), KernelMismatch> {
    if c.op(0).dtype() == c.op(1).dtype() { Ok(()) } else { Err(c.dtypes("one dtype (use a cast kernel to widen)")) }
}

fn different_dtype(c: &Checker) -> Result<(), KernelMismatch> {
    if c.op(0).dtype() != c.op(1).dtype() { Ok(()) } else { Err(c.dtypes("a widening from one dtype to another")) }
}

/// Copies one element between scalar registers and L1.
pub static VALUE_ASSIGN: KernelDef = KernelDef {
    name: "ValueAssign",
    implements: "Move",
    matches: is_move,
    levels: &[SCALAR, SCALAR],
    applies: |c, _| {
        same_dtype(c)?;
        c.all_scalars()
    },
    cost: |spec, target| 1 + operand_moves(spec, target),
    registers: no_registers,
    register_tiles: any_register_tiles,
    emit: |_, out| {
        let (src, dst) = (out.scalar(0), out.scalar(1));
        out.line(format!("{dst} = {src};"));
    },
};

/// Widens one element (bf16 → f32, or a wider integer type).
pub static VALUE_CAST: KernelDef = KernelDef {
    name: "ValueCast",
    implements: "Move",
    matches: is_move,
    levels: &[SCALAR, SCALAR],
    applies: |c, _| {
        different_dtype(c)?;
        c.all_scalars()
    },
    cost: |spec, target| 2 + operand_moves(spec, target),
    registers: no_registers,
    register_tiles: any_register_tiles,
    emit: |spec, out| {
        let value = super::emit::read_value(spec, 0, out);
        let dst = out.scalar(1);
        out.line(format!("{dst} = ({}){value};", spec.operands()[1].dtype().c_type()));
    },
};

/// Copies one element into a tensor with a leading unit dimension.
pub static VALUE_ONE_PREFIX: KernelDef = KernelDef {
    name: "ValueOnePrefix",
    implements: "OnePrefix",
    matches: |p| p == Primitive::OnePrefix,
    levels: &[SCALAR, SCALAR],
    applies: |c, _| c.all_scalars(),
    cost: |spec, target| 1 + operand_moves(spec, target),
    registers: no_registers,
    register_tiles: any_register_tiles,
    emit: |_, out| {
        let (src, dst) = (out.scalar(0), out.scalar(1));
        out.line(format!("{dst} = {src};"));
    },
};

/// Copies whole vector registers to, from or between vector registers.
pub static VECTOR_ASSIGN: KernelDef = KernelDef {
    name: "VectorAssign",
    implements: "Move",
    matches: is_move,
    levels: &[VECTOR_OR_L1, VECTOR_OR_L1],
    applies: |c, target| {
        c.has_vectors(target)?;
        same_dtype(c)?;
        one_in_registers(c)?;
        c.all_contiguous()?;
        c.same_vectors(0, 1)
    },
    cost: |spec, _| spec.operands().iter().map(TensorSpec::vector_count).max().unwrap_or(1),
    registers: no_registers,
    register_tiles: any_register_tiles,
    emit: |spec, out| {
        let l = register_lanes(spec);
        if spec.operands()[0].level() == Level::VRF {
            let values = out.vectors(0);
            store_vectors(spec, 1, l, &values, out);
        } else {
            // Load straight into the destination registers.
            let (base, bytes) = (out.address(0), l * spec.operands()[0].dtype().size_bytes());
            for (j, d) in out.vectors(1).iter().enumerate() {
                out.line(format!("__builtin_memcpy(&{d}, {base} + {}, {bytes});", j as u32 * l));
            }
        }
    },
};

fn one_in_registers(c: &Checker) -> Result<(), KernelMismatch> {
    if c.op(0).level() == Level::VRF || c.op(1).level() == Level::VRF {
        Ok(())
    } else {
        Err(KernelMismatch::Level {
            operand: "src or dst".to_owned(),
            allowed: Level::VRF.name().to_owned(),
            found: c.op(0).level(),
        })
    }
}

/// The lanes of the operands in vector registers (equal when both are).
fn register_lanes(spec: &LogicalSpec) -> u32 {
    spec.operands().iter().find_map(TensorSpec::vector_size).expect("one operand is in VRF")
}

/// Widens vectors (bf16 → f32, or wider integers) into vector registers: each destination
/// register takes a slice of a source register (or a load from L1) and converts it.
pub static VECTOR_CAST: KernelDef = KernelDef {
    name: "VectorCast",
    implements: "Move",
    matches: is_move,
    levels: &[VECTOR_OR_L1, VECTOR],
    applies: |c, target| {
        c.has_vectors(target)?;
        different_dtype(c)?;
        c.all_contiguous()?;
        c.require(c.op(0).layout().dims() == c.op(1).layout().dims(), || {
            "source and destination must have one layout (cast, then permute)".to_owned()
        })?;
        let d = c.op(1).vector_size().expect("VRF operand");
        match c.op(0).vector_size() {
            Some(s) => c.require(s % d == 0, || {
                format!("source registers ({s} lanes) must split into destination registers ({d} lanes)")
            }),
            None => Ok(()),
        }
    },
    cost: |spec, _| 2 * spec.operands()[1].vector_count(),
    registers: no_registers,
    register_tiles: any_register_tiles,
    emit: |spec, out| {
        let (src, dst) = (&spec.operands()[0], &spec.operands()[1]);
        let d = dst.vector_size().expect("VRF destination");
        let s = src.vector_size().unwrap_or(d);
        let sources = load_vectors(spec, 0, s, out);
        let to = out.vector_type(dst.dtype(), d);
        let targets = out.vectors(1);
        for (j, t) in targets.iter().enumerate() {
            let first = j as u32 * d;
            let v = &sources[(first / s) as usize];
            let value = if src.dtype() == Dtype::Bf16 {
                debug_assert_eq!(dst.dtype(), Dtype::F32, "bf16 widens to f32");
                widen_bf16(v, s, first % s, d, out)
            } else {
                format!("__builtin_convertvector({}, {to})", lane_slice(v, s, first % s, d))
            };
            out.line(format!("{t} = {value};"));
        }
    },
};

/// Moves between vector registers and L1 with a different layout (transposes, interleaves,
/// odd-even splits): every destination register is assembled from the source registers it
/// draws on with a chain of two-input shuffles.
pub static VECTOR_PERMUTE: KernelDef = KernelDef {
    name: "VectorPermute",
    implements: "Move",
    matches: is_move,
    levels: &[VECTOR_OR_L1, VECTOR_OR_L1],
    applies: |c, target| {
        c.has_vectors(target)?;
        same_dtype(c)?;
        one_in_registers(c)?;
        c.all_contiguous()?;
        c.require(c.op(0).layout().dims() != c.op(1).layout().dims(), || {
            "the layouts are equal: use VectorAssign".to_owned()
        })?;
        let lanes: Vec<u32> = (0..2).filter_map(|i| c.op(i).vector_size()).collect();
        c.require(lanes.windows(2).all(|w| w[0] == w[1]), || "both register operands need one vector size".to_owned())?;
        c.require(c.op(0).volume().is_multiple_of(u64::from(lanes[0])), || {
            "the tensor must fill whole registers".to_owned()
        })
    },
    cost: |spec, _| {
        let shuffles = shuffle_count(spec);
        let memory_vectors: u64 = spec
            .operands()
            .iter()
            .filter(|t| t.level() != Level::VRF)
            .map(|t| t.volume() / u64::from(register_lanes(spec)))
            .sum();
        shuffles + memory_vectors
    },
    registers: |spec, _| {
        let src = &spec.operands()[0];
        1 + if src.level() == Level::VRF { 0 } else { src.volume() / u64::from(register_lanes(spec)) }
    },
    register_tiles: any_register_tiles,
    emit: |spec, out| {
        let l = register_lanes(spec);
        let (_, plan) = shuffle_plan(spec);
        out.open("{".to_owned());
        let sources = load_vectors(spec, 0, l, out);
        let ty = out.vector_type(spec.operands()[0].dtype(), l);
        let mut results = Vec::new();
        for lanes in plan {
            results.push(assemble(&sources, &lanes, l, &ty, out));
        }
        store_vectors(spec, 1, l, &results, out);
        out.close();
    },
};

/// The shuffles [`shuffle_plan`] takes for `spec`, remembered per thread: the search costs the
/// same register transposes many times, and planning one visits every element.
fn shuffle_count(spec: &LogicalSpec) -> u64 {
    /// Beyond this many Specs the remembered counts are dropped, to bound the memory they take.
    const CAPACITY: usize = 1 << 16;
    thread_local! {
        static COUNTS: RefCell<FxHashMap<LogicalSpec, u64>> = RefCell::default();
    }
    if let Some(known) = COUNTS.with_borrow(|counts| counts.get(spec).copied()) {
        return known;
    }
    let (shuffles, _) = shuffle_plan(spec);
    COUNTS.with_borrow_mut(|counts| {
        if counts.len() >= CAPACITY {
            counts.clear();
        }
        counts.insert(spec.clone(), shuffles);
    });
    shuffles
}

/// For each destination register, the (source register, lane) of each of its lanes; and the
/// number of shuffles assembling them takes.
fn shuffle_plan(spec: &LogicalSpec) -> (u64, Vec<Vec<(usize, u32)>>) {
    let (src, dst) = (&spec.operands()[0], &spec.operands()[1]);
    let l = register_lanes(spec);
    let shape = src.shape();
    let mut origin = vec![0u64; src.volume() as usize];
    for c in coordinates(shape) {
        let c: Vec<u64> = c.iter().map(|&x| u64::from(x)).collect();
        let to = dst.layout().buffer_index::<u64>(shape, &c);
        origin[to as usize] = src.layout().buffer_index::<u64>(shape, &c);
    }
    let plan: Vec<Vec<(usize, u32)>> = origin
        .chunks(l as usize)
        .map(|lanes| lanes.iter().map(|&p| ((p / u64::from(l)) as usize, (p % u64::from(l)) as u32)).collect())
        .collect();
    let shuffles = plan
        .iter()
        .map(|lanes| {
            let mut regs: Vec<usize> = lanes.iter().map(|&(r, _)| r).collect();
            regs.sort_unstable();
            regs.dedup();
            let identity = regs.len() == 1 && lanes.iter().enumerate().all(|(i, &(_, lane))| lane == i as u32);
            if identity { 0 } else { regs.len().saturating_sub(1).max(1) as u64 }
        })
        .sum();
    (shuffles, plan)
}

/// A vector whose lane `i` is lane `lanes[i].1` of source register `lanes[i].0`.
fn assemble(sources: &[String], lanes: &[(usize, u32)], l: u32, ty: &str, out: &mut dyn KernelEmitter) -> String {
    let mut regs: Vec<usize> = lanes.iter().map(|&(r, _)| r).collect();
    regs.sort_unstable();
    regs.dedup();
    let first = regs[0];
    if regs.len() == 1 && lanes.iter().enumerate().all(|(i, &(_, lane))| lane == i as u32) {
        return sources[first].clone();
    }
    let acc = out.fresh("p");
    let second = regs.get(1).copied().unwrap_or(first);
    let mask: Vec<String> = lanes
        .iter()
        .enumerate()
        .map(|(i, &(r, lane))| match r {
            r if r == first => lane.to_string(),
            r if r == second => (l + lane).to_string(),
            _ => i.to_string(),
        })
        .collect();
    out.line(format!(
        "{ty} {acc} = __builtin_shufflevector({}, {}, {});",
        sources[first],
        sources[second],
        mask.join(", ")
    ));
    for &r in regs.iter().skip(2) {
        let mask: Vec<String> = lanes
            .iter()
            .enumerate()
            .map(|(i, &(from, lane))| if from == r { (l + lane).to_string() } else { i.to_string() })
            .collect();
        out.line(format!("{acc} = __builtin_shufflevector({acc}, {}, {});", sources[r], mask.join(", ")));
    }
    acc
}

/// Copies a contiguous tensor to another of the same layout in memory.
pub static MEMCPY: KernelDef = KernelDef {
    name: "Memcpy",
    implements: "Move",
    matches: is_move,
    levels: &[MEMORY, MEMORY],
    applies: |c, _| {
        same_dtype(c)?;
        c.all_contiguous()?;
        c.require(c.op(0).layout().dims() == c.op(1).layout().dims(), || {
            "source and destination need one layout".to_owned()
        })
    },
    cost: |spec, target: &Target| 1 + operand_moves(spec, target),
    registers: no_registers,
    register_tiles: any_register_tiles,
    emit: |spec, out| {
        let (src, dst) = (out.address(0), out.address(1));
        let t = &spec.operands()[0];
        out.line(format!("memcpy({dst}, {src}, {});", t.data_bytes()));
    },
};
