//! XLA:CPU's algebraic-simplifier rewrites that re-associate constants and replace divides
//! by square roots, for the `xla` float semantics (called from
//! [`crate::excess_precision::xla_module`] after the f16 batch norms are expanded, so that
//! their ops are rewritten too, as XLA's `BatchNormExpander` runs before the simplifier).
//!
//! # What XLA:CPU computes
//! XLA's `AlgebraicSimplifier` (run to a fixed point with constant folding) rewrites, for
//! f16, f32 and f64 results (bf16 ops are computed in f32 by `FloatNormalization` first,
//! with a rounding `convert` between them, so no bf16 chain matches):
//! * `A - C => A + (-C)` (exact), then `(A + C1) + C2 => A + (C1 + C2)` and
//!   `(C1 - A) + C2 => (C1 + C2) - A`, the constant sum folded once in the element type;
//! * `(A * C1) * C2 => A * (C1 * C2)`, the product folded likewise;
//! * `A / sqrt(B) => A * rsqrt(B)` and `A / rsqrt(B) => A * sqrt(B)` when the (r)sqrt has
//!   one use.
//!
//! `C1`, `C2` are constants of the op's shape, either both non-splat (same shape) or both
//! splat (a splat constant, or a `broadcast_in_dim` of one: the simplifier turns splat
//! constants into broadcasts of scalars); a non-splat constant next to a splat one is not
//! combined. Operand order does not matter (constants are canonicalized to the right), and
//! the inner op may have other users (it stays for them). Each rewrite changes the result's
//! rounding: `(x - c) + c` is `x` in XLA (torch_xla's f16 `LayerNorm` backward adds `eps`
//! back to `(1 / rsqrt(var + eps))² - eps`), one rounding instead of two.
//!
//! Facts checked on jaxlib 0.10.2's XLA:CPU with `tools/xla_run.py` over 4096 random
//! inputs (probe of the `fp16_scaled_train_step` trace): every rule above matches XLA
//! exactly for f16 and f32 (up to XLA's own f32 `rsqrt`/`exp`); a mixed splat/non-splat
//! constant pair and an (r)sqrt with two uses are not rewritten; bf16 chains are not
//! rewritten. The test `interp/tests/xla_reassoc.rs` compares against XLA-computed values.
//!
//! The simplifier's other result-changing divide rules (`A / exp(B)`, `A / pow(B, C)`,
//! `(A / B) / C`, `A / (B / C)`) are in [`crate::xla_divide_chain`].
//!
//! Not modelled: `A + 0 => A` and `A * 1 => A` (exact except for the sign of a zero),
//! `A*C + B*C => (A + B)*C` for a power-of-two `C`, and
//! CSE merging two identical (r)sqrt ops into one with two uses.
//!
//! Invariants: a rewritten op keeps its id and result; the new ops (a folded constant, or
//! the new `sqrt`/`rsqrt`) are placed immediately before it, so the result is SSA-valid;
//! ops are visited in walk (program) order, each seeing the rewrites of earlier ops, as the
//! simplifier's fixed point does; signatures are unchanged.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use half::f16;
use neuronc_ir::{
    Attr, DenseData, DenseElements, ElemType, Module, NamedAttrs, OpId, OpKind, ValueId,
};

use crate::xla_simplify::{single_def, wide_float_result};

/// A constant operand's value, as the simplifier's matchers see it.
#[derive(Clone, PartialEq)]
enum Konst {
    /// Every element equal: one element's little-endian bytes.
    Splat(Vec<u8>),
    /// A non-splat constant of the op's shape: all elements' bytes.
    Full(Arc<[u8]>),
}

/// An op read as `A (+|*) K` or `K - A` with `A` non-constant.
enum Form {
    /// `A + K` (also `A - (-K)`) or `A * K`.
    Right(ValueId, Konst),
    /// `K - A`.
    Minus(Konst, ValueId),
}

/// A rewrite found for one op.
enum Plan {
    /// The op becomes `kind(a, k)` (`Add`, `Multiply`) or `Subtract(k, a)`.
    Fold { kind: OpKind, a: ValueId, k: Konst },
    /// The divide becomes `a * root(b)`.
    Root { root: OpKind, b: ValueId },
}

/// Whether [`reassociate`] would change `m`.
pub(crate) fn has_sites(m: &Module) -> bool {
    let uses = use_counts(m);
    let mut found = false;
    m.walk_ops(|id| found = found || plan(m, id, &uses).is_some());
    found
}

