//! C helper functions kernels call, emitted into a translation unit on first use.
//!
//! * bf16 conversions: widening is exact (the bits shifted into an f32); narrowing rounds to
//!   nearest even and keeps NaNs quiet.
//! * `exp`: Cody–Waite range reduction to `[−ln 2/2, ln 2/2]` and a degree-6 polynomial (the
//!   classic single-precision minimax coefficients), accurate to about 2 units of roundoff;
//!   inputs above 88.376 are clamped (the result is finite), inputs below −87.337 give 0. The
//!   scalar and vector versions compute the same thing, element by element.
//! * maxima follow the reference: the new value wins if it is larger or the current one is NaN.
//! * horizontal sums halve the vector with shuffles; horizontal maxima fold lane by lane.
//! * spare buffers: a kernel's heap buffers are kept between calls, in a few slots per place
//!   the kernel allocates them, each taken by one call at a time (see [`Helper::SpareBuffers`]).

use crate::dtype::Dtype;

/// A helper function.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Helper {
    /// `#include <immintrin.h>` (x86 intrinsics).
    Intrinsics,
    /// `float morello_bf16_to_f32(uint16_t)`.
    Bf16ToF32,
    /// `uint16_t morello_f32_to_bf16(float)`.
    F32ToBf16,
    /// `float morello_expf(float)`.
    ExpF32,
    /// Scalar maximum in a dtype's compute type (`float` for floats).
    Max(Dtype),
    /// Element-wise `exp` of an f32 vector of this many lanes.
    VectorExp(u32),
    /// Element-wise maximum of two vectors.
    VectorMax(Dtype, u32),
    /// Sum of the lanes of an f32 vector.
    HorizontalSum(u32),
    /// Maximum of the lanes of a vector.
    HorizontalMax(Dtype, u32),
    /// `morello_take_buffer` and `morello_give_back`: a heap buffer is not freed when a call is
    /// done with it but kept in one of [`SPARE_SLOTS`] slots of its allocation site for a later
    /// call, which would otherwise `aligned_alloc` several MiB again (and may fault in fresh
    /// pages). A call takes a slot's buffer atomically, or allocates one if every slot is empty
    /// (the buffers are in use by other threads, or this is the first call); it gives its
    /// buffer back to an empty slot or frees it. So a process keeps at most [`SPARE_SLOTS`]
    /// buffers per allocation site, as many as ever ran at once (parallel iterations of a
    /// kernel each take one).
    SpareBuffers,
}

/// Spare buffers kept per allocation site ([`Helper::SpareBuffers`]): enough for the parallel
/// iterations of one call on a machine of this many threads, and for that many calls at once.
pub const SPARE_SLOTS: u32 = 8;

/// A helper's C definition and what it needs.
pub struct HelperSource {
    /// Helpers it calls (defined before it).
    pub needs: Vec<Helper>,
    /// Vector types it uses.
    pub vector_types: Vec<(Dtype, u32)>,
    /// The definition.
    pub code: String,
}

const EXP_CONSTANTS: &str = "\
    const float log2e = 1.44269504088896341f, ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;\n\
    const float magic = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */\n";

fn exp_polynomial(var: &str) -> String {
    format!(
        "    p = 1.9875691500e-4f * {var} + 1.3981999507e-3f;\n    p = p * {var} + 8.3334519073e-3f;\n    \
         p = p * {var} + 4.1665795894e-2f;\n    p = p * {var} + 1.6666665459e-1f;\n    p = p * {var} + 5.0000001201e-1f;\n    \
         p = p * {var} * {var} + {var} + 1.0f;\n"
    )
}

impl Helper {
    /// The C name of the function (or of the include, for [`Helper::Intrinsics`]).
    pub fn name(self) -> String {
        match self {
            Helper::Intrinsics => "immintrin".to_owned(),
            Helper::Bf16ToF32 => "morello_bf16_to_f32".to_owned(),
            Helper::F32ToBf16 => "morello_f32_to_bf16".to_owned(),
            Helper::ExpF32 => "morello_expf".to_owned(),
            Helper::Max(d) => format!("morello_max_{}", d.name()),
            Helper::VectorExp(l) => format!("morello_exp_f32x{l}"),
            Helper::VectorMax(d, l) => format!("morello_vmax_{}x{l}", d.name()),
            Helper::HorizontalSum(l) => format!("morello_hsum_f32x{l}"),
            Helper::HorizontalMax(d, l) => format!("morello_hmax_{}x{l}", d.name()),
            Helper::SpareBuffers => "morello_take_buffer".to_owned(),
        }
    }

