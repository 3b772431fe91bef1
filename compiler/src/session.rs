//! [`Session`]: the entry points a framework (or the CLI) calls — parse, verify, print,
//! run (reference interpreter), stats — with per-stage timing.
//!
//! Invariants: a session never renders diagnostics (that is the CLI's job) and never
//! panics on user input; every failure is an [`Error`] carrying the diagnostics and the
//! source they point into. Timings accumulate over all units processed by the session.

use std::sync::Arc;
use std::time::{Duration, Instant};

use neuronc_interp::{RunOptions, Tensor};
use neuronc_ir::{Module, PrintOptions};

use crate::error::{Diagnostics, Error, Stage};
use crate::source::{Source, Unit};
use crate::stats::{self, Stats};

/// Wall time spent in each stage, summed over every unit the session processed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timings {
    pub parse: Duration,
    pub verify: Duration,
    pub print: Duration,
    pub run: Duration,
}

/// A compilation session: runs stages over units and keeps their timings.
#[derive(Debug, Default)]
pub struct Session {
    pub timings: Timings,
}

impl Session {
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses one unit.
    pub fn parse(&mut self, unit: &Unit) -> Result<Module, Error> {
        let t = Instant::now();
        let result = neuronc_ir::parse::parse_module(unit.text());
        self.timings.parse += t.elapsed();
        result.map_err(|e| Diagnostics::new(Stage::Parse, unit, vec![e.0]).into())
    }

    /// Verifies a module parsed from `unit`.
    pub fn verify(&mut self, module: &Module, unit: &Unit) -> Result<(), Error> {
        let t = Instant::now();
        let result = neuronc_ir::verify::verify_module(module);
        self.timings.verify += t.elapsed();
        result.map_err(|e| Diagnostics::new(Stage::Verify, unit, e.0).into())
    }

    /// Parses and verifies one unit.
    pub fn load(&mut self, unit: &Unit) -> Result<Module, Error> {
        let module = self.parse(unit)?;
        self.verify(&module, unit)?;
        Ok(module)
    }

    /// Prints a module as MLIR text.
    pub fn print(&mut self, module: &Module, options: &PrintOptions) -> String {
        let t = Instant::now();
        let text = neuronc_ir::print::print_module(module, options);
        self.timings.print += t.elapsed();
        text
    }

    /// Runs function `func` of a verified module on `inputs` with the reference
    /// interpreter.
    pub fn run(
        &mut self,
        module: &Module,
        func: &str,
        inputs: Vec<Tensor>,
        options: &RunOptions,
    ) -> Result<Vec<Tensor>, Error> {
        let t = Instant::now();
        let result = neuronc_interp::run_function(module, func, inputs, options);
        self.timings.run += t.elapsed();
        Ok(result?)
    }

    /// Static cost statistics of a module.
    pub fn stats(&mut self, module: &Module) -> Stats {
        stats::compute(module)
    }
}

/// Parses and verifies a whole text in one call: the simplest entry point for a framework.
///
/// ```no_run
/// let module = neuronc::compile("model.mlir", "func.func @main() { func.return }")?;
/// # Ok::<(), neuronc::Error>(())
/// ```
pub fn compile(name: &str, text: &str) -> Result<Module, Error> {
    let source = Source::new(name, text);
    Session::new().load(&Unit::whole(&source))
}

/// Parses and verifies a whole source that is already shared.
pub fn compile_source(source: &Arc<Source>) -> Result<Module, Error> {
    Session::new().load(&Unit::whole(source))
}
