//! `neuronc-rs verify FILE`: parse and verify; silent on success.

use clap::Args;

use super::{input, Command, Ctx, Status};
use crate::error::Error;

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// Input file (`-` reads stdin).
    pub file: String,
}

impl Command for VerifyArgs {
    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Status, Error> {
        let (_, status) = input::each_unit(ctx, &self.file, |session, unit| {
            session
                .load(unit)
                .map(input::discard)
                .map(|()| String::new())
        })?;
        Ok(status)
    }
}
