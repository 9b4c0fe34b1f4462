//! The documentation stays reference: the guides fit their budgets, every file path they and
//! the code comments name exists, and code comments quote no measured speeds or cost-model
//! versions (those belong in `CHANGELOG.md` and the benchmark's results).

use std::path::{Path, PathBuf};

/// The repository's root (this crate's manifest directory).
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The Markdown guides, relative to the root.
const GUIDES: [&str; 6] = [
    "README.md",
    "CHANGELOG.md",
    "bench/README.md",
    "docs/architecture.md",
    "docs/cost-model.md",
    "docs/precompute.md",
];

/// Directories whose `.rs` files are checked, relative to the root.
const SOURCE_DIRS: [&str; 7] =
    ["src", "morello-core/src", "morello-core/tests", "morello-build/src", "morello-macros/src", "bench/src", "tests"];

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The texts between backticks in `text`.
fn code_spans(text: &str) -> impl Iterator<Item = &str> {
    text.split('`').skip(1).step_by(2)
}

/// Whether `span` names a file of the repository: a path with a directory and one of the
/// extensions the project's files have.
fn is_file_path(span: &str) -> bool {
    const EXTENSIONS: [&str; 7] = [".rs", ".md", ".c", ".h", ".py", ".sh", ".toml"];
    span.contains('/')
        && EXTENSIONS.iter().any(|e| span.ends_with(e))
        && span.chars().all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c))
        && !span.starts_with('/')
}

/// The directories a path in a guide or comment may be relative to: the root, every crate's
/// directory (the ones with a `Cargo.toml`), `morello-core/src` and the file's own directory.
fn bases(file: &Path) -> Vec<PathBuf> {
    let mut bases = vec![root().to_path_buf(), root().join("morello-core/src")];
    for dir in ["morello-core", "morello-build", "morello-macros", "bench", "tests/e2e"] {
        bases.push(root().join(dir));
    }
    for example in std::fs::read_dir(root().join("examples")).into_iter().flatten().flatten() {
        bases.push(example.path());
    }
    if let Some(parent) = file.parent() {
        bases.push(parent.to_path_buf());
    }
    bases
}

/// Files of a user's crate that the guides tell users to write.
const USER_FILES: [&str; 1] = [".cargo/config.toml"];

/// The file paths `text` (from `file`) names that exist under none of its bases.
fn missing_paths(file: &Path, text: &str) -> Vec<String> {
    let bases = bases(file);
    code_spans(text)
        .filter(|span| is_file_path(span) && !USER_FILES.contains(span))
        .filter(|span| !bases.iter().any(|base| base.join(span).exists()))
        .map(|span| format!("{}: `{span}`", file.strip_prefix(root()).unwrap_or(file).display()))
        .collect()
}

/// Whether a comment line quotes a measured speed or a cost-model version.
fn quotes_figures_or_versions(comment: &str) -> bool {
    let words: Vec<&str> = comment.split_whitespace().collect();
    let version = words.windows(2).any(|pair| {
        pair[0].eq_ignore_ascii_case("model") && pair[1].trim_end_matches([',', '.', ';', ')']).parse::<u32>().is_ok()
    });
    // A unit after a number is a measurement; the unit alone names what a field holds.
    let speed = words.windows(2).any(|pair| {
        matches!(pair[1].trim_end_matches([',', '.', ';', ')']), "GFLOP/s" | "GB/s")
            && pair[0].ends_with(|c: char| c.is_ascii_digit())
    });
    version || speed
}

#[test]
fn the_guides_fit_their_budgets() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(readme.lines().count() <= 450, "README.md has {} lines, more than 450", readme.lines().count());
    assert!(readme.len() <= 32 * 1024, "README.md has {} bytes, more than 32 KiB", readme.len());
    let bench = std::fs::read_to_string(root().join("bench/README.md")).unwrap();
    assert!(bench.lines().count() <= 350, "bench/README.md has {} lines, more than 350", bench.lines().count());
}

#[test]
fn every_file_the_guides_and_comments_name_exists() {
    let mut missing = Vec::new();
    let mut checked = 0;
    for guide in GUIDES {
        let path = root().join(guide);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{guide}: {e}"));
        checked += code_spans(&text).filter(|s| is_file_path(s)).count();
        missing.extend(missing_paths(&path, &text));
    }
    for dir in SOURCE_DIRS {
        for file in rust_files(&root().join(dir)) {
            let text = std::fs::read_to_string(&file).unwrap();
            let comments: String =
                text.lines().filter(|l| l.trim_start().starts_with("//")).map(|l| format!("{l}\n")).collect();
            checked += code_spans(&comments).filter(|s| is_file_path(s)).count();
            missing.extend(missing_paths(&file, &comments));
        }
    }
    // The check is not vacuous: the guides and comments name many files.
    assert!(checked > 50, "only {checked} file paths found");
    assert!(missing.is_empty(), "paths that name no file:\n{}", missing.join("\n"));
}

#[test]
fn code_comments_quote_no_measured_speeds_or_model_versions() {
    let mut found = Vec::new();
    for dir in SOURCE_DIRS {
        for file in rust_files(&root().join(dir)) {
            let text = std::fs::read_to_string(&file).unwrap();
            for (n, line) in text.lines().enumerate() {
                let trimmed = line.trim_start();
                if trimmed.starts_with("//") && quotes_figures_or_versions(trimmed) {
                    found.push(format!(
                        "{}:{}: {trimmed}",
                        file.strip_prefix(root()).unwrap_or(&file).display(),
                        n + 1
                    ));
                }
            }
        }
    }
    assert!(found.is_empty(), "comments with measured speeds or cost-model versions:\n{}", found.join("\n"));
}

#[test]
fn the_comment_check_finds_what_it_looks_for() {
    assert!(quotes_figures_or_versions("// ran at 12.5 GFLOP/s"));
    assert!(quotes_figures_or_versions("// read at 33–34 GB/s, against"));
    assert!(!quotes_figures_or_versions("/// The f32 FMA peak, GFLOP/s."));
    assert!(quotes_figures_or_versions("/// under cost model 16, the plan"));
    assert!(quotes_figures_or_versions("//! since model 9."));
    assert!(!quotes_figures_or_versions("/// the cost model charges each line"));
    assert!(is_file_path("cost/l2.rs") && !missing_paths(&root().join("README.md"), "`cost/l2.rs`").is_empty());
    assert!(missing_paths(&root().join("README.md"), "`morello-core/src/cost.rs`").is_empty());
}
