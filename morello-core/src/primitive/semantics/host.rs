//! Host-side tensors: bytes laid out exactly as a kernel's operand buffer.

use crate::dtype::Dtype;
use crate::layout::Layout;
use crate::shape::{Shape, coordinates, row_major_strides};
use crate::tensor::TensorSpec;

/// One element's value, widened: integers to `i64`, floats to `f64`.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Value {
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Float(f64),
}

impl Value {
    /// The value as `f64`.
    pub fn as_f64(self) -> f64 {
        match self {
            Value::Int(v) => v as f64,
            Value::Float(v) => v,
        }
    }

    /// The value as `i64` (floats truncate).
    pub fn as_i64(self) -> i64 {
        match self {
            Value::Int(v) => v,
            Value::Float(v) => v as i64,
        }
    }

    /// Whether `other` equals this value (integers) or is within `tolerance` of it (floats).
    /// A NaN agrees only with a NaN, and an infinity only with the same infinity, whatever the
    /// tolerance (which an infinite input makes infinite or NaN).
    pub fn agrees_with(&self, other: &Value, tolerance: f64) -> bool {
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => a == b,
            _ => {
                let (a, b) = (self.as_f64(), other.as_f64());
                if a.is_nan() || b.is_nan() {
                    a.is_nan() && b.is_nan()
                } else if a.is_infinite() || b.is_infinite() {
                    a == b
                } else {
                    a == b || (a - b).abs() <= tolerance
                }
            }
        }
    }
}

/// A Rust element type that can fill a [`HostTensor`].
pub trait Element: Copy {
    /// The matching dtype.
    const DTYPE: Dtype;
    /// Writes the element's little-endian bytes.
    fn write(self, out: &mut [u8]);
    /// Reads an element from little-endian bytes.
    fn read(bytes: &[u8]) -> Self;
}

macro_rules! element {
    ($t:ty, $d:expr) => {
        impl Element for $t {
            const DTYPE: Dtype = $d;
            fn write(self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
            fn read(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().expect("element-sized slice"))
            }
        }
    };
}
element!(u8, Dtype::U8);
element!(i8, Dtype::I8);
element!(u16, Dtype::U16);
element!(i16, Dtype::I16);
element!(u32, Dtype::U32);
element!(i32, Dtype::I32);
element!(f32, Dtype::F32);
element!(half::bf16, Dtype::Bf16);

/// A tensor on the host, stored as the bytes of a kernel operand's buffer: in the operand's
/// layout, or row-major for register-level operands (which kernels take in row-major order).
#[derive(Clone, PartialEq, Debug)]
pub struct HostTensor {
    dtype: Dtype,
    shape: Shape,
    layout: Option<Layout>,
    data: Vec<u8>,
}

impl HostTensor {
    /// A zero-filled buffer for operand `t`.
    pub fn zeros(t: &TensorSpec) -> Self {
        let layout = t.level().has_layout().then(|| t.layout().clone());
        let count = layout.as_ref().map_or(t.volume(), |l| l.buffer_volume(t.shape()));
        HostTensor {
            dtype: t.dtype(),
            shape: t.shape().into(),
            layout,
            data: vec![0; (count * u64::from(t.dtype().size_bytes())) as usize],
        }
    }

    /// A zero-filled, dense row-major tensor (such as a Compose intermediate).
    pub fn dense(dtype: Dtype, shape: &[u32]) -> Self {
        let count = crate::shape::volume(shape) as usize;
        HostTensor { dtype, shape: shape.into(), layout: None, data: vec![0; count * dtype.size_bytes() as usize] }
    }

    /// A buffer for `t` filled with deterministic pseudo-random values: floats uniform in
    /// [-1, 1), integers uniform over the dtype's whole range.
    pub fn random(t: &TensorSpec, seed: u64) -> Self {
        let mut out = HostTensor::zeros(t);
        let mut state = seed ^ 0x9e37_79b9_7f4a_7c15;
        let size = t.dtype().size_bytes() as usize;
        for i in 0..out.element_count() {
            let r = splitmix64(&mut state);
            let value = if t.dtype().is_float() {
                Value::Float(((r >> 40) as f64) / f64::from(1u32 << 23) - 1.0)
            } else {
                Value::Int(r as i64)
            };
            encode(t.dtype(), value, &mut out.data[i * size..(i + 1) * size]);
        }
        out
    }

