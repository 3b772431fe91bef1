//! The edit log of a fixpoint group: which ops each pass run created or edited, so that
//! later iterations can skip work that provably changes nothing.
//!
//! Owns [`EditLog`] and [`Dirty`]. The pipeline manager arms a log for a fixpoint group
//! whose items are all passes that track their edits ([`crate::Pass::tracks_edits`]) and
//! drops it when the group ends; outside such groups every pass runs in full.
//!
//! # What is recorded
//! Pass runs are numbered from 1 in execution order. Every op carries the number of the
//! run that last created it or edited it in place ([`EditLog::mark`]): its operands, kind,
//! attributes or result types, the types of values it defines (block arguments of its
//! regions included), or the op list of one of its regions (an op removed from a nested
//! region marks the op owning that region; ops created there are new). Removing an op
//! from a function body is not an edit. Ops created during a run get that run's number
//! when it ends. Per pass name, the log keeps the number of its last run, whether that
//! run changed the module and whether it was *complete*: it ran without fuel
//! (`--opt-fuel`) and left nothing undone that a rerun would do.
//!
//! # How it is used (the invariants, each checked under `--verify-each`)
//! * A pass whose last run changed nothing, run again on a module nobody changed since,
//!   changes nothing (passes are deterministic): the manager skips it.
//! * A tracking pass is idempotent: after a complete run, a rerun changes nothing. So
//!   when nobody changed the module since its last complete run, the manager skips it.
//! * `dce` is skipped while the module is known to hold no dead op: since a complete
//!   `dce` run or a changing `canonicalize`/`narrow-index` run (they end by removing every
//!   dead op: [`crate::dce::cleanup_dead_ops`], or for `narrow-index`
//!   [`crate::dce::cleanup_dead_ops_from`], which walks only from the ops it touched when
//!   the module held no dead op before), only runs that keep that property
//!   changed it. `cse` keeps it: an op merges into one with the same operands, so every
//!   value used before stays used.
//! * `canonicalize` and `cse` ask for the ops edited since their last complete run
//!   ([`crate::PassContext::dirty_since`]) and first prove cheaply, from those ops only,
//!   that a full run would change nothing; if they cannot, they run in full. What each
//!   proof relies on is documented in [`crate::canonicalize::incremental`] and
//!   [`crate::cse`].
//!
//! With `verify_each`, after every run that was skipped or ended by such a proof, the
//! manager runs the pass in full on a copy of the module and fails with an internal
//! error naming the pass if that copy changes: a broken invariant cannot silently change
//! the output of the tests.

use neuronc_ir::OpId;

/// The last run of one pass.
#[derive(Clone, Copy, Debug)]
struct Record {
    pass: &'static str,
    /// Its run number.
    run: u32,
    changed: bool,
    complete: bool,
}

/// Edits since the fixpoint group started (see the module docs).
#[derive(Debug, Default)]
pub struct EditLog {
    /// Number of the current (or last) run; 0 before the first.
    run: u32,
    /// Per op: number of the run that last created or edited it.
    stamp: Vec<u32>,
    /// `(run, op)` for every edit, in order (an op may appear more than once).
    edits: Vec<(u32, OpId)>,
    /// `(run, first, end)`: the ops with ids in `first..end` were created by `run`.
    created: Vec<(u32, u32, u32)>,
    /// Number of the last run that changed the module.
    last_change: u32,
    records: Vec<Record>,
    /// The current run left work undone (it is not complete).
    incomplete: bool,
    /// The module holds no dead op (see the module docs).
    dead_free: bool,
    /// The current run removed every dead op at its end.
    made_dead_free: bool,
    /// The current run left no dead op behind if there was none before.
    kept_dead_free: bool,
    /// The current run was skipped or ended by a proof instead of a full run.
    shortcut: bool,
}

/// The ops created or edited after a given run.
#[derive(Clone, Copy, Debug)]
pub struct Dirty<'a> {
    stamp: &'a [u32],
    edits: &'a [(u32, OpId)],
    created: &'a [(u32, u32, u32)],
    after: u32,
}

impl Dirty<'_> {
    /// Whether `op` was created or edited after the run (ops created by the current run
    /// always are).
    #[inline]
    pub fn contains(&self, op: OpId) -> bool {
        self.stamp.get(op.index()).is_none_or(|&s| s > self.after)
    }

    /// Every op [`Dirty::contains`] among the first `ops` ids of the arena, with
    /// repetitions; ops no region lists any more may be among them.
    pub fn ops(&self, ops: usize) -> impl Iterator<Item = OpId> + '_ {
        let after = self.after;
        let edited = self.edits.iter().filter(move |e| e.0 > after).map(|e| e.1);
        let created = self
            .created
            .iter()
            .filter(move |c| c.0 > after)
            .flat_map(|c| c.1..c.2);
        let current = self.stamp.len() as u32..ops as u32;
        edited.chain(created.chain(current).map(OpId))
    }
}

impl EditLog {
    /// A log for a module whose arena holds `ops` ops (none of them edited yet).
    pub fn new(ops: usize) -> EditLog {
        EditLog {
            stamp: vec![0; ops],
            ..EditLog::default()
        }
    }

