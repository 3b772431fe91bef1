//! The state a pipeline threads through its passes: optimization fuel, the rewrite trace,
//! the print-after sink and pass-wide limits.
//!
//! Owns [`PassContext`] and [`Changed`]. Inside fixpoint groups it also carries the
//! group's [`EditLog`] (see [`crate::edits`]), through which passes mark the ops they
//! edit in place.
//! Invariants: every individual rewrite of every pass goes through
//! [`PassContext::try_rewrite`] *before* it mutates the module, so that `--opt-fuel=N`
//! applies exactly the first `N` rewrites of a run (in deterministic order) and
//! `--trace-rewrites` lists exactly the rewrites that were applied.

use crate::edits::{Dirty, EditLog};
use neuronc_ir::{Module, OpId};

/// Whether a pass changed the module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Changed {
    No,
    Yes,
}

impl Changed {
    pub fn from_bool(b: bool) -> Changed {
        if b {
            Changed::Yes
        } else {
            Changed::No
        }
    }
    pub fn changed(self) -> bool {
        self == Changed::Yes
    }
}

/// Receives `(pass name, printed module)` for `--print-after-all` / `--print-after=NAME`.
pub type PrintSink = Box<dyn FnMut(&str, &str)>;

/// Default element limit for constant folding: results with more elements are not folded.
pub const DEFAULT_FOLD_LIMIT: u64 = 1024;

/// Mutable state shared by all passes of one pipeline run.
pub struct PassContext {
    /// Remaining rewrites, or `None` for unlimited.
    fuel: Option<u64>,
    /// Whether applied rewrites are recorded in [`PassContext::trace`].
    pub trace_rewrites: bool,
    trace: Vec<String>,
    applied: u64,
    /// Run the verifier after every pass that changed the module.
    pub verify_each: bool,
    /// Print the module after every pass.
    pub print_after_all: bool,
    /// Print the module after the passes with these names.
    pub print_after: Vec<String>,
    /// Collect per-pass wall times (always measured; this flag asks the driver to show them).
    pub time_passes: bool,
    /// Where printed modules go; `None` means standard error.
    pub print_sink: Option<PrintSink>,
    /// Largest result (in elements) that constant folding may materialize.
    pub fold_limit: u64,
    /// The edit log of the running fixpoint group, if the manager armed one.
    pub(crate) edits: Option<EditLog>,
}

impl Default for PassContext {
    fn default() -> Self {
        PassContext {
            fuel: None,
            trace_rewrites: false,
            trace: Vec::new(),
            applied: 0,
            verify_each: false,
            print_after_all: false,
            print_after: Vec::new(),
            time_passes: false,
            print_sink: None,
            fold_limit: DEFAULT_FOLD_LIMIT,
            edits: None,
        }
    }
}

impl std::fmt::Debug for PassContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PassContext")
            .field("fuel", &self.fuel)
            .field("applied", &self.applied)
            .field("trace_rewrites", &self.trace_rewrites)
            .field("verify_each", &self.verify_each)
            .finish_non_exhaustive()
    }
}

impl PassContext {
    pub fn new() -> Self {
        Self::default()
    }

    /// Limits the run to `fuel` rewrites (`--opt-fuel=N`).
    pub fn with_fuel(mut self, fuel: u64) -> Self {
        self.fuel = Some(fuel);
        self
    }

    /// Remaining fuel (`None`: unlimited).
    pub fn fuel(&self) -> Option<u64> {
        self.fuel
    }

    /// Number of rewrites applied so far.
    pub fn rewrites_applied(&self) -> u64 {
        self.applied
    }

    /// The applied rewrites, `rule @ location`, if tracing is on.
    pub fn trace(&self) -> &[String] {
        &self.trace
    }

    /// Asks permission to apply rewrite `rule` at `op`: consumes one unit of fuel and
    /// records the rewrite. Returns `false` (and changes nothing) when fuel is exhausted;
    /// the caller must then leave the module untouched.
    pub fn try_rewrite(&mut self, rule: &str, module: &Module, op: OpId) -> bool {
        if let Some(f) = self.fuel.as_mut() {
            if *f == 0 {
                return false;
            }
            *f -= 1;
        }
        self.applied += 1;
        if self.trace_rewrites {
            self.trace.push(format!(
                "{rule} @ {}",
                crate::ir_util::op_location(module, op)
            ));
        }
        true
    }

    /// Records that the running pass created or edited `op` in place (see
    /// [`crate::edits`] for what counts); a no-op outside armed fixpoint groups.
    #[inline]
    pub(crate) fn mark_edited(&mut self, op: OpId) {
        if let Some(log) = self.edits.as_mut() {
            log.mark(op);
        }
    }

    /// Records that the op owning `region`, if any, lost an op of that region.
    pub(crate) fn mark_region_edited(&mut self, module: &Module, region: neuronc_ir::RegionId) {
        if let Some(owner) = module.region(region).parent {
            self.mark_edited(owner);
        }
    }

    /// The running pass leaves work undone that a rerun would do (its run is not
    /// complete, see [`crate::edits`]).
    pub(crate) fn note_incomplete(&mut self) {
        if let Some(log) = self.edits.as_mut() {
            log.note_incomplete();
        }
    }

    /// The running pass ended by removing every dead op.
    pub(crate) fn note_dead_free(&mut self) {
        if let Some(log) = self.edits.as_mut() {
            log.note_dead_free();
        }
    }

    /// Whether the module held no dead op when the running pass began, as far as the
    /// running fixpoint group's edit log knows (`false` outside armed groups).
    pub(crate) fn was_dead_free(&self) -> bool {
        self.edits.as_ref().is_some_and(EditLog::dead_free)
    }

    /// The running pass makes no op dead (a module without dead ops keeps none).
    pub(crate) fn note_keeps_dead_free(&mut self) {
        if let Some(log) = self.edits.as_mut() {
            log.note_keeps_dead_free();
        }
    }

    /// The running pass proved that a full run would change nothing and returned.
    pub(crate) fn note_shortcut(&mut self) {
        if let Some(log) = self.edits.as_mut() {
            log.note_shortcut();
        }
    }

    /// The ops created or edited since the last complete run of `pass` inside the running
    /// fixpoint group; `None` outside armed groups or when there was no such run (then
    /// the pass must run in full).
    pub(crate) fn dirty_since(&self, pass: &str) -> Option<Dirty<'_>> {
        self.edits.as_ref()?.dirty_since(pass)
    }

    /// Whether the module should be printed after `pass`.
    pub(crate) fn wants_print_after(&self, pass: &str) -> bool {
        self.print_after_all || self.print_after.iter().any(|p| p == pass)
    }

    /// Hands a printed module to the sink (or standard error).
    pub(crate) fn emit_print(&mut self, pass: &str, text: &str) {
        match self.print_sink.as_mut() {
            Some(sink) => sink(pass, text),
            None => eprintln!("// -----// IR Dump After {pass} //----- //\n{text}"),
        }
    }
}
