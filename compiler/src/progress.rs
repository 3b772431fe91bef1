//! Terminal progress for `neuronc-rs compile` (CLI plumbing, crate-private): a spinner
//! naming the current stage of one compile, or a bar of files done for several.
//!
//! Invariants:
//! * nothing is drawn unless the caller says stderr is an interactive terminal
//!   ([`Progress::wanted`]), and nothing before [`DELAY`] has passed, so quick compiles,
//!   pipes, tests and CI never see a control character;
//! * drawing goes to a duplicate of the stderr file descriptor, never through
//!   `std::io::stderr()`, whose lock the command line holds for the whole run (a ticker
//!   thread waiting on it would deadlock); stdout is never touched;
//! * [`Progress::finish`] (also run on drop) clears the bar before returning, so text
//!   printed afterwards starts on a clean line.

use std::io::IsTerminal;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::build::BuildStage;

/// How long a compile runs before progress appears.
pub const DELAY: Duration = Duration::from_secs(1);

/// A stage of one compile, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    ParseVerify,
    Cleanup,
    Plan,
    Lower,
    EmitHlo,
    Write,
}

const STAGES: u64 = 6;

impl Stage {
    fn index(self) -> u64 {
        self as u64
    }
    fn label(self) -> &'static str {
        match self {
            Stage::ParseVerify => "parse and verify",
            Stage::Cleanup => "clean-up passes",
            Stage::Plan => "layout and fusion planning",
            Stage::Lower => "engine lowering and scheduling",
            Stage::EmitHlo => "HLO emission and artifact encoding",
            Stage::Write => "writing artifacts",
        }
    }
}

impl From<BuildStage> for Stage {
    fn from(s: BuildStage) -> Stage {
        match s {
            BuildStage::Cleanup => Stage::Cleanup,
            BuildStage::Plan => Stage::Plan,
            BuildStage::Lower => Stage::Lower,
            BuildStage::EmitHlo => Stage::EmitHlo,
        }
    }
}

/// A progress display that appears only after [`DELAY`], and only if wanted.
pub struct Progress {
    bar: ProgressBar,
    /// Dropping the sender tells the reveal thread to stop waiting.
    reveal: Option<(mpsc::Sender<()>, JoinHandle<()>)>,
}

impl Progress {
    /// Whether to show progress: stderr is a terminal that is not `TERM=dumb`, and the
    /// caller draws colour there (`color` is false for in-process runs with buffers and
    /// under `NO_COLOR`).
    pub fn wanted(color: bool) -> bool {
        color
            && std::io::stderr().is_terminal()
            && std::env::var_os("TERM").is_some_and(|t| t != "dumb")
    }

    /// A spinner showing the stage of one compile.
    pub fn stages(show: bool) -> Progress {
        Progress::styled(
            show,
            STAGES,
            "{spinner} compiling [{elapsed}] stage {pos}/{len}: {msg}",
            ProgressStyle::default_spinner,
        )
    }

    /// A bar of files compiled out of `total`.
    pub fn files(show: bool, total: u64) -> Progress {
        Progress::styled(
            show,
            total,
            "compiling [{elapsed}] {wide_bar} {pos}/{len} files {msg}",
            ProgressStyle::default_bar,
        )
    }

    /// A hidden-until-due bar of `len` steps drawn with `template` (`fallback` if the
    /// template does not parse).
    fn styled(show: bool, len: u64, template: &str, fallback: fn() -> ProgressStyle) -> Progress {
        let style = ProgressStyle::with_template(template).unwrap_or_else(|_| fallback());
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden())
            .with_style(style);
        Progress::lazy(bar, show)
    }

    fn lazy(bar: ProgressBar, show: bool) -> Progress {
        if !show {
            return Progress { bar, reveal: None };
        }
        let (tx, rx) = mpsc::channel::<()>();
        let shown = bar.clone();
        let handle = std::thread::spawn(move || {
            if rx.recv_timeout(DELAY) == Err(RecvTimeoutError::Timeout) {
                if let Some(target) = stderr_target() {
                    shown.set_draw_target(target);
                    shown.enable_steady_tick(Duration::from_millis(100));
                }
            }
        });
        Progress {
            bar,
            reveal: Some((tx, handle)),
        }
    }

    /// The compile entered `stage`.
    pub fn stage(&self, stage: Stage) {
        self.bar.set_position(stage.index() + 1);
        self.bar.set_message(stage.label());
    }

    /// One more file is done; `name` is shown next to the bar.
    pub fn file_done(&self, name: &str) {
        self.bar.inc(1);
        self.bar.set_message(name.to_string());
    }

    /// Runs `f` (which prints) with the bar hidden.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.bar.suspend(f)
    }

    /// Clears the display; afterwards nothing is drawn.
    pub fn finish(&mut self) {
        if let Some((tx, handle)) = self.reveal.take() {
            drop(tx);
            let _ = handle.join();
        }
        self.bar.finish_and_clear();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// A terminal on a duplicate of the stderr descriptor (see the module invariants).
#[cfg(unix)]
fn stderr_target() -> Option<ProgressDrawTarget> {
    use std::os::fd::AsFd;
    let fd = std::io::stderr().as_fd().try_clone_to_owned().ok()?;
    let read = std::fs::File::from(fd.try_clone().ok()?);
    let term = console::Term::read_write_pair(read, std::fs::File::from(fd));
    Some(ProgressDrawTarget::term(term, 20))
}

#[cfg(not(unix))]
fn stderr_target() -> Option<ProgressDrawTarget> {
    None
}
