//! `fold-constant`: evaluates an op whose operands are all constants with the reference
//! interpreter's kernels and replaces it by constants.
//!
//! Limits: every result has at most [`crate::PassContext::fold_limit`] elements (default
//! 1024), operands total at most [`MAX_INPUT_ELEMENTS`]; the op is pure, has no regions,
//! at least one operand, only tensor types, and no type-carrying attributes. Ops the
//! interpreter cannot evaluate are left alone (the interpreter runs *before* the rewrite is
//! committed, so a failure costs no fuel).
//! Invariant: the folded constant holds exactly the interpreter's result bytes, so folding
//! never changes what the interpreter computes.

use super::{Rewriter, Rule};
use crate::ir_util::{constant_of, is_pure, make_constant};
use neuronc_interp::{run_function, RunOptions, Tensor};
use neuronc_ir::{
    Attr, DenseData, DenseElements, Func, Module, NamedAttrs, OpId, OpKind, Span, ValueDef, ValueId,
};

/// Upper bound on the total operand elements of a folded op (bounds compile time).
pub const MAX_INPUT_ELEMENTS: u64 = 1 << 20;

pub static RULES: &[Rule] = &[Rule {
    name: "fold-constant",
    kinds: &[],
    apply: fold_constant,
}];

fn has_type_attr(a: &Attr) -> bool {
    match a {
        Attr::Type(_) | Attr::Elements(_) => true,
        Attr::Array(items) => items.iter().any(has_type_attr),
        Attr::Dict(d) => d.iter().any(|(_, v)| has_type_attr(v)),
        _ => false,
    }
}

/// Whether `op` is a candidate, given the fold limit.
fn foldable(m: &Module, op: OpId, limit: u64) -> bool {
    let o = m.op(op);
    // Cheapest rejection first: almost no op has only constant operands.
    if o.operands.iter().any(|&v| constant_of(m, v).is_none()) {
        return false;
    }
    if o.kind == OpKind::Constant
        || o.operands.is_empty()
        || !o.regions.is_empty()
        || o.attrs.iter().any(|(_, a)| has_type_attr(a))
        || !is_pure(m, op)
    {
        return false;
    }
    let results_small = o
        .results
        .iter()
        .all(|&r| m.tensor_type(r).is_some_and(|t| t.num_elements() <= limit));
    let mut input = 0u64;
    let inputs_const = o.operands.iter().all(|&v| match constant_of(m, v) {
        Some(d) => {
            input += d.len;
            true
        }
        None => false,
    });
    results_small && inputs_const && input <= MAX_INPUT_ELEMENTS
}

/// Evaluates `op` on its constant operands in a one-op module.
fn evaluate(m: &Module, op: OpId) -> Option<Vec<Tensor>> {
    let o = m.op(op);
    let mut sub = Module::new();
    let body = sub.add_region(None);
    let mut args = Vec::new();
    let mut inputs = Vec::new();
    for &v in &o.operands {
        let ty = sub.types.intern(m.ty(m.value_type(v)).clone());
        args.push(sub.add_region_arg(body, ty));
        inputs.push(Tensor::from_dense(constant_of(m, v)?, m).ok()?);
    }
    let result_types: Vec<_> = o
        .results
        .iter()
        .map(|&r| sub.types.intern(m.ty(m.value_type(r)).clone()))
        .collect();
    let new = sub.create_op(o.kind, args.clone(), &result_types, o.attrs.clone());
    sub.append_op(body, new);
    let results = sub.op(new).results.clone();
    let ret = sub.create_op(OpKind::FuncReturn, results, &[], NamedAttrs::new());
    sub.append_op(body, ret);
    sub.funcs.push(Func {
        name: "fold".into(),
        visibility: None,
        body,
        result_types: result_types.clone(),
        arg_attrs: vec![NamedAttrs::new(); args.len()],
        result_attrs: vec![NamedAttrs::new(); result_types.len()],
        attrs: NamedAttrs::new(),
        loc: None,
        span: Span::default(),
    });
    run_function(&sub, "fold", inputs, &RunOptions::default()).ok()
}

/// The rule's entry, tried on every op: a cheap rejection of ops with an operand not
/// defined by a constant (almost all of them), before the full check.
fn fold_constant(rw: &mut Rewriter, op: OpId) -> Option<Vec<ValueId>> {
    let m = &*rw.m;
    let from_constants = m.op(op).operands.iter().all(|&v| match m.value(v).def {
        ValueDef::Result(d, _) => m.op(d).kind == OpKind::Constant,
        ValueDef::RegionArg(..) => false,
    });
    if !from_constants {
        return None;
    }
    fold_if_foldable(rw, op)
}

#[inline(never)]
fn fold_if_foldable(rw: &mut Rewriter, op: OpId) -> Option<Vec<ValueId>> {
    if !foldable(rw.m, op, rw.ctx.fold_limit) {
        return None;
    }
    let outputs = evaluate(rw.m, op)?;
    let results = rw.m.op(op).results.clone();
    if outputs.len() != results.len() {
        return None;
    }
    let mut payloads = Vec::new();
    for (&r, t) in results.iter().zip(&outputs) {
        let ty = rw.m.value_type(r);
        let tt = rw.m.types.tensor_of(ty)?;
        if t.ty() != tt {
            return None;
        }
        payloads.push((ty, dense_of(ty, tt.elem, tt.num_elements(), t.to_bytes())));
    }
    rw.commit(op)?;
    let mut values = Vec::new();
    for (ty, dense) in payloads {
        let c = make_constant(rw.m, ty, dense);
        rw.adopt(c);
        values.push(rw.m.op(c).results[0]);
    }
    Some(values)
}

/// Dense payload from element bytes: a splat when all elements are equal.
fn dense_of(
    ty: neuronc_ir::TypeId,
    elem: neuronc_ir::ElemType,
    len: u64,
    bytes: Vec<u8>,
) -> DenseElements {
    let w = elem.byte_width();
    let splat = len > 0 && w > 0 && bytes.chunks(w).all(|c| c == &bytes[..w]);
    let data = if splat {
        DenseData::Splat(bytes[..w].into())
    } else {
        DenseData::Full(bytes.into())
    };
    DenseElements {
        ty,
        elem,
        len,
        data,
    }
}
