//! The softmax decompositions (paper §5): the offline family (maximum and denominator in
//! separate passes), the online family (running maximum and denominator in one pass), and the
//! parallel split of the online pass into chunks merged afterwards.
//!
//! Temporaries holding maxima and denominators have the Spec's shape with the scan dimension
//! reduced to 1 and dtype f32 (a denominator sums many terms; bf16 would lose most of them).
//! A maximum that feeds `Max` has the input's dtype, as `Max` requires.

use super::temps::{TempDest, block};
use super::{RewriteError, spec_name};
use crate::dtype::Dtype;
use crate::imp::{Binding, ImplNode};
use crate::primitive::Primitive;
use crate::shape::Shape;
use crate::spec::{LogicalSpec, MAX_RANK, Operands, Spec};
use crate::target::Target;
use crate::tensor::TensorSpec;
use crate::view::ViewMap;
use smallvec::smallvec;

fn wrong(rewrite: &'static str, expected: &'static str, spec: &Spec) -> RewriteError {
    RewriteError::WrongPrimitive { rewrite, expected, found: spec_name(spec) }
}

/// The Spec's shape with the scan dimension reduced to 1.
fn reduced(spec: &Spec, scan: u8) -> Shape {
    let mut s: Shape = spec.shape().into();
    s[usize::from(scan)] = 1;
    s
}

fn ops<const N: usize>(tensors: [&TensorSpec; N]) -> Operands {
    tensors.into_iter().cloned().collect()
}

/// Softmax → [SoftmaxDenominatorAndUnscaled(x, denom, out), DivideVecScalar(out, denom)]: the
/// output holds the unscaled exponentials until they are divided in place.
pub(super) fn to_softmax_parts(spec: &Spec, denom: &TempDest, target: &Target) -> Result<ImplNode, RewriteError> {
    let Some(Primitive::Softmax { scan }) = spec.primitive() else {
        return Err(wrong("to_softmax_parts", "Softmax", spec));
    };
    let (x, out) = (spec.operand(0), spec.operand(1));
    if x.dtype() != out.dtype() {
        return Err(RewriteError::Dtypes(format!(
            "to_softmax_parts keeps the unscaled exponentials in the output, so input and output need one dtype \
             ({} and {}); use to_softmax_parts_recompute",
            x.dtype(),
            out.dtype()
        )));
    }
    let d = denom.tensor("denominator", &reduced(spec, scan), Dtype::F32, target)?;
    let (shape, serial) = (spec.shape(), spec.logical().serial());
    let unscaled = Primitive::SoftmaxDenominatorAndUnscaled { scan };
    let divide = Primitive::DivideVecScalar { scan };
    block(
        spec,
        vec![d.clone()],
        vec![
            (
                LogicalSpec::from_tensors(unscaled, shape, ops([x, &d, out]), serial),
                smallvec![Binding::param(0), Binding::temp(0), Binding::param(1)],
            ),
            (
                LogicalSpec::from_tensors(divide, shape, ops([out, &d]), serial),
                smallvec![Binding::param(1), Binding::temp(0)],
            ),
        ],
        None,
        target,
    )
}

/// Softmax → [SoftmaxDenominatorAndMax(x, max, denom), SoftmaxComplete(x, max, denom, out)].
pub(super) fn to_softmax_parts_recompute(
    spec: &Spec,
    max: &TempDest,
    denom: &TempDest,
    target: &Target,
) -> Result<ImplNode, RewriteError> {
    let Some(Primitive::Softmax { scan }) = spec.primitive() else {
        return Err(wrong("to_softmax_parts_recompute", "Softmax", spec));
    };
    let (x, out) = (spec.operand(0), spec.operand(1));
    let r = reduced(spec, scan);
    let m = max.tensor("maximum", &r, Dtype::F32, target)?;
    let d = denom.tensor("denominator", &r, Dtype::F32, target)?;
    let (shape, serial) = (spec.shape(), spec.logical().serial());
    let sdam = Primitive::SoftmaxDenominatorAndMax { scan, accum: false };
    let complete = Primitive::SoftmaxComplete { scan };
    block(
        spec,
        vec![m.clone(), d.clone()],
        vec![
            (
                LogicalSpec::from_tensors(sdam, shape, ops([x, &m, &d]), serial),
                smallvec![Binding::param(0), Binding::temp(0), Binding::temp(1)],
            ),
            (
                LogicalSpec::from_tensors(complete, shape, ops([x, &m, &d, out]), serial),
                smallvec![Binding::param(0), Binding::temp(0), Binding::temp(1), Binding::param(1)],
            ),
        ],
        None,
        target,
    )
}

/// SoftmaxDenominatorAndMax → [Max(x, max), SoftmaxDenominator(x, max, denom)].
pub(super) fn to_max_and_denominator(spec: &Spec, _target: &Target) -> Result<ImplNode, RewriteError> {
    let Some(Primitive::SoftmaxDenominatorAndMax { scan, accum: false }) = spec.primitive() else {
        return Err(wrong("to_max_and_denominator", "SoftmaxDenominatorAndMax (not accumulating)", spec));
    };
    let (x, m, d) = (spec.operand(0), spec.operand(1), spec.operand(2));
    if x.dtype() != m.dtype() {
        return Err(RewriteError::Dtypes(format!(
            "to_max_and_denominator computes the maximum with Max, which needs the input's dtype ({}) for the \
             maximum, not {}",
            x.dtype(),
            m.dtype()
        )));
    }
    let (shape, serial) = (spec.shape(), spec.logical().serial());
    let max = Primitive::Max { dim: scan, accum: false };
    let denominator = Primitive::SoftmaxDenominator { scan, accum: false };
    let stages = vec![
        (LogicalSpec::from_tensors(max, shape, ops([x, m]), serial), smallvec![Binding::param(0), Binding::param(1)]),
        (
            LogicalSpec::from_tensors(denominator, shape, ops([x, m, d]), serial),
            smallvec![Binding::param(0), Binding::param(1), Binding::param(2)],
        ),
    ];
    let limits = *spec.limits();
    let (stages, bindings) = stages.into_iter().map(|(s, b)| (crate::imp::Impl::leaf(Spec::new(s, limits)), b)).unzip();
    Ok(ImplNode::Block(crate::imp::BlockNode { temps: Vec::new(), stages, bindings, default_stage: None }))
}

