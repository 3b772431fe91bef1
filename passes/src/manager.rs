//! Running pipelines: [`run_pipeline`], its [`PassReport`], and [`OptOptions`], the
//! options struct that maps 1:1 onto the flags of `neuronc-rs opt`.
//!
//! Invariants: passes run in pipeline order; with `verify_each`, the verifier runs after
//! every pass that reported a change and the first failure stops the run with an error
//! naming that pass; the report lists every pass execution (fixpoint iterations included)
//! in execution order.
//!
//! A fixpoint group whose items are all passes that track their edits
//! ([`crate::Pass::tracks_edits`]) runs with an [`EditLog`]: a pass run that provably
//! changes nothing is skipped (it still appears in the report, unchanged), and
//! `canonicalize`/`cse` may prove a run empty from the edits alone (see [`crate::edits`]).
//! The output, the rewrite trace and the fuel used are those of full runs; with
//! `verify_each`, every skipped or proved run is checked against a full run on a copy.

use crate::context::{Changed, PassContext};
use crate::edits::EditLog;
use crate::error::PassError;
use crate::pass::Pass;
use crate::pipeline::{Pipeline, PipelineItem};
use neuronc_ir::{print_module, verify_module, Module, PrintOptions};
use std::time::{Duration, Instant};

/// One execution of one pass.
#[derive(Clone, Debug, PartialEq)]
pub struct PassRun {
    pub pass: &'static str,
    pub wall: Duration,
    pub changed: bool,
    /// Rewrites this execution applied.
    pub rewrites: u64,
}

/// What a pipeline run did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PassReport {
    /// Every pass execution, in order.
    pub runs: Vec<PassRun>,
    pub ops_before: usize,
    pub ops_after: usize,
    pub total_wall: Duration,
    /// Total rewrites applied.
    pub rewrites: u64,
    /// `rule @ location` of every applied rewrite (with `trace_rewrites`).
    pub trace: Vec<String>,
}

