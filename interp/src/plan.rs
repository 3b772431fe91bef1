//! Per-region execution plans, computed once per region and cached by the evaluator.
//!
//! Owns: [`Plan`]: for each op of a region, how it runs ([`Step`]) and which values die
//! after it. A `transpose` whose every use is an operand of a `dot_general` of the same
//! region is not materialised: each such `dot_general` reads the transpose's operand
//! through the permutation instead ([`Fold`]), which the GEMM absorbs as strides.
//! Invariants: folding never changes a result (the contraction sees the same logical
//! operand); liveness is computed on the rewritten uses, so a folded transpose's operand
//! lives until its last consuming dot, and a skipped transpose's result is never bound.

use neuronc_ir::{Module, OpId, OpKind, RegionId, ValueDef, ValueId};
use rustc_hash::{FxHashMap, FxHashSet};

/// A `dot_general` operand read through a transpose: logical operand dim `d` is dim
/// `perm[d]` of `src`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Fold {
    pub src: ValueId,
    pub perm: Vec<i64>,
}

/// How one op of a region runs.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Step {
    /// Through [`crate::dispatch::exec`].
    Normal,
    /// Not at all: a transpose folded into every one of its users.
    Skip,
    /// A `dot_general` with (lhs, rhs) operands possibly folded.
    FoldedDot([Option<Fold>; 2]),
}

/// The plan of one region.
#[derive(Clone, Debug, Default)]
pub(crate) struct Plan {
    pub steps: Vec<Step>,
    /// For each op, the values defined in the region whose last use it is.
    pub dead: Vec<Vec<ValueId>>,
}

/// The permutation of a `transpose` op, if it is a valid one for its operand's rank.
fn transpose_perm(m: &Module, op: OpId) -> Option<(ValueId, Vec<i64>)> {
    let o = m.op(op);
    let src = *o.operands.first()?;
    let rank = m.tensor_type(src)?.rank();
    let perm = o.attrs.i64_array("permutation")?;
    let mut seen = vec![false; rank];
    for &p in &perm {
        let slot = usize::try_from(p).ok().and_then(|p| seen.get_mut(p))?;
        if std::mem::replace(slot, true) {
            return None;
        }
    }
    (perm.len() == rank).then_some((src, perm))
}

/// The transposes of `ops` that can be folded: every use is a direct operand (0 or 1) of
/// a `dot_general` in `ops`.
fn foldable(m: &Module, ops: &[OpId]) -> FxHashMap<ValueId, Fold> {
    let mut cand: FxHashMap<ValueId, Fold> = FxHashMap::default();
    for &op in ops {
        let o = m.op(op);
        if o.kind == OpKind::Transpose && o.results.len() == 1 {
            if let Some((src, perm)) = transpose_perm(m, op) {
                cand.insert(o.results[0], Fold { src, perm });
            }
        }
    }
    let mut used = FxHashSet::default();
    for &op in ops {
        let o = m.op(op);
        for (i, v) in o.operands.iter().enumerate() {
            let dot_use = o.kind == OpKind::DotGeneral && i < 2;
            if !dot_use {
                cand.remove(v);
            }
            used.insert(*v);
        }
        for &r in &o.regions {
            m.walk_region(r, &mut |inner| {
                for v in &m.op(inner).operands {
                    cand.remove(v);
                }
            });
        }
    }
    cand.retain(|v, _| used.contains(v));
    cand
}

impl Plan {
    /// Plans `region` of `m`.
    pub fn new(m: &Module, region: RegionId) -> Plan {
        let ops = &m.region(region).ops;
        let folds = foldable(m, ops);
        let steps: Vec<Step> = ops
            .iter()
            .map(|&op| {
                let o = m.op(op);
                if o.results.first().is_some_and(|r| folds.contains_key(r)) {
                    return Step::Skip;
                }
                if o.kind == OpKind::DotGeneral {
                    let f = |i: usize| o.operands.get(i).and_then(|v| folds.get(v)).cloned();
                    let pair = [f(0), f(1)];
                    if pair.iter().any(Option::is_some) {
                        return Step::FoldedDot(pair);
                    }
                }
                Step::Normal
            })
            .collect();
        let dead = liveness(m, ops, &steps, &folds);
        Plan { steps, dead }
    }
}

/// For each op, the values defined in `ops` whose last (rewritten) use it is.
fn liveness(
    m: &Module,
    ops: &[OpId],
    steps: &[Step],
    folds: &FxHashMap<ValueId, Fold>,
) -> Vec<Vec<ValueId>> {
    let mut last: FxHashMap<ValueId, usize> = FxHashMap::default();
    for (i, &op) in ops.iter().enumerate() {
        let o = m.op(op);
        for &r in &o.results {
            if !folds.contains_key(&r) {
                last.insert(r, i);
            }
        }
        let mut uses = |v: ValueId| {
            let v = folds.get(&v).map_or(v, |f| f.src);
            if let Some(slot) = last.get_mut(&v) {
                *slot = i;
            }
        };
        if steps[i] != Step::Skip {
            o.operands.iter().for_each(|&v| uses(v));
        }
        for &r in &o.regions {
            m.walk_region(r, &mut |inner| {
                m.op(inner).operands.iter().for_each(|&v| uses(v))
            });
        }
    }
    let mut dead = vec![Vec::new(); ops.len()];
    for (v, i) in last {
        // Values used by the terminator stay (they are read on return).
        let is_term = m.op(ops[i]).kind.is_terminator();
        if !is_term && matches!(m.value(v).def, ValueDef::Result(..)) {
            dead[i].push(v);
        }
    }
    for d in &mut dead {
        d.sort();
    }
    dead
}
