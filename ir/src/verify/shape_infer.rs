//! Result-type inference for whole ops: reads an op's operand types and attributes from a
//! [`Module`] and applies the pure shape rules of `shape.rs` to them.
//!
//! Owns: [`infer_result_types`] and the attribute readers it needs (windowed-op padding,
//! convolution window defaults). Invariants: never panics on malformed ops; an op whose
//! attributes are missing or of the wrong kind yields `None` (no inference), a rule
//! violation yields the rule's [`ShapeError`](super::shape::ShapeError).

use super::shape::{
    concatenate, convolution, dot_general, gather, pad, reduce, reduce_window, slice, transpose,
    ConvWindow, ShapeResult, Window,
};
use crate::module::{Module, OpId};
use crate::ops::OpKind;
use crate::types::{ElemType, TensorType, Type};

/// Result types that follow from an op's operands and attributes, for the ops where they
/// do (`None` for ops whose result type is free or given explicitly, e.g. `reshape`).
/// Errors name the first constraint the operands or attributes break.
pub fn infer_result_types(m: &Module, op: OpId) -> Option<ShapeResult<Vec<Type>>> {
    let o = m.op(op);
    let t = |i: usize| o.operands.get(i).and_then(|&v| m.tensor_type(v));
    let tensor = |elem: ElemType, shape: Vec<i64>| Type::Tensor(TensorType::new(elem, &shape));
    let ints = |n: &str| o.attrs.i64_array(n);
    let same_elem = |shape: ShapeResult<Vec<i64>>, e: ElemType| shape.map(|s| vec![tensor(e, s)]);
    Some(match o.kind {
        OpKind::Abs if t(0)?.elem.is_complex() => {
            let a = t(0)?;
            Ok(vec![tensor(a.elem.complex_part()?, a.shape.to_vec())])
        }
        k if k.traits().contains(crate::Traits::SAME_TYPE) && !o.operands.is_empty() => {
            Ok(vec![m.ty(m.value_type(o.operands[0])).clone()])
        }
        OpKind::Compare | OpKind::IsFinite => Ok(vec![tensor(ElemType::I1, t(0)?.shape.to_vec())]),
        OpKind::Transpose => {
            let a = t(0)?;
            same_elem(transpose(&a.shape, &ints("permutation")?), a.elem)
        }
        OpKind::Slice => {
            let a = t(0)?;
            same_elem(
                slice(
                    &a.shape,
                    &ints("start_indices")?,
                    &ints("limit_indices")?,
                    &ints("strides")?,
                ),
                a.elem,
            )
        }
        OpKind::Pad => {
            let a = t(0)?;
            same_elem(
                pad(
                    &a.shape,
                    &ints("edge_padding_low")?,
                    &ints("edge_padding_high")?,
                    &ints("interior_padding")?,
                ),
                a.elem,
            )
        }
        OpKind::Concatenate => {
            let ts: Option<Vec<&TensorType>> = (0..o.operands.len()).map(t).collect();
            let ts = ts?;
            let shapes: Vec<&[i64]> = ts.iter().map(|t| &t.shape[..]).collect();
            same_elem(
                concatenate(&shapes, o.attrs.int("dimension")?),
                ts.first()?.elem,
            )
        }
        OpKind::DotGeneral => {
            let (a, b) = (t(0)?, t(1)?);
            let crate::Attr::DotDims(dd) = o.attrs.get("dot_dimension_numbers")? else {
                return None;
            };
            let e = m
                .tensor_type(*o.results.first()?)
                .map_or(a.elem, |r| r.elem);
            same_elem(dot_general(&a.shape, &b.shape, dd), e)
        }
        OpKind::Reduce => {
            let n = o.operands.len() / 2;
            let a = t(0)?;
            let shape = reduce(&a.shape, &ints("dimensions")?);
            let body = m.region(*o.regions.first()?);
            let ret = m.op(*body.ops.last()?);
            let elems: Option<Vec<ElemType>> = ret
                .operands
                .iter()
                .map(|&v| m.tensor_type(v).map(|t| t.elem))
                .collect();
            let elems = elems?;
            if elems.len() != n {
                return None;
            }
            shape.map(|s| elems.iter().map(|&e| tensor(e, s.clone())).collect())
        }
        OpKind::Convolution => {
            let (a, b) = (t(0)?, t(1)?);
            let crate::Attr::ConvDims(cd) = o.attrs.get("dimension_numbers")? else {
                return None;
            };
            let s = a.rank().checked_sub(2)?;
            let e = m
                .tensor_type(*o.results.first()?)
                .map_or(a.elem, |r| r.elem);
            same_elem(
                convolution(&a.shape, &b.shape, cd, &conv_window_of(o, s)?),
                e,
            )
        }
        OpKind::ReduceWindow => {
            let a = t(0)?;
            let r = a.rank();
            let ones = || vec![1i64; r];
            let w = Window {
                dims: ints("window_dimensions")?,
                strides: ints("window_strides").unwrap_or_else(ones),
                base_dilations: ints("base_dilations").unwrap_or_else(ones),
                window_dilations: ints("window_dilations").unwrap_or_else(ones),
                padding: padding_of(o, r)?,
            };
            let shape = reduce_window(&a.shape, &w);
            let elems: Option<Vec<ElemType>> = o
                .results
                .iter()
                .map(|&v| m.tensor_type(v).map(|t| t.elem))
                .collect();
            let elems = elems?;
            shape.map(|s| elems.iter().map(|&e| tensor(e, s.clone())).collect())
        }
        OpKind::Gather => {
            let (a, idx) = (t(0)?, t(1)?);
            let crate::Attr::GatherDims(g) = o.attrs.get("dimension_numbers")? else {
                return None;
            };
            same_elem(
                gather(&a.shape, &idx.shape, g, &ints("slice_sizes")?),
                a.elem,
            )
        }
        OpKind::Broadcast => {
            let a = t(0)?;
            let mut s = ints("broadcast_sizes")?;
            s.extend_from_slice(&a.shape);
            Ok(vec![tensor(a.elem, s)])
        }
        OpKind::Real | OpKind::Imag => {
            let a = t(0)?;
            Ok(vec![tensor(
                a.elem.complex_part().unwrap_or(a.elem),
                a.shape.to_vec(),
            )])
        }
        OpKind::Tuple => Ok(vec![Type::Tuple(
            o.operands.iter().map(|&v| m.value_type(v)).collect(),
        )]),
        OpKind::GetTupleElement => {
            let Type::Tuple(elems) = m.ty(m.value_type(*o.operands.first()?)) else {
                return None;
            };
            let i = usize::try_from(o.attrs.int("index")?).ok()?;
            Ok(vec![m.ty(*elems.get(i)?).clone()])
        }
        _ => return None,
    })
}

/// `padding` of a windowed op as `(low, high)` pairs (zeros when absent).
fn padding_of(o: &crate::Op, rank: usize) -> Option<Vec<(i64, i64)>> {
    let Some(a) = o.attrs.get("padding") else {
        return Some(vec![(0, 0); rank]);
    };
    let v = a.as_i64_array()?;
    if v.len() % 2 != 0 {
        return None;
    }
    Some(v.chunks(2).map(|p| (p[0], p[1])).collect())
}

/// The window attributes of a convolution with spec defaults for absent ones.
fn conv_window_of(o: &crate::Op, s: usize) -> Option<ConvWindow> {
    let ints = |n: &str| o.attrs.i64_array(n);
    let ones = || vec![1i64; s];
    Some(ConvWindow {
        strides: ints("window_strides").unwrap_or_else(ones),
        padding: padding_of(o, s)?,
        lhs_dilation: ints("lhs_dilation").unwrap_or_else(ones),
        rhs_dilation: ints("rhs_dilation").unwrap_or_else(ones),
        feature_group_count: o.attrs.int("feature_group_count").unwrap_or(1),
        batch_group_count: o.attrs.int("batch_group_count").unwrap_or(1),
    })
}
