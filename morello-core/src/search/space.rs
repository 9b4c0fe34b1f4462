//! Search spaces: which of the rewrites [`super::actions`] enumerates synthesis tries.
//!
//! [`SearchSpace::Full`] is the paper's space: every rewrite [`super::actions`] enumerates.
//! A [`super::Synthesizer`] searches it unless told otherwise, and finds optima.
//! [`SearchSpace::Fast`] (the [`Default`], which build scripts and `morello-db` search) is
//! described below. [`SearchSpace::FixedOutputLayouts`] leaves out one family of rewrites: moving an
//! operand the Spec *writes* from global memory to a new buffer in global memory (a relayout of
//! the output, computed into a repacked copy and copied back). Inputs are still repacked in
//! global memory, and outputs still move to L1 and registers in every layout.
//!
//! Why this family. In global memory each operand may take any of the layouts the moves
//! enumerate, so a Matmul's sub-Specs there come in a product of three layout choices that
//! lower bounds (which do not depend on layout) cannot tell apart; every triple is refuted by
//! searching it. Output relayouts are one factor of that product, and they rarely pay: an
//! output is written once per reduction step, so repacking it saves little.
//!
//! On AVX-512 f32 Matmuls 1×N×N×N the narrowed space holds the full space's optimum and is
//! searched several times faster at N=2048. The search within it is exact: it finds the
//! optimum of the narrowed space (checked against [`super::exhaustive`] in the tests), which
//! is never below the full space's optimum.
//!
//! **The fast space.** Lower bounds do not depend on layout, so every layout the moves offer
//! multiplies the Specs a search must refute. [`SearchSpace::Fast`] keeps the relayouts that
//! kernels can use and leaves out seven families that only multiply:
//!
//! 1. relayouts of outputs: an output moves into L1 only by a cache fill (in its own layout),
//!    never into a copy in global memory (as in [`SearchSpace::FixedOutputLayouts`]);
//! 2. strips narrower than the widest vector: an input is packed into strips of the widest
//!    vector register (and the panels and bf16 pairs [`super::actions`] offers), since every
//!    kernel that reads a strip reads it a vector at a time;
//! 3. reorderings beyond a transpose: a relayout (into memory or vector registers) keeps the
//!    order of the source's dimensions except that it may swap the innermost two, so a batch,
//!    a convolution's channels or image rows never move inward;
//! 4. transposed copies into L1 of rows that already hold a vector: only edge tiles (rows
//!    shorter than the widest vector) are transposed into L1, where the kernels then run along
//!    the longer dimension. Copies into global memory may still transpose;
//! 5. small tiles of Matmuls wholly in global memory: such a Matmul is not tiled along its
//!    rows, reduction or columns below the largest power of two `t` whose `t×t×t` Matmul holds
//!    all three operands in L1 (64 for f32 on AVX-512, 32 on AVX2), except rows to a register
//!    block's count; a smaller tile is reached by moving an operand into L1 first and tiling
//!    there (its measured effect is in the CHANGELOG);
//! 6. windows of Convs cut in pieces, and long runs of pixels out of global memory: a Conv's
//!    filter rows and columns are tiled only to 1, and once an operand has left global memory,
//!    its output rows and columns only to runs of at most 8 (`fast::MAX_PIXEL_TILE`). Its
//!    multiply-adds are done one output pixel at a time (`spatial_split`); a run of a few
//!    pixels reads the image columns their windows share once, and blocks that fit L1 are
//!    chosen while the operands are still in global memory;
//! 7. copies of a Conv's inputs within global memory: the image and the filters leave global
//!    memory only by moves into L1, where they are packed for the kernels if at all. Every
//!    tile of a Conv in global memory offered such copies, which multiplied its Specs without
//!    lowering the cost of any Conv measured (CHANGELOG).
//!
//! Below rule 6, what remains of a Conv with an operand out of global memory is small, and the
//! search solves such a Conv outright ([`SearchSpace::solves_outright`]) instead of proving it
//! over budget again for each parent that asks: otherwise the same Specs were refuted 60 to 190
//! times each (`morello-db synthesize --profile`).
//!
//! The search within it is exact too (checked against [`super::exhaustive`] over the same
//! space in the tests). Its gap to the full space's optimum is measured by `morello-db bench`
//! on the synthesis suite ([`crate::suite`]); the README gives the table.
//!
//! Results found in a narrowed space are not optima of the full one, so they must not be mixed
//! with exact ones: build scripts keep them in a database file of their own (see
//! `morello-build`).

mod fast;

use super::actions;
use crate::level::Level;
use crate::rewrite::{Action, MoveDest};
use crate::spec::Spec;
use crate::target::Target;
use std::fmt;
use std::str::FromStr;

/// Which rewrites synthesis considers.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, Debug)]
pub enum SearchSpace {
    /// Every rewrite of the paper's search space: the search finds optima.
    Full,
    /// No relayouts of outputs within global memory: an output held there is written in
    /// place, never through a repacked copy in global memory.
    FixedOutputLayouts,
    /// The space build scripts search by default: [`SearchSpace::FixedOutputLayouts`], and
    /// further, an output moves into L1 only by a cache fill (in its own layout); inputs are
    /// packed into strips of the widest vector only (or into the panels and bf16 pairs
    /// [`super::actions`] also offers); and a relayout (into L1, global memory or vector
    /// registers) keeps the order of the source's dimensions but may swap the innermost two; a
    /// Matmul wholly in global memory is not tiled below what fits in L1; and a Conv's window is
    /// tiled only to single rows and columns, its pixels in L1 to short runs. See the module's
    /// documentation.
    #[default]
    Fast,
}

