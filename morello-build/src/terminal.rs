//! Messages for the person running the build, on the terminal Cargo runs in.
//!
//! Cargo captures a build script's stdout and stderr (shown with `cargo build -vv`, or when the
//! script fails) and keeps its `cargo::warning` lines, which it replays on every later build
//! while the script's output is fresh. Progress through a long search, and the note on what the
//! search cost, belong to the build that searched. So they go to the controlling terminal
//! (`/dev/tty`), which Cargo neither captures nor replays, as well as to stderr. Without a
//! terminal (CI, an IDE) the note on the search's cost is a `cargo::warning`, since no one sees
//! that build's stderr.

use std::fs::File;
use std::io::Write;
use std::sync::{Mutex, OnceLock};

/// The controlling terminal, if the build has one.
fn terminal() -> Option<&'static Mutex<File>> {
    static TERMINAL: OnceLock<Option<Mutex<File>>> = OnceLock::new();
    TERMINAL
        .get_or_init(
            || {
                if cfg!(unix) { File::options().write(true).open("/dev/tty").ok().map(Mutex::new) } else { None }
            },
        )
        .as_ref()
}

/// Writes `message` to stderr and, on a line of its own, to the terminal.
pub(crate) fn say(message: &str) {
    eprintln!("{message}");
    if let Some(terminal) = terminal()
        && let Ok(mut terminal) = terminal.lock()
    {
        // Clears the line Cargo's progress bar is on; Cargo redraws it.
        let _ = write!(terminal, "\r\x1b[2K{message}\n");
    }
}

/// Says `message` once: on the terminal when there is one, as a Cargo warning otherwise.
pub(crate) fn note(message: &str) {
    if terminal().is_some() {
        say(message);
    } else {
        println!("cargo::warning={message}");
    }
}
