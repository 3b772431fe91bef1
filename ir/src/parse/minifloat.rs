//! Encoding and decoding of the 4/6/8-bit float formats ([`F8Kind`]).
//!
//! Owns: [`decode`] (bits -> f64) and [`encode`] (f64 -> nearest bits, ties to even),
//! following the OCP/MLIR definitions of each format: IEEE-like formats with Inf/NaN
//! (`E5M2`, `E4M3`, `E3M4`), `FN` formats without Inf and with one NaN pattern, `FNUZ`
//! formats without negative zero (NaN is `0x80`), `E8M0FNU` (exponent only) and the
//! 4/6-bit formats without Inf/NaN. Encoding is a search over at most 256 codes: exact,
//! and cheap enough for literal constants (hex payloads bypass it).

use crate::types::F8Kind;

struct Fmt {
    ebits: u32,
    mbits: u32,
    bias: i32,
    style: Style,
}

#[derive(PartialEq)]
enum Style {
    Ieee,
    Fn,
    Fnuz,
    NoNan,
    E8M0,
}

fn fmt(k: F8Kind) -> Fmt {
    let f = |ebits, mbits, bias, style| Fmt {
        ebits,
        mbits,
        bias,
        style,
    };
    match k {
        F8Kind::E3M4 => f(3, 4, 3, Style::Ieee),
        F8Kind::E4M3 => f(4, 3, 7, Style::Ieee),
        F8Kind::E5M2 => f(5, 2, 15, Style::Ieee),
        F8Kind::E4M3FN => f(4, 3, 7, Style::Fn),
        F8Kind::E4M3FNUZ => f(4, 3, 8, Style::Fnuz),
        F8Kind::E5M2FNUZ => f(5, 2, 16, Style::Fnuz),
        F8Kind::E4M3B11FNUZ => f(4, 3, 11, Style::Fnuz),
        F8Kind::E8M0FNU => f(8, 0, 127, Style::E8M0),
        F8Kind::F4E2M1FN => f(2, 1, 1, Style::NoNan),
        F8Kind::F6E2M3FN => f(2, 3, 1, Style::NoNan),
        F8Kind::F6E3M2FN => f(3, 2, 3, Style::NoNan),
    }
}

/// The value of `bits` in format `k` (NaN for NaN codes).
pub fn decode(k: F8Kind, bits: u8) -> f64 {
    let f = fmt(k);
    let width = f.ebits + f.mbits + u32::from(f.style != Style::E8M0);
    let bits = u32::from(bits) & ((1u32 << width) - 1);
    if f.style == Style::E8M0 {
        return if bits == 0xFF {
            f64::NAN
        } else {
            (2f64).powi(bits as i32 - 127)
        };
    }
    let sign_bit = 1u32 << (f.ebits + f.mbits);
    let neg = bits & sign_bit != 0;
    let e = (bits >> f.mbits) & ((1 << f.ebits) - 1);
    let m = bits & ((1 << f.mbits) - 1);
    let emax = (1u32 << f.ebits) - 1;
    let mmax = (1u32 << f.mbits) - 1;
    match f.style {
        Style::Ieee if e == emax => {
            return if m == 0 {
                if neg {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }
            } else {
                f64::NAN
            }
        }
        Style::Fn if e == emax && m == mmax => return f64::NAN,
        Style::Fnuz if bits == sign_bit => return f64::NAN,
        _ => {}
    }
    let mag = if e == 0 {
        m as f64 * (2f64).powi(1 - f.bias - f.mbits as i32)
    } else {
        (1.0 + m as f64 / (1u32 << f.mbits) as f64) * (2f64).powi(e as i32 - f.bias)
    };
    if neg {
        -mag
    } else {
        mag
    }
}

