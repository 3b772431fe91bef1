//! `neuronc-rs fmt FILE [-o OUT] [--generic] [--debug-locs]`: parse, verify, print.

use std::path::PathBuf;

use clap::Args;
use neuronc_ir::PrintOptions;

use super::{input, Command, Ctx, Status};
use crate::error::Error;

#[derive(Args, Debug)]
pub struct FmtArgs {
    /// Input file (`-` reads stdin).
    pub file: String,
    /// Write the output to OUT instead of stdout.
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Print every op in MLIR's generic form.
    #[arg(long)]
    pub generic: bool,
    /// Print `loc(...)` debug locations.
    #[arg(long)]
    pub debug_locs: bool,
}

impl Command for FmtArgs {
    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Status, Error> {
        let options = PrintOptions {
            generic: self.generic,
            debug_locs: self.debug_locs,
        };
        let (text, status) = input::each_unit(ctx, &self.file, |session, unit| {
            let module = session.load(unit)?;
            Ok(session.print(&module, &options))
        })?;
        input::write_output(ctx, self.output.as_deref(), &text)?;
        Ok(status)
    }
}
