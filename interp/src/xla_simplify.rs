//! Rewrites of XLA:CPU's algebraic simplifier that change results, as a module rewrite for the
//! `xla` float semantics: [`xla_simplify`] (`multiply(convert(pred), x) -> select(pred, x, 0)`,
//! `log(exp(x)) -> x` and, through [`crate::xla_divide`] and [`crate::xla_logistic`],
//! `x / constant -> x * (1 / constant)` and f16 `logistic(x) -> 1 / (1 + exp(-x))`), then,
//! through [`crate::xla_divide_chain`], divide chains, divides by `exp`/`pow`, `exp`
//! products, small integer powers and logs of roots and powers.
//!
//! # What XLA:CPU computes
//! XLA's algebraic simplifier replaces a `multiply` one of whose operands is a `convert`
//! from `pred` by `select(pred, other operand, 0)`. The two differ where the other operand
//! is infinite or NaN and the predicate is false: the spec's product is NaN, XLA's is 0.
//! Frameworks lean on it: torch_xla's `scatter_reduce(amax)` backward multiplies
//! `(src == result).float()` by `grad / count`, whose entries are `inf` where `count` is 0,
//! and XLA:CPU returns finite gradients. Facts checked on jaxlib 0.10.2's XLA:CPU with
//! `tools/xla_run.py` (probe round 8):
//! * `convert(pred) * x` and `x * convert(pred)` give 0 where `pred` is false, for f16, f32
//!   and f64 results, also when `pred` is `not(...)`, and when the converted predicate is
//!   broadcast (`broadcast_in_dim(convert(pred)) * x`).
//! * bf16 products keep the NaN: `FloatNormalization` runs first and puts a
//!   `convert(bf16 -> f32)` between the predicate's convert and the f32 multiply.
//! * A `convert` chain (`pred -> i32 -> f32`), a `reshape` between the convert and the
//!   multiply, and a constant predicate (constant-folded first) keep the NaN.
//!
//! It also replaces `log(exp(x))` by `x` (`exp` overflowing to inf or underflowing to 0 no
//! longer shows): checked for f16, f32 and f64, also when the `exp` has other users; bf16
//! keeps `log(exp(x))` (normalized to f32 first); `log_plus_one(exponential_minus_one(x))`
//! is not rewritten.
//!
//! Invariants: the input module is never modified and is borrowed when nothing matches;
//! the zero constant (and the predicate's broadcast) sit immediately before the rewritten
//! op, so the result is SSA-valid; a rewritten `log` becomes an identity `convert` of `x`
//! (defined before the `exp` that read it); signatures are unchanged; ops are visited in id
//! order.

use std::borrow::Cow;
use std::collections::BTreeMap;

use neuronc_ir::{ElemType, Module, NamedAttrs, OpId, OpKind, ValueDef, ValueId};

/// Where a multiply reads a converted predicate: the predicate and, when the converted
/// value is broadcast first, that broadcast's attributes.
struct PredOperand {
    pred: ValueId,
    broadcast: Option<NamedAttrs>,
}

/// One multiply to rewrite: its predicate operand and the other operand.
struct Site {
    op: OpId,
    pred: PredOperand,
    other: ValueId,
}

/// `module` with every `multiply(convert(pred), x)` (either order, also through a
/// `broadcast_in_dim` of the convert) of an f16/f32/f64 result replaced by
/// `select(pred, x, 0)`, every f16/f32/f64 `log(exp(x))` by `x` and every f16/f32/f64
/// divide by a (broadcast) constant by a multiply with its reciprocal and every f16
/// `logistic(x)` by `1 / (1 + exp(-x))` in f16 ops, then the rewrites of
/// [`crate::xla_divide_chain`], as XLA:CPU computes them; borrowed when there is none.
pub fn xla_simplify(module: &Module) -> Cow<'_, Module> {
    let sites = find_sites(module);
    let logs = find_log_exp(module);
    let recips = crate::xla_divide::find_recip_sites(module);
    let logistics = crate::xla_logistic::find_f16_logistics(module);
    let chains = crate::xla_divide_chain::has_sites(module);
    if sites.is_empty() && logs.is_empty() && recips.is_empty() && logistics.is_empty() && !chains {
        return Cow::Borrowed(module);
    }
    let mut m = module.clone();
    for &(log, x) in &logs {
        let op = m.op_mut(log);
        op.kind = OpKind::Convert;
        op.operands = vec![x];
        op.attrs = NamedAttrs::new();
    }
    let mut before: BTreeMap<OpId, Vec<OpId>> = BTreeMap::new();
    for site in &sites {
        before.insert(site.op, rewrite(&mut m, site));
    }
    rewrite_recips(&mut m, &recips, &mut before);
    for &id in &logistics {
        let new_ops = crate::xla_logistic::expand_logistic(&mut m, id);
        before.insert(id, new_ops);
    }
    crate::excess_precision::splice_all(&mut m, &before);
    if chains && crate::xla_divide_chain::rewrite(&mut m) {
        // The divides by constants the chain rules created (`A / (K / B) => (A * B) / K`)
        // get the reciprocal rewrite too, as the simplifier's next pass over them does.
        let again = crate::xla_divide::find_recip_sites(&m);
        let mut before = BTreeMap::new();
        rewrite_recips(&mut m, &again, &mut before);
        crate::excess_precision::splice_all(&mut m, &before);
    }
    Cow::Owned(m)
}

