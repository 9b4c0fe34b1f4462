//! Database files: a versioned header, bincode, a checksum, atomic writes and a lock file.
//!
//! Layout of a file: the 8-byte magic `MORELLO\x01`, a bincode [`Header`] (format version,
//! target name, fingerprint of the rewrite set and cost model), the bincode body, and a
//! trailing FNV-1a checksum of everything before it. A file that fails any check is
//! reported (as a [`LoadReport::Rebuilt`]) and treated as empty; the next save replaces it.
//!
//! Sharing: files are only ever replaced whole (a temporary file renamed over), so readers
//! need no lock and never see a partial file. [`save`] takes an exclusive lock on the lock
//! file (the database's path with the extension `lock`: `x86-avx2.lock` for
//! `x86-avx2.morellodb`), re-reads the file, adds its own rectangles to what others wrote
//! meanwhile (answers already on disk win), writes a temporary file beside the database and
//! renames it over. Nothing is locked while synthesizing, so concurrent build scripts only wait
//! for each other's reads and writes, and no one's results are lost.
//!
//! Crashes: a writer killed at any moment leaves either the old file or the new one, never a
//! mix (the rename is atomic), and the OS releases its lock. What it can leave behind is its
//! temporary file; every temporary file present while the lock is held belongs to a writer
//! that died holding it, so [`save`] deletes them before writing its own. Against power loss
//! the temporary file is flushed to disk before the rename, and the directory after it.
//!
//! Checksum: FNV-1a processes a byte `b` as `h = (h ^ b) * P` with `P` odd. Both steps are
//! bijections of the 64-bit state, so two inputs of the same length that differ in exactly one
//! byte reach different states at that byte and keep differing to the end: every single-byte
//! change (in particular every single-bit flip) of the magic, header or body changes the
//! checksum, and a change of the stored checksum itself no longer matches the unchanged rest.
//! Changes of length (truncation, appended bytes) and several damaged bytes are caught with
//! probability 1 - 2⁻⁶⁴ by the checksum, and further by the magic and by decoding, which
//! must consume the body exactly.

use super::Database;
use super::key::TableKey;
use super::table::Rect;
use crate::cost::COST_MODEL_VERSION;
use crate::kernels::KernelKind;
use crate::target::Target;
use serde::{Deserialize, Serialize};
use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use thiserror::Error;

/// The first bytes of every database file.
pub const MAGIC: &[u8; 8] = b"MORELLO\x01";
/// Version of the file format, including the stable decision encoding; files of another
/// version are rebuilt.
pub const FORMAT_VERSION: u32 = 3;

/// What a file records about how its answers were found.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct Header {
    /// [`FORMAT_VERSION`].
    pub format: u32,
    /// The target's name.
    pub target: String,
    /// [`fingerprint`] of the target, kernels and cost model.
    pub fingerprint: u64,
}

#[derive(Serialize, Deserialize)]
struct Body {
    tables: Vec<(TableKey, Vec<Rect>)>,
    stages: Vec<String>,
}

/// Why a database file was not used.
#[derive(Debug, Error)]
pub enum DbFileError {
    /// Reading or writing failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// The file is not a database, is cut short, or its checksum does not match.
    #[error("{path} is corrupt ({reason})")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The file was written by another format version, for another target, or with other
    /// kernels or costs.
    #[error("{path} is stale ({reason})")]
    Stale {
        /// The file.
        path: PathBuf,
        /// What differs.
        reason: String,
    },
}

/// What loading found.
#[derive(Debug)]
pub enum LoadReport {
    /// The file was read.
    Loaded,
    /// There is no file yet.
    Missing,
    /// The file could not be used; the database starts empty and the next save replaces it.
    Rebuilt(DbFileError),
}

