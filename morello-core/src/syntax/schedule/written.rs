//! Rewrites as a schedule writes them: every argument with its tokens, parsed one
//! [kind](crate::rewrite::form::kind) at a time, and errors located at the argument they are
//! about. The arms come from the [rewrite table](crate::rewrite::table).

use super::{
    Destination, ensure_empty, parse_destination, parse_grouped_destination, parse_index, parse_kernel, parse_sizes,
    parse_u32,
};
use crate::kernels::KernelKind;
use crate::rewrite::form::{Form, Mapper, Notation, write_sizes};
use crate::rewrite::{Rewrite, RewriteError, TempDest};
use crate::schedule::{MoveTo, Plain, ScheduleError};
use crate::shape::Shape;
use proc_macro2::{Span, TokenStream};
use std::fmt;
use syn::Token;
use syn::parse::{ParseStream, Parser};

/// Arguments with the tokens they were written with.
#[derive(Clone, Copy, Debug)]
pub enum Written {}

impl Form for Written {
    type Count = (u32, Span);
    type Operand = (usize, Span);
    type Stage = (usize, Span);
    type Tile = Vec<(u32, Span)>;
    type Parallel = Option<Span>;
    type Kernel = (KernelKind, Span);
    type Temp = Destination;
    type GroupedTemp = Destination;
    type MoveDest = Destination;
}

impl<T: Notation> Notation for (T, Span) {
    fn notate(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.notate(f)
    }
}

impl Notation for Vec<(u32, Span)> {
    fn notate(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_sizes(f, self.iter().map(|s| s.0))
    }
}

impl Notation for Option<Span> {
    fn notate(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("parallel")
    }
    fn shown(&self) -> bool {
        self.is_some()
    }
}

impl Notation for Destination {
    fn notate(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Where in the schedule's text an error belongs.
pub(super) enum At {
    /// At one token.
    Span(Span),
    /// Across tokens.
    Tokens(TokenStream),
}

/// A step's arguments, read in order: each after the first follows a `,`.
struct Arguments<'a> {
    input: ParseStream<'a>,
    read: usize,
}

impl Arguments<'_> {
    /// Expects the `,` before an argument described by `what`, unless it is the first.
    fn separator(&mut self, what: &str) -> syn::Result<ParseStream<'_>> {
        if self.read > 0 {
            self.input
                .parse::<Token![,]>()
                .map_err(|e| syn::Error::new(e.span(), format!("expected `,` and {what}")))?;
        }
        self.read += 1;
        Ok(self.input)
    }

    /// An optional `, parallel` (after the tile sizes).
    fn parallel(&mut self) -> syn::Result<Option<Span>> {
        if !self.input.peek(Token![,]) {
            return Ok(None);
        }
        self.input.parse::<Token![,]>()?;
        let word: syn::Ident = self.input.parse()?;
        if word != "parallel" {
            return Err(syn::Error::new(word.span(), "expected `parallel` after the tile sizes"));
        }
        Ok(Some(word.span()))
    }
}

/// Parses one argument of kind `$kind`.
macro_rules! parse_argument {
    (Count, $a:ident, $what:literal) => {
        parse_u32($a.separator($what)?, $what)
    };
    (Operand, $a:ident, $what:literal) => {
        parse_index($a.separator($what)?, $what)
    };
    (Stage, $a:ident, $what:literal) => {
        parse_index($a.separator($what)?, $what)
    };
    (Tile, $a:ident, $what:literal) => {
        parse_sizes($a.separator($what)?)
    };
    (Parallel, $a:ident, $what:literal) => {
        $a.parallel()
    };
    (Kernel, $a:ident, $what:literal) => {
        parse_kernel($a.separator($what)?)
    };
    (Temp, $a:ident, $what:literal) => {
        parse_destination($a.separator($what)?, false)
    };
    (GroupedTemp, $a:ident, $what:literal) => {
        parse_grouped_destination($a.separator($what)?)
    };
    (MoveDest, $a:ident, $what:literal) => {
        parse_destination($a.separator($what)?, true)
    };
}

/// How sure an argument is that an error is about it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Claim {
    /// The error names this argument.
    Exact,
    /// No argument claims it exactly; this one may take it.
    Fallback,
}

