//! Cost-model calibration report: how well the cost model ranks implementations of one Spec.
//!
//! It builds many distinct complete implementations of one Spec: for every rewrite the search
//! may apply at the top (below the cache fills of a Spec held in L1, its only rewrites), and
//! for up to [`SECOND_LEVEL_PER_TOP`] rewrites of that rewrite's first child, the rest is
//! completed optimally by the search. Each is compiled, checked against the reference
//! evaluator, then timed in one process, pinned to one core, in interleaved rounds (so drift
//! hits every kernel alike). It prints predicted cost against measured median time and
//! Spearman's rank correlation between them.
//!
//! Usage: `calibrate [SPEC] [TARGET]`, by default the f32 32³ Matmul on AVX-512, or on AVX2 on a
//! CPU without AVX-512.

use morello_core::codegen::{CKernel, emit_c};
use morello_core::cost::{impl_cost, residency};
use morello_core::harness::{CCompiler, ReferenceRun, cpu_supports};
use morello_core::imp::Impl;
use morello_core::level::Level;
use morello_core::residency::forced_fill_operand;
use morello_core::rewrite::Action;
use morello_core::search::{Synthesizer, actions};
use morello_core::spec::Spec;
use morello_core::target::{Cache, Residency, Target, TargetId};
use std::collections::BTreeSet;
use std::process::{Command, ExitCode};
use std::time::Instant;

