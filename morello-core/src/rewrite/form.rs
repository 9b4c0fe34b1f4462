//! The forms a rewrite takes: the same variants with arguments of different types.
//!
//! A rewrite is written in a schedule (with the tokens of each argument, for errors), called
//! through a [`PartialImpl`](crate::schedule::PartialImpl) method (with arguments still to be
//! resolved against the Spec), applied by the search (fully resolved: an
//! [`Action`](super::Action)) and stored in the database (in an encoding that reads the same
//! at every Spec size). Each form is a [`Form`]: one type for each [kind] of argument.
//! The variants are declared once, in the [table](super::table); a [`Mapper`] turns one form
//! into another one argument at a time, and [`Notation`] prints any form as schedule text.

use std::fmt;

/// The kinds of argument a rewrite takes (type-level names, never values).
pub mod kind {
    /// A positive count: values per chunk, bands, a peel size.
    pub enum Count {}
    /// An operand of the Spec.
    pub enum Operand {}
    /// A stage of a Compose.
    pub enum Stage {}
    /// Tile sizes, one per Spec dimension.
    pub enum Tile {}
    /// Whether a loop is parallel.
    pub enum Parallel {}
    /// A microkernel.
    pub enum Kernel {}
    /// Where a temporary lives.
    pub enum Temp {}
    /// Where a temporary lives, written in parentheses (for rewrites with two temporaries).
    pub enum GroupedTemp {}
    /// Where a move puts its operand.
    pub enum MoveDest {}
}

/// What every kind of argument is in one form of a rewrite.
pub trait Form {
    /// A [`kind::Count`].
    type Count;
    /// A [`kind::Operand`].
    type Operand;
    /// A [`kind::Stage`].
    type Stage;
    /// A [`kind::Tile`].
    type Tile;
    /// A [`kind::Parallel`].
    type Parallel;
    /// A [`kind::Kernel`].
    type Kernel;
    /// A [`kind::Temp`].
    type Temp;
    /// A [`kind::GroupedTemp`].
    type GroupedTemp;
    /// A [`kind::MoveDest`].
    type MoveDest;
}

/// Turns each argument of a rewrite in form [`Mapper::From`] into form [`Mapper::To`], in the
/// order the arguments are declared (so a move's operand is mapped before its destination).
#[expect(missing_docs, reason = "one method per kind of argument, named after it")]
pub trait Mapper {
    /// The form read.
    type From: Form;
    /// The form produced.
    type To: Form;
    /// Why an argument cannot be mapped.
    type Error;
    fn count(&mut self, v: &<Self::From as Form>::Count) -> Result<<Self::To as Form>::Count, Self::Error>;
    fn operand(&mut self, v: &<Self::From as Form>::Operand) -> Result<<Self::To as Form>::Operand, Self::Error>;
    fn stage(&mut self, v: &<Self::From as Form>::Stage) -> Result<<Self::To as Form>::Stage, Self::Error>;
    fn tile(&mut self, v: &<Self::From as Form>::Tile) -> Result<<Self::To as Form>::Tile, Self::Error>;
    fn parallel(&mut self, v: &<Self::From as Form>::Parallel) -> Result<<Self::To as Form>::Parallel, Self::Error>;
    fn kernel(&mut self, v: &<Self::From as Form>::Kernel) -> Result<<Self::To as Form>::Kernel, Self::Error>;
    fn temp(&mut self, v: &<Self::From as Form>::Temp) -> Result<<Self::To as Form>::Temp, Self::Error>;
    fn grouped_temp(
        &mut self,
        v: &<Self::From as Form>::GroupedTemp,
    ) -> Result<<Self::To as Form>::GroupedTemp, Self::Error>;
    fn move_dest(&mut self, v: &<Self::From as Form>::MoveDest) -> Result<<Self::To as Form>::MoveDest, Self::Error>;
}

/// Calls the [`Mapper`] method for an argument of kind `$kind`.
macro_rules! map_argument {
    (Count, $m:ident, $v:expr) => {
        $m.count($v)
    };
    (Operand, $m:ident, $v:expr) => {
        $m.operand($v)
    };
    (Stage, $m:ident, $v:expr) => {
        $m.stage($v)
    };
    (Tile, $m:ident, $v:expr) => {
        $m.tile($v)
    };
    (Parallel, $m:ident, $v:expr) => {
        $m.parallel($v)
    };
    (Kernel, $m:ident, $v:expr) => {
        $m.kernel($v)
    };
    (Temp, $m:ident, $v:expr) => {
        $m.temp($v)
    };
    (GroupedTemp, $m:ident, $v:expr) => {
        $m.grouped_temp($v)
    };
    (MoveDest, $m:ident, $v:expr) => {
        $m.move_dest($v)
    };
}
pub(super) use map_argument;

