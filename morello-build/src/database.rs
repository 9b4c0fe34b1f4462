//! Where build scripts keep the synthesis database, and how they open and save it.
//!
//! One file per target and [`SearchMode`]: `<dir>/<target>.morellodb` for optima;
//! `<dir>/<target>.slack<P>.morellodb` for results found with a slack of `P` percent and
//! `<dir>/<target>.fixed-output-layouts.morellodb` for results of a narrowed search space
//! (`<target>.slack<P>.fixed-output-layouts.morellodb` for both), which are not optima and are
//! kept apart.
//! `<dir>` is `$MORELLO_DB_DIR` if set (a team's shared database, or one committed to the
//! repository), else `morello/` in Cargo's target directory, shared by every crate of the
//! workspace. With `MORELLO_OFFLINE=1` the build never synthesizes: kernels come from the
//! database or the build fails, naming the remedy — the way sqlx's offline query data works.

use morello_core::db::Database;
use morello_core::db::file::{self, LoadReport};
use morello_core::search::{SearchMode, SearchSpace, Slack};
use morello_core::target::Target;
use std::path::{Path, PathBuf};

/// Environment variable naming the database directory.
pub const DB_DIR_ENV: &str = "MORELLO_DB_DIR";
/// Environment variable that turns synthesis off.
pub const OFFLINE_ENV: &str = "MORELLO_OFFLINE";

/// Environment variable that lets synthesis return implementations up to this many percent
/// above the optimum, for a faster search (see [`Slack`]).
pub const SLACK_ENV: &str = "MORELLO_SLACK";

/// Environment variable naming a narrowed search space, for a faster search (see
/// [`SearchSpace`]).
pub const SEARCH_SPACE_ENV: &str = "MORELLO_SEARCH_SPACE";

/// The directory under Cargo's target directory that holds the databases by default.
pub const SUBDIRECTORY: &str = "morello";

/// The database directory for a build script whose `OUT_DIR` is `out_dir`.
pub fn directory(out_dir: &Path) -> PathBuf {
    directory_from_env().unwrap_or_else(|| default_directory(out_dir))
}

/// The database directory for a build script whose `OUT_DIR` is `out_dir` when
/// `$MORELLO_DB_DIR` is not set: `morello/` in Cargo's target directory.
fn default_directory(out_dir: &Path) -> PathBuf {
    target_dir(out_dir).join(SUBDIRECTORY)
}

/// The directory `$MORELLO_DB_DIR` names, if set.
pub fn directory_from_env() -> Option<PathBuf> {
    std::env::var_os(DB_DIR_ENV).filter(|d| !d.is_empty()).map(PathBuf::from)
}

