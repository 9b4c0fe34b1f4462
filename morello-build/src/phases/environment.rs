//! Phase 1: what Cargo tells the build script, and the variables Morello reads.

use crate::SearchSpace;
use crate::database;
use crate::diagnostic::BuildError;
use morello_core::search::SearchMode;
use std::path::PathBuf;

/// The build script's environment.
pub struct Environment {
    /// Cargo's `OUT_DIR`.
    pub out_dir: PathBuf,
    /// The crate's root.
    pub manifest_dir: PathBuf,
    /// The package name (part of every symbol).
    pub package: String,
    /// The architecture the crate is built for.
    pub arch: String,
    /// Whether the target uses the MSVC toolchain.
    pub msvc: bool,
    /// `MORELLO_VERBOSE`.
    pub verbose: bool,
    /// `MORELLO_OFFLINE`.
    pub offline: bool,
    /// The search mode (slack and space).
    pub search: SearchMode,
    /// Where the databases are.
    pub db_dir: PathBuf,
}

impl Environment {
    /// Reads the environment, telling Cargo which variables the build depends on; `space` is
    /// the build's search space unless `MORELLO_SEARCH_SPACE` says otherwise.
    pub fn read(space: SearchSpace) -> Result<Environment, BuildError> {
        let env = |name: &str| {
            std::env::var(name).map_err(|_| {
                BuildError::build(format!("morello-build must run from a build script (`{name}` is not set)"))
            })
        };
        let out_dir = PathBuf::from(env("OUT_DIR")?);
        let manifest_dir = PathBuf::from(env("CARGO_MANIFEST_DIR")?);
        let package = env("CARGO_PKG_NAME")?;
        for variable in [
            "MORELLO_VERBOSE",
            database::DB_DIR_ENV,
            database::OFFLINE_ENV,
            database::SLACK_ENV,
            database::SEARCH_SPACE_ENV,
        ] {
            println!("cargo::rerun-if-env-changed={variable}");
        }
        let search = database::search_mode(space).map_err(BuildError::build)?;
        Ok(Environment {
            db_dir: database::directory(&out_dir),
            out_dir,
            manifest_dir,
            package,
            arch: std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default(),
            msvc: std::env::var("CARGO_CFG_TARGET_ENV").is_ok_and(|e| e == "msvc"),
            verbose: std::env::var_os("MORELLO_VERBOSE").is_some(),
            offline: database::offline(),
            search,
        })
    }
}