/// SoftmaxDenominatorAndUnscaled → [Max(x, max), SoftmaxDenominatorAndUnscaledFromMax(x, max,
/// denom, unscaled)].
pub(super) fn to_max_and_unscaled(spec: &Spec, max: &TempDest, target: &Target) -> Result<ImplNode, RewriteError> {
    let Some(Primitive::SoftmaxDenominatorAndUnscaled { scan }) = spec.primitive() else {
        return Err(wrong("to_max_and_unscaled", "SoftmaxDenominatorAndUnscaled", spec));
    };
    let (x, d, u) = (spec.operand(0), spec.operand(1), spec.operand(2));
    let m = max.tensor("maximum", &reduced(spec, scan), x.dtype(), target)?;
    let (shape, serial) = (spec.shape(), spec.logical().serial());
    let max_prim = Primitive::Max { dim: scan, accum: false };
    let from_max = Primitive::SoftmaxDenominatorAndUnscaledFromMax { scan, accum: false };
    block(
        spec,
        vec![m.clone()],
        vec![
            (
                LogicalSpec::from_tensors(max_prim, shape, ops([x, &m]), serial),
                smallvec![Binding::param(0), Binding::temp(0)],
            ),
            (
                LogicalSpec::from_tensors(from_max, shape, ops([x, &m, d, u]), serial),
                smallvec![Binding::param(0), Binding::temp(0), Binding::param(1), Binding::param(2)],
            ),
        ],
        None,
        target,
    )
}

/// SoftmaxDenominatorAndMax over `n` values → [SoftmaxDenominatorAndMax over the row seen as
/// `n / chunk` chunks of `chunk` (one maximum and denominator per chunk, into temporaries),
/// SoftmaxDenominatorAndMaxFromParts(partial maxima, partial denominators, max, denom)]. The
/// first stage's chunk dimension is not a reduction, so it can be tiled in parallel.
pub(super) fn parallel_split(
    spec: &Spec,
    chunk: &u32,
    partials: &TempDest,
    target: &Target,
) -> Result<ImplNode, RewriteError> {
    let chunk = *chunk;
    let Some(Primitive::SoftmaxDenominatorAndMax { scan, accum: false }) = spec.primitive() else {
        return Err(wrong("parallel_split", "SoftmaxDenominatorAndMax (not accumulating)", spec));
    };
    if spec.logical().serial() {
        return Err(RewriteError::SerialOnly { rewrite: "parallel_split" });
    }
    let s = usize::from(scan);
    let (shape, rank) = (spec.shape(), spec.shape().len());
    let n = shape[s];
    if chunk < 2 || chunk >= n || !n.is_multiple_of(chunk) || rank + 1 > MAX_RANK {
        return Err(RewriteError::Shape {
            rewrite: "parallel_split",
            requirement: format!(
                "a chunk size that divides the scan length {n} into at least two chunks of at least 2 (and rank < {MAX_RANK}); \
                 {chunk} does not"
            ),
        });
    }
    let (x, m, d) = (spec.operand(0), spec.operand(1), spec.operand(2));
    let mut parts_shape: Shape = shape.into();
    parts_shape[s] = n / chunk;
    let pm = partials.tensor("partial maximum", &parts_shape, m.dtype(), target)?;
    let pd = partials.tensor("partial denominator", &parts_shape, d.dtype(), target)?;

    let mut chunked: Shape = shape.into();
    chunked[s] = n / chunk;
    chunked.insert(s + 1, chunk);
    let mut chunk_out: Shape = parts_shape.clone();
    chunk_out.insert(s + 1, 1);
    let split = ViewMap::split(rank, s, chunk);
    let unit = ViewMap::insert_unit(rank, s + 1);
    let view = |t: &TensorSpec, shape: &[u32], map: &ViewMap, name: &str| {
        t.view(shape, map, target).map_err(|source| RewriteError::ViewInvalid {
            operand: name.to_owned(),
            shape: crate::shape::DisplayShape(shape).to_string(),
            source,
        })
    };
    let xs = view(x, &chunked, &split, "input")?;
    let pms = view(&pm, &chunk_out, &unit, "partial maximum")?;
    let pds = view(&pd, &chunk_out, &unit, "partial denominator")?;
    let serial = spec.logical().serial();
    let per_chunk = Primitive::SoftmaxDenominatorAndMax { scan: scan + 1, accum: false };
    let merge = Primitive::SoftmaxDenominatorAndMaxFromParts { scan, accum: false };
    block(
        spec,
        vec![pm.clone(), pd.clone()],
        vec![
            (
                LogicalSpec::from_tensors(per_chunk, &chunked, ops([&xs, &pms, &pds]), serial),
                smallvec![
                    Binding::param(0).viewed(split),
                    Binding::temp(0).viewed(unit.clone()),
                    Binding::temp(1).viewed(unit)
                ],
            ),
            (
                LogicalSpec::from_tensors(merge, &parts_shape, ops([&pm, &pd, m, d]), serial),
                smallvec![Binding::temp(0), Binding::temp(1), Binding::param(1), Binding::param(2)],
            ),
        ],
        None,
        target,
    )
}
