//! XLA:CPU's `A / Const => A * (1 / Const)` rewrite, for the `xla` float semantics (called
//! from [`crate::xla_simplify`]), and its `A / Broadcast(B) => A * Broadcast(1 / B)` rewrite,
//! for the interpreter's `xla` runs only ([`broadcast_reciprocals`]).
//!
//! # What XLA:CPU computes
//! XLA's algebraic simplifier replaces a `divide` whose divisor is a constant, or a
//! `broadcast` of a constant, and whose dividend is not a constant, by a `multiply` with the
//! constant's element-wise reciprocal, computed in the element type (f16: the f32 quotient
//! rounded to f16). The product rounds differently from the quotient (about a third of
//! the results of `x / 6` differ by one ulp), which shows in f16 programs: torch's
//! hardswish `x * clamp(x + 3, 0, 6) / 6` in an f16 training step moved gradients by
//! 4.7e-3 of their scale. Facts checked on jaxlib 0.10.2's XLA:CPU with
//! `tools/xla_run.py` (probe round 9), over 4096 dividends `i / 97.3`:
//! * f16, f32 and f64 divides by a splat constant, a non-splat constant and a
//!   `broadcast_in_dim` of a scalar constant equal the reciprocal products exactly; a divide
//!   by a function argument holding the same values is the correctly rounded quotient.
//! * bf16 is not rewritten in bf16 (`FloatNormalization` computes it in f32 first; the f32
//!   product rounded to bf16 matched the bf16 quotient on every input tried).
//!
//! On CPU the simplifier of jaxlib 0.10.2's XLA also replaces `A / broadcast(B)` by
//! `A * broadcast(1 / B)`, the reciprocal a runtime `divide` in the element type, when `B`
//! has exactly one use (XLA's `WithOneUse`: one user, one operand slot). Rewriting adds a
//! use of `B` (the reciprocal), so of several divides by broadcasts of one `B` only the
//! first (in program order) is rewritten; identical broadcasts of `B` count as one use (CSE
//! merges them first); a `broadcast_in_dim` that adds no elements (identity or reshape) is
//! not a broadcast in XLA. Facts checked with `tools/xla_run.py` (probe round 11): over 4096
//! dividends `1.37 i` and divisors 7, -97.3 and 6, f16 / f32 / f64 results equal
//! `a * fl(1 / b)` exactly (up to 390 of 4096 differ from the quotient), for scalar and
//! vector broadcasts along an axis and for parameter, computed (`add`, `abs`, `convert`)
//! and constant dividends; a second divide by the same broadcast, a divisor whose operand
//! has other uses and a divide by an element-wise argument give the quotient; bf16 results
//! equal the quotient. torch_xla lowers integer floor division `a // b` to
//! `floor(f32(a) / broadcast(f32(b)))`, so an exact quotient computed one ulp low becomes an
//! integer off by one (`26656 // -7` is -3809 on jaxlib's XLA:CPU). torch_xla 2.9's own
//! runtime does not apply this rule (it returns the quotient, as eager torch does), so the
//! rewrite is applied where `neuronc-rs run` follows jaxlib's XLA:CPU and not in the module
//! `compile` plans the engine program from (an extra reciprocal op there, for softmax and
//! norm divisions in every attention layer, would cost instructions to reproduce a one-ulp
//! difference that torch_xla itself does not have).
//!
//! Not modelled: the complex (c64/c128) case of the same rules. XLA's other divide
//! rewrites are in [`crate::xla_reassoc`] (`A / sqrt(B)`, `A / rsqrt(B)`) and
//! [`crate::xla_divide_chain`] (`A / exp(B)`, `A / pow(B, C)`, `(A / B) / C`,
//! `A / (B / C)`).
//!
//! Invariants: the rewritten divide keeps its id and result (it becomes a `multiply`); the
//! new ops (the reciprocal constant or the `1` constant and the reciprocal divide, then the
//! broadcast) are placed immediately before it, in that order, so the result is SSA-valid;
//! the original divisor is left for its other users; [`broadcast_reciprocals`] never
//! modifies its input and borrows it when nothing matches.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use half::f16;
use neuronc_ir::{
    Attr, DenseData, DenseElements, ElemType, Module, NamedAttrs, OpId, OpKind, ValueId,
};

use crate::xla_simplify::{single_def, wide_float_result};

/// Where a rewritten divide's divisor comes from.
enum Divisor {
    /// A constant op and, when the divisor is a broadcast of that constant, the broadcast.
    Constant {
        constant: OpId,
        broadcast: Option<OpId>,
    },
    /// A `broadcast_in_dim` (adding elements) of a non-constant value.
    Broadcast(OpId),
}

/// One divide to rewrite and its divisor.
pub(crate) struct RecipSite {
    op: OpId,
    divisor: Divisor,
}

impl RecipSite {
    /// The divide being rewritten.
    pub(crate) fn op(&self) -> OpId {
        self.op
    }
}

