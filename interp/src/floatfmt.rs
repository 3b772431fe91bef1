//! Small floating-point formats: the f8/f6/f4 family of the StableHLO spec and
//! `reduce_precision`.
//!
//! Owns: decoding a format's bit pattern to `f64`, rounding an `f64` to the nearest
//! representable value (round-to-nearest-even) and encoding it back to bits.
//! Invariants: `decode(encode(round(x))) == round(x)` for every non-NaN `x`; overflow
//! becomes infinity where the format has one, NaN where it only has NaN (XLA behavior,
//! checked with jax), and the largest finite value for formats with neither.

use neuronc_ir::F8Kind;

/// How a format spells its special values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Specials {
    /// IEEE-754 style: all-ones exponent is inf (mantissa 0) or NaN.
    Ieee,
    /// "FN": no infinities; all-ones exponent and mantissa is NaN.
    Fn,
    /// "FNUZ": no infinities, no negative zero; `0x80` is NaN.
    Fnuz,
    /// No specials at all (f4/f6 formats): overflow saturates.
    None,
}

/// Parameters of a small float format.
#[derive(Clone, Copy, Debug)]
struct Format {
    ebits: u32,
    mbits: u32,
    bias: i32,
    specials: Specials,
}

fn format(kind: F8Kind) -> Format {
    let f = |ebits, mbits, bias, specials| Format {
        ebits,
        mbits,
        bias,
        specials,
    };
    match kind {
        F8Kind::E3M4 => f(3, 4, 3, Specials::Ieee),
        F8Kind::E4M3 => f(4, 3, 7, Specials::Ieee),
        F8Kind::E4M3FN => f(4, 3, 7, Specials::Fn),
        F8Kind::E4M3FNUZ => f(4, 3, 8, Specials::Fnuz),
        F8Kind::E4M3B11FNUZ => f(4, 3, 11, Specials::Fnuz),
        F8Kind::E5M2 => f(5, 2, 15, Specials::Ieee),
        F8Kind::E5M2FNUZ => f(5, 2, 16, Specials::Fnuz),
        // E8M0FNU is handled separately (no sign, no mantissa, no zero).
        F8Kind::E8M0FNU => f(8, 0, 127, Specials::Fn),
        F8Kind::F4E2M1FN => f(2, 1, 1, Specials::None),
        F8Kind::F6E2M3FN => f(2, 3, 1, Specials::None),
        F8Kind::F6E3M2FN => f(3, 2, 3, Specials::None),
    }
}

impl Format {
    fn max_exp_field(self) -> u32 {
        (1 << self.ebits) - 1
    }
    /// Largest finite value.
    fn max_finite(self) -> f64 {
        let (e, m) = match self.specials {
            Specials::Ieee => (self.max_exp_field() - 1, (1u32 << self.mbits) - 1),
            Specials::Fn => (self.max_exp_field(), (1u32 << self.mbits) - 2),
            Specials::Fnuz | Specials::None => (self.max_exp_field(), (1u32 << self.mbits) - 1),
        };
        let frac = 1.0 + m as f64 / (1u64 << self.mbits) as f64;
        frac * 2f64.powi(e as i32 - self.bias)
    }
    fn nan_bits(self) -> u8 {
        match self.specials {
            Specials::Ieee => ((self.max_exp_field() << self.mbits) | 1) as u8,
            Specials::Fn => ((self.max_exp_field() << self.mbits) | ((1 << self.mbits) - 1)) as u8,
            Specials::Fnuz => 0x80,
            Specials::None => 0,
        }
    }
    fn sign_shift(self) -> u32 {
        self.ebits + self.mbits
    }
}

/// Decodes the bit pattern of a small float.
pub fn decode(kind: F8Kind, bits: u8) -> f64 {
    if kind == F8Kind::E8M0FNU {
        return if bits == 0xff {
            f64::NAN
        } else {
            2f64.powi(bits as i32 - 127)
        };
    }
    let f = format(kind);
    let width = f.sign_shift() + 1;
    let bits = bits & ((1u32 << width) - 1) as u8;
    let neg = (bits >> f.sign_shift()) & 1 == 1;
    let exp = ((bits as u32) >> f.mbits) & f.max_exp_field();
    let man = (bits as u32) & ((1 << f.mbits) - 1);
    match f.specials {
        Specials::Ieee if exp == f.max_exp_field() => {
            let v = if man == 0 { f64::INFINITY } else { f64::NAN };
            return if neg { -v } else { v };
        }
        Specials::Fn if exp == f.max_exp_field() && man == (1 << f.mbits) - 1 => return f64::NAN,
        Specials::Fnuz if bits == 0x80 => return f64::NAN,
        _ => {}
    }
    let scale = (1u64 << f.mbits) as f64;
    let mag = if exp == 0 {
        man as f64 / scale * 2f64.powi(1 - f.bias)
    } else {
        (1.0 + man as f64 / scale) * 2f64.powi(exp as i32 - f.bias)
    };
    if neg {
        -mag
    } else {
        mag
    }
}

