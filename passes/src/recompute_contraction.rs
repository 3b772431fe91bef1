//! `recompute-for-contraction`: gives a matmul operand that is reduced along its
//! contracted dimension elsewhere (attention probabilities) its own copy of the cheap ops
//! that make it, so that the copy can be laid out for the matmul and the original for the
//! reduction, instead of one of them paying a physical transpose.
//!
//! # Why
//! On a NeuronCore a matmul contracts over the partition axis of both operands, and a
//! reduction is cheap only along the free axis. Attention computes `S = Q·Kᵀ`, reduces it
//! along the key axis (softmax's max and sum) and then contracts the probabilities `P`
//! over that same key axis (`P·V`): one value wants the key axis free, the other on the
//! partitions, and the layout pass must transpose `P` (batch × heads × seq² elements per
//! layer). But every op between the score matmul and `P` is elementwise or a broadcast,
//! and the score matmul can put either of its free axes on the output partitions (the
//! stationary operand's free axis becomes the output's partition axis). So `P` is
//! recomputed, from the score matmul on, as a second copy for the `P·V` matmul: the copy
//! has no reduction along the key axis (the row max and sum come in through broadcasts,
//! which replicate across partitions), so it is made with keys on the partitions directly.
//! On the hardware the copy's matmul costs the same Tensor-engine passes as the transpose
//! it replaces (its contraction fits the 128 partition rows, which this pass requires) and
//! its elementwise ops take the place of the transpose's PSUM-to-SBUF copy.
//!
//! # Rule
//! For each `dot_general` operand `P` contracted over exactly one dimension `d`, the *cone*
//! of `P` is followed through the ops that carry `d` (as which dimension of their result):
//! elementwise ops, `broadcast_in_dim` (its operand carries `d` when `d` is one of its
//! dimensions; otherwise `d` is created there and the operand is shared), `reshape` (the
//! dimension's reshape partner), `transpose` and splat constants are copied; a
//! `dot_general` whose result dimension `d` is a free dimension of one operand ends the
//! cone and is copied (its operands are shared). The rewrite applies when
//! * the cone ends in at least one such `dot_general`, each contracting at most
//!   [`MAX_CONTRACTION`] elements,
//! * some value of the cone is an operand of a `reduce` over its `d` dimension (so the
//!   original cannot be laid out for the matmul without a cross-partition reduction),
//! * it copies at most [`MAX_CLONED_OPS`] ops, and the values it shares that carry `d`
//!   (other than function arguments, which each consumer loads in its own layout) hold at
//!   most 1/[`SHARED_FRACTION`] of `P`'s bytes.
//!
//! Invariants: the copies are op-for-op clones (same kinds, attributes, operand order and
//! types, and the original's source location, so `explain` names a copy like the op it
//! recomputes), so the recomputed operand is bitwise the original value; originals are left for
//! `dce`; each rewritten matmul operand is one rewrite (`--opt-fuel`, `--trace-rewrites`).
//! The pass must run after `cse`, which would merge the copies back.

use crate::context::{Changed, PassContext};
use crate::error::PassError;
use crate::ir_util::{clone_op, def_op, splat_ref};
use crate::neuron::graph::value_bytes;
use crate::neuron::layout::reshape_partner;
use crate::pass::Pass;
use neuronc_ir::{Attr, Module, OpId, OpKind, RegionId, ValueId};
use rustc_hash::FxHashMap;

/// Largest contraction (elements) of a copied matmul: one pass over the 128 partition rows.
pub const MAX_CONTRACTION: i64 = 128;
/// Largest number of ops copied for one matmul operand.
pub const MAX_CLONED_OPS: usize = 64;
/// Shared values that carry the contracted dimension may hold at most this fraction
/// (1/N) of the operand's bytes.
pub const SHARED_FRACTION: u64 = 8;

/// The `recompute-for-contraction` pass.
pub struct RecomputeForContraction;

impl Pass for RecomputeForContraction {
    fn name(&self) -> &'static str {
        "recompute-for-contraction"
    }

    fn run(&self, module: &mut Module, ctx: &mut PassContext) -> Result<Changed, PassError> {
        Ok(crate::pass::each_body(module, ctx, run_region))
    }
}

