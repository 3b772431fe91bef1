//! The `check` dialect of StableHLO's interpreter tests and its `custom_call` forms.
//!
//! Owns: `expect_eq` (exact; NaN equals NaN), `expect_almost_eq` (absolute tolerance,
//! default 1e-4 for the op and 1e-3 for the `custom_call` form, as in StableHLO's
//! `stablehlo-translate --interpret`; exact for integers), `expect_close` (distance in
//! units in the last place of the element type, within
//! `[min_ulp_difference, max_ulp_difference]`, default `[0, 3]`), their `_const`
//! variants, and `@check.eq` (returns `i1` all-equal).
//! Invariant: a failing check is `InterpError::CheckFailed` naming the check, the first
//! differing element's index and both values.

use crate::compare::unravel;
use crate::dispatch::Ctx;
use crate::error::InterpError;
use crate::eval::{Interp, Res, Val};
use crate::tensor::{Data, Tensor};
use half::{bf16, f16};
use neuronc_ir::{Attr, ElemType, OpKind};

/// How two tensors are compared.
#[derive(Clone, Copy, Debug)]
pub enum Mode {
    Exact,
    Almost(f64),
    Ulp { min: u64, max: u64 },
}

/// Position of a float in the total order of its type's bit patterns (for ULP distance).
fn ulp_index(elem: ElemType, x: f64) -> i64 {
    let (bits, sign_bit) = match elem {
        ElemType::F64 => (x.to_bits() as i64, 1i64 << 63),
        ElemType::F16 => (f16::from_f64(x).to_bits() as i64, 1 << 15),
        ElemType::BF16 => (bf16::from_f64(x).to_bits() as i64, 1 << 15),
        ElemType::F8(k) => (crate::floatfmt::encode(k, x) as i64, 1 << (k.bits() - 1)),
        _ => ((x as f32).to_bits() as i64, 1 << 31),
    };
    if elem == ElemType::F64 {
        let b = x.to_bits();
        return if b >> 63 == 1 {
            -((b & !(1u64 << 63)) as i64)
        } else {
            b as i64
        };
    }
    if bits & sign_bit != 0 {
        -(bits & !sign_bit)
    } else {
        bits
    }
}

fn elems(t: &Tensor) -> Vec<f64> {
    match t.data() {
        Data::C64(v) => v.iter().flat_map(|c| [c.re as f64, c.im as f64]).collect(),
        Data::C128(v) => v.iter().flat_map(|c| [c.re, c.im]).collect(),
        _ => t.to_f64_vec(),
    }
}

/// Index of the first element of `actual` that fails `mode` against `expected`.
pub fn first_failure(actual: &Tensor, expected: &Tensor, mode: Mode) -> Option<usize> {
    if actual.shape() != expected.shape() || actual.elem() != expected.elem() {
        return Some(0);
    }
    if let (Data::Int(a), Data::Int(e)) = (actual.data(), expected.data()) {
        return a.iter().zip(e).position(|(x, y)| x != y);
    }
    let elem = actual.elem().complex_part().unwrap_or(actual.elem());
    let per = if actual.elem().is_complex() { 2 } else { 1 };
    let (a, e) = (elems(actual), elems(expected));
    let bad = a.iter().zip(&e).position(|(&x, &y)| {
        if x.is_nan() || y.is_nan() {
            return !(x.is_nan() && y.is_nan());
        }
        match mode {
            Mode::Exact => x != y,
            Mode::Almost(tol) => !(x == y || (x - y).abs() <= tol),
            Mode::Ulp { min, max } => {
                // An infinity is "infinitely far" from anything but itself (CheckOps.cpp's
                // ULPDifference), not one ulp from the largest finite value.
                let d = if (x.is_infinite() || y.is_infinite()) && x != y {
                    u64::MAX
                } else {
                    ulp_index(elem, x).abs_diff(ulp_index(elem, y))
                };
                d < min || d > max
            }
        }
    });
    bad.map(|i| i / per)
}

fn fmt_elem(t: &Tensor, i: usize) -> String {
    match t.data() {
        Data::C64(v) => format!("{}", v[i]),
        Data::C128(v) => format!("{}", v[i]),
        Data::Int(v) if t.elem().is_unsigned() => format!("{}", v[i] as u64),
        Data::Int(v) => format!("{}", v[i]),
        _ => format!("{}", t.get_f64(i)),
    }
}

/// Runs one check; `Err(CheckFailed)` on failure.
pub fn run_check(
    name: &str,
    actual: &Tensor,
    expected: &Tensor,
    mode: Mode,
) -> Result<(), InterpError> {
    match first_failure(actual, expected, mode) {
        None => Ok(()),
        Some(i) => {
            let detail = if actual.shape() != expected.shape() || actual.elem() != expected.elem() {
                format!(
                    "type mismatch: got {} {:?}, expected {} {:?}",
                    actual.elem(),
                    actual.shape(),
                    expected.elem(),
                    expected.shape()
                )
            } else {
                format!(
                    "element {:?}: got {}, expected {}",
                    unravel(i, actual.shape()),
                    fmt_elem(actual, i),
                    fmt_elem(expected, i)
                )
            };
            Err(InterpError::CheckFailed {
                check: name.to_string(),
                detail,
            })
        }
    }
}

