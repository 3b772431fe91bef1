//! XLA:CPU's algebraic-simplifier rewrites of divide chains, divides by `exp`/`pow`,
//! products of `exp`s, small integer powers and logs of roots and powers, for the `xla`
//! float semantics (called from [`crate::xla_simplify`], after the divides by constants
//! are rewritten).
//!
//! # What XLA:CPU computes
//! For f16, f32 and f64 results XLA's `AlgebraicSimplifier` rewrites (bf16 ops are
//! computed in f32 by `FloatNormalization` first, with a rounding `convert` between them,
//! so no bf16 chain matches):
//! * `A / exp(B) => A * exp(-B)` and `A / pow(B, C) => A * pow(B, -C)`;
//! * `(A / B) / (C / D) => (A * D) / (B * C)`, `(A / B) / C => A / (B * C)` and
//!   `A / (B / C) => (A * C) / B`;
//! * `exp(A) * exp(B) => exp(A + B)` (so `exp(A) / exp(B)` is `exp(A - B)`);
//! * `pow(A, 2) => A * A`, `pow(A, 3) => (A * A) * A`, `pow(A, -1) => 1 / A` for a splat
//!   constant exponent;
//! * `log(sqrt(A)) => 0.5 * log(A)`, `log(rsqrt(A)) => -0.5 * log(A)` and
//!   `log(pow(A, B)) => B * log(abs(A))`.
//!
//! None of them needs the inner op to have one use. In `HandleDivide` the `exp` and `pow`
//! rules come first, then a single-use `sqrt`/`rsqrt` divisor ([`crate::xla_reassoc`]),
//! then a (broadcast) constant divisor ([`crate::xla_divide`]), then the three chain
//! rules; the simplifier visits operands first and re-visits what it creates, so an inner
//! divide by a constant is already a product when the outer divide is seen, and
//! `A / (K / B)` becomes `(A * B) / K` and then `(A * B) * (1 / K)`.
//!
//! Facts checked on jaxlib 0.10.2's XLA:CPU with `tools/xla_run.py` over 4096 inputs
//! (dividends and bases uniform in [0.3, 3), exponents in [-2.5, 2.5)), comparing with the
//! formulas evaluated from XLA's own `exp`/`pow`/`sqrt`/`log` values, rounded per op:
//! * f16, f32, f64: every rewritten formula above matches XLA on all 4096 inputs, also when
//!   the inner `exp`, `pow`, divide, `sqrt` has a second user; the unrewritten formula
//!   differs on many (f16 / f32 / f64: `a / exp(b)` 1507 / 1549 / 1552, `a / pow(b, c)`
//!   1492 / 1514 / 1491, `(a / b) / c` 1365 / 1475 / 1447, `a / (b / c)` 1397 / 1447 /
//!   1449, `(a / b) / (c / d)` 1874 / 1917 / 1846, `exp(a) * exp(b)` 2619 / 2727 / 2770;
//!   f16 `pow(a, 3)` 994, `log(sqrt(a))` 1087, `log(rsqrt(a))` 1113,
//!   `log(pow(a, b))` 1405).
//! * `(a / b) / K` is `(a / b) * (1 / K)` and `a / (b / K)` is `a / (b * (1 / K))`
//!   (constant rule first); `(a / b) / sqrt(c)` and `a / (b / sqrt(c))` use the root rule
//!   first; `(K / a) / b` is `K / (a * b)`; `(d / a) / exp(b)` is `(d / a) * exp(-b)`;
//!   `a / pow(b, -2)` is `a * (b * b)`.
//! * `pow(a, k)` for k = 4, 5, 8, -2, -3 is not rewritten into products (1001 to 2165
//!   differences from the product formulas, none from `pow`); `pow(-inf, 0.5)` is `inf`,
//!   so `pow(a, 0.5)` is not `sqrt(a)`; `pow(a, -0.5)` is not `rsqrt(a)`.
//! * bf16: XLA's results equal the unrewritten formulas computed in f32 and rounded to
//!   bf16 per op, for every case above.
//! * Not rewritten either: `a * (1 / b)`, `sqrt(a) * sqrt(a)`, `rsqrt(a) * rsqrt(a)`.
//!
//! The test `interp/tests/xla_divide_chain.rs` compares against XLA-computed values. Like
//! the other [`crate::xla_simplify`] rules these rewrites are also in the module `compile`
//! plans from.
//!
//! Not modelled: `pow(A, 0) => 1` and `pow(A, 1) => A` (exact), the rules' complex cases,
//! and a `sqrt`/`rsqrt` whose other user was a divide a chain rewrite left dead (XLA's
//! DCE leaves the root single-use for the root rule; here the dead divide still counts).
//!
//! Invariants: a rewritten op keeps its id and result; the new ops are placed immediately
//! before it, in creation order, each reading only values defined before it, so the result
//! is SSA-valid; ops are visited in walk (program) order and an op is re-planned after each
//! rewrite (at most [`MAX_STEPS`] times), so later ops see earlier rewrites, as the
//! simplifier's fixed point does; signatures are unchanged.

