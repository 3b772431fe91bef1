//! Shape and type-conversion folding.
//!
//! | rule | rewrite |
//! |---|---|
//! | `reshape-identity` | `reshape` to the operand's own type → operand |
//! | `reshape-reshape` | `reshape(reshape(x))` → `reshape(x)` (or `x`) |
//! | `transpose-identity` | `transpose` with the identity permutation → operand |
//! | `transpose-transpose` | `transpose(transpose(x, p), q)` → `transpose(x, i ↦ p[q[i]])` (or `x`) |
//! | `broadcast-identity` | `broadcast_in_dim` to the same type with dims `0..n` → operand |
//! | `broadcast-broadcast` | `bid(bid(x, d1), d2)` → `bid(x, i ↦ d2[d1[i]])` |
//! | `convert-identity` | `convert` to the same type → operand |
//! | `convert-convert-lossless` | `convert(convert(x): B): C` → `convert(x): C` when every value of `x`'s type is exact in `B` (not for a bf16 → f32 inner convert of an op XLA computes in f32: XLA reads the unrounded value there) |
//! | `splat-through-shape-op` | `broadcast_in_dim`/`reshape`/`transpose` of a splat constant → splat constant |
//! | `reduce-unit-dims` | `reduce(x, init)` over dimensions of extent 1 only, with a body `a op b` and `init` the identity of `op` → `reshape(x)` (as XLA's algebraic simplifier; a float sum keeps a `-0.0` that `+0.0 + -0.0` would make `+0.0`) |

use super::{Rewriter, Rule};
use crate::ir_util::{def_of_kind, elem_as_f64, elem_as_i128, splat_ref};
use neuronc_interp::excess_precision::unrounded_source;
use neuronc_ir::{Attr, ElemType, Module, NamedAttrs, OpId, OpKind, ValueId};

pub static RULES: &[Rule] = &[
    Rule {
        name: "reshape-identity",
        kinds: &[OpKind::Reshape],
        apply: identity_by_type,
    },
    Rule {
        name: "reshape-reshape",
        kinds: &[OpKind::Reshape],
        apply: reshape_reshape,
    },
    Rule {
        name: "transpose-identity",
        kinds: &[OpKind::Transpose],
        apply: transpose_identity,
    },
    Rule {
        name: "transpose-transpose",
        kinds: &[OpKind::Transpose],
        apply: transpose_transpose,
    },
    Rule {
        name: "broadcast-identity",
        kinds: &[OpKind::BroadcastInDim],
        apply: broadcast_identity,
    },
    Rule {
        name: "broadcast-broadcast",
        kinds: &[OpKind::BroadcastInDim],
        apply: broadcast_broadcast,
    },
    Rule {
        name: "convert-identity",
        kinds: &[OpKind::Convert],
        apply: identity_by_type,
    },
    Rule {
        name: "convert-convert-lossless",
        kinds: &[OpKind::Convert],
        apply: convert_convert,
    },
    Rule {
        name: "reduce-unit-dims",
        kinds: &[OpKind::Reduce],
        apply: reduce_unit_dims,
    },
    Rule {
        name: "splat-through-shape-op",
        kinds: &[OpKind::BroadcastInDim, OpKind::Reshape, OpKind::Transpose],
        apply: splat_through_shape_op,
    },
];

pub(super) fn i64_array(v: Vec<i64>) -> Attr {
    Attr::IntArray(ElemType::Int(64), v)
}

pub(super) fn is_iota(v: &[i64]) -> bool {
    v.iter().enumerate().all(|(i, &d)| d == i as i64)
}

/// Whether the integer array attribute `name` is `0, 1, ..., n-1` (`None` when it is
/// missing or not an integer array); reads the common `array<i64: ...>` in place.
fn array_is_iota(attrs: &NamedAttrs, name: &str) -> Option<bool> {
    match attrs.get(name)? {
        Attr::IntArray(_, v) => Some(is_iota(v)),
        a => a.as_i64_array().map(|v| is_iota(&v)),
    }
}

/// The op's operand when it already has the result's type.
fn identity_by_type(rw: &mut Rewriter, op: OpId) -> Option<Vec<ValueId>> {
    let o = rw.m.op(op);
    let x = o.operands[0];
    if rw.m.value_type(x) != rw.m.value_type(o.results[0]) {
        return None;
    }
    rw.commit(op)?;
    Some(vec![x])
}

