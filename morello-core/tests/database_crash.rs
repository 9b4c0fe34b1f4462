//! A database that survives crashes: writers SIGKILLed at random moments (mid-synthesis,
//! holding the lock, mid-write, mid-rename) while other processes read and write the same
//! file. Every answer read back stays what a clean synthesis gives, no lock outlives a killed
//! holder, and the temporary files of killed writers do not pile up.
//!
//! The test binary re-runs itself as its helper processes (the ignored test
//! `crash_test_process`, told its role by environment variables). Unix only: it kills with
//! SIGKILL and checks that the signal is what ended each writer.

#![cfg(unix)]

mod common;

use common::limits::Rng;
use morello_core::cost::{Cost, impl_cost};
use morello_core::db::Database;
use morello_core::db::file::{self, LoadReport};
use morello_core::search::Synthesizer;
use morello_core::spec::Spec;
use morello_core::target::X86_AVX2;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Writers killed, one per round.
const ROUNDS: u64 = 100;
/// Kills come after a delay in `MIN_KILL_DELAY_MS..MAX_KILL_DELAY_MS` milliseconds.
const MIN_KILL_DELAY_MS: u64 = 10;
/// See [`MIN_KILL_DELAY_MS`].
const MAX_KILL_DELAY_MS: u64 = 210;
/// Seeds the kill delays and the victims' choices of Specs.
const SEED: u64 = 0x6d6f_7265_6c6c_6f64;

/// The signal `Child::kill` sends.
const SIGKILL: i32 = 9;

const ROLE_ENV: &str = "MORELLO_CRASH_TEST_ROLE";
const PATH_ENV: &str = "MORELLO_CRASH_TEST_PATH";

/// A helper's role: read in a loop, write in a loop, or be killed while writing.
#[derive(Clone, Copy, Debug)]
enum Role {
    /// Loads the file and checks every answer, until the stop file appears.
    Reader,
    /// Synthesizes and saves the Specs of [`steady_specs`] one by one, then saves again and
    /// again, until the stop file appears.
    Steady,
    /// Synthesizes and saves a few of [`victim_specs`] picked by its seed, then saves again
    /// and again until killed.
    Victim(u64),
}

impl Role {
    fn to_env(self) -> String {
        match self {
            Role::Reader => "reader".to_owned(),
            Role::Steady => "steady".to_owned(),
            Role::Victim(seed) => format!("victim {seed}"),
        }
    }

    fn from_env(text: &str) -> Role {
        match text.split_once(' ') {
            Some(("victim", seed)) => Role::Victim(seed.parse().unwrap()),
            _ if text == "reader" => Role::Reader,
            _ if text == "steady" => Role::Steady,
            _ => panic!("unknown role {text}"),
        }
    }
}

/// Specs the killed writers synthesize: Matmuls at two sets of limits.
fn victim_specs() -> Vec<Spec> {
    let mut specs = Vec::new();
    for (m, k, n) in [(1, 2, 2), (2, 2, 1), (2, 1, 4), (4, 2, 1), (1, 4, 2), (2, 4, 2), (4, 1, 4), (2, 2, 4)] {
        for limits in ["[16, 64, 256, 512]", "[32, 128, 1024, 0]"] {
            let text = format!("(Matmul(1x{m}x{k}x{n}, (f32, GL), (f32, GL), (f32, GL)), {limits})");
            specs.push(text.parse().unwrap());
        }
    }
    specs
}

/// Specs the writer that is never killed synthesizes: Moves and accumulating Matmuls.
fn steady_specs() -> Vec<Spec> {
    let mut specs = Vec::new();
    for (m, n) in [(2, 2), (2, 8), (4, 4), (8, 2), (4, 8)] {
        specs.push(format!("(Move({m}x{n}, (f32, GL), (f32, GL, col_major)), [16, 64, 256, 512])").parse().unwrap());
    }
    for (m, n) in [(2, 2), (2, 8), (4, 4)] {
        let text = format!("(MatmulAccum(1x{m}x2x{n}, (f32, L1), (f32, L1), (f32, L1)), [32, 128, 1024, 0])");
        specs.push(text.parse().unwrap());
    }
    specs
}

/// What a clean synthesis, from an empty memo table, gives for one Spec.
struct Reference {
    spec: Spec,
    /// The optimal cost (`None`: no implementation).
    cost: Option<Cost>,
    /// The implementation, formatted.
    imp: Option<String>,
}

fn references(specs: &[Spec]) -> Vec<Reference> {
    specs
        .iter()
        .map(|spec| {
            let mut fresh = Synthesizer::new(&X86_AVX2);
            let cost = fresh.optimal_cost(spec);
            let imp = fresh.synthesize(spec).ok().map(|i| i.to_string());
            Reference { spec: spec.clone(), cost, imp }
        })
        .collect()
}

