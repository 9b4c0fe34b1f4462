//! The compiler's top-level modules form layers: no module reaches, through the items it uses,
//! back to itself. Each import circle once came from one definition in the wrong layer; this
//! test finds a circle from the `crate::<module>` paths in each module's source (its file and
//! its directory, test modules left out), so a new one fails with the modules it passes
//! through.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Circles known and not opened yet, each as its modules in order (the test fails when one
/// opens, so that it leaves this list).
const KNOWN_CIRCLES: &[&[&str]] = &[];

/// `morello-core/src`.
fn source_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The text of `path` without its `#[cfg(test)]` module (by convention the file's last item)
/// and without comment lines.
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or_default();
    code.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// Every `.rs` file of the top-level module `name`: `name.rs` and the files under `name/`.
fn files_of(name: &str) -> Vec<PathBuf> {
    let mut files = vec![source_dir().join(format!("{name}.rs"))];
    let mut pending = vec![source_dir().join(name)];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.retain(|f| f.exists());
    files
}

/// The top-level modules (files of `src/` but `lib.rs`).
fn modules() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(source_dir())
        .unwrap()
        .flatten()
        .filter_map(|e| e.path().file_stem().map(|s| s.to_string_lossy().into_owned()))
        .filter(|name| name != "lib" && source_dir().join(format!("{name}.rs")).exists())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Which top-level modules each one uses: `crate::<module>` anywhere in its code, and the
/// modules a `use crate::{a, b::c}` group names.
fn uses() -> BTreeMap<String, BTreeSet<String>> {
    let names = modules();
    let mut graph = BTreeMap::new();
    for name in &names {
        let mut used = BTreeSet::new();
        for file in files_of(name) {
            let code = code_of(&file);
            for (i, _) in code.match_indices("crate::") {
                let rest = &code[i + "crate::".len()..];
                let mut targets = Vec::new();
                if let Some(group) = rest.strip_prefix('{') {
                    let group = &group[..group.find('}').unwrap_or(group.len())];
                    targets
                        .extend(group.split(',').map(|p| p.trim().split("::").next().unwrap_or_default().to_owned()));
                } else {
                    targets.push(rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect());
                }
                used.extend(targets.into_iter().filter(|t| t != name && names.contains(t)));
            }
        }
        graph.insert(name.clone(), used);
    }
    graph
}

/// The strongly connected components of more than one module, each sorted.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<Vec<String>> {
    // Two modules are in one component when each reaches the other.
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut pending = vec![from.to_owned()];
        while let Some(m) = pending.pop() {
            for next in &graph[&m] {
                if seen.insert(next.clone()) {
                    pending.push(next.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> = graph.keys().map(|m| (m, reach(m))).collect();
    let mut components = BTreeSet::new();
    for (m, reached) in &reaches {
        let mut component: Vec<String> = reached.iter().filter(|other| reaches[*other].contains(*m)).cloned().collect();
        if component.len() > 1 {
            component.sort();
            components.insert(component);
        }
    }
    components
}

#[test]
fn the_modules_form_layers_but_for_the_known_circles() {
    let graph = uses();
    // The graph is not vacuous: the search uses the cost model, and the cost model the IR.
    assert!(graph["search"].contains("cost") && graph["cost"].contains("imp"), "{graph:?}");
    let found = circles(&graph);
    let known: BTreeSet<Vec<String>> =
        KNOWN_CIRCLES.iter().map(|c| c.iter().map(|m| (*m).to_owned()).collect()).collect();
    let new: Vec<&Vec<String>> = found.iter().filter(|c| !known.contains(*c)).collect();
    let opened: Vec<&Vec<String>> = known.iter().filter(|c| !found.contains(*c)).collect();
    assert!(new.is_empty(), "modules that use each other in a circle: {new:?}\n(uses: {graph:?})");
    assert!(opened.is_empty(), "circles no longer there; take them off KNOWN_CIRCLES: {opened:?}");
}