/// Rewrites the matmuls of one function body. Returns whether anything changed.
fn run_region(m: &mut Module, region: RegionId, ctx: &mut PassContext) -> bool {
    let reduced = reduced_dims(m, region);
    let dots: Vec<OpId> = m
        .region(region)
        .ops
        .iter()
        .copied()
        .filter(|&o| m.op(o).kind == OpKind::DotGeneral)
        .collect();
    let mut changed = false;
    for dot in dots {
        for side in 0..2 {
            let Some(cone) = plan_operand(m, region, dot, side, &reduced) else {
                continue;
            };
            if !ctx.try_rewrite("recompute-for-contraction", m, dot) {
                return changed;
            }
            apply(m, region, dot, side, &cone);
            changed = true;
        }
    }
    changed
}

/// For every value of `region` that some `reduce` in it reduces, the reduced dimensions.
fn reduced_dims(m: &Module, region: RegionId) -> FxHashMap<ValueId, Vec<i64>> {
    let mut out: FxHashMap<ValueId, Vec<i64>> = FxHashMap::default();
    for &o in &m.region(region).ops {
        let op = m.op(o);
        if op.kind != OpKind::Reduce {
            continue;
        }
        let dims = op.attrs.i64_array("dimensions").unwrap_or_default();
        let inputs = op.operands.len() / 2;
        for &v in &op.operands[..inputs] {
            out.entry(v).or_default().extend(dims.iter().copied());
        }
    }
    out
}

/// The ops to copy for one matmul operand, in an order where operands come first.
struct Cone {
    /// Ops to copy, producers before consumers.
    ops: Vec<OpId>,
    /// The operand value the last copy replaces.
    root: ValueId,
}

/// What the walk found so far.
#[derive(Default)]
struct Walk {
    /// The carried dimension of every value visited.
    dim: FxHashMap<ValueId, usize>,
    ops: Vec<OpId>,
    dots: usize,
    shared_bytes: u64,
    conflict: bool,
}

/// Decides whether operand `side` of `dot` should get its own copy, and of which ops.
fn plan_operand(
    m: &Module,
    region: RegionId,
    dot: OpId,
    side: usize,
    reduced: &FxHashMap<ValueId, Vec<i64>>,
) -> Option<Cone> {
    let op = m.op(dot);
    let Some(Attr::DotDims(dd)) = op.attrs.get("dot_dimension_numbers") else {
        return None;
    };
    let contracting = if side == 0 {
        &dd.lhs_contracting
    } else {
        &dd.rhs_contracting
    };
    let [d] = contracting[..] else { return None };
    let root = *op.operands.get(side)?;
    def_op(m, root).filter(|&o| m.op(o).parent == Some(region))?;
    let mut walk = Walk::default();
    visit(
        m,
        region,
        root,
        usize::try_from(d).ok()?,
        reduced,
        &mut walk,
    )?;
    let limit = value_bytes(m, root) / SHARED_FRACTION;
    let worth = walk.conflict && walk.dots > 0 && walk.shared_bytes <= limit;
    worth.then_some(Cone {
        ops: walk.ops,
        root,
    })
}

