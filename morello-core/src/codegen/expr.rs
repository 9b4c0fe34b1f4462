//! Symbolic index expressions for generated C.
//!
//! An [`Expr`] is an affine form `c + Σ a·atom` over loop variables and floor-division/modulo
//! atoms. Every loop variable carries its range, which lets divisions and remainders simplify
//! away whenever the value provably stays inside one strip; what remains renders as C integer
//! arithmetic on non-negative values.

use crate::index::IndexArith;
use std::collections::BTreeMap;
use std::fmt;

/// A non-affine or variable part of an expression.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Atom {
    /// Loop variable `id`, ranging over `0..=max`.
    Var { id: u32, max: u64 },
    /// `floor(e / d)`.
    Div(Box<Expr>, u64),
    /// `e mod d`.
    Rem(Box<Expr>, u64),
}

/// An affine index expression. See the module documentation.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub struct Expr {
    constant: u64,
    terms: BTreeMap<Atom, u64>,
}

impl Expr {
    /// Loop variable `id` ranging over `0..=max`.
    pub fn var(id: u32, max: u64) -> Expr {
        if max == 0 {
            return Expr::constant(0);
        }
        let mut terms = BTreeMap::new();
        terms.insert(Atom::Var { id, max }, 1);
        Expr { constant: 0, terms }
    }

    /// The value, if it does not depend on any loop variable.
    pub fn as_const(&self) -> Option<u64> {
        self.terms.is_empty().then_some(self.constant)
    }

    /// The loop variables the expression depends on.
    pub fn variables(&self) -> std::collections::BTreeSet<u32> {
        let mut out = std::collections::BTreeSet::new();
        for atom in self.terms.keys() {
            match atom {
                Atom::Var { id, .. } => {
                    out.insert(*id);
                }
                Atom::Div(e, _) | Atom::Rem(e, _) => out.extend(e.variables()),
            }
        }
        out
    }

    /// The loop variables with their coefficients and trip counts, as `(id, coefficient,
    /// trips)`, if the expression is affine in them (no divisions or remainders).
    pub fn affine_terms(&self) -> Option<Vec<(u32, u64, u64)>> {
        self.terms
            .iter()
            .map(|(atom, &coef)| match atom {
                Atom::Var { id, max } => Some((*id, coef, max + 1)),
                Atom::Div(..) | Atom::Rem(..) => None,
            })
            .collect()
    }

    /// Smallest and largest value.
    fn bounds(&self) -> (u64, u64) {
        let mut hi = self.constant;
        for (atom, &coef) in &self.terms {
            hi += coef * atom.max();
        }
        (self.constant, hi)
    }

    /// Splits into (terms whose coefficient `d` divides, rest).
    fn split(self, d: u64) -> (Expr, Expr) {
        let mut divisible = Expr::constant(self.constant / d * d);
        let mut rest = Expr::constant(self.constant % d);
        for (atom, coef) in self.terms {
            let target = if coef % d == 0 { &mut divisible } else { &mut rest };
            target.terms.insert(atom, coef);
        }
        (divisible, rest)
    }

    fn single(atom: Atom) -> Expr {
        let mut terms = BTreeMap::new();
        terms.insert(atom, 1);
        Expr { constant: 0, terms }
    }
}

impl Atom {
    fn max(&self) -> u64 {
        match self {
            Atom::Var { max, .. } => *max,
            Atom::Div(e, d) => e.bounds().1 / d,
            Atom::Rem(e, d) => e.bounds().1.min(d - 1),
        }
    }
}

impl IndexArith for Expr {
    fn constant(value: u64) -> Self {
        Expr { constant: value, terms: BTreeMap::new() }
    }

    fn add(mut self, other: Self) -> Self {
        self.constant += other.constant;
        for (atom, coef) in other.terms {
            *self.terms.entry(atom).or_insert(0) += coef;
        }
        self
    }

    fn mul_const(mut self, factor: u64) -> Self {
        if factor == 0 {
            return Expr::constant(0);
        }
        self.constant *= factor;
        for coef in self.terms.values_mut() {
            *coef *= factor;
        }
        self
    }

    fn div_const(self, d: u64) -> Self {
        if d == 1 {
            return self;
        }
        let (divisible, rest) = self.split(d);
        let mut quotient = Expr::constant(divisible.constant / d);
        for (atom, coef) in divisible.terms {
            quotient.terms.insert(atom, coef / d);
        }
        let (_, hi) = rest.bounds();
        if hi < d { quotient } else { quotient.add(Expr::single(Atom::Div(Box::new(rest), d))) }
    }

    fn rem_const(self, d: u64) -> Self {
        if d == 1 {
            return Expr::constant(0);
        }
        let (_, rest) = self.split(d);
        let (_, hi) = rest.bounds();
        if hi < d { rest } else { Expr::single(Atom::Rem(Box::new(rest), d)) }
    }
}

impl fmt::Display for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Atom::Var { id, .. } => write!(f, "i{id}"),
            Atom::Div(e, d) => write!(f, "({e}) / {d}"),
            Atom::Rem(e, d) => write!(f, "({e}) % {d}"),
        }
    }
}

impl fmt::Display for Expr {
    /// Renders as C: `8 * i0 + (i1) / 2 + 3`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (atom, &coef) in &self.terms {
            if !first {
                f.write_str(" + ")?;
            }
            first = false;
            let compound = !matches!(atom, Atom::Var { .. });
            match (coef, compound) {
                (1, false) => write!(f, "{atom}")?,
                (1, true) => write!(f, "({atom})")?,
                (c, false) => write!(f, "{c} * {atom}")?,
                (c, true) => write!(f, "{c} * ({atom})")?,
            }
        }
        if first {
            write!(f, "{}", self.constant)
        } else if self.constant != 0 {
            write!(f, " + {}", self.constant)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn divisions_within_a_strip_simplify() {
        // x = 16*i + 3 with strip 16: x / 16 = i, x % 16 = 3.
        let x = Expr::var(0, 7).mul_const(16).add(Expr::constant(3));
        assert_eq!(x.clone().div_const(16).to_string(), "i0");
        assert_eq!(x.rem_const(16).to_string(), "3");
    }

    #[test]
    fn divisions_across_strips_remain() {
        let x = Expr::var(0, 7).mul_const(8);
        assert_eq!(x.clone().div_const(16).to_string(), "((8 * i0) / 16)");
        assert_eq!(x.rem_const(16).to_string(), "((8 * i0) % 16)");
    }

    #[test]
    fn constants_fold() {
        let x = Expr::constant(37);
        assert_eq!(x.clone().div_const(16).as_const(), Some(2));
        assert_eq!(x.rem_const(16).as_const(), Some(5));
    }
}