impl PassReport {
    /// Wall time and run count per pass name, in order of first execution.
    pub fn per_pass(&self) -> Vec<(&'static str, Duration, usize)> {
        let mut out: Vec<(&'static str, Duration, usize)> = Vec::new();
        for r in &self.runs {
            match out.iter_mut().find(|(n, ..)| *n == r.pass) {
                Some(e) => {
                    e.1 += r.wall;
                    e.2 += 1;
                }
                None => out.push((r.pass, r.wall, 1)),
            }
        }
        out
    }

    /// The `--time-passes` table.
    pub fn timing_table(&self) -> String {
        use std::fmt::Write;
        let total = self.total_wall.as_secs_f64().max(1e-12);
        let mut s = String::from("===-- pass execution timing report --===\n");
        let _ = writeln!(s, "{:>10}  {:>6}  {:>5}  pass", "wall (ms)", "%", "runs");
        for (name, wall, runs) in self.per_pass() {
            let w = wall.as_secs_f64();
            let _ = writeln!(
                s,
                "{:>10.3}  {:>5.1}%  {runs:>5}  {name}",
                w * 1e3,
                100.0 * w / total
            );
        }
        let _ = writeln!(s, "{:>10.3}  100.0%         total", total * 1e3);
        let _ = writeln!(
            s,
            "ops: {} -> {}, rewrites: {}",
            self.ops_before, self.ops_after, self.rewrites
        );
        s
    }
}

/// Runs `pipeline` on `module`.
pub fn run_pipeline(
    module: &mut Module,
    pipeline: &Pipeline,
    ctx: &mut PassContext,
) -> Result<PassReport, PassError> {
    let start = Instant::now();
    let mut report = PassReport {
        ops_before: count_live_ops(module),
        ..PassReport::default()
    };
    run_items(module, &pipeline.items, ctx, &mut report)?;
    // Counted once at the end: a recount after every changing pass walked the whole
    // module a dozen times per run.
    report.ops_after = count_live_ops(module);
    report.total_wall = start.elapsed();
    report.rewrites = report.runs.iter().map(|r| r.rewrites).sum();
    report.trace = ctx.trace().to_vec();
    Ok(report)
}

fn run_items(
    module: &mut Module,
    items: &[PipelineItem],
    ctx: &mut PassContext,
    report: &mut PassReport,
) -> Result<Changed, PassError> {
    let mut any = false;
    for item in items {
        let changed = match item {
            PipelineItem::Pass(pass) => run_one(module, pass.as_ref(), ctx, report)?,
            PipelineItem::Fixpoint {
                items,
                max_iterations,
            } => {
                let armed = tracks_edits(items);
                let outer = if armed {
                    ctx.edits.replace(EditLog::new(module.ops.len()))
                } else {
                    None
                };
                let result = run_fixpoint(module, items, *max_iterations, ctx, report);
                if armed {
                    ctx.edits = outer;
                }
                result?
            }
        };
        any |= changed.changed();
    }
    Ok(Changed::from_bool(any))
}

/// Reruns `items` until an iteration changes nothing, at most `max_iterations` times.
fn run_fixpoint(
    module: &mut Module,
    items: &[PipelineItem],
    max_iterations: u32,
    ctx: &mut PassContext,
    report: &mut PassReport,
) -> Result<Changed, PassError> {
    let mut changed_once = false;
    for _ in 0..max_iterations {
        if !run_items(module, items, ctx, report)?.changed() {
            break;
        }
        changed_once = true;
    }
    Ok(Changed::from_bool(changed_once))
}

/// Whether a fixpoint group runs with an edit log: all its items are passes that track
/// their edits (no nested groups).
fn tracks_edits(items: &[PipelineItem]) -> bool {
    items.iter().all(|item| match item {
        PipelineItem::Pass(p) => p.tracks_edits(),
        PipelineItem::Fixpoint { .. } => false,
    })
}

fn run_one(
    module: &mut Module,
    pass: &dyn Pass,
    ctx: &mut PassContext,
    report: &mut PassReport,
) -> Result<Changed, PassError> {
    let before = ctx.rewrites_applied();
    let t = Instant::now();
    let changed = run_logged(module, pass, ctx)?;
    let wall = t.elapsed();
    if changed.changed() && ctx.verify_each {
        verify_module(module).map_err(|error| PassError::VerifyAfter {
            pass: pass.name(),
            error,
        })?;
    }
    if ctx.wants_print_after(pass.name()) {
        let text = print_module(module, &PrintOptions::default());
        ctx.emit_print(pass.name(), &text);
    }
    report.runs.push(PassRun {
        pass: pass.name(),
        wall,
        changed: changed.changed(),
        rewrites: ctx.rewrites_applied() - before,
    });
    Ok(changed)
}

/// Runs `pass`, through the edit log when the fixpoint group armed one: skipped when
/// the log proves the run would change nothing.
fn run_logged(
    module: &mut Module,
    pass: &dyn Pass,
    ctx: &mut PassContext,
) -> Result<Changed, PassError> {
    let Some(log) = ctx.edits.as_mut() else {
        return pass.run(module, ctx);
    };
    log.begin();
    let changed = if log.can_skip(pass.name()) {
        log.note_shortcut();
        Changed::No
    } else {
        pass.run(module, ctx)?
    };
    let fuel = ctx.fuel().is_some();
    let mut shortcut = false;
    if let Some(log) = ctx.edits.as_mut() {
        shortcut = log.shortcut();
        log.end(pass.name(), changed.changed(), module.ops.len(), fuel);
    }
    if shortcut && ctx.verify_each {
        check_against_full_run(module, pass, ctx)?;
    }
    Ok(changed)
}

/// Runs `pass` in full on a copy of `module` (same fuel and limits, no edit log) and
/// fails if it changes anything: the check of a skipped or proved run.
fn check_against_full_run(
    module: &Module,
    pass: &dyn Pass,
    ctx: &PassContext,
) -> Result<(), PassError> {
    let mut copy = module.clone();
    let mut full = PassContext::new();
    if let Some(f) = ctx.fuel() {
        full = full.with_fuel(f);
    }
    full.fold_limit = ctx.fold_limit;
    if pass.run(&mut copy, &mut full)?.changed() {
        return Err(PassError::Failed {
            pass: pass.name(),
            message: "internal error: the fixpoint group's edit log showed that this run \
                      would change nothing, but a full run changes the module (an \
                      invariant of `neuronc_passes::edits` is broken)"
                .into(),
        });
    }
    Ok(())
}

/// [`Module::num_live_ops`], counted per region (op list lengths) instead of per op.
fn count_live_ops(m: &Module) -> usize {
    fn region(m: &Module, r: neuronc_ir::RegionId) -> usize {
        let ops = &m.region(r).ops;
        let mut n = ops.len();
        for &op in ops {
            for &sub in &m.op(op).regions {
                n += region(m, sub);
            }
        }
        n
    }
    m.funcs.iter().map(|f| region(m, f.body)).sum()
}

/// The options of `neuronc-rs opt`, one field per flag.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OptOptions {
    /// `--passes=TEXT` (takes precedence over `opt_level` when both are given).
    pub passes: Option<String>,
    /// `-O0`, `-O1`, `-O2`.
    pub opt_level: Option<u8>,
    /// `--print-after-all`.
    pub print_after_all: bool,
    /// `--print-after=NAME` (repeatable).
    pub print_after: Vec<String>,
    /// `--time-passes`.
    pub time_passes: bool,
    /// `--verify-each`.
    pub verify_each: bool,
    /// `--opt-fuel=N`.
    pub opt_fuel: Option<u64>,
    /// `--trace-rewrites`.
    pub trace_rewrites: bool,
}

impl OptOptions {
    /// The pipeline the options select (`--passes`, else `-O<n>`, else `-O0`).
    pub fn pipeline(&self) -> Result<Pipeline, PassError> {
        match (&self.passes, self.opt_level) {
            (Some(text), _) => Pipeline::parse(text),
            (None, Some(level)) => Pipeline::preset(level),
            (None, None) => Pipeline::preset(0),
        }
    }

    /// A fresh context configured by the options (printing goes to standard error unless
    /// a sink is installed afterwards). Unknown `--print-after` names are rejected.
    pub fn context(&self) -> Result<PassContext, PassError> {
        for name in &self.print_after {
            if crate::registry::lookup(name).is_none() {
                return Err(PassError::UnknownPass {
                    name: name.clone(),
                    known: crate::registry::known_names(),
                });
            }
        }
        let mut ctx = PassContext::new();
        if let Some(f) = self.opt_fuel {
            ctx = ctx.with_fuel(f);
        }
        ctx.trace_rewrites = self.trace_rewrites;
        ctx.verify_each = self.verify_each;
        ctx.print_after_all = self.print_after_all;
        ctx.print_after = self.print_after.clone();
        ctx.time_passes = self.time_passes;
        Ok(ctx)
    }
}
