//! Element data types.

use std::fmt;

/// The element type of a tensor.
///
/// Every dtype the Spec language names is here; which kernels exist for each is decided by the
/// target's kernel table, not by this type.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Dtype {
    /// Unsigned 8-bit integer.
    U8,
    /// Signed 8-bit integer.
    I8,
    /// Unsigned 16-bit integer.
    U16,
    /// Signed 16-bit integer.
    I16,
    /// Unsigned 32-bit integer.
    U32,
    /// Signed 32-bit integer.
    I32,
    /// IEEE-754 binary32.
    F32,
    /// bfloat16: the upper half of an IEEE-754 binary32.
    Bf16,
}

impl Dtype {
    /// Every dtype, in a fixed order.
    pub const ALL: [Dtype; 8] =
        [Dtype::U8, Dtype::I8, Dtype::U16, Dtype::I16, Dtype::U32, Dtype::I32, Dtype::F32, Dtype::Bf16];

    /// The name used in Spec syntax (`f32`, `u8`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::U8 => "u8",
            Dtype::I8 => "i8",
            Dtype::U16 => "u16",
            Dtype::I16 => "i16",
            Dtype::U32 => "u32",
            Dtype::I32 => "i32",
            Dtype::F32 => "f32",
            Dtype::Bf16 => "bf16",
        }
    }

    /// Looks a dtype up by its Spec-syntax name.
    pub fn from_name(name: &str) -> Option<Dtype> {
        Dtype::ALL.into_iter().find(|d| d.name() == name)
    }

    /// Size of one element in bytes.
    pub fn size_bytes(self) -> u32 {
        match self {
            Dtype::U8 | Dtype::I8 => 1,
            Dtype::U16 | Dtype::I16 | Dtype::Bf16 => 2,
            Dtype::U32 | Dtype::I32 | Dtype::F32 => 4,
        }
    }

    /// Whether this is a floating-point type.
    pub fn is_float(self) -> bool {
        matches!(self, Dtype::F32 | Dtype::Bf16)
    }

    /// The unit roundoff of a float type (half the distance from 1 to the next value), or 0
    /// for integers, which are exact.
    pub fn unit_roundoff(self) -> f64 {
        match self {
            Dtype::F32 => f64::powi(2.0, -24),
            Dtype::Bf16 => f64::powi(2.0, -8),
            _ => 0.0,
        }
    }

    /// Whether this is a signed integer type.
    pub fn is_signed_int(self) -> bool {
        matches!(self, Dtype::I8 | Dtype::I16 | Dtype::I32)
    }

    /// The name of the C vector type (a GNU vector extension) that holds `lanes` values of this
    /// dtype, as generated kernels declare it.
    pub fn vector_type_name(self, lanes: u32) -> String {
        format!("v{}x{lanes}_t", self.name())
    }

    /// The C type that stores one element. bf16 is stored as its raw bits.
    pub fn c_type(self) -> &'static str {
        match self {
            Dtype::U8 => "uint8_t",
            Dtype::I8 => "int8_t",
            Dtype::U16 => "uint16_t",
            Dtype::I16 => "int16_t",
            Dtype::U32 => "uint32_t",
            Dtype::I32 => "int32_t",
            Dtype::F32 => "float",
            Dtype::Bf16 => "uint16_t",
        }
    }

    /// The Rust type a safe wrapper exposes for one element, as a path.
    pub fn rust_type(self) -> &'static str {
        match self {
            Dtype::Bf16 => "::morello::bf16",
            primitive => primitive.name(),
        }
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in Dtype::ALL {
            assert_eq!(Dtype::from_name(d.name()), Some(d));
        }
        assert_eq!(Dtype::from_name("f64"), None);
    }
}
