//! A complete implementation printed with the cost the model gives every node, how often the
//! node runs, and its share of the whole: where the model puts an implementation's cost, to read
//! beside measurements (why the search preferred one schedule to another).

use super::{Cost, node_cost};
use crate::imp::{Impl, ImplNode};
use crate::target::Target;
use std::fmt::Write;

/// One node of the tree: its depth, description, cost per run and number of runs.
struct Line {
    depth: usize,
    description: String,
    cost: u64,
    runs: u64,
}

/// `imp` as an indented tree, one node per line with its cost per run, how many times it runs
/// in one run of `imp`, and the share of `imp`'s cost those runs make up, as
/// `tile 1×1×8×512  [cost 16064 × 8192 runs, 31.2%]`; `None` if `imp` is not complete. A
/// node's share includes its children's; what a node adds itself (a loop's unprefetched lines
/// and fills, a move's copy) is its share minus theirs.
pub fn cost_tree(imp: &Impl, target: &Target) -> Option<String> {
    let mut lines = Vec::new();
    let total = annotate(imp, target, 0, 1, &mut lines)?.main.max(1);
    let mut out = String::new();
    for Line { depth, description, cost, runs } in lines {
        let share = 100.0 * cost as f64 * runs as f64 / total as f64;
        let runs = if runs == 1 { String::new() } else { format!(" × {runs} runs") };
        let _ = writeln!(out, "{:indent$}{description}  [cost {cost}{runs}, {share:.1}%]", "", indent = depth * 2);
    }
    Some(out)
}

/// Appends the lines of `imp` (which runs `runs` times), parents before children; returns its
/// cost.
fn annotate(imp: &Impl, target: &Target, depth: usize, runs: u64, lines: &mut Vec<Line>) -> Option<Cost> {
    if matches!(imp.node, ImplNode::Spec) {
        return None;
    }
    let at = lines.len();
    lines.push(Line { depth, description: imp.describe_node(), cost: 0, runs });
    // A loop runs its main body once per full tile; every other child runs once per run.
    let body_runs = match &imp.node {
        ImplNode::Loop(l) => l.full_tiles(imp.spec.shape()),
        _ => 1,
    };
    let mut children = Vec::new();
    for (i, child) in imp.children().into_iter().enumerate() {
        let child_runs = if i == 0 { runs.saturating_mul(body_runs) } else { runs };
        children.push(annotate(child, target, depth + 1, child_runs, lines)?);
    }
    let cost = node_cost(&imp.spec, &imp.node, &children, target);
    lines[at].cost = cost.main;
    Some(cost)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::Synthesizer;
    use crate::spec::Spec;
    use crate::target::X86_AVX512;

    #[test]
    fn every_node_is_listed_with_its_cost_and_runs() {
        let spec = Spec::parse_for("Matmul(1x8x8x8, (f32, GL), (f32, GL), (f32, GL), serial)", &X86_AVX512).unwrap();
        let imp = Synthesizer::new(&X86_AVX512).synthesize(&spec).unwrap();
        let tree = cost_tree(&imp, &X86_AVX512).unwrap();
        let lines: Vec<&str> = tree.lines().collect();
        let mut count = 0;
        imp.visit(&mut |_| count += 1);
        assert_eq!(lines.len(), count, "{tree}");
        let total = crate::cost::impl_cost(&imp, &X86_AVX512).unwrap().main;
        assert!(lines[0].ends_with(&format!("[cost {total}, 100.0%]")), "{tree}");
        // Children are indented under their parent, and the body of a loop runs once per tile.
        assert!(lines[1].starts_with("  ") && !lines[0].starts_with(' '), "{tree}");
        let loop_line = lines.iter().position(|l| l.trim_start().starts_with("tile ")).expect("a loop");
        assert!(lines[loop_line + 1].contains(" runs, "), "{tree}");
    }

    #[test]
    fn incomplete_implementations_have_no_tree() {
        let spec = Spec::parse_for("Matmul(1x8x8x8, (f32, GL), (f32, GL), (f32, GL))", &X86_AVX512).unwrap();
        assert!(cost_tree(&Impl::leaf(spec), &X86_AVX512).is_none());
    }
}
