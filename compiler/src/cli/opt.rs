//! `neuronc-rs opt FILE [--passes=... | -O<n>] [-o OUT]`: run a pass pipeline and print
//! the result (text our parser reads back and our interpreter runs; fused kernels are
//! `stablehlo.composite "neuronc.kernel"` calls to private functions).
//!
//! Pass output options (`--print-after-all`, `--print-after`, `--time-passes`,
//! `--trace-rewrites`) write to standard error.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

use clap::Args;
use neuronc_ir::PrintOptions;
use neuronc_passes::{run_pipeline, OptOptions};

use super::{input, Command, Ctx, Status};
use crate::error::Error;

#[derive(Args, Debug)]
pub struct OptArgs {
    /// Input file (`-` reads stdin).
    pub file: String,
    /// Write the output to OUT instead of stdout.
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Comma-separated pipeline, e.g. `inline,canonicalize,cse,dce` or `fixpoint<8>(cse,dce)`.
    #[arg(long)]
    pub passes: Option<String>,
    /// Optimization preset: `-O0`, `-O1`, `-O2`.
    #[arg(short = 'O', value_name = "LEVEL")]
    pub opt_level: Option<u8>,
    /// Print the module after every pass.
    #[arg(long)]
    pub print_after_all: bool,
    /// Print the module after pass NAME (repeatable).
    #[arg(long, value_name = "NAME")]
    pub print_after: Vec<String>,
    /// Print per-pass wall times.
    #[arg(long)]
    pub time_passes: bool,
    /// Verify after every pass that changed the module.
    #[arg(long)]
    pub verify_each: bool,
    /// Apply at most N individual rewrites (to bisect a bad rewrite).
    #[arg(long, value_name = "N")]
    pub opt_fuel: Option<u64>,
    /// List every applied rewrite.
    #[arg(long)]
    pub trace_rewrites: bool,
    /// Print in MLIR's generic form.
    #[arg(long)]
    pub generic: bool,
}

impl OptArgs {
    fn options(&self) -> OptOptions {
        OptOptions {
            passes: self.passes.clone(),
            opt_level: self.opt_level,
            print_after_all: self.print_after_all,
            print_after: self.print_after.clone(),
            time_passes: self.time_passes,
            verify_each: self.verify_each,
            opt_fuel: self.opt_fuel,
            trace_rewrites: self.trace_rewrites,
        }
    }
}

impl Command for OptArgs {
    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Status, Error> {
        let options = self.options();
        let pipeline = options.pipeline()?;
        let printed = PrintOptions {
            generic: self.generic,
            debug_locs: false,
        };
        let log = Rc::new(RefCell::new(String::new()));
        let (text, status) = input::each_unit(ctx, &self.file, |session, unit| {
            let mut module = session.load(unit)?;
            let mut pctx = options.context()?;
            let sink = Rc::clone(&log);
            pctx.print_sink = Some(Box::new(move |pass: &str, text: &str| {
                let mut s = sink.borrow_mut();
                s.push_str(&format!("// ----- IR after {pass} -----\n{text}"));
            }));
            let report = run_pipeline(&mut module, &pipeline, &mut pctx)?;
            let mut s = log.borrow_mut();
            for line in &report.trace {
                s.push_str(&format!("rewrite: {line}\n"));
            }
            if self.time_passes {
                s.push_str(&report.timing_table());
            }
            let text = session.print(&module, &printed);
            input::discard(module);
            Ok(text)
        })?;
        let log = log.borrow().clone();
        if !log.is_empty() {
            let _ = ctx.io.err.write_all(log.as_bytes());
        }
        input::write_output(ctx, self.output.as_deref(), &text)?;
        Ok(status)
    }
}