use std::collections::{BTreeMap, HashMap};

use half::f16;
use neuronc_ir::{Attr, DenseData, ElemType, Module, NamedAttrs, OpId, OpKind, ValueId};

use crate::xla_simplify::{single_def, wide_float_result};

/// Rewrites applied to one op before moving on (each rule removes a divide or a `pow`, so
/// chains settle long before this).
const MAX_STEPS: usize = 8;

/// A rewrite found for one op.
enum Plan {
    /// `a / exp(b)` => `a * exp(-b)`.
    ExpDivisor { a: ValueId, b: ValueId },
    /// `a / pow(b, c)` => `a * pow(b, -c)`.
    PowDivisor { a: ValueId, b: ValueId, c: ValueId },
    /// `(a / b) / (c / d)` => `(a * d) / (b * c)`.
    DivDiv([ValueId; 4]),
    /// `(a / b) / c` => `a / (b * c)`.
    DivLeft([ValueId; 3]),
    /// `a / (b / c)` => `(a * c) / b`.
    DivRight([ValueId; 3]),
    /// `exp(a) * exp(b)` => `exp(a + b)`.
    ExpExp(ValueId, ValueId),
    /// `pow(a, n)` (n = 2, 3, -1) => `a * a`, `(a * a) * a`, `1 / a`.
    Power(ValueId, i8),
    /// `log(sqrt(a))`, `log(rsqrt(a))` => `k * log(a)` (k = 0.5, -0.5).
    LogRoot(ValueId, f64),
    /// `log(pow(a, b))` => `b * log(abs(a))`.
    LogPow(ValueId, ValueId),
}

/// Whether [`rewrite`] would change `m`.
pub(crate) fn has_sites(m: &Module) -> bool {
    let uses = crate::xla_reassoc::use_counts(m);
    let mut found = false;
    m.walk_ops(|id| found = found || plan(m, id, &uses).is_some());
    found
}

/// Rewrites `m` in place (see the module documentation); returns whether anything changed.
pub(crate) fn rewrite(m: &mut Module) -> bool {
    let mut ops = Vec::new();
    m.walk_ops(|id| ops.push(id));
    let uses = crate::xla_reassoc::use_counts(m);
    let mut before: BTreeMap<OpId, Vec<OpId>> = BTreeMap::new();
    for id in ops {
        let mut new_ops = Vec::new();
        for _ in 0..MAX_STEPS {
            let Some(p) = plan(m, id, &uses) else {
                break;
            };
            if !apply(m, id, p, &mut new_ops) {
                break;
            }
        }
        if !new_ops.is_empty() {
            let (loc, span) = (m.op(id).loc, m.op(id).span);
            for &n in &new_ops {
                m.op_mut(n).loc = loc;
                m.op_mut(n).span = span;
            }
            before.insert(id, new_ops);
        }
    }
    let changed = !before.is_empty();
    crate::excess_precision::splice_all(m, &before);
    changed
}

