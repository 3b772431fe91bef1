//! Rules of the elementwise ops: StableHLO unary/binary/ternary arithmetic, `compare`,
//! `select`, `clamp`, conversions, and the CHLO elementwise and broadcasting ops.
//!
//! Invariants: operand element types are checked against the classes the spec allows for
//! each op; "same type" rules report the first mismatching operand only; CHLO broadcasting
//! follows numpy rules (trailing alignment, size-1 stretching) unless an explicit
//! `broadcast_dimensions` attribute maps the lower-rank operand.

use super::cx::{shape_str, tensor_str, Classes, OpV};
use crate::ops::OpKind;
use crate::types::{ElemType, TensorType};

/// Number of operands of the elementwise kinds this family handles.
pub(super) fn num_operands(k: OpKind) -> Option<usize> {
    use OpKind::*;
    if unary_class(k).is_some() || chlo_unary(k) {
        return Some(1);
    }
    if binary_class(k).is_some() || chlo_binary(k) {
        return Some(2);
    }
    Some(match k {
        Real | Imag | IsFinite | Convert | BitcastConvert => 1,
        Compare | Complex => 2,
        Select | Clamp | ChloBroadcastSelect => 3,
        _ => return None,
    })
}

pub(super) fn handles(k: OpKind) -> bool {
    num_operands(k).is_some()
}

fn unary_class(k: OpKind) -> Option<Classes> {
    use OpKind::*;
    Some(match k {
        Abs | Negate | Sign => Classes::NUM,
        Cbrt | Cosine | Exponential | ExponentialMinusOne | Log | LogPlusOne | Logistic | Rsqrt
        | Sine | Sqrt | Tan | Tanh => Classes::FC,
        Ceil | Floor | RoundNearestAfz | RoundNearestEven | ReducePrecision => Classes::F,
        CountLeadingZeros | Popcnt => Classes::I,
        Not => Classes::BI,
        _ => return None,
    })
}

fn binary_class(k: OpKind) -> Option<Classes> {
    use OpKind::*;
    Some(match k {
        Add | Maximum | Minimum | Multiply => Classes::ANY,
        And | Or | Xor => Classes::BI,
        Atan2 => Classes::FC,
        Divide | Subtract | Power | Remainder => Classes::NUM,
        ShiftLeft | ShiftRightArithmetic | ShiftRightLogical => Classes::I,
        _ => return None,
    })
}

fn chlo_unary(k: OpKind) -> bool {
    use OpKind::*;
    matches!(
        k,
        ChloErf
            | ChloErfc
            | ChloErfInv
            | ChloSquare
            | ChloTan
            | ChloLgamma
            | ChloDigamma
            | ChloAcos
            | ChloAcosh
            | ChloAsin
            | ChloAsinh
            | ChloAtan
            | ChloAtanh
            | ChloCosh
            | ChloSinh
            | ChloBesselI1e
            | ChloIsInf
            | ChloIsNegInf
            | ChloIsPosInf
            | ChloConj
    )
}

fn chlo_binary(k: OpKind) -> bool {
    use OpKind::*;
    matches!(k, ChloPolygamma | ChloZeta | ChloNextAfter)
        || (k.is_chlo_broadcast() && k != ChloBroadcastSelect)
}

pub(super) fn check(v: &mut OpV) {
    let _ = check_inner(v);
}

fn check_inner(v: &mut OpV) -> Option<()> {
    use OpKind::*;
    let k = v.op.kind;
    if let Some(c) = unary_class(k).or(binary_class(k)) {
        result_accuracy(v);
        return same_type(v, c);
    }
    match k {
        Real | Imag => real_imag(v),
        IsFinite | ChloIsInf | ChloIsNegInf | ChloIsPosInf => to_bool(v),
        Convert => convert(v),
        BitcastConvert => bitcast_convert(v),
        Compare => compare(v),
        Complex => complex(v),
        Select => select(v),
        Clamp => clamp(v),
        ChloPolygamma | ChloZeta | ChloNextAfter => same_type(v, Classes::FC),
        ChloBroadcastSelect => chlo_select(v),
        _ if chlo_unary(k) => same_type(v, Classes::ANY),
        _ => chlo_broadcast(v),
    }
}