/// Rounds `|x|` to `mbits` mantissa bits with minimum normal exponent `emin`
/// (round half to even, unbounded exponent range above).
fn round_mag(a: f64, mbits: u32, emin: i32) -> f64 {
    let e = (a.log2().floor() as i32).max(emin);
    // Guard against log2 rounding at binade edges.
    let e = if 2f64.powi(e) > a && e > emin {
        e - 1
    } else {
        e
    };
    let q = 2f64.powi(e - mbits as i32);
    (a / q).round_ties_even() * q
}

/// Rounds `x` to the nearest value of the format (what `convert` to it produces).
pub fn round(kind: F8Kind, x: f64) -> f64 {
    decode(kind, encode(kind, x))
}

/// Encodes `x` (rounding to nearest even) into the format's bit pattern.
pub fn encode(kind: F8Kind, x: f64) -> u8 {
    if kind == F8Kind::E8M0FNU {
        return encode_e8m0(x);
    }
    let f = format(kind);
    if x.is_nan() {
        return f.nan_bits();
    }
    let neg = x.is_sign_negative();
    let sign = if neg { 1u8 << f.sign_shift() } else { 0 };
    let a = x.abs();
    let overflow = |f: Format| match f.specials {
        Specials::Ieee => sign | (f.max_exp_field() << f.mbits) as u8,
        Specials::Fn | Specials::Fnuz => f.nan_bits(),
        Specials::None => sign | ((1u32 << f.sign_shift()) - 1) as u8,
    };
    if a.is_infinite() {
        return overflow(f);
    }
    let emin = 1 - f.bias;
    let r = if a == 0.0 {
        0.0
    } else {
        round_mag(a, f.mbits, emin)
    };
    if r > f.max_finite() {
        return overflow(f);
    }
    if r == 0.0 {
        return if f.specials == Specials::Fnuz {
            0
        } else {
            sign
        };
    }
    let min_normal = 2f64.powi(emin);
    let (exp, man) = if r < min_normal {
        (0, (r / 2f64.powi(emin - f.mbits as i32)) as u32)
    } else {
        let e = r.log2().floor() as i32;
        let e = if 2f64.powi(e) > r { e - 1 } else { e };
        let m = (r / 2f64.powi(e - f.mbits as i32)) as u32 - (1 << f.mbits);
        ((e + f.bias) as u32, m)
    };
    sign | ((exp << f.mbits) | man) as u8
}

/// `f32`/`bf16`/`f16` -> `f8E8M0FNU` as XLA converts (checked with jax on XLA:CPU): the
/// exponent is kept and the mantissa rounded away with the implicit leading bit as the
/// kept bit, so `m * 2^e` (`1 <= m < 2`) goes up exactly when `m >= 1.5` (ties up, not to
/// the nearer power of two in log scale). Below `2^-126` (f32 subnormals) the bit rule
/// has no implicit bit: anything above `2^-127` rounds up to `2^-126`, the rest to
/// `2^-127`. Zero, negatives, infinities, NaN and results past `2^127` are NaN (`0xff`).
fn encode_e8m0(x: f64) -> u8 {
    if x.is_nan() || x <= 0.0 || x.is_infinite() {
        return 0xff;
    }
    let min_normal = 2f64.powi(-126);
    if x < min_normal {
        return u8::from(x > 2f64.powi(-127));
    }
    let mut e = x.log2().floor() as i32;
    // Guard against log2 rounding at binade edges.
    if 2f64.powi(e) > x {
        e -= 1;
    } else if 2f64.powi(e + 1) <= x {
        e += 1;
    }
    if x / 2f64.powi(e) >= 1.5 {
        e += 1;
    }
    match u8::try_from(e + 127) {
        Ok(f) if f < 0xff => f,
        _ => 0xff,
    }
}

