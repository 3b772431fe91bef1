//! `neuronc-rs stats FILE [--json]`: op histogram, FLOPs, parameter and activation bytes
//! (the cost model is documented in [`crate::stats`]).

use clap::Args;

use super::{input, Command, Ctx, Status};
use crate::error::Error;

#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Input file (`-` reads stdin).
    pub file: String,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

impl Command for StatsArgs {
    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Status, Error> {
        let json = self.json;
        let (text, status) = input::each_unit(ctx, &self.file, |session, unit| {
            let module = session.load(unit)?;
            let stats = session.stats(&module);
            Ok(if json {
                stats.to_json()
            } else {
                stats.to_text()
            })
        })?;
        input::write_output(ctx, None, &text)?;
        Ok(status)
    }
}