/// Checks every answer `db` has for the references' Specs, at the limits they were synthesized
/// at, against the clean answers: the stored cost, and the implementation rebuilt from the
/// database alone (offline) with its cost. Returns the number of Specs answered.
fn check_answers(db: &Database, refs: &[Reference], context: &str) -> usize {
    let mut offline = Synthesizer::with_database(db.clone());
    offline.set_offline(true);
    let mut answered = 0;
    for r in refs {
        let Some(entry) = db.get(&r.spec) else { continue };
        answered += 1;
        let stored = entry.decision.as_ref().map(|d| d.cost);
        assert_eq!(stored, r.cost, "{context}: the stored cost of {}", r.spec);
        let rebuilt = offline.synthesize(&r.spec);
        match (&rebuilt, &r.imp) {
            (Ok(imp), Some(expected)) => {
                assert_eq!(&imp.to_string(), expected, "{context}: the implementation of {}", r.spec);
                assert_eq!(impl_cost(imp, &X86_AVX2), r.cost, "{context}: the rebuilt cost of {}", r.spec);
            }
            (Err(_), None) => {}
            _ => panic!("{context}: {} rebuilt from the database as {rebuilt:?}, cleanly {:?}", r.spec, r.imp),
        }
    }
    answered
}

/// The database file's temporary files in `dir`.
fn temporaries(path: &Path) -> Vec<String> {
    let dir = path.parent().unwrap();
    let names = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned());
    names.filter(|name| file::is_temporary_of(name, path)).collect()
}

fn stop_file(path: &Path) -> PathBuf {
    path.with_extension("stop")
}

/// Loads `path`, which a writer may be replacing right now: the file must always be whole.
fn load_whole(path: &Path, context: &str) -> Database {
    let (db, report) = file::load(path, &X86_AVX2);
    assert!(matches!(report, LoadReport::Loaded | LoadReport::Missing), "{context}: {report:?}");
    db
}

/// Synthesizes `spec` on top of the file's answers and saves.
fn synthesize_and_save(path: &Path, spec: &Spec) {
    let mut synth = Synthesizer::with_database(load_whole(path, "a writer's load"));
    synth.optimal_cost(spec);
    file::save(&mut synth.into_database(), path).unwrap();
}

/// Not a test on its own: the body of each helper process of
/// `killed_writers_never_leave_wrong_answers`, which runs it.
#[test]
#[ignore = "a helper process of killed_writers_never_leave_wrong_answers, which runs it"]
fn crash_test_process() {
    let (Ok(role), Ok(path)) = (std::env::var(ROLE_ENV), std::env::var(PATH_ENV)) else { return };
    let path = PathBuf::from(path);
    // Stop when told to, or when the test is gone (it removes the directory).
    let stopped = || stop_file(&path).exists() || !path.parent().unwrap().exists();
    match Role::from_env(&role) {
        Role::Reader => {
            let refs = references(&[victim_specs(), steady_specs()].concat());
            let (mut loads, mut answers) = (0, 0);
            while !stopped() {
                answers += check_answers(&load_whole(&path, "the reader"), &refs, "the reader");
                loads += 1;
                std::thread::sleep(Duration::from_millis(2));
            }
            println!("reader: {loads} loads, {answers} answers checked");
        }
        Role::Steady => {
            for (i, spec) in steady_specs().iter().enumerate() {
                synthesize_and_save(&path, spec);
                println!("saved {i}");
            }
            let mut saves = 0;
            while !stopped() {
                file::save(&mut load_whole(&path, "the steady writer"), &path).unwrap();
                saves += 1;
                std::thread::sleep(Duration::from_millis(5));
            }
            println!("steady: {saves} saves after its Specs");
        }
        Role::Victim(seed) => {
            let specs = victim_specs();
            let mut rng = Rng(seed);
            for _ in 0..3 {
                let i = rng.below(specs.len() as u64) as usize;
                println!("begin");
                synthesize_and_save(&path, &specs[i]);
                println!("saved {i}");
            }
            loop {
                let mut db = load_whole(&path, "a victim");
                println!("begin");
                file::save(&mut db, &path).unwrap();
                println!("end");
            }
        }
    }
}

