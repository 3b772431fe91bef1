//! Shapes and literals of an `HloModuleProto`, as StableHLO type and attribute text.
//!
//! Owns: [`tensor_type`] (an array `ShapeProto` → `tensor<…>`), [`leaf_types`] (a tuple
//! shape flattened in order) and [`dense_text`] (a `LiteralProto` → `dense<…>`).
//! Invariants: layouts never change a type (they describe physical order only); a literal
//! is only accepted in the default row-major layout, so its data order is the logical
//! order; dynamic dimensions and token/opaque types are refused with
//! [`ImportError::Unsupported`], never approximated.

use super::ImportError;
use crate::hlo::proto::{LiteralProto, PrimitiveType, ShapeProto};
use std::fmt::Write;

/// The MLIR element type of an array primitive type.
pub fn elem_type(p: i32) -> Result<&'static str, ImportError> {
    use PrimitiveType as P;
    let p = P::try_from(p).map_err(|_| ImportError::malformed(format!("element type {p}")))?;
    Ok(match p {
        P::Pred => "i1",
        P::S2 => "i2",
        P::S4 => "i4",
        P::S8 => "i8",
        P::S16 => "i16",
        P::S32 => "i32",
        P::S64 => "i64",
        P::U2 => "ui2",
        P::U4 => "ui4",
        P::U8 => "ui8",
        P::U16 => "ui16",
        P::U32 => "ui32",
        P::U64 => "ui64",
        P::F16 => "f16",
        P::F32 => "f32",
        P::Bf16 => "bf16",
        P::F64 => "f64",
        P::F8e5m2 => "f8E5M2",
        P::F8e4m3 => "f8E4M3",
        P::F8e4m3fn => "f8E4M3FN",
        P::F8e4m3b11fnuz => "f8E4M3B11FNUZ",
        P::F8e3m4 => "f8E3M4",
        P::F8e5m2fnuz => "f8E5M2FNUZ",
        P::F8e4m3fnuz => "f8E4M3FNUZ",
        P::F4e2m1fn => "f4E2M1FN",
        P::F8e8m0fnu => "f8E8M0FNU",
        P::C64 => "complex<f32>",
        P::C128 => "complex<f64>",
        P::Tuple | P::OpaqueType | P::Token | P::PrimitiveTypeInvalid => {
            return Err(ImportError::Unsupported(format!(
                "{p:?} values (only arrays and tuples of arrays are imported)"
            )))
        }
    })
}

/// Whether `s` is a tuple shape.
pub fn is_tuple(s: &ShapeProto) -> bool {
    s.element_type == PrimitiveType::Tuple as i32
}

/// `tensor<AxBxT>` of an array shape.
pub fn tensor_type(s: &ShapeProto) -> Result<String, ImportError> {
    if s.is_dynamic_dimension.iter().any(|&d| d) {
        return Err(ImportError::Unsupported("dynamic dimensions".into()));
    }
    let elem = elem_type(s.element_type)?;
    let mut t = String::from("tensor<");
    for &d in &s.dimensions {
        if d < 0 {
            return Err(ImportError::malformed(format!("negative dimension {d}")));
        }
        let _ = write!(t, "{d}x");
    }
    t.push_str(elem);
    t.push('>');
    Ok(t)
}

/// The array types of a shape, tuples flattened depth-first.
pub fn leaf_types(s: &ShapeProto) -> Result<Vec<String>, ImportError> {
    if !is_tuple(s) {
        return Ok(vec![tensor_type(s)?]);
    }
    let mut out = Vec::new();
    for t in &s.tuple_shapes {
        out.extend(leaf_types(t)?);
    }
    Ok(out)
}

/// Number of elements of an array shape.
fn elements(s: &ShapeProto) -> Result<usize, ImportError> {
    s.dimensions.iter().try_fold(1usize, |n, &d| {
        usize::try_from(d)
            .ok()
            .and_then(|d| n.checked_mul(d))
            .ok_or_else(|| ImportError::malformed("literal too large".to_string()))
    })
}

/// `dense<…>` of an array literal of shape `s` (the instruction's shape).
pub fn dense_text(l: &LiteralProto, s: &ShapeProto) -> Result<String, ImportError> {
    let layout = l.shape.as_ref().and_then(|ls| ls.layout.as_ref());
    if let Some(layout) = layout {
        let rank = s.dimensions.len() as i64;
        let row_major = layout.minor_to_major.is_empty()
            || layout
                .minor_to_major
                .iter()
                .zip((0..rank).rev())
                .all(|(&a, b)| a == b);
        if !row_major {
            return Err(ImportError::Unsupported(
                "constants in a non-row-major layout".into(),
            ));
        }
    }
    let n = elements(s)?;
    let (bytes, width) = literal_bytes(l, s.element_type)?;
    if s.element_type == PrimitiveType::Pred as i32 {
        return pred_text(&l.preds, &s.dimensions, n);
    }
    if width.is_some_and(|w| bytes.len() != n * w) {
        return Err(ImportError::malformed(format!(
            "literal holds {} bytes for {n} elements",
            bytes.len()
        )));
    }
    let mut t = String::with_capacity(bytes.len() * 2 + 12);
    t.push_str("dense<\"0x");
    for b in &bytes {
        let _ = write!(t, "{b:02X}");
    }
    t.push_str("\">");
    Ok(t)
}