/// Where an error about a temporary's destination belongs.
fn temp_at(dest: &Destination, e: &ScheduleError, field: &str, claim: Claim) -> Option<At> {
    let ScheduleError::Rewrite(r) = e else { return None };
    match (r, claim) {
        (RewriteError::TempInvalid { what, .. } | RewriteError::TempLayout { what, .. }, Claim::Exact)
            if !what.starts_with(field) =>
        {
            None
        }
        (RewriteError::TempLayout { .. }, _) => {
            Some(At::Tokens(dest.layout.as_ref().map_or_else(|| dest.tokens.clone(), |l| l.1.clone())))
        }
        (RewriteError::TempInvalid { .. }, _) | (RewriteError::OutOfMemory { .. }, Claim::Fallback) => {
            Some(At::Tokens(dest.tokens.clone()))
        }
        _ => None,
    }
}

/// Where an error about a move's destination belongs.
fn move_at(dest: &Destination, e: &ScheduleError, claim: Claim) -> Option<At> {
    let level = At::Span(dest.level.1);
    Some(match (e, claim) {
        (
            ScheduleError::Rewrite(
                RewriteError::NotUpcast { .. } | RewriteError::UpcastWritten { .. } | RewriteError::Dtypes(_),
            ),
            Claim::Exact,
        ) => dest.dtype.map_or(level, |d| At::Span(d.1)),
        (ScheduleError::Rewrite(RewriteError::MoveInvalid { .. }), Claim::Exact) => {
            match (&dest.vector_size, &dest.layout) {
                (Some(v), _) => At::Span(v.1),
                (None, Some(l)) => At::Tokens(l.1.clone()),
                _ => level,
            }
        }
        (ScheduleError::Layout(_), Claim::Exact) => dest.layout.as_ref().map_or(level, |l| At::Tokens(l.1.clone())),
        (ScheduleError::Rewrite(_), Claim::Fallback) => level,
        _ => return None,
    })
}

/// Where an error about tile sizes belongs.
fn tile_at(sizes: &[(u32, Span)], e: &ScheduleError, claim: Claim) -> Option<At> {
    let ScheduleError::Rewrite(r) = e else { return None };
    match (r, claim) {
        (
            RewriteError::TileLarger { dim, .. }
            | RewriteError::TileZero { dim, .. }
            | RewriteError::ReductionNeedsAccum { dim, .. }
            | RewriteError::ParallelReduction { dim, .. },
            Claim::Exact,
        ) => sizes.get(*dim).map(|s| At::Span(s.1)),
        (_, Claim::Fallback) => {
            let mut all = TokenStream::new();
            for (_, span) in sizes {
                all.extend(quote::quote_spanned!(*span=> x));
            }
            Some(At::Tokens(all))
        }
        _ => None,
    }
}

/// Where an error about an argument of kind `$kind` belongs, if it is about that argument.
macro_rules! locate_argument {
    (Count, $v:ident, $field:ident, $e:ident, $claim:expr) => {
        match ($e, $claim) {
            (ScheduleError::Rewrite(RewriteError::Shape { .. } | RewriteError::PeelSize { .. }), Claim::Exact) => {
                Some(At::Span($v.1))
            }
            _ => None,
        }
    };
    (Operand, $v:ident, $field:ident, $e:ident, $claim:expr) => {
        match ($e, $claim) {
            (ScheduleError::Rewrite(RewriteError::OperandOutOfRange { .. }), Claim::Exact) => Some(At::Span($v.1)),
            _ => None,
        }
    };
    (Stage, $v:ident, $field:ident, $e:ident, $claim:expr) => {
        match ($e, $claim) {
            (ScheduleError::Rewrite(RewriteError::StageOutOfRange { .. }), Claim::Exact) => Some(At::Span($v.1)),
            _ => None,
        }
    };
    (Tile, $v:ident, $field:ident, $e:ident, $claim:expr) => {
        tile_at($v, $e, $claim)
    };
    (Parallel, $v:ident, $field:ident, $e:ident, $claim:expr) => {
        match ($e, $claim, $v) {
            (
                ScheduleError::Rewrite(RewriteError::SerialOnly { .. } | RewriteError::ParallelInRegisters { .. }),
                Claim::Exact,
                Some(span),
            ) => Some(At::Span(*span)),
            _ => None,
        }
    };
    (Kernel, $v:ident, $field:ident, $e:ident, $claim:expr) => {
        match ($e, $claim) {
            (ScheduleError::Rewrite(_), Claim::Fallback) => Some(At::Span($v.1)),
            _ => None,
        }
    };
    (Temp, $v:ident, $field:ident, $e:ident, $claim:expr) => {
        temp_at($v, $e, stringify!($field), $claim)
    };
    (GroupedTemp, $v:ident, $field:ident, $e:ident, $claim:expr) => {
        temp_at($v, $e, stringify!($field), $claim)
    };
    (MoveDest, $v:ident, $field:ident, $e:ident, $claim:expr) => {
        move_at($v, $e, $claim)
    };
}

