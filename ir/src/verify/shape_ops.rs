//! Rules of the data-movement ops: `constant`, `iota`, `broadcast_in_dim`, `broadcast`,
//! `reshape`, `transpose`, `reverse`, `slice`, `dynamic_slice`, `dynamic_update_slice`,
//! `concatenate`, `pad`, `get_dimension_size`.
//!
//! Invariants: result shapes that follow from operands and attributes are computed by
//! [`super::shape`] and compared with the declared result type (one error per op for the
//! result); attribute indices are range-checked before they are used.

use super::cx::{tensor_str, OpV};
use super::shape::{self, check_dims};
use crate::attr::Attr;
use crate::ops::OpKind;
use crate::types::ElemType;

pub(super) fn check(v: &mut OpV) {
    use OpKind::*;
    let _ = match v.op.kind {
        Constant => constant(v),
        Iota => iota(v),
        BroadcastInDim => broadcast_in_dim(v),
        Broadcast => broadcast(v),
        Reshape => reshape(v),
        Transpose => transpose(v),
        Reverse => reverse(v),
        Slice => slice(v),
        DynamicSlice => dynamic_slice(v),
        DynamicUpdateSlice => dynamic_update_slice(v),
        Concatenate => concatenate(v),
        Pad => pad(v),
        GetDimensionSize => get_dimension_size(v),
        _ => None,
    };
}

fn constant(v: &mut OpV) -> Option<()> {
    let rt = v.result_ty(0)?;
    match v.attr("value") {
        Some(Attr::Elements(e)) => {
            if e.ty != rt {
                let (a, b) = (v.ts(e.ty), v.ts(rt));
                v.err("C1", format!("requires the value and the output to have the same type, but the value has type {a} and the output has type {b}"));
            }
        }
        Some(_) => v.err(
            "",
            "expects attribute 'value' to be a dense elements attribute",
        ),
        None => v.err("", "requires attribute 'value'"),
    }
    Some(())
}

fn iota(v: &mut OpV) -> Option<()> {
    let r = v.result(0)?;
    let d = v.req_int("iota_dimension")?;
    if d < 0 || d as u64 >= r.rank() as u64 {
        v.err(
            "C1",
            format!(
                "expects iota_dimension in [0, {}) (the output rank), but got {d}",
                r.rank()
            ),
        );
    }
    Some(())
}

fn broadcast_in_dim(v: &mut OpV) -> Option<()> {
    let (a, r) = (v.operand(0)?, v.result(0)?);
    let dims = v.req_i64s("broadcast_dimensions")?;
    if a.elem != r.elem {
        v.err(
            "C1",
            format!(
                "requires operand and result to have the same element type, but got {} and {}",
                a.elem, r.elem
            ),
        );
    }
    if dims.len() != a.rank() {
        v.err("C2", format!("expects broadcast_dimensions to have size {} (the operand rank), but it has size {}", a.rank(), dims.len()));
        return None;
    }
    if let Err(e) = check_dims(&dims, r.rank(), "broadcast_dimensions", "C3", "C4") {
        v.shape_err(e);
        return None;
    }
    for (i, &d) in dims.iter().enumerate() {
        let (od, rd) = (a.shape[i], r.shape[d as usize]);
        if od != 1 && od != rd {
            v.err("C5", format!("expects operand dimension {i} (size {od}) to be 1 or equal to result dimension {d} (size {rd})"));
            return None;
        }
    }
    Some(())
}

fn broadcast(v: &mut OpV) -> Option<()> {
    let a = v.operand(0)?;
    let sizes = v.req_i64s("broadcast_sizes")?;
    if let Some(s) = sizes.iter().find(|&&s| s < 0) {
        v.err(
            "",
            format!("expects non-negative broadcast_sizes, but got {s}"),
        );
        return None;
    }
    let mut shape = sizes;
    shape.extend_from_slice(&a.shape);
    v.expect_result(
        0,
        a.elem,
        &shape,
        "",
        "broadcast_sizes followed by the operand shape",
    )
}

fn reshape(v: &mut OpV) -> Option<()> {
    let (a, r) = (v.operand(0)?, v.result(0)?);
    if a.elem != r.elem {
        v.err(
            "C1",
            format!(
                "requires operand and result to have the same element type, but got {} and {}",
                a.elem, r.elem
            ),
        );
    }
    if a.num_elements() != r.num_elements() {
        v.err("C2", format!("requires operand and result to have the same number of elements, but {} has {} and {} has {}", tensor_str(a), a.num_elements(), tensor_str(r), r.num_elements()));
    }
    Some(())
}

fn transpose(v: &mut OpV) -> Option<()> {
    let a = v.operand(0)?;
    let perm = v.req_i64s("permutation")?;
    match shape::transpose(&a.shape, &perm) {
        Ok(s) => v.expect_result(
            0,
            a.elem,
            &s,
            "C4",
            "the operand shape permuted by permutation",
        ),
        Err(e) => {
            v.shape_err(e);
            None
        }
    }
}

fn reverse(v: &mut OpV) -> Option<()> {
    let (a, r) = (v.operand(0)?, v.result(0)?);
    if a != r {
        v.err(
            "C1",
            format!(
                "requires operand and result to have the same type, but got {} and {}",
                tensor_str(a),
                tensor_str(r)
            ),
        );
    }
    let dims = v.req_i64s("dimensions")?;
    if let Err(e) = check_dims(&dims, r.rank(), "dimensions", "C3", "C2") {
        v.shape_err(e);
    }
    Some(())
}

