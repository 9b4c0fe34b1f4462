//! `morello-db precompute` fills a database bottom-up, stage by stage, and resumes where it
//! stopped.

use morello_build::precompute::{MatmulFamily, precompute};
use morello_core::db::file::{self, LoadReport};
use morello_core::dtype::Dtype;
use morello_core::search::{SearchSpace, Synthesizer};
use morello_core::target::X86_AVX512;

#[test]
fn precompute_fills_stages_and_resumes() {
    let dir = std::env::temp_dir().join(format!("morello-precompute-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("avx512.fast.morellodb");
    let target = &X86_AVX512;

    // Two stages first, as if interrupted; then the whole family.
    let small = MatmulFamily { max: 2, dtype: Dtype::F32 };
    let mut log = Vec::new();
    precompute(small, target, SearchSpace::Fast, &path, 2, &mut log).unwrap();
    let log = String::from_utf8(log).unwrap();
    assert!(log.contains("[1/2] matmul f32 1: 1 Specs in") && log.contains("[2/2] matmul f32 2: 7 Specs in"), "{log}");

    let family = MatmulFamily { max: 4, dtype: Dtype::F32 };
    let mut log = Vec::new();
    let db = precompute(family, target, SearchSpace::Fast, &path, 2, &mut log).unwrap();
    let log = String::from_utf8(log).unwrap();
    assert!(
        log.contains("[1/3] matmul f32 1: already done") && log.contains("[2/3] matmul f32 2: already done"),
        "{log}"
    );
    assert!(log.contains("[3/3] matmul f32 4: 19 Specs in") && log.contains("Specs, "), "progress is shown: {log}");
    assert_eq!(db.stages(), ["matmul f32 1", "matmul f32 2", "matmul f32 4"]);

    // Every Spec of the family is answered from the file, offline, as a fresh search would.
    let (stored, report) = file::load(&path, target);
    assert!(matches!(report, LoadReport::Loaded));
    let mut offline = Synthesizer::with_database(stored);
    offline.set_offline(true);
    let mut fresh = Synthesizer::new(target);
    fresh.set_search_space(SearchSpace::Fast);
    for log2 in 0..=2 {
        for spec in family.stage(log2, target) {
            let imp = offline.synthesize(&spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
            let expected = fresh.synthesize(&spec).unwrap();
            let cost = |i| morello_core::cost::impl_cost(i, target).unwrap().main;
            assert_eq!(cost(&imp), cost(&expected), "{spec}");
        }
    }
    assert_eq!(offline.stats().specs_solved, 0);
    let _ = std::fs::remove_dir_all(&dir);
}
