//! Complex elementary functions evaluated in `f64` with cancellation-free formulas.
//!
//! Owns: `asin`, `acos`, `asinh`, `acosh`, `atan`, `atanh`, `sinh`, `cosh`, `expm1` and
//! `log1p` on `Complex<f64>`, with the principal branches of the C99 / StableHLO CHLO
//! definitions. `asin`/`acos` follow the real/imaginary-part split of Hull, Fairgrieve
//! and Tang ("Implementing the complex arcsine and arccosine functions using exception
//! handling", 1997), which keeps both parts accurate to a few ulp away from overflow.
//! Complex64 callers widen to `f64`, call these, and round the result once.
//! Invariant: pure functions; NaN in gives NaN out, never a panic.

use num_complex::Complex64 as C;

/// Below this `B = x / A`, `asin(B)` / `acos(B)` are accurate for the real part.
const B_CROSSOVER: f64 = 0.6417;
/// Below this `A`, the imaginary part uses `log1p` of `A - 1` computed without
/// cancellation.
const A_CROSSOVER: f64 = 1.5;

/// Shared parts of `asin`/`acos` for `x, y >= 0`: `(A, B, r, s)` and `A - 1`-based
/// imaginary magnitude `log(A + sqrt(A² - 1))`.
struct Hull {
    a: f64,
    b: f64,
    r: f64,
    s: f64,
    imag: f64,
}

fn hull(x: f64, y: f64) -> Hull {
    let r = (x + 1.0).hypot(y);
    let s = (x - 1.0).hypot(y);
    let a = 0.5 * (r + s);
    let b = x / a;
    let y2 = y * y;
    let imag = if a <= A_CROSSOVER {
        let am1 = if x < 1.0 {
            0.5 * (y2 / (r + (x + 1.0)) + y2 / (s + (1.0 - x)))
        } else {
            0.5 * (y2 / (r + (x + 1.0)) + (s + (x - 1.0)))
        };
        (am1 + (am1 * (a + 1.0)).sqrt()).ln_1p()
    } else {
        (a + (a * a - 1.0).sqrt()).ln()
    };
    Hull { a, b, r, s, imag }
}

/// `sqrt(A² - x²) / (something)`-free form of `x / tan(real part of asin)`: returns
/// `d` with `asin` real part `= atan(x / d)` (used when `B` is close to 1).
fn hull_denominator(x: f64, y: f64, h: &Hull) -> f64 {
    let apx = h.a + x;
    if x <= 1.0 {
        (0.5 * apx * (y * y / (h.r + (x + 1.0)) + (h.s + (1.0 - x)))).sqrt()
    } else {
        y * (0.5 * (apx / (h.r + (x + 1.0)) + apx / (h.s + (x - 1.0)))).sqrt()
    }
}

/// Principal `asin(z)`.
pub fn asin(z: C) -> C {
    let (x, y) = (z.re.abs(), z.im.abs());
    if z.re.is_nan() || z.im.is_nan() {
        return C::new(f64::NAN, f64::NAN);
    }
    if x.is_infinite() || y.is_infinite() {
        // C99 Annex G: an infinite part gives an infinite imaginary part.
        let re = x.atan2(y);
        return C::new(re.copysign(z.re), f64::INFINITY.copysign(z.im));
    }
    let h = hull(x, y);
    let re = if h.b <= B_CROSSOVER {
        h.b.asin()
    } else {
        (x / hull_denominator(x, y, &h)).atan()
    };
    C::new(re.copysign(z.re), h.imag.copysign(z.im))
}

/// Principal `acos(z)`.
pub fn acos(z: C) -> C {
    let (x, y) = (z.re.abs(), z.im.abs());
    if z.re.is_nan() || z.im.is_nan() {
        return C::new(f64::NAN, f64::NAN);
    }
    let (re, imag) = if x.is_infinite() || y.is_infinite() {
        // C99 Annex G: `acos(+inf + iy) = 0 - i inf`, `acos(x + i inf) = π/2 - i inf`.
        (y.atan2(x), f64::INFINITY)
    } else {
        let h = hull(x, y);
        let re = if h.b <= B_CROSSOVER {
            h.b.acos()
        } else {
            (hull_denominator(x, y, &h) / x).atan()
        };
        (re, h.imag)
    };
    let re = if z.re.is_sign_negative() {
        std::f64::consts::PI - re
    } else {
        re
    };
    C::new(re, -imag.copysign(z.im))
}

/// Principal `asinh(z) = -i asin(i z)`.
pub fn asinh(z: C) -> C {
    let w = asin(C::new(-z.im, z.re));
    C::new(w.im, -w.re)
}

/// Principal `acosh(z)`: `±i acos(z)` with a non-negative real part.
pub fn acosh(z: C) -> C {
    let w = acos(z);
    C::new(w.im.abs(), w.re.copysign(z.im))
}

