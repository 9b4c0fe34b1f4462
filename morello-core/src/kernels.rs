//! The microkernel table: for each kernel, when it applies, what it costs, which registers it
//! needs beyond its operands, and the C it emits.

use crate::dtype::Dtype;
use crate::level::Level;
use crate::limits::MemoryUsage;
use crate::primitive::{FillValue, Primitive, Role};
use crate::spec::LogicalSpec;
use crate::target::Target;
use crate::tensor::TensorSpec;
use std::fmt;
use thiserror::Error;

/// A microkernel.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum KernelKind {
    /// `out += lhs * rhs` on single elements in registers or L1.
    MultAdd,
    /// `out[j] += lhs * rhs[j]` over vector registers: one broadcast, one multiply-add per
    /// output register (paper Figure 1; `vbroadcastss` + `vfmadd`).
    BroadcastVecMultAdd,
    /// Copy one element between registers and L1.
    ValueAssign,
    /// Copy whole vector registers to, from or between vector registers.
    VectorAssign,
    /// `memset` a contiguous tensor in memory to zero.
    MemsetZero,
    /// Set one element to zero.
    ValueZero,
    /// Set vector registers to zero.
    VectorZero,
}

/// Why a kernel does not implement a Spec.
#[derive(Clone, PartialEq, Eq, Debug, Error)]
pub enum KernelMismatch {
    /// The kernel implements another primitive.
    #[error("it implements {expected}, not {found}")]
    Primitive {
        /// What it implements.
        expected: &'static str,
        /// What the Spec is.
        found: String,
    },
    /// An operand must be a single element.
    #[error("operand `{operand}` must be a single element, but it is {shape}")]
    NotScalar {
        /// Operand name.
        operand: String,
        /// Its shape, formatted.
        shape: String,
    },
    /// An operand is at the wrong level.
    #[error("operand `{operand}` must be in {allowed}, but it is in {found}")]
    Level {
        /// Operand name.
        operand: String,
        /// Allowed levels, formatted.
        allowed: String,
        /// Its level.
        found: Level,
    },
    /// Operand dtypes differ.
    #[error("all operands must have the same dtype")]
    MixedDtypes,
    /// The dtype is not supported.
    #[error("{dtype} is not supported")]
    Dtype {
        /// The dtype.
        dtype: Dtype,
    },
    /// An operand is not contiguous.
    #[error("operand `{operand}` must be contiguous")]
    NotContiguous {
        /// Operand name.
        operand: String,
    },
    /// Operands disagree on vector size or layout.
    #[error("operands must have the same shape, layout and vector size")]
    Mismatched,
    /// The Spec's shape is not what the kernel handles.
    #[error("{0}")]
    Shape(String),
}

/// What a kernel's C emission needs from the code generator.
pub trait KernelEmitter {
    /// The C lvalue of operand `i`, which is a single element.
    fn scalar(&mut self, i: usize) -> String;
    /// A C pointer expression to the first element of operand `i`, which is contiguous memory.
    fn address(&mut self, i: usize) -> String;
    /// Names of the vector registers holding operand `i`, in buffer order.
    fn vectors(&mut self, i: usize) -> Vec<String>;
    /// The name of the C vector type of `lanes` × `dtype`.
    fn vector_type(&mut self, dtype: Dtype, lanes: u32) -> String;
    /// Emits one line of C.
    fn line(&mut self, code: String);
}

impl KernelKind {
    /// Every kernel, in a fixed order.
    pub const ALL: [KernelKind; 7] = [
        KernelKind::MultAdd,
        KernelKind::BroadcastVecMultAdd,
        KernelKind::ValueAssign,
        KernelKind::VectorAssign,
        KernelKind::MemsetZero,
        KernelKind::ValueZero,
        KernelKind::VectorZero,
    ];