/// Rewrites `m` in place (see the module documentation); returns whether anything changed.
pub(crate) fn reassociate(m: &mut Module) -> bool {
    let mut ops = Vec::new();
    m.walk_ops(|id| ops.push(id));
    let uses = use_counts(m);
    let mut before: BTreeMap<OpId, Vec<OpId>> = BTreeMap::new();
    for id in ops {
        let Some(p) = plan(m, id, &uses) else {
            continue;
        };
        if let Some(new_op) = apply(m, id, p) {
            before.insert(id, vec![new_op]);
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
    match m.op(id).kind {
        OpKind::Add | OpKind::Subtract => fold_add(m, id),
        OpKind::Multiply => fold_multiply(m, id),
        OpKind::Divide => divide_by_root(m, id, uses),
        _ => None,
    }
}

/// Carries out `p` on op `id`; the new op to place before it.
fn apply(m: &mut Module, id: OpId, p: Plan) -> Option<OpId> {
    let (loc, span) = (m.op(id).loc, m.op(id).span);
    let (new_op, kind, operands) = match p {
        Plan::Fold { kind, a, k } => {
            let c = constant_op(m, id, k)?;
            let cv = m.op(c).results[0];
            let operands = if kind == OpKind::Subtract {
                vec![cv, a]
            } else {
                vec![a, cv]
            };
            (c, kind, operands)
        }
        Plan::Root { root, b } => {
            let ty = m.value_type(m.op(id).results[0]);
            let r = m.create_op(root, vec![b], &[ty], NamedAttrs::new());
            let a = m.op(id).operands[0];
            (r, OpKind::Multiply, vec![a, m.op(r).results[0]])
        }
    };
    m.op_mut(new_op).loc = loc;
    m.op_mut(new_op).span = span;
    let op = m.op_mut(id);
    op.kind = kind;
    op.operands = operands;
    Some(new_op)
}

/// Operand slots reading each value (also [`crate::xla_unroll`]'s).
pub(crate) fn use_counts(m: &Module) -> HashMap<ValueId, usize> {
    let mut counts: HashMap<ValueId, usize> = HashMap::new();
    m.walk_ops(|id| {
        for &v in &m.op(id).operands {
            *counts.entry(v).or_default() += 1;
        }
    });
    counts
}

/// `(A + C1) + C2` or `(C1 - A) + C2` (any operand order, subtractions of constants read as
/// additions of their negations) with the constants folded into one.
fn fold_add(m: &Module, id: OpId) -> Option<Plan> {
    let Form::Right(inner, c2) = additive(m, id)? else {
        return None;
    };
    let def = single_def(m, inner)?;
    if !matches!(m.op(def).kind, OpKind::Add | OpKind::Subtract) {
        return None;
    }
    let elem = m.tensor_type(inner)?.elem;
    let (kind, a, c1) = match additive(m, def)? {
        Form::Right(a, c1) => (OpKind::Add, a, c1),
        Form::Minus(c1, a) => (OpKind::Subtract, a, c1),
    };
    let k = combine(elem, &c1, &c2, OpKind::Add)?;
    Some(Plan::Fold { kind, a, k })
}

/// `(A * C1) * C2` (any operand order) as `A * (C1 * C2)`.
fn fold_multiply(m: &Module, id: OpId) -> Option<Plan> {
    let Form::Right(inner, c2) = multiplicative(m, id)? else {
        return None;
    };
    let def = single_def(m, inner)?;
    if m.op(def).kind != OpKind::Multiply {
        return None;
    }
    let Form::Right(a, c1) = multiplicative(m, def)? else {
        return None;
    };
    let elem = m.tensor_type(inner)?.elem;
    let k = combine(elem, &c1, &c2, OpKind::Multiply)?;
    Some(Plan::Fold {
        kind: OpKind::Multiply,
        a,
        k,
    })
}

/// Add or subtract op `id` as `A + K` or `K - A` (None when neither or both operands are
/// constants).
fn additive(m: &Module, id: OpId) -> Option<Form> {
    let op = m.op(id);
    let [u, v] = op.operands[..] else {
        return None;
    };
    let elem = m.tensor_type(op.results[0])?.elem;
    let (ku, kv) = (konst(m, u), konst(m, v));
    match (op.kind, ku, kv) {
        (OpKind::Add, None, Some(k)) => Some(Form::Right(u, k)),
        (OpKind::Add, Some(k), None) => Some(Form::Right(v, k)),
        (OpKind::Subtract, None, Some(k)) => Some(Form::Right(u, negate(elem, &k)?)),
        (OpKind::Subtract, Some(k), None) => Some(Form::Minus(k, v)),
        _ => None,
    }
}

/// Multiply op `id` as `A * K` (None when neither or both operands are constants).
fn multiplicative(m: &Module, id: OpId) -> Option<Form> {
    let [u, v] = m.op(id).operands[..] else {
        return None;
    };
    match (konst(m, u), konst(m, v)) {
        (None, Some(k)) => Some(Form::Right(u, k)),
        (Some(k), None) => Some(Form::Right(v, k)),
        _ => None,
    }
}

/// `v` as a constant: a dense f16/f32/f64 constant (all elements equal: a splat) or a
/// `broadcast_in_dim` of a splat one.
fn konst(m: &Module, v: ValueId) -> Option<Konst> {
    let op = m.op(single_def(m, v)?);
    match op.kind {
        OpKind::Constant => match op.attrs.get("value") {
            Some(Attr::Elements(d)) => dense_konst(d),
            _ => None,
        },
        OpKind::BroadcastInDim => match konst(m, *op.operands.first()?)? {
            Konst::Splat(b) => Some(Konst::Splat(b)),
            Konst::Full(_) => None,
        },
        _ => None,
    }
}

fn dense_konst(d: &DenseElements) -> Option<Konst> {
    if !matches!(d.elem, ElemType::F16 | ElemType::F32 | ElemType::F64) {
        return None;
    }
    let w = d.elem.byte_width();
    match &d.data {
        DenseData::Splat(b) => Some(Konst::Splat(b.to_vec())),
        DenseData::Full(bytes) => {
            let first = bytes.get(..w)?;
            if bytes.chunks(w).all(|c| c == first) {
                Some(Konst::Splat(first.to_vec()))
            } else {
                Some(Konst::Full(bytes.clone()))
            }
        }
    }
}

/// `-k` (the sign bit flipped, exact).
fn negate(elem: ElemType, k: &Konst) -> Option<Konst> {
    let w = elem.byte_width();
    let flip = |b: &[u8]| -> Vec<u8> {
        let mut out = b.to_vec();
        for chunk in out.chunks_mut(w) {
            if let Some(top) = chunk.last_mut() {
                *top ^= 0x80;
            }
        }
        out
    };
    Some(match k {
        Konst::Splat(b) => Konst::Splat(flip(b)),
        Konst::Full(b) => Konst::Full(flip(b).into()),
    })
}

/// `a (+|*) b` element-wise in `elem` (f16 through f32, as XLA's evaluator); None for a
/// splat/non-splat pair or another element type.
fn combine(elem: ElemType, a: &Konst, b: &Konst, kind: OpKind) -> Option<Konst> {
    let w = elem.byte_width();
    let both = |x: &[u8], y: &[u8]| -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(x.len());
        for (p, q) in x.chunks(w).zip(y.chunks(w)) {
            out.extend(fold_elem(elem, p, q, kind)?);
        }
        Some(out)
    };
    match (a, b) {
        (Konst::Splat(x), Konst::Splat(y)) => Some(Konst::Splat(both(x, y)?)),
        (Konst::Full(x), Konst::Full(y)) if x.len() == y.len() => {
            Some(Konst::Full(both(x, y)?.into()))
        }
        _ => None,
    }
}

fn fold_elem(elem: ElemType, p: &[u8], q: &[u8], kind: OpKind) -> Option<Vec<u8>> {
    fn op<T: std::ops::Add<Output = T> + std::ops::Mul<Output = T>>(k: OpKind, a: T, b: T) -> T {
        if k == OpKind::Multiply {
            a * b
        } else {
            a + b
        }
    }
    Some(match elem {
        ElemType::F16 => {
            let a = f16::from_le_bytes(p.try_into().ok()?).to_f32();
            let b = f16::from_le_bytes(q.try_into().ok()?).to_f32();
            f16::from_f32(op(kind, a, b)).to_le_bytes().to_vec()
        }
        ElemType::F32 => {
            let a = f32::from_le_bytes(p.try_into().ok()?);
            let b = f32::from_le_bytes(q.try_into().ok()?);
            op(kind, a, b).to_le_bytes().to_vec()
        }
        ElemType::F64 => {
            let a = f64::from_le_bytes(p.try_into().ok()?);
            let b = f64::from_le_bytes(q.try_into().ok()?);
            op(kind, a, b).to_le_bytes().to_vec()
        }
        _ => return None,
    })
}

/// A detached constant of op `id`'s result type holding `k`.
fn constant_op(m: &mut Module, id: OpId, k: Konst) -> Option<OpId> {
    let ty = m.value_type(m.op(id).results[0]);
    let t = m.tensor_type(m.op(id).results[0])?;
    let (elem, len) = (t.elem, t.num_elements());
    let data = match k {
        Konst::Splat(b) => DenseData::Splat(b.into_boxed_slice()),
        Konst::Full(b) if b.len() as u64 == len * elem.byte_width() as u64 => DenseData::Full(b),
        Konst::Full(_) => return None,
    };
    let dense = DenseElements {
        ty,
        elem,
        len,
        data,
    };
    let mut attrs = NamedAttrs::new();
    attrs.set("value", Attr::Elements(Arc::new(dense)));
    Some(m.create_op(OpKind::Constant, Vec::new(), &[ty], attrs))
}

/// `A / sqrt(B) => A * rsqrt(B)` and `A / rsqrt(B) => A * sqrt(B)` for a single-use root
/// of the divide's type.
fn divide_by_root(m: &Module, id: OpId, uses: &HashMap<ValueId, usize>) -> Option<Plan> {
    let divisor = *m.op(id).operands.get(1)?;
    let root = m.op(single_def(m, divisor)?);
    let swapped = match root.kind {
        OpKind::Sqrt => OpKind::Rsqrt,
        OpKind::Rsqrt => OpKind::Sqrt,
        _ => return None,
    };
    let same_type = m.value_type(divisor) == m.value_type(m.op(id).results[0]);
    (uses.get(&divisor).copied() == Some(1) && same_type).then_some(Plan::Root {
        root: swapped,
        b: *root.operands.first()?,
    })
}
