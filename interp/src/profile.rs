//! Per-op-kind timing of a run, for finding the interpreter's hot ops.
//!
//! Owns: [`Profile`] (wall time and count per [`OpKind`]). Only ops of the outermost
//! region are timed; an op with regions (`reduce`, `while`, ...) includes the time of its
//! regions, so the totals add up to the run time without double counting.

use neuronc_ir::OpKind;
use rustc_hash::FxHashMap;
use std::time::Duration;

/// Wall time and count per op kind.
#[derive(Clone, Debug, Default)]
pub struct Profile {
    by_kind: FxHashMap<OpKind, (Duration, u64)>,
}

/// One row of a [`Profile`].
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileRow {
    pub kind: &'static str,
    pub time: Duration,
    pub count: u64,
}

impl Profile {
    pub(crate) fn record(&mut self, kind: OpKind, d: Duration) {
        let e = self.by_kind.entry(kind).or_default();
        e.0 += d;
        e.1 += 1;
    }

    /// The rows, slowest kind first (ties by name, so the order is deterministic).
    pub fn rows(&self) -> Vec<ProfileRow> {
        let mut rows: Vec<ProfileRow> = self
            .by_kind
            .iter()
            .map(|(k, &(time, count))| ProfileRow {
                kind: k.name(),
                time,
                count,
            })
            .collect();
        rows.sort_by(|a, b| b.time.cmp(&a.time).then(a.kind.cmp(b.kind)));
        rows
    }
}
