//! `convert` and `bitcast_convert` between every pair of element types.
//!
//! Owns: value conversion rules (checked against XLA:CPU through jax): int -> int wraps;
//! int -> float rounds to nearest even; float -> float rounds to nearest even (f64 to
//! narrow types in one rounding step); float -> int truncates toward zero and saturates
//! at the target's range, NaN -> 0; anything -> i1 is `x != 0`; complex -> real takes the
//! real part; real -> complex has a zero imaginary part.
//! Invariant: no allocation per element.

use crate::mathfn::int_bits;
use crate::tensor::{round_f32, round_f64_to_f32class, wrap_int, Data, Tensor};
use neuronc_ir::{ElemType, TensorType};
use num_complex::Complex;

/// `convert(x)` to the element type of `out`.
pub fn convert(x: &Tensor, out: &TensorType) -> Result<Tensor, String> {
    let src = x.elem();
    let dst = out.elem;
    let data = match x.data() {
        Data::Int(v) => from_int(src, dst, v),
        Data::F32(v) => from_float(dst, v, |a| a as f64, |a| a),
        Data::F64(v) => from_float(dst, v, |a| a, |a| a as f32),
        Data::C64(v) => from_complex(dst, v.iter().map(|c| (c.re as f64, c.im as f64))),
        Data::C128(v) => from_complex(dst, v.iter().map(|c| (c.re, c.im))),
    };
    Tensor::new(out.clone(), data)
}

fn int_to_f64(src: ElemType, a: i64) -> f64 {
    if src.is_unsigned() {
        a as u64 as f64
    } else {
        a as f64
    }
}

fn from_int(src: ElemType, dst: ElemType, v: &[i64]) -> Data {
    let uns = src.is_unsigned();
    match dst {
        ElemType::I1 => Data::Int(v.iter().map(|&a| (a != 0) as i64).collect()),
        ElemType::Int(_) | ElemType::UInt(_) => {
            Data::Int(v.iter().map(|&a| wrap_int(dst, a)).collect())
        }
        ElemType::F32 if uns => Data::F32(v.iter().map(|&a| a as u64 as f32).collect()),
        ElemType::F32 => Data::F32(v.iter().map(|&a| a as f32).collect()),
        ElemType::F64 => Data::F64(v.iter().map(|&a| int_to_f64(src, a)).collect()),
        ElemType::Complex64 => Data::C64(
            v.iter()
                .map(|&a| Complex::new(int_to_f64(src, a) as f32, 0.0))
                .collect(),
        ),
        ElemType::Complex128 => Data::C128(
            v.iter()
                .map(|&a| Complex::new(int_to_f64(src, a), 0.0))
                .collect(),
        ),
        _ => Data::F32(
            v.iter()
                .map(|&a| round_f64_to_f32class(dst, int_to_f64(src, a)))
                .collect(),
        ),
    }
}

/// Float to integer: truncate, saturate at the type's range, NaN -> 0.
pub fn float_to_int(dst: ElemType, a: f64) -> i64 {
    if a.is_nan() {
        return 0;
    }
    let bits = int_bits(dst);
    if dst.is_unsigned() {
        if a <= 0.0 {
            return 0;
        }
        let u = a as u64;
        let max = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        u.min(max) as i64
    } else {
        let i = a as i64;
        if bits == 64 {
            i
        } else {
            let max = (1i64 << (bits - 1)) - 1;
            i.clamp(-max - 1, max)
        }
    }
}

fn from_float<T: Copy>(
    dst: ElemType,
    v: &[T],
    to64: impl Fn(T) -> f64,
    to32: impl Fn(T) -> f32,
) -> Data {
    match dst {
        ElemType::I1 => Data::Int(v.iter().map(|&a| (to64(a) != 0.0) as i64).collect()),
        ElemType::Int(_) | ElemType::UInt(_) => {
            Data::Int(v.iter().map(|&a| float_to_int(dst, to64(a))).collect())
        }
        ElemType::F64 => Data::F64(v.iter().map(|&a| to64(a)).collect()),
        ElemType::Complex64 => Data::C64(v.iter().map(|&a| Complex::new(to32(a), 0.0)).collect()),
        ElemType::Complex128 => Data::C128(v.iter().map(|&a| Complex::new(to64(a), 0.0)).collect()),
        ElemType::F32 => Data::F32(v.iter().map(|&a| to32(a)).collect()),
        _ if std::mem::size_of::<T>() == 4 => {
            Data::F32(v.iter().map(|&a| round_f32(dst, to32(a))).collect())
        }
        _ => Data::F32(
            v.iter()
                .map(|&a| round_f64_to_f32class(dst, to64(a)))
                .collect(),
        ),
    }
}

fn from_complex(dst: ElemType, v: impl Iterator<Item = (f64, f64)>) -> Data {
    match dst {
        ElemType::Complex64 => {
            Data::C64(v.map(|(r, i)| Complex::new(r as f32, i as f32)).collect())
        }
        ElemType::Complex128 => Data::C128(v.map(|(r, i)| Complex::new(r, i)).collect()),
        ElemType::I1 => Data::Int(v.map(|(r, i)| (r != 0.0 || i != 0.0) as i64).collect()),
        ElemType::Int(_) | ElemType::UInt(_) => {
            Data::Int(v.map(|(r, _)| float_to_int(dst, r)).collect())
        }
        ElemType::F64 => Data::F64(v.map(|(r, _)| r).collect()),
        _ => Data::F32(v.map(|(r, _)| round_f64_to_f32class(dst, r)).collect()),
    }
}

/// `bitcast_convert`: reinterprets the little-endian bytes of the operand.
pub fn bitcast(x: &Tensor, out: &TensorType) -> Result<Tensor, String> {
    let bytes = x.to_bytes();
    let want = out.num_elements() as usize * out.elem.byte_width();
    if bytes.len() != want {
        return Err(format!(
            "cannot bitcast {} bytes to {}",
            bytes.len(),
            out.elem
        ));
    }
    Tensor::from_bytes(out.clone(), &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_to_int_saturates_like_xla() {
        // From jax: convert_element_type of [nan, inf, -inf, 3e9, -1.5, 300.7] on XLA:CPU.
        let i32t = ElemType::Int(32);
        assert_eq!(float_to_int(i32t, f64::NAN), 0);
        assert_eq!(float_to_int(i32t, f64::INFINITY), i32::MAX as i64);
        assert_eq!(float_to_int(i32t, -3e9), i32::MIN as i64);
        assert_eq!(float_to_int(i32t, -1.5), -1);
        assert_eq!(float_to_int(ElemType::UInt(8), 300.7), 255);
        assert_eq!(float_to_int(ElemType::UInt(8), -1.5), 0);
        assert_eq!(float_to_int(ElemType::UInt(64), f64::INFINITY), -1);
    }

    #[test]
    fn bitcast_f32_to_i32() {
        let x = Tensor::from_f32(&[1], &[1.0]).unwrap();
        let r = bitcast(&x, &TensorType::new(ElemType::Int(32), &[1])).unwrap();
        assert_eq!(r.as_i64().unwrap(), &[0x3f80_0000]);
    }
}