fn spawn(role: Role, path: &Path) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "crash_test_process", "--ignored", "--nocapture", "--test-threads=1"])
        .env(ROLE_ENV, role.to_env())
        .env(PATH_ENV, path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A helper that runs until told to stop. Its output is read from the start, on a thread of
/// its own: a helper that waits for the lock says so on stderr at every save, and a pipe
/// nobody drains would fill and block it.
struct Background {
    pid: u32,
    output: mpsc::Receiver<std::io::Result<Output>>,
}

impl Background {
    fn spawn(role: Role, path: &Path) -> Background {
        let child = spawn(role, path);
        let pid = child.id();
        let (send, output) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = send.send(child.wait_with_output());
        });
        Background { pid, output }
    }

    /// Waits for the helper, told to stop; fails if it failed or takes over `limit`.
    /// Returns its stdout.
    fn finish(self, name: &str, limit: Duration) -> String {
        let Ok(out) = self.output.recv_timeout(limit) else {
            let _ = Command::new("kill").args(["-KILL", &self.pid.to_string()]).status();
            panic!("the {name} did not stop within {limit:?}");
        };
        let out = out.unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "the {name} failed:\n{stdout}{stderr}");
        stdout.into_owned()
    }
}

/// What a helper printed from `prefix` to the end of that line (libtest may have started the
/// line).
fn summary<'a>(log: &'a str, prefix: &str) -> &'a str {
    log.lines().find_map(|l| l.find(prefix).map(|at| &l[at..])).unwrap_or_default()
}

/// Saves `db` to `path` on another thread, failing if that takes over `limit` (a lock nobody
/// releases).
fn save_within(mut db: Database, path: &Path, limit: Duration) -> Database {
    let (send, receive) = mpsc::channel();
    let path = path.to_owned();
    std::thread::spawn(move || {
        let result = file::save(&mut db, &path).map(|()| db);
        let _ = send.send(result);
    });
    match receive.recv_timeout(limit) {
        Ok(result) => result.unwrap(),
        Err(_) => panic!("a save waited over {limit:?}: the lock of a killed writer was never released"),
    }
}

/// Tells the helpers to stop when dropped, also when the test fails.
struct StopOnDrop(PathBuf);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.0, b"");
    }
}

/// How far a killed writer had got.
#[derive(Default, Debug)]
struct KillTally {
    /// Killed inside `file::save`.
    in_save: u32,
    /// Killed with its temporary file written but not yet renamed (so holding the lock).
    mid_write: u32,
    /// Killed before its first save began (starting up, loading or synthesizing).
    before_saving: u32,
}