/// The rewrite XLA applies to op `id`, if any.
fn plan(m: &Module, id: OpId, uses: &HashMap<ValueId, usize>) -> Option<Plan> {
    if m.op(id).parent.is_none() || !wide_float_result(m, id) {
        return None;
    }
    let op = m.op(id);
    match (op.kind, &op.operands[..]) {
        (OpKind::Divide, &[x, y]) => plan_divide(m, x, y, uses),
        (OpKind::Multiply, &[x, y]) => {
            let a = operand_of(m, x, OpKind::Exponential)?;
            let b = operand_of(m, y, OpKind::Exponential)?;
            Some(Plan::ExpExp(a, b))
        }
        (OpKind::Power, &[a, k]) => {
            let n = small_power(m, k)?;
            Some(Plan::Power(a, n))
        }
        (OpKind::Log, &[x]) => plan_log(m, x),
        _ => None,
    }
}

/// The rewrite of `x / y`, following `HandleDivide`'s rule order.
fn plan_divide(m: &Module, x: ValueId, y: ValueId, uses: &HashMap<ValueId, usize>) -> Option<Plan> {
    if let Some(b) = operand_of(m, y, OpKind::Exponential) {
        return Some(Plan::ExpDivisor { a: x, b });
    }
    if let Some((b, c)) = binary_of(m, y, OpKind::Power) {
        // pow(b, 0|1|2|3|-1) is simplified before the divide is seen (exactly, or into
        // products that leave no `pow` divisor).
        let simple = splat_value(m, c).is_some_and(|v| [0.0, 1.0, 2.0, 3.0, -1.0].contains(&v));
        return (!simple).then_some(Plan::PowDivisor { a: x, b, c });
    }
    if root_divisor(m, y, uses) || (is_constant_like(m, y) && !is_constant_like(m, x)) {
        return None;
    }
    match (live_divide(m, x, uses), live_divide(m, y, uses)) {
        (Some((a, b)), Some((c, d))) => Some(Plan::DivDiv([a, b, c, d])),
        (Some((a, b)), None) => Some(Plan::DivLeft([a, b, y])),
        (None, Some((b, c))) => Some(Plan::DivRight([x, b, c])),
        (None, None) => None,
    }
}

fn plan_log(m: &Module, x: ValueId) -> Option<Plan> {
    if let Some(a) = operand_of(m, x, OpKind::Sqrt) {
        return Some(Plan::LogRoot(a, 0.5));
    }
    if let Some(a) = operand_of(m, x, OpKind::Rsqrt) {
        return Some(Plan::LogRoot(a, -0.5));
    }
    let (a, b) = binary_of(m, x, OpKind::Power)?;
    Some(Plan::LogPow(a, b))
}

