//! Rules of the indexed data movement ops: `gather`, `scatter`, `torch_index_select`.
//!
//! Invariants: every dimension list of the dimension-numbers attributes is range- and
//! uniqueness-checked before it is used as an index; `gather`'s result shape comes from
//! [`super::shape::gather`]; `scatter`'s update shape rule (C4) is checked dimension by
//! dimension against the scatter and window dimensions.

use super::cx::{tensor_str, OpV};
use super::reduction::{reducer_body, Acc};
use super::shape::{self, check_dims, check_sorted, ShapeResult};
use crate::attr::{Attr, ScatterDims};
use crate::ops::OpKind;
use crate::types::TensorType;

pub(super) fn check(v: &mut OpV) {
    let _ = match v.op.kind {
        OpKind::Gather => gather(v),
        OpKind::Scatter => scatter(v),
        OpKind::TorchIndexSelect => torch_index_select(v),
        _ => None,
    };
}

fn gather(v: &mut OpV) -> Option<()> {
    let (a, idx) = (v.operand(0)?, v.operand(1)?);
    if !idx.elem.is_integer() {
        v.err(
            "",
            format!("expects integer start_indices, but got {}", tensor_str(idx)),
        );
        return None;
    }
    let g = match v.attr("dimension_numbers") {
        Some(Attr::GatherDims(g)) => g,
        _ => {
            v.err(
                "",
                "requires attribute 'dimension_numbers' (#stablehlo.gather<...>)",
            );
            return None;
        }
    };
    let sizes = v.req_i64s("slice_sizes")?;
    match shape::gather(&a.shape, &idx.shape, g, &sizes) {
        Ok(s) => v.expect_result(
            0,
            a.elem,
            &s,
            "C22",
            "batch dimensions of start_indices combined with offset dimensions of slice_sizes",
        ),
        Err(e) => {
            v.shape_err(e);
            None
        }
    }
}

fn scatter(v: &mut OpV) -> Option<()> {
    let n_ops = v.op.operands.len();
    if n_ops.is_multiple_of(2) {
        v.err(
            "C5",
            format!("expects N inputs, the indices and N updates, but got {n_ops} operands"),
        );
        return None;
    }
    let n = n_ops / 2;
    let all = v.operands()?;
    let (ins, idx, ups) = (&all[..n], all[n], &all[n + 1..]);
    if v.op.results.len() != n {
        v.err(
            "C5",
            format!(
                "expects {n} results (one per input), but got {}",
                v.op.results.len()
            ),
        );
        return None;
    }
    if let Some(i) = ins.iter().position(|t| t.shape != ins[0].shape) {
        v.err(
            "C1",
            format!(
                "requires all inputs to have the same shape, but input #{i} is {}",
                tensor_str(ins[i])
            ),
        );
        return None;
    }
    if let Some(i) = ups.iter().position(|t| t.shape != ups[0].shape) {
        v.err(
            "C3",
            format!(
                "requires all updates to have the same shape, but update #{i} is {}",
                tensor_str(ups[i])
            ),
        );
        return None;
    }
    if let Some(i) = (0..n).find(|&i| ins[i].elem != ups[i].elem) {
        v.err(
            "C6",
            format!(
                "requires update #{i} to have the element type of input #{i} ({}), but got {}",
                ins[i].elem, ups[i].elem
            ),
        );
        return None;
    }
    if !idx.elem.is_integer() {
        v.err(
            "",
            format!(
                "expects integer scatter_indices, but got {}",
                tensor_str(idx)
            ),
        );
        return None;
    }
    let sd = match v.attr("scatter_dimension_numbers") {
        Some(Attr::ScatterDims(s)) => s,
        _ => {
            v.err(
                "",
                "requires attribute 'scatter_dimension_numbers' (#stablehlo.scatter<...>)",
            );
            return None;
        }
    };
    if let Err(e) = scatter_dims(&ins[0].shape, &idx.shape, &ups[0].shape, sd) {
        v.shape_err(e);
        return None;
    }
    let in_elems: Vec<_> = ins.iter().map(|t| t.elem).collect();
    let es = reducer_body(v, v.op.regions[0], &in_elems, "C23", Acc::Scalar)?;
    for (i, e) in es.into_iter().enumerate() {
        v.expect_result(i, e, &ins[0].shape, "C24", "the input shape")?;
    }
    Some(())
}

fn fail(c: &'static str, message: String) -> ShapeResult<()> {
    Err(shape::ShapeError {
        constraint: c,
        message,
    })
}