/// Booleans as a `dense<[[true, …], …]>` list nested like `dims` (or a splat).
fn pred_text(preds: &[bool], dims: &[i64], n: usize) -> Result<String, ImportError> {
    if preds.len() != n {
        return Err(ImportError::malformed(format!(
            "pred literal holds {} values for {n} elements",
            preds.len()
        )));
    }
    let word = |b: bool| if b { "true" } else { "false" };
    if let Some(&first) = preds.first() {
        if preds.iter().all(|&b| b == first) {
            return Ok(format!("dense<{}>", word(first)));
        }
    }
    let mut t = String::from("dense<");
    nested(&mut t, preds, dims, &word);
    t.push('>');
    Ok(t)
}

/// `items` (row-major, `dims` shaped) as nested `[…]` lists.
fn nested(t: &mut String, items: &[bool], dims: &[i64], word: &impl Fn(bool) -> &'static str) {
    let Some((&d, rest)) = dims.split_first() else {
        t.push_str(items.first().map_or("false", |&b| word(b)));
        return;
    };
    let step = items.len() / (d.max(1) as usize);
    t.push('[');
    for k in 0..d as usize {
        if k > 0 {
            t.push_str(", ");
        }
        nested(t, &items[k * step..(k + 1) * step], rest, word);
    }
    t.push(']');
}

/// The little-endian bytes of a literal's data and the bytes per element (`None`:
/// sub-byte types, whose packing the parser checks).
fn literal_bytes(l: &LiteralProto, p: i32) -> Result<(Vec<u8>, Option<usize>), ImportError> {
    use PrimitiveType as P;
    fn le<T: Copy, const N: usize>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
        v.iter().flat_map(|&x| f(x)).collect()
    }
    let p = P::try_from(p).map_err(|_| ImportError::malformed(format!("element type {p}")))?;
    Ok(match p {
        P::Pred => (Vec::new(), None),
        P::S2 => (l.s2s.clone(), None),
        P::S4 => (l.s4s.clone(), None),
        P::U2 => (l.u2s.clone(), None),
        P::U4 => (l.u4s.clone(), None),
        P::F4e2m1fn => (l.f4e2m1fns.clone(), None),
        P::S8 => (l.s8s.clone(), Some(1)),
        P::U8 => (l.u8s.clone(), Some(1)),
        P::S16 => (l.s16s.clone(), Some(2)),
        P::U16 => (l.u16s.clone(), Some(2)),
        P::F16 => (l.f16s.clone(), Some(2)),
        P::Bf16 => (l.bf16s.clone(), Some(2)),
        P::S32 => (le(&l.s32s, i32::to_le_bytes), Some(4)),
        P::U32 => (le(&l.u32s, u32::to_le_bytes), Some(4)),
        P::S64 => (le(&l.s64s, i64::to_le_bytes), Some(8)),
        P::U64 => (le(&l.u64s, u64::to_le_bytes), Some(8)),
        P::F32 => (le(&l.f32s, f32::to_le_bytes), Some(4)),
        P::F64 => (le(&l.f64s, f64::to_le_bytes), Some(8)),
        P::C64 => (le(&l.c64s, f32::to_le_bytes), Some(8)),
        P::C128 => (le(&l.c128s, f64::to_le_bytes), Some(16)),
        P::F8e3m4 => (l.f8e3m4s.clone(), Some(1)),
        P::F8e4m3 => (l.f8e4m3s.clone(), Some(1)),
        P::F8e4m3fn => (l.f8e4m3fns.clone(), Some(1)),
        P::F8e4m3fnuz => (l.f8e4m3fnuzs.clone(), Some(1)),
        P::F8e4m3b11fnuz => (l.f8e4m3b11fnuzs.clone(), Some(1)),
        P::F8e5m2 => (l.f8e5m2s.clone(), Some(1)),
        P::F8e5m2fnuz => (l.f8e5m2fnuzs.clone(), Some(1)),
        P::F8e8m0fnu => (l.f8e8m0fnus.clone(), Some(1)),
        P::Tuple | P::Token | P::OpaqueType | P::PrimitiveTypeInvalid => {
            return Err(ImportError::Unsupported(format!("constants of type {p:?}")))
        }
    })
}
