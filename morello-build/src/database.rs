//! Where build scripts keep the synthesis database, and how they open and save it.
//!
//! One file per target, `<dir>/<target>.morellodb` (`<dir>/<target>.slack<P>.morellodb` for
//! results found with a slack of `P` percent, which are not optima and are kept apart).
//! `<dir>` is `$MORELLO_DB_DIR` if set (a team's shared database, or one committed to the
//! repository), else `morello/` in Cargo's target directory, shared by every crate of the
//! workspace. With `MORELLO_OFFLINE=1` the build never synthesizes: kernels come from the
//! database or the build fails, naming the remedy — the way sqlx's offline query data works.

use morello_core::db::Database;
use morello_core::db::file::{self, LoadReport};
use morello_core::search::Slack;
use morello_core::target::Target;
use std::path::{Path, PathBuf};

/// Environment variable naming the database directory.
pub const DB_DIR_ENV: &str = "MORELLO_DB_DIR";
/// Environment variable that turns synthesis off.
pub const OFFLINE_ENV: &str = "MORELLO_OFFLINE";

/// Environment variable that lets synthesis return implementations up to this many percent
/// above the optimum, for a faster search (see [`Slack`]).
pub const SLACK_ENV: &str = "MORELLO_SLACK";

/// The directory under Cargo's target directory that holds the databases by default.
pub const SUBDIRECTORY: &str = "morello";

/// The database directory for a build script whose `OUT_DIR` is `out_dir`.
pub fn directory(out_dir: &Path) -> PathBuf {
    directory_from_env().unwrap_or_else(|| target_dir(out_dir).join(SUBDIRECTORY))
}

/// The directory `$MORELLO_DB_DIR` names, if set.
pub fn directory_from_env() -> Option<PathBuf> {
    std::env::var_os(DB_DIR_ENV).filter(|d| !d.is_empty()).map(PathBuf::from)
}

/// Whether offline mode is on (`MORELLO_OFFLINE` set to anything but empty or `0`).
pub fn offline() -> bool {
    std::env::var(OFFLINE_ENV).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// The slack `MORELLO_SLACK` asks for: exact if unset or empty; an error message naming the
/// variable if it is not a percentage.
pub fn slack() -> Result<Slack, String> {
    match std::env::var(SLACK_ENV) {
        Ok(text) if !text.trim().is_empty() => text.parse().map_err(|e| format!("error: morello: {SLACK_ENV}: {e}")),
        _ => Ok(Slack::EXACT),
    }
}

/// The database file of `target` in `dir` for results found with `slack`.
pub fn path(dir: &Path, target: &Target, slack: Slack) -> PathBuf {
    dir.join(format!("{}{}.morellodb", target.name, slack_tag(slack)))
}

/// Whether the name of `file` says it holds results found with `slack`, as [`path`] names
/// them: `.slack<P>.` in it for a slack of `P` percent, no `.slack` at all for optima.
pub fn named_for(file: &Path, slack: Slack) -> bool {
    let name = file.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    if slack.is_exact() { !name.contains(SLACK_TAG) } else { name.contains(&format!("{}.", slack_tag(slack))) }
}

/// What marks a database file of results found with slack.
const SLACK_TAG: &str = ".slack";

/// The part of a database file's name after the target that says which slack its results were
/// found with: nothing for optima.
fn slack_tag(slack: Slack) -> String {
    if slack.is_exact() { String::new() } else { format!("{SLACK_TAG}{}", slack.as_percent()) }
}

/// Cargo's target directory: the ancestor of `OUT_DIR` holding Cargo's `CACHEDIR.TAG`; if
/// there is none (not run by Cargo), `OUT_DIR` itself.
fn target_dir(out_dir: &Path) -> PathBuf {
    out_dir.ancestors().find(|d| d.join("CACHEDIR.TAG").is_file()).unwrap_or(out_dir).to_owned()
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
    file::save(db, path).map_err(|e| format!("error: morello: cannot save the synthesis database: {e}"))
}