/// `result_accuracy` in mode HIGHEST or DEFAULT must have zero tolerances.
fn result_accuracy(v: &mut OpV) {
    let Some(crate::Attr::ResultAccuracy {
        atol,
        rtol,
        ulps,
        mode,
    }) = v.attr("result_accuracy")
    else {
        return;
    };
    if (mode == "HIGHEST" || mode == "DEFAULT") && (*atol != 0.0 || *rtol != 0.0 || *ulps != 0) {
        v.err("", format!("has invalid tolerances for result_accuracy with mode {mode}: they must all be zero"));
    }
    if *atol < 0.0 || *rtol < 0.0 || *ulps < 0 {
        v.err("", "has negative tolerances in result_accuracy");
    }
}

/// Element type class of operand #0 and "all operands and the result share one type" (C1).
fn same_type(v: &mut OpV, c: Classes) -> Option<()> {
    let t0 = v.operand(0)?;
    if !c.accepts(t0.elem) {
        let d = c.describe();
        v.err(
            "",
            format!(
                "expects operands of {d} element type, but got {}",
                tensor_str(t0)
            ),
        );
        return None;
    }
    if matches!(v.op.kind, OpKind::Abs | OpKind::Sign) && t0.elem.is_unsigned() {
        v.err(
            "",
            format!(
                "expects operands of signed integer or floating-point or complex element type, but got {}",
                tensor_str(t0)
            ),
        );
        return None;
    }
    if v.op.kind == OpKind::Abs && t0.elem.is_complex() {
        let r = v.result(0)?;
        if r.shape != t0.shape || Some(r.elem) != t0.elem.complex_part() {
            v.err(
                "C2",
                format!(
                    "expects result type {} for a complex operand, but got {}",
                    tensor_str(&TensorType::new(t0.elem.complex_part()?, &t0.shape)),
                    tensor_str(r)
                ),
            );
        }
        return Some(());
    }
    let rt = v.result_ty(0)?;
    for i in 0..v.op.operands.len() {
        let ot = v.operand_ty(i)?;
        if ot != rt {
            let (os, rs) = (v.ts(ot), v.ts(rt));
            v.err("C1", format!("requires operands and result to have the same type, but operand #{i} has type {os} and the result has type {rs}"));
            return None;
        }
    }
    if v.op.kind == OpKind::ReducePrecision {
        let e = v.req_int("exponent_bits")?;
        let m = v.req_int("mantissa_bits")?;
        if e < 1 {
            v.err("C2", format!("expects exponent_bits >= 1, but got {e}"));
        }
        if m < 0 {
            v.err("C3", format!("expects mantissa_bits >= 0, but got {m}"));
        }
    }
    Some(())
}

fn same_shape(v: &mut OpV, a: &TensorType, b: &TensorType, c: &str, what: &str) -> bool {
    if a.shape != b.shape {
        v.err(
            c,
            format!(
                "requires {what} to have the same shape, but got {} and {}",
                tensor_str(a),
                tensor_str(b)
            ),
        );
        return false;
    }
    true
}

fn real_imag(v: &mut OpV) -> Option<()> {
    let (a, r) = (v.operand(0)?, v.result(0)?);
    if !Classes::FC.accepts(a.elem) {
        v.err(
            "",
            format!(
                "expects a floating-point or complex operand, but got {}",
                tensor_str(a)
            ),
        );
        return None;
    }
    same_shape(v, a, r, "C1", "operand and result");
    let want = a.elem.complex_part().unwrap_or(a.elem);
    if r.elem != want {
        v.err(
            "C2",
            format!("expects result element type {want}, but got {}", r.elem),
        );
    }
    Some(())
}

fn to_bool(v: &mut OpV) -> Option<()> {
    let (a, r) = (v.operand(0)?, v.result(0)?);
    if !a.elem.is_float() {
        v.err(
            "",
            format!(
                "expects a floating-point operand, but got {}",
                tensor_str(a)
            ),
        );
    }
    same_shape(v, a, r, "C1", "operand and result");
    if r.elem != ElemType::I1 {
        v.err(
            "",
            format!("expects an i1 result, but got {}", tensor_str(r)),
        );
    }
    Some(())
}

fn convert(v: &mut OpV) -> Option<()> {
    let (a, r) = (v.operand(0)?, v.result(0)?);
    same_shape(v, a, r, "C1", "operand and result");
    Some(())
}