/// Follows value `v`, whose dimension `d` is the contracted one, to its producers.
/// Returns `None` when the cone cannot be copied (too large, or a value reached with two
/// different carried dimensions).
fn visit(
    m: &Module,
    region: RegionId,
    v: ValueId,
    d: usize,
    reduced: &FxHashMap<ValueId, Vec<i64>>,
    walk: &mut Walk,
) -> Option<()> {
    if let Some(&seen) = walk.dim.get(&v) {
        return (seen == d).then_some(());
    }
    walk.dim.insert(v, d);
    let Some(o) = def_op(m, v).filter(|&o| m.op(o).parent == Some(region)) else {
        return Some(()); // a function argument or a captured value: free in any layout
    };
    let op = m.op(o);
    let shape = |x: ValueId| m.tensor_type(x).map(|t| &t.shape[..]);
    let step = match op.kind {
        OpKind::Constant if splat_ref(m, v).is_some() => Step::Copy(Vec::new()),
        OpKind::DotGeneral => dot_step(m, o, d),
        OpKind::BroadcastInDim => {
            let dims = op
                .attrs
                .i64_array("broadcast_dimensions")
                .unwrap_or_default();
            let x = op.operands[0];
            match dims.iter().position(|&b| b == d as i64) {
                Some(j) if shape(x)?.get(j) == shape(v)?.get(d) => Step::Copy(vec![(x, j)]),
                _ => Step::Copy(Vec::new()),
            }
        }
        OpKind::Reshape => {
            let x = op.operands[0];
            match reshape_partner(shape(v)?, shape(x)?, d) {
                Some(j) => Step::Copy(vec![(x, j)]),
                None => Step::Share,
            }
        }
        OpKind::Transpose => {
            let perm = op.attrs.i64_array("permutation").unwrap_or_default();
            let j = usize::try_from(*perm.get(d)?).ok()?;
            Step::Copy(vec![(op.operands[0], j)])
        }
        k if k.is_elementwise() && op.results.len() == 1 => {
            let rank = shape(v)?.len();
            let same: Vec<(ValueId, usize)> = op
                .operands
                .iter()
                .filter(|&&x| shape(x).is_some_and(|s| s.len() == rank))
                .map(|&x| (x, d))
                .collect();
            Step::Copy(same)
        }
        _ => Step::Share,
    };
    if matches!(step, Step::Share) {
        walk.shared_bytes += value_bytes(m, v);
        return Some(());
    }
    // A copied value that a reduction reduces along `d`: the original's layout conflicts.
    walk.conflict |= reduced
        .get(&v)
        .is_some_and(|dims| dims.contains(&(d as i64)));
    match step {
        Step::Share => Some(()),
        Step::Root => {
            walk.dots += 1;
            walk.ops.push(o);
            Some(())
        }
        Step::Copy(next) => {
            for (x, j) in next {
                visit(m, region, x, j, reduced, walk)?;
            }
            walk.ops.push(o);
            (walk.ops.len() <= MAX_CLONED_OPS).then_some(())
        }
    }
}

/// How the walk treats one producer.
enum Step {
    /// Copy the op after following these (operand, carried dimension) pairs.
    Copy(Vec<(ValueId, usize)>),
    /// Copy the op and stop: a matmul that can put the dimension on its output partitions.
    Root,
    /// Keep the value shared between the original and the copy.
    Share,
}

/// A `dot_general` ends the cone when result dimension `d` is a free dimension of one of
/// its operands and its contraction is at most [`MAX_CONTRACTION`] elements.
fn dot_step(m: &Module, o: OpId, d: usize) -> Step {
    let op = m.op(o);
    let Some(Attr::DotDims(dd)) = op.attrs.get("dot_dimension_numbers") else {
        return Step::Share;
    };
    let Some(lhs) = m.tensor_type(op.operands[0]) else {
        return Step::Share;
    };
    let contraction: i64 = dd
        .lhs_contracting
        .iter()
        .filter_map(|&c| lhs.shape.get(usize::try_from(c).ok()?))
        .product();
    let batch = dd.lhs_batching.len();
    if d >= batch && contraction <= MAX_CONTRACTION {
        Step::Root
    } else {
        Step::Share
    }
}

/// Copies the cone's ops right before `dot` and makes operand `side` of `dot` read the copy.
fn apply(m: &mut Module, region: RegionId, dot: OpId, side: usize, cone: &Cone) {
    let at = m
        .region(region)
        .ops
        .iter()
        .position(|&o| o == dot)
        .unwrap_or(0);
    let mut map: FxHashMap<ValueId, ValueId> = FxHashMap::default();
    for (i, &o) in cone.ops.iter().enumerate() {
        let copy = clone_op(m, o, &mut map);
        m.insert_op(region, at + i, copy);
    }
    if let Some(&new) = map.get(&cone.root) {
        m.op_mut(dot).operands[side] = new;
    }
}
