//! Which ops a `canonicalize` run inside a fixpoint group must try the rules on, given
//! the ops edited since its last complete run ([`crate::edits`]).
//!
//! # The invariant every rule keeps
//! A rule applied to an op `x` reads only:
//! * `x` itself: kind, attributes, operands, result types;
//! * the types of `x`'s operands;
//! * the ops defining `x`'s operands ("one step up") and, of those, their kind,
//!   attributes, operands, result types and the types of *their* operands (so the ops
//!   two steps up may matter through their result types);
//! * chains of `broadcast_in_dim`/`reshape` ops above an operand, up to the constant at
//!   their top (how [`crate::ir_util::splat_ref`] sees splats);
//! * pass-wide settings ([`crate::PassContext::fold_limit`]).
//!
//! It never reads users, use counts, positions in a region, the contents of regions or
//! locations (which only label what a committed rule creates).
//!
//! # Why skipping is exact
//! At the end of a complete run no rule matches any op: the sweep visits an op after
//! everything it can read is final, and dead-op removal only drops ops no live op reads.
//! An edit ([`crate::edits`] lists what counts) of an op changes what can be read from it;
//! the type of a value changes only with an edit of its defining op (or, for block
//! arguments, of the ops of their region). So an op none of whose readable ops was edited
//! since that run still matches nothing, and a run changes the module iff a rule matches
//! one of the ops [`ops_near_edits`] returns. A rule that breaks the invariant is caught
//! under `--verify-each` (the manager reruns skipped runs in full) and by the oracle test
//! `passes/tests/incremental.rs`.

use crate::edits::Dirty;
use neuronc_ir::{Module, OpId, OpKind, RegionId};

/// The value is a result of an edited op.
const EDITED: u8 = 1;
/// The value is a result of an op that is edited or reads a result of an edited op.
const NEAR: u8 = 2;
/// The value is a result of an edited op or at the bottom of a `broadcast_in_dim`/
/// `reshape` chain below one.
const CHAIN: u8 = 4;

/// The live ops whose readable ops (see the module docs) include an edited one, each
/// once: the edited ones first, then the others in walk order.
pub fn ops_near_edits(m: &Module, dirty: &Dirty) -> Vec<OpId> {
    let mut walk = Walk {
        m,
        flags: vec![0u8; m.values.len()],
        listed: vec![false; m.ops.len()],
        near: Vec::new(),
    };
    for op in dirty.ops(m.ops.len()) {
        let o = m.op(op);
        // Ops no region lists any more were erased.
        if o.parent.is_some() {
            for r in &o.results {
                walk.flags[r.index()] = EDITED | NEAR | CHAIN;
            }
            walk.list(op);
        }
    }
    if !walk.near.is_empty() {
        for f in &m.funcs {
            walk.region(f.body);
        }
    }
    walk.near
}

struct Walk<'a> {
    m: &'a Module,
    /// Flags of values, by value index. A value is always defined before its uses in
    /// walk order (the verifier's dominance rule), so operands are flagged when read.
    flags: Vec<u8>,
    /// Whether an op is in `near` already, by op index (the dirty ops repeat, and an
    /// edited op may read an edited one).
    listed: Vec<bool>,
    near: Vec<OpId>,
}

impl Walk<'_> {
    fn list(&mut self, op: OpId) {
        if !std::mem::replace(&mut self.listed[op.index()], true) {
            self.near.push(op);
        }
    }

    /// Flags the ops of `region` and of the regions nested in them, in pre-order: an op
    /// reading a flagged value is near an edit.
    fn region(&mut self, region: RegionId) {
        let m = self.m;
        for &op in &m.region(region).ops {
            let o = m.op(op);
            let above = o
                .operands
                .iter()
                .fold(0u8, |acc, v| acc | self.flags[v.index()]);
            if above != 0 {
                self.list(op);
                let mut f = 0;
                if above & EDITED != 0 {
                    f |= NEAR;
                }
                let chain = matches!(o.kind, OpKind::BroadcastInDim | OpKind::Reshape);
                if chain && above & CHAIN != 0 {
                    f |= CHAIN;
                }
                for r in &o.results {
                    self.flags[r.index()] |= f;
                }
            }
            for &r in &o.regions {
                self.region(r);
            }
        }
    }
}