fn slice(v: &mut OpV) -> Option<()> {
    let a = v.operand(0)?;
    let start = v.req_i64s("start_indices")?;
    let limit = v.req_i64s("limit_indices")?;
    let strides = v.req_i64s("strides")?;
    match shape::slice(&a.shape, &start, &limit, &strides) {
        Ok(s) => v.expect_result(
            0,
            a.elem,
            &s,
            "C5",
            "ceil((limit_indices - start_indices) / strides)",
        ),
        Err(e) => {
            v.shape_err(e);
            None
        }
    }
}

/// Start indices: one integer scalar per operand dimension, all of one type.
fn start_indices(v: &mut OpV, first: usize, rank: usize, size_c: &str, same_c: &str) -> Option<()> {
    let n = v.op.operands.len().saturating_sub(first);
    if n != rank {
        v.err(
            size_c,
            format!("expects {rank} start indices (the operand rank), but got {n}"),
        );
        return None;
    }
    let t0 = v.operand_ty(first);
    for i in first..v.op.operands.len() {
        let t = v.operand(i)?;
        if t.rank() != 0 || !t.elem.is_integer() {
            v.err(
                "",
                format!(
                    "expects start indices to be integer scalars, but operand #{i} is {}",
                    tensor_str(t)
                ),
            );
            return None;
        }
        if v.operand_ty(i) != t0 {
            v.err(same_c, "requires all start indices to have the same type");
            return None;
        }
    }
    Some(())
}

fn dynamic_slice(v: &mut OpV) -> Option<()> {
    let a = v.operand(0)?;
    let sizes = v.req_i64s("slice_sizes")?;
    let r = v.result(0)?;
    if a.elem != r.elem {
        v.err(
            "C1",
            format!(
                "requires operand and result to have the same element type, but got {} and {}",
                a.elem, r.elem
            ),
        );
    }
    if sizes.len() != a.rank() {
        v.err(
            "C2",
            format!(
                "expects slice_sizes to have size {} (the operand rank), but it has size {}",
                a.rank(),
                sizes.len()
            ),
        );
        return None;
    }
    start_indices(v, 1, a.rank(), "C2", "C3")?;
    for (i, (&s, &d)) in sizes.iter().zip(a.shape.iter()).enumerate() {
        if s < 0 || s > d {
            v.err("C4", format!("expects 0 <= slice_sizes <= shape(operand), but slice size {i} is {s} and the dimension is {d}"));
            return None;
        }
    }
    v.expect_result(0, a.elem, &sizes, "C5", "the slice sizes")
}

fn dynamic_update_slice(v: &mut OpV) -> Option<()> {
    let (a, u, r) = (v.operand(0)?, v.operand(1)?, v.result(0)?);
    if a != r {
        v.err(
            "C1",
            format!(
                "requires operand and result to have the same type, but got {} and {}",
                tensor_str(a),
                tensor_str(r)
            ),
        );
    }
    if u.elem != a.elem {
        v.err(
            "C2",
            format!(
                "requires update and operand to have the same element type, but got {} and {}",
                u.elem, a.elem
            ),
        );
    }
    if u.rank() != a.rank() {
        v.err(
            "C3",
            format!(
                "requires update and operand to have the same rank, but got {} and {}",
                u.rank(),
                a.rank()
            ),
        );
        return None;
    }
    start_indices(v, 2, a.rank(), "C4", "C5")?;
    if u.shape.iter().zip(a.shape.iter()).any(|(x, y)| x > y) {
        v.err(
            "C6",
            format!(
                "expects the update shape to fit in the operand, but got {} and {}",
                tensor_str(u),
                tensor_str(a)
            ),
        );
    }
    Some(())
}

fn concatenate(v: &mut OpV) -> Option<()> {
    let ts = v.operands()?;
    let dim = v.req_int("dimension")?;
    let e0 = ts[0].elem;
    if let Some(i) = ts.iter().position(|t| t.elem != e0) {
        v.err("C1", format!("requires all inputs to have the same element type, but input #{i} has {} and input #0 has {e0}", ts[i].elem));
        return None;
    }
    let shapes: Vec<&[i64]> = ts.iter().map(|t| &t.shape[..]).collect();
    match shape::concatenate(&shapes, dim) {
        Ok(s) => v.expect_result(0, e0, &s, "C6", "the inputs joined along dimension"),
        Err(e) => {
            v.shape_err(e);
            None
        }
    }
}

fn pad(v: &mut OpV) -> Option<()> {
    let (a, p) = (v.operand(0)?, v.operand(1)?);
    if p.rank() != 0 {
        v.err(
            "",
            format!(
                "expects padding_value to be a scalar, but got {}",
                tensor_str(p)
            ),
        );
    }
    if p.elem != a.elem {
        v.err("C1", format!("requires operand and padding_value to have the same element type, but got {} and {}", a.elem, p.elem));
    }
    let lo = v.req_i64s("edge_padding_low")?;
    let hi = v.req_i64s("edge_padding_high")?;
    let it = v.req_i64s("interior_padding")?;
    match shape::pad(&a.shape, &lo, &hi, &it) {
        Ok(s) => v.expect_result(
            0,
            a.elem,
            &s,
            "C4",
            "operand + low + high + interior padding",
        ),
        Err(e) => {
            v.shape_err(e);
            None
        }
    }
}

fn get_dimension_size(v: &mut OpV) -> Option<()> {
    let a = v.operand(0)?;
    let d = v.req_int("dimension")?;
    if d < 0 || d as u64 >= a.rank() as u64 {
        v.err(
            "C1",
            format!(
                "expects dimension in [0, {}) (the operand rank), but got {d}",
                a.rank()
            ),
        );
    }
    v.expect_result(0, ElemType::Int(32), &[], "", "a scalar i32")
}
