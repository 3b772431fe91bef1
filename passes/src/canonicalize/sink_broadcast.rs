//! Broadcast sinking: the `broadcast_in_dim` that expands the operands of elementwise work
//! and of unit-dimension reshapes moves after them, so that they run on the smaller value
//! and a value that is constant along some dimensions stays visibly so.
//!
//! | rule | rewrite |
//! |---|---|
//! | `elementwise-of-broadcasts` | an elementwise op whose operands are all constant along a dimension of extent > 1 (splat constants, and broadcasts that expand it), one of them a broadcast `bid(x, dims)` that varies wherever any operand does → the op on `x`'s shape (the other broadcasts re-targeted onto `dims`), then `bid(·, dims)` (torch's attention mask: `select(compare(and(bcast(m), 1), 0), 0, bcast(min))` over `[batch, 1, query, key]` becomes a `[batch, 1, 1, key]` select broadcast along the queries) |
//! | `reshape-of-broadcast` | `reshape(broadcast_in_dim(x, dims))` that only inserts or removes extent-1 dimensions, with `dims` increasing → `broadcast_in_dim(x', dims')`, `x'` being `x` without its extent-1 dimensions |
//!
//! Invariants: values are unchanged element for element (an elementwise op computes each
//! element from the same-index elements of its operands, which the broadcast only
//! replicates); the elementwise op computes strictly fewer elements; the result keeps its
//! type; the number of ops that compute (not counting broadcasts, reshapes and splat
//! constants, which are relabels) never grows; every broadcast created has increasing
//! dimensions when the ones it replaces had. Ops with operands of another shape than the
//! result (a `select` on a scalar predicate, a `clamp` with scalar bounds) are left alone.

use super::shape::{i64_array, is_iota};
use super::{Rewriter, Rule};
use crate::ir_util::{def_of_kind, splat_ref};
use neuronc_ir::{NamedAttrs, OpId, OpKind, ValueDef, ValueId};

pub static RULES: &[Rule] = &[
    Rule {
        name: "elementwise-of-broadcasts",
        kinds: &[],
        apply: elementwise_of_broadcasts,
    },
    Rule {
        name: "reshape-of-broadcast",
        kinds: &[OpKind::Reshape],
        apply: reshape_of_broadcast,
    },
];

/// How an operand of an elementwise op varies along the result's dimensions.
enum Operand {
    /// A splat constant: the same element everywhere.
    Splat(Vec<u8>),
    /// `broadcast_in_dim(x, dims)`: varies only along the `dims` its non-unit dimensions
    /// map to.
    Broadcast(ValueId, Vec<i64>),
}

/// The operand as an [`Operand`] and the result dimensions it varies along; `None` when
/// it is neither a splat nor a broadcast (it may vary along every dimension).
fn classify(rw: &Rewriter, v: ValueId) -> Option<(Operand, Vec<usize>)> {
    let m = &*rw.m;
    if let Some((_, bytes)) = splat_ref(m, v) {
        return Some((Operand::Splat(bytes.to_vec()), Vec::new()));
    }
    let b = def_of_kind(m, v, OpKind::BroadcastInDim)?;
    let x = m.op(b).operands[0];
    let dims = m.op(b).attrs.i64_array("broadcast_dimensions")?;
    let src = m.tensor_type(x)?;
    let varying = src
        .shape
        .iter()
        .zip(&dims)
        .filter(|(&e, _)| e != 1)
        .map(|(_, &d)| usize::try_from(d).ok())
        .collect::<Option<Vec<usize>>>()?;
    Some((Operand::Broadcast(x, dims), varying))
}

