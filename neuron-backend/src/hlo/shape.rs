//! IR types and constants as XLA shapes and literals.
//!
//! Owns: [`prim`] (element type -> `PrimitiveType`), [`array_shape`] / [`shape_of`]
//! (IR type -> `ShapeProto`), [`literal`] (dense constant -> `LiteralProto`).
//! Invariants: every array shape carries a row-major layout
//! (`minor_to_major = [rank-1, ..., 0]`) and no dynamic dimensions; tuple shapes carry no
//! layout (XLA keeps layouts on the leaves only).

use super::proto::{LayoutProto, LiteralProto, PrimitiveType, ShapeProto};
use super::HloError;
use neuronc_ir::{DenseElements, ElemType, F8Kind, Type, TypeId, TypeInterner};

/// The XLA primitive type of an element type.
pub fn prim(e: ElemType) -> Result<PrimitiveType, HloError> {
    use PrimitiveType as P;
    Ok(match e {
        ElemType::I1 => P::Pred,
        ElemType::Int(2) => P::S2,
        ElemType::Int(4) => P::S4,
        ElemType::Int(8) => P::S8,
        ElemType::Int(16) => P::S16,
        ElemType::Int(32) => P::S32,
        ElemType::Int(64) => P::S64,
        ElemType::UInt(2) => P::U2,
        ElemType::UInt(4) => P::U4,
        ElemType::UInt(8) => P::U8,
        ElemType::UInt(16) => P::U16,
        ElemType::UInt(32) => P::U32,
        ElemType::UInt(64) => P::U64,
        ElemType::F16 => P::F16,
        ElemType::BF16 => P::Bf16,
        ElemType::F32 => P::F32,
        ElemType::F64 => P::F64,
        ElemType::Complex64 => P::C64,
        ElemType::Complex128 => P::C128,
        ElemType::F8(k) => match k {
            F8Kind::E3M4 => P::F8e3m4,
            F8Kind::E4M3 => P::F8e4m3,
            F8Kind::E4M3FN => P::F8e4m3fn,
            F8Kind::E4M3FNUZ => P::F8e4m3fnuz,
            F8Kind::E4M3B11FNUZ => P::F8e4m3b11fnuz,
            F8Kind::E5M2 => P::F8e5m2,
            F8Kind::E5M2FNUZ => P::F8e5m2fnuz,
            F8Kind::E8M0FNU => P::F8e8m0fnu,
            F8Kind::F4E2M1FN => P::F4e2m1fn,
            F8Kind::F6E2M3FN | F8Kind::F6E3M2FN => {
                return Err(HloError::Unsupported(format!(
                    "element type {e} has no XLA primitive type"
                )))
            }
        },
        ElemType::Int(_) | ElemType::UInt(_) => {
            return Err(HloError::Unsupported(format!("element type {e}")))
        }
    })
}

/// A row-major array shape.
pub fn array_shape(e: ElemType, dims: &[i64]) -> Result<ShapeProto, HloError> {
    Ok(ShapeProto {
        element_type: prim(e)? as i32,
        dimensions: dims.to_vec(),
        tuple_shapes: Vec::new(),
        layout: Some(LayoutProto {
            minor_to_major: (0..dims.len() as i64).rev().collect(),
        }),
        is_dynamic_dimension: Vec::new(),
    })
}

/// A tuple shape of `elems`.
pub fn tuple_shape(elems: Vec<ShapeProto>) -> ShapeProto {
    ShapeProto {
        element_type: PrimitiveType::Tuple as i32,
        tuple_shapes: elems,
        ..ShapeProto::default()
    }
}

/// The token shape.
pub fn token_shape() -> ShapeProto {
    ShapeProto {
        element_type: PrimitiveType::Token as i32,
        ..ShapeProto::default()
    }
}

/// The shape of an IR type.
pub fn shape_of(types: &TypeInterner, ty: TypeId) -> Result<ShapeProto, HloError> {
    match types.get(ty) {
        Type::Tensor(t) => array_shape(t.elem, &t.shape),
        Type::Tuple(elems) => Ok(tuple_shape(
            elems
                .iter()
                .map(|&e| shape_of(types, e))
                .collect::<Result<_, _>>()?,
        )),
        Type::Token => Ok(token_shape()),
        Type::Future(_) => Err(HloError::Unsupported("!stablehlo.future values".into())),
    }
}

/// Same element type as `s`, other dimensions.
pub fn with_dims(s: &ShapeProto, dims: &[i64]) -> ShapeProto {
    ShapeProto {
        element_type: s.element_type,
        dimensions: dims.to_vec(),
        tuple_shapes: Vec::new(),
        layout: Some(LayoutProto {
            minor_to_major: (0..dims.len() as i64).rev().collect(),
        }),
        is_dynamic_dimension: Vec::new(),
    }
}

/// Same dimensions as `s`, element type `p`.
pub fn with_prim(s: &ShapeProto, p: PrimitiveType) -> ShapeProto {
    ShapeProto {
        element_type: p as i32,
        ..s.clone()
    }
}

fn chunks<const N: usize>(data: &[u8]) -> impl Iterator<Item = [u8; N]> + '_ {
    data.chunks_exact(N).map(|c| {
        let mut a = [0u8; N];
        a.copy_from_slice(c);
        a
    })
}