/// C2, C4, C7-C22 of `scatter`.
fn scatter_dims(input: &[i64], idx: &[i64], upd: &[i64], s: &ScatterDims) -> ShapeResult<()> {
    let (ir, xr, ur) = (input.len(), idx.len(), upd.len());
    let nw = s.update_window_dims.len();
    if ir != nw + s.inserted_window_dims.len() + s.input_batching_dims.len() {
        return fail("C2", format!("expects rank(inputs[0]) = size(update_window_dims) + size(inserted_window_dims) + size(input_batching_dims), but got {ir} != {nw} + {} + {}", s.inserted_window_dims.len(), s.input_batching_dims.len()));
    }
    check_dims(&s.update_window_dims, ur, "update_window_dims", "C8", "C7")?;
    check_sorted(&s.update_window_dims, "update_window_dims", "C7")?;
    check_dims(
        &s.inserted_window_dims,
        ir,
        "inserted_window_dims",
        "C11",
        "C9",
    )?;
    check_sorted(&s.inserted_window_dims, "inserted_window_dims", "C10")?;
    check_dims(
        &s.input_batching_dims,
        ir,
        "input_batching_dims",
        "C13",
        "C9",
    )?;
    check_sorted(&s.input_batching_dims, "input_batching_dims", "C12")?;
    let mut both = s.inserted_window_dims.clone();
    both.extend(&s.input_batching_dims);
    check_dims(
        &both,
        ir,
        "inserted_window_dims and input_batching_dims",
        "C11",
        "C9",
    )?;
    check_dims(
        &s.scatter_indices_batching_dims,
        xr,
        "scatter_indices_batching_dims",
        "C15",
        "C14",
    )?;
    let ivd = s.index_vector_dim;
    if ivd < 0 || ivd as u64 > xr as u64 {
        return fail(
            "C22",
            format!("expects index_vector_dim in [0, {xr}], but got {ivd}"),
        );
    }
    if s.scatter_indices_batching_dims.contains(&ivd) {
        return fail(
            "C16",
            format!("expects index_vector_dim ({ivd}) not to be a scatter_indices_batching_dim"),
        );
    }
    if s.input_batching_dims.len() != s.scatter_indices_batching_dims.len() {
        return fail(
            "C17",
            "expects input_batching_dims and scatter_indices_batching_dims to have the same size"
                .into(),
        );
    }
    for (&a, &b) in s
        .input_batching_dims
        .iter()
        .zip(&s.scatter_indices_batching_dims)
    {
        if input[a as usize] != idx[b as usize] {
            return fail("C18", format!("expects input batching dimension {a} ({}) to equal scatter_indices batching dimension {b} ({})", input[a as usize], idx[b as usize]));
        }
    }
    let index_len = if (ivd as usize) < xr {
        idx[ivd as usize]
    } else {
        1
    };
    if s.scatter_dims_to_operand_dims.len() as i64 != index_len {
        return fail("C19", format!("expects scatter_dims_to_operand_dims to have size {index_len} (the index vector size), but it has size {}", s.scatter_dims_to_operand_dims.len()));
    }
    let mut sd = s.scatter_dims_to_operand_dims.clone();
    check_dims(&sd, ir, "scatter_dims_to_operand_dims", "C21", "C20")?;
    sd.extend(&s.input_batching_dims);
    check_dims(
        &sd,
        ir,
        "scatter_dims_to_operand_dims and input_batching_dims",
        "C21",
        "C20",
    )?;
    update_shape(input, idx, upd, s, &both)
}

/// C4: the update shape combines scatter dims of the indices with window dims that fit.
fn update_shape(
    input: &[i64],
    idx: &[i64],
    upd: &[i64],
    s: &ScatterDims,
    skipped: &[i64],
) -> ShapeResult<()> {
    let scatter_sizes: Vec<i64> = (0..idx.len())
        .filter(|&i| i as i64 != s.index_vector_dim)
        .map(|i| idx[i])
        .collect();
    let window_bounds: Vec<i64> = (0..input.len())
        .filter(|i| !skipped.contains(&(*i as i64)))
        .map(|i| input[i])
        .collect();
    let want_rank = scatter_sizes.len() + s.update_window_dims.len();
    if upd.len() != want_rank {
        return fail("C4", format!("expects updates of rank {want_rank} (scatter dimensions plus update_window_dims), but got rank {}", upd.len()));
    }
    let (mut si, mut wi) = (0, 0);
    for (d, &u) in upd.iter().enumerate() {
        if s.update_window_dims.contains(&(d as i64)) {
            let bound = window_bounds.get(wi).copied().unwrap_or(0);
            wi += 1;
            if u > bound {
                return fail("C4", format!("expects update window dimension {d} ({u}) to be at most the corresponding input dimension ({bound})"));
            }
        } else {
            let want = scatter_sizes.get(si).copied().unwrap_or(0);
            si += 1;
            if u != want {
                return fail("C4", format!("expects update scatter dimension {d} to have size {want} (from scatter_indices), but got {u}"));
            }
        }
    }
    Ok(())
}

fn torch_index_select(v: &mut OpV) -> Option<()> {
    let (a, idx, r) = (v.operand(0)?, v.operand(1)?, v.result(0)?);
    let dim = v.req_int("dim")?;
    let bd = v.req_int("batch_dims")?;
    if dim < 0
        || dim as u64 >= a.rank() as u64
        || bd < 0
        || bd > dim
        || bd as u64 > idx.rank() as u64
    {
        v.err("", format!("expects 0 <= batch_dims <= dim < {} (the operand rank), but got dim {dim} and batch_dims {bd}", a.rank()));
        return None;
    }
    let (d, b) = (dim as usize, bd as usize);
    let mut want = a.shape[..d].to_vec();
    want.extend_from_slice(&idx.shape[b..]);
    want.extend_from_slice(&a.shape[d + 1..]);
    let want_t = TensorType::new(a.elem, &want);
    if *r != want_t {
        v.err(
            "",
            format!(
                "expects result type {}, but got {}",
                tensor_str(&want_t),
                tensor_str(r)
            ),
        );
    }
    Some(())
}
