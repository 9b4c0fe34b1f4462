//! The microkernel table: for each kernel, the primitive it implements, the levels its
//! operands may be at, when it applies on a target, what it costs, which vector registers it
//! needs beyond its operands, and the C it emits.
//!
//! Every kernel is declared once, as a [`KernelDef`] in one of the group files (matrix
//! products, moves, fills and broadcasts, element-wise operations, softmax parts); everything
//! else reads that table. Kernels emit portable GNU C vector code where they can, so the same
//! definition serves AVX2 (16- and 32-byte vectors) and AVX-512 (up to 64-byte vectors); only
//! the AVX-512 bf16 kernels (`vdpbf16ps` dot products, even/odd widening) use intrinsics.
//! Scalar ("value") kernels serve every target, including the portable one, and every dtype.

mod bf16_rows;
mod check;
mod elementwise;
mod emit;
mod fills;
mod helpers;
mod matmul;
mod moves;
mod softmax;

pub use check::KernelMismatch;
pub use emit::KernelEmitter;
pub use helpers::{Helper, SPARE_SLOTS};
pub(crate) use matmul::{bf16_products_per_two_units, has_contiguous_line};

use crate::fxhash::FxHashMap;
use crate::level::Level;
use crate::limits::MemoryUsage;
use crate::primitive::{FillValue, Primitive, Role};
use crate::spec::LogicalSpec;
use crate::target::Target;
use check::Checker;
use std::cell::RefCell;
use std::fmt;

/// Levels accepted for single elements: scalar registers or L1.
pub(crate) const SCALAR: &[Level] = &[Level::RF, Level::L1];
/// Vector registers only.
pub(crate) const VECTOR: &[Level] = &[Level::VRF];
/// Vector registers or contiguous L1 memory.
pub(crate) const VECTOR_OR_L1: &[Level] = &[Level::VRF, Level::L1];
/// L1 memory only.
pub(crate) const L1: &[Level] = &[Level::L1];
/// Addressed memory (L1 or global).
pub(crate) const MEMORY: &[Level] = &[Level::L1, Level::GL];

/// One microkernel's definition. See the module documentation.
pub struct KernelDef {
    /// Name in schedule syntax.
    pub name: &'static str,
    /// What it implements, in words (for messages).
    pub implements: &'static str,
    /// Whether it implements `primitive`.
    pub matches: fn(Primitive) -> bool,
    /// Per operand, the levels it may be at.
    pub levels: &'static [&'static [Level]],
    /// Whether it applies (the primitive and levels are already checked).
    pub applies: fn(&Checker, &Target) -> Result<(), KernelMismatch>,
    /// Its cost (paper §3's `k_p`), in the units of move costs.
    pub cost: fn(&LogicalSpec, &Target) -> u64,
    /// Vector registers it needs beyond its operands.
    pub registers: fn(&LogicalSpec, &Target) -> u64,
    /// Whether the operands a Spec already holds in registers leave some tile of it that this
    /// kernel could implement (see [`KernelKind::may_take_register_tiles`]); a necessary
    /// condition only, `any_register_tiles` (which accepts every tile) where the kernel has
    /// nothing to rule out.
    pub register_tiles: fn(&LogicalSpec, &Target) -> bool,
    /// Emits its C.
    pub emit: fn(&LogicalSpec, &mut dyn KernelEmitter),
}

macro_rules! kernels {
    ($($kind:ident => $def:path,)*) => {
        /// A microkernel. See [`KernelDef`] for what each one knows.
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
        pub enum KernelKind {
            $(#[doc = concat!("The `", stringify!($kind), "` kernel (see its definition).")] $kind,)*
        }

        impl KernelKind {
            /// Every kernel, in a fixed order.
            pub const ALL: &'static [KernelKind] = &[$(KernelKind::$kind,)*];

            /// The kernel's definition.
            pub fn def(self) -> &'static KernelDef {
                match self {
                    $(KernelKind::$kind => &$def,)*
                }
            }
        }
    };
}