/// Carries out `p` on op `id`, appending the ops it creates to `new_ops` (in the order
/// they must be placed); false when nothing could be created.
fn apply(m: &mut Module, id: OpId, p: Plan, new_ops: &mut Vec<OpId>) -> bool {
    let ty = m.value_type(m.op(id).results[0]);
    let emit = |m: &mut Module, new_ops: &mut Vec<OpId>, kind: OpKind, operands| {
        let n = m.create_op(kind, operands, &[ty], NamedAttrs::new());
        new_ops.push(n);
        m.op(n).results[0]
    };
    let (kind, operands) = match p {
        Plan::ExpDivisor { a, b } => {
            let nb = emit(m, new_ops, OpKind::Negate, vec![b]);
            (
                OpKind::Multiply,
                vec![a, emit(m, new_ops, OpKind::Exponential, vec![nb])],
            )
        }
        Plan::PowDivisor { a, b, c } => {
            let Some(nc) = negated(m, c, new_ops) else {
                return false;
            };
            let p = m.create_op(OpKind::Power, vec![b, nc], &[ty], NamedAttrs::new());
            if let Some(Plan::Power(x, n)) = power_plan(m, p) {
                expand_power(m, p, x, n, new_ops);
            }
            new_ops.push(p);
            (OpKind::Multiply, vec![a, m.op(p).results[0]])
        }
        Plan::DivDiv([a, b, c, d]) => {
            let ad = emit(m, new_ops, OpKind::Multiply, vec![a, d]);
            (
                OpKind::Divide,
                vec![ad, emit(m, new_ops, OpKind::Multiply, vec![b, c])],
            )
        }
        Plan::DivLeft([a, b, c]) => (
            OpKind::Divide,
            vec![a, emit(m, new_ops, OpKind::Multiply, vec![b, c])],
        ),
        Plan::DivRight([a, b, c]) => (
            OpKind::Divide,
            vec![emit(m, new_ops, OpKind::Multiply, vec![a, c]), b],
        ),
        Plan::ExpExp(a, b) => (
            OpKind::Exponential,
            vec![emit(m, new_ops, OpKind::Add, vec![a, b])],
        ),
        Plan::Power(x, n) => {
            expand_power(m, id, x, n, new_ops);
            return true;
        }
        Plan::LogRoot(a, k) => {
            let Some(kc) = splat_constant(m, ty, k) else {
                return false;
            };
            new_ops.push(kc);
            let kv = m.op(kc).results[0];
            (
                OpKind::Multiply,
                vec![kv, emit(m, new_ops, OpKind::Log, vec![a])],
            )
        }
        Plan::LogPow(a, b) => {
            let abs = emit(m, new_ops, OpKind::Abs, vec![a]);
            (
                OpKind::Multiply,
                vec![b, emit(m, new_ops, OpKind::Log, vec![abs])],
            )
        }
    };
    let op = m.op_mut(id);
    op.kind = kind;
    op.operands = operands;
    op.attrs = NamedAttrs::new();
    true
}

/// The power plan of a (detached) `pow` op `p`.
fn power_plan(m: &Module, p: OpId) -> Option<Plan> {
    let op = m.op(p);
    let &[a, k] = &op.operands[..] else {
        return None;
    };
    if op.kind != OpKind::Power {
        return None;
    }
    small_power(m, k).map(|n| Plan::Power(a, n))
}

/// Turns `pow` op `id` into `x * x`, `(x * x) * x` or `1 / x` (n = 2, 3, -1).
fn expand_power(m: &mut Module, id: OpId, x: ValueId, n: i8, new_ops: &mut Vec<OpId>) {
    let ty = m.value_type(m.op(id).results[0]);
    let (kind, operands) = match n {
        -1 => {
            let Some(one) = splat_constant(m, ty, 1.0) else {
                return;
            };
            new_ops.push(one);
            (OpKind::Divide, vec![m.op(one).results[0], x])
        }
        3 => {
            let sq = m.create_op(OpKind::Multiply, vec![x, x], &[ty], NamedAttrs::new());
            new_ops.push(sq);
            (OpKind::Multiply, vec![m.op(sq).results[0], x])
        }
        _ => (OpKind::Multiply, vec![x, x]),
    };
    let op = m.op_mut(id);
    op.kind = kind;
    op.operands = operands;
    op.attrs = NamedAttrs::new();
}

/// `-c`: a negated splat constant when `c` is one (so that a following `pow` rule sees
/// it), else a `negate` op; its ops are appended to `new_ops`.
fn negated(m: &mut Module, c: ValueId, new_ops: &mut Vec<OpId>) -> Option<ValueId> {
    let ty = m.value_type(c);
    let op = match splat_value(m, c) {
        Some(v) => splat_constant(m, ty, -v)?,
        None => m.create_op(OpKind::Negate, vec![c], &[ty], NamedAttrs::new()),
    };
    new_ops.push(op);
    Some(m.op(op).results[0])
}

