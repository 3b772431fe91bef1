//! Host tensors: a [`TensorType`] plus element storage.
//!
//! Owns: [`Tensor`], [`Data`] and the byte encoding of every element type.
//! Invariants:
//! * Storage is by *compute class*: every integer type and `i1` is held as `i64` in
//!   canonical form (signed types sign-extended from their width, unsigned types
//!   zero-extended, so `ui64` is its bit pattern; `i1` is 0 or 1); `f32` and every narrower
//!   float (`f16`, `bf16`, the f8/f6/f4 family) as `f32` values that are exactly
//!   representable in the element type; `f64` as `f64`; complex as `Complex<f32/f64>`.
//! * `data.len() == ty.num_elements()`, row-major.
//! * Tensors are cheap to clone (the storage is shared behind an `Arc`).

use crate::floatfmt;
use half::{bf16, f16};
use neuronc_ir::{DenseElements, ElemType, Module, TensorType};
use num_complex::Complex;
use std::sync::Arc;

/// Element storage, by compute class (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    Int(Vec<i64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    C64(Vec<Complex<f32>>),
    C128(Vec<Complex<f64>>),
}

impl Data {
    pub fn len(&self) -> usize {
        match self {
            Data::Int(v) => v.len(),
            Data::F32(v) => v.len(),
            Data::F64(v) => v.len(),
            Data::C64(v) => v.len(),
            Data::C128(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Builds storage of `len` copies of element `i` of `self` for each index in `idx`.
    pub fn gather(&self, idx: &[usize]) -> Data {
        match self {
            Data::Int(v) => Data::Int(idx.iter().map(|&i| v[i]).collect()),
            Data::F32(v) => Data::F32(idx.iter().map(|&i| v[i]).collect()),
            Data::F64(v) => Data::F64(idx.iter().map(|&i| v[i]).collect()),
            Data::C64(v) => Data::C64(idx.iter().map(|&i| v[i]).collect()),
            Data::C128(v) => Data::C128(idx.iter().map(|&i| v[i]).collect()),
        }
    }
    /// Storage of `n` copies of element `i` (empty if there is no element `i`).
    pub fn repeat(&self, i: usize, n: usize) -> Data {
        match self {
            Data::Int(v) => Data::Int(v.get(i).map_or(Vec::new(), |&x| vec![x; n])),
            Data::F32(v) => Data::F32(v.get(i).map_or(Vec::new(), |&x| vec![x; n])),
            Data::F64(v) => Data::F64(v.get(i).map_or(Vec::new(), |&x| vec![x; n])),
            Data::C64(v) => Data::C64(v.get(i).map_or(Vec::new(), |&x| vec![x; n])),
            Data::C128(v) => Data::C128(v.get(i).map_or(Vec::new(), |&x| vec![x; n])),
        }
    }
    /// Empty storage of the same class with room for `n` elements.
    pub fn empty_like(&self, n: usize) -> Data {
        match self {
            Data::Int(_) => Data::Int(Vec::with_capacity(n)),
            Data::F32(_) => Data::F32(Vec::with_capacity(n)),
            Data::F64(_) => Data::F64(Vec::with_capacity(n)),
            Data::C64(_) => Data::C64(Vec::with_capacity(n)),
            Data::C128(_) => Data::C128(Vec::with_capacity(n)),
        }
    }
    /// Appends element `i` of `src` (same class) to `self`.
    pub fn push_from(&mut self, src: &Data, i: usize) {
        match (self, src) {
            (Data::Int(d), Data::Int(s)) => d.push(s[i]),
            (Data::F32(d), Data::F32(s)) => d.push(s[i]),
            (Data::F64(d), Data::F64(s)) => d.push(s[i]),
            (Data::C64(d), Data::C64(s)) => d.push(s[i]),
            (Data::C128(d), Data::C128(s)) => d.push(s[i]),
            _ => {}
        }
    }
    /// Copies element `j` of `src` (same class) to position `i` of `self`.
    pub fn set_from(&mut self, i: usize, src: &Data, j: usize) {
        match (self, src) {
            (Data::Int(d), Data::Int(s)) => d[i] = s[j],
            (Data::F32(d), Data::F32(s)) => d[i] = s[j],
            (Data::F64(d), Data::F64(s)) => d[i] = s[j],
            (Data::C64(d), Data::C64(s)) => d[i] = s[j],
            (Data::C128(d), Data::C128(s)) => d[i] = s[j],
            _ => {}
        }
    }
    /// Storage of `n` zeros of the class of `elem`.
    pub fn zeros(elem: ElemType, n: usize) -> Data {
        match elem {
            ElemType::I1 | ElemType::Int(_) | ElemType::UInt(_) => Data::Int(vec![0; n]),
            ElemType::F64 => Data::F64(vec![0.0; n]),
            ElemType::Complex64 => Data::C64(vec![Complex::new(0.0, 0.0); n]),
            ElemType::Complex128 => Data::C128(vec![Complex::new(0.0, 0.0); n]),
            _ => Data::F32(vec![0.0; n]),
        }
    }
}

/// Brings an integer to the canonical form of `elem` (wraps to its width).
pub fn wrap_int(elem: ElemType, v: i64) -> i64 {
    match elem {
        ElemType::I1 => v & 1,
        ElemType::Int(b) if b < 64 => {
            let s = 64 - b as u32;
            (v << s) >> s
        }
        ElemType::UInt(b) if b < 64 => v & ((1i64 << b) - 1),
        _ => v,
    }
}

/// Rounds an `f32` value to the float element type `elem` stored in `f32` storage.
pub fn round_f32(elem: ElemType, v: f32) -> f32 {
    match elem {
        ElemType::F16 => f16::from_f32(v).to_f32(),
        ElemType::BF16 => bf16::from_f32(v).to_f32(),
        ElemType::F8(k) => floatfmt::round(k, v as f64) as f32,
        _ => v,
    }
}

/// Rounds an `f64` value to `elem` (an f32-class float type).
pub fn round_f64_to_f32class(elem: ElemType, v: f64) -> f32 {
    match elem {
        ElemType::F16 => f16::from_f64(v).to_f32(),
        ElemType::BF16 => bf16::from_f64(v).to_f32(),
        ElemType::F8(k) => floatfmt::round(k, v) as f32,
        _ => v as f32,
    }
}

/// A host tensor.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    ty: TensorType,
    data: Arc<Data>,
}

fn shape_len(shape: &[i64]) -> usize {
    shape.iter().map(|&d| d.max(0) as usize).product()
}

impl Tensor {
    /// Builds a tensor; `data` must be of `ty`'s class and length (checked).
    pub fn new(ty: TensorType, data: Data) -> Result<Tensor, String> {
        let class_ok = matches!(
            (ty.elem, &data),
            (
                ElemType::I1 | ElemType::Int(_) | ElemType::UInt(_),
                Data::Int(_)
            ) | (ElemType::F64, Data::F64(_))
                | (ElemType::Complex64, Data::C64(_))
                | (ElemType::Complex128, Data::C128(_))
                | (
                    ElemType::F16 | ElemType::BF16 | ElemType::F32 | ElemType::F8(_),
                    Data::F32(_)
                )
        );
        if !class_ok {
            return Err(format!("storage does not match element type {}", ty.elem));
        }
        if data.len() != shape_len(&ty.shape) {
            return Err(format!(
                "{} elements for shape {:?}",
                data.len(),
                ty.shape.as_ref()
            ));
        }
        Ok(Tensor {
            ty,
            data: Arc::new(data),
        })
    }
    /// Internal constructor when class and length are known to match.
    pub(crate) fn from_parts(ty: TensorType, data: Data) -> Tensor {
        debug_assert_eq!(data.len(), shape_len(&ty.shape));
        Tensor {
            ty,
            data: Arc::new(data),
        }
    }
    /// Same storage, another type of the same class and element count (reshape).
    pub(crate) fn with_type(&self, ty: TensorType) -> Tensor {
        Tensor {
            ty,
            data: self.data.clone(),
        }
    }

    pub fn from_f32(shape: &[i64], v: &[f32]) -> Result<Tensor, String> {
        Tensor::new(TensorType::new(ElemType::F32, shape), Data::F32(v.to_vec()))
    }
    pub fn from_f64(shape: &[i64], v: &[f64]) -> Result<Tensor, String> {
        Tensor::new(TensorType::new(ElemType::F64, shape), Data::F64(v.to_vec()))
    }
    /// Integers of type `elem` (an integer type); values are wrapped to its width.
    pub fn from_i64(elem: ElemType, shape: &[i64], v: &[i64]) -> Result<Tensor, String> {
        if !(elem.is_integer() || elem.is_bool()) {
            return Err(format!("{elem} is not an integer type"));
        }
        let data = v.iter().map(|&x| wrap_int(elem, x)).collect();
        Tensor::new(TensorType::new(elem, shape), Data::Int(data))
    }
    pub fn from_bool(shape: &[i64], v: &[bool]) -> Result<Tensor, String> {
        let data = v.iter().map(|&b| b as i64).collect();
        Tensor::new(TensorType::new(ElemType::I1, shape), Data::Int(data))
    }
    /// Float values of any float type `elem`, rounded to it (nearest even).
    pub fn from_f64_as(elem: ElemType, shape: &[i64], v: &[f64]) -> Result<Tensor, String> {
        let data = match elem {
            ElemType::F64 => Data::F64(v.to_vec()),
            ElemType::F32 => Data::F32(v.iter().map(|&x| x as f32).collect()),
            e if e.is_float() => {
                Data::F32(v.iter().map(|&x| round_f64_to_f32class(e, x)).collect())
            }
            _ => return Err(format!("{elem} is not a float type")),
        };
        Tensor::new(TensorType::new(elem, shape), data)
    }
    /// A scalar tensor.
    pub fn scalar(elem: ElemType, data: Data) -> Tensor {
        Tensor::from_parts(TensorType::new(elem, &[]), data)
    }

    /// Decodes little-endian element bytes (`byte_width` bytes per element, as in dense
    /// attributes and `.npy` files).
    pub fn from_bytes(ty: TensorType, bytes: &[u8]) -> Result<Tensor, String> {
        let n = shape_len(&ty.shape);
        let w = ty.elem.byte_width();
        if bytes.len() != n * w {
            return Err(format!(
                "{} bytes for {} elements of {}",
                bytes.len(),
                n,
                ty.elem
            ));
        }
        let data = decode_bytes(ty.elem, bytes);
        Tensor::new(ty, data)
    }

    /// Builds the tensor of a `dense<...>` attribute.
    pub fn from_dense(d: &DenseElements, m: &Module) -> Result<Tensor, String> {
        let ty = m
            .types
            .tensor_of(d.ty)
            .ok_or("dense attribute without tensor type")?
            .clone();
        if d.is_splat() {
            let one = decode_bytes(d.elem, d.element_bytes(0));
            let n = shape_len(&ty.shape);
            let data = one.repeat(0, n);
            return Tensor::new(ty, data);
        }
        Tensor::from_bytes(ty, &d.to_bytes())
    }

    /// Encodes the elements as little-endian bytes (inverse of [`Tensor::from_bytes`]).
    pub fn to_bytes(&self) -> Vec<u8> {
        encode_bytes(self.ty.elem, &self.data)
    }

    pub fn ty(&self) -> &TensorType {
        &self.ty
    }
    pub fn elem(&self) -> ElemType {
        self.ty.elem
    }
    pub fn shape(&self) -> &[i64] {
        &self.ty.shape
    }
    pub fn rank(&self) -> usize {
        self.ty.shape.len()
    }
    pub fn len(&self) -> usize {
        self.data.len()
    }
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
    pub fn data(&self) -> &Data {
        &self.data
    }
    /// Takes the storage out (copying only if shared).
    pub fn into_data(self) -> Data {
        Arc::try_unwrap(self.data).unwrap_or_else(|a| (*a).clone())
    }
    pub fn as_f32(&self) -> Option<&[f32]> {
        match &*self.data {
            Data::F32(v) => Some(v),
            _ => None,
        }
    }
    pub fn as_f64(&self) -> Option<&[f64]> {
        match &*self.data {
            Data::F64(v) => Some(v),
            _ => None,
        }
    }
    pub fn as_i64(&self) -> Option<&[i64]> {
        match &*self.data {
            Data::Int(v) => Some(v),
            _ => None,
        }
    }
    /// Real values as `f64` (ints by value, complex: real part).
    pub fn to_f64_vec(&self) -> Vec<f64> {
        match &*self.data {
            Data::Int(v) if self.elem().is_unsigned() => {
                v.iter().map(|&x| x as u64 as f64).collect()
            }
            Data::Int(v) => v.iter().map(|&x| x as f64).collect(),
            Data::F32(v) => v.iter().map(|&x| x as f64).collect(),
            Data::F64(v) => v.clone(),
            Data::C64(v) => v.iter().map(|c| c.re as f64).collect(),
            Data::C128(v) => v.iter().map(|c| c.re).collect(),
        }
    }
    /// Integer values (floats truncated toward zero, saturating).
    pub fn to_i64_vec(&self) -> Vec<i64> {
        match &*self.data {
            Data::Int(v) => v.clone(),
            _ => self.to_f64_vec().iter().map(|&x| x as i64).collect(),
        }
    }
    /// Element `i` as `f64` (see [`Tensor::to_f64_vec`]).
    pub fn get_f64(&self, i: usize) -> f64 {
        match &*self.data {
            Data::Int(v) if self.elem().is_unsigned() => v[i] as u64 as f64,
            Data::Int(v) => v[i] as f64,
            Data::F32(v) => v[i] as f64,
            Data::F64(v) => v[i],
            Data::C64(v) => v[i].re as f64,
            Data::C128(v) => v[i].re,
        }
    }
    /// Element `i` as an integer index (floats truncated).
    pub fn get_i64(&self, i: usize) -> i64 {
        match &*self.data {
            Data::Int(v) => v[i],
            _ => self.get_f64(i) as i64,
        }
    }
}

fn decode_bytes(elem: ElemType, bytes: &[u8]) -> Data {
    let w = elem.byte_width();
    let chunks = bytes.chunks_exact(w.max(1));
    match elem {
        ElemType::I1 => Data::Int(bytes.iter().map(|&b| (b != 0) as i64).collect()),
        ElemType::Int(_) | ElemType::UInt(_) => Data::Int(
            chunks
                .map(|c| {
                    let mut buf = [0u8; 8];
                    buf[..w].copy_from_slice(c);
                    wrap_int(elem, i64::from_le_bytes(buf))
                })
                .collect(),
        ),
        ElemType::F16 => Data::F32(
            chunks
                .map(|c| f16::from_le_bytes([c[0], c[1]]).to_f32())
                .collect(),
        ),
        ElemType::BF16 => Data::F32(
            chunks
                .map(|c| bf16::from_le_bytes([c[0], c[1]]).to_f32())
                .collect(),
        ),
        ElemType::F8(k) => Data::F32(
            bytes
                .iter()
                .map(|&b| floatfmt::decode(k, b) as f32)
                .collect(),
        ),
        ElemType::F32 => Data::F32(
            chunks
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        ),
        ElemType::F64 => Data::F64(chunks.map(|c| f64::from_le_bytes(arr8(c))).collect()),
        ElemType::Complex64 => Data::C64(
            chunks
                .map(|c| {
                    let re = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    let im = f32::from_le_bytes([c[4], c[5], c[6], c[7]]);
                    Complex::new(re, im)
                })
                .collect(),
        ),
        ElemType::Complex128 => Data::C128(
            chunks
                .map(|c| {
                    Complex::new(
                        f64::from_le_bytes(arr8(&c[..8])),
                        f64::from_le_bytes(arr8(&c[8..])),
                    )
                })
                .collect(),
        ),
    }
}

fn arr8(c: &[u8]) -> [u8; 8] {
    let mut b = [0u8; 8];
    b.copy_from_slice(&c[..8]);
    b
}

fn encode_bytes(elem: ElemType, data: &Data) -> Vec<u8> {
    let w = elem.byte_width();
    let mut out = Vec::with_capacity(data.len() * w);
    match data {
        Data::Int(v) => {
            for &x in v {
                out.extend_from_slice(&x.to_le_bytes()[..w]);
            }
        }
        Data::F32(v) => match elem {
            ElemType::F16 => v
                .iter()
                .for_each(|&x| out.extend(f16::from_f32(x).to_le_bytes())),
            ElemType::BF16 => v
                .iter()
                .for_each(|&x| out.extend(bf16::from_f32(x).to_le_bytes())),
            ElemType::F8(k) => v
                .iter()
                .for_each(|&x| out.push(floatfmt::encode(k, x as f64))),
            _ => v.iter().for_each(|&x| out.extend(x.to_le_bytes())),
        },
        Data::F64(v) => v.iter().for_each(|&x| out.extend(x.to_le_bytes())),
        Data::C64(v) => v.iter().for_each(|c| {
            out.extend(c.re.to_le_bytes());
            out.extend(c.im.to_le_bytes());
        }),
        Data::C128(v) => v.iter().for_each(|c| {
            out.extend(c.re.to_le_bytes());
            out.extend(c.im.to_le_bytes());
        }),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_is_canonical() {
        assert_eq!(wrap_int(ElemType::Int(8), 200), -56);
        assert_eq!(wrap_int(ElemType::UInt(8), -1), 255);
        assert_eq!(wrap_int(ElemType::Int(4), 8), -8);
        assert_eq!(wrap_int(ElemType::UInt(64), -1), -1);
    }

    #[test]
    fn bytes_round_trip() {
        let t = Tensor::from_f64_as(ElemType::BF16, &[3], &[1.0, -2.5, 3.0e38]).unwrap();
        let b = t.to_bytes();
        assert_eq!(&b[..2], &[0x80, 0x3f]);
        let u = Tensor::from_bytes(t.ty().clone(), &b).unwrap();
        assert_eq!(t, u);
        let i = Tensor::from_i64(ElemType::Int(16), &[2], &[-2, 40000]).unwrap();
        assert_eq!(i.as_i64().unwrap(), &[-2, 40000 - 65536]);
        assert_eq!(
            Tensor::from_bytes(i.ty().clone(), &i.to_bytes()).unwrap(),
            i
        );
    }
}