/// Every f16/f32/f64 `divide(a, c)` with `c` a constant or a `broadcast_in_dim` of one and
/// `a` not a constant, in op id order.
pub(crate) fn find_recip_sites(m: &Module) -> Vec<RecipSite> {
    find_sites(m, false)
}

/// `module` with every f16/f32/f64 `divide(a, broadcast(b))` whose `b` is not a constant
/// and has one use (counting the reciprocals of earlier sites) replaced by
/// `multiply(a, broadcast(1 / b))`, as jaxlib's XLA:CPU computes it; borrowed when there is
/// none. Divides by constants are left to [`crate::xla_simplify`].
pub(crate) fn broadcast_reciprocals(module: &Module) -> Cow<'_, Module> {
    let sites = find_sites(module, true);
    if sites.is_empty() {
        return Cow::Borrowed(module);
    }
    let mut m = module.clone();
    let mut before: BTreeMap<OpId, Vec<OpId>> = BTreeMap::new();
    for site in &sites {
        before.insert(site.op, rewrite_recip(&mut m, site));
    }
    crate::excess_precision::splice_all(&mut m, &before);
    Cow::Owned(m)
}

/// The divides by constants (`runtime` false) or by broadcasts of single-use non-constant
/// values (`runtime` true) XLA rewrites, in walk order.
fn find_sites(m: &Module, runtime: bool) -> Vec<RecipSite> {
    let uses = if runtime {
        use_counts(m)
    } else {
        HashMap::new()
    };
    let mut gained: HashSet<ValueId> = HashSet::new();
    let mut sites = Vec::new();
    m.walk_ops(|id| {
        let op = m.op(id);
        if op.kind != OpKind::Divide || op.operands.len() != 2 || op.parent.is_none() {
            return;
        }
        if !wide_float_result(m, id) {
            return;
        }
        let Some(divisor) = divisor_of(m, op.operands[1], is_constant(m, op.operands[0])) else {
            return;
        };
        match divisor {
            Divisor::Constant { .. } if runtime => return,
            Divisor::Broadcast(_) if !runtime => return,
            Divisor::Broadcast(b) => {
                let b = m.op(b).operands[0];
                let n = uses.get(&b).copied().unwrap_or(0) + usize::from(gained.contains(&b));
                if n != 1 {
                    return;
                }
                gained.insert(b);
            }
            Divisor::Constant { .. } => {}
        }
        sites.push(RecipSite { op: id, divisor });
    });
    sites
}

/// Uses of every value as XLA's `WithOneUse` counts them after CSE: operand slots of its
/// users, identical `broadcast_in_dim` users (same attributes and result type) once.
fn use_counts(m: &Module) -> HashMap<ValueId, usize> {
    let mut counts: HashMap<ValueId, usize> = HashMap::new();
    let mut broadcasts: HashMap<ValueId, Vec<OpId>> = HashMap::new();
    m.walk_ops(|id| {
        let op = m.op(id);
        for &v in &op.operands {
            if op.kind == OpKind::BroadcastInDim {
                let seen = broadcasts.entry(v).or_default();
                if seen.iter().any(|&o| same_broadcast(m, o, id)) {
                    continue;
                }
                seen.push(id);
            }
            *counts.entry(v).or_default() += 1;
        }
    });
    counts
}

/// Whether broadcast ops `a` and `b` compute the same value (CSE would merge them).
fn same_broadcast(m: &Module, a: OpId, b: OpId) -> bool {
    let (a, b) = (m.op(a), m.op(b));
    a.operands == b.operands
        && a.attrs == b.attrs
        && a.results.len() == 1
        && b.results.len() == 1
        && m.value_type(a.results[0]) == m.value_type(b.results[0])
}

/// How XLA rewrites a divide by `v` (None: it does not); `const_dividend` when the dividend
/// is a constant (then a constant divisor is folded, not rewritten).
fn divisor_of(m: &Module, v: ValueId, const_dividend: bool) -> Option<Divisor> {
    let def = single_def(m, v)?;
    let d = m.op(def);
    let (constant, broadcast) = match d.kind {
        OpKind::Constant => (def, None),
        OpKind::BroadcastInDim if d.operands.len() == 1 => match single_def(m, d.operands[0]) {
            Some(c) if m.op(c).kind == OpKind::Constant => (c, Some(def)),
            _ => return adds_elements(m, def).then_some(Divisor::Broadcast(def)),
        },
        _ => return None,
    };
    (!const_dividend && dense_of(m, constant).is_some()).then_some(Divisor::Constant {
        constant,
        broadcast,
    })
}

/// Whether broadcast op `b` has more result elements than operand elements.
fn adds_elements(m: &Module, b: OpId) -> bool {
    let op = m.op(b);
    let count = |v: ValueId| m.tensor_type(v).map(|t| t.num_elements());
    match (count(op.operands[0]), count(op.results[0])) {
        (Some(i), Some(o)) => i < o,
        _ => false,
    }
}

