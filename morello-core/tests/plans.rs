//! Plan snapshots: each file in `tests/plans/` holds a Spec, a target and a search space in its
//! header, and the implementation the search picks for them, printed with every node's cost
//! (`morello_core::cost::cost_tree`). A change to the cost model or the search that changes a
//! plan fails here and shows as a reviewable diff of these files.
//!
//! `MORELLO_BLESS=1 cargo test -p morello-core --test plans` rewrites every file's plan from
//! its header; a new snapshot is a file with the header alone, blessed. Each file records the
//! cost model's version ([`COST_MODEL_VERSION`]) it was blessed under, and a changed plan is not
//! blessed under the version it was recorded with: what is optimal changed, so databases of the
//! old version must be rebuilt, which the version bump makes happen.

use morello_core::cost::{COST_MODEL_VERSION, cost_tree};
use morello_core::search::{SearchMode, SearchSpace, Slack, Synthesizer};
use morello_core::spec::Spec;
use morello_core::target::TargetId;
use std::path::{Path, PathBuf};

/// The header lines: `# key: value`.
const HEADER: &str = "# ";

/// One snapshot file: what to synthesize, and the plan it held.
struct Snapshot {
    path: PathBuf,
    header: String,
    target: TargetId,
    spec: String,
    space: SearchSpace,
    /// The cost model's version the plan was blessed under, if recorded.
    version: Option<u32>,
    plan: String,
}

impl Snapshot {
    fn read(path: &Path) -> Snapshot {
        let text = std::fs::read_to_string(path).unwrap();
        let (mut header, mut plan) = (String::new(), String::new());
        let (mut target, mut spec, mut space, mut version) = (None, None, SearchSpace::Fast, None);
        for line in text.lines() {
            match line.strip_prefix(HEADER).and_then(|l| l.split_once(": ")) {
                Some((key, value)) if plan.is_empty() => {
                    match key {
                        "target" => target = TargetId::from_name(value),
                        "spec" => spec = Some(value.to_owned()),
                        "space" => space = value.parse().unwrap_or_else(|e| panic!("{}: {e}", path.display())),
                        // Written again on blessing.
                        "cost model" => {
                            version = Some(value.parse().unwrap_or_else(|e| panic!("{}: {e}", path.display())));
                            continue;
                        }
                        other => panic!("{}: unknown header `{other}`", path.display()),
                    }
                    header.push_str(line);
                    header.push('\n');
                }
                _ => {
                    plan.push_str(line);
                    plan.push('\n');
                }
            }
        }
        let what = |field| format!("{}: the header names no {field}", path.display());
        Snapshot {
            path: path.to_path_buf(),
            header,
            target: target.unwrap_or_else(|| panic!("{}", what("known target"))),
            spec: spec.unwrap_or_else(|| panic!("{}", what("spec"))),
            space,
            version,
            plan,
        }
    }

    /// The plan the search picks now: its cost, then the tree.
    fn synthesize(&self) -> String {
        let target = self.target.target();
        let spec = Spec::parse_for(&self.spec, target).unwrap_or_else(|e| panic!("{}: {e}", self.path.display()));
        let mut synth = Synthesizer::new(target);
        synth.set_search_mode(SearchMode { slack: Slack::EXACT, space: self.space });
        let imp = synth.synthesize(&spec).unwrap_or_else(|e| panic!("{}: {e}", self.path.display()));
        let cost = morello_core::cost::impl_cost(&imp, target).expect("a synthesized implementation is complete").main;
        format!("cost {cost}\n{}", cost_tree(&imp, target).expect("a synthesized implementation is complete"))
    }
}

/// The snapshot files, sorted.
fn snapshot_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/plans");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "plan"))
        .collect();
    files.sort();
    files
}

/// The first line where `expected` and `actual` differ, both shown.
fn first_difference(expected: &str, actual: &str) -> String {
    let (mut e, mut a) = (expected.lines(), actual.lines());
    for n in 1.. {
        match (e.next(), a.next()) {
            (None, None) => break,
            (x, y) if x == y => {}
            (x, y) => {
                return format!(
                    "line {n} of the plan:\n  was: {}\n  now: {}",
                    x.unwrap_or("(end)"),
                    y.unwrap_or("(end)")
                );
            }
        }
    }
    "no difference".to_owned()
}

#[test]
fn the_search_picks_the_plans_on_record() {
    let bless = std::env::var_os("MORELLO_BLESS").is_some();
    let files = snapshot_files();
    assert!(files.len() >= 10, "expected the benchmark's shapes in tests/plans/, found {} files", files.len());
    let mut changed = Vec::new();
    for path in &files {
        let snapshot = Snapshot::read(path);
        let plan = snapshot.synthesize();
        if plan == snapshot.plan && snapshot.version.is_some() {
            continue;
        }
        let new_plan = plan != snapshot.plan && !snapshot.plan.is_empty();
        if bless && new_plan && snapshot.version == Some(COST_MODEL_VERSION) {
            changed.push(format!(
                "{}: the plan changed under cost model {COST_MODEL_VERSION}; bump \
                 morello_core::cost::COST_MODEL_VERSION before blessing ({})",
                path.display(),
                first_difference(&snapshot.plan, &plan)
            ));
        } else if bless || snapshot.plan.is_empty() {
            std::fs::write(path, format!("{}# cost model: {COST_MODEL_VERSION}\n{plan}", snapshot.header)).unwrap();
        } else if plan == snapshot.plan {
            changed.push(format!("{}: records no cost-model version", path.display()));
        } else {
            changed.push(format!("{}: {}", path.display(), first_difference(&snapshot.plan, &plan)));
        }
    }
    assert!(
        changed.is_empty(),
        "the search picks other plans than on record (review, then rewrite them with MORELLO_BLESS=1):\n{}",
        changed.join("\n")
    );
}
