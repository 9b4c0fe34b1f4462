//! What kernels see of the code generator, and emission helpers they share.

use super::helpers::Helper;
use crate::dtype::Dtype;
use crate::spec::LogicalSpec;
use crate::target::Target;

/// What a kernel's C emission needs from the code generator.
pub trait KernelEmitter {
    /// The target the C is for.
    fn target(&self) -> &'static Target;
    /// The C lvalue of operand `i`'s first element.
    fn scalar(&mut self, i: usize) -> String;
    /// A C pointer expression to the first element of operand `i`, which is contiguous memory.
    fn address(&mut self, i: usize) -> String;
    /// A C pointer expression to the element of operand `i` (in memory) at `coord`, in the
    /// operand's own dimensions: for tiles whose elements are not all contiguous.
    fn element_address(&mut self, i: usize, coord: &[u64]) -> String;
    /// Names of the vector registers holding operand `i`, in buffer order.
    fn vectors(&mut self, i: usize) -> Vec<String>;
    /// The name of the C vector type of `lanes` × `dtype` (declared on first use).
    fn vector_type(&mut self, dtype: Dtype, lanes: u32) -> String;
    /// Makes `helper` available to the translation unit and returns its name.
    fn helper(&mut self, helper: Helper) -> String;
    /// A fresh local variable name starting with `prefix`.
    fn fresh(&mut self, prefix: &str) -> String;
    /// Emits one line of C.
    fn line(&mut self, code: String);
    /// Emits a line opening a block (`{`, `for (...) {`); the lines after it are indented.
    fn open(&mut self, code: String);
    /// Closes the innermost open block.
    fn close(&mut self);
}

/// Operand `i` (a single element) read as a C `float` expression (bf16 is widened).
pub(super) fn read_float(spec: &LogicalSpec, i: usize, out: &mut dyn KernelEmitter) -> String {
    let x = out.scalar(i);
    if spec.operands()[i].dtype() == Dtype::Bf16 { format!("{}({x})", out.helper(Helper::Bf16ToF32)) } else { x }
}

/// Stores the `float` expression `value` into operand `i` (a single element), rounding to
/// bf16 if that is its dtype.
pub(super) fn write_float(spec: &LogicalSpec, i: usize, value: &str, out: &mut dyn KernelEmitter) {
    let x = out.scalar(i);
    let value = if spec.operands()[i].dtype() == Dtype::Bf16 {
        format!("{}({value})", out.helper(Helper::F32ToBf16))
    } else {
        value.to_owned()
    };
    out.line(format!("{x} = {value};"));
}

/// Operand `i` (a single element) read as a value of its own C type, or widened to `float`
/// for bf16.
pub(super) fn read_value(spec: &LogicalSpec, i: usize, out: &mut dyn KernelEmitter) -> String {
    if spec.operands()[i].dtype().is_float() { read_float(spec, i, out) } else { out.scalar(i) }
}

/// Stores `value` (a C value of operand `i`'s type, or a `float` for bf16) into operand `i`.
pub(super) fn write_value(spec: &LogicalSpec, i: usize, value: &str, out: &mut dyn KernelEmitter) {
    if spec.operands()[i].dtype().is_float() {
        write_float(spec, i, value, out);
    } else {
        let x = out.scalar(i);
        out.line(format!("{x} = {value};"));
    }
}

/// The C type a value kernel computes in: `float` for floats, the dtype's own type otherwise.
pub(super) fn compute_type(dtype: Dtype) -> &'static str {
    if dtype.is_float() { "float" } else { dtype.c_type() }
}

/// Lanes of operand `i`'s registers, which must be in VRF.
pub(super) fn lanes(spec: &LogicalSpec, i: usize) -> u32 {
    spec.operands()[i].vector_size().expect("a VRF operand has a vector size")
}

/// The vectors of operand `i`: its registers if it is in VRF, otherwise loads of `lanes`-wide
/// vectors from its (contiguous) memory into fresh locals.
pub(super) fn load_vectors(spec: &LogicalSpec, i: usize, lanes: u32, out: &mut dyn KernelEmitter) -> Vec<String> {
    let t = &spec.operands()[i];
    if t.vector_size().is_some() {
        return out.vectors(i);
    }
    let ty = out.vector_type(t.dtype(), lanes);
    let base = out.address(i);
    let bytes = lanes * t.dtype().size_bytes();
    (0..t.volume() / u64::from(lanes))
        .map(|j| {
            let v = out.fresh("v");
            out.line(format!("{ty} {v};"));
            out.line(format!("__builtin_memcpy(&{v}, {base} + {}, {bytes});", j * u64::from(lanes)));
            v
        })
        .collect()
}