/// Turns the site's divide into `multiply(a, reciprocal)`; returns the new ops (the
/// reciprocal constant, or a `1` constant and the reciprocal divide, then the broadcast for a
/// broadcast divisor) to go before it.
pub(crate) fn rewrite_recip(m: &mut Module, site: &RecipSite) -> Vec<OpId> {
    let (mut new_ops, broadcast) = match site.divisor {
        Divisor::Constant {
            constant,
            broadcast,
        } => match reciprocal_constant(m, constant) {
            Some(inv) => (vec![inv], broadcast),
            None => return Vec::new(),
        },
        Divisor::Broadcast(b) => match reciprocal_divide(m, m.op(b).operands[0]) {
            Some(ops) => (ops, Some(b)),
            None => return Vec::new(),
        },
    };
    let Some(&last) = new_ops.last() else {
        return Vec::new();
    };
    let mut divisor = m.op(last).results[0];
    if let Some(b) = broadcast {
        let b = m.op(b).clone();
        let bty = m.value_type(b.results[0]);
        let nb = m.create_op(OpKind::BroadcastInDim, vec![divisor], &[bty], b.attrs);
        new_ops.push(nb);
        divisor = m.op(nb).results[0];
    }
    let (loc, span) = (m.op(site.op).loc, m.op(site.op).span);
    for &n in &new_ops {
        m.op_mut(n).loc = loc;
        m.op_mut(n).span = span;
    }
    let op = m.op_mut(site.op);
    op.kind = OpKind::Multiply;
    op.operands[1] = divisor;
    new_ops
}

/// A constant holding the element-wise reciprocal of constant op `c` (None when its value is
/// not f16/f32/f64 dense data).
fn reciprocal_constant(m: &mut Module, c: OpId) -> Option<OpId> {
    let dense = dense_of(m, c).and_then(reciprocal)?;
    let cty = m.value_type(m.op(c).results[0]);
    let mut attrs = NamedAttrs::new();
    attrs.set("value", Attr::Elements(Arc::new(dense)));
    Some(m.create_op(OpKind::Constant, Vec::new(), &[cty], attrs))
}

/// `one = constant 1` and `divide(one, b)` in `b`'s type (None unless `b` is an f16/f32/f64
/// tensor).
fn reciprocal_divide(m: &mut Module, b: ValueId) -> Option<Vec<OpId>> {
    let t = m.tensor_type(b)?;
    let one: Vec<u8> = match t.elem {
        ElemType::F16 => f16::ONE.to_le_bytes().into(),
        ElemType::F32 => 1f32.to_le_bytes().into(),
        ElemType::F64 => 1f64.to_le_bytes().into(),
        _ => return None,
    };
    let ty = m.value_type(b);
    let c = m.create_splat_constant(ty, one)?;
    let one = m.op(c).results[0];
    let inv = m.create_op(OpKind::Divide, vec![one, b], &[ty], NamedAttrs::new());
    Some(vec![c, inv])
}

fn is_constant(m: &Module, v: ValueId) -> bool {
    single_def(m, v).is_some_and(|d| m.op(d).kind == OpKind::Constant)
}

/// The dense value of constant op `c`, when it is an f16/f32/f64 `dense<...>`.
fn dense_of(m: &Module, c: OpId) -> Option<&DenseElements> {
    match m.op(c).attrs.get("value") {
        Some(Attr::Elements(d))
            if matches!(d.elem, ElemType::F16 | ElemType::F32 | ElemType::F64) =>
        {
            Some(d)
        }
        _ => None,
    }
}

/// `d` with every element replaced by its reciprocal in `d`'s element type (None for other
/// element types or malformed data).
fn reciprocal(d: &DenseElements) -> Option<DenseElements> {
    let w = d.elem.byte_width();
    let invert = |b: &[u8]| -> Option<Vec<u8>> {
        Some(match d.elem {
            ElemType::F16 => {
                let v = f16::from_le_bytes(b.try_into().ok()?).to_f32();
                f16::from_f32(1.0 / v).to_le_bytes().to_vec()
            }
            ElemType::F32 => (1.0 / f32::from_le_bytes(b.try_into().ok()?))
                .to_le_bytes()
                .to_vec(),
            ElemType::F64 => (1.0 / f64::from_le_bytes(b.try_into().ok()?))
                .to_le_bytes()
                .to_vec(),
            _ => return None,
        })
    };
    let data = match &d.data {
        DenseData::Splat(b) => DenseData::Splat(invert(b)?.into_boxed_slice()),
        DenseData::Full(bytes) => {
            let mut out = Vec::with_capacity(bytes.len());
            for chunk in bytes.chunks(w) {
                out.extend(invert(chunk)?);
            }
            DenseData::Full(out.into())
        }
    };
    Some(DenseElements {
        ty: d.ty,
        elem: d.elem,
        len: d.len,
        data,
    })
}