    /// The definition.
    pub fn source(self) -> HelperSource {
        let name = self.name();
        let plain = |code: String| HelperSource { needs: Vec::new(), vector_types: Vec::new(), code };
        match self {
            Helper::Intrinsics => plain("#include <immintrin.h>\n".to_owned()),
            Helper::Bf16ToF32 => plain(format!(
                "static inline float {name}(uint16_t x) {{\n    uint32_t bits = (uint32_t)x << 16;\n    float f;\n    \
                 __builtin_memcpy(&f, &bits, 4);\n    return f;\n}}\n"
            )),
            Helper::F32ToBf16 => plain(format!(
                "static inline uint16_t {name}(float f) {{\n    uint32_t bits;\n    __builtin_memcpy(&bits, &f, 4);\n    \
                 if ((bits & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((bits >> 16) | 0x40u);\n    \
                 bits += 0x7fffu + ((bits >> 16) & 1u);\n    return (uint16_t)(bits >> 16);\n}}\n"
            )),
            Helper::ExpF32 => plain(format!(
                "static inline float {name}(float x) {{\n{EXP_CONSTANTS}    if (x < -87.33654475f) return 0.0f;\n    \
                 if (x > 88.37626266f) x = 88.37626266f;\n    float t = x * log2e + magic;\n    float n = t - magic;\n    \
                 int32_t ti;\n    __builtin_memcpy(&ti, &t, 4);\n    int32_t ni = ti - 0x4B400000;\n    \
                 float r = x - n * ln2_hi;\n    r = r - n * ln2_lo;\n    float p;\n{}    \
                 uint32_t scale_bits = (uint32_t)(ni + 127) << 23;\n    float scale;\n    \
                 __builtin_memcpy(&scale, &scale_bits, 4);\n    return p * scale;\n}}\n",
                exp_polynomial("r")
            )),
            Helper::Max(d) => {
                let t = super::emit::compute_type(d);
                let nan = if d.is_float() { " || current != current" } else { "" };
                plain(format!(
                    "static inline {t} {name}({t} x, {t} current) {{\n    return (x > current{nan}) ? x : current;\n}}\n"
                ))
            }
            Helper::VectorExp(l) => {
                let (vf, vi) = (Dtype::F32.vector_type_name(l), Dtype::I32.vector_type_name(l));
                HelperSource {
                    needs: Vec::new(),
                    vector_types: vec![(Dtype::F32, l), (Dtype::I32, l)],
                    code: format!(
                        "static inline {vf} {name}({vf} x) {{\n{EXP_CONSTANTS}    {vi} too_small = x < -87.33654475f;\n    \
                         {vi} too_big = x > 88.37626266f;\n    {vf} top = ({vf}){{0}} + 88.37626266f;\n    \
                         x = ({vf})((({vi})x & ~too_big) | (({vi})top & too_big));\n    x = ({vf})(({vi})x & ~too_small);\n    \
                         {vf} t = x * log2e + magic;\n    {vf} n = t - magic;\n    {vi} ni = ({vi})t - 0x4B400000;\n    \
                         {vf} r = x - n * ln2_hi;\n    r = r - n * ln2_lo;\n    {vf} p;\n{}    \
                         {vf} scale = ({vf})((ni + 127) << 23);\n    return ({vf})(({vi})(p * scale) & ~too_small);\n}}\n",
                        exp_polynomial("r")
                    ),
                }
            }
            Helper::VectorMax(d, l) => {
                let (v, mask) = (d.vector_type_name(l), mask_dtype(d).vector_type_name(l));
                let nan = if d.is_float() { " | (current != current)" } else { "" };
                HelperSource {
                    needs: Vec::new(),
                    vector_types: vec![(d, l), (mask_dtype(d), l)],
                    code: format!(
                        "static inline {v} {name}({v} x, {v} current) {{\n    {mask} take = (x > current){nan};\n    \
                         return ({v})((({mask})x & take) | (({mask})current & ~take));\n}}\n"
                    ),
                }
            }
            Helper::HorizontalSum(l) => {
                let mut code = format!("static inline float {name}({} v) {{\n", Dtype::F32.vector_type_name(l));
                let mut types = vec![(Dtype::F32, l)];
                let (mut width, mut var) = (l, "v".to_owned());
                while width > 4 {
                    let half = width / 2;
                    let ty = Dtype::F32.vector_type_name(half);
                    let lo: Vec<String> = (0..half).map(|i| i.to_string()).collect();
                    let hi: Vec<String> = (half..width).map(|i| i.to_string()).collect();
                    let next = format!("s{half}");
                    code += &format!(
                        "    {ty} {next} = __builtin_shufflevector({var}, {var}, {}) + __builtin_shufflevector({var}, {var}, {});\n",
                        lo.join(", "),
                        hi.join(", ")
                    );
                    types.push((Dtype::F32, half));
                    (width, var) = (half, next);
                }
                let lanes: Vec<String> = (0..width).map(|i| format!("{var}[{i}]")).collect();
                code += &format!("    return {};\n}}\n", lanes.join(" + "));
                HelperSource { needs: Vec::new(), vector_types: types, code }
            }
            Helper::HorizontalMax(d, l) => {
                let t = super::emit::compute_type(d);
                let max = Helper::Max(d).name();
                let mut code = format!("static inline {t} {name}({} v) {{\n    {t} m = v[0];\n", d.vector_type_name(l));
                code += &format!("    for (int i = 1; i < {l}; i++) m = {max}(v[i], m);\n    return m;\n}}\n");
                HelperSource { needs: vec![Helper::Max(d)], vector_types: vec![(d, l)], code }
            }
            Helper::SpareBuffers => plain(format!(
                "#include <stdatomic.h>\n\n\
                 static void *{name}(_Atomic(void *) *spares, int slots, size_t bytes) {{\n    \
                 for (int i = 0; i < slots; i++) {{\n        \
                 void *p = atomic_exchange_explicit(&spares[i], NULL, memory_order_acquire);\n        \
                 if (p != NULL) return p;\n    }}\n    \
                 void *p = aligned_alloc(64, bytes);\n    if (p == NULL) abort();\n    return p;\n}}\n\n\
                 static void morello_give_back(_Atomic(void *) *spares, int slots, void *p) {{\n    \
                 for (int i = 0; i < slots; i++) {{\n        void *empty = NULL;\n        \
                 if (atomic_compare_exchange_strong_explicit(&spares[i], &empty, p, memory_order_release, memory_order_relaxed))\n            \
                 return;\n    }}\n    free(p);\n}}\n"
            )),
        }
    }
}

/// The signed integer dtype of the same width: the element type of comparison results.
pub(crate) fn mask_dtype(d: Dtype) -> Dtype {
    match d.size_bytes() {
        1 => Dtype::I8,
        2 => Dtype::I16,
        _ => Dtype::I32,
    }
}