/// Principal `atanh(z)`: `Re = ¼ log1p(4x / ((1-x)² + y²))`,
/// `Im = ½ atan2(2y, (1-x)(1+x) - y²)`.
pub fn atanh(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if (x.is_infinite() && !y.is_nan()) || (y.is_infinite() && !x.is_nan()) {
        // C99 Annex G: `atanh(±inf + iy) = ±0 + i π/2 sign(y)`, likewise for `y = ±inf`.
        return C::new(0f64.copysign(x), std::f64::consts::FRAC_PI_2.copysign(y));
    }
    let one_m_x = 1.0 - x;
    let re = 0.25 * (4.0 * x / (one_m_x * one_m_x + y * y)).ln_1p();
    let im = 0.5 * (2.0 * y).atan2(one_m_x * (1.0 + x) - y * y);
    C::new(re, im)
}

/// Principal `atan(z) = -i atanh(i z)`.
pub fn atan(z: C) -> C {
    let w = atanh(C::new(-z.im, z.re));
    C::new(w.im, -w.re)
}

/// `sinh(x + iy) = sinh x cos y + i cosh x sin y`.
pub fn sinh(z: C) -> C {
    C::new(z.re.sinh() * z.im.cos(), z.re.cosh() * z.im.sin())
}

/// `cosh(x + iy) = cosh x cos y + i sinh x sin y`.
pub fn cosh(z: C) -> C {
    C::new(z.re.cosh() * z.im.cos(), z.re.sinh() * z.im.sin())
}

/// `exp(z) - 1` without cancellation: `Re = expm1(x) cos y - 2 sin²(y/2)`.
pub fn expm1(z: C) -> C {
    let half_sin = (0.5 * z.im).sin();
    let re = z.re.exp_m1() * z.im.cos() - 2.0 * half_sin * half_sin;
    C::new(re, z.re.exp() * z.im.sin())
}

/// `log(1 + z)` without cancellation: `Re = ½ log1p(x (2 + x) + y²)` for moderate
/// magnitudes, `log |1 + z|` otherwise.
pub fn log1p(z: C) -> C {
    let (x, y) = (z.re, z.im);
    let im = y.atan2(1.0 + x);
    let re = if x.abs() < 1e150 && y.abs() < 1e150 {
        0.5 * (x * (2.0 + x) + y * y).ln_1p()
    } else {
        (1.0 + x).hypot(y).ln()
    };
    C::new(re, im)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: C, b: C) -> bool {
        (a - b).norm() <= 1e-14 * (1.0 + b.norm())
    }

    #[test]
    fn inverses_round_trip() {
        for &(x, y) in &[
            (0.3, 0.4),
            (-2.5, 1.5),
            (1.0, -0.001),
            (-0.2, -7.0),
            (5.0, 0.0),
        ] {
            let z = C::new(x, y);
            assert!(close(asin(z).sin(), z), "asin {z}");
            assert!(close(acos(z).cos(), z), "acos {z}");
            assert!(close(asinh(z).sinh(), z), "asinh {z}");
            assert!(close(acosh(z).cosh(), z), "acosh {z}");
            assert!(close(atanh(z).tanh(), z), "atanh {z}");
            assert!(close(atan(z).tan(), z), "atan {z}");
            assert!(close(expm1(z), z.exp() - 1.0), "expm1 {z}");
            assert!(close(log1p(z), (z + 1.0).ln()), "log1p {z}");
        }
    }

    #[test]
    fn principal_branches() {
        // acos(2 + 0i) = 0 - i acosh(2); acosh(2 + 0i) = acosh(2) + 0i (C99 Annex G).
        let a = 2f64.acosh();
        assert!(close(acos(C::new(2.0, 0.0)), C::new(0.0, -a)));
        assert!(close(acosh(C::new(2.0, 0.0)), C::new(a, 0.0)));
        // asin(2 - 0i) = π/2 - i acosh(2).
        assert!(close(
            asin(C::new(2.0, -0.0)),
            C::new(std::f64::consts::FRAC_PI_2, -a)
        ));
        assert!(acosh(C::new(-3.0, -1.0)).re > 0.0);
    }

    #[test]
    fn infinite_arguments_follow_c99_annex_g() {
        use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, PI};
        let inf = f64::INFINITY;
        // cacos(+inf + iy) = +0 - i inf; cacos(-inf + iy) = pi - i inf;
        // cacos(x + i inf) = pi/2 - i inf; cacos(+inf + i inf) = pi/4 - i inf.
        assert_eq!(acos(C::new(inf, 1.0)), C::new(0.0, -inf));
        assert_eq!(acos(C::new(-inf, 1.0)), C::new(PI, -inf));
        assert_eq!(acos(C::new(0.5, inf)), C::new(FRAC_PI_2, -inf));
        assert_eq!(acos(C::new(inf, -inf)), C::new(FRAC_PI_4, inf));
        // casin(+inf + iy) = pi/2 + i inf; casin(x - i inf) = 0 - i inf.
        assert_eq!(asin(C::new(inf, 1.0)), C::new(FRAC_PI_2, inf));
        assert_eq!(asin(C::new(2.0, -inf)), C::new(0.0, -inf));
        // catanh(+inf + iy) = +0 + i pi/2; catanh(x - i inf) = +0 - i pi/2.
        assert_eq!(atanh(C::new(inf, 1.0)), C::new(0.0, FRAC_PI_2));
        assert_eq!(atanh(C::new(-3.0, -inf)), C::new(-0.0, -FRAC_PI_2));
    }
}