/// Whether offline mode is on (`MORELLO_OFFLINE` set to anything but empty or `0`).
pub fn offline() -> bool {
    std::env::var(OFFLINE_ENV).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// The search mode `MORELLO_SLACK` and `MORELLO_SEARCH_SPACE` ask for, or an error message
/// naming the variable whose value is wrong. Where unset or empty: no slack, and `space`.
pub fn search_mode(space: SearchSpace) -> Result<SearchMode, String> {
    let var = |name: &str| std::env::var(name).ok().filter(|text| !text.trim().is_empty());
    let slack = match var(SLACK_ENV) {
        Some(text) => text.parse().map_err(|e| format!("morello: {SLACK_ENV}: {e}"))?,
        None => Slack::EXACT,
    };
    let space = match var(SEARCH_SPACE_ENV) {
        Some(text) => text.parse().map_err(|e| format!("morello: {SEARCH_SPACE_ENV}: {e}"))?,
        None => space,
    };
    Ok(SearchMode { slack, space })
}

/// The part of a database file's name after the target that says how its results were found:
/// nothing for optima.
fn tag(mode: SearchMode) -> String {
    let mut tag = String::new();
    if !mode.slack.is_exact() {
        tag += &format!("{SLACK_TAG}{}", mode.slack.as_percent());
    }
    if !mode.space.is_full() {
        tag += &format!(".{}", mode.space.name());
    }
    tag
}

/// The database file of `target` in `dir` for results found in `mode`.
pub fn path(dir: &Path, target: &Target, mode: SearchMode) -> PathBuf {
    dir.join(format!("{}{}.morellodb", target.name, tag(mode)))
}

/// Whether the name of `file` says it holds results found in `mode`, as [`path`] names them:
/// `.slack<P>.` in it for a slack of `P` percent and no `.slack` for none; `.<space>.` for a
/// narrowed search space and no narrowed space's name for the full one.
pub fn named_for(file: &Path, mode: SearchMode) -> bool {
    let name = file.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    let slack_named = if mode.slack.is_exact() {
        !name.contains(SLACK_TAG)
    } else {
        name.contains(&format!("{SLACK_TAG}{}.", mode.slack.as_percent()))
    };
    let space_named = SearchSpace::ALL
        .into_iter()
        .filter(|space| !space.is_full())
        .all(|space| name.contains(&format!(".{space}.")) == (space == mode.space));
    slack_named && space_named
}

/// What marks a database file of results found with slack.
const SLACK_TAG: &str = ".slack";

/// Cargo's target directory: the ancestor of `OUT_DIR` holding Cargo's `CACHEDIR.TAG`. Cargo
/// writes that tag only into a target directory it creates, so for one that existed before
/// (made by hand, or restored from a cache) the directory above the profile's in Cargo's layout,
/// `<dir>/<profile>/build/<package>-<hash>/out`: otherwise the database would go to `OUT_DIR`,
/// which a changed build script moves, and every such build would search again from scratch.
/// `OUT_DIR` itself when neither applies (not run by Cargo).
fn target_dir(out_dir: &Path) -> PathBuf {
    if let Some(tagged) = out_dir.ancestors().find(|d| d.join("CACHEDIR.TAG").is_file()) {
        return tagged.to_owned();
    }
    let build = out_dir.parent().and_then(Path::parent).filter(|d| d.file_name() == Some("build".as_ref()));
    build.and_then(Path::parent).and_then(Path::parent).unwrap_or(out_dir).to_owned()
}

/// Opens `target`'s database at `path`. A corrupt or stale file is reported once, as a
/// Cargo warning, and replaced at the next save.
pub fn open(path: &Path, target: &'static Target) -> Database {
    let (db, report) = file::load(path, target);
    if let LoadReport::Rebuilt(reason) = report {
        println!("cargo::warning=morello: ignoring the synthesis database: {reason}; it will be rebuilt");
    }
    db
}

/// Adds what `db` learned to the file at `path`, keeping what other builds wrote meanwhile.
pub fn save(db: &mut Database, path: &Path) -> Result<(), String> {
    file::save(db, path).map_err(|e| format!("morello: cannot save the synthesis database: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use morello_core::target::X86_AVX512;

    #[test]
    fn the_target_directory_is_found_with_or_without_cargos_tag() {
        let root = std::env::temp_dir().join(format!("morello-target-dir-{}", std::process::id()));
        let out = root.join("target/release/build/crate-0123abcd/out");
        std::fs::create_dir_all(&out).unwrap();
        // A target directory that existed before Cargo's first build: no tag.
        assert_eq!(default_directory(&out), root.join("target/morello"));
        // Where Cargo wrote its tag, the tagged directory is the target directory.
        std::fs::write(root.join("CACHEDIR.TAG"), "Signature: 8a477f597d28d172789f06886806bc55").unwrap();
        assert_eq!(default_directory(&out), root.join("morello"));
        // Not Cargo's layout: `OUT_DIR` itself.
        let elsewhere = std::env::temp_dir().join(format!("morello-out-{}", std::process::id()));
        assert_eq!(target_dir(&elsewhere), elsewhere);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn each_mode_has_its_own_file_and_recognizes_only_it() {
        let slack = Slack::percent(25).unwrap();
        let modes = [
            SearchMode::EXACT,
            SearchMode { slack, space: SearchSpace::Full },
            SearchMode { slack: Slack::EXACT, space: SearchSpace::FixedOutputLayouts },
            SearchMode { slack, space: SearchSpace::FixedOutputLayouts },
        ];
        let names: Vec<PathBuf> = modes.iter().map(|&m| path(Path::new("db"), &X86_AVX512, m)).collect();
        assert_eq!(
            names.iter().map(|p| p.to_string_lossy().into_owned()).collect::<Vec<_>>(),
            [
                "db/x86-avx512.morellodb",
                "db/x86-avx512.slack25.morellodb",
                "db/x86-avx512.fixed-output-layouts.morellodb",
                "db/x86-avx512.slack25.fixed-output-layouts.morellodb",
            ]
        );
        for (i, name) in names.iter().enumerate() {
            for (j, &mode) in modes.iter().enumerate() {
                assert_eq!(named_for(name, mode), i == j, "{} for {mode}", name.display());
            }
        }
        let other_slack = SearchMode { slack: Slack::percent(2).unwrap(), space: SearchSpace::Full };
        assert!(!named_for(&names[1], other_slack));
    }
}
