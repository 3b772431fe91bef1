//! Deep copies of ops with value renaming, shared by the passes (outlining, inlining)
//! and by the interpreter's module rewrites.
//!
//! Owns: [`ValueMap`] (a renaming; values without an entry map to themselves) and
//! [`clone_op`]. Invariant: a copy is detached (no parent region) and reads the renamed
//! operands; its results and region arguments are recorded in the map, so later copies
//! read them.

use crate::{Module, OpId, TypeId, ValueId};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

/// A value renaming used while cloning ops: values without an entry map to themselves.
pub trait ValueMap {
    /// The value `v` is renamed to (`v` itself when it has no entry).
    fn lookup(&self, v: ValueId) -> ValueId;
    /// Records that `from` is renamed to `to`.
    fn record(&mut self, from: ValueId, to: ValueId);
}

impl ValueMap for FxHashMap<ValueId, ValueId> {
    fn lookup(&self, v: ValueId) -> ValueId {
        *self.get(&v).unwrap_or(&v)
    }
    fn record(&mut self, from: ValueId, to: ValueId) {
        self.insert(from, to);
    }
}

/// Deep-copies one op (detached), mapping operands through `map` and recording its results.
pub fn clone_op(m: &mut Module, op: OpId, map: &mut impl ValueMap) -> OpId {
    let src = m.op(op);
    let (kind, loc, span) = (src.kind, src.loc, src.span);
    let operands = src.operands.iter().map(|&v| map.lookup(v)).collect();
    let types: SmallVec<[TypeId; 4]> = src.results.iter().map(|&r| m.value_type(r)).collect();
    let attrs = src.attrs.clone();
    let new = m.create_op(kind, operands, &types, attrs);
    {
        let n = m.op_mut(new);
        n.loc = loc;
        n.span = span;
    }
    for i in 0..types.len() {
        let (old, new_v) = (m.op(op).results[i], m.op(new).results[i]);
        map.record(old, new_v);
    }
    for ri in 0..m.op(op).regions.len() {
        let r = m.op(op).regions[ri];
        let nr = m.add_op_region(new);
        for ai in 0..m.region(r).args.len() {
            let a = m.region(r).args[ai];
            let na = m.add_region_arg(nr, m.value_type(a));
            map.record(a, na);
        }
        for ii in 0..m.region(r).ops.len() {
            let iop = m.region(r).ops[ii];
            let c = clone_op(m, iop, map);
            m.append_op(nr, c);
        }
    }
    new
}