impl SearchSpace {
    /// Every search space.
    pub const ALL: [SearchSpace; 3] = [SearchSpace::Full, SearchSpace::FixedOutputLayouts, SearchSpace::Fast];

    /// The name used in environment variables, command-line options and file names.
    pub fn name(self) -> &'static str {
        match self {
            SearchSpace::Full => "full",
            SearchSpace::FixedOutputLayouts => "fixed-output-layouts",
            SearchSpace::Fast => "fast",
        }
    }

    /// Whether this is [`SearchSpace::Full`].
    pub fn is_full(self) -> bool {
        self == SearchSpace::Full
    }

    /// The rewrites of this space for `spec`: those of [`actions`] that it [allows](Self::allows),
    /// in the same order.
    pub fn actions(self, spec: &Spec, target: &Target) -> Vec<Action> {
        let mut all = actions(spec, target);
        if !self.is_full() {
            all.retain(|action| self.allows(spec, action, target));
        }
        all
    }

    /// Whether the search solves `spec` outright, whatever budget its parent gives, rather than
    /// proving it over budget: in [`SearchSpace::Fast`], a Conv with an operand out of global
    /// memory (its window and pixels are then tiled little, so what lies below it is small).
    /// Which Specs are solved outright never changes a result, only the work.
    pub fn solves_outright(self, spec: &Spec) -> bool {
        self == SearchSpace::Fast && fast::solves_outright(spec)
    }

    /// Whether the search considers `action` for `spec` on `target`.
    pub fn allows(self, spec: &Spec, action: &Action, target: &Target) -> bool {
        if let (SearchSpace::Fast, Action::Tile { tile, .. }) = (self, action) {
            return fast::allows_tile(spec, tile, target);
        }
        let Action::Move { operand, dest: MoveDest { level, layout, dtype, .. } } = action else { return true };
        match (self, level) {
            (SearchSpace::Full, _) | (SearchSpace::FixedOutputLayouts, Level::RF | Level::VRF | Level::L1) => true,
            (SearchSpace::FixedOutputLayouts, Level::GL) => !spec.logical().direction(*operand).writes(),
            (SearchSpace::Fast, _) => fast::allows_move(spec, *operand, *level, layout, *dtype, target),
        }
    }
}

impl fmt::Display for SearchSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A search space name that is not one of [`SearchSpace::ALL`].
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
#[error("`{text}` is not a search space; expected one of: full, fixed-output-layouts, fast")]
pub struct ParseSearchSpaceError {
    text: String,
}

impl FromStr for SearchSpace {
    type Err = ParseSearchSpaceError;

    /// Parses a [`SearchSpace::name`], ignoring surrounding whitespace.
    fn from_str(text: &str) -> Result<SearchSpace, ParseSearchSpaceError> {
        SearchSpace::ALL
            .into_iter()
            .find(|space| space.name() == text.trim())
            .ok_or_else(|| ParseSearchSpaceError { text: text.to_owned() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::actions;
    use crate::spec::Spec;
    use crate::target::X86_AVX512;

    #[test]
    fn names_parse_back_and_others_are_rejected() {
        for space in SearchSpace::ALL {
            assert_eq!(space.name().parse(), Ok(space));
            assert_eq!(format!(" {space} ").parse(), Ok(space));
        }
        for bad in ["", "Full", "fixed", "fixed-output-layouts,full"] {
            assert!(bad.parse::<SearchSpace>().is_err(), "{bad:?}");
        }
        let message = "quick".parse::<SearchSpace>().unwrap_err().to_string();
        assert!(message.contains("`quick`") && message.contains("fixed-output-layouts"), "{message}");
    }

    #[test]
    fn only_global_memory_moves_of_written_operands_are_left_out() {
        // Not held in L1 (`crate::residency`), so it has every rewrite.
        let spec: Spec = "Matmul(1x128x128x128, (f32, GL), (f32, GL), (f32, GL), serial)".parse().unwrap();
        let all = actions(&spec, &X86_AVX512);
        let kept: Vec<&Action> =
            all.iter().filter(|a| SearchSpace::FixedOutputLayouts.allows(&spec, a, &X86_AVX512)).collect();
        let left_out: Vec<&Action> =
            all.iter().filter(|a| !SearchSpace::FixedOutputLayouts.allows(&spec, a, &X86_AVX512)).collect();
        assert!(!left_out.is_empty());
        for action in &left_out {
            assert!(
                matches!(action, Action::Move { operand: 2, dest: MoveDest { level: Level::GL, .. } }),
                "{action:?}"
            );
        }
        let moved_in_gl = |operand: usize| {
            kept.iter().any(
                |a| matches!(a, Action::Move { operand: o, dest: MoveDest { level: Level::GL, .. } } if *o == operand),
            )
        };
        assert!(moved_in_gl(0) && moved_in_gl(1) && !moved_in_gl(2));
        assert!(all.iter().all(|a| SearchSpace::Full.allows(&spec, a, &X86_AVX512)));
    }
}