#[test]
fn killed_writers_never_leave_wrong_answers() {
    let start = Instant::now();
    let dir = std::env::temp_dir().join(format!("morello-crash-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("x86-avx2.morellodb");
    let victims = victim_specs();
    let refs = references(&[victims.clone(), steady_specs()].concat());

    let stop = StopOnDrop(stop_file(&path));
    let reader = Background::spawn(Role::Reader, &path);
    let steady = Background::spawn(Role::Steady, &path);
    let mut rng = Rng(SEED);
    let mut tally = KillTally::default();
    let mut saved_by_victims = vec![false; victims.len()];
    let mut most_temporaries = 0;
    for round in 0..ROUNDS {
        let mut victim = spawn(Role::Victim(1 + rng.below(u64::MAX - 1)), &path);
        let pid = victim.id();
        std::thread::sleep(Duration::from_millis(MIN_KILL_DELAY_MS + rng.below(MAX_KILL_DELAY_MS - MIN_KILL_DELAY_MS)));
        victim.kill().unwrap();
        let out = victim.wait_with_output().unwrap();
        let left_behind = temporaries(&path);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let killed = out.status.signal() == Some(SIGKILL);
        assert!(
            killed,
            "round {round}: a writer ended before its kill:\n{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let markers: Vec<&str> =
            stdout.lines().filter(|l| *l == "begin" || *l == "end" || l.starts_with("saved")).collect();
        match markers.last() {
            None => tally.before_saving += 1,
            Some(&"begin") => tally.in_save += 1,
            Some(_) => {}
        }
        tally.mid_write += u32::from(left_behind.iter().any(|name| name.contains(&format!(".tmp.{pid}."))));
        for line in stdout.lines() {
            if let Some(i) = line.strip_prefix("saved ") {
                saved_by_victims[i.parse::<usize>().unwrap()] = true;
            }
        }

        let context = format!("round {round}, just after the kill");
        check_answers(&load_whole(&path, &context), &refs, &context);
        // The killed writer may have held the lock; a save must not wait for it.
        let db = save_within(Database::new(&X86_AVX2), &path, Duration::from_secs(20));
        let context = format!("round {round}, after a save");
        check_answers(&db, &refs, &context);
        for (i, spec) in victims.iter().enumerate() {
            assert!(!saved_by_victims[i] || db.get(spec).is_some(), "{context}: a victim's save of {spec} was lost");
        }
        // The steady writer may be writing its own temporary file; the victim's are gone.
        let now = temporaries(&path);
        assert!(now.len() <= 1, "{context}: temporary files pile up: {now:?}");
        most_temporaries = most_temporaries.max(left_behind.len());
    }

    drop(stop);
    let reader_log = reader.finish("reader", Duration::from_secs(30));
    let steady_log = steady.finish("steady writer", Duration::from_secs(30));
    let db = save_within(Database::new(&X86_AVX2), &path, Duration::from_secs(20));
    let answered = check_answers(&db, &refs, "at the end");
    for spec in steady_specs() {
        assert!(db.get(&spec).is_some(), "the steady writer's {spec} was lost");
    }
    assert_eq!(temporaries(&path), Vec::<String>::new(), "temporary files outlived every writer");
    println!(
        "{ROUNDS} writers killed: {} inside a save ({} with the temporary file written, holding the lock), {} \
         before their first save; at most {most_temporaries} temporary files seen; {answered} of {} Specs answered \
         at the end; {}; {}; in {:.1} s",
        tally.in_save,
        tally.mid_write,
        tally.before_saving,
        refs.len(),
        summary(&reader_log, "reader:"),
        summary(&steady_log, "steady:"),
        start.elapsed().as_secs_f64()
    );
    assert!(tally.in_save >= ROUNDS as u32 / 4, "too few kills landed inside a save: {tally:?}");
    assert!(tally.mid_write > 0, "no kill landed between writing and renaming: {tally:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A scratch database path in a directory of its own.
fn scratch_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("morello-crash-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("x86-avx2.morellodb")
}

/// Regression: every killed writer used to leave its temporary file (`x86-avx2.tmp<pid>`)
/// forever. Leftovers never confuse a load, and the next save removes them, of this version's
/// naming and the earlier one, but no other file.
#[test]
fn temporary_files_of_killed_writers_are_removed_by_the_next_save() {
    let path = scratch_path("leftovers");
    let spec = &victim_specs()[0];
    synthesize_and_save(&path, spec);
    let dir = path.parent().unwrap();
    let stale = ["x86-avx2.morellodb.tmp.4194304.0", "x86-avx2.morellodb.tmp.77.12", "x86-avx2.tmp4194305"];
    let unrelated = [
        "x86-avx2.slack25.morellodb",
        "x86-avx2.slack25.morellodb.tmp.77.12",
        "x86-avx2.morellodb.tmp.77",
        "x86-avx2.morellodb.tmp.77.12.1",
        "x86-avx2.morellodb.tmp.x.1",
        "x86-avx2.tmp",
        "x86-avx2.tmpx",
        "x86-avx3.tmp12",
    ];
    let good = std::fs::read(&path).unwrap();
    for (i, name) in stale.iter().chain(&unrelated).enumerate() {
        // Whole copies, cut ones and garbage.
        let bytes = match i % 3 {
            0 => good.clone(),
            1 => good[..good.len() / 2].to_vec(),
            _ => b"garbage".to_vec(),
        };
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    let mut expected = temporaries(&path);
    expected.sort();
    assert_eq!(expected, stale, "what counts as a temporary file");
    let db = load_whole(&path, "with leftovers beside the file");
    assert!(db.get(spec).is_some());

    let db = save_within(Database::new(&X86_AVX2), &path, Duration::from_secs(20));
    assert!(db.get(spec).is_some());
    for name in stale {
        assert!(!dir.join(name).exists(), "{name} was left behind");
    }
    for name in unrelated {
        assert!(dir.join(name).exists(), "{name}, not a temporary file of this database, was removed");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// Every save gets a temporary file of its own, even saves of one process at once; and the
/// lock orders threads of one process as it does processes, so none loses another's answers.
#[test]
fn threads_saving_at_once_lose_nothing() {
    let path = scratch_path("threads");
    let names: Vec<PathBuf> = (0..4).map(|_| file::temporary_path(&path)).collect();
    for (i, name) in names.iter().enumerate() {
        assert!(!names[..i].contains(name), "{} given twice", name.display());
        assert!(file::is_temporary_of(&name.file_name().unwrap().to_string_lossy(), &path));
    }
    let specs = steady_specs();
    std::thread::scope(|scope| {
        for spec in &specs {
            let path = &path;
            scope.spawn(move || {
                for _ in 0..3 {
                    synthesize_and_save(path, spec);
                }
            });
        }
    });
    let db = load_whole(&path, "after the threads");
    let refs = references(&specs);
    assert_eq!(check_answers(&db, &refs, "after the threads"), specs.len(), "answers were lost");
    assert_eq!(temporaries(&path), Vec::<String>::new());
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}
