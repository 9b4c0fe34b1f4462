//! README's "Using Morello in a crate" compiles and runs verbatim: its code blocks, each
//! starting with a comment that names its file, are written out as a crate beside a link to
//! this repository (the README's `path = "../morello"`), which is then built and run.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's root (this crate's manifest directory).
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The section of README that holds the crate.
const SECTION: &str = "## Using Morello in a crate";

/// The fenced code blocks of `section`: (file named by the first line's comment, text).
fn files_of(section: &str) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut blocks = section.split("```").skip(1).step_by(2);
    for block in blocks.by_ref() {
        // The opening fence's language tag, then the lines.
        let Some((_, body)) = block.split_once('\n') else { continue };
        let first = body.lines().next().unwrap_or_default();
        let name = first.trim_start_matches("//").trim_start_matches('#').trim();
        assert!(!name.is_empty() && !name.contains(' '), "a code block that names no file: {first:?}");
        files.push((name.to_owned(), body.to_owned()));
    }
    files
}

/// README's section, up to the next heading of the same level.
fn readme_section() -> String {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let start = readme.find(SECTION).unwrap_or_else(|| panic!("README.md has no `{SECTION}`"));
    let rest = &readme[start + SECTION.len()..];
    let end = rest.find("\n## ").unwrap_or(rest.len());
    rest[..end].to_owned()
}

/// Writes the crate to `dir/my-app`, with `dir/morello` linking to this repository.
fn write_crate(dir: &Path) -> PathBuf {
    let app = dir.join("my-app");
    let _ = std::fs::remove_dir_all(&app);
    for (name, text) in files_of(&readme_section()) {
        let path = app.join(&name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
    }
    let link = dir.join("morello");
    if !link.exists() {
        std::os::unix::fs::symlink(root(), &link).unwrap();
    }
    app
}

#[test]
fn the_readme_names_each_file_of_a_whole_crate() {
    let names: Vec<String> = files_of(&readme_section()).into_iter().map(|(name, _)| name).collect();
    assert_eq!(names, ["Cargo.toml", "src/kernels.rs", "build.rs", "src/main.rs"]);
}

#[test]
fn the_readme_crate_builds_and_runs() {
    // Outside the repository, so that Cargo does not take it for a member of this workspace;
    // its build goes to a target directory of its own under this workspace's.
    // The same path every time, so that a second run rebuilds only the crate itself.
    let dir = std::env::temp_dir().join("morello-readme-snippet");
    std::fs::create_dir_all(&dir).unwrap();
    let app = write_crate(&dir);
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args(["run", "--quiet"])
        .current_dir(&app)
        .env("CARGO_TARGET_DIR", root().join("target/readme-snippet"))
        .env_remove("MORELLO_DB_DIR")
        .output()
        .expect("running cargo");
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "README's crate failed:\n{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("Matmul(1×64×64×64") && stdout.trim_end().ends_with(": ok"), "{stdout}");
}
