//! Bufferize: a Compose split into a pipeline of two Specs joined by a temporary (paper §2.1).

use super::RewriteError;
use super::temps::{TempDest, block};
use crate::imp::{Binding, ImplNode};
use crate::spec::{Component, LogicalSpec, Operands, Spec, SpecKind, parameter_bindings};
use crate::target::Target;
use smallvec::SmallVec;

/// Splits the Compose `spec` at stage `index`: the temporary is the output of stage
/// `index + 1`, the first input of stage `index`. The pipeline first runs stages `index + 1..`
/// into the temporary, then stages `..=index`.
pub(super) fn apply(spec: &Spec, index: &usize, dest: &TempDest, target: &Target) -> Result<ImplNode, RewriteError> {
    let index = *index;
    let SpecKind::Compose(components) = spec.logical().kind() else {
        return Err(RewriteError::WrongPrimitive {
            rewrite: "bufferize",
            expected: "a Compose",
            found: super::spec_name(spec),
        });
    };
    // `index` comes from schedule text, so it may be as large as a usize goes.
    if index >= components.len() - 1 {
        return Err(RewriteError::StageOutOfRange { index, stages: components.len(), last: components.len() - 1 });
    }
    let producer = &components[index + 1];
    let output = producer.primitive.operand_count() - 1;
    let shape = producer.primitive.operand_shape(output, &producer.shape);
    let temp = dest.tensor("intermediate", &shape, producer.output_dtype, target)?;

    let parent = parameter_bindings(components);
    let serial = spec.logical().serial();
    let mut stages = Vec::new();
    for (range, writes_temp) in [(index + 1..components.len(), true), (0..index + 1, false)] {
        let offset = range.start;
        let part: Vec<Component> = components[range].to_vec();
        let mut operands = Operands::new();
        let mut bindings: SmallVec<[Binding; 4]> = SmallVec::new();
        let local = parameter_bindings(&part);
        for (k, &(c, o)) in local.iter().enumerate() {
            let global = (c + offset, o);
            let is_output = k + 1 == local.len();
            let reads_temp = !writes_temp && global == (index, 0);
            let binding = if (is_output && writes_temp) || reads_temp {
                operands.push(temp.clone());
                Binding::temp(0)
            } else {
                let i = parent.iter().position(|&b| b == global).expect("every stage operand is a Compose parameter");
                operands.push(spec.operand(i).clone());
                Binding::param(i)
            };
            bindings.push(binding);
        }
        let logical = if part.len() == 1 {
            LogicalSpec::from_tensors(part[0].primitive, &part[0].shape, operands, serial)
        } else {
            LogicalSpec::compose_from_tensors(part, operands, serial)
        };
        stages.push((logical, bindings));
    }
    block(spec, vec![temp], stages, None, target)
}