/// XLA's `reduce_precision` on an `f64` value: rounds the mantissa to `mbits`
/// (nearest even), overflows to infinity, flushes values below the smallest normal of the
/// reduced format to (signed) zero, keeps NaN.
pub fn reduce_precision_f64(x: f64, ebits: u32, mbits: u32) -> f64 {
    reduce_bits(x.to_bits(), 11, 52, ebits, mbits, f64::from_bits)
}

/// [`reduce_precision_f64`] for `f32` values.
pub fn reduce_precision_f32(x: f32, ebits: u32, mbits: u32) -> f32 {
    reduce_bits(x.to_bits() as u64, 8, 23, ebits, mbits, |b| {
        f32::from_bits(b as u32)
    })
}

fn reduce_bits<T>(
    bits: u64,
    src_e: u32,
    src_m: u32,
    ebits: u32,
    mbits: u32,
    back: impl Fn(u64) -> T,
) -> T {
    let sign_bit = 1u64 << (src_e + src_m);
    let exp_mask = ((1u64 << src_e) - 1) << src_m;
    let man_mask = (1u64 << src_m) - 1;
    let is_nan = bits & exp_mask == exp_mask && bits & man_mask != 0;
    if is_nan {
        return back(bits);
    }
    let mut b = bits;
    if mbits < src_m {
        let drop = src_m - mbits;
        let last = (b >> drop) & 1;
        let half = (1u64 << (drop - 1)) - 1;
        b = (b + half + last) & !((1u64 << drop) - 1);
    }
    if ebits < src_e {
        let src_bias = (1i64 << (src_e - 1)) - 1;
        let red_bias = (1i64 << (ebits - 1)) - 1;
        let exp = ((b & exp_mask) >> src_m) as i64 - src_bias;
        let sign = b & sign_bit;
        if exp > red_bias {
            b = sign | exp_mask;
        } else if exp <= -red_bias {
            b = sign;
        }
    }
    back(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e4m3fn_matches_xla() {
        // Values observed from XLA:CPU convert f32 -> f8E4M3FN through jax.
        assert_eq!(round(F8Kind::E4M3FN, 460.0), 448.0);
        assert!(round(F8Kind::E4M3FN, 470.0).is_nan());
        assert!(round(F8Kind::E4M3FN, f64::INFINITY).is_nan());
        assert_eq!(round(F8Kind::E4M3FN, 1e-3), 1.953125e-3);
        assert_eq!(decode(F8Kind::E4M3FN, 0x7e), 448.0);
    }

    #[test]
    fn e8m0_matches_xla() {
        // f32 -> f8E8M0FNU bit patterns observed from XLA:CPU convert through jax.
        let cases = [
            (1.4, 127),
            (1.45, 127),
            (1.5, 128),
            (3.0, 129),
            (5.0, 129),
            (7.0, 130),
            (0.375, 126),
            (2f64.powi(-127), 0),
            (1.5 * 2f64.powi(-127), 1),
            (5.9e-39, 1),
            (1e-39, 0),
            (3e38, 0xff),
            (0.0, 0xff),
            (-1.0, 0xff),
        ];
        for (x, bits) in cases {
            assert_eq!(encode(F8Kind::E8M0FNU, x), bits, "{x}");
        }
    }

    #[test]
    fn e5m2_and_fnuz() {
        assert_eq!(round(F8Kind::E5M2, 57344.0), 57344.0);
        assert_eq!(round(F8Kind::E5M2, 61440.0), f64::INFINITY);
        assert_eq!(round(F8Kind::E5M2, 1e-6), 0.0);
        assert_eq!(round(F8Kind::E4M3FNUZ, 240.0), 240.0);
        assert!(round(F8Kind::E4M3FNUZ, 250.0).is_nan());
        assert_eq!(encode(F8Kind::E4M3FNUZ, -0.0), 0);
    }

    #[test]
    fn all_codes_round_trip() {
        for k in F8Kind::ALL {
            let n = 1u32 << k.bits();
            for b in 0..n {
                let v = decode(k, b as u8);
                if v.is_nan() {
                    continue;
                }
                assert_eq!(decode(k, encode(k, v)), v, "{k:?} {b:#x}");
            }
        }
    }

    #[test]
    fn reduce_precision_like_xla() {
        assert_eq!(reduce_precision_f32(1e-6, 5, 10), 0.0);
        assert_eq!(reduce_precision_f32(7e4, 5, 10), f32::INFINITY);
        assert_eq!(reduce_precision_f32(1.0001, 5, 10), 1.0);
        assert_eq!(reduce_precision_f32(6e-5, 5, 10), 0.0);
        assert!(reduce_precision_f32(f32::NAN, 5, 10).is_nan());
    }
}