/// A fingerprint of everything stored answers depend on that the code can see: format and
/// cost-model versions, the target's parameters and the kernel set. (Which rewrites a decision
/// can name is the format's business: [`FORMAT_VERSION`].)
pub fn fingerprint(target: &Target) -> u64 {
    let kernels: Vec<&str> = KernelKind::ALL.iter().map(|k| k.name()).collect();
    let description = format!("{FORMAT_VERSION} {COST_MODEL_VERSION} {target:?} {kernels:?}");
    fnv1a(description.as_bytes())
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The file's bytes for `db`.
pub fn encode(db: &Database) -> Vec<u8> {
    let header =
        Header { format: FORMAT_VERSION, target: db.target.name.to_owned(), fingerprint: fingerprint(db.target) };
    let body = Body {
        tables: db.tables.iter().map(|(k, t)| (k.clone(), t.iter().cloned().collect())).collect(),
        stages: db.stages.clone(),
    };
    let mut out = MAGIC.to_vec();
    bincode::serialize_into(&mut out, &header).expect("serializing to memory");
    bincode::serialize_into(&mut out, &body).expect("serializing to memory (every coordinate fits a byte)");
    let sum = fnv1a(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// Decodes a file's bytes for `target`.
pub fn decode(bytes: &[u8], target: &'static Target, path: &Path) -> Result<Database, DbFileError> {
    let corrupt = |reason: String| DbFileError::Corrupt { path: path.to_owned(), reason };
    let stale = |reason: String| DbFileError::Stale { path: path.to_owned(), reason };
    if bytes.len() < MAGIC.len() + 8 || &bytes[..MAGIC.len()] != MAGIC {
        return Err(corrupt("not a Morello database file".to_owned()));
    }
    let (content, sum) = bytes.split_at(bytes.len() - 8);
    if fnv1a(content) != u64::from_le_bytes(sum.try_into().expect("8 bytes")) {
        return Err(corrupt("checksum mismatch: truncated or damaged".to_owned()));
    }
    let mut rest = &content[MAGIC.len()..];
    let header: Header = bincode::deserialize_from(&mut rest).map_err(|e| corrupt(format!("header: {e}")))?;
    if header.format != FORMAT_VERSION {
        return Err(stale(format!("format version {}, expected {FORMAT_VERSION}", header.format)));
    }
    if header.target != target.name {
        return Err(stale(format!("written for target {}, not {}", header.target, target.name)));
    }
    if header.fingerprint != fingerprint(target) {
        return Err(stale("written with other kernels or cost model".to_owned()));
    }
    let body: Body = bincode::deserialize_from(&mut rest).map_err(|e| corrupt(format!("body: {e}")))?;
    if !rest.is_empty() {
        return Err(corrupt(format!("{} unexpected bytes after the body", rest.len())));
    }
    Ok(Database::from_parts(target, body.tables, body.stages))
}

/// Loads the database at `path` for `target`. A missing file gives an empty database; an
/// unusable one gives an empty database and the reason.
pub fn load(path: &Path, target: &'static Target) -> (Database, LoadReport) {
    match fs::read(path) {
        Ok(bytes) => match decode(&bytes, target, path) {
            Ok(db) => (db, LoadReport::Loaded),
            Err(e) => (Database::new(target), LoadReport::Rebuilt(e)),
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => (Database::new(target), LoadReport::Missing),
        Err(e) => (Database::new(target), LoadReport::Rebuilt(DbFileError::Io { path: path.to_owned(), source: e })),
    }
}

/// Adds `db`'s answers to the file at `path` (creating it, or replacing a corrupt or stale
/// one), keeping answers already on disk, and leaves `db` holding the union. A file that
/// exists but cannot be read is left alone and the read error returned.
pub fn save(db: &mut Database, path: &Path) -> Result<(), DbFileError> {
    let io_err = |source| DbFileError::Io { path: path.to_owned(), source };
    let dir = directory(path);
    fs::create_dir_all(&dir).map_err(io_err)?;
    let _lock = lock_exclusive(path)?;
    remove_stale_temporaries(path);
    let (mut merged, report) = load(path, db.target);
    // A file that could not be read (as opposed to one that is corrupt or stale) may hold
    // other builds' answers: fail rather than replace it with ours alone.
    if let LoadReport::Rebuilt(error @ DbFileError::Io { .. }) = report {
        return Err(error);
    }
    merged.absorb(db);
    let bytes = encode(&merged);
    let tmp = temporary_path(path);
    let write = || -> io::Result<()> {
        let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(&bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = fs::remove_file(&tmp);
        io_err(e)
    })?;
    sync_directory(&dir);
    *db = merged;
    Ok(())
}

/// The directory holding `path` (`.` for a bare file name).
fn directory(path: &Path) -> PathBuf {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
        _ => PathBuf::from("."),
    }
}

/// Flushes `dir`'s entries, so that a rename into it survives a power loss. Best effort: the
/// new file is in place whether or not this succeeds, and some file systems cannot sync a
/// directory.
fn sync_directory(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// A fresh name for the temporary file of a save to `path`: `<file name>.tmp.<pid>.<n>`,
/// different for every save of every process and thread.
pub fn temporary_path(path: &Path) -> PathBuf {
    static SAVES: AtomicU64 = AtomicU64::new(0);
    let n = SAVES.fetch_add(1, Ordering::Relaxed);
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(format!(".tmp.{}.{n}", std::process::id()));
    path.with_file_name(name)
}

/// Whether `name` is the name of a temporary file of a save to `path`: one
/// [`temporary_path`] gives, or one earlier versions gave (`<stem>.tmp<pid>`, guarded by the
/// same lock file).
pub fn is_temporary_of(name: &str, path: &Path) -> bool {
    let numbers = |s: &str, parts: usize| {
        let fields: Vec<&str> = s.split('.').collect();
        fields.len() == parts && fields.iter().all(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
    };
    let file_name = path.file_name().and_then(|n| n.to_str());
    let current = file_name
        .and_then(|f| name.strip_prefix(f))
        .and_then(|rest| rest.strip_prefix(".tmp."))
        .is_some_and(|rest| numbers(rest, 2));
    let stem = path.file_stem().and_then(|n| n.to_str());
    let legacy = stem
        .and_then(|s| name.strip_prefix(s))
        .and_then(|rest| rest.strip_prefix(".tmp"))
        .is_some_and(|rest| numbers(rest, 1));
    current || legacy
}

/// Deletes the temporary files of saves to `path` that writers killed mid-save left behind.
/// Only call it holding the lock: then no live writer has a temporary file.
fn remove_stale_temporaries(path: &Path) {
    let Ok(entries) = fs::read_dir(directory(path)) else { return };
    for entry in entries.flatten() {
        if entry.file_name().to_str().is_some_and(|name| is_temporary_of(name, path)) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// The lock file guarding writes to `path`, locked. Says so on stderr when it has to wait.
fn lock_exclusive(path: &Path) -> Result<File, DbFileError> {
    let lock_path = path.with_extension("lock");
    let io_err = |source| DbFileError::Io { path: lock_path.clone(), source };
    if let Some(dir) = lock_path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(io_err)?;
    }
    let file = OpenOptions::new().create(true).truncate(false).write(true).open(&lock_path).map_err(io_err)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            eprintln!("morello: waiting for the database lock {}", lock_path.display());
            file.lock().map_err(io_err)?;
        }
        Err(TryLockError::Error(e)) => return Err(io_err(e)),
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The directory a save creates, syncs and sweeps: `.` for a bare file name (whose parent
    /// is the empty path, which cannot be opened).
    #[test]
    fn a_bare_file_name_lives_in_the_current_directory() {
        assert_eq!(directory(Path::new("x86-avx2.morellodb")), Path::new("."));
        assert_eq!(directory(Path::new("db/x86-avx2.morellodb")), Path::new("db"));
        assert_eq!(directory(Path::new("/x86-avx2.morellodb")), Path::new("/"));
    }
}
