//! The kernel-selection rewrite.

use super::RewriteError;
use crate::imp::ImplNode;
use crate::kernels::KernelKind;
use crate::level::Level;
use crate::spec::Spec;
use crate::target::Target;

pub(super) fn apply(spec: &Spec, kernel: &KernelKind, target: &Target) -> Result<ImplNode, RewriteError> {
    let kernel = *kernel;
    kernel.applies(spec.logical(), target).map_err(|reason| RewriteError::KernelMismatch { kernel, reason })?;
    let needs = kernel.memory(spec.logical(), target);
    for level in Level::ALL {
        if needs.get(level) > spec.limits().get(level) {
            return Err(RewriteError::OutOfMemory {
                level,
                needed: needs.get(level),
                available: spec.limits().get(level),
            });
        }
    }
    Ok(ImplNode::Kernel(kernel))
}
