//! `morello-db precompute --shard I/N` and `morello-db merge`: a family precomputed in shards
//! and merged answers like one precomputed by a single process, and merge refuses shard sets
//! that do not make up a stage.

use morello_build::precompute::{MatmulFamily, pending_stages, precompute};
use morello_build::shard::{Shard, merge, precompute_shard};
use morello_core::db::Database;
use morello_core::db::file::{self, LoadReport};
use morello_core::dtype::Dtype;
use morello_core::search::SearchSpace;
use morello_core::target::{Target, X86_AVX2};
use std::path::{Path, PathBuf};

const TARGET: &Target = &X86_AVX2;
const FAMILY: MatmulFamily = MatmulFamily { max: 8, dtype: Dtype::F32 };

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("morello-shards-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn load(path: &Path) -> Database {
    let (db, report) = file::load(path, TARGET);
    assert!(matches!(report, LoadReport::Loaded), "{}: {report:?}", path.display());
    db
}

/// Solves shard `shard` of the next stage of the database at `base` into `out`.
fn solve(base: &Path, shard: Shard, stage: Option<&str>, out: &Path) -> Result<Option<String>, String> {
    precompute_shard(FAMILY, TARGET, SearchSpace::Fast, base, shard, stage, out, 1, &mut Vec::new())
}

#[test]
fn a_family_precomputed_in_shards_answers_like_one_process() {
    let dir = scratch("family");
    let single = dir.join("single.avx2.fast.morellodb");
    precompute(FAMILY, TARGET, SearchSpace::Fast, &single, 1, &mut Vec::new()).unwrap();

    let base = dir.join("base.avx2.fast.morellodb");
    let count = 3;
    let mut stages = Vec::new();
    loop {
        let files: Vec<PathBuf> = (0..count).map(|i| dir.join(format!("shard{i}.avx2.fast.morellodb"))).collect();
        let solved: Vec<Option<String>> = files
            .iter()
            .enumerate()
            .map(|(i, out)| solve(&base, Shard { index: i as u32, count }, None, out).unwrap())
            .collect();
        let Some(stage) = solved[0].clone() else { break };
        assert!(solved.iter().all(|s| s.as_deref() == Some(&stage)), "every shard solves the same stage: {solved:?}");
        let shards: Vec<(String, Database)> = files.iter().map(|f| (f.display().to_string(), load(f))).collect();
        let mut db = file::load(&base, TARGET).0;
        assert_eq!(merge(&mut db, &shards).unwrap(), std::slice::from_ref(&stage));
        file::save(&mut db, &base).unwrap();
        stages.push(stage);
    }
    assert_eq!(stages, ["matmul f32 1", "matmul f32 2", "matmul f32 4", "matmul f32 8"]);

    let (sharded, one) = (load(&base), load(&single));
    assert!(pending_stages(&FAMILY, &sharded).is_empty());
    let c = one.compare(&sharded);
    assert!(c.agrees() && c.same > 0, "{c:?}");
    for (log2, _) in FAMILY.stages() {
        for spec in FAMILY.stage(log2, TARGET) {
            let cost = |db: &Database| db.get(&spec).map(|e| e.decision.map(|d| d.cost.main));
            assert!(cost(&one).is_some() && cost(&one) == cost(&sharded), "{spec}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn merge_refuses_what_does_not_make_up_a_stage() {
    let dir = scratch("refuse");
    let base = dir.join("base.avx2.fast.morellodb");
    let shard = |i: u32, n: u32| {
        let out = dir.join(format!("shard{i}of{n}.avx2.fast.morellodb"));
        solve(&base, Shard { index: i, count: n }, Some("matmul f32 1"), &out).unwrap();
        (out.display().to_string(), load(&out))
    };
    let (first, second, other_cut) = (shard(0, 2), shard(1, 2), shard(0, 3));
    let mut db = Database::new(TARGET);
    let refused = |db: &mut Database, shards: &[(String, Database)]| merge(db, shards).unwrap_err();

    assert!(refused(&mut db, std::slice::from_ref(&first)).contains("lacks shard(s) 1/2"));
    assert!(refused(&mut db, &[first.clone(), first.clone()]).contains("given twice"));
    assert!(refused(&mut db, &[first.clone(), other_cut]).contains("cut into 2 shards"));
    let not_a_shard = ("plain".to_owned(), Database::new(TARGET));
    assert!(refused(&mut db, &[first.clone(), not_a_shard]).contains("is not a shard file"));
    assert!(db.is_empty() && db.stages().is_empty(), "a refused merge changes nothing");

    assert_eq!(merge(&mut db, &[second, first]).unwrap(), ["matmul f32 1"]);
    assert_eq!(db.stages(), ["matmul f32 1"]);
    assert!(!db.is_empty());

    // A shard of a stage that is not the next one is refused before any search.
    file::save(&mut db, &base).unwrap();
    let out = dir.join("late.avx2.fast.morellodb");
    let err = solve(&base, Shard { index: 0, count: 1 }, Some("matmul f32 4"), &out).unwrap_err();
    assert!(err.contains("the next stage to solve") && err.contains("`matmul f32 2`"), "{err}");
    assert!(!out.exists());
    let _ = std::fs::remove_dir_all(&dir);
}