    /// Name in schedule syntax.
    pub fn name(self) -> &'static str {
        match self {
            KernelKind::MultAdd => "MultAdd",
            KernelKind::BroadcastVecMultAdd => "BroadcastVecMultAdd",
            KernelKind::ValueAssign => "ValueAssign",
            KernelKind::VectorAssign => "VectorAssign",
            KernelKind::MemsetZero => "MemsetZero",
            KernelKind::ValueZero => "ValueZero",
            KernelKind::VectorZero => "VectorZero",
        }
    }

    /// Looks a kernel up by name.
    pub fn from_name(name: &str) -> Option<KernelKind> {
        KernelKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The primitive this kernel implements.
    pub fn primitive(self) -> Primitive {
        match self {
            KernelKind::MultAdd | KernelKind::BroadcastVecMultAdd => Primitive::Matmul { accum: true },
            KernelKind::ValueAssign | KernelKind::VectorAssign => Primitive::Move,
            KernelKind::MemsetZero | KernelKind::ValueZero | KernelKind::VectorZero => Primitive::Fill(FillValue::Zero),
        }
    }

    /// The levels this kernel accepts for operand `operand`.
    pub fn operand_levels(self, operand: usize) -> &'static [Level] {
        const SCALAR: &[Level] = &[Level::RF, Level::L1];
        match (self, operand) {
            (KernelKind::MultAdd | KernelKind::ValueAssign | KernelKind::ValueZero, _) => SCALAR,
            (KernelKind::BroadcastVecMultAdd, 0) => SCALAR,
            (KernelKind::BroadcastVecMultAdd, _) => &[Level::VRF],
            (KernelKind::VectorAssign, _) => &[Level::VRF, Level::L1],
            (KernelKind::MemsetZero, _) => &[Level::L1, Level::GL],
            (KernelKind::VectorZero, _) => &[Level::VRF],
        }
    }

    /// Whether some kernel can consume operand `operand` of a `primitive` Spec at `level`,
    /// directly or after `to_accum` (whose initializing fill must then accept the output too).
    /// Register levels are final (nothing moves out of them), so an operand moved to a register
    /// level no kernel accepts can never be implemented.
    pub fn any_accepts(primitive: Primitive, operand: usize, level: Level) -> bool {
        let direct = |p: Primitive, i: usize| {
            KernelKind::ALL.iter().any(|k| k.primitive() == p && k.operand_levels(i).contains(&level))
        };
        let any_fill = || {
            KernelKind::ALL
                .iter()
                .any(|k| matches!(k.primitive(), Primitive::Fill(_)) && k.operand_levels(0).contains(&level))
        };
        direct(primitive, operand)
            || primitive.accumulating_variant().is_some_and(|accum| {
                let initialized = matches!(accum.operands()[operand].role, Role::Output { init: Some(_) });
                KernelKind::any_accepts(accum, operand, level) && (!initialized || any_fill())
            })
    }

    /// Whether this kernel implements `spec` on `target`.
    pub fn applies(self, spec: &LogicalSpec, target: &Target) -> Result<(), KernelMismatch> {
        if spec.primitive() != Some(self.primitive()) {
            let found = spec.primitive().map_or_else(|| "a Compose".to_owned(), |p| p.to_string());
            return Err(KernelMismatch::Primitive { expected: self.primitive().name(), found });
        }
        let _ = target;
        let ops = spec.operands();
        let check = Checker { spec };
        match self {
            KernelKind::MultAdd => {
                check.same_dtype()?;
                check.dtype_in(&[Dtype::U8, Dtype::I8, Dtype::U16, Dtype::I16, Dtype::U32, Dtype::I32, Dtype::F32])?;
                check.scalars_in_rf_or_l1(&[0, 1, 2])
            }
            KernelKind::BroadcastVecMultAdd => {
                check.same_dtype()?;
                check.dtype_in(&[Dtype::F32, Dtype::U32, Dtype::U16])?;
                let [b, m, k, _] = spec.shape() else { unreachable!("Matmul is rank 4") };
                if (*b, *m, *k) != (1, 1, 1) {
                    return Err(KernelMismatch::Shape(format!(
                        "it needs a 1×1×1×n Spec (one row of output), not {}",
                        crate::shape::DisplayShape(spec.shape())
                    )));
                }
                check.scalars_in_rf_or_l1(&[0])?;
                check.level(1, &[Level::VRF])?;
                check.level(2, &[Level::VRF])?;
                check.contiguous(1)?;
                check.contiguous(2)?;
                check.same_vectors(1, 2)
            }
            KernelKind::ValueAssign => {
                check.same_dtype()?;
                check.scalars_in_rf_or_l1(&[0, 1])
            }
            KernelKind::VectorAssign => {
                check.same_dtype()?;
                check.level(0, &[Level::VRF, Level::L1])?;
                check.level(1, &[Level::VRF, Level::L1])?;
                if ops[0].level() != Level::VRF && ops[1].level() != Level::VRF {
                    return Err(KernelMismatch::Level {
                        operand: "src or dst".to_owned(),
                        allowed: Level::VRF.name().to_owned(),
                        found: ops[0].level(),
                    });
                }
                check.contiguous(0)?;
                check.contiguous(1)?;
                check.same_vectors(0, 1)
            }
            KernelKind::MemsetZero => {
                check.level(0, &[Level::L1, Level::GL])?;
                check.contiguous(0)
            }
            KernelKind::ValueZero => check.scalars_in_rf_or_l1(&[0]),
            KernelKind::VectorZero => {
                check.level(0, &[Level::VRF])?;
                check.contiguous(0)
            }
        }
    }

    /// The kernel's cost (paper §3's `k_p`), in the same units as move costs.
    pub fn cost(self, spec: &LogicalSpec, target: &Target) -> u64 {
        let ops = spec.operands();
        let moves: u64 = ops.iter().map(|t| t.move_cost(target)).sum();
        match self {
            KernelKind::MultAdd => {
                let base = if ops[2].dtype().is_float() { 1 } else { 2 };
                base + moves
            }
            KernelKind::BroadcastVecMultAdd => 2 * ops[2].vector_count() + 1,
            KernelKind::ValueAssign | KernelKind::ValueZero => 1 + moves,
            KernelKind::VectorAssign => ops.iter().map(TensorSpec::vector_count).max().unwrap_or(1),
            KernelKind::MemsetZero => 1 + moves,
            KernelKind::VectorZero => ops[0].vector_count(),
        }
    }

    /// Registers the kernel needs beyond its operands.
    pub fn memory(self, spec: &LogicalSpec, target: &Target) -> MemoryUsage {
        let _ = spec;
        match self {
            // The broadcast of the scalar occupies one vector register.
            KernelKind::BroadcastVecMultAdd => {
                MemoryUsage::single(Level::VRF, u64::from(target.level(Level::VRF).register_bytes), target)
            }
            _ => MemoryUsage::zero(),
        }
    }

    /// Emits the kernel's C. Operand indices are the Spec's parameter indices.
    pub fn emit(self, spec: &LogicalSpec, out: &mut dyn KernelEmitter) {
        let ops = spec.operands();
        match self {
            KernelKind::MultAdd => {
                let (a, b, c) = (out.scalar(0), out.scalar(1), out.scalar(2));
                let dtype = ops[2].dtype();
                if dtype.is_float() {
                    out.line(format!("{c} += {a} * {b};"));
                } else {
                    // Unsigned 32-bit arithmetic wraps as the Spec requires; narrower types would
                    // promote to (overflowing) int.
                    let t = dtype.c_type();
                    out.line(format!("{c} = ({t})((uint32_t){c} + (uint32_t){a} * (uint32_t){b});"));
                }
            }
            KernelKind::BroadcastVecMultAdd => {
                let a = out.scalar(0);
                let (rhs, acc) = (out.vectors(1), out.vectors(2));
                for (r, o) in rhs.iter().zip(&acc) {
                    out.line(format!("{o} = {o} + {r} * {a};"));
                }
            }
            KernelKind::ValueAssign => {
                let (src, dst) = (out.scalar(0), out.scalar(1));
                out.line(format!("{dst} = {src};"));
            }
            KernelKind::VectorAssign => {
                let dtype = ops[0].dtype();
                let lanes = ops.iter().find_map(TensorSpec::vector_size).expect("one operand is in VRF");
                let bytes = lanes * dtype.size_bytes();
                match (ops[0].level(), ops[1].level()) {
                    (Level::VRF, Level::VRF) => {
                        let (src, dst) = (out.vectors(0), out.vectors(1));
                        for (s, d) in src.iter().zip(&dst) {
                            out.line(format!("{d} = {s};"));
                        }
                    }
                    (Level::VRF, _) => {
                        let (src, base) = (out.vectors(0), out.address(1));
                        for (j, s) in src.iter().enumerate() {
                            out.line(format!("__builtin_memcpy({base} + {}, &{s}, {bytes});", j as u32 * lanes));
                        }
                    }
                    _ => {
                        let (base, dst) = (out.address(0), out.vectors(1));
                        for (j, d) in dst.iter().enumerate() {
                            out.line(format!("__builtin_memcpy(&{d}, {base} + {}, {bytes});", j as u32 * lanes));
                        }
                    }
                }
            }
            KernelKind::MemsetZero => {
                let base = out.address(0);
                let bytes = ops[0].volume() * u64::from(ops[0].dtype().size_bytes());
                out.line(format!("memset({base}, 0, {bytes});"));
            }
            KernelKind::ValueZero => {
                let dst = out.scalar(0);
                out.line(format!("{dst} = 0;"));
            }
            KernelKind::VectorZero => {
                let ty = out.vector_type(ops[0].dtype(), ops[0].vector_size().expect("VRF operand"));
                for v in out.vectors(0) {
                    out.line(format!("{v} = ({ty}){{0}};"));
                }
            }
        }
    }
}