kernels! {
    MultAdd => matmul::MULT_ADD,
    BroadcastVecMultAdd => matmul::BROADCAST_VEC_MULT_ADD,
    BroadcastVecMultAddBf16F32 => matmul::BROADCAST_VEC_MULT_ADD_BF16_F32,
    DotProductLoop => matmul::DOT_PRODUCT_LOOP,
    DotProductLoopBf16 => matmul::DOT_PRODUCT_LOOP_BF16,
    DotProductLoopVdpbf16ps => matmul::DOT_PRODUCT_LOOP_VDPBF16PS,
    MatmulLoopVdpbf16ps => matmul::MATMUL_LOOP_VDPBF16PS,
    MatmulLoopBf16EvenOdd => bf16_rows::MATMUL_LOOP_BF16_EVEN_ODD,
    ValueAssign => moves::VALUE_ASSIGN,
    ValueCast => moves::VALUE_CAST,
    VectorAssign => moves::VECTOR_ASSIGN,
    VectorCast => moves::VECTOR_CAST,
    VectorPermute => moves::VECTOR_PERMUTE,
    Memcpy => moves::MEMCPY,
    ValueOnePrefix => moves::VALUE_ONE_PREFIX,
    MemsetZero => fills::MEMSET_ZERO,
    ValueZero => fills::VALUE_ZERO,
    ValueNegInf => fills::VALUE_NEG_INF,
    ValueMin => fills::VALUE_MIN,
    VectorZero => fills::VECTOR_ZERO,
    VectorNegInf => fills::VECTOR_NEG_INF,
    VectorMin => fills::VECTOR_MIN,
    ValueBroadcast => fills::VALUE_BROADCAST,
    VecScalarAssign => fills::VEC_SCALAR_ASSIGN,
    ValueDivide => elementwise::VALUE_DIVIDE,
    VectorDivide => elementwise::VECTOR_DIVIDE,
    ValueDivideVecScalar => elementwise::VALUE_DIVIDE_VEC_SCALAR,
    DivideVecScalarReciprocal => elementwise::DIVIDE_VEC_SCALAR_RECIPROCAL,
    ValueMax => elementwise::VALUE_MAX,
    VectorMax => elementwise::VECTOR_MAX,
    VectorMaxLoop => elementwise::VECTOR_MAX_LOOP,
    ValueSoftmaxComplete => softmax::VALUE_SOFTMAX_COMPLETE,
    VectorSoftmaxComplete => softmax::VECTOR_SOFTMAX_COMPLETE,
    ValueSoftmaxDenominator => softmax::VALUE_SOFTMAX_DENOMINATOR,
    VectorSoftmaxDenominator => softmax::VECTOR_SOFTMAX_DENOMINATOR,
    ValueSoftmaxDenominatorAndMax => softmax::VALUE_SOFTMAX_DENOMINATOR_AND_MAX,
    VectorSoftmaxDenominatorAndMax => softmax::VECTOR_SOFTMAX_DENOMINATOR_AND_MAX,
    ValueSoftmaxDenominatorAndMaxFromParts => softmax::VALUE_SOFTMAX_DENOMINATOR_AND_MAX_FROM_PARTS,
    VectorSoftmaxDenominatorAndMaxFromParts => softmax::VECTOR_SOFTMAX_DENOMINATOR_AND_MAX_FROM_PARTS,
    ValueSoftmaxDenominatorAndUnscaledFromMax => softmax::VALUE_SOFTMAX_DENOMINATOR_AND_UNSCALED_FROM_MAX,
    VectorSoftmaxDenominatorAndUnscaledFromMax => softmax::VECTOR_SOFTMAX_DENOMINATOR_AND_UNSCALED_FROM_MAX,
}

