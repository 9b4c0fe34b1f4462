//! Reduction of a failing case: smaller Specs and shorter schedules are tried, and kept while
//! the case fails the same way, until no candidate does.

use super::{CaseText, FailedCase, Failure, FuzzOptions, check_case};
use crate::dtype::Dtype;
use crate::fuzz::batch::Instrument;
use crate::harness::CCompiler;
use std::collections::HashSet;

/// Checks a reduction may spend on one failure.
const MAX_CHECKS: usize = 60;

/// The smallest case found that fails as `failed` does, if smaller than it.
pub(super) fn reduce(failed: &FailedCase, options: &FuzzOptions) -> Option<(CaseText, Failure)> {
    let (compilers, instrument) = how_it_failed(&failed.failure, options);
    let mut best = failed.case.clone();
    let mut best_failure = failed.failure.clone();
    let mut seen: HashSet<(String, Vec<String>)> = HashSet::new();
    seen.insert((best.spec.clone(), best.steps.clone()));
    let mut checks = 0;
    'improve: loop {
        for candidate in candidates(&best, options) {
            if !seen.insert((candidate.spec.clone(), candidate.steps.clone())) {
                continue;
            }
            if checks == MAX_CHECKS {
                break 'improve;
            }
            checks += 1;
            if let Err(failure) = check_case(&candidate, options.target, &compilers, instrument)
                && same_kind(&failure, &failed.failure)
            {
                best = candidate;
                best_failure = failure;
                continue 'improve;
            }
        }
        break;
    }
    (best != failed.case).then_some((best, best_failure))
}

/// The compiler and instrumentation a failure was seen with.
fn how_it_failed(failure: &Failure, options: &FuzzOptions) -> (Vec<CCompiler>, Instrument) {
    let instrument_named = |name: &str| {
        [Instrument::None, Instrument::AddressUndefined, Instrument::Thread]
            .into_iter()
            .find(|i| i.name() == name)
            .unwrap_or(Instrument::None)
    };
    match failure {
        Failure::Mismatch { compiler, instrument, .. } | Failure::Run { compiler, instrument, .. } => {
            (vec![CCompiler { program: compiler.clone() }], instrument_named(instrument))
        }
        Failure::Compile { compiler, .. } => (vec![CCompiler { program: compiler.clone() }], Instrument::None),
        Failure::Compiler { .. } | Failure::ScheduleText { .. } => (options.compilers.clone(), Instrument::None),
    }
}

fn same_kind(a: &Failure, b: &Failure) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
}

/// Smaller variants of `case`, the most promising first: fewer schedule steps, smaller
/// dimensions, plainer operands, the target's limits.
fn candidates(case: &CaseText, options: &FuzzOptions) -> Vec<CaseText> {
    let with = |spec: String, steps: &[String]| CaseText { spec, steps: steps.to_vec(), input_seed: case.input_seed };
    let mut out = Vec::new();
    for keep in 0..case.steps.len() {
        out.push(with(case.spec.clone(), &case.steps[..keep]));
    }
    for spec in smaller_shapes(&case.spec) {
        out.push(with(spec, &case.steps));
    }
    for spec in plainer_operands(&case.spec) {
        out.push(with(spec, &case.steps));
    }
    let limits = options.target.target().max_limits().to_string();
    if let Some(at) = case.spec.rfind(", [")
        && case.spec[at + 2..].trim_end_matches(')') != limits
    {
        out.push(with(format!("{}, {limits})", &case.spec[..at]), &case.steps));
    }
    out
}

/// The Spec with one dimension of its first shape made smaller (1, half, or one less).
fn smaller_shapes(spec: &str) -> Vec<String> {
    let Some(start) = spec.find(|c: char| c.is_ascii_digit()) else { return Vec::new() };
    let end = spec[start..].find([',', ')']).map_or(spec.len(), |e| start + e);
    let dims: Vec<u32> = spec[start..end].split('x').filter_map(|d| d.parse().ok()).collect();
    let mut out = Vec::new();
    for (i, &d) in dims.iter().enumerate() {
        let mut options: Vec<u32> = vec![1, d / 2, d - 1.min(d)];
        options.retain(|&o| o >= 1 && o < d);
        options.dedup();
        for o in options {
            let mut smaller = dims.clone();
            smaller[i] = o;
            let shape = smaller.iter().map(u32::to_string).collect::<Vec<_>>().join("x");
            out.push(format!("{}{shape}{}", &spec[..start], &spec[end..]));
        }
    }
    out
}

/// The Spec with one operand written as `(dtype, GL)`: global memory, row-major.
fn plainer_operands(spec: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in spec.match_indices('(') {
        let rest = &spec[at + 1..];
        let Some(dtype) = Dtype::ALL.into_iter().find(|d| rest.starts_with(&format!("{}, ", d.name()))) else {
            continue;
        };
        let Some(close) = matching_paren(spec, at) else { continue };
        let plain = format!("({}, GL)", dtype.name());
        if spec[at..=close] != plain {
            out.push(format!("{}{plain}{}", &spec[..at], &spec[close + 1..]));
        }
    }
    out
}

/// The index of the parenthesis closing the one at `open`.
fn matching_paren(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_shrink_one_dimension_at_a_time() {
        let spec = "(Matmul(1x4x3x2, (f32, GL), (f32, GL), (f32, GL), serial), [64, 512, 32768, 1073741824])";
        let smaller = smaller_shapes(spec);
        assert!(smaller.contains(&spec.replace("1x4x3x2", "1x2x3x2")));
        assert!(smaller.contains(&spec.replace("1x4x3x2", "1x4x1x2")));
        assert!(smaller.contains(&spec.replace("1x4x3x2", "1x4x3x1")));
        assert!(smaller.iter().all(|s| s.len() == spec.len()));
    }

    #[test]
    fn operands_become_plain_one_at_a_time() {
        let spec =
            "(Move(4x4, (f32, L1, col_major), (bf16, VRF, row_major, v8), serial), [64, 512, 32768, 1073741824])";
        let plainer = plainer_operands(spec);
        assert_eq!(plainer.len(), 2);
        assert!(plainer[0].contains("Move(4x4, (f32, GL), (bf16, VRF"));
        assert!(plainer[1].contains("(f32, L1, col_major), (bf16, GL), serial"));
    }
}