/// Replaces `op` (one result) by `kind(x)` with `attrs`, or by `x` itself when `x` already
/// has the result type and `identity` says the op would not change it.
fn rebuild_unary(
    rw: &mut Rewriter,
    op: OpId,
    kind: OpKind,
    x: ValueId,
    attrs: NamedAttrs,
    identity: bool,
) -> Option<Vec<ValueId>> {
    let ty = rw.m.value_type(rw.m.op(op).results[0]);
    rw.commit(op)?;
    if identity && rw.m.value_type(x) == ty {
        return Some(vec![x]);
    }
    let new = rw.create(kind, vec![x], &[ty], attrs);
    Some(vec![rw.m.op(new).results[0]])
}

fn reshape_reshape(rw: &mut Rewriter, op: OpId) -> Option<Vec<ValueId>> {
    let inner = def_of_kind(rw.m, rw.m.op(op).operands[0], OpKind::Reshape)?;
    let x = rw.m.op(inner).operands[0];
    rebuild_unary(rw, op, OpKind::Reshape, x, NamedAttrs::new(), true)
}

fn transpose_identity(rw: &mut Rewriter, op: OpId) -> Option<Vec<ValueId>> {
    if !array_is_iota(&rw.m.op(op).attrs, "permutation")? {
        return None;
    }
    identity_by_type(rw, op)
}

fn transpose_transpose(rw: &mut Rewriter, op: OpId) -> Option<Vec<ValueId>> {
    let inner = def_of_kind(rw.m, rw.m.op(op).operands[0], OpKind::Transpose)?;
    let outer = rw.m.op(op).attrs.i64_array("permutation")?;
    let p = rw.m.op(inner).attrs.i64_array("permutation")?;
    let composed: Vec<i64> = outer
        .iter()
        .map(|&q| usize::try_from(q).ok().and_then(|q| p.get(q).copied()))
        .collect::<Option<_>>()?;
    let x = rw.m.op(inner).operands[0];
    let identity = is_iota(&composed);
    let mut attrs = NamedAttrs::new();
    attrs.set("permutation", i64_array(composed));
    rebuild_unary(rw, op, OpKind::Transpose, x, attrs, identity)
}

fn broadcast_identity(rw: &mut Rewriter, op: OpId) -> Option<Vec<ValueId>> {
    if !array_is_iota(&rw.m.op(op).attrs, "broadcast_dimensions")? {
        return None;
    }
    identity_by_type(rw, op)
}

fn broadcast_broadcast(rw: &mut Rewriter, op: OpId) -> Option<Vec<ValueId>> {
    let inner = def_of_kind(rw.m, rw.m.op(op).operands[0], OpKind::BroadcastInDim)?;
    let d2 = rw.m.op(op).attrs.i64_array("broadcast_dimensions")?;
    let d1 = rw.m.op(inner).attrs.i64_array("broadcast_dimensions")?;
    let composed: Vec<i64> = d1
        .iter()
        .map(|&d| usize::try_from(d).ok().and_then(|d| d2.get(d).copied()))
        .collect::<Option<_>>()?;
    let x = rw.m.op(inner).operands[0];
    let identity = is_iota(&composed);
    let mut attrs = NamedAttrs::new();
    attrs.set("broadcast_dimensions", i64_array(composed));
    rebuild_unary(rw, op, OpKind::BroadcastInDim, x, attrs, identity)
}

fn convert_convert(rw: &mut Rewriter, op: OpId) -> Option<Vec<ValueId>> {
    let inner = def_of_kind(rw.m, rw.m.op(op).operands[0], OpKind::Convert)?;
    let x = rw.m.op(inner).operands[0];
    let a = rw.m.tensor_type(x)?.elem;
    let b = rw.m.tensor_type(rw.m.op(inner).results[0])?.elem;
    if !is_lossless(a, b) || reads_excess_precision(rw.m, x, (a, b)) {
        return None;
    }
    rebuild_unary(rw, op, OpKind::Convert, x, NamedAttrs::new(), true)
}

/// Whether a `convert` of `x` from `a` to `b` reads more than `x` under XLA:CPU's excess
/// precision ([`unrounded_source`]): such a bf16 -> f32 convert must stay one (folding
/// `convert(convert(x):f32):f64` into one convert to f64 would read the rounded value:
/// checked on jaxlib's XLA:CPU, 63 of 64 products differed).
fn reads_excess_precision(m: &Module, x: ValueId, (a, b): (ElemType, ElemType)) -> bool {
    (a, b) == (ElemType::BF16, ElemType::F32) && unrounded_source(m, x).is_some()
}

