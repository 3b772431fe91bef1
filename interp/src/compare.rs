//! Tolerance comparison of tensors for tests and fixture checks.
//!
//! Owns: [`compare`] and [`Mismatch`]. Semantics are numpy's `allclose` with NaNs equal:
//! element `a` (actual) matches `e` (expected) when both are NaN, both are the same
//! infinity, or `|a - e| <= atol + rtol * |e|`; integers and booleans compare exactly
//! when both tolerances are zero. Complex values compare both parts.

use crate::tensor::{Data, Tensor};

/// The first element that differs, plus summary statistics.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{count} element(s) differ (max abs err {max_abs_err:e}); first at {index:?}: expected {expected}, got {actual}")]
pub struct Mismatch {
    /// Multi-index of the first differing element (empty for a shape/type mismatch).
    pub index: Vec<i64>,
    pub expected: String,
    pub actual: String,
    pub count: usize,
    pub max_abs_err: f64,
}

/// Pairs of (real-valued) element views of two tensors.
fn parts(t: &Tensor) -> Vec<f64> {
    match t.data() {
        Data::C64(v) => v.iter().flat_map(|c| [c.re as f64, c.im as f64]).collect(),
        Data::C128(v) => v.iter().flat_map(|c| [c.re, c.im]).collect(),
        _ => t.to_f64_vec(),
    }
}

fn close(a: f64, e: f64, rtol: f64, atol: f64) -> bool {
    if a.is_nan() || e.is_nan() {
        return a.is_nan() && e.is_nan();
    }
    if a.is_infinite() || e.is_infinite() {
        return a == e;
    }
    (a - e).abs() <= atol + rtol * e.abs()
}

/// Multi-index of linear element `i` of `shape`.
pub fn unravel(mut i: usize, shape: &[i64]) -> Vec<i64> {
    let mut idx = vec![0i64; shape.len()];
    for d in (0..shape.len()).rev() {
        let n = shape[d].max(1) as usize;
        idx[d] = (i % n) as i64;
        i /= n;
    }
    idx
}

/// Compares `actual` to `expected` within `rtol`/`atol`.
pub fn compare(expected: &Tensor, actual: &Tensor, rtol: f64, atol: f64) -> Result<(), Mismatch> {
    if expected.ty() != actual.ty() {
        return Err(Mismatch {
            index: Vec::new(),
            expected: format!("{} {:?}", expected.elem(), expected.shape()),
            actual: format!("{} {:?}", actual.elem(), actual.shape()),
            count: 1,
            max_abs_err: f64::INFINITY,
        });
    }
    let exact_ints = matches!(expected.data(), Data::Int(_));
    let per = if expected.elem().is_complex() { 2 } else { 1 };
    let (e, a) = (parts(expected), parts(actual));
    let mut first = None;
    let mut count = 0;
    let mut max_abs: f64 = 0.0;
    for (i, (&x, &y)) in e.iter().zip(&a).enumerate() {
        let ok = if exact_ints {
            expected.get_i64(i) == actual.get_i64(i)
        } else {
            close(y, x, rtol, atol)
        };
        if x.is_finite() && y.is_finite() {
            max_abs = max_abs.max((x - y).abs());
        }
        if !ok {
            count += 1;
            first.get_or_insert(i);
        }
    }
    match first {
        None => Ok(()),
        Some(i) => Err(Mismatch {
            index: unravel(i / per, expected.shape()),
            expected: format!("{}", e[i]),
            actual: format!("{}", a[i]),
            count,
            max_abs_err: max_abs,
        }),
    }
}

/// Largest `|expected|` over finite elements (for `atol = k * max|ref|` tolerances).
/// Tolerances widened for results narrower than f32: XLA:CPU keeps bf16/f16 chains in
/// f32 inside fusions, so results may differ by a few units in the last place of the
/// narrow type. Returns `(rtol, atol_factor)` raised to at least 4 ulp(1) and 1 ulp(1)
/// (the caller scales `atol_factor` by max|ref|).
pub fn narrow_tolerance(e: neuronc_ir::ElemType, rtol: f64, atol_factor: f64) -> (f64, f64) {
    use neuronc_ir::ElemType;
    let ulp = match e {
        ElemType::BF16 => 2f64.powi(-7),
        ElemType::F16 => 2f64.powi(-10),
        ElemType::F8(_) => 2f64.powi(-2),
        _ => return (rtol, atol_factor),
    };
    (rtol.max(4.0 * ulp), atol_factor.max(ulp))
}

pub fn max_abs(t: &Tensor) -> f64 {
    parts(t)
        .iter()
        .filter(|x| x.is_finite())
        .fold(0.0, |m, x| m.max(x.abs()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nans_equal_and_tolerance_applies() {
        let e = Tensor::from_f32(&[3], &[1.0, f32::NAN, 100.0]).unwrap();
        let a = Tensor::from_f32(&[3], &[1.00001, f32::NAN, 100.0]).unwrap();
        assert!(compare(&e, &a, 1e-4, 0.0).is_ok());
        let b = Tensor::from_f32(&[3], &[1.0, 0.0, 100.0]).unwrap();
        let m = compare(&e, &b, 1e-4, 0.0).unwrap_err();
        assert_eq!(m.index, vec![1]);
    }
}