/// An argument as schedule text.
pub trait Notation {
    /// Writes the argument.
    fn notate(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
    /// Whether the argument is written at all (a serial loop's `parallel` is not).
    fn shown(&self) -> bool {
        true
    }
}

/// Whether arguments of a kind are written in parentheses.
pub trait Grouping {
    /// Whether they are.
    const GROUPED: bool;
}

macro_rules! ungrouped {
    ($($kind:ident)*) => {$(
        impl Grouping for kind::$kind {
            const GROUPED: bool = false;
        }
    )*};
}
ungrouped!(Count Operand Stage Tile Parallel Kernel Temp MoveDest);

impl Grouping for kind::GroupedTemp {
    const GROUPED: bool = true;
}

/// Writes `name(arg, arg, ...)`, leaving out arguments that are not shown, and the parentheses
/// when there are no arguments.
pub(super) fn write_call(f: &mut fmt::Formatter<'_>, name: &str, args: &[(&dyn Notation, bool)]) -> fmt::Result {
    f.write_str(name)?;
    if args.is_empty() {
        return Ok(());
    }
    f.write_str("(")?;
    for (i, (arg, grouped)) in args.iter().filter(|(a, _)| a.shown()).enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        if *grouped {
            f.write_str("(")?;
            arg.notate(f)?;
            f.write_str(")")?;
        } else {
            arg.notate(f)?;
        }
    }
    f.write_str(")")
}

/// Writes tile sizes as `[1, 2, 4]`.
pub fn write_sizes(f: &mut fmt::Formatter<'_>, sizes: impl Iterator<Item = u32>) -> fmt::Result {
    f.write_str("[")?;
    for (i, s) in sizes.enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{s}")?;
    }
    f.write_str("]")
}

/// Numbers and names written as they display.
macro_rules! notation_by_display {
    ($($t:ty)*) => {$(
        impl Notation for $t {
            fn notate(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(self, f)
            }
        }
    )*};
}
notation_by_display!(u32 usize crate::kernels::KernelKind super::TempDest);

impl Notation for bool {
    fn notate(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("parallel")
    }
    fn shown(&self) -> bool {
        *self
    }
}

impl Notation for crate::shape::Shape {
    fn notate(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_sizes(f, self.iter().copied())
    }
}

/// Declares the [`Rewrite`](super::Rewrite) enum, with unit variants for rewrites without
/// arguments (which patterns and expressions may still write as `Variant {}`).
macro_rules! rewrite_enum {
    (@variants [$($done:tt)*]) => {
        /// A rewrite with its arguments in form `F`: [`Action`] when they are resolved.
        #[derive(Clone, PartialEq, Eq, Hash, Debug, serde::Serialize, serde::Deserialize)]
        pub enum Rewrite<F: Form> {
            $($done)*
        }
    };
    (@variants [$($done:tt)*] $(#[$doc:meta])* $variant:ident {} $($rest:tt)*) => {
        form::rewrite_enum! { @variants [$($done)* $(#[$doc])* $variant,] $($rest)* }
    };
    (@variants [$($done:tt)*] $(#[$doc:meta])* $variant:ident { $($fields:tt)+ } $($rest:tt)*) => {
        form::rewrite_enum! { @variants [$($done)* $(#[$doc])* $variant { $($fields)+ },] $($rest)* }
    };
}
pub(super) use rewrite_enum;

/// The defining generator: the [`Rewrite`](super::Rewrite) enum and what every form shares.
macro_rules! define_rewrites {
    ($(
        $(#[$doc:meta])*
        $variant:ident $name:literal $method:ident => $apply:path {
            $( $(#[$field_doc:meta])* $field:ident : $kind:ident $what:literal ),* $(,)?
        }
    )*) => {
        form::rewrite_enum! {
            @variants []
            $( $(#[$doc])* $variant { $( $(#[$field_doc])* $field: F::$kind, )* } )*
        }

        /// The name of every rewrite in schedule syntax.
        pub const REWRITE_NAMES: &[&str] = &[$($name),*];

        impl<F: Form> Rewrite<F> {
            /// The rewrite's name in schedule syntax.
            pub fn name(&self) -> &'static str {
                match self {
                    $( Rewrite::$variant { .. } => $name, )*
                }
            }

            /// The same rewrite in another form, mapping each argument with `mapper`.
            pub fn map<M: Mapper<From = F>>(&self, mapper: &mut M) -> Result<Rewrite<M::To>, M::Error> {
                Ok(match self {
                    $( Rewrite::$variant { $($field),* } => Rewrite::$variant {
                        $( $field: form::map_argument!($kind, mapper, $field)?, )*
                    }, )*
                })
            }
        }

        impl Action {
            /// Applies the rewrite to `spec`, returning the new node whose children are
            /// unscheduled.
            pub fn apply(&self, spec: &Spec, target: &Target) -> Result<ImplNode, RewriteError> {
                match self {
                    $( Rewrite::$variant { $($field),* } => $apply(spec, $($field,)* target), )*
                }
            }
        }

        /// Formats as a step of the schedule language, which parses back to the same rewrite.
        impl<F: Form> fmt::Display for Rewrite<F>
        where
            F::Count: Notation,
            F::Operand: Notation,
            F::Stage: Notation,
            F::Tile: Notation,
            F::Parallel: Notation,
            F::Kernel: Notation,
            F::Temp: Notation,
            F::GroupedTemp: Notation,
            F::MoveDest: Notation,
        {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    $( Rewrite::$variant { $($field),* } => form::write_call(
                        f,
                        $name,
                        &[$( ($field as &dyn Notation, <form::kind::$kind as form::Grouping>::GROUPED) ),*],
                    ), )*
                }
            }
        }
    };
}
pub(super) use define_rewrites;