/// The parser and error locations of every rewrite.
macro_rules! define_written {
    ($(
        $(#[$doc:meta])*
        $variant:ident $name:literal $method:ident => $apply:path {
            $( $(#[$field_doc:meta])* $field:ident : $kind:ident $what:literal ),* $(,)?
        }
    )*) => {
        /// Parses the arguments `args` of the rewrite called `name`, or `None` if no rewrite
        /// has that name.
        pub(super) fn parse_rewrite(name: &syn::Ident, args: TokenStream) -> Option<syn::Result<Rewrite<Written>>> {
            Some(match name.to_string().as_str() {
                $( $name => {
                    let fields: &[&str] = &[$(stringify!($field)),*];
                    if fields.is_empty() && !args.is_empty() {
                        Err(syn::Error::new_spanned(&args, format!("`{name}` takes no arguments")))
                    } else {
                        (|input: ParseStream| {
                            #[allow(unused_mut, unused_variables, reason = "rewrites without arguments")]
                            let mut arguments = Arguments { input, read: 0 };
                            $( let $field = parse_argument!($kind, arguments, $what)?; )*
                            ensure_empty(input)?;
                            Ok(Rewrite::$variant { $($field),* })
                        })
                        .parse2(args)
                    }
                } )*
                _ => return None,
            })
        }

        impl Rewrite<Written> {
            /// Where `e`, an error applying this rewrite, belongs: at the argument it is
            /// about, or `None` for the step's name.
            pub(super) fn locate(&self, e: &ScheduleError) -> Option<At> {
                match self {
                    $( Rewrite::$variant { $($field),* } => {
                        None
                            $( .or_else(|| locate_argument!($kind, $field, $field, e, Claim::Exact)) )*
                            $( .or_else(|| locate_argument!($kind, $field, $field, e, Claim::Fallback)) )*
                    } )*
                }
            }
        }
    };
}

crate::rewrite::table::rewrite_table!(define_written);

impl Rewrite<Written> {
    /// The rewrite without its tokens.
    pub(super) fn plain(&self) -> Rewrite<Plain> {
        match self.map(&mut Strip) {
            Ok(plain) => plain,
            Err(never) => match never {},
        }
    }
}

/// Written arguments without their tokens.
struct Strip;

impl Mapper for Strip {
    type From = Written;
    type To = Plain;
    type Error = std::convert::Infallible;
    fn count(&mut self, v: &(u32, Span)) -> Result<u32, Self::Error> {
        Ok(v.0)
    }
    fn operand(&mut self, v: &(usize, Span)) -> Result<usize, Self::Error> {
        Ok(v.0)
    }
    fn stage(&mut self, v: &(usize, Span)) -> Result<usize, Self::Error> {
        Ok(v.0)
    }
    fn tile(&mut self, v: &Vec<(u32, Span)>) -> Result<Shape, Self::Error> {
        Ok(v.iter().map(|s| s.0).collect())
    }
    fn parallel(&mut self, v: &Option<Span>) -> Result<bool, Self::Error> {
        Ok(v.is_some())
    }
    fn kernel(&mut self, v: &(KernelKind, Span)) -> Result<KernelKind, Self::Error> {
        Ok(v.0)
    }
    fn temp(&mut self, v: &Destination) -> Result<TempDest, Self::Error> {
        Ok(v.temp())
    }
    fn grouped_temp(&mut self, v: &Destination) -> Result<TempDest, Self::Error> {
        Ok(v.temp())
    }
    fn move_dest(&mut self, v: &Destination) -> Result<MoveTo, Self::Error> {
        Ok(MoveTo {
            level: v.level.0,
            layout: v.layout.as_ref().map(|l| l.0.clone()),
            vector_size: v.vector_size.map(|v| v.0),
            dtype: v.dtype.map(|d| d.0),
            contig: v.contig.map(|c| c.0),
        })
    }
}
