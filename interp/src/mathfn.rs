//! Scalar math not in `std`: the special functions CHLO needs, rounding helpers and
//! integer semantics of the StableHLO spec.
//!
//! Owns: pure scalar functions over `f64` / canonical integers. Invariant: no allocation,
//! no panics for any input (NaN/inf in, NaN/inf out).

use crate::tensor::wrap_int;
use neuronc_ir::ElemType;

/// Round half to even.
pub fn round_even(x: f64) -> f64 {
    x.round_ties_even()
}

/// Inverse error function (f64 Newton refinement of a rational starting point).
pub fn erf_inv(y: f64) -> f64 {
    if y.is_nan() || !(-1.0..=1.0).contains(&y) {
        return f64::NAN;
    }
    if y == 1.0 {
        return f64::INFINITY;
    }
    if y == -1.0 {
        return f64::NEG_INFINITY;
    }
    // Giles' single-precision approximation as the initial guess.
    let w = -((1.0 - y) * (1.0 + y)).ln();
    let mut x = if w < 5.0 {
        let w = w - 2.5;
        let mut p = 2.810_226_36e-08;
        for c in [
            3.432_739_39e-07,
            -3.523_387_7e-06,
            -4.391_506_54e-06,
            0.000_218_580_87,
            -0.001_253_725_03,
            -0.004_177_681_64,
            0.246_640_727,
            1.501_409_41,
        ] {
            p = c + p * w;
        }
        p * y
    } else {
        let w = w.sqrt() - 3.0;
        let mut p = -0.000_200_214_257;
        for c in [
            0.000_100_950_558,
            0.001_349_343_22,
            -0.003_673_428_44,
            0.005_739_507_73,
            -0.007_622_461_3,
            0.009_438_870_47,
            1.001_674_06,
            2.832_976_82,
        ] {
            p = c + p * w;
        }
        p * y
    };
    for _ in 0..3 {
        let err = libm::erf(x) - y;
        let d = 2.0 / std::f64::consts::PI.sqrt() * (-x * x).exp();
        if d == 0.0 || !d.is_finite() {
            break;
        }
        x -= err / d;
    }
    x
}

/// Digamma (psi) function.
pub fn digamma(mut x: f64) -> f64 {
    if x.is_nan() || x == f64::NEG_INFINITY {
        return f64::NAN;
    }
    let mut result = 0.0;
    if x <= 0.0 {
        if x == x.floor() {
            return f64::NAN;
        }
        // Reflection: psi(1-x) - psi(x) = pi cot(pi x).
        let pi = std::f64::consts::PI;
        result -= pi / (pi * x).tan();
        x = 1.0 - x;
    }
    while x < 10.0 {
        result -= 1.0 / x;
        x += 1.0;
    }
    let f = 1.0 / (x * x);
    let series = f
        * (1.0 / 12.0
            - f * (1.0 / 120.0 - f * (1.0 / 252.0 - f * (1.0 / 240.0 - f * (1.0 / 132.0)))));
    result + x.ln() - 0.5 / x - series
}

/// Exponentially scaled modified Bessel function of order one, `exp(-|x|) I1(x)`.
pub fn bessel_i1e(x: f64) -> f64 {
    let ax = x.abs();
    // Power series, then asymptotic expansion for large |x|.
    let v = if ax < 30.0 {
        let mut term = ax / 2.0;
        let mut sum = term;
        let q = ax * ax / 4.0;
        for k in 1..200 {
            term *= q / (k as f64 * (k as f64 + 1.0));
            sum += term;
            if term < sum * 1e-17 {
                break;
            }
        }
        sum * (-ax).exp()
    } else {
        let mut sum = 1.0;
        let mut term = 1.0;
        for k in 1..30 {
            let kf = k as f64;
            term *= -(4.0 - (2.0 * kf - 1.0).powi(2)) / (kf * 8.0 * ax);
            sum += term;
        }
        sum / (2.0 * std::f64::consts::PI * ax).sqrt()
    };
    if x < 0.0 {
        -v
    } else {
        v
    }
}

