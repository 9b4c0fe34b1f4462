//! Whether two databases give the same answers: what checks that a database filled in shards
//! and merged answers like one filled by a single process.

use super::Database;
use super::key::Point;
use super::table::Rect;

/// How the answers of two databases compare, point by point, at every rectangle's corners and
/// centre in either database (for a rectangle, those are the points where a different cut
/// into rectangles, or a different answer, would show first).
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Comparison {
    /// Points compared.
    pub points: u64,
    /// Points where both hold the same decision at the same cost.
    pub same: u64,
    /// Points where both hold the same cost (and peak memory) but different decisions:
    /// equally good implementations, one picked where the other was.
    pub ties: u64,
    /// Points where the costs differ.
    pub different: u64,
    /// Points that one database answers and the other does not.
    pub missing: u64,
}

impl Comparison {
    /// Whether every point that both databases answer has the same cost in both.
    ///
    /// Points answered by one only do not count against it: how far an answer's limits reach
    /// depends on the order in which Specs were solved (one process on one thread and on two
    /// already differ), and a query there is searched again, to the same answer.
    pub fn agrees(&self) -> bool {
        self.different == 0
    }
}

impl Database {
    /// Compares this database's answers with `other`'s (see [`Comparison`]).
    pub fn compare(&self, other: &Database) -> Comparison {
        let mut c = Comparison::default();
        for (first, second) in [(self, other), (other, self)] {
            for (key, table) in first.tables() {
                let theirs = second.tables.get(key);
                for rect in table.iter() {
                    for point in probes(rect) {
                        c.points += 1;
                        match theirs.and_then(|t| t.get(&point)) {
                            None => c.missing += 1,
                            Some(r) if r.value == rect.value => c.same += 1,
                            Some(r) if (r.value.intensity, r.value.peak) == (rect.value.intensity, rect.value.peak) => {
                                c.ties += 1
                            }
                            Some(_) => c.different += 1,
                        }
                    }
                }
            }
        }
        c
    }
}

/// The corners and centre of `rect`.
fn probes(rect: &Rect) -> [Point; 3] {
    let centre: Point = std::array::from_fn(|i| ((rect.lo[i] + rect.hi[i]) / 2.0).floor());
    [rect.lo, rect.hi, centre]
}

#[cfg(test)]
mod tests {
    use crate::db::Database;
    use crate::search::Synthesizer;
    use crate::spec::Spec;
    use crate::target::X86_AVX2;

    fn spec(text: &str) -> Spec {
        Spec::parse_for(text, &X86_AVX2).unwrap().with_limits(X86_AVX2.max_limits())
    }

    #[test]
    fn databases_compare_equal_to_themselves_and_count_answers_one_lacks() {
        let mut synth = Synthesizer::new(&X86_AVX2);
        synth.optimal_cost(&spec("Matmul(1x4x4x4, (f32, GL), (f32, GL), (f32, GL), serial)")).unwrap();
        let small = synth.into_database();
        let mut synth = Synthesizer::with_database(small.clone());
        synth.optimal_cost(&spec("Matmul(1x8x4x4, (f32, GL), (f32, GL), (f32, GL), serial)")).unwrap();
        let larger = synth.into_database();

        let itself = small.compare(&small.clone());
        assert!(itself.agrees() && itself.points > 0 && itself.same == itself.points, "{itself:?}");
        let apart = small.compare(&larger);
        assert!(apart.missing > 0 && apart.agrees(), "{apart:?}");
    }

    #[test]
    fn a_different_cost_is_a_disagreement() {
        let matmul = spec("Matmul(1x4x4x4, (f32, GL), (f32, GL), (f32, GL), serial)");
        let mut synth = Synthesizer::new(&X86_AVX2);
        synth.optimal_cost(&matmul).unwrap();
        let honest = synth.into_database();
        let entry = honest.get(&matmul).expect("solved above");
        let mut decision = entry.decision.expect("a 4x4x4 Matmul has implementations");
        decision.cost.main += 1;
        let mut wrong = Database::new(&X86_AVX2);
        wrong.put(matmul.logical(), &entry.lower, &entry.upper, Some(&decision));
        wrong.absorb_answers(&honest);
        let c = honest.compare(&wrong);
        assert!(c.different > 0 && !c.agrees(), "{c:?}");
    }
}
