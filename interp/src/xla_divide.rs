//! XLA:CPU's `A / Const => A * (1 / Const)` rewrite, for the `xla` float semantics (called
//! from [`crate::xla_simplify`]).
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
//! Not modelled: the complex (c64/c128) case of the same rule, and XLA's other divide
//! rewrites (`A / sqrt(B)`, `A / rsqrt(B)`, `A / exp(B)`, `A / pow(B, C)`, `(A / B) / C`,
//! `A / (B / C)`), which also move f16 results by an ulp.
//!
//! Invariants: the rewritten divide keeps its id and result (it becomes a `multiply`); the
//! new reciprocal constant (and its broadcast) are returned to be placed immediately before
//! it, so the result is SSA-valid; the original divisor is left for its other users.

use std::sync::Arc;

use half::f16;
use neuronc_ir::{Attr, DenseData, DenseElements, ElemType, Module, NamedAttrs, OpId, OpKind};

use crate::xla_simplify::{single_def, wide_float_result};

/// One divide to rewrite: the divide, its constant divisor op and, when the divisor is a
/// broadcast of that constant, the broadcast op.
pub(crate) struct RecipSite {
    op: OpId,
    constant: OpId,
    broadcast: Option<OpId>,
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
    let mut sites = Vec::new();
    m.walk_ops(|id| {
        let op = m.op(id);
        if op.kind != OpKind::Divide || op.operands.len() != 2 || op.parent.is_none() {
            return;
        }
        if !wide_float_result(m, id) || is_constant(m, op.operands[0]) {
            return;
        }
        let Some(def) = single_def(m, op.operands[1]) else {
            return;
        };
        let d = m.op(def);
        let (constant, broadcast) = match d.kind {
            OpKind::Constant => (def, None),
            OpKind::BroadcastInDim if d.operands.len() == 1 => match single_def(m, d.operands[0]) {
                Some(c) if m.op(c).kind == OpKind::Constant => (c, Some(def)),
                _ => return,
            },
            _ => return,
        };
        if dense_of(m, constant).is_some() {
            sites.push(RecipSite {
                op: id,
                constant,
                broadcast,
            });
        }
    });
    sites
}

/// Turns the site's divide into `multiply(a, reciprocal)`; returns the new ops (the
/// reciprocal constant and, for a broadcast divisor, its broadcast) to go before it.
pub(crate) fn rewrite_recip(m: &mut Module, site: &RecipSite) -> Vec<OpId> {
    let Some(dense) = dense_of(m, site.constant).and_then(reciprocal) else {
        return Vec::new();
    };
    let c = m.op(site.constant);
    let cty = m.value_type(c.results[0]);
    let mut attrs = NamedAttrs::new();
    attrs.set("value", Attr::Elements(Arc::new(dense)));
    let inv = m.create_op(OpKind::Constant, Vec::new(), &[cty], attrs);
    let mut new_ops = vec![inv];
    let mut divisor = m.op(inv).results[0];
    if let Some(b) = site.broadcast {
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

fn is_constant(m: &Module, v: neuronc_ir::ValueId) -> bool {
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