/// A detached splat constant of tensor type `ty` (f16/f32/f64) holding `v`.
fn splat_constant(m: &mut Module, ty: neuronc_ir::TypeId, v: f64) -> Option<OpId> {
    let bytes = match m.types.tensor_of(ty)?.elem {
        ElemType::F16 => f16::from_f64(v).to_le_bytes().to_vec(),
        ElemType::F32 => (v as f32).to_le_bytes().to_vec(),
        ElemType::F64 => v.to_le_bytes().to_vec(),
        _ => return None,
    };
    m.create_splat_constant(ty, bytes)
}

/// `n` when `k` is a splat constant equal to 2, 3 or -1.
fn small_power(m: &Module, k: ValueId) -> Option<i8> {
    let v = splat_value(m, k)?;
    [2i8, 3, -1].into_iter().find(|&n| f64::from(n) == v)
}

/// The operand of `v`'s defining op when that op is a unary `kind` of `v`'s type.
fn operand_of(m: &Module, v: ValueId, kind: OpKind) -> Option<ValueId> {
    let op = m.op(single_def(m, v)?);
    match &op.operands[..] {
        &[a] if op.kind == kind && m.value_type(a) == m.value_type(v) => Some(a),
        _ => None,
    }
}

/// The operands of `v`'s defining op when that op is a binary `kind` of `v`'s type.
fn binary_of(m: &Module, v: ValueId, kind: OpKind) -> Option<(ValueId, ValueId)> {
    let op = m.op(single_def(m, v)?);
    match &op.operands[..] {
        &[a, b] if op.kind == kind && m.value_type(a) == m.value_type(v) => Some((a, b)),
        _ => None,
    }
}

/// `v = a / b` as the simplifier sees it when it reaches `v`'s user: not a divide by a
/// single-use root (already a product then).
fn live_divide(
    m: &Module,
    v: ValueId,
    uses: &HashMap<ValueId, usize>,
) -> Option<(ValueId, ValueId)> {
    let (a, b) = binary_of(m, v, OpKind::Divide)?;
    (!root_divisor(m, b, uses)).then_some((a, b))
}

/// Whether `v` is a single-use `sqrt`/`rsqrt` ([`crate::xla_reassoc`] rewrites a divide by
/// it).
fn root_divisor(m: &Module, v: ValueId, uses: &HashMap<ValueId, usize>) -> bool {
    let root = operand_of(m, v, OpKind::Sqrt).or_else(|| operand_of(m, v, OpKind::Rsqrt));
    root.is_some() && uses.get(&v).copied() == Some(1)
}

/// Whether `v` is a constant or a `broadcast_in_dim` of one.
fn is_constant_like(m: &Module, v: ValueId) -> bool {
    let Some(d) = single_def(m, v) else {
        return false;
    };
    match m.op(d).kind {
        OpKind::Constant => true,
        OpKind::BroadcastInDim => {
            m.op(d).operands.first().is_some_and(|&u| {
                single_def(m, u).is_some_and(|c| m.op(c).kind == OpKind::Constant)
            })
        }
        _ => false,
    }
}

/// The value of `v` when it is an f16/f32/f64 constant with all elements equal, or a
/// `broadcast_in_dim` of one.
fn splat_value(m: &Module, v: ValueId) -> Option<f64> {
    let op = m.op(single_def(m, v)?);
    if op.kind == OpKind::BroadcastInDim {
        return splat_value(m, *op.operands.first()?);
    }
    let Some(Attr::Elements(d)) = op
        .attrs
        .get("value")
        .filter(|_| op.kind == OpKind::Constant)
    else {
        return None;
    };
    let w = d.elem.byte_width();
    let first = match &d.data {
        DenseData::Splat(b) => b.to_vec(),
        DenseData::Full(bytes) => {
            let first = bytes.get(..w)?;
            if !bytes.chunks(w).all(|c| c == first) {
                return None;
            }
            first.to_vec()
        }
    };
    Some(match d.elem {
        ElemType::F16 => f16::from_le_bytes(first.try_into().ok()?).to_f64(),
        ElemType::F32 => f64::from(f32::from_le_bytes(first.try_into().ok()?)),
        ElemType::F64 => f64::from_le_bytes(first.try_into().ok()?),
        _ => return None,
    })
}
