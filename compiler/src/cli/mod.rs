//! The `neuronc-rs` command line: argument parsing (clap derive), the command registry,
//! and [`run`], which executes one invocation against caller-provided I/O.
//!
//! `main.rs` calls [`run`] with the process's stdin/stdout/stderr; the golden-file runner
//! calls it in-process with buffers, so tests exercise exactly what users run.
//!
//! # Adding a subcommand
//! Write `cli/<name>.rs` with a clap `Args` struct implementing [`Command`], then add one
//! line to the `commands!` list below.
//!
//! Invariants: exit codes are [`EXIT_OK`] (0), [`EXIT_INVALID`] (1: input does not parse
//! or verify, or cannot be read/written) and [`EXIT_USAGE`] (2: bad command line, from
//! clap). Diagnostics are rendered only here (module [`render`]), never by the library.

mod cache;
mod compile;
mod explain;
mod fmt;
mod input;
mod opt;
mod random;
pub mod render;
mod run;
mod stats;
mod test;
mod verify;

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};

use crate::error::Error;
use crate::session::Session;
pub use render::Reported;

pub const EXIT_OK: i32 = 0;
pub const EXIT_INVALID: i32 = 1;
pub const EXIT_USAGE: i32 = 2;

/// Result of a command that ran to completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Everything was valid.
    Ok,
    /// Some input was invalid; diagnostics were reported.
    Invalid,
}

impl Status {
    pub fn code(self) -> i32 {
        match self {
            Status::Ok => EXIT_OK,
            Status::Invalid => EXIT_INVALID,
        }
    }
    /// `Invalid` if either is.
    pub fn and(self, other: Status) -> Status {
        if self == Status::Ok {
            other
        } else {
            self
        }
    }
}

/// A subcommand: parsed arguments that know how to run.
pub trait Command {
    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Status, Error>;
}

/// Options accepted before or after any subcommand.
#[derive(Args, Clone, Debug, Default)]
pub struct GlobalOpts {
    /// Process each `// -----` chunk of the input as a separate module; outputs are
    /// separated by `// -----` and diagnostics keep whole-file line numbers.
    #[arg(long, global = true)]
    pub split_input_file: bool,
    /// Print parse / verify / print timings to stderr.
    #[arg(long, global = true)]
    pub time: bool,
}

macro_rules! commands {
    ($( $(#[$doc:meta])* $variant:ident($args:ty), )*) => {
        /// The subcommands.
        #[derive(Subcommand, Debug)]
        pub enum Cmd {
            $( $(#[$doc])* $variant($args), )*
        }

        impl Cmd {
            fn run(&self, ctx: &mut Ctx<'_>) -> Result<Status, Error> {
                match self {
                    $( Cmd::$variant(a) => Command::run(a, ctx), )*
                }
            }
        }
    };
}

commands! {
    /// Parse and verify FILE; print nothing on success, diagnostics on failure.
    Verify(verify::VerifyArgs),
    /// Parse, verify and print FILE in canonical form.
    Fmt(fmt::FmtArgs),
    /// Print op histogram, FLOPs, parameter and activation bytes of FILE.
    Stats(stats::StatsArgs),
    /// Run a function of FILE with the reference interpreter on `.npz` inputs.
    Run(run::RunArgs),
    /// Run a pass pipeline (`--passes=...` or `-O2`) and print the optimized module.
    Opt(opt::OptArgs),
    /// Show the NeuronCore kernels, layouts and refused fusions of FILE.
    Explain(explain::ExplainArgs),
    /// Compile FILE for a NeuronCore and write the artifacts to a directory.
    Compile(compile::CompileArgs),
    /// Show the compile cache's directory and size, or clear it.
    Cache(cache::CacheArgs),
    /// Run golden-file tests (`// RUN:` files) under PATHs (default: fixtures).
    Test(test::TestArgs),
}

/// `neuronc-rs`: StableHLO front end for AWS NeuronCores.
#[derive(Parser, Debug)]
#[command(name = "neuronc-rs", version, propagate_version = true)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalOpts,
    #[command(subcommand)]
    pub command: Cmd,
}

/// The I/O an invocation runs against.
pub struct Io<'a> {
    pub stdin: &'a mut dyn Read,
    pub out: &'a mut dyn Write,
    pub err: &'a mut dyn Write,
    /// Directory relative input and output paths are resolved against (`None`: the
    /// process's current directory).
    pub base_dir: Option<PathBuf>,
    /// Colour diagnostics (ANSI).
    pub color: bool,
}

/// What a command sees while it runs.
pub struct Ctx<'a> {
    pub io: Io<'a>,
    pub global: GlobalOpts,
    pub session: Session,
    /// Every diagnostic rendered so far, with whole-file line numbers.
    pub reported: Vec<Reported>,
}

impl Ctx<'_> {
    /// Resolves a user-given path against the base directory.
    pub fn resolve(&self, path: &Path) -> PathBuf {
        match &self.io.base_dir {
            Some(base) if path.is_relative() => base.join(path),
            _ => path.to_path_buf(),
        }
    }

    /// Renders an error to stderr and records its diagnostics.
    pub fn report(&mut self, error: &Error) {
        let text = match error.diagnostics() {
            Some(d) => {
                let (text, reported) = render::render(d, self.io.color);
                self.reported.extend(reported);
                text
            }
            None => format!("neuronc-rs: error: {error}\n"),
        };
        // A broken stderr leaves nowhere to complain; the exit code still says it failed.
        let _ = self.io.err.write_all(text.as_bytes());
    }
}

/// The outcome of one invocation.
#[derive(Debug)]
pub struct Outcome {
    pub code: i32,
    pub reported: Vec<Reported>,
}

/// Runs one invocation: `args` includes the program name first, as in `std::env::args_os`.
pub fn run<I, T>(args: I, io: Io<'_>) -> Outcome
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let sink: &mut dyn Write = if e.use_stderr() { io.err } else { io.out };
            let _ = if io.color {
                write!(sink, "{}", e.render().ansi())
            } else {
                write!(sink, "{}", e.render())
            };
            return Outcome {
                code: e.exit_code(),
                reported: Vec::new(),
            };
        }
    };
    let mut ctx = Ctx {
        io,
        global: cli.global.clone(),
        session: Session::new(),
        reported: Vec::new(),
    };
    let status = match cli.command.run(&mut ctx) {
        Ok(status) => status,
        Err(e) => {
            ctx.report(&e);
            Status::Invalid
        }
    };
    if ctx.global.time {
        let t = ctx.session.timings;
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        let _ = writeln!(
            ctx.io.err,
            "parse: {:.3} ms\nverify: {:.3} ms\nprint: {:.3} ms\nrun: {:.3} ms",
            ms(t.parse),
            ms(t.verify),
            ms(t.print),
            ms(t.run)
        );
    }
    let _ = ctx.io.out.flush();
    Outcome {
        code: status.code(),
        reported: ctx.reported,
    }
}
