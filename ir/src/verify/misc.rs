//! Rules of the remaining ops: tuples and tokens, `rng`, `rng_bit_generator`,
//! `composite`, CHLO `top_k` / `constant_like` / `constant`, and the `check` dialect.
//!
//! Invariants: ops whose semantics are opaque to StableHLO (`custom_call`, the einsum and
//! dynamic-shape ops, quantization ops) are only structurally checked (counts, SSA,
//! regions) by the caller; everything here is a pure type rule.

use super::cx::{tensor_str, OpV};
use crate::attr::Attr;
use crate::ops::OpKind;
use crate::types::{ElemType, Type};

pub(super) fn check(v: &mut OpV) {
    use OpKind::*;
    let _ = match v.op.kind {
        Tuple => tuple(v),
        GetTupleElement => get_tuple_element(v),
        AfterAll | CreateToken => tokens(v),
        Rng => rng(v),
        RngBitGenerator => rng_bit_generator(v),
        Composite => composite(v),
        CustomCall => {
            super::custom_call::check(v);
            None
        }
        SetDimensionSize => {
            v.err(
                "",
                "bounded dynamism is lowered by the parser; a module cannot hold this op",
            );
            None
        }
        ChloTopK => top_k(v),
        ChloConstantLike => constant_like(v),
        ChloConstant => chlo_constant(v),
        CheckExpectEq | CheckExpectAlmostEq | CheckExpectClose => check_pair(v),
        CheckExpectEqConst | CheckExpectAlmostEqConst => check_const(v),
        _ => None,
    };
}

fn tuple(v: &mut OpV) -> Option<()> {
    let r = v.result_ty(0)?;
    let elems: Vec<_> = v.op.operands.iter().map(|&x| v.m.value_type(x)).collect();
    let ok = matches!(v.m.ty(r), Type::Tuple(t) if t[..] == elems[..]);
    if !ok {
        let (w, g) = (v.tys(&elems), v.ts(r));
        v.err(
            "C1",
            format!(
                "expects result type tuple<{}>, but got {g}",
                w.trim_matches(|c| c == '(' || c == ')')
            ),
        );
    }
    Some(())
}

fn get_tuple_element(v: &mut OpV) -> Option<()> {
    let t = v.operand_ty(0)?;
    let r = v.result_ty(0)?;
    let Type::Tuple(elems) = v.m.ty(t) else {
        let s = v.ts(t);
        v.err("", format!("expects a tuple operand, but got {s}"));
        return None;
    };
    let i = v.req_int("index")?;
    let Some(&e) = usize::try_from(i).ok().and_then(|i| elems.get(i)) else {
        v.err(
            "C1",
            format!("expects index in [0, {}), but got {i}", elems.len()),
        );
        return None;
    };
    if e != r {
        let (a, b) = (v.ts(e), v.ts(r));
        v.err(
            "C2",
            format!("expects result type {a} (element {i} of the tuple), but got {b}"),
        );
    }
    Some(())
}

fn tokens(v: &mut OpV) -> Option<()> {
    let all_tokens =
        v.op.operands
            .iter()
            .chain(&v.op.results)
            .all(|&x| matches!(v.m.ty(v.m.value_type(x)), Type::Token));
    if !all_tokens {
        v.err("", "expects only !stablehlo.token operands and result");
    }
    Some(())
}

fn rng(v: &mut OpV) -> Option<()> {
    let (a, b, s, r) = (v.operand(0)?, v.operand(1)?, v.operand(2)?, v.result(0)?);
    if a.rank() != 0 || b.rank() != 0 || a.elem != b.elem || a.elem != r.elem {
        v.err(
            "C1",
            format!(
                "expects a and b to be scalars of the result element type {}, but got {} and {}",
                r.elem,
                tensor_str(a),
                tensor_str(b)
            ),
        );
    }
    if s.rank() != 1 || !s.elem.is_integer() {
        v.err(
            "",
            format!(
                "expects shape to be a 1-D integer tensor, but got {}",
                tensor_str(s)
            ),
        );
    }
    if let Some(shape) = super::dynamic_const(v, 2) {
        if shape[..] != r.shape[..] {
            v.err(
                "C3",
                format!(
                    "expects a result of shape {} (the shape operand), but got {}",
                    super::cx::shape_str(&shape),
                    tensor_str(r)
                ),
            );
        }
    }
    match v.op.attrs.enum_value("rng_distribution") {
        Some("NORMAL") if !r.elem.is_float() => {
            v.err(
                "",
                format!(
                    "NORMAL distribution requires a floating-point result, but got {}",
                    tensor_str(r)
                ),
            );
        }
        Some(_) => {}
        None => v.err("", "requires attribute 'rng_distribution'"),
    }
    Some(())
}