fn bitcast_convert(v: &mut OpV) -> Option<()> {
    let (a, r) = (v.operand(0)?, v.result(0)?);
    if a.elem.is_complex() != r.elem.is_complex() {
        v.err(
            "C2",
            format!(
                "cannot bitcast between complex and non-complex types ({} and {})",
                a.elem, r.elem
            ),
        );
        return None;
    }
    let (eb, rb) = (a.elem.bits() as i64, r.elem.bits() as i64);
    let ok = match eb.cmp(&rb) {
        std::cmp::Ordering::Equal => a.shape == r.shape,
        std::cmp::Ordering::Greater => {
            r.rank() == a.rank() + 1
                && r.shape[..a.rank()] == a.shape[..]
                && r.shape[a.rank()].checked_mul(rb) == Some(eb)
        }
        std::cmp::Ordering::Less => {
            a.rank() == r.rank() + 1
                && a.shape[..r.rank()] == r.shape[..]
                && a.shape[r.rank()].checked_mul(eb) == Some(rb)
        }
    };
    if !ok {
        v.err(
            "C1",
            format!(
                "cannot bitcast {} to {}: the shapes do not match the element bit widths",
                tensor_str(a),
                tensor_str(r)
            ),
        );
    }
    Some(())
}

fn compare(v: &mut OpV) -> Option<()> {
    let (a, b, r) = (v.operand(0)?, v.operand(1)?, v.result(0)?);
    if a.elem != b.elem {
        v.err(
            "C1",
            format!(
                "requires lhs and rhs to have the same element type, but got {} and {}",
                a.elem, b.elem
            ),
        );
    }
    if a.shape != b.shape || a.shape != r.shape {
        v.err(
            "C2",
            format!(
                "requires lhs, rhs and result to have the same shape, but got {}, {} and {}",
                tensor_str(a),
                tensor_str(b),
                tensor_str(r)
            ),
        );
    }
    if r.elem != ElemType::I1 {
        v.err(
            "",
            format!("expects an i1 result, but got {}", tensor_str(r)),
        );
    }
    let dir = match v.attr("comparison_direction") {
        Some(crate::Attr::Enum(e)) if e.kind == crate::EnumKind::ComparisonDirection => {
            e.value.clone()
        }
        _ => {
            v.err(
                "",
                "requires attribute 'comparison_direction' (#stablehlo<comparison_direction ...>)",
            );
            return None;
        }
    };
    if a.elem.is_complex() && dir != "EQ" && dir != "NE" {
        v.err(
            "",
            format!("complex operands only support EQ and NE, but got {dir}"),
        );
    }
    if let Some(ct) = v.op.attrs.enum_value("compare_type") {
        let ok = match ct {
            "NOTYPE" => true,
            "SIGNED" => a.elem.is_signed_int(),
            "UNSIGNED" => a.elem.is_unsigned() || a.elem.is_bool(),
            "FLOAT" => a.elem.is_float() || a.elem.is_complex(),
            "TOTALORDER" => a.elem.is_float(),
            _ => false,
        };
        if !ok {
            v.err(
                "C3",
                format!("compare_type {ct} does not match element type {}", a.elem),
            );
        }
    }
    Some(())
}

fn complex(v: &mut OpV) -> Option<()> {
    let (a, b, r) = (v.operand(0)?, v.operand(1)?, v.result(0)?);
    if a != b {
        v.err(
            "C1",
            format!(
                "requires lhs and rhs to have the same type, but got {} and {}",
                tensor_str(a),
                tensor_str(b)
            ),
        );
        return None;
    }
    if !matches!(a.elem, ElemType::F32 | ElemType::F64) {
        v.err(
            "",
            format!("expects f32 or f64 operands, but got {}", tensor_str(a)),
        );
        return None;
    }
    same_shape(v, a, r, "C2", "operands and result");
    if r.elem.complex_part() != Some(a.elem) {
        v.err(
            "C3",
            format!(
                "expects result element type complex<{}>, but got {}",
                a.elem, r.elem
            ),
        );
    }
    Some(())
}

fn select(v: &mut OpV) -> Option<()> {
    let (p, t, f, r) = (v.operand(0)?, v.operand(1)?, v.operand(2)?, v.result(0)?);
    if p.elem != ElemType::I1 {
        v.err(
            "",
            format!(
                "expects pred to have element type i1, but got {}",
                tensor_str(p)
            ),
        );
    }
    if p.rank() != 0 && p.shape != t.shape {
        v.err(
            "C1",
            format!(
                "requires pred to be a scalar or have the shape of on_true, but got {} and {}",
                tensor_str(p),
                tensor_str(t)
            ),
        );
    }
    if t != f || t != r {
        v.err("C2", format!("requires on_true, on_false and result to have the same type, but got {}, {} and {}", tensor_str(t), tensor_str(f), tensor_str(r)));
    }
    Some(())
}