/// Applicability checks shared by the kernels.
struct Checker<'a> {
    spec: &'a LogicalSpec,
}

impl Checker<'_> {
    fn name(&self, i: usize) -> String {
        self.spec.operand_name(i).into_owned()
    }

    fn op(&self, i: usize) -> &TensorSpec {
        &self.spec.operands()[i]
    }

    fn same_dtype(&self) -> Result<(), KernelMismatch> {
        let d = self.op(0).dtype();
        if self.spec.operands().iter().all(|t| t.dtype() == d) { Ok(()) } else { Err(KernelMismatch::MixedDtypes) }
    }

    fn dtype_in(&self, allowed: &[Dtype]) -> Result<(), KernelMismatch> {
        let dtype = self.op(0).dtype();
        if allowed.contains(&dtype) { Ok(()) } else { Err(KernelMismatch::Dtype { dtype }) }
    }

    fn scalar(&self, i: usize) -> Result<(), KernelMismatch> {
        if self.op(i).is_scalar() {
            Ok(())
        } else {
            Err(KernelMismatch::NotScalar {
                operand: self.name(i),
                shape: crate::shape::DisplayShape(self.op(i).shape()).to_string(),
            })
        }
    }

    fn level(&self, i: usize, allowed: &[Level]) -> Result<(), KernelMismatch> {
        let found = self.op(i).level();
        if allowed.contains(&found) {
            Ok(())
        } else {
            Err(KernelMismatch::Level {
                operand: self.name(i),
                allowed: allowed.iter().map(|l| l.name()).collect::<Vec<_>>().join(" or "),
                found,
            })
        }
    }

    /// Each listed operand is a single element in scalar registers or L1.
    fn scalars_in_rf_or_l1(&self, operands: &[usize]) -> Result<(), KernelMismatch> {
        for &i in operands {
            self.scalar(i)?;
            self.level(i, &[Level::RF, Level::L1])?;
        }
        Ok(())
    }

    fn contiguous(&self, i: usize) -> Result<(), KernelMismatch> {
        if self.op(i).is_contiguous() { Ok(()) } else { Err(KernelMismatch::NotContiguous { operand: self.name(i) }) }
    }

    /// Both operands hold the same values in the same order, whole vectors of equal size.
    fn same_vectors(&self, a: usize, b: usize) -> Result<(), KernelMismatch> {
        let (x, y) = (self.op(a), self.op(b));
        let lanes_agree = match (x.vector_size(), y.vector_size()) {
            (Some(p), Some(q)) => p == q,
            (Some(l), None) | (None, Some(l)) => x.volume() % u64::from(l) == 0,
            (None, None) => false,
        };
        if x.shape() == y.shape() && x.layout().dims() == y.layout().dims() && lanes_agree {
            Ok(())
        } else {
            Err(KernelMismatch::Mismatched)
        }
    }
}

impl fmt::Display for KernelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