    /// A buffer for `t` holding `values`, given in buffer order.
    pub fn from_elements<T: Element>(t: &TensorSpec, values: &[T]) -> Self {
        assert_eq!(T::DTYPE, t.dtype(), "element type does not match the operand");
        let mut out = HostTensor::zeros(t);
        assert_eq!(values.len(), out.element_count(), "wrong number of elements");
        let size = t.dtype().size_bytes() as usize;
        for (i, v) in values.iter().enumerate() {
            v.write(&mut out.data[i * size..(i + 1) * size]);
        }
        out
    }

    /// The elements in buffer order.
    pub fn to_elements<T: Element>(&self) -> Vec<T> {
        assert_eq!(T::DTYPE, self.dtype, "element type does not match the tensor");
        self.data.chunks_exact(self.dtype.size_bytes() as usize).map(T::read).collect()
    }

    /// Sets every element to `value`.
    pub fn fill(&mut self, value: Value) {
        let size = self.dtype.size_bytes() as usize;
        for chunk in self.data.chunks_exact_mut(size) {
            encode(self.dtype, value, chunk);
        }
    }

    /// The element type.
    pub fn dtype(&self) -> Dtype {
        self.dtype
    }

    /// The logical shape.
    pub fn shape(&self) -> &[u32] {
        &self.shape
    }

    /// The raw buffer.
    pub fn bytes(&self) -> &[u8] {
        &self.data
    }

    /// The raw buffer, writable.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.data
    }

    /// Elements in the buffer.
    pub fn element_count(&self) -> usize {
        self.data.len() / self.dtype.size_bytes() as usize
    }

    /// Buffer position of the element at logical coordinate `coord`.
    pub fn buffer_offset(&self, coord: &[u32]) -> usize {
        let coord: Vec<u64> = coord.iter().map(|&c| u64::from(c)).collect();
        let offset = match &self.layout {
            Some(layout) => layout.buffer_index(&self.shape, &coord),
            None => coord.iter().zip(row_major_strides(&self.shape)).map(|(c, s)| c * s).sum(),
        };
        offset as usize
    }

    /// The element at logical coordinate `coord`.
    pub fn get(&self, coord: &[u32]) -> Value {
        let size = self.dtype.size_bytes() as usize;
        let at = self.buffer_offset(coord) * size;
        decode(self.dtype, &self.data[at..at + size])
    }

    /// Stores `value` (converted to the dtype) at logical coordinate `coord`.
    pub fn set(&mut self, coord: &[u32], value: Value) {
        let size = self.dtype.size_bytes() as usize;
        let at = self.buffer_offset(coord) * size;
        encode(self.dtype, value, &mut self.data[at..at + size]);
    }

    /// All elements in logical row-major order.
    pub fn logical_values(&self) -> Vec<Value> {
        coordinates(&self.shape).map(|c| self.get(&c)).collect()
    }
}

/// The next value of the splitmix64 generator with `state` (shared with the fuzzer's random
/// numbers).
pub(crate) fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Rounds an f32 to bfloat16 bits, to nearest even.
fn f32_to_bf16_bits(x: f32) -> u16 {
    if x.is_nan() {
        return 0x7fc0;
    }
    let bits = x.to_bits();
    let rounding = 0x7fff + ((bits >> 16) & 1);
    ((bits + rounding) >> 16) as u16
}

fn encode(dtype: Dtype, value: Value, out: &mut [u8]) {
    match dtype {
        Dtype::F32 => out.copy_from_slice(&(value.as_f64() as f32).to_le_bytes()),
        Dtype::Bf16 => out.copy_from_slice(&f32_to_bf16_bits(value.as_f64() as f32).to_le_bytes()),
        _ => {
            let v = value.as_i64().to_le_bytes();
            out.copy_from_slice(&v[..out.len()]);
        }
    }
}