const DEFAULT_SPEC: &str = "Matmul(1x32x32x32, (f32, GL), (f32, GL), (f32, GL), serial)";
/// Rewrites of the first child tried per top-level rewrite (evenly spaced over its list): each
/// one leads the search to Specs no optimal implementation visits, which are slow to solve.
const SECOND_LEVEL_PER_TOP: usize = 6;
/// Implementations timed at most (evenly spread over the predicted costs).
const MOST: usize = 120;
/// Checked implementations between two progress lines.
const CHECK_PROGRESS_EVERY: usize = 10;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let text = args.first().map_or(DEFAULT_SPEC, String::as_str);
    // By default, the widest target this CPU runs.
    let host_default = if cpu_supports(TargetId::X86Avx512.target()) { "avx512" } else { "avx2" };
    let target_name = args.get(1).map_or(host_default, String::as_str);
    let Some(target) = TargetId::from_name(target_name).map(|t| t.target()) else {
        eprintln!("unknown target `{target_name}`");
        return ExitCode::from(2);
    };
    if !cpu_supports(target) {
        eprintln!("this CPU cannot run {} kernels", target.name);
        return ExitCode::FAILURE;
    }
    let spec = match Spec::parse_for(text, target) {
        Ok(spec) => spec,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    match run(&spec, target) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("calibration failed: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A candidate: its predicted cost, a description of its first two decisions, and the C.
struct Candidate {
    cost: u64,
    decisions: String,
    kernel: CKernel,
    imp: Impl,
}

fn run(spec: &Spec, target: &'static Target) -> Result<(), String> {
    eprintln!("building implementations of {spec} ...");
    let mut synth = Synthesizer::new(target);
    // The search runs on every core; only the timing is pinned (to one core, after the search).
    synth.set_threads(std::thread::available_parallelism().map_or(1, usize::from));
    let mut seen = BTreeSet::new();
    let mut candidates = Vec::new();
    // A Spec held in L1 has one rewrite, the cache fill (`morello_core::residency`): the
    // choices start below its fills.
    let (fills, chosen_spec) = forced_chain(spec, target);
    let tops = actions(&chosen_spec, target);
    for (done, top) in tops.iter().enumerate() {
        let Ok(node) = top.apply(&chosen_spec, target) else { continue };
        eprintln!("  [{done}/{}] {top}: {} implementations so far", tops.len(), candidates.len());
        let imp = Impl { spec: chosen_spec.clone(), node };
        // The top rewrite with optimal children, and with each rewrite of its first child.
        let mut variants = vec![(format!("{top}"), imp.clone(), None)];
        if let Some(first) = imp.children().first() {
            let seconds = actions(&forced_chain(&first.spec, target).1, target);
            let step = seconds.len().div_ceil(SECOND_LEVEL_PER_TOP).max(1);
            for second in seconds.into_iter().step_by(step) {
                variants.push((format!("{top}; {second}"), imp.clone(), Some(second)));
            }
        }
        for (decisions, mut imp, second) in variants {
            if complete(&mut imp, second, &mut synth, target).is_none() {
                continue;
            }
            let imp = wrap(&fills, imp);
            let Some(cost) = impl_cost(&imp, target) else { continue };
            let symbol = format!("candidate{}", candidates.len());
            let kernel = emit_c(&imp, &symbol, target).map_err(|e| e.to_string())?;
            // Two decision paths can lead to the same program; keep one.
            if seen.insert(kernel.source.replace(&symbol, "K")) {
                candidates.push(Candidate { cost: cost.main, decisions, kernel, imp });
            }
        }
    }
    candidates.sort_by_key(|c| c.cost);
    let chosen = spread(candidates, MOST);
    eprintln!("{} distinct implementations; evaluating the reference once ...", chosen.len());
    let reference = ReferenceRun::new(spec.logical());
    eprintln!("checking each implementation against it ...");
    let started = Instant::now();
    for (i, c) in chosen.iter().enumerate() {
        check(c, &reference, target)?;
        if (i + 1) % CHECK_PROGRESS_EVERY == 0 || i + 1 == chosen.len() {
            eprintln!("  checked {}/{} in {:.0?}", i + 1, chosen.len(), started.elapsed());
        }
    }
    let times = time_all(&chosen, target)?;
    print_report(spec, &chosen, &times, target);
    Ok(())
}

/// The cache fills applied while `spec` and its descendants are held in L1 (their only
/// rewrite), outermost first, and the first descendant with a choice.
fn forced_chain(spec: &Spec, target: &Target) -> (Vec<Impl>, Spec) {
    let mut chain = Vec::new();
    let mut current = spec.clone();
    loop {
        let Some(i) = forced_fill_operand(&current, target) else { return (chain, current) };
        let fill = Action::cache_fill(i, current.operand(i));
        let Ok(node) = fill.apply(&current, target) else { return (chain, current) };
        let imp = Impl { spec: current, node };
        let [child] = imp.children()[..] else { unreachable!("a cache fill has one child") };
        current = child.spec.clone();
        chain.push(imp);
    }
}

/// `inner` (an implementation of the Spec [`forced_chain`] stopped at) inside the rewrites of
/// `chain`.
fn wrap(chain: &[Impl], inner: Impl) -> Impl {
    chain.iter().rev().fold(inner, |inner, outer| {
        let mut outer = outer.clone();
        *outer.children_mut().into_iter().next().expect("a cache fill has one child") = inner;
        outer
    })
}

/// Completes `imp`'s children optimally, applying `second` to the first child first (below the
/// first child's forced cache fills). `None` if something does not apply or has no
/// implementation.
fn complete(
    imp: &mut Impl,
    second: Option<morello_core::rewrite::Action>,
    synth: &mut Synthesizer,
    target: &'static Target,
) -> Option<()> {
    for (i, child) in imp.children_mut().into_iter().enumerate() {
        match (&second, i) {
            (Some(action), 0) => {
                let (fills, chosen) = forced_chain(&child.spec, target);
                let node = action.apply(&chosen, target).ok()?;
                let mut inner = Impl { spec: chosen, node };
                for grandchild in inner.children_mut() {
                    *grandchild = synth.synthesize(&grandchild.spec).ok()?;
                }
                *child = wrap(&fills, inner);
            }
            _ => *child = synth.synthesize(&child.spec).ok()?,
        }
    }
    Some(())
}

/// At most `most` of `sorted`, evenly spaced (the cheapest and the dearest included).
fn spread(sorted: Vec<Candidate>, most: usize) -> Vec<Candidate> {
    let n = sorted.len();
    if n <= most {
        return sorted;
    }
    let keep: BTreeSet<usize> = (0..most).map(|i| i * (n - 1) / (most - 1)).collect();
    sorted.into_iter().enumerate().filter(|(i, _)| keep.contains(i)).map(|(_, c)| c).collect()
}

fn check(c: &Candidate, reference: &ReferenceRun, target: &Target) -> Result<(), String> {
    reference
        .check(&c.kernel, &CCompiler::gcc(), target)
        .map_err(|e| format!("{} ({}): {e}", c.kernel.symbol, c.decisions))
}

/// Compiles every candidate into one timing program and runs it pinned to CPU 1; returns the
/// median nanoseconds per call of each.
fn time_all(chosen: &[Candidate], target: &Target) -> Result<Vec<f64>, String> {
    let dir = std::env::temp_dir().join(format!("morello-calibrate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let mut sources = Vec::new();
    for c in chosen {
        let path = dir.join(format!("{}.c", c.kernel.symbol));
        std::fs::write(&path, &c.kernel.source).map_err(|e| e.to_string())?;
        sources.push(path);
    }
    let main = dir.join("main.c");
    std::fs::write(&main, timing_driver(chosen)).map_err(|e| e.to_string())?;
    let exe = dir.join("calibrate");
    eprintln!("compiling {} kernels into one timing program ...", chosen.len());
    let output = Command::new(CCompiler::gcc().program)
        .args(CCompiler::flags(target))
        .args(&sources)
        .arg(&main)
        .arg("-o")
        .arg(&exe)
        .output()
        .map_err(|e| e.to_string())?;
    if !output.status.success() {
        return Err(format!("the C compiler failed:\n{}", String::from_utf8_lossy(&output.stderr)));
    }
    eprintln!("timing (5 interleaved rounds, each call repeated for at least 20 ms) ...");
    let output = Command::new("taskset").arg("-c").arg("1").arg(&exe).output().map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(&dir);
    if !output.status.success() {
        return Err(format!("the timing program failed: {}", String::from_utf8_lossy(&output.stderr)));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let times: Vec<f64> = text.lines().filter_map(|l| l.split_whitespace().nth(1)?.parse().ok()).collect();
    if times.len() != chosen.len() {
        return Err(format!("the timing program printed {} times for {} kernels", times.len(), chosen.len()));
    }
    Ok(times)
}

/// The C timing driver: random inputs, then rounds in which each kernel runs for at least
/// 20 ms; prints each kernel's median time per call over the rounds.
fn timing_driver(chosen: &[Candidate]) -> String {
    let operands = chosen[0].imp.spec.operands();
    let mut s = String::from("#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <time.h>\n\n");
    for c in chosen {
        s.push_str(&c.kernel.header);
    }
    s.push_str(
        "static void serial_for(const morello_runtime *rt, int64_t n, void (*task)(void *, int64_t), void *ctx) {\n\
         \x20   (void)rt;\n    for (int64_t i = 0; i < n; i++) task(ctx, i);\n}\n\
         static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }\n\
         static int by_value(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }\n",
    );
    let sizes: Vec<String> = operands.iter().map(|t| t.data_bytes().to_string()).collect();
    s.push_str(&format!("static const size_t sizes[{}] = {{{}}};\n", sizes.len(), sizes.join(", ")));
    s.push_str("static void call(int k, void **p, const morello_runtime *rt) {\n    switch (k) {\n");
    for (i, c) in chosen.iter().enumerate() {
        let args: Vec<String> = (0..operands.len()).map(|o| format!("p[{o}]")).collect();
        s.push_str(&format!("    case {i}: {}({}, rt); break;\n", c.kernel.symbol, args.join(", ")));
    }
    s.push_str("    }\n}\n");
    s.push_str(&format!(
        "int main(void) {{\n\
         \x20   enum {{ KERNELS = {}, OPERANDS = {}, ROUNDS = 5 }};\n\
         \x20   morello_runtime rt = {{ serial_for, 1 }};\n\
         \x20   void *p[OPERANDS];\n\
         \x20   for (int o = 0; o < OPERANDS; o++) {{\n\
         \x20       float *x = aligned_alloc(64, (sizes[o] + 63) / 64 * 64);\n\
         \x20       for (size_t i = 0; i < sizes[o] / 4; i++) x[i] = (float)((i * 2654435761u) % 1000) / 1000.0f;\n\
         \x20       p[o] = x;\n\
         \x20   }}\n\
         \x20   static double t[KERNELS][ROUNDS];\n\
         \x20   for (int k = 0; k < KERNELS; k++) call(k, p, &rt);\n\
         \x20   for (int r = 0; r < ROUNDS; r++)\n\
         \x20       for (int k = 0; k < KERNELS; k++) {{\n\
         \x20           long calls = 0; double start = now(), elapsed;\n\
         \x20           do {{ call(k, p, &rt); calls++; elapsed = now() - start; }} while (elapsed < 0.02);\n\
         \x20           t[k][r] = elapsed / calls * 1e9;\n\
         \x20       }}\n\
         \x20   for (int k = 0; k < KERNELS; k++) {{\n\
         \x20       qsort(t[k], ROUNDS, sizeof(double), by_value);\n\
         \x20       printf(\"%d %.1f\\n\", k, t[k][ROUNDS / 2]);\n\
         \x20   }}\n\
         \x20   return 0;\n\
         }}\n",
        chosen.len(),
        operands.len()
    ));
    s
}

/// Ranks of `values` (1-based; ties get their average rank).
fn ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut out = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        let average = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            out[k] = average;
        }
        i = j + 1;
    }
    out
}

/// Spearman's rank correlation: Pearson's correlation of the ranks.
fn spearman(x: &[f64], y: &[f64]) -> f64 {
    let (rx, ry) = (ranks(x), ranks(y));
    let n = x.len() as f64;
    let (mx, my) = (rx.iter().sum::<f64>() / n, ry.iter().sum::<f64>() / n);
    let cov: f64 = rx.iter().zip(&ry).map(|(a, b)| (a - mx) * (b - my)).sum();
    let vx: f64 = rx.iter().map(|a| (a - mx).powi(2)).sum();
    let vy: f64 = ry.iter().map(|b| (b - my).powi(2)).sum();
    cov / (vx * vy).sqrt()
}

fn print_report(spec: &Spec, chosen: &[Candidate], times: &[f64], target: &'static Target) {
    println!(
        "{spec}: {} distinct complete implementations, each checked against the reference evaluator",
        chosen.len()
    );
    println!("{:>4} {:>12} {:>12}  first decisions (the rest optimal)", "#", "predicted", "median ns");
    for (i, (c, t)) in chosen.iter().zip(times).enumerate() {
        println!("{i:>4} {:>12} {t:>12.1}  {}", c.cost, c.decisions);
    }
    let costs: Vec<f64> = chosen.iter().map(|c| c.cost as f64).collect();
    let held = residency(spec.logical(), target);
    println!(
        "Spearman rank correlation, predicted cost vs measured time: {:.3} over {} implementations (the target's weights: L1 {} and GL {} per line, the Spec held in {held:?})",
        spearman(&costs, times),
        chosen.len(),
        target.level(Level::L1).line_cost,
        target.line_cost(Level::GL, held)
    );
    fit_weights(chosen, times, target, held);
}

/// Line weights tried for L1 and for global memory held in L2 (for a Spec held in L2).
const L1_WEIGHTS: [u64; 5] = [0, 1, 2, 3, 4];
const GL_WEIGHTS: [u64; 10] = [1, 2, 3, 4, 6, 8, 12, 16, 20, 30];
/// Line weights tried for global memory held in L2 and further out: in L3 (for a Spec held
/// there) or read from memory (for a Spec no cache holds).
const HELD_WEIGHTS: [u64; 8] = [2, 4, 6, 8, 12, 16, 20, 30];
const L3_WEIGHTS: [u64; 8] = [20, 25, 30, 35, 40, 50, 70, 100];
const MEMORY_WEIGHTS: [u64; 7] = [20, 30, 40, 60, 100, 150, 200];

/// Re-costs every implementation under each pair of line weights (the kernels' own costs
/// unchanged) and prints the rank correlation each pair achieves: the weights this measurement
/// supports. The pairs are the two weights the implementations of a Spec `held` there pay
/// most: for one held in L2, L1's and that of a global-memory line held in L2
/// (`morello_core::cost::residency`); for one held in L3, those of a line held in L2 and in
/// L3; for one no cache holds, those of a line held in L2 and of one read from memory.
fn fit_weights(chosen: &[Candidate], times: &[f64], target: &'static Target, held: Residency) {
    let with = |row: u64, column: u64| {
        let mut levels = target.levels;
        let (mut l2, mut l3) = (target.l2, target.l3);
        let set = |cache: &mut Option<Cache>, weight| {
            if let Some(cache) = cache.as_mut() {
                cache.line_cost = weight;
            }
        };
        match held {
            Residency::L2 => {
                levels[Level::L1.index()].line_cost = row;
                set(&mut l2, column);
            }
            Residency::L3 => {
                set(&mut l2, row);
                set(&mut l3, column);
            }
            Residency::Memory => {
                set(&mut l2, row);
                levels[Level::GL.index()].line_cost = column;
            }
        }
        Target { levels, l2, l3, ..*target }
    };
    let (rows, columns, row_name, column_name): (&[u64], &[u64], _, _) = match held {
        Residency::L2 => (&L1_WEIGHTS, &GL_WEIGHTS, "L1", "GL weight of lines held in L2"),
        Residency::L3 => (&HELD_WEIGHTS, &L3_WEIGHTS, "GL weight of lines held in L2", "GL weight of lines held in L3"),
        Residency::Memory => {
            (&HELD_WEIGHTS, &MEMORY_WEIGHTS, "GL weight of lines held in L2", "GL weight of lines read from memory")
        }
    };
    println!("rank correlation by line weight (rows: {row_name}; columns: {column_name}):");
    print!("{:>8}", "row\\col");
    for c in columns {
        print!("{c:>7}");
    }
    println!();
    let mut best = (f64::MIN, 0, 0);
    for &row in rows {
        print!("{row:>8}");
        for &column in columns {
            let weighted = with(row, column);
            let costs: Vec<f64> =
                chosen.iter().map(|c| impl_cost(&c.imp, &weighted).map_or(f64::NAN, |k| k.main as f64)).collect();
            let rho = spearman(&costs, times);
            if rho > best.0 {
                best = (rho, row, column);
            }
            print!("{rho:>7.3}");
        }
        println!();
    }
    println!("best: {:.3} with {row_name} {} and {column_name} {}", best.0, best.1, best.2);
}