    fn record(&self, pass: &str) -> Option<&Record> {
        self.records.iter().find(|r| r.pass == pass)
    }

    /// Whether a run of `pass` now would provably change nothing: its last run changed
    /// nothing, or was complete (the pass is idempotent), and nothing changed since.
    pub fn can_skip(&self, pass: &str) -> bool {
        if pass == crate::dce::NAME && self.dead_free {
            return true;
        }
        self.record(pass)
            .is_some_and(|r| r.run >= self.last_change && (!r.changed || r.complete))
    }

    /// The ops edited since the last run of `pass`, if that run was complete.
    pub fn dirty_since(&self, pass: &str) -> Option<Dirty<'_>> {
        let r = self.record(pass).filter(|r| r.complete)?;
        Some(Dirty {
            stamp: &self.stamp,
            edits: &self.edits,
            created: &self.created,
            after: r.run,
        })
    }

    /// Starts the next run.
    pub fn begin(&mut self) {
        self.run += 1;
        self.incomplete = false;
        self.made_dead_free = false;
        self.kept_dead_free = false;
        self.shortcut = false;
    }

    /// Records that the current run created or edited `op`.
    #[inline]
    pub fn mark(&mut self, op: OpId) {
        if let Some(s) = self.stamp.get_mut(op.index()) {
            if *s != self.run {
                *s = self.run;
                self.edits.push((self.run, op));
            }
        }
    }

    /// The current run leaves work undone that a rerun would do.
    pub fn note_incomplete(&mut self) {
        self.incomplete = true;
    }

    /// The current run ended by removing every dead op.
    pub fn note_dead_free(&mut self) {
        self.made_dead_free = true;
    }

    /// The current run makes no op dead.
    pub fn note_keeps_dead_free(&mut self) {
        self.kept_dead_free = true;
    }

    /// The current run was skipped or ended by a proof (checked under `verify_each`).
    pub fn note_shortcut(&mut self) {
        self.shortcut = true;
    }

    /// Whether the module held no dead op when the current run began (see the module
    /// docs).
    pub fn dead_free(&self) -> bool {
        self.dead_free
    }

    /// Whether the current run was skipped or ended by a proof.
    pub fn shortcut(&self) -> bool {
        self.shortcut
    }

    /// Ends the current run of `pass`; `ops` is the size of the op arena now, `fuel`
    /// whether the pipeline runs with limited fuel (then no run is complete).
    pub fn end(&mut self, pass: &'static str, changed: bool, ops: usize, fuel: bool) {
        let first = self.stamp.len() as u32;
        if ops as u32 > first {
            self.created.push((self.run, first, ops as u32));
            self.stamp.resize(ops, self.run);
        }
        if changed {
            self.last_change = self.run;
        }
        let complete = !self.incomplete && !fuel;
        self.set(pass, changed, complete);
        if self.made_dead_free && !fuel {
            self.dead_free = true;
        } else if changed && !self.kept_dead_free {
            self.dead_free = false;
        }
    }

    fn set(&mut self, pass: &'static str, changed: bool, complete: bool) {
        let rec = Record {
            pass,
            run: self.run,
            changed,
            complete,
        };
        match self.records.iter_mut().find(|r| r.pass == pass) {
            Some(r) => *r = rec,
            None => self.records.push(rec),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_only_what_nothing_touched_since() {
        let mut log = EditLog::new(4);
        log.begin();
        log.mark(OpId(1));
        log.end("a", true, 6, false);
        assert!(log.can_skip("a"), "complete run, nothing changed since");
        assert!(!log.can_skip("b"), "never ran");
        let d = log.dirty_since("a").unwrap();
        assert!(!d.contains(OpId(1)) && !d.contains(OpId(5)) && d.contains(OpId(6)));

        log.begin();
        log.mark(OpId(2));
        log.note_incomplete();
        log.end("b", true, 7, false);
        assert!(!log.can_skip("a") && !log.can_skip("b"));
        assert!(log.dirty_since("b").is_none());
        let d = log.dirty_since("a").unwrap();
        assert!(d.contains(OpId(2)) && d.contains(OpId(6)) && !d.contains(OpId(3)));
        let ops: Vec<u32> = d.ops(8).map(|op| op.0).collect();
        assert_eq!(ops, [2, 6, 7]);

        log.begin();
        log.end("c", false, 7, true);
        assert!(log.can_skip("c"), "changed nothing, nothing changed since");
        assert!(log.dirty_since("c").is_none(), "fuel: not complete");
    }

    #[test]
    fn dce_is_skipped_while_no_op_is_dead() {
        let mut log = EditLog::new(2);
        log.begin();
        log.note_dead_free();
        log.end("canonicalize", true, 2, false);
        assert!(log.can_skip(crate::dce::NAME));
        log.begin();
        log.note_keeps_dead_free();
        log.end("cse", true, 2, false);
        assert!(log.can_skip(crate::dce::NAME));
        log.begin();
        log.end("cse", false, 2, false);
        assert!(log.can_skip(crate::dce::NAME), "no change");
        log.begin();
        log.end("other", true, 2, false);
        assert!(!log.can_skip(crate::dce::NAME));
    }
}
