//! A kernel's C signature, described once for the C it is generated as and for the Rust
//! declarations `kernel!` writes: one pointer per Spec operand (`const` for inputs, all
//! `restrict`), then the [runtime](super::runtime).

use crate::dtype::Dtype;
use crate::primitive::Direction;
use crate::spec::Spec;

/// One pointer parameter of a kernel: an operand of its Spec.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct KernelParam {
    /// The operand's name (a valid Rust identifier).
    pub name: String,
    /// The element type.
    pub dtype: Dtype,
    /// Whether the kernel writes through it (inputs are `const`).
    pub writes: bool,
    /// How many elements the buffer behind it holds: the layout's buffer volume, or the
    /// operand's volume for registers (passed in memory, loaded on entry).
    pub elements: u64,
}

/// The pointer parameters of a kernel implementing `spec`, in order (the runtime follows them).
pub fn kernel_params(spec: &Spec) -> Vec<KernelParam> {
    spec.operands()
        .iter()
        .enumerate()
        .map(|(i, t)| KernelParam {
            name: spec.logical().operand_name(i).into_owned(),
            dtype: t.dtype(),
            writes: spec.logical().direction(i) != Direction::In,
            elements: if t.level().has_layout() { t.layout().buffer_volume(t.shape()) } else { t.volume() },
        })
        .collect()
}

/// The C prototype (without `;`) of kernel `symbol` implementing `spec`.
pub fn c_prototype(spec: &Spec, symbol: &str) -> String {
    let mut params: Vec<String> = kernel_params(spec)
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let constness = if p.writes { "" } else { "const " };
            format!("{constness}{} *restrict p{i}", p.dtype.c_type())
        })
        .collect();
    params.push("const morello_runtime *rt".to_owned());
    format!("void {symbol}({})", params.join(", "))
}
