//! One [`PartialImpl`] method per rewrite, generated from the
//! [rewrite table](crate::rewrite::table), and the form of their arguments: resolved against
//! the default Spec when the method applies them.

use super::{PartialImpl, ScheduleError};
use crate::dtype::Dtype;
use crate::kernels::KernelKind;
use crate::layout::Layout;
use crate::level::Level;
use crate::rewrite::form::{Form, Mapper};
use crate::rewrite::{Action, MoveDest, Resolved, Rewrite, RewriteError, TempDest, spec_name};
use crate::shape::Shape;
use crate::spec::{LayoutDecl, Spec};

/// Arguments as a caller writes them: like [`Resolved`], except that a move's destination may
/// leave its layout, dtype and contiguity to the operand's.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Plain {}

impl Form for Plain {
    type Count = u32;
    type Operand = usize;
    type Stage = usize;
    type Tile = Shape;
    type Parallel = bool;
    type Kernel = KernelKind;
    type Temp = TempDest;
    type GroupedTemp = TempDest;
    type MoveDest = MoveTo;
}

/// Where a move puts its operand, as written: a level, and anything else the operand's own
/// values fill in.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct MoveTo {
    /// Destination level.
    pub level: Level,
    /// Destination layout; `None` keeps the operand's (making a move into L1 a cache fill).
    pub layout: Option<LayoutDecl>,
    /// Lanes per register (VRF).
    pub vector_size: Option<u32>,
    /// Destination dtype; `None` keeps the operand's. An input may widen (bf16 → f32, or a
    /// wider integer type).
    pub dtype: Option<Dtype>,
    /// How many innermost physical dimensions are contiguous; `None`: all of them, or the
    /// operand's own contiguity when `layout` is `None`.
    pub contig: Option<u8>,
}

impl MoveTo {
    /// A move to `level` keeping everything else of the operand.
    pub fn level(level: Level) -> MoveTo {
        MoveTo { level, layout: None, vector_size: None, dtype: None, contig: None }
    }
}

/// Plain arguments resolved against the Spec they apply to.
struct Elaborate<'a> {
    spec: &'a Spec,
    /// The operand of the move being resolved.
    operand: Option<usize>,
}

impl Mapper for Elaborate<'_> {
    type From = Plain;
    type To = Resolved;
    type Error = ScheduleError;
    fn count(&mut self, v: &u32) -> Result<u32, ScheduleError> {
        Ok(*v)
    }
    fn operand(&mut self, v: &usize) -> Result<usize, ScheduleError> {
        self.operand = Some(*v);
        Ok(*v)
    }
    fn stage(&mut self, v: &usize) -> Result<usize, ScheduleError> {
        Ok(*v)
    }
    fn tile(&mut self, v: &Shape) -> Result<Shape, ScheduleError> {
        Ok(v.clone())
    }
    fn parallel(&mut self, v: &bool) -> Result<bool, ScheduleError> {
        Ok(*v)
    }
    fn kernel(&mut self, v: &KernelKind) -> Result<KernelKind, ScheduleError> {
        Ok(*v)
    }
    fn temp(&mut self, v: &TempDest) -> Result<TempDest, ScheduleError> {
        Ok(v.clone())
    }
    fn grouped_temp(&mut self, v: &TempDest) -> Result<TempDest, ScheduleError> {
        Ok(v.clone())
    }
    fn move_dest(&mut self, v: &MoveTo) -> Result<MoveDest, ScheduleError> {
        let spec = self.spec;
        let operand = self.operand.expect("a move's operand precedes its destination");
        let Some(src) = spec.operands().get(operand) else {
            return Err(RewriteError::OperandOutOfRange {
                what: spec_name(spec),
                index: operand,
                count: spec.operands().len(),
            }
            .into());
        };
        let layout = match (&v.layout, v.contig) {
            (None, None) => src.layout().clone(),
            _ if !v.level.has_layout() => Layout::empty(),
            (None, Some(c)) => LayoutDecl::Physical(src.layout().dims().to_vec()).build(src.shape(), Some(c))?,
            (Some(decl), c) => decl.build(src.shape(), c)?,
        };
        Ok(MoveDest { level: v.level, layout, vector_size: v.vector_size, dtype: v.dtype.unwrap_or(src.dtype()) })
    }
}

impl PartialImpl {
    /// Resolves `rewrite` against the default Spec and applies it there.
    pub fn apply_plain(self, rewrite: &Rewrite<Plain>) -> Result<Self, ScheduleError> {
        let action: Action = rewrite.map(&mut Elaborate { spec: self.default_spec()?, operand: None })?;
        self.apply(&action)
    }
}

/// One method per rewrite.
macro_rules! define_methods {
    ($(
        $(#[$doc:meta])*
        $variant:ident $name:literal $method:ident => $apply:path {
            $( $(#[$field_doc:meta])* $field:ident : $kind:ident $what:literal ),* $(,)?
        }
    )*) => {
        impl PartialImpl {
            $(
                #[doc = concat!("Applies `", $name, "` at the default Spec:")]
                #[doc = ""]
                $(#[$doc])*
                pub fn $method(self, $($field: <Plain as Form>::$kind),*) -> Result<Self, ScheduleError> {
                    self.apply_plain(&Rewrite::$variant { $($field),* })
                }
            )*
        }
    };
}

crate::rewrite::table::rewrite_table!(define_methods);
