//! Compose: pipelines of primitives (paper §2.1).
//!
//! Components are listed from the outermost (the *head*, which runs last and writes the
//! Compose's output) to the innermost (which runs first). Each component's output is the first
//! input of the component before it. The parameters are, in order: the head's inputs except
//! its first, each middle component's inputs except its first (outer to inner), all inputs of
//! the innermost component, and finally the head's output.

use super::SpecError;
use crate::dtype::Dtype;
use crate::primitive::{Primitive, Role};
use crate::shape::{DisplayShape, Shape};
use std::fmt;

/// One stage of a Compose pipeline.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Component {
    /// What the stage computes.
    pub primitive: Primitive,
    /// Its Spec shape.
    pub shape: Shape,
    /// The dtype of its output (for the head, the Compose output's dtype).
    pub output_dtype: Dtype,
}

/// A component as written: its output dtype may be left to the head's output operand.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ComponentDecl {
    /// What the stage computes.
    pub primitive: Primitive,
    /// Its Spec shape.
    pub shape: Shape,
    /// The dtype of its output; required for every component but the head.
    pub output_dtype: Option<Dtype>,
}

/// For each Compose parameter, the (component, operand) it binds.
pub fn parameter_bindings(components: &[Component]) -> Vec<(usize, usize)> {
    let last = components.len() - 1;
    let mut out = Vec::new();
    for (c, component) in components.iter().enumerate() {
        let output = component.primitive.operand_count() - 1;
        let first = if c == last { 0 } else { 1 };
        out.extend((first..output).map(|o| (c, o)));
    }
    out.push((0, components[0].primitive.operand_count() - 1));
    out
}

/// The name of parameter `i`: the operand's name, suffixed with the component index outside
/// the head (`rhs`, `lhs_1`, `rhs_1`, `out`).
pub fn parameter_name(components: &[Component], i: usize) -> String {
    let (c, o) = parameter_bindings(components)[i];
    let name = components[c].primitive.operands()[o].name;
    if c == 0 { name.to_owned() } else { format!("{name}_{c}") }
}

/// Checks a pipeline's structure; returns the components with the head's output dtype filled
/// in from `output_dtype`.
pub fn check_components(components: &[ComponentDecl], output_dtype: Dtype) -> Result<Vec<Component>, SpecError> {
    let fail = |index: usize, reason: String| SpecError::Component { index, reason };
    if components.len() < 2 {
        return Err(SpecError::ComposeTooShort);
    }
    let mut out = Vec::new();
    for (i, decl) in components.iter().enumerate() {
        let p = decl.primitive;
        super::check_shape(p, &decl.shape).map_err(|e| fail(i, e.to_string()))?;
        let outputs: Vec<usize> = p.outputs().collect();
        if outputs != [p.operand_count() - 1] || p.operand_count() < 2 {
            return Err(fail(
                i,
                format!("{p} cannot be a Compose stage: a stage needs inputs and a single, last output"),
            ));
        }
        let in_place = p.operands().iter().any(|o| o.role == Role::InOut);
        if i > 0 && (p.is_accumulating() || in_place || matches!(p, Primitive::Fill(_))) {
            return Err(fail(i, format!("{p} has side effects, so it can only be the head (first) component")));
        }
        if i == 0 && in_place {
            return Err(fail(i, format!("{p} updates its first input in place, which a stage's input cannot be")));
        }
        let output_dtype = match (i, decl.output_dtype) {
            (0, Some(d)) if d != output_dtype => {
                return Err(fail(i, format!("the head's output is {output_dtype} (the last operand), not {d}")));
            }
            (0, _) => output_dtype,
            (_, Some(d)) => d,
            (_, None) => return Err(fail(i, format!("write the dtype of {p}'s output, e.g. `{p}(...) -> f32`"))),
        };
        out.push(Component { primitive: p, shape: decl.shape.clone(), output_dtype });
    }
    for i in 0..out.len() - 1 {
        let (outer, inner) = (&out[i], &out[i + 1]);
        let produced = inner.primitive.operand_shape(inner.primitive.operand_count() - 1, &inner.shape);
        let consumed = outer.primitive.operand_shape(0, &outer.shape);
        if produced != consumed {
            return Err(fail(
                i + 1,
                format!(
                    "its output is {}, but {} (component {i}) takes a first input of {}",
                    DisplayShape(&produced),
                    outer.primitive,
                    DisplayShape(&consumed)
                ),
            ));
        }
    }
    Ok(out)
}

/// Checks every component's dtypes, given the Compose parameters' dtypes.
pub fn check_component_dtypes(components: &[Component], parameter_dtypes: &[Dtype]) -> Result<(), SpecError> {
    let bindings = parameter_bindings(components);
    for (c, component) in components.iter().enumerate() {
        let p = component.primitive;
        let dtypes: Vec<Dtype> = (0..p.operand_count())
            .map(|o| {
                if o == p.operand_count() - 1 {
                    component.output_dtype
                } else if o == 0 && c + 1 < components.len() {
                    components[c + 1].output_dtype
                } else {
                    parameter_dtypes[bindings.iter().position(|&b| b == (c, o)).expect("every input is bound")]
                }
            })
            .collect();
        p.check_dtypes(&dtypes).map_err(|reason| SpecError::Component { index: c, reason })?;
    }
    Ok(())
}

/// Formats the components as in Spec syntax: `[Matmul(1×8×8×8), Softmax(1×8×8, scan=2) -> f32]`.
pub struct DisplayComponents<'a>(pub &'a [Component]);

impl fmt::Display for DisplayComponents<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, c) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}({}", c.primitive, DisplayShape(&c.shape))?;
            if let (Some(param), Some(value)) = (c.primitive.def().param, c.primitive.param()) {
                write!(f, ", {param}={value}")?;
            }
            f.write_str(")")?;
            if i > 0 {
                write!(f, " -> {}", c.output_dtype)?;
            }
        }
        f.write_str("]")
    }
}
