//! Precompute spread over many machines: one stage at a time, cut into shards.
//!
//! A stage's Specs are independent of one another given the answers of the stages before it
//! (see [`crate::precompute`]), so a stage can be cut into `N` shards solved anywhere, at the
//! same time, each from a copy of the database holding the earlier stages. A shard writes only
//! what it solved, marked with the stage and its place in it; [`merge`] adds shard files to the
//! database and records the stage as done once all `N` of its shards are in.
//!
//! The answers do not depend on how a stage is cut: the search is exact, and a database only
//! spares it work. A merged database answers every query like one filled by a single process.

use crate::precompute::{MatmulFamily, pending_stages, run_stage};
use morello_core::db::Database;
use morello_core::db::file;
use morello_core::search::SearchSpace;
use morello_core::target::Target;
use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::path::Path;
use std::str::FromStr;
use std::time::Instant;

/// Shard `index` of `count` (counted from 0, as Ray, Kubernetes Indexed Jobs and Slurm
/// arrays count): the Specs of a stage whose position `p` has `p % count == index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This shard's number, `0..count`.
    pub index: u32,
    /// How many shards the stage is cut into.
    pub count: u32,
}

impl FromStr for Shard {
    type Err = String;

    /// Parses `I/N`, e.g. `0/4` for the first of four shards.
    fn from_str(text: &str) -> Result<Shard, String> {
        let bad = || format!("`{text}` is not a shard: write I/N, with 0 <= I < N (e.g. 0/4)");
        let (index, count) = text.split_once('/').ok_or_else(bad)?;
        let index: u32 = index.trim().parse().map_err(|_| bad())?;
        let count: u32 = count.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The name under which a shard file records that it holds shard `shard` of `stage`.
fn marker(stage: &str, shard: Shard) -> String {
    format!("{stage} {MARKER_TAG}{shard}")
}

/// What separates a stage's name from the shard in a shard file's marker.
const MARKER_TAG: &str = "shard ";

/// The stage and shard a marker names, if it is one.
fn parse_marker(name: &str) -> Option<(&str, Shard)> {
    let (stage, shard) = name.rsplit_once(&format!(" {MARKER_TAG}"))?;
    Some((stage, shard.parse().ok()?))
}

/// Solves shard `shard` of the first stage of `family` not yet done in the database at `base`
/// (which must name it `expected_stage`, when given), reading `base` and writing what it
/// solves, and only that, to a fresh file at `out`. Returns the stage's name, or `None` when
/// every stage is done.
#[allow(clippy::too_many_arguments)]
pub fn precompute_shard(
    family: MatmulFamily,
    target: &'static Target,
    space: SearchSpace,
    base: &Path,
    shard: Shard,
    expected_stage: Option<&str>,
    out: &Path,
    jobs: usize,
    progress: &mut dyn Write,
) -> Result<Option<String>, String> {
    let (db, report) = file::load(base, target);
    if let file::LoadReport::Rebuilt(reason) = report {
        return Err(format!("cannot read the base database: {reason}"));
    }
    let Some((log2, stage)) = pending_stages(&family, &db).into_iter().next() else {
        if let Some(expected) = expected_stage {
            return Err(format!("stage `{expected}` is already done in {}", base.display()));
        }
        let _ = writeln!(progress, "every stage is done in {}", base.display());
        return Ok(None);
    };
    if let Some(expected) = expected_stage.filter(|e| *e != stage) {
        return Err(format!(
            "the next stage to solve in {} is `{stage}`, not `{expected}`: merge the earlier stages first",
            base.display()
        ));
    }
    let specs: Vec<_> = family
        .stage(log2, target)
        .into_iter()
        .enumerate()
        .filter(|(position, _)| *position as u64 % u64::from(shard.count) == u64::from(shard.index))
        .map(|(_, spec)| spec)
        .collect();
    let label = format!("{stage}, shard {shard}");
    let start = Instant::now();
    let mut solved = Database::new(target);
    for synth in run_stage(&db, &specs, space, jobs, &label, start, progress)? {
        synth.record_into(&mut solved);
    }
    solved.complete_stage(&marker(&stage, shard));
    match std::fs::remove_file(out) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(format!("cannot replace {}: {e}", out.display()));
        }
        _ => {}
    }
    file::save(&mut solved, out).map_err(|e| e.to_string())?;
    let _ = writeln!(
        progress,
        "\r{label}: {} Specs in {:.1?}, written to {}{:20}",
        specs.len(),
        start.elapsed(),
        out.display(),
        ""
    );
    Ok(Some(stage))
}

/// Adds the answers of `shards` (files written by [`precompute_shard`]) to `base`, and records
/// each stage whose shards are all among them as done. Fails, changing nothing, when a file is
/// not a shard file, or a stage's shards are incomplete, duplicated, or cut in different ways.
/// Returns the stages completed.
pub fn merge(base: &mut Database, shards: &[(String, Database)]) -> Result<Vec<String>, String> {
    // For every stage, the shard count and which shards are present.
    let mut stages: BTreeMap<&str, (u32, Vec<bool>)> = BTreeMap::new();
    for (name, db) in shards {
        let markers: Vec<_> = db.stages().iter().filter_map(|s| parse_marker(s)).collect();
        let [(stage, shard)] = markers[..] else {
            return Err(format!("{name} is not a shard file (write one with `morello-db precompute --shard I/N`)"));
        };
        let (count, present) = stages.entry(stage).or_insert_with(|| (shard.count, vec![false; shard.count as usize]));
        if *count != shard.count {
            return Err(format!("{name} holds shard {shard} of `{stage}`, which other files cut into {count} shards"));
        }
        if std::mem::replace(&mut present[shard.index as usize], true) {
            return Err(format!("shard {shard} of `{stage}` is given twice ({name} is the second)"));
        }
    }
    for (stage, (count, present)) in &stages {
        let missing: Vec<String> =
            present.iter().enumerate().filter(|(_, p)| !**p).map(|(i, _)| format!("{i}/{count}")).collect();
        if !missing.is_empty() {
            return Err(format!("stage `{stage}` lacks shard(s) {}", missing.join(", ")));
        }
    }
    for (_, db) in shards {
        base.absorb_answers(db);
    }
    let completed: Vec<String> = stages.keys().map(|s| s.to_string()).collect();
    for stage in &completed {
        base.complete_stage(stage);
    }
    Ok(completed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_print_as_index_over_count() {
        assert_eq!("2/4".parse(), Ok(Shard { index: 2, count: 4 }));
        assert_eq!(Shard { index: 0, count: 1 }.to_string(), "0/1");
        for bad in ["4/4", "1/0", "1", "a/2", "-1/2", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad} parsed");
        }
    }

    #[test]
    fn markers_name_their_stage_and_shard() {
        let shard = Shard { index: 1, count: 3 };
        let name = marker("matmul f32 64", shard);
        assert_eq!(parse_marker(&name), Some(("matmul f32 64", shard)));
        assert_eq!(parse_marker("matmul f32 64"), None);
    }
}