impl KernelKind {
    /// Name in schedule syntax.
    pub fn name(self) -> &'static str {
        self.def().name
    }

    /// Looks a kernel up by name.
    pub fn from_name(name: &str) -> Option<KernelKind> {
        KernelKind::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// Whether this kernel implements `primitive` (ignoring operands).
    pub fn implements(self, primitive: Primitive) -> bool {
        (self.def().matches)(primitive)
    }

    /// The levels this kernel accepts for operand `operand`.
    pub fn operand_levels(self, operand: usize) -> &'static [Level] {
        self.def().levels.get(operand).copied().unwrap_or(&[])
    }

    /// Whether some kernel can consume operand `operand` of a `primitive` Spec at `level`,
    /// directly or after `to_accum` (whose initializing fill must then accept the output too).
    /// Register levels are final (nothing moves out of them), so an operand moved to a register
    /// level no kernel accepts can never be implemented.
    pub fn any_accepts(primitive: Primitive, operand: usize, level: Level) -> bool {
        // The search asks this of every Spec it bounds; the answer depends only on the kernel
        // table, so each question is answered once per thread.
        thread_local! {
            static ANSWERS: RefCell<FxHashMap<(Primitive, usize, Level), bool>> = RefCell::default();
        }
        let key = (primitive, operand, level);
        if let Some(known) = ANSWERS.with_borrow(|answers| answers.get(&key).copied()) {
            return known;
        }
        let answer = KernelKind::scan_accepts(primitive, operand, level);
        ANSWERS.with_borrow_mut(|answers| answers.insert(key, answer));
        answer
    }

    /// [`KernelKind::any_accepts`], from the kernel table.
    fn scan_accepts(primitive: Primitive, operand: usize, level: Level) -> bool {
        let direct = |p: Primitive, i: usize| {
            KernelKind::ALL.iter().any(|k| k.implements(p) && k.operand_levels(i).contains(&level))
        };
        let fills = [FillValue::Zero, FillValue::NegInf, FillValue::Min].map(Primitive::Fill);
        let any_fill = || {
            KernelKind::ALL
                .iter()
                .any(|k| fills.iter().any(|&f| k.implements(f)) && k.operand_levels(0).contains(&level))
        };
        direct(primitive, operand)
            || primitive.accumulating_variant().is_some_and(|accum| {
                let initialized = matches!(accum.operands()[operand].role, Role::Output { init: Some(_) });
                KernelKind::any_accepts(accum, operand, level) && (!initialized || any_fill())
            })
    }

    /// Whether this kernel might implement some tile of `spec`, judging only by the operands
    /// `spec` holds in registers: they must be at levels the kernel accepts, and pass the
    /// kernel's `register_tiles` test. Nothing moves out of a register level, and a tile of an
    /// operand keeps its dimension order and vector size, so where this is false, no tile of
    /// `spec` (with its operands in memory moved anywhere) is implemented by this kernel. Never
    /// false where the kernel applies to `spec` or to one of its tiles.
    pub fn may_take_register_tiles(self, spec: &LogicalSpec, target: &Target) -> bool {
        let levels_accepted = spec
            .operands()
            .iter()
            .enumerate()
            .all(|(i, t)| !t.level().is_register_file() || self.operand_levels(i).contains(&t.level()));
        levels_accepted && (self.def().register_tiles)(spec, target)
    }

    /// Whether this kernel implements `spec` on `target`.
    pub fn applies(self, spec: &LogicalSpec, target: &Target) -> Result<(), KernelMismatch> {
        let def = self.def();
        let found = || spec.primitive().map_or_else(|| "a Compose".to_owned(), |p| p.to_string());
        match spec.primitive() {
            Some(p) if (def.matches)(p) => {}
            _ => return Err(KernelMismatch::Primitive { expected: def.implements, found: found() }),
        }
        let check = Checker::new(spec);
        for (i, levels) in def.levels.iter().enumerate() {
            check.level(i, levels)?;
        }
        (def.applies)(&check, target)
    }

    /// The kernel's cost (paper §3's `k_p`), in the same units as move costs.
    pub fn cost(self, spec: &LogicalSpec, target: &Target) -> u64 {
        (self.def().cost)(spec, target)
    }

    /// Registers the kernel needs beyond its operands.
    pub fn memory(self, spec: &LogicalSpec, target: &Target) -> MemoryUsage {
        let registers = (self.def().registers)(spec, target);
        if registers == 0 {
            return MemoryUsage::zero();
        }
        MemoryUsage::single(Level::VRF, registers * u64::from(target.level(Level::VRF).register_bytes), target)
    }

    /// Emits the kernel's C. Operand indices are the Spec's parameter indices.
    pub fn emit(self, spec: &LogicalSpec, out: &mut dyn KernelEmitter) {
        (self.def().emit)(spec, out)
    }
}

impl fmt::Display for KernelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The move costs of every operand (paper §3's `m(t)`; zero in registers).
pub(crate) fn operand_moves(spec: &LogicalSpec, target: &Target) -> u64 {
    let held = crate::residency::residency(spec, target);
    spec.operands().iter().map(|t| t.move_cost(target, held)).sum()
}

/// No extra registers.
pub(crate) fn no_registers(_: &LogicalSpec, _: &Target) -> u64 {
    0
}

/// No demands on register operands beyond their levels.
pub(crate) fn any_register_tiles(_: &LogicalSpec, _: &Target) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        for &k in KernelKind::ALL {
            assert_eq!(KernelKind::from_name(k.name()), Some(k));
        }
        let mut names: Vec<&str> = KernelKind::ALL.iter().map(|k| k.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), KernelKind::ALL.len());
    }
}