/// Whether every value of element type `a` is represented exactly in `b`.
pub fn is_lossless(a: ElemType, b: ElemType) -> bool {
    use ElemType::*;
    /// Significand bits (including the implicit one) of the IEEE-like float types.
    fn significand(e: ElemType) -> Option<u32> {
        match e {
            F16 => Some(11),
            BF16 => Some(8),
            F32 => Some(24),
            F64 => Some(53),
            _ => None,
        }
    }
    match (a, b) {
        _ if a == b => true,
        (I1, Int(_) | UInt(_) | F16 | BF16 | F32 | F64) => true,
        (Int(x), Int(y)) | (UInt(x), UInt(y)) => y > x,
        (UInt(x), Int(y)) => y > x,
        (F16, F32 | F64) | (BF16, F32 | F64) | (F32, F64) => true,
        (Int(x), _) => significand(b).is_some_and(|s| u32::from(x) <= s),
        (UInt(x), _) => significand(b).is_some_and(|s| u32::from(x) <= s),
        _ => false,
    }
}

fn splat_through_shape_op(rw: &mut Rewriter, op: OpId) -> Option<Vec<ValueId>> {
    let o = rw.m.op(op);
    let (elem, bytes) = splat_ref(rw.m, o.operands[0])?;
    let ty = rw.m.value_type(o.results[0]);
    if rw.m.types.tensor_of(ty)?.elem != elem {
        return None;
    }
    let bytes = bytes.to_vec();
    rw.commit(op)?;
    Some(vec![rw.splat(ty, bytes)?])
}

/// `reduce(x, init)` over extent-1 dimensions only, whose body is one `a op b` (either
/// order) and whose `init` is `op`'s identity: every result element is `init op x[i] =
/// x[i]`, so the reduce is a reshape. (Keeps a kernel from being planned as a reduction
/// when nothing is reduced: jax's `keepdims` gradients make such reduces.)
fn reduce_unit_dims(rw: &mut Rewriter, op: OpId) -> Option<Vec<ValueId>> {
    let m = &*rw.m;
    let o = m.op(op);
    let [x, init] = o.operands[..] else {
        return None;
    };
    let shape = &m.tensor_type(x)?.shape;
    let dims = o.attrs.i64_array("dimensions")?;
    let unit = |d: &i64| usize::try_from(*d).ok().and_then(|d| shape.get(d)) == Some(&1);
    if !dims.iter().all(unit) {
        return None;
    }
    let body = m.region(*o.regions.first()?);
    let [a, b] = body.args[..] else { return None };
    let [inner, ret] = body.ops[..] else {
        return None;
    };
    let (inner, ret) = (m.op(inner), m.op(ret));
    let combines = inner.operands[..] == [a, b] || inner.operands[..] == [b, a];
    if !combines || !ret.kind.is_terminator() || ret.operands[..] != [inner.results[0]] {
        return None;
    }
    let (elem, bytes) = splat_ref(m, init)?;
    // (A reduce may accumulate in a wider type than its input: then it converts.)
    let same_elem = m.tensor_type(o.results[0]).map(|t| t.elem) == Some(m.tensor_type(x)?.elem);
    if !same_elem || !is_identity(inner.kind, elem, bytes)? {
        return None;
    }
    let ty = m.value_type(o.results[0]);
    rw.commit(op)?;
    let new = rw.create(OpKind::Reshape, vec![x], &[ty], NamedAttrs::new());
    Some(vec![rw.m.op(new).results[0]])
}

/// Whether the scalar `bytes` of type `elem` is the identity of the binary op `kind`.
fn is_identity(kind: OpKind, elem: ElemType, bytes: &[u8]) -> Option<bool> {
    if elem.is_float() && !elem.is_complex() {
        let v = elem_as_f64(elem, bytes)?;
        return Some(match kind {
            OpKind::Add => v == 0.0,
            OpKind::Multiply => v == 1.0,
            OpKind::Maximum => v == f64::NEG_INFINITY,
            OpKind::Minimum => v == f64::INFINITY,
            _ => false,
        });
    }
    let v = elem_as_i128(elem, bytes)?;
    Some(match (kind, elem) {
        (OpKind::Add | OpKind::Or, _) | (OpKind::Xor, _) => v == 0,
        (OpKind::Multiply, _) => v == 1,
        (OpKind::And, ElemType::I1) => v == 1,
        _ => false,
    })
}
