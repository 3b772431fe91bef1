//! `neuronc-rs test [PATH...]`: runs golden files (see [`crate::golden`]).

use std::path::PathBuf;

use clap::Args;

use super::{Command, Ctx, Status};
use crate::error::Error;
use crate::golden;

#[derive(Args, Debug)]
pub struct TestArgs {
    /// Golden files or directories to search for them (default: `fixtures`).
    pub paths: Vec<PathBuf>,
}

impl Command for TestArgs {
    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Status, Error> {
        let roots: Vec<PathBuf> = if self.paths.is_empty() {
            vec![ctx.resolve("fixtures".as_ref())]
        } else {
            self.paths.iter().map(|p| ctx.resolve(p)).collect()
        };
        let files = golden::discover(&roots);
        let mut failed = 0;
        let mut report = String::new();
        for file in &files {
            match golden::run_file(file) {
                Ok(()) => report.push_str(&format!("PASS {}\n", file.display())),
                Err(why) => {
                    failed += 1;
                    report.push_str(&format!("FAIL {}\n", file.display()));
                    for line in why.lines() {
                        report.push_str(&format!("    {line}\n"));
                    }
                }
            }
        }
        report.push_str(&format!(
            "{} passed, {failed} failed\n",
            files.len() - failed
        ));
        ctx.io
            .out
            .write_all(report.as_bytes())
            .map_err(|source| Error::Write {
                path: "<stdout>".into(),
                source,
            })?;
        Ok(if failed == 0 && !files.is_empty() {
            Status::Ok
        } else {
            Status::Invalid
        })
    }
}
