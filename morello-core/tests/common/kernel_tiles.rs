//! A microkernel applied by hand to the tiles of a larger Spec, so that it sees operands that
//! are tiles of wider tensors (rows not adjacent), as the search gives them.

use morello_core::imp::Impl;
use morello_core::kernels::KernelKind;
use morello_core::level::Level;
use morello_core::schedule::PartialImpl;
use morello_core::search::Synthesizer;
use morello_core::spec::Spec;
use morello_core::target::Target;

/// `spec` (parsed for `target`) as a loop over tiles of `tile`, each with every operand cached
/// in L1 and implemented by `kernel`; whatever else the schedule leaves is synthesized. Panics
/// naming the Spec and the tile if the kernel does not apply.
pub fn kernel_on_l1_tiles(
    text: &str,
    tile: &[u32],
    kernel: KernelKind,
    target: &'static Target,
    synth: &mut Synthesizer,
) -> Impl {
    let spec = Spec::parse_for(text, target).unwrap_or_else(|e| panic!("{text}: {e}"));
    let operands = spec.operands().len();
    let mut schedule = PartialImpl::new(spec, target).tile(tile);
    for i in 0..operands {
        schedule = schedule.and_then(|p| p.move_param(i, Level::L1, None, None));
    }
    schedule
        .and_then(|p| p.select(kernel))
        .and_then(|p| p.synthesize_all(synth))
        .unwrap_or_else(|e| panic!("{text} in tiles of {tile:?}: {e}"))
}
