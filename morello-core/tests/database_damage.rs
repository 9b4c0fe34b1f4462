//! Damaged database files are always detected: every single-bit flip anywhere in a real file,
//! every truncation and appended bytes make loading report the file corrupt and give an empty
//! database, never one with other answers; the header is covered by the checksum, and checked.

use morello_core::db::Database;
use morello_core::db::file::{self, DbFileError, LoadReport};
use morello_core::search::Synthesizer;
use morello_core::spec::Spec;
use morello_core::target::X86_AVX2;
use std::path::{Path, PathBuf};

const MAGIC_LEN: usize = file::MAGIC.len();
const CHECKSUM_LEN: usize = 8;

/// A file named `name` in a directory of its own (tests run at once, and each removes its
/// directory).
fn scratch_file(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("morello-damage-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The bytes of a small real database file (one small Matmul's memo table), saved to `path`.
fn small_database_file(path: &Path) -> Vec<u8> {
    let mut synth = Synthesizer::new(&X86_AVX2);
    let spec: Spec = "(Matmul(1x2x2x2, (f32, GL), (f32, GL), (f32, GL)), [16, 64, 256, 512])".parse().unwrap();
    synth.optimal_cost(&spec);
    let mut db = synth.into_database();
    let _ = std::fs::remove_file(path);
    file::save(&mut db, path).unwrap();
    let bytes = std::fs::read(path).unwrap();
    let (reloaded, report) = file::load(path, &X86_AVX2);
    assert!(matches!(report, LoadReport::Loaded) && reloaded.get(&spec).is_some(), "{report:?}");
    assert!(bytes.len() < 32 * 1024, "the file is larger than this test expects: {} bytes", bytes.len());
    bytes
}

/// Decodes `bytes` as `load` does after reading a file: it must be reported corrupt. Returns
/// the reason.
fn assert_rejected(path: &Path, bytes: &[u8], what: &str) -> String {
    match file::decode(bytes, &X86_AVX2, path) {
        Err(DbFileError::Corrupt { reason, .. }) => reason,
        Err(other) => panic!("{what}: reported {other}, not corrupt"),
        Ok(db) => panic!("{what}: accepted, with {:?}", db.stats()),
    }
}

/// Writes `bytes` to a new file beside `path` and loads it: it must be reported corrupt and
/// give an empty database. (A new file each time: ext4 flushes a file truncated and rewritten
/// in place to disk, which made every damaged file cost milliseconds.)
fn assert_rejected_on_disk(path: &Path, bytes: &[u8], what: &str) {
    let damaged = path.with_extension("damaged.morellodb");
    std::fs::write(&damaged, bytes).unwrap();
    let (db, report) = file::load(&damaged, &X86_AVX2);
    std::fs::remove_file(&damaged).unwrap();
    assert_empty(&db, what);
    assert!(matches!(report, LoadReport::Rebuilt(DbFileError::Corrupt { .. })), "{what}: reported {report:?}");
}

/// Every how many positions damage is also checked through a file on disk.
const ON_DISK_EVERY: usize = 257;

fn assert_empty(db: &Database, what: &str) {
    assert!(db.is_empty() && db.stats() == Default::default(), "{what}: the database is not empty");
    assert!(db.stages().is_empty(), "{what}: the database has stages");
}

/// FNV-1a 64, as the file format documents its checksum.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// Every bit of the file flipped in turn: always reported corrupt (and, loaded from disk,
/// empty),
/// by the magic for the first eight bytes and by the checksum everywhere else (the header with
/// its format version, target and fingerprint included).
#[test]
fn every_bit_flip_is_detected() {
    let path = scratch_file("bit-flips.morellodb");
    let good = small_database_file(&path);
    for byte in 0..good.len() {
        for bit in 0..8 {
            let mut bad = good.clone();
            bad[byte] ^= 1 << bit;
            let what = format!("bit {bit} of byte {byte} of {} flipped", good.len());
            let reason = assert_rejected(&path, &bad, &what);
            if byte % ON_DISK_EVERY == 0 && bit == 0 {
                assert_rejected_on_disk(&path, &bad, &what);
            }
            let expected = if byte < MAGIC_LEN { "not a Morello database" } else { "checksum mismatch" };
            assert!(reason.contains(expected), "{what}: {reason}");
        }
    }
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}

/// Any other value of any one byte of the header or of the checksum, decoded in memory: never
/// accepted (FNV-1a's guarantee for single-byte changes; see `db::file`).
#[test]
fn every_value_of_every_header_and_checksum_byte_is_detected() {
    let path = scratch_file("byte-values.morellodb");
    let good = small_database_file(&path);
    // The magic, the header (a u32, a string of at most 32 bytes and a u64) and the start of
    // the body; then the checksum.
    let header_end = (MAGIC_LEN + 4 + 8 + 32 + 8 + 16).min(good.len() - CHECKSUM_LEN);
    let positions = (0..header_end).chain(good.len() - CHECKSUM_LEN..good.len());
    for byte in positions {
        for value in 0..=u8::MAX {
            if value == good[byte] {
                continue;
            }
            let mut bad = good.clone();
            bad[byte] = value;
            let decoded = file::decode(&bad, &X86_AVX2, &path);
            assert!(
                matches!(decoded, Err(DbFileError::Corrupt { .. })),
                "byte {byte} set to {value:#04x}: {:?}",
                decoded.map(|db| db.stats())
            );
        }
    }
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}

/// The file cut at every length, and with bytes appended (zeros, a pattern, a second copy, and
/// eight bytes that make a valid checksum of the whole original file): always corrupt.
#[test]
fn truncated_and_extended_files_are_detected() {
    let path = scratch_file("lengths.morellodb");
    let good = small_database_file(&path);
    for cut in 0..good.len() {
        let what = format!("cut to {cut} of {} bytes", good.len());
        assert_rejected(&path, &good[..cut], &what);
        if cut % ON_DISK_EVERY == 0 {
            assert_rejected_on_disk(&path, &good[..cut], &what);
        }
    }
    let mut tails: Vec<Vec<u8>> = (1..=24).map(|n| vec![0; n]).collect();
    tails.extend((1..=24).map(|n| (0..n).map(|i| (i * 37 + 11) as u8).collect()));
    tails.push(good.clone());
    // The original file then its own checksum: the checksum matches, and only decoding, which
    // must consume the body exactly, can tell.
    tails.push(fnv1a(&good).to_le_bytes().to_vec());
    for tail in tails {
        let extended = [good.as_slice(), &tail].concat();
        let what = format!("{} bytes appended", tail.len());
        assert_rejected(&path, &extended, &what);
        assert_rejected_on_disk(&path, &extended, &what);
    }
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}

/// The checksum is FNV-1a 64 over everything before it, and the header's fields are checked
/// once it matches: a file whose format version was changed and its checksum recomputed is
/// stale, not loaded.
#[test]
fn the_checksum_covers_the_header_and_the_header_is_checked() {
    let path = scratch_file("header.morellodb");
    let good = small_database_file(&path);
    let (content, sum) = good.split_at(good.len() - CHECKSUM_LEN);
    assert_eq!(fnv1a(content).to_le_bytes(), sum, "the checksum is FNV-1a 64 of magic, header and body");
    assert_eq!(&content[..MAGIC_LEN], file::MAGIC);
    // The header starts with the format version, a little-endian u32.
    assert_eq!(content[MAGIC_LEN..MAGIC_LEN + 4], file::FORMAT_VERSION.to_le_bytes());
    let mut other_version = content.to_vec();
    other_version[MAGIC_LEN..MAGIC_LEN + 4].copy_from_slice(&(file::FORMAT_VERSION + 1).to_le_bytes());
    let resummed = [other_version.as_slice(), &fnv1a(&other_version).to_le_bytes()].concat();
    std::fs::write(&path, resummed).unwrap();
    let (db, report) = file::load(&path, &X86_AVX2);
    assert_empty(&db, "another format version");
    assert!(
        matches!(&report, LoadReport::Rebuilt(DbFileError::Stale { reason, .. }) if reason.contains("format")),
        "{report:?}"
    );
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}