fn elementwise_of_broadcasts(rw: &mut Rewriter, op: OpId) -> Option<Vec<ValueId>> {
    let o = rw.m.op(op);
    if !o.kind.is_elementwise() || o.results.len() != 1 || !o.regions.is_empty() {
        return None;
    }
    // Cheap reject first (the rule is tried on every op): every operand must be a
    // broadcast or a constant, and one a broadcast.
    let mut any_broadcast = false;
    for &v in &o.operands {
        let ValueDef::Result(d, _) = rw.m.value(v).def else {
            return None;
        };
        match rw.m.op(d).kind {
            OpKind::BroadcastInDim => any_broadcast = true,
            OpKind::Constant => {}
            _ => return None,
        }
    }
    if !any_broadcast {
        return None;
    }
    let res = o.results[0];
    let rank = rw.m.tensor_type(res)?.shape.len();
    let operands = o.operands.clone();
    let res_shape = rw.m.tensor_type(res)?.shape.clone();
    let same_shape = |v: ValueId| rw.m.tensor_type(v).is_some_and(|t| t.shape == res_shape);
    if operands.is_empty() || !operands.iter().all(|&v| same_shape(v)) {
        return None;
    }
    let mut varies = vec![false; rank];
    let mut parts = Vec::with_capacity(operands.len());
    for &v in &operands {
        let (part, dims) = classify(rw, v)?;
        for &d in &dims {
            *varies.get_mut(d)? = true;
        }
        parts.push((part, dims));
    }
    if (0..rank).all(|d| varies[d] || res_shape[d] == 1) {
        return None;
    }
    // The anchor: a broadcast varying along every dimension any operand varies along;
    // the op runs on its source's shape.
    let covers = |dims: &Vec<usize>| (0..rank).all(|d| !varies[d] || dims.contains(&d));
    let (x, anchor_dims) = parts.iter().find_map(|(p, dims)| match p {
        Operand::Broadcast(x, bd) if covers(dims) => Some((*x, bd.clone())),
        _ => None,
    })?;
    let small = rw.m.tensor_type(x)?.shape.to_vec();
    // Every other broadcast's dimensions must land on the anchor's.
    let mut plans = Vec::with_capacity(parts.len());
    for (part, _) in parts {
        plans.push(match part {
            Operand::Broadcast(y, bd) => {
                let into: Vec<i64> = bd
                    .iter()
                    .map(|d| anchor_dims.iter().position(|a| a == d).map(|p| p as i64))
                    .collect::<Option<_>>()?;
                if !into.windows(2).all(|w| w[0] < w[1]) {
                    return None;
                }
                Operand::Broadcast(y, into)
            }
            splat => splat,
        });
    }
    rw.commit(op)?;
    let mut new_operands = Vec::with_capacity(plans.len());
    for (plan, &v) in plans.into_iter().zip(&operands) {
        let elem = rw.m.tensor_type(v)?.elem;
        let ty = rw.m.types.tensor(elem, &small);
        let nv = match plan {
            Operand::Splat(bytes) => rw.splat(ty, bytes)?,
            Operand::Broadcast(y, dims) if rw.m.value_type(y) == ty && is_iota(&dims) => y,
            Operand::Broadcast(y, dims) => {
                let mut attrs = NamedAttrs::new();
                attrs.set("broadcast_dimensions", i64_array(dims));
                let b = rw.create(OpKind::BroadcastInDim, vec![y], &[ty], attrs);
                rw.m.op(b).results[0]
            }
        };
        new_operands.push(nv);
    }
    let (kind, attrs) = (rw.m.op(op).kind, rw.m.op(op).attrs.clone());
    let res_elem = rw.m.tensor_type(res)?.elem;
    let small_ty = rw.m.types.tensor(res_elem, &small);
    let inner = rw.create(kind, new_operands, &[small_ty], attrs);
    let inner_v = rw.m.op(inner).results[0];
    let mut attrs = NamedAttrs::new();
    attrs.set("broadcast_dimensions", i64_array(anchor_dims));
    let out_ty = rw.m.value_type(res);
    let out = rw.create(OpKind::BroadcastInDim, vec![inner_v], &[out_ty], attrs);
    Some(vec![rw.m.op(out).results[0]])
}

/// Positions of the dimensions of extent other than 1.
fn non_unit(shape: &[i64]) -> Vec<usize> {
    (0..shape.len()).filter(|&i| shape[i] != 1).collect()
}

fn reshape_of_broadcast(rw: &mut Rewriter, op: OpId) -> Option<Vec<ValueId>> {
    let m = &*rw.m;
    let res = m.op(op).results[0];
    let b = def_of_kind(m, m.op(op).operands[0], OpKind::BroadcastInDim)?;
    let x = m.op(b).operands[0];
    let dims = m.op(b).attrs.i64_array("broadcast_dimensions")?;
    let (a, out, src) = (
        m.tensor_type(m.op(op).operands[0])?,
        m.tensor_type(res)?,
        m.tensor_type(x)?,
    );
    let (a_keep, b_keep) = (non_unit(&a.shape), non_unit(&out.shape));
    let extents = |s: &[i64], k: &[usize]| k.iter().map(|&i| s[i]).collect::<Vec<_>>();
    if extents(&a.shape, &a_keep) != extents(&out.shape, &b_keep)
        || a.shape == out.shape
        || !dims.windows(2).all(|w| w[0] < w[1])
    {
        return None;
    }
    // The non-unit source dimensions and where they land in the reshape's result.
    let mut kept_shape = Vec::new();
    let mut new_dims = Vec::new();
    for (&e, &d) in src.shape.iter().zip(&dims) {
        if e == 1 {
            continue;
        }
        let pos = a_keep.iter().position(|&k| k as i64 == d)?;
        kept_shape.push(e);
        new_dims.push(*b_keep.get(pos)? as i64);
    }
    let (elem, src_shape) = (src.elem, src.shape.to_vec());
    rw.commit(op)?;
    let x = if kept_shape == src_shape {
        x
    } else {
        let ty = rw.m.types.tensor(elem, &kept_shape);
        let r = rw.create(OpKind::Reshape, vec![x], &[ty], NamedAttrs::new());
        rw.m.op(r).results[0]
    };
    let mut attrs = NamedAttrs::new();
    attrs.set("broadcast_dimensions", i64_array(new_dims));
    let ty = rw.m.value_type(res);
    let nb = rw.create(OpKind::BroadcastInDim, vec![x], &[ty], attrs);
    Some(vec![rw.m.op(nb).results[0]])
}