/// Default absolute tolerance of the `check.expect_almost_eq[_const]` ops.
const ALMOST_EQ_OP_TOLERANCE: f64 = 1e-4;
/// Tolerance of the `custom_call @check.expect_almost_eq` form (StableHLO's interpreter
/// fallback in `stablehlo-translate --interpret` uses 1e-3 for it, not the op's 1e-4).
const ALMOST_EQ_CUSTOM_CALL_TOLERANCE: f64 = 1e-3;

fn mode_of(cx: &Ctx<'_>, kind: &str, almost_default: f64) -> Mode {
    let a = cx.attrs();
    let float = |n: &str| match a.get(n) {
        Some(Attr::Float(f, _)) => Some(*f),
        Some(Attr::Int(i, _)) => Some(*i as f64),
        _ => None,
    };
    match kind {
        "almost" => Mode::Almost(float("tolerance").unwrap_or(almost_default)),
        "close" => Mode::Ulp {
            min: a.int("min_ulp_difference").unwrap_or(0) as u64,
            max: a.int("max_ulp_difference").unwrap_or(3) as u64,
        },
        _ => Mode::Exact,
    }
}

/// `check.*` ops.
pub(crate) fn exec(it: &mut Interp<'_>, cx: &Ctx<'_>) -> Res<Vec<Val>> {
    let actual = it.tensor(cx.op.operands[0])?.clone();
    let expected = match cx.op.kind {
        OpKind::CheckExpectEqConst | OpKind::CheckExpectAlmostEqConst => {
            match cx.attrs().get("value") {
                Some(Attr::Elements(d)) => cx.wrap(Tensor::from_dense(d, it.m))?,
                _ => return Err(cx.err("missing `value`")),
            }
        }
        _ => it
            .tensor(
                *cx.op
                    .operands
                    .get(1)
                    .ok_or_else(|| cx.err("missing operand"))?,
            )?
            .clone(),
    };
    let kind = match cx.op.kind {
        OpKind::CheckExpectAlmostEq | OpKind::CheckExpectAlmostEqConst => "almost",
        OpKind::CheckExpectClose => "close",
        _ => "eq",
    };
    let mode = mode_of(cx, kind, ALMOST_EQ_OP_TOLERANCE);
    run_check(cx.op.kind.name(), &actual, &expected, mode)?;
    Ok(Vec::new())
}

/// `custom_call @check.*` forms; `@check.eq` returns an `i1` instead of failing.
pub(crate) fn custom(it: &mut Interp<'_>, cx: &Ctx<'_>, target: &str) -> Res<Vec<Val>> {
    let t = |i: usize| -> Res<Tensor> {
        let v = *cx
            .op
            .operands
            .get(i)
            .ok_or_else(|| cx.err("missing operand"))?;
        Ok(it.tensor(v)?.clone())
    };
    let (a, e) = (t(0)?, t(1)?);
    let mode = match target {
        "check.expect_almost_eq" => mode_of(cx, "almost", ALMOST_EQ_CUSTOM_CALL_TOLERANCE),
        "check.expect_close" => mode_of(cx, "close", ALMOST_EQ_CUSTOM_CALL_TOLERANCE),
        _ => Mode::Exact,
    };
    if target == "check.eq" {
        let ok = first_failure(&a, &e, mode).is_none();
        let out: Vec<Val> = cx
            .op
            .results
            .iter()
            .map(|_| Val::T(Tensor::scalar(ElemType::I1, Data::Int(vec![ok as i64]))))
            .collect();
        if !ok {
            run_check(target, &a, &e, mode)?;
        }
        return Ok(out);
    }
    run_check(target, &a, &e, mode)?;
    Ok(cx.op.results.iter().map(|_| Val::Token).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ulp_distance() {
        let a = Tensor::from_f32(&[1], &[1.0]).unwrap();
        let b = Tensor::from_f32(&[1], &[f32::from_bits(1.0f32.to_bits() + 3)]).unwrap();
        let c = Tensor::from_f32(&[1], &[f32::from_bits(1.0f32.to_bits() + 4)]).unwrap();
        let m = Mode::Ulp { min: 0, max: 3 };
        assert!(first_failure(&b, &a, m).is_none());
        assert_eq!(first_failure(&c, &a, m), Some(0));
        // -0 and +0 are adjacent-equal (distance 0).
        let z = Tensor::from_f32(&[1], &[0.0]).unwrap();
        let nz = Tensor::from_f32(&[1], &[-0.0]).unwrap();
        assert!(first_failure(&z, &nz, m).is_none());
        // +inf is not "one ulp" from the largest finite f32.
        let inf = Tensor::from_f32(&[1], &[f32::INFINITY]).unwrap();
        let max = Tensor::from_f32(&[1], &[f32::MAX]).unwrap();
        assert_eq!(first_failure(&inf, &max, m), Some(0));
        assert!(first_failure(&inf, &inf, m).is_none());
    }

    #[test]
    fn failure_names_check_and_index() {
        let a = Tensor::from_i64(ElemType::Int(32), &[2], &[1, 2]).unwrap();
        let b = Tensor::from_i64(ElemType::Int(32), &[2], &[1, 3]).unwrap();
        let e = run_check("check.expect_eq", &a, &b, Mode::Exact).unwrap_err();
        assert_eq!(
            e.to_string(),
            "check.expect_eq failed: element [1]: got 2, expected 3"
        );
    }
}
