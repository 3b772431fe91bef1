//! `fold-constant`: evaluates an op whose operands are all constants with the reference
//! interpreter's kernels and replaces it by constants.
//!
//! Limits: every result has at most [`crate::PassContext::fold_limit`] elements (default
//! 1024), operands total at most [`MAX_INPUT_ELEMENTS`]; the op is pure, has no regions,
//! at least one operand, only tensor types, and no type-carrying attributes. Ops the
//! interpreter cannot evaluate are left alone (the interpreter runs *before* the rewrite is
//! committed, so a failure costs no fuel).
//! Invariant: the folded constant holds exactly the interpreter's result bytes, so folding
//! never changes what the interpreter computes. (A `reshape` or `broadcast_in_dim` of a
//! constant whose element bytes the interpreter passes through unchanged has them moved
//! directly, without the interpreter: the same bytes, at a fraction of the cost.)

use super::{Rewriter, Rule};
use crate::ir_util::{all_elements_equal, constant_of, is_pure, make_constant};
use neuronc_interp::{run_function, RunOptions, Tensor};
use neuronc_ir::{
    Attr, DenseData, DenseElements, ElemType, Func, Module, NamedAttrs, OpId, OpKind, Span,
    ValueDef, ValueId,
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
    let results = rw.m.op(op).results.clone();
    let mut payloads = Vec::new();
    if let Some(bytes) = moved_elements(rw.m, op) {
        let ty = rw.m.value_type(results[0]);
        let tt = rw.m.types.tensor_of(ty)?;
        payloads.push((ty, dense_of(ty, tt.elem, tt.num_elements(), bytes)));
    } else {
        let outputs = evaluate(rw.m, op)?;
        if outputs.len() != results.len() {
            return None;
        }
        for (&r, t) in results.iter().zip(&outputs) {
            let ty = rw.m.value_type(r);
            let tt = rw.m.types.tensor_of(ty)?;
            if t.ty() != tt {
                return None;
            }
            payloads.push((ty, dense_of(ty, tt.elem, tt.num_elements(), t.to_bytes())));
        }
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

/// Element types whose bytes the interpreter reads and writes back unchanged (whole
/// little-endian words: no narrow integers or minifloats whose decoding normalizes bits).
fn plain_bytes(elem: ElemType) -> bool {
    matches!(
        elem,
        ElemType::Int(8 | 16 | 32 | 64)
            | ElemType::UInt(8 | 16 | 32 | 64)
            | ElemType::F32
            | ElemType::F64
    )
}

/// The result bytes of a `reshape` or `broadcast_in_dim` of a constant, moved directly:
/// each result element is a copy of one operand element, so these are the bytes the
/// interpreter would return, without decoding the operand into a tensor and encoding the
/// result back (most of the cost of folding them). `None` for other ops (and types) or
/// shapes that do not check out: those fold through [`evaluate`].
fn moved_elements(m: &Module, op: OpId) -> Option<Vec<u8>> {
    let o = m.op(op);
    if !matches!(o.kind, OpKind::Reshape | OpKind::BroadcastInDim)
        || o.operands.len() != 1
        || o.results.len() != 1
    {
        return None;
    }
    let input = constant_of(m, o.operands[0])?;
    let (src, dst) = (m.tensor_type(o.operands[0])?, m.tensor_type(o.results[0])?);
    let w = input.elem.byte_width();
    if !plain_bytes(input.elem) || src.elem != input.elem || dst.elem != input.elem {
        return None;
    }
    let n = usize::try_from(dst.num_elements()).ok()?;
    if o.kind == OpKind::Reshape {
        return (src.num_elements() == dst.num_elements() && input.len == src.num_elements())
            .then(|| input.to_bytes());
    }
    let dims = o.attrs.i64_array("broadcast_dimensions")?;
    if dims.len() != src.shape.len() || input.len != src.num_elements() {
        return None;
    }
    // Per result dim, the operand stride it advances by (0 where the operand is
    // broadcast along it).
    let mut stride = vec![0usize; dst.shape.len()];
    let mut step = 1usize;
    for (k, &d) in dims.iter().enumerate().rev() {
        let (extent, out) = (src.shape[k], *dst.shape.get(usize::try_from(d).ok()?)?);
        if extent != 1 && extent != out {
            return None;
        }
        if extent != 1 {
            stride[d as usize] = step;
        }
        step *= usize::try_from(extent).ok()?;
    }
    let bytes = input.to_bytes();
    let shape = &dst.shape;
    match w {
        1 => gather::<1>(&bytes, n, shape, &stride),
        2 => gather::<2>(&bytes, n, shape, &stride),
        4 => gather::<4>(&bytes, n, shape, &stride),
        8 => gather::<8>(&bytes, n, shape, &stride),
        _ => None,
    }
}

/// The `n` elements of `W` bytes of a tensor of shape `shape` whose element at each
/// index is element `Σ index[d] * stride[d]` of `bytes`, in row-major order.
fn gather<const W: usize>(
    bytes: &[u8],
    n: usize,
    shape: &[i64],
    stride: &[usize],
) -> Option<Vec<u8>> {
    let mut out: Vec<[u8; W]> = Vec::with_capacity(n);
    let mut index = vec![0i64; shape.len()];
    let mut at = 0usize;
    for _ in 0..n {
        out.push(bytes.get(at * W..(at + 1) * W)?.try_into().ok()?);
        // Odometer over the result index, innermost dim fastest.
        for d in (0..index.len()).rev() {
            index[d] += 1;
            at += stride[d];
            if index[d] < shape[d] {
                break;
            }
            at -= stride[d] * shape[d] as usize;
            index[d] = 0;
        }
    }
    Some(out.into_flattened())
}

/// Dense payload from element bytes: a splat when all elements are equal.
fn dense_of(
    ty: neuronc_ir::TypeId,
    elem: neuronc_ir::ElemType,
    len: u64,
    bytes: Vec<u8>,
) -> DenseElements {
    let w = elem.byte_width();
    // Both callers pass exactly `len` elements (the result type's count).
    let splat = len > 0 && w > 0 && all_elements_equal(&bytes, w, len);
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

#[cfg(test)]
mod tests {
    use super::{evaluate, moved_elements};
    use neuronc_ir::parse_module;

    /// The moved bytes of reshapes and broadcasts of constants are the interpreter's
    /// result bytes (the oracle), for splat and full payloads, broadcasts along new and
    /// unit dims, permuted dims, and each element width.
    #[test]
    fn moved_elements_are_the_interpreters_bytes() {
        let cases = [
            (
                "dense<[[1, -2, 3]]> : tensor<1x3xi64>",
                "tensor<1x3xi64>",
                "broadcast_in_dim",
                "dims = [0, 2]",
                "tensor<2x4x3xi64>",
            ),
            (
                "dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi32>",
                "tensor<3x2xi32>",
                "broadcast_in_dim",
                "dims = [2, 0]",
                "tensor<2x4x3xi32>",
            ),
            (
                "dense<[[1.5], [-2.25]]> : tensor<2x1xf32>",
                "tensor<2x1xf32>",
                "broadcast_in_dim",
                "dims = [1, 2]",
                "tensor<3x2x5xf32>",
            ),
            (
                "dense<7> : tensor<1x1xi16>",
                "tensor<1x1xi16>",
                "broadcast_in_dim",
                "dims = [0, 1]",
                "tensor<4x6xi16>",
            ),
            (
                "dense<[1, 2, 3, 4, 5, 6]> : tensor<6xui8>",
                "tensor<6xui8>",
                "broadcast_in_dim",
                "dims = [1]",
                "tensor<2x6xui8>",
            ),
            (
                "dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf64>",
                "tensor<2x3xf64>",
                "reshape",
                "",
                "tensor<3x2xf64>",
            ),
            (
                "dense<3> : tensor<2x3xi64>",
                "tensor<2x3xi64>",
                "reshape",
                "",
                "tensor<6xi64>",
            ),
        ];
        for (value, src, kind, dims, dst) in cases {
            let text = format!(
                "func.func @main() -> {dst} {{
                   %c = stablehlo.constant {value}
                   %r = stablehlo.{kind} %c{sep}{dims} : ({src}) -> {dst}
                   return %r : {dst}
                 }}",
                sep = if dims.is_empty() { "" } else { ", " },
            );
            let m = parse_module(&text).expect("parses");
            let op = m.region(m.funcs[0].body).ops[1];
            let oracle = evaluate(&m, op).expect("the interpreter runs it");
            let moved = moved_elements(&m, op).expect("a move");
            assert_eq!(moved, oracle[0].to_bytes(), "{kind} {value} -> {dst}");
        }
        // Booleans (whose decoding normalizes bytes) and other ops go through the
        // interpreter.
        let m = parse_module(
            "func.func @main() -> tensor<2x2xi1> {
               %c = stablehlo.constant dense<[true, false, true, true]> : tensor<4xi1>
               %r = stablehlo.reshape %c : (tensor<4xi1>) -> tensor<2x2xi1>
               %n = stablehlo.not %r : tensor<2x2xi1>
               return %n : tensor<2x2xi1>
             }",
        )
        .expect("parses");
        let ops = &m.region(m.funcs[0].body).ops;
        assert!(moved_elements(&m, ops[1]).is_none());
        assert!(moved_elements(&m, ops[2]).is_none());
    }
}
