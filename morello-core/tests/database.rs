//! The spatial database: answers survive puts, merges, files and concurrent writers, and every
//! answer it gives is the exhaustive optimum.

mod common;

use common::limits::{Rng, limit_values};
use morello_core::cost::impl_cost;
use morello_core::db::file::{self, DbFileError, LoadReport};
use morello_core::db::key::{DIMS, Point};
use morello_core::db::stored::StoredValue;
use morello_core::db::table::Table;
use morello_core::db::{Database, key::Location};
use morello_core::level::Level;
use morello_core::limits::MemoryLimits;
use morello_core::search::{Decision, SynthesisError, Synthesizer, actions, exhaustive};
use morello_core::spec::{LogicalSpec, Spec};
use morello_core::target::{Target, X86_AVX2, X86_AVX512};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn scratch_file(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("morello-db-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn random_limits(target: &Target, low: &MemoryLimits, high: &MemoryLimits, rng: &mut Rng) -> Option<MemoryLimits> {
    let mut bytes = [0; 4];
    for level in Level::ALL {
        let values = limit_values(target, level, low.get(level), high.get(level));
        bytes[level.index()] = *values.get(rng.below(values.len() as u64) as usize)?;
    }
    Some(MemoryLimits::new(bytes, target).unwrap())
}

fn small_logical() -> impl Strategy<Value = LogicalSpec> {
    let dim = prop::sample::select(vec![1u32, 2, 3, 4, 8]);
    let level = prop::sample::select(vec!["GL", "L1"]);
    let dtype = prop::sample::select(vec!["f32", "u32", "bf16"]);
    (prop::bool::ANY, [dim.clone(), dim.clone(), dim], [level.clone(), level.clone(), level], dtype, prop::bool::ANY)
        .prop_map(|(matmul, d, l, t, serial)| {
            let serial = if serial { ", serial" } else { "" };
            let text = if matmul {
                format!(
                    "(Matmul(1x{}x{}x{}, ({t}, {}), ({t}, {}), ({t}, {}){serial}), [64, 512, 32768, 1073741824])",
                    d[0], d[1], d[2], l[0], l[1], l[2]
                )
            } else {
                format!(
                    "(Move({}x{}, ({t}, {}), ({t}, {}, col_major){serial}), [64, 512, 32768, 1073741824])",
                    d[0], d[1], l[0], l[1]
                )
            };
            text.parse::<Spec>().unwrap_or_else(|e| panic!("{text}: {e}")).logical().clone()
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Whatever is put is read back at every limit of its box, from memory and from a file,
    /// and nothing is read outside the boxes.
    #[test]
    fn get_after_put_over_random_specs_and_limits(specs in prop::collection::vec(small_logical(), 1..6), seed in 1u64..u64::MAX) {
        let target = &X86_AVX2;
        let mut rng = Rng(seed);
        let mut db = Database::new(target);
        let mut puts: BTreeMap<LogicalSpec, (MemoryLimits, MemoryLimits, Option<Decision>)> = BTreeMap::new();
        for logical in specs {
            if puts.contains_key(&logical) {
                continue;
            }
            let zero = MemoryLimits::zero();
            let max = target.max_limits();
            let lower = random_limits(target, &zero, &max, &mut rng).unwrap();
            let upper = random_limits(target, &lower, &max, &mut rng).unwrap();
            let spec = Spec::new(logical.clone(), upper);
            let candidates: Vec<_> = actions(&spec, target).into_iter().filter(|a| a.apply(&spec, target).is_ok()).collect();
            let decision = (!candidates.is_empty() && rng.below(5) > 0).then(|| {
                let action = candidates[rng.below(candidates.len() as u64) as usize].clone();
                let cost = morello_core::cost::Cost { main: 1 + rng.below(1 << 20), peak: lower, depth: rng.below(9) as u32 };
                Decision { action, cost }
            });
            db.put(&logical, &lower, &upper, decision.as_ref());
            puts.insert(logical, (lower, upper, decision));
        }
        let path = scratch_file(&format!("get-after-put-{seed}.morellodb"));
        let _ = std::fs::remove_file(&path);
        file::save(&mut db, &path).unwrap();
        let (reloaded, report) = file::load(&path, target);
        prop_assert!(matches!(report, LoadReport::Loaded));
        for (logical, (lower, upper, decision)) in &puts {
            for db in [&db, &reloaded] {
                for _ in 0..8 {
                    let limits = random_limits(target, lower, upper, &mut rng).unwrap();
                    let entry = db.get(&Spec::new(logical.clone(), limits));
                    let entry = entry.unwrap_or_else(|| panic!("{logical} at {limits}: nothing stored; put {decision:?} over [{lower}, {upper}]"));
                    prop_assert_eq!(&entry.decision, decision, "{} at {}", logical, limits);
                    prop_assert!(entry.lower.fits_within(&limits) && limits.fits_within(&entry.upper));
                }
                // Just above the box at one level, nothing is stored (each Spec was put once).
                for level in Level::ALL {
                    let above = limit_values(target, level, upper.get(level) + 1, u64::MAX);
                    if let Some(&next) = above.first() {
                        let mut bytes = upper.bytes();
                        bytes[level.index()] = next;
                        let limits = MemoryLimits::new(bytes, target).unwrap();
                        prop_assert!(db.get(&Spec::new(logical.clone(), limits)).is_none(), "{} at {}", logical, limits);
                    }
                }
            }
        }
        let _ = std::fs::remove_file(&path);
    }
}

fn value(tag: u64) -> StoredValue {
    StoredValue { action: None, intensity: (tag, 1), peak: [0; 4], depth: 0 }
}

fn point(coords: &[u64]) -> Point {
    let mut p = [0.0; DIMS];
    for (slot, &c) in p.iter_mut().zip(coords) {
        *slot = c as f64;
    }
    p
}

/// Unit puts in random order over a 3-d grid, with few distinct values: after merging, every
/// point reads the value first put there, and rectangles are fewer than points.
#[test]
fn merging_never_changes_an_answer() {
    let side = 6u64;
    for seed in 1..40u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut expected: BTreeMap<[u64; 3], u64> = BTreeMap::new();
        let mut table = Table::default();
        for _ in 0..300 {
            let p = [rng.below(side), rng.below(side), rng.below(side)];
            // Mostly regular: a value per half-space, with some noise.
            let tag = if rng.below(8) == 0 { 2 } else { u64::from(p[0] < 3) };
            let added = table.put(point(&p), point(&p), &value(tag));
            let first = !expected.contains_key(&p);
            assert_eq!(added, u64::from(first), "a point is covered once");
            expected.entry(p).or_insert(tag);
        }
        for x in 0..side {
            for y in 0..side {
                for z in 0..side {
                    let got = table.get(&point(&[x, y, z])).map(|r| r.value.intensity.0);
                    assert_eq!(got, expected.get(&[x, y, z]).copied(), "seed {seed} at ({x}, {y}, {z})");
                }
            }
        }
        let covered: u64 = table.iter().map(|r| r.volume()).sum();
        assert_eq!(covered, expected.len() as u64, "rectangles are disjoint and cover exactly the puts");
        assert!(table.len() < expected.len(), "seed {seed}: {} rectangles for {} points", table.len(), expected.len());
    }
    // A full grid of one value is one rectangle; boxes put over it add nothing.
    let mut table = Table::default();
    for x in 0..4 {
        for y in 0..4 {
            table.put(point(&[x, y]), point(&[x, y]), &value(7));
        }
    }
    assert_eq!(table.len(), 1);
    assert_eq!(table.put(point(&[1, 1]), point(&[2, 3]), &value(8)), 0);
    assert_eq!(table.len(), 1);
}

const SOLVED: [&str; 5] = [
    "(Matmul(1x2x2x2, (f32, GL), (f32, GL), (f32, GL)), [16, 64, 256, 512])",
    "(Matmul(1x2x4x2, (f32, GL), (f32, L1), (f32, GL)), [32, 128, 512, 1024])",
    "(Move(2x8, (f32, GL), (f32, GL, col_major)), [16, 64, 256, 512])",
    "(MatmulAccum(1x2x2x8, (f32, L1), (f32, L1), (f32, L1)), [32, 128, 1024, 0])",
    "(Matmul(1x4x4x4, (f32, L1), (f32, L1), (f32, L1)), [32, 128, 1024, 0])",
];

/// After synthesis, merging and a round trip through a file, every answer the database gives
/// — at limits anywhere, not only where the search ran — is the exhaustive optimum, and
/// decisions stay valid from the limits they were found at down to their peaks.
#[test]
fn database_answers_are_exhaustive_optima_at_every_limit_they_cover() {
    let target = &X86_AVX2;
    let mut synth = Synthesizer::new(target);
    for text in SOLVED {
        synth.optimal_cost(&text.parse().unwrap());
    }
    let logicals: Vec<LogicalSpec> = synth.memo().iter().map(|(l, _)| l.clone()).collect();
    let mut db = synth.into_database();
    let path = scratch_file("exhaustive.morellodb");
    let _ = std::fs::remove_file(&path);
    file::save(&mut db, &path).unwrap();
    let (db, _) = file::load(&path, target);
    let stats = db.stats();
    assert!(stats.rectangles < logicals.len(), "merging: {} rectangles for {} Specs", stats.rectangles, logicals.len());

    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    // Exhaustive search is exponential in the limits: sample below these.
    let ceiling = MemoryLimits::from_bytes_unchecked([64, 512, 2048, 2048]);
    let (mut answered, mut down_to_peak) = (0, 0);
    for index in 0..logicals.len().min(400) {
        let logical = &logicals[(index * 7919) % logicals.len()];
        let Some(limits) = random_limits(target, &MemoryLimits::zero(), &ceiling, &mut rng) else { continue };
        let spec = Spec::new(logical.clone(), limits);
        let Some(entry) = db.get(&spec) else { continue };
        let claimed = entry.decision.as_ref().map(|d| d.cost.main);
        let optimum = exhaustive::optimal_cost(&spec, target).map(|c| c.main);
        assert_eq!(claimed, optimum, "the database's answer for {spec} (box [{}, {}])", entry.lower, entry.upper);
        answered += 1;
        if let Some(d) = &entry.decision {
            // The same decision at its own peak: applicable, and optimal there too.
            let at_peak = Spec::new(logical.clone(), d.cost.peak);
            let node = d.action.apply(&at_peak, target);
            assert!(node.is_ok(), "{} does not apply at its peak {}", d.action, d.cost.peak);
            assert_eq!(exhaustive::optimal_cost(&at_peak, target).map(|c| c.main), claimed, "{at_peak}");
            down_to_peak += 1;
        }
    }
    assert!(answered > 60 && down_to_peak > 30, "only {answered} answers ({down_to_peak} with decisions) checked");
    let _ = std::fs::remove_file(&path);
}

/// A warm database gives the same implementations as a cold search, without searching, even
/// offline; offline, a Spec it lacks is an error naming the Spec.
#[test]
fn warm_and_offline_synthesis_match_cold_synthesis() {
    let target = &X86_AVX512;
    let specs: Vec<Spec> = [
        "Matmul(1x8x8x8, (f32, GL), (f32, GL), (f32, GL), serial)",
        "Matmul(1x4x16x8, (f32, GL), (f32, GL), (f32, GL), serial)",
        "Move(8x16, (f32, GL), (f32, GL, col_major), serial)",
    ]
    .iter()
    .map(|t| Spec::parse_for(t, target).unwrap().with_limits(target.max_limits()))
    .collect();
    let mut cold = Synthesizer::with_database(Database::new(target));
    let cold_impls: Vec<String> = specs.iter().map(|s| cold.synthesize(s).unwrap().to_string()).collect();
    let path = scratch_file("warm.morellodb");
    let _ = std::fs::remove_file(&path);
    file::save(&mut cold.into_database(), &path).unwrap();

    for offline in [false, true] {
        let (db, _) = file::load(&path, target);
        let mut warm = Synthesizer::with_database(db);
        warm.set_offline(offline);
        for (spec, expected) in specs.iter().zip(&cold_impls) {
            let imp = warm.synthesize(spec).unwrap();
            assert_eq!(&imp.to_string(), expected, "offline={offline}");
            let cost = impl_cost(&imp, target).unwrap();
            assert!(cost.peak.fits_within(spec.limits()));
        }
        assert_eq!(warm.stats().specs_solved, 0, "offline={offline}: the warm run searched");
        assert!(warm.stats().db_hits > 0);
    }
    let (db, _) = file::load(&path, target);
    let mut offline = Synthesizer::with_database(db);
    offline.set_offline(true);
    let missing = Spec::parse_for("Matmul(1x16x8x8, (f32, GL), (f32, GL), (f32, GL), serial)", target).unwrap();
    match offline.synthesize(&missing) {
        Err(SynthesisError::NotInDatabase { spec }) => assert!(spec.contains("Matmul(1×16×8×8"), "{spec}"),
        other => panic!("expected NotInDatabase, got {other:?}"),
    }
    assert_eq!(offline.stats().specs_solved, 0);
    let _ = std::fs::remove_file(&path);
}

/// Truncated, damaged, foreign and stale files are reported and never trusted; saving over
/// them gives a good file again.
#[test]
fn bad_files_are_detected_and_replaced() {
    let target = &X86_AVX2;
    let mut synth = Synthesizer::new(target);
    let spec: Spec = SOLVED[0].parse().unwrap();
    synth.optimal_cost(&spec);
    let mut db = synth.into_database();
    let path = scratch_file("bad.morellodb");
    let _ = std::fs::remove_file(&path);
    file::save(&mut db, &path).unwrap();
    let good = std::fs::read(&path).unwrap();

    let corrupt = |bytes: &[u8]| {
        std::fs::write(&path, bytes).unwrap();
        file::load(&path, target).1
    };
    for cut in [good.len() - 1, good.len() / 2, 9, 0] {
        let report = corrupt(&good[..cut]);
        assert!(matches!(report, LoadReport::Rebuilt(DbFileError::Corrupt { .. })), "cut at {cut}: {report:?}");
    }
    let mut flipped = good.clone();
    flipped[good.len() / 2] ^= 0x10;
    let report = corrupt(&flipped);
    assert!(matches!(&report, LoadReport::Rebuilt(DbFileError::Corrupt { reason, .. }) if reason.contains("checksum")));
    std::fs::write(&path, &good).unwrap();
    let (_, report) = file::load(&path, &X86_AVX512);
    match report {
        LoadReport::Rebuilt(e @ DbFileError::Stale { .. }) => assert!(e.to_string().contains("x86-avx2"), "{e}"),
        other => panic!("a file of another target must be stale: {other:?}"),
    }

    corrupt(&good[..good.len() / 3]);
    file::save(&mut db, &path).unwrap();
    let (reloaded, report) = file::load(&path, target);
    assert!(matches!(report, LoadReport::Loaded));
    assert!(reloaded.get(&spec).is_some());
    let _ = std::fs::remove_file(&path);
}

const ROLE_ENV: &str = "MORELLO_DB_TEST_ROLE";
const PATH_ENV: &str = "MORELLO_DB_TEST_PATH";

/// The Specs writer `role` synthesizes, in rounds; each round is saved separately.
fn writer_specs(role: u32) -> Vec<Spec> {
    (0..6u32)
        .map(|i| {
            let (m, n) = (1 << (i % 3), 1 << (i / 3));
            let text = if role == 0 {
                format!("(Matmul(1x{m}x2x{n}, (f32, GL), (f32, GL), (f32, GL)), [16, 64, 256, 512])")
            } else {
                format!("(Move({m}x{}, (f32, GL), (f32, GL, col_major)), [16, 64, 256, 512])", 2 * n)
            };
            text.parse().unwrap()
        })
        .collect()
}

/// Not a test on its own: the body of each writer process of
/// `two_processes_saving_at_once_lose_nothing`.
#[test]
#[ignore = "a helper process of two_processes_saving_at_once_lose_nothing, which runs it"]
fn concurrent_writer_process() {
    let (Ok(role), Ok(path)) = (std::env::var(ROLE_ENV), std::env::var(PATH_ENV)) else { return };
    let role: u32 = role.parse().unwrap();
    let path = PathBuf::from(path);
    for spec in writer_specs(role) {
        let (db, _) = file::load(&path, &X86_AVX2);
        let mut synth = Synthesizer::with_database(db);
        synth.optimal_cost(&spec);
        let mut db = synth.into_database();
        db.complete_stage(&format!("writer {role} {spec}"));
        file::save(&mut db, &path).unwrap();
    }
}

#[test]
fn two_processes_saving_at_once_lose_nothing() {
    let path = scratch_file("shared.morellodb");
    let _ = std::fs::remove_file(&path);
    let exe = std::env::current_exe().unwrap();
    let writers: Vec<_> = (0..2u32)
        .map(|role| {
            std::process::Command::new(&exe)
                .args(["--exact", "concurrent_writer_process", "--ignored", "--nocapture", "--test-threads=1"])
                .env(ROLE_ENV, role.to_string())
                .env(PATH_ENV, &path)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for w in writers {
        // Both run before either is waited for; their output stays out of this test's report.
        let out = w.wait_with_output().unwrap();
        let log = || format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "a writer failed:\n{}", log());
    }
    let (db, report) = file::load(&path, &X86_AVX2);
    assert!(matches!(report, LoadReport::Loaded), "{report:?}");
    for role in 0..2 {
        for spec in writer_specs(role) {
            let entry = db.get(&spec).unwrap_or_else(|| panic!("writer {role}'s {spec} was lost"));
            let reference = exhaustive::optimal_cost(&spec, &X86_AVX2).map(|c| c.main);
            assert_eq!(entry.decision.map(|d| d.cost.main), reference, "{spec}");
            assert!(db.stage_done(&format!("writer {role} {spec}")), "writer {role}'s stage mark was lost");
        }
    }
    let _ = std::fs::remove_file(&path);
}

/// A Spec's table and point do not depend on the limits, and its limits read back exactly.
#[test]
fn limits_coordinates_round_trip() {
    for target in [&X86_AVX2, &X86_AVX512] {
        let spec: Spec = Spec::parse_for("Matmul(1x4x8x16, (f32, GL), (f32, L1), (f32, GL))", target).unwrap();
        let location = Location::of(spec.logical());
        let mut rng = Rng(99);
        for _ in 0..200 {
            let limits = random_limits(target, &MemoryLimits::zero(), &target.max_limits(), &mut rng).unwrap();
            let p = location.at(&limits, target);
            assert_eq!(location.limits(&p, target), limits);
        }
    }
}

/// Files store a byte per coordinate: every target's largest limits, and the largest dimension
/// and operand codes a Spec can have, fit.
#[test]
fn every_coordinate_fits_the_byte_a_file_stores() {
    for target in [&X86_AVX2, &X86_AVX512, &morello_core::target::PORTABLE] {
        let spec: Spec = Spec::parse_for("Matmul(1x2147483648x1x1, (f32, GL), (f32, L1), (f32, GL))", target).unwrap();
        let location = Location::of(spec.logical());
        let point = location.at(&target.max_limits(), target);
        assert!(point.iter().all(|&c| (0.0..=255.0).contains(&c)), "{}: {point:?}", target.name);
    }
}

/// Tiles that differ only in whether their rows are whole pages apart cost differently, so
/// they live in different tables.
#[test]
fn paged_operands_have_tables_of_their_own() {
    let text = |paged: &str| format!("Matmul(1x4x8x16, (f32, GL, row_major, c1{paged}), (f32, GL), (f32, GL))");
    let plain = Spec::parse_for(&text(""), &X86_AVX512).unwrap();
    let paged = Spec::parse_for(&text(", paged"), &X86_AVX512).unwrap();
    let (plain, paged) = (Location::of(plain.logical()), Location::of(paged.logical()));
    assert_ne!(plain.key, paged.key);
    assert!(paged.key.to_string().contains("paged") && !plain.key.to_string().contains("paged"), "{}", paged.key);
}
