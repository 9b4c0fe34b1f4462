//! Buffers that start a chosen number of bytes past a cache-line boundary.
//!
//! Where a buffer starts decides whether a 64-byte vector load splits across two cache lines.
//! The benchmark gives every contender the same placement: on a cache line by default (as a
//! tuned application allocates), or `--offset BYTES` past one, to show how each implementation
//! copes with inputs it did not allocate.

use std::ops::{Deref, DerefMut};

/// The cache-line size the placement is relative to.
pub const LINE_BYTES: usize = 64;

/// A slice of `T` whose first element sits `offset` bytes past a 64-byte boundary.
pub struct Placed<T> {
    storage: Vec<T>,
    start: usize,
    len: usize,
}

impl<T: Copy + Default> Placed<T> {
    /// A copy of `values` placed `offset` bytes past a cache-line boundary. `offset` must be a
    /// multiple of `T`'s size and less than [`LINE_BYTES`].
    pub fn new(values: &[T], offset: usize) -> Self {
        let size = size_of::<T>();
        assert!(
            offset < LINE_BYTES && offset.is_multiple_of(size),
            "offset {offset} is not a placement for {size}-byte elements"
        );
        let slack = LINE_BYTES / size;
        let mut storage = vec![T::default(); values.len() + slack];
        let address = storage.as_ptr() as usize;
        let start = (offset + LINE_BYTES - address % LINE_BYTES) % LINE_BYTES / size;
        storage[start..start + values.len()].copy_from_slice(values);
        Placed { storage, start, len: values.len() }
    }

    /// `len` copies of `value`, placed as [`Placed::new`].
    pub fn filled(value: T, len: usize, offset: usize) -> Self {
        Placed::new(&vec![value; len], offset)
    }

    /// Bytes past a cache-line boundary where the first element sits.
    pub fn offset(&self) -> usize {
        self.as_ptr() as usize % LINE_BYTES
    }
}

impl<T: Copy + Default> Clone for Placed<T> {
    fn clone(&self) -> Self {
        Placed::new(self, self.offset())
    }
}

impl<T> Deref for Placed<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.storage[self.start..self.start + self.len]
    }
}

impl<T> DerefMut for Placed<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.storage[self.start..self.start + self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_the_first_element_at_the_offset_and_keeps_the_values() {
        let values: Vec<f32> = (0..100).map(|i| i as f32).collect();
        for offset in [0, 4, 16, 60] {
            let placed = Placed::new(&values, offset);
            assert_eq!(placed.offset(), offset);
            assert_eq!(&*placed, values.as_slice());
            let copy = placed.clone();
            assert_eq!(copy.offset(), offset);
            assert_eq!(&*copy, values.as_slice());
        }
    }
}