fn rng_bit_generator(v: &mut OpV) -> Option<()> {
    let (s, os, out) = (v.operand(0)?, v.result(0)?, v.result(1)?);
    if s != os {
        v.err(
            "C1",
            format!(
                "requires initial_state and output_state to have the same type, but got {} and {}",
                tensor_str(s),
                tensor_str(os)
            ),
        );
    }
    if s.rank() != 1 || !s.elem.is_integer() {
        v.err(
            "",
            format!(
                "expects a 1-D integer initial_state, but got {}",
                tensor_str(s)
            ),
        );
    }
    let ok = match v.op.attrs.enum_value("rng_algorithm") {
        Some("THREE_FRY") => s.shape[..] == [2],
        Some("PHILOX") => s.shape[..] == [2] || s.shape[..] == [3],
        _ => true,
    };
    if !ok {
        v.err(
            "C2",
            format!(
                "initial_state {} does not fit the rng_algorithm",
                tensor_str(s)
            ),
        );
    }
    if !(out.elem.is_integer() || out.elem.is_float()) {
        v.err(
            "",
            format!(
                "expects an integer or floating-point output, but got {}",
                tensor_str(out)
            ),
        );
    }
    Some(())
}

fn composite(v: &mut OpV) -> Option<()> {
    let name = match v.attr("decomposition") {
        Some(Attr::Symbol(s)) => s.clone(),
        _ => {
            v.err("", "requires a symbol attribute 'decomposition'");
            return None;
        }
    };
    let op_name = v.op.attrs.str("name").unwrap_or("");
    if !is_namespaced(op_name) {
        v.err(
            "C1",
            format!("expects name to be a valid namespaced op name, but got \"{op_name}\""),
        );
    }
    let Some(&f) = v.g.funcs.get(name.as_str()) else {
        v.err(
            "C2",
            format!("'@{name}' does not reference a valid function"),
        );
        return None;
    };
    let func = &v.m.funcs[f.index()];
    let params = v.region_arg_types(func.body);
    let args: Vec<_> = v.op.operands.iter().map(|&x| v.m.value_type(x)).collect();
    let res: Vec<_> = v.op.results.iter().map(|&x| v.m.value_type(x)).collect();
    if args != params || res != func.result_types {
        let (pa, pr, ga, gr) = (
            v.tys(&params),
            v.tys(&func.result_types),
            v.tys(&args),
            v.tys(&res),
        );
        v.err("", format!("expects the decomposition '@{name}' type {pa} -> {pr}, but the op has type {ga} -> {gr}"));
    }
    Some(())
}

/// `dialect.op` names: an identifier, a dot, then a non-empty run of identifier
/// characters (letters, digits, `_`, `$`, `.`).
fn is_namespaced(name: &str) -> bool {
    let Some((dialect, op)) = name.split_once('.') else {
        return false;
    };
    dialect
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && dialect
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !op.is_empty()
        && op
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.'))
}

fn top_k(v: &mut OpV) -> Option<()> {
    let a = v.operand(0)?;
    let k = v.req_int("k")?;
    let Some(&last) = a.shape.last() else {
        v.err("", "expects an operand of rank at least 1");
        return None;
    };
    if k < 0 || k > last {
        v.err(
            "",
            format!("expects 0 <= k <= {last} (the last dimension), but got {k}"),
        );
        return None;
    }
    let mut s = a.shape.to_vec();
    if let Some(l) = s.last_mut() {
        *l = k;
    }
    v.expect_result(
        0,
        a.elem,
        &s,
        "",
        "the operand with its last dimension set to k",
    )?;
    v.expect_result(1, ElemType::Int(32), &s, "", "i32 indices")
}

fn constant_like(v: &mut OpV) -> Option<()> {
    let (a, r) = (v.operand(0)?, v.result(0)?);
    if a.shape != r.shape {
        v.err(
            "",
            format!(
                "requires operand and result to have the same shape, but got {} and {}",
                tensor_str(a),
                tensor_str(r)
            ),
        );
    }
    let value_elem = match v.attr("value") {
        Some(Attr::Int(_, e) | Attr::Float(_, e)) => Some(*e),
        Some(Attr::Bool(_)) => Some(crate::types::ElemType::I1),
        _ => None,
    };
    if value_elem.is_some_and(|e| e != r.elem) {
        v.err(
            "",
            format!("value's type doesn't match element return type {}", r.elem),
        );
    }
    Some(())
}

fn chlo_constant(v: &mut OpV) -> Option<()> {
    let r = v.result_ty(0)?;
    if !matches!(v.attr("value"), Some(Attr::Elements(e)) if e.ty == r) {
        let s = v.ts(r);
        v.err(
            "",
            format!("requires a 'value' elements attribute of type {s}"),
        );
    }
    Some(())
}

fn check_pair(v: &mut OpV) -> Option<()> {
    let (a, b) = (v.operand_ty(0)?, v.operand_ty(1)?);
    if a != b {
        let (x, y) = (v.ts(a), v.ts(b));
        v.err(
            "",
            format!("requires both operands to have the same type, but got {x} and {y}"),
        );
    }
    Some(())
}

fn check_const(v: &mut OpV) -> Option<()> {
    let a = v.operand_ty(0)?;
    match v.attr("value") {
        Some(Attr::Elements(e)) if e.ty != a => {
            let (x, y) = (v.ts(e.ty), v.ts(a));
            v.err(
                "",
                format!("requires the expected value type {x} to match the operand type {y}"),
            );
        }
        Some(Attr::Elements(_)) => {}
        _ => v.err("", "requires a 'value' elements attribute"),
    }
    Some(())
}