/// The literal of a dense constant whose data is `data` (all elements, little-endian, the
/// IR's storage convention) and whose shape is `shape`.
pub fn literal(e: ElemType, data: &[u8], shape: ShapeProto) -> Result<LiteralProto, HloError> {
    use PrimitiveType as P;
    let mut l = LiteralProto {
        shape: Some(shape),
        ..LiteralProto::default()
    };
    let raw = data.to_vec();
    match prim(e)? {
        P::Pred => l.preds = data.iter().map(|&b| b != 0).collect(),
        P::S2 => l.s2s = raw,
        P::S4 => l.s4s = raw,
        P::S8 => l.s8s = raw,
        P::U2 => l.u2s = raw,
        P::U4 => l.u4s = raw,
        P::U8 => l.u8s = raw,
        P::S16 => l.s16s = raw,
        P::U16 => l.u16s = raw,
        P::F16 => l.f16s = raw,
        P::Bf16 => l.bf16s = raw,
        P::S32 => l.s32s = chunks::<4>(data).map(i32::from_le_bytes).collect(),
        P::U32 => l.u32s = chunks::<4>(data).map(u32::from_le_bytes).collect(),
        P::S64 => l.s64s = chunks::<8>(data).map(i64::from_le_bytes).collect(),
        P::U64 => l.u64s = chunks::<8>(data).map(u64::from_le_bytes).collect(),
        P::F32 => l.f32s = chunks::<4>(data).map(f32::from_le_bytes).collect(),
        P::F64 => l.f64s = chunks::<8>(data).map(f64::from_le_bytes).collect(),
        P::C64 => l.c64s = chunks::<4>(data).map(f32::from_le_bytes).collect(),
        P::C128 => l.c128s = chunks::<8>(data).map(f64::from_le_bytes).collect(),
        P::F8e3m4 => l.f8e3m4s = raw,
        P::F8e4m3 => l.f8e4m3s = raw,
        P::F8e4m3fn => l.f8e4m3fns = raw,
        P::F8e4m3fnuz => l.f8e4m3fnuzs = raw,
        P::F8e4m3b11fnuz => l.f8e4m3b11fnuzs = raw,
        P::F8e5m2 => l.f8e5m2s = raw,
        P::F8e5m2fnuz => l.f8e5m2fnuzs = raw,
        P::F8e8m0fnu => l.f8e8m0fnus = raw,
        P::F4e2m1fn => l.f4e2m1fns = raw,
        P::Tuple | P::Token | P::OpaqueType | P::PrimitiveTypeInvalid => {
            return Err(HloError::Unsupported(format!("constant of type {e}")))
        }
    }
    Ok(l)
}

/// The literal of a dense attribute with all elements materialized.
pub fn dense_literal(d: &DenseElements, shape: ShapeProto) -> Result<LiteralProto, HloError> {
    literal(d.elem, &d.to_bytes(), shape)
}

/// A rank-0 literal of type `p` holding `v` (converted like a C cast).
pub fn scalar_literal(p: PrimitiveType, v: f64) -> Result<LiteralProto, HloError> {
    use PrimitiveType as P;
    let mut l = LiteralProto {
        shape: Some(ShapeProto {
            element_type: p as i32,
            layout: Some(LayoutProto::default()),
            ..ShapeProto::default()
        }),
        ..LiteralProto::default()
    };
    match p {
        P::Pred => l.preds = vec![v != 0.0],
        P::S8 => l.s8s = vec![v as i8 as u8],
        P::U8 => l.u8s = vec![v as u8],
        P::S16 => l.s16s = (v as i16).to_le_bytes().to_vec(),
        P::U16 => l.u16s = (v as u16).to_le_bytes().to_vec(),
        P::S32 => l.s32s = vec![v as i32],
        P::U32 => l.u32s = vec![v as u32],
        P::S64 => l.s64s = vec![v as i64],
        P::U64 => l.u64s = vec![v as u64],
        P::F16 => l.f16s = half::f16::from_f64(v).to_le_bytes().to_vec(),
        P::Bf16 => l.bf16s = half::bf16::from_f64(v).to_le_bytes().to_vec(),
        P::F32 => l.f32s = vec![v as f32],
        P::F64 => l.f64s = vec![v],
        P::C64 => l.c64s = vec![v as f32, 0.0],
        P::C128 => l.c128s = vec![v, 0.0],
        other => {
            return Err(HloError::Unsupported(format!(
                "scalar constant of type {other:?}"
            )))
        }
    }
    Ok(l)
}

/// The element type of an array shape, if it is one.
pub fn prim_of(s: &ShapeProto) -> Option<PrimitiveType> {
    PrimitiveType::try_from(s.element_type).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_major_layouts() {
        let s = array_shape(ElemType::F32, &[2, 3, 4]).unwrap();
        assert_eq!(s.layout.unwrap().minor_to_major, vec![2, 1, 0]);
        let s = array_shape(ElemType::BF16, &[]).unwrap();
        assert_eq!(s.element_type, PrimitiveType::Bf16 as i32);
        assert!(s.layout.unwrap().minor_to_major.is_empty());
    }

    #[test]
    fn literals_by_type() {
        let one = 1.5f32.to_le_bytes();
        let l = literal(
            ElemType::F32,
            &one,
            array_shape(ElemType::F32, &[]).unwrap(),
        )
        .unwrap();
        assert_eq!(l.f32s, vec![1.5]);
        let l = literal(
            ElemType::Int(32),
            &[255, 255, 255, 255, 2, 0, 0, 0],
            array_shape(ElemType::Int(32), &[2]).unwrap(),
        )
        .unwrap();
        assert_eq!(l.s32s, vec![-1, 2]);
        let l = literal(
            ElemType::I1,
            &[0, 1],
            array_shape(ElemType::I1, &[2]).unwrap(),
        )
        .unwrap();
        assert_eq!(l.preds, vec![false, true]);
    }
}
