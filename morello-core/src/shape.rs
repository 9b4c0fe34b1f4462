//! Tensor and Spec shapes.

use smallvec::SmallVec;
use std::fmt;

/// A shape: dimension sizes, each at least 1. Stored inline for the ranks Specs use.
pub type Shape = SmallVec<[u32; 5]>;

/// The number of elements of a shape.
pub fn volume(shape: &[u32]) -> u64 {
    shape.iter().map(|&d| u64::from(d)).product()
}

/// Formats a shape as `1×4×16` (the paper's notation).
pub struct DisplayShape<'a>(pub &'a [u32]);

impl fmt::Display for DisplayShape<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("×")?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

/// Row-major strides of a shape (in elements).
pub fn row_major_strides(shape: &[u32]) -> SmallVec<[u64; 5]> {
    let mut strides: SmallVec<[u64; 5]> = smallvec::smallvec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * u64::from(shape[i + 1]);
    }
    strides
}

/// Iterates over every coordinate of a shape in row-major order.
pub fn coordinates(shape: &[u32]) -> impl Iterator<Item = Shape> + '_ {
    let total = volume(shape);
    let strides = row_major_strides(shape);
    (0..total).map(move |flat| shape.iter().zip(&strides).map(|(&d, &s)| ((flat / s) % u64::from(d)) as u32).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_are_row_major() {
        let all: Vec<Shape> = coordinates(&[2, 3]).collect();
        assert_eq!(all.len(), 6);
        assert_eq!(&all[1][..], &[0, 1]);
        assert_eq!(&all[3][..], &[1, 0]);
        assert_eq!(DisplayShape(&[1, 4, 16]).to_string(), "1×4×16");
    }
}