fn decode(dtype: Dtype, bytes: &[u8]) -> Value {
    match dtype {
        Dtype::U8 => Value::Int(i64::from(bytes[0])),
        Dtype::I8 => Value::Int(i64::from(bytes[0] as i8)),
        Dtype::U16 => Value::Int(i64::from(u16::from_le_bytes([bytes[0], bytes[1]]))),
        Dtype::I16 => Value::Int(i64::from(i16::from_le_bytes([bytes[0], bytes[1]]))),
        Dtype::U32 => Value::Int(i64::from(u32::from_le_bytes(bytes.try_into().expect("4 bytes")))),
        Dtype::I32 => Value::Int(i64::from(i32::from_le_bytes(bytes.try_into().expect("4 bytes")))),
        Dtype::F32 => Value::Float(f64::from(f32::from_le_bytes(bytes.try_into().expect("4 bytes")))),
        Dtype::Bf16 => {
            let bits = u32::from(u16::from_le_bytes([bytes[0], bytes[1]])) << 16;
            Value::Float(f64::from(f32::from_bits(bits)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::level::Level;

    #[test]
    fn nan_and_infinities_agree_only_with_themselves() {
        let (nan, inf) = (Value::Float(f64::NAN), Value::Float(f64::INFINITY));
        // An infinite or NaN tolerance (from infinite inputs) does not let anything through.
        assert!(nan.agrees_with(&nan, 0.0));
        assert!(!nan.agrees_with(&Value::Float(1.0), f64::INFINITY));
        assert!(!Value::Float(1.0).agrees_with(&nan, f64::INFINITY));
        assert!(inf.agrees_with(&inf, f64::NAN));
        assert!(!inf.agrees_with(&Value::Float(f64::NEG_INFINITY), f64::INFINITY));
        assert!(!inf.agrees_with(&Value::Float(3.0e38), f64::INFINITY));
        assert!(!Value::Float(2.0).agrees_with(&Value::Float(1.0), f64::NAN));
        assert!(Value::Float(1.0).agrees_with(&Value::Float(1.0 + 1e-9), 1e-6));
    }

    fn spec(shape: &[u32], dtype: Dtype, layout: Layout) -> TensorSpec {
        TensorSpec::new(shape.into(), dtype, Level::GL, layout, None, &crate::target::X86_AVX2).unwrap()
    }

    #[test]
    fn integers_wrap_and_bf16_rounds_to_nearest_even() {
        let mut t = HostTensor::zeros(&spec(&[2], Dtype::U8, Layout::row_major(&[2])));
        t.set(&[0], Value::Int(257));
        assert_eq!(t.get(&[0]), Value::Int(1));
        let mut b = HostTensor::zeros(&spec(&[1], Dtype::Bf16, Layout::empty()));
        b.set(&[0], Value::Float(1.0 + 1.0 / 256.0)); // halfway between two bf16 values
        assert_eq!(b.get(&[0]), Value::Float(1.0));
    }

    #[test]
    fn bf16_elements_are_half_bf16() {
        let t = spec(&[2], Dtype::Bf16, Layout::row_major(&[2]));
        let host = HostTensor::from_elements(&t, &[half::bf16::from_f32(1.5), half::bf16::from_f32(-2.0)]);
        assert_eq!(host.get(&[1]), Value::Float(-2.0));
        assert_eq!(host.to_elements::<half::bf16>()[0].to_f32(), 1.5);
    }

    #[test]
    fn offsets_follow_the_layout() {
        let t = HostTensor::zeros(&spec(&[2, 3], Dtype::F32, Layout::col_major(&[2, 3])));
        assert_eq!(t.buffer_offset(&[1, 2]), 5);
        assert_eq!(t.buffer_offset(&[1, 0]), 1);
        assert_eq!(t.buffer_offset(&[0, 1]), 2);
    }
}