/// The code of the value nearest to `x` in format `k` (ties to even); overflow gives
/// Inf (IEEE-like), NaN (formats with NaN) or the largest finite value.
pub fn encode(k: F8Kind, x: f64) -> u8 {
    let f = fmt(k);
    let sign_shift = f.ebits + f.mbits;
    let nan_code: Option<u8> = match f.style {
        Style::Ieee => Some((((1u32 << (f.ebits + f.mbits)) - 1) & 0xFF) as u8 | 1),
        Style::Fn => Some((((1u32 << (f.ebits + f.mbits)) - 1) & 0xFF) as u8),
        Style::Fnuz => Some(0x80),
        Style::E8M0 => Some(0xFF),
        Style::NoNan => None,
    };
    if x.is_nan() {
        return nan_code.unwrap_or(0);
    }
    let neg = x.is_sign_negative();
    let ax = x.abs();
    if f.style == Style::E8M0 && (neg || ax == 0.0) {
        return 0xFF;
    }
    // Search finite non-negative codes for the nearest value.
    let ncodes: u32 = if f.style == Style::E8M0 {
        256
    } else {
        1 << sign_shift
    };
    let mut best: Option<(u32, f64)> = None;
    let mut max_finite = (0u32, 0.0f64);
    for c in 0..ncodes {
        let v = decode(k, c as u8);
        if !v.is_finite() {
            continue;
        }
        if v > max_finite.1 {
            max_finite = (c, v);
        }
        let d = (v - ax).abs();
        match best {
            Some((bc, bd)) if d > bd || (d == bd && (bc & 1) == 0) => {}
            _ => best = Some((c, d)),
        }
    }
    let (mut code, _) = best.unwrap_or((0, 0.0));
    if ax > max_finite.1 {
        // Beyond the largest finite value: round-to-nearest decides overflow.
        let ulp = (2f64).powi(max_finite.1.log2().floor() as i32 - f.mbits as i32);
        if ax >= max_finite.1 + ulp / 2.0 || ax.is_infinite() {
            code = match f.style {
                Style::Ieee => ((1u32 << f.ebits) - 1) << f.mbits,
                _ => match nan_code {
                    Some(n) => return n,
                    None => max_finite.0,
                },
            };
        } else {
            code = max_finite.0;
        }
    }
    if f.style == Style::E8M0 {
        return code as u8;
    }
    if neg && !(f.style == Style::Fnuz && code == 0) {
        code |= 1 << sign_shift;
    }
    code as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // OCP spec: E4M3FN max is 448 (0x7E), NaN 0x7F; E5M2 max 57344 (0x7B), Inf 0x7C.
        assert_eq!(decode(F8Kind::E4M3FN, 0x7E), 448.0);
        assert!(decode(F8Kind::E4M3FN, 0x7F).is_nan());
        assert_eq!(decode(F8Kind::E5M2, 0x7B), 57344.0);
        assert_eq!(decode(F8Kind::E5M2, 0x7C), f64::INFINITY);
        assert_eq!(encode(F8Kind::E4M3FN, 1.0), 0x38);
        assert_eq!(encode(F8Kind::E5M2, 1.0), 0x3C);
        assert_eq!(encode(F8Kind::E5M2, -2.0), 0xC0);
        assert_eq!(encode(F8Kind::E4M3FNUZ, -0.0), 0x00);
        assert_eq!(encode(F8Kind::F4E2M1FN, 6.0), 0x7);
        assert_eq!(encode(F8Kind::F4E2M1FN, 100.0), 0x7);
        assert_eq!(encode(F8Kind::E8M0FNU, 4.0), 129);
        assert_eq!(encode(F8Kind::E4M3FN, 1000.0), 0x7F);
        for k in F8Kind::ALL {
            for c in 0..=255u8 {
                let v = decode(k, c);
                if v.is_finite() && !(v == 0.0 && v.is_sign_negative()) {
                    let w = (1u32 << k.bits()) - 1;
                    assert_eq!(encode(k, v) as u32, c as u32 & w, "{k:?} {c:#x}");
                }
            }
        }
    }
}