/// Lanes `first..first + count` of the vector `v` (of `lanes` lanes), as a `count`-lane vector
/// expression: `v` itself when that is all of it, otherwise a shuffle.
pub(super) fn lane_slice(v: &str, lanes: u32, first: u32, count: u32) -> String {
    if first == 0 && count == lanes {
        return v.to_owned();
    }
    let idx: Vec<String> = (first..first + count).map(|i| i.to_string()).collect();
    format!("__builtin_shufflevector({v}, {v}, {})", idx.join(", "))
}

/// An f32 vector expression of `count` lanes: lanes `first..first + count` of the bf16 vector
/// `v` (of `lanes` lanes), widened (a bf16 is the upper half of an f32's bits).
///
/// With AVX-512 and 16 lanes this is one `vpmovzxwd` and one shift: gcc 12 lowers the
/// generic `__builtin_convertvector` of 16 lanes to two 8-lane widenings, an extract and an
/// insert, all on the shuffle port, which made bf16 kernels shuffle-bound.
pub(super) fn widen_bf16(v: &str, lanes: u32, first: u32, count: u32, out: &mut dyn KernelEmitter) -> String {
    let narrow = lane_slice(v, lanes, first, count);
    out.vector_type(Dtype::Bf16, count);
    let f32s = out.vector_type(Dtype::F32, count);
    if count == 16 && out.target().has_feature("avx512f") {
        out.helper(Helper::Intrinsics);
        return format!("(({f32s})_mm512_slli_epi32(_mm512_cvtepu16_epi32((__m256i)({narrow})), 16))");
    }
    let u32s = out.vector_type(Dtype::U32, count);
    format!("(({f32s})(__builtin_convertvector({narrow}, {u32s}) << 16))")
}

/// Declares a C `int64_t` holding the elements from one step of `step` rows of operand `i` (a
/// rank-3 Matmul operand in memory, `[1, rows, columns]`) to the next, and returns its name:
/// kernels that read rows which need not be adjacent index them with it. Zero when `rows` holds
/// a single step.
pub(super) fn row_stride(i: usize, step: u32, rows: u64, out: &mut dyn KernelEmitter) -> String {
    stride_along(i, 1, step, rows, out)
}

/// Declares a C `int64_t` holding the elements from one step of `step` values along dimension
/// `dim` of operand `i` (a rank-3 Matmul operand in memory, `extent` values along `dim`) to the
/// next, and returns its name. Zero when `extent` holds a single step.
pub(super) fn stride_along(i: usize, dim: usize, step: u32, extent: u64, out: &mut dyn KernelEmitter) -> String {
    let first = out.address(i);
    let mut coord = [0; 3];
    coord[dim] = u64::from(step);
    let next = if extent > u64::from(step) { out.element_address(i, &coord) } else { first.clone() };
    let stride = out.fresh("stride");
    out.line(format!("const int64_t {stride} = {next} - {first};"));
    stride
}

/// Stores `values` (vectors of `lanes`) into operand `i`: register assignments in VRF, or
/// stores into its contiguous memory.
pub(super) fn store_vectors(spec: &LogicalSpec, i: usize, lanes: u32, values: &[String], out: &mut dyn KernelEmitter) {
    let t = &spec.operands()[i];
    if t.vector_size().is_some() {
        for (dst, v) in out.vectors(i).iter().zip(values) {
            if dst != v {
                out.line(format!("{dst} = {v};"));
            }
        }
        return;
    }
    let base = out.address(i);
    let bytes = lanes * t.dtype().size_bytes();
    for (j, v) in values.iter().enumerate() {
        out.line(format!("__builtin_memcpy({base} + {}, &{v}, {bytes});", j as u64 * u64::from(lanes)));
    }
}

/// Emits a loop over vector steps `start..steps` unrolled `accs` ways: `body(out, acc,
/// offset)` emits one step into accumulator `acc` at the element offset expression `offset`
/// (`stride` elements per step). Steps left over after whole rounds follow the loop.
pub(super) fn unrolled_loop(
    start: u64,
    steps: u64,
    accs: u64,
    stride: u64,
    out: &mut dyn KernelEmitter,
    body: &mut dyn FnMut(&mut dyn KernelEmitter, u64, String),
) {
    let count = steps.saturating_sub(start);
    let rounds = count / accs;
    if rounds > 0 {
        let i = out.fresh("i");
        out.open(format!("for (int64_t {i} = 0; {i} < {rounds}; {i}++) {{"));
        for a in 0..accs {
            body(out, a, format!("({i} * {} + {})", accs * stride, (start + a) * stride));
        }
        out.close();
    }
    for r in 0..count % accs {
        body(out, r, format!("{}", (start + rounds * accs + r) * stride));
    }
}