fn clamp(v: &mut OpV) -> Option<()> {
    let (lo, x, hi, r) = (v.operand(0)?, v.operand(1)?, v.operand(2)?, v.result(0)?);
    if lo.rank() != 0 && lo.shape != x.shape {
        v.err(
            "C1",
            format!(
                "requires min to be a scalar or have the shape of operand, but got {} and {}",
                tensor_str(lo),
                tensor_str(x)
            ),
        );
    }
    if hi.rank() != 0 && hi.shape != x.shape {
        v.err(
            "C2",
            format!(
                "requires max to be a scalar or have the shape of operand, but got {} and {}",
                tensor_str(hi),
                tensor_str(x)
            ),
        );
    }
    if lo.elem != x.elem || hi.elem != x.elem {
        v.err("C3", format!("requires min, operand and max to have the same element type, but got {}, {} and {}", lo.elem, x.elem, hi.elem));
    }
    if x != r {
        v.err(
            "C4",
            format!(
                "requires operand and result to have the same type, but got {} and {}",
                tensor_str(x),
                tensor_str(r)
            ),
        );
    }
    Some(())
}

/// numpy-style broadcast of two shapes, optionally through `broadcast_dimensions`.
pub(super) fn broadcast_shapes(a: &[i64], b: &[i64], dims: Option<&[i64]>) -> Option<Vec<i64>> {
    let (hi, lo) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let map: Vec<usize> = match dims {
        Some(d) if a.len() != b.len() => {
            if d.len() != lo.len() {
                return None;
            }
            d.iter()
                .map(|&x| usize::try_from(x).ok().filter(|&x| x < hi.len()))
                .collect::<Option<_>>()?
        }
        _ => (hi.len() - lo.len()..hi.len()).collect(),
    };
    let mut out = hi.to_vec();
    for (i, &d) in map.iter().enumerate() {
        let (x, y) = (out[d], lo[i]);
        out[d] = match (x, y) {
            _ if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return None,
        };
    }
    Some(out)
}

fn chlo_broadcast(v: &mut OpV) -> Option<()> {
    use OpKind::*;
    let (a, b, r) = (v.operand(0)?, v.operand(1)?, v.result(0)?);
    if a.elem != b.elem {
        v.err(
            "",
            format!(
                "requires lhs and rhs to have the same element type, but got {} and {}",
                a.elem, b.elem
            ),
        );
        return None;
    }
    let want_elem = match v.op.kind {
        ChloBroadcastCompare => ElemType::I1,
        ChloBroadcastComplex => match a.elem {
            ElemType::F32 => ElemType::Complex64,
            ElemType::F64 => ElemType::Complex128,
            e => e,
        },
        _ => a.elem,
    };
    check_broadcast_result(v, &[a, b], want_elem, r)
}

fn chlo_select(v: &mut OpV) -> Option<()> {
    let (p, t, f, r) = (v.operand(0)?, v.operand(1)?, v.operand(2)?, v.result(0)?);
    if p.elem != ElemType::I1 || t.elem != f.elem {
        v.err(
            "",
            format!(
                "expects an i1 pred and equal branch element types, but got {}, {} and {}",
                p.elem, t.elem, f.elem
            ),
        );
        return None;
    }
    check_broadcast_result(v, &[p, t, f], t.elem, r)
}

fn check_broadcast_result(
    v: &mut OpV,
    ins: &[&TensorType],
    elem: ElemType,
    r: &TensorType,
) -> Option<()> {
    let dims = v.op.attrs.i64_array("broadcast_dimensions");
    let mut shape = ins[0].shape.to_vec();
    for t in &ins[1..] {
        match broadcast_shapes(&shape, &t.shape, dims.as_deref()) {
            Some(s) => shape = s,
            None => {
                v.err(
                    "",
                    format!(
                        "operand shapes {} and {} are not broadcast-compatible",
                        shape_str(&shape),
                        shape_str(&t.shape)
                    ),
                );
                return None;
            }
        }
    }
    if r.shape[..] != shape[..] || r.elem != elem {
        let want = tensor_str(&TensorType::new(elem, &shape));
        v.err(
            "",
            format!(
                "expects result type {want} (the broadcast of the operands), but got {}",
                tensor_str(r)
            ),
        );
    }
    Some(())
}
