//! A checkpoint of a search in progress (`Synthesizer::results_view`): read from another
//! thread while the search runs, it holds only final answers, each what a fresh search gives.

use morello_core::db::Database;
use morello_core::search::{SearchSpace, Synthesizer};
use morello_core::spec::Spec;
use morello_core::target::X86_AVX2;
use std::time::{Duration, Instant};

/// A Spec whose search takes far longer than the test waits for its first results.
const LONG: &str = "Matmul(1x128x128x128, (f32, GL), (f32, GL), (f32, GL), serial)";

#[test]
fn a_checkpoint_taken_mid_search_holds_only_final_answers() {
    let target = &X86_AVX2;
    let spec = Spec::parse_for(LONG, target).unwrap().with_limits(target.max_limits());
    let mut synth = Synthesizer::new(target);
    synth.set_search_space(SearchSpace::Fast);
    // Stopped by a count of Specs, so the search is still going when the checkpoint is taken.
    synth.set_spec_limit(30_000);
    let view = synth.results_view();
    let mut checkpoint = Database::new(target);
    std::thread::scope(|scope| {
        let search = scope.spawn(|| synth.optimal_cost(&spec));
        let start = Instant::now();
        while view.entries() < 100 && !search.is_finished() {
            assert!(start.elapsed() < Duration::from_secs(120), "no results after two minutes");
            std::thread::sleep(Duration::from_millis(5));
        }
        view.record_into(&mut checkpoint);
        assert!(search.join().unwrap().is_none(), "the search was cut short by its limit");
    });
    assert!(!checkpoint.is_empty(), "the checkpoint holds the results found so far");

    // Every answer in the checkpoint is what a fresh search finds at the limits it covers.
    let mut checked = 0;
    for (logical, entries) in synth.memo().iter() {
        for entry in entries.iter().take(1) {
            let at = Spec::new(logical.clone(), entry.upper.min_per_level(&target.max_limits()));
            let Some(stored) = checkpoint.get(&at) else { continue };
            let mut fresh = Synthesizer::new(target);
            fresh.set_search_space(SearchSpace::Fast);
            let cost = fresh.optimal_cost(&at).map(|c| c.main);
            assert_eq!(stored.decision.map(|d| d.cost.main), cost, "{at}");
            checked += 1;
        }
        if checked >= 40 {
            break;
        }
    }
    assert!(checked >= 40, "only {checked} answers checked");
}
