//! Complex `divide`, `sqrt`, `tanh` and `abs` with the special-value behaviour XLA:CPU
//! gives them (the reference the interpreter is checked against).
//!
//! Owns: [`div`], [`sqrt`], [`tanh`], [`abs`] on `Complex<f64>`; complex64 callers widen,
//! call these and round once. The plain textbook formulas (as `num_complex` implements
//! them) overflow or underflow where XLA does not: `|b|²` underflows for a divisor of
//! magnitude 1e-30 in f32, `sqrt`/`tanh` turn an infinite real part into NaN.
//! Semantics (checked against XLA:CPU through jaxlib, `fixtures/jax/complex_special`):
//! * `div`: Smith's range reduction; when that gives NaN in both parts, a zero divisor
//!   gives `copysign(inf, c) * (a_r, a_i)`, an infinite numerator over a finite divisor an
//!   infinite result, a finite numerator over an infinite divisor zero (C99 Annex G).
//! * `sqrt`: accurate for tiny real parts (`(|x| + |z|)/2` form); `sqrt(±0 ± 0i) = 0`,
//!   an infinite imaginary part gives `inf + i·im`, `+inf + iy -> inf + 0i·sign(y)`,
//!   `-inf + iy -> 0 + inf i·sign(y)`.
//! * `tanh(±inf + iy) = ±1 + 0i·sign(sin 2y)`.
//! * `abs` is NaN when either part is NaN (XLA does not return `inf` for `inf + NaN i`).
//!
//! Invariant: pure functions, no panics.

use num_complex::Complex64 as C;

/// `a / b` (see the module doc for the special values).
pub fn div(a: C, b: C) -> C {
    let (ar, ai, br, bi) = (a.re, a.im, b.re, b.im);
    let q = if br.abs() < bi.abs() {
        let ratio = br / bi;
        let denom = bi + br * ratio;
        C::new((ratio * ar + ai) / denom, (ratio * ai - ar) / denom)
    } else {
        let ratio = bi / br;
        let denom = br + bi * ratio;
        C::new((ar + ratio * ai) / denom, (ai - ratio * ar) / denom)
    };
    if !(q.re.is_nan() && q.im.is_nan()) {
        return q;
    }
    let inf = f64::INFINITY;
    let unit = |x: f64| if x.is_infinite() { 1f64 } else { 0.0 }.copysign(x);
    if br == 0.0 && bi == 0.0 && !(ar.is_nan() && ai.is_nan()) {
        let s = inf.copysign(br);
        C::new(s * ar, s * ai)
    } else if (ar.is_infinite() || ai.is_infinite()) && br.is_finite() && bi.is_finite() {
        let (ur, ui) = (unit(ar), unit(ai));
        C::new(inf * (ur * br + ui * bi), inf * (ui * br - ur * bi))
    } else if (br.is_infinite() || bi.is_infinite()) && ar.is_finite() && ai.is_finite() {
        let (ur, ui) = (unit(br), unit(bi));
        C::new(0.0 * (ar * ur + ai * ui), 0.0 * (ai * ur - ar * ui))
    } else {
        q
    }
}

/// Principal square root (see the module doc for the special values).
pub fn sqrt(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if y.is_infinite() {
        return C::new(f64::INFINITY, y);
    }
    if x == f64::INFINITY {
        let im = if y.is_nan() {
            f64::NAN
        } else {
            0f64.copysign(y)
        };
        return C::new(f64::INFINITY, im);
    }
    if x == f64::NEG_INFINITY {
        let re = if y.is_nan() { f64::NAN } else { 0.0 };
        return C::new(re, f64::INFINITY.copysign(y));
    }
    if x.is_nan() || y.is_nan() {
        return C::new(f64::NAN, f64::NAN);
    }
    if x == 0.0 && y == 0.0 {
        return C::new(0.0, 0.0);
    }
    // t = sqrt((|x| + |z|) / 2), scaled so that |z| cannot overflow.
    let scale = x.abs().max(y.abs());
    let (xs, ys) = (x / scale, y / scale);
    let t = ((xs.abs() + xs.hypot(ys)) * 0.5).sqrt() * scale.sqrt();
    if x >= 0.0 {
        C::new(t, y / (2.0 * t))
    } else {
        C::new(y.abs() / (2.0 * t), t.copysign(y))
    }
}

/// Hyperbolic tangent (see the module doc for the special values).
pub fn tanh(z: C) -> C {
    if z.re.is_infinite() {
        let s = if z.im.is_finite() {
            (2.0 * z.im).sin()
        } else {
            1.0
        };
        return C::new(1f64.copysign(z.re), 0f64.copysign(s));
    }
    z.tanh()
}

/// `|z|`: NaN when either part is NaN, else `hypot`.
pub fn abs(z: C) -> f64 {
    if z.re.is_nan() || z.im.is_nan() {
        f64::NAN
    } else {
        z.re.hypot(z.im)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn division_by_tiny_and_zero() {
        // 1 / 1e-30 is exactly representable in f64 arithmetic: 1e30.
        let q = div(C::new(1.0, 0.0), C::new(1e-30, 0.0));
        assert!((q.re - 1e30).abs() <= 1e15 && q.im == 0.0);
        // (2 + 4i) / (1 + 1i) = 3 + i.
        let q = div(C::new(2.0, 4.0), C::new(1.0, 1.0));
        assert!((q - C::new(3.0, 1.0)).norm() < 1e-15);
        let q = div(C::new(1.0, 0.0), C::new(0.0, 0.0));
        assert!(q.re == f64::INFINITY && q.im.is_nan());
    }

    #[test]
    fn sqrt_is_accurate_and_special() {
        // sqrt(-2 + 1e-30 i) = (1e-30 / (2 sqrt 2)) + i sqrt 2.
        let r = sqrt(C::new(-2.0, 1e-30));
        assert!((r.re / (1e-30 / (2.0 * 2f64.sqrt())) - 1.0).abs() < 1e-15);
        assert!((r.im - 2f64.sqrt()).abs() < 1e-15);
        let r = sqrt(C::new(f64::INFINITY, 1.0));
        assert!(r.re == f64::INFINITY && r.im == 0.0);
        let r = sqrt(C::new(f64::NEG_INFINITY, -1.0));
        assert!(r.re == 0.0 && r.im == f64::NEG_INFINITY);
        assert!((sqrt(C::new(3.0, 4.0)) - C::new(2.0, 1.0)).norm() < 1e-15);
    }

    #[test]
    fn tanh_and_abs_specials() {
        assert_eq!(tanh(C::new(f64::INFINITY, 1.0)), C::new(1.0, 0.0));
        assert!(abs(C::new(f64::INFINITY, f64::NAN)).is_nan());
        assert_eq!(abs(C::new(3.0, -4.0)), 5.0);
    }
}