/// Applies [`crate::xla_divide::rewrite_recip`] to every site, recording the new ops to
/// splice in before each rewritten divide.
fn rewrite_recips(
    m: &mut Module,
    sites: &[crate::xla_divide::RecipSite],
    before: &mut BTreeMap<OpId, Vec<OpId>>,
) {
    for site in sites {
        let new_ops = crate::xla_divide::rewrite_recip(m, site);
        before.insert(site.op(), new_ops);
    }
}

/// Whether `op` has one result, of element type f16, f32 or f64 (types XLA:CPU does not
/// normalize to f32 before simplifying).
pub(crate) fn wide_float_result(m: &Module, op: OpId) -> bool {
    let op = m.op(op);
    op.results.len() == 1
        && m.tensor_type(op.results[0])
            .is_some_and(|t| matches!(t.elem, ElemType::F16 | ElemType::F32 | ElemType::F64))
}

/// Every `log(exp(x))` of a wide float type: (the `log`, `x`), in op id order.
fn find_log_exp(m: &Module) -> Vec<(OpId, ValueId)> {
    let mut found = Vec::new();
    m.walk_ops(|id| {
        let op = m.op(id);
        if op.kind != OpKind::Log || op.operands.len() != 1 || !wide_float_result(m, id) {
            return;
        }
        let exp = single_def(m, op.operands[0]).map(|e| m.op(e));
        if let Some(e) = exp.filter(|e| e.kind == OpKind::Exponential && e.operands.len() == 1) {
            found.push((id, e.operands[0]));
        }
    });
    found
}

fn find_sites(m: &Module) -> Vec<Site> {
    let mut sites = Vec::new();
    m.walk_ops(|id| {
        let op = m.op(id);
        let float = wide_float_result(m, id);
        if op.kind != OpKind::Multiply || !float || op.operands.len() != 2 || op.parent.is_none() {
            return;
        }
        let (a, b) = (op.operands[0], op.operands[1]);
        let found = match (pred_operand(m, a), pred_operand(m, b)) {
            (Some(p), _) => Some((p, b)),
            (None, Some(p)) => Some((p, a)),
            (None, None) => None,
        };
        if let Some((pred, other)) = found {
            sites.push(Site {
                op: id,
                pred,
                other,
            });
        }
    });
    sites
}

/// The op defining `v`, when `v` is an op's only result.
pub(crate) fn single_def(m: &Module, v: ValueId) -> Option<OpId> {
    match m.value(v).def {
        ValueDef::Result(op, 0) if m.op(op).results.len() == 1 => Some(op),
        _ => None,
    }
}

/// `v` as `convert(pred)` or `broadcast_in_dim(convert(pred))` with a non-constant `pred`.
fn pred_operand(m: &Module, v: ValueId) -> Option<PredOperand> {
    let mut def = m.op(single_def(m, v)?);
    let mut broadcast = None;
    if def.kind == OpKind::BroadcastInDim {
        broadcast = Some(def.attrs.clone());
        def = m.op(single_def(m, *def.operands.first()?)?);
    }
    if def.kind != OpKind::Convert || def.operands.len() != 1 {
        return None;
    }
    let pred = def.operands[0];
    let is_pred = m.tensor_type(pred).is_some_and(|t| t.elem == ElemType::I1);
    let constant = single_def(m, pred).is_some_and(|p| m.op(p).kind == OpKind::Constant);
    (is_pred && !constant).then_some(PredOperand { pred, broadcast })
}

/// Turns the site's multiply into `select(pred, other, 0)`; returns the new ops (the zero
/// constant and, for a broadcast predicate, the predicate's broadcast) to go before it.
fn rewrite(m: &mut Module, site: &Site) -> Vec<OpId> {
    let x = m.op(site.op).clone();
    let ty = m.value_type(x.results[0]);
    // Sites have tensor results (`wide_float_result`).
    let Some(width) = m.tensor_type(x.results[0]).map(|t| t.elem.byte_width()) else {
        return Vec::new();
    };
    let mut new_ops = Vec::new();
    let mut pred = site.pred.pred;
    if let Some(attrs) = &site.pred.broadcast {
        let shape = m
            .tensor_type(x.results[0])
            .map(|t| t.shape.clone())
            .unwrap_or_default();
        let pty = m.types.tensor(ElemType::I1, &shape);
        let b = m.create_op(OpKind::BroadcastInDim, vec![pred], &[pty], attrs.clone());
        new_ops.push(b);
        pred = m.op(b).results[0];
    }
    let Some(zero) = m.create_splat_constant(ty, vec![0u8; width]) else {
        return new_ops;
    };
    new_ops.push(zero);
    for &n in &new_ops {
        m.op_mut(n).loc = x.loc;
        m.op_mut(n).span = x.span;
    }
    let zero_v = m.op(zero).results[0];
    let sel = m.op_mut(site.op);
    sel.kind = OpKind::Select;
    sel.operands = vec![pred, site.other, zero_v];
    sel.attrs = NamedAttrs::new();
    new_ops
}