/// Hurwitz zeta function zeta(s, q) (s > 1; q > 0, or q < 0 non-integer with integer s),
/// by Euler-Maclaurin summation.
pub fn zeta(s: f64, q: f64) -> f64 {
    if s == 1.0 {
        return f64::INFINITY;
    }
    if s < 1.0 || q.is_nan() {
        return f64::NAN;
    }
    if q <= 0.0 {
        // Defined (as XLA's CHLO lowering defines it) only for integer `s` and
        // non-integer `q`: shift `q` above zero with `zeta(s, q) = q^-s + zeta(s, q + 1)`.
        // At a pole (q a non-positive integer) XLA gives +inf for even s, NaN otherwise.
        let m = (-q).floor() + 1.0;
        if q == q.floor() && s == s.floor() && s % 2.0 == 0.0 {
            return f64::INFINITY;
        }
        if q == q.floor() || s != s.floor() || m > 1e6 {
            return f64::NAN;
        }
        let mut head = 0.0;
        let mut k = 0.0;
        while k < m {
            head += (q + k).powf(-s);
            k += 1.0;
        }
        return head + zeta(s, q + m);
    }
    let n = 9;
    let mut sum = 0.0;
    for k in 0..n {
        sum += (q + k as f64).powf(-s);
    }
    let a = q + n as f64;
    sum += a.powf(1.0 - s) / (s - 1.0) + 0.5 * a.powf(-s);
    // Bernoulli terms B2k/(2k)!.
    let b = [
        1.0 / 12.0,
        -1.0 / 720.0,
        1.0 / 30240.0,
        -1.0 / 1209600.0,
        1.0 / 47900160.0,
        -691.0 / 1307674368000.0,
    ];
    let mut fac = s * a.powf(-s - 1.0);
    for (j, bj) in b.iter().enumerate() {
        sum += bj * fac;
        let k = 2 * j as i32 + 1;
        fac *= (s + k as f64) * (s + k as f64 + 1.0) / (a * a);
    }
    sum
}

/// polygamma(n, x) for integer n >= 0.
pub fn polygamma(n: f64, x: f64) -> f64 {
    if n != n.floor() || n < 0.0 {
        return f64::NAN;
    }
    if n == 0.0 {
        return digamma(x);
    }
    let sign = if (n as i64) % 2 == 0 { -1.0 } else { 1.0 };
    sign * libm::tgamma(n + 1.0) * zeta(n + 1.0, x)
}

/// `nextafter` for f32.
pub fn next_after_f32(x: f32, y: f32) -> f32 {
    if x.is_nan() || y.is_nan() {
        return f32::NAN;
    }
    if x == y {
        return y;
    }
    if x == 0.0 {
        return f32::from_bits(1).copysign(y);
    }
    let b = x.to_bits();
    let up = (y > x) == (x > 0.0);
    f32::from_bits(if up { b + 1 } else { b - 1 })
}

/// `nextafter` for f64.
pub fn next_after_f64(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    if x == y {
        return y;
    }
    if x == 0.0 {
        return f64::from_bits(1).copysign(y);
    }
    let b = x.to_bits();
    let up = (y > x) == (x > 0.0);
    f64::from_bits(if up { b + 1 } else { b - 1 })
}

/// Bit width of an integer element type (`i1`: 1).
pub fn int_bits(e: ElemType) -> u32 {
    match e {
        ElemType::I1 => 1,
        ElemType::Int(b) | ElemType::UInt(b) => b as u32,
        _ => 64,
    }
}

/// The value's bit pattern within its width, as `u64`.
pub fn int_pattern(e: ElemType, v: i64) -> u64 {
    let bits = int_bits(e);
    if bits == 64 {
        v as u64
    } else {
        (v as u64) & ((1u64 << bits) - 1)
    }
}

/// Integer division as XLA does it: `x / 0 == -1` (all ones), `MIN / -1 == MIN`.
pub fn int_div(e: ElemType, a: i64, b: i64) -> i64 {
    if e.is_unsigned() {
        let (ua, ub) = (a as u64, b as u64);
        return wrap_int(e, ua.checked_div(ub).map_or(u64::MAX as i64, |q| q as i64));
    }
    if b == 0 {
        return wrap_int(e, -1);
    }
    wrap_int(e, a.wrapping_div(b))
}

/// Integer remainder as XLA does it: `x % 0 == x`, `MIN % -1 == 0`; sign of the dividend.
pub fn int_rem(e: ElemType, a: i64, b: i64) -> i64 {
    if e.is_unsigned() {
        let (ua, ub) = (a as u64, b as u64);
        return if ub == 0 { a } else { (ua % ub) as i64 };
    }
    if b == 0 {
        return a;
    }
    wrap_int(e, a.wrapping_rem(b))
}

/// Integer power; negative exponents give 0 except for bases 1 and -1.
pub fn int_pow(e: ElemType, a: i64, b: i64) -> i64 {
    if !e.is_unsigned() && b < 0 {
        return match a {
            1 => 1,
            -1 => {
                if b % 2 == 0 {
                    1
                } else {
                    -1
                }
            }
            _ => 0,
        };
    }
    let (mut base, mut exp, mut acc) = (a, b as u64, 1i64);
    while exp > 0 {
        if exp & 1 == 1 {
            acc = acc.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        exp >>= 1;
    }
    wrap_int(e, acc)
}

/// Shifts; an amount `>=` the width (as unsigned) gives 0 (or the sign fill for `sra`).
pub fn int_shift(e: ElemType, kind: ShiftKind, a: i64, amt: i64) -> i64 {
    let bits = int_bits(e);
    let amt_u = int_pattern(e, amt);
    let pat = int_pattern(e, a);
    let sign_ext = {
        let s = 64 - bits;
        ((pat << s) as i64) >> s
    };
    if amt_u >= bits as u64 {
        return match kind {
            ShiftKind::Left | ShiftKind::RightLogical => 0,
            ShiftKind::RightArithmetic => wrap_int(e, if sign_ext < 0 { -1 } else { 0 }),
        };
    }
    let r = match kind {
        ShiftKind::Left => (pat << amt_u) as i64,
        ShiftKind::RightLogical => (pat >> amt_u) as i64,
        ShiftKind::RightArithmetic => sign_ext >> amt_u,
    };
    wrap_int(e, r)
}

/// Which shift.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShiftKind {
    Left,
    RightLogical,
    RightArithmetic,
}

/// Leading zeros within the element width, as a value of `e` (the count of a zero `i2` is 2,
/// which wraps to -2).
pub fn int_clz(e: ElemType, a: i64) -> i64 {
    let bits = int_bits(e);
    wrap_int(e, (int_pattern(e, a).leading_zeros() - (64 - bits)) as i64)
}

/// Population count within the element width, as a value of `e` (wraps like
/// [`int_clz`]).
pub fn int_popcnt(e: ElemType, a: i64) -> i64 {
    wrap_int(e, int_pattern(e, a).count_ones() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polygamma_at_negative_non_integers_and_poles() {
        // psi1(1/2) = pi^2/2 and psi1(x) = psi1(x + 1) + 1/x^2, so psi1(-1/2) = pi^2/2 + 4.
        let pi2 = std::f64::consts::PI * std::f64::consts::PI;
        assert!((polygamma(1.0, -0.5) - (pi2 / 2.0 + 4.0)).abs() < 1e-10);
        // psi1(-3/2) = psi1(-1/2) + 1/(3/2)^2.
        assert!((polygamma(1.0, -1.5) - (pi2 / 2.0 + 4.0 + 4.0 / 9.0)).abs() < 1e-10);
        // Poles: zeta(2, -3) = +inf (even s), zeta(3, -3) = NaN; non-integer s: NaN.
        assert_eq!(zeta(2.0, -3.0), f64::INFINITY);
        assert!(zeta(3.0, -3.0).is_nan() && zeta(2.5, -0.5).is_nan());
        // Far below zero the shift would take too many terms: NaN rather than a slow loop.
        assert!(zeta(2.0, -1e9 - 0.5).is_nan());
    }

    #[test]
    fn integer_edge_cases_match_xla() {
        // Observed with jax on XLA:CPU (lax.div / lax.rem / shifts on int32).
        let i32t = ElemType::Int(32);
        assert_eq!(int_div(i32t, i32::MIN as i64, -1), i32::MIN as i64);
        assert_eq!(int_div(i32t, 7, 0), -1);
        assert_eq!(int_rem(i32t, i32::MIN as i64, -1), 0);
        assert_eq!(int_rem(i32t, 7, 0), 7);
        assert_eq!(int_rem(i32t, -7, 2), -1);
        assert_eq!(int_div(ElemType::UInt(32), 7, 0), u32::MAX as i64);
        assert_eq!(int_shift(i32t, ShiftKind::Left, 1, 32), 0);
        assert_eq!(int_shift(i32t, ShiftKind::RightArithmetic, -8, 33), -1);
        assert_eq!(int_shift(i32t, ShiftKind::RightLogical, -8, -1), 0);
        assert_eq!(int_shift(i32t, ShiftKind::RightLogical, -8, 28), 15);
        assert_eq!(int_clz(ElemType::Int(8), 1), 7);
        assert_eq!(int_popcnt(ElemType::Int(8), -1), 8);
    }

    #[test]
    fn special_functions() {
        assert!((erf_inv(0.5) - 0.476_936_276_204_469_9).abs() < 1e-14);
        assert!((digamma(1.0) + 0.577_215_664_901_532_9).abs() < 1e-12);
        assert!((zeta(2.0, 1.0) - std::f64::consts::PI.powi(2) / 6.0).abs() < 1e-12);
        assert_eq!(next_after_f32(0.0, 1.0), f32::from_bits(1));
    }
}
