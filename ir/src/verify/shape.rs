//! Shape inference: the result shapes that StableHLO determines from operand shapes and
//! attributes, as pure functions the verifier, the interpreter and the passes all share.
//!
//! Owns: [`ShapeError`] and one function per shape rule (transpose, slice, pad,
//! concatenate, reduce, dot_general, convolution, windowed reductions, gather);
//! [`infer_result_types`] (in `shape_infer.rs`, re-exported here) applies them to an op of
//! a module.
//! Invariants: every function validates the constraints its computation relies on (each
//! failure names the spec constraint it breaks) and never panics or overflows: indices are
//! range-checked before use and sizes are computed in `i128` and checked to fit `i64`.

pub use super::shape_infer::infer_result_types;
use crate::attr::{ConvDims, DotDims, GatherDims};
use smallvec::SmallVec;

/// A broken shape rule: the spec constraint label (`"C3"`, or `""`) and what went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeError {
    pub constraint: &'static str,
    pub message: String,
}

pub type ShapeResult<T> = Result<T, ShapeError>;

fn fail<T>(constraint: &'static str, message: String) -> ShapeResult<T> {
    Err(ShapeError {
        constraint,
        message,
    })
}

/// Converts an `i128` size back to `i64`, rejecting negative or overflowing values.
fn size(v: i128, c: &'static str, what: impl std::fmt::Display) -> ShapeResult<i64> {
    match i64::try_from(v) {
        Ok(s) if s >= 0 => Ok(s),
        _ => fail(c, format!("{what} has invalid size {v}")),
    }
}

/// `0 <= d < rank` for every `d` (constraint `range_c`) and no duplicates (`unique_c`).
pub fn check_dims(
    dims: &[i64],
    rank: usize,
    what: &str,
    range_c: &'static str,
    unique_c: &'static str,
) -> ShapeResult<()> {
    // A bit per dimension (no allocation) up to rank 128, a vector beyond.
    let (mut bits, mut wide) = (0u128, vec![false; if rank > 128 { rank } else { 0 }]);
    for &d in dims {
        if d < 0 || d as u64 >= rank as u64 {
            return fail(
                range_c,
                format!("expects {what} to be in [0, {rank}), but got {d}"),
            );
        }
        let repeat = match wide.get_mut(d as usize) {
            Some(seen) => std::mem::replace(seen, true),
            None => {
                let had = bits & (1 << d) != 0;
                bits |= 1 << d;
                had
            }
        };
        if repeat {
            return fail(
                unique_c,
                format!("expects {what} to be unique, but {d} repeats"),
            );
        }
    }
    Ok(())
}

/// Checks that `dims` is sorted ascending.
pub fn check_sorted(dims: &[i64], what: &str, c: &'static str) -> ShapeResult<()> {
    if dims.windows(2).any(|w| w[0] > w[1]) {
        return fail(c, format!("expects {what} to be sorted, but got {dims:?}"));
    }
    Ok(())
}

/// `transpose`: `permutation` must be a permutation of `0..rank` (C2); result C4.
pub fn transpose(shape: &[i64], perm: &[i64]) -> ShapeResult<Vec<i64>> {
    if perm.len() != shape.len() {
        return fail(
            "C2",
            format!(
                "expects permutation of size {} (the operand rank), but it has size {}",
                shape.len(),
                perm.len()
            ),
        );
    }
    check_dims(perm, shape.len(), "permutation", "C2", "C2")?;
    Ok(perm.iter().map(|&p| shape[p as usize]).collect())
}

/// `slice`: sizes (C2), `0 <= start <= limit <= dim` (C3), positive strides (C4); C5.
pub fn slice(
    shape: &[i64],
    start: &[i64],
    limit: &[i64],
    strides: &[i64],
) -> ShapeResult<Vec<i64>> {
    let r = shape.len();
    if start.len() != r || limit.len() != r || strides.len() != r {
        return fail(
            "C2",
            format!(
                "expects start_indices, limit_indices and strides to have size {r} (the operand rank), but they have sizes {}, {} and {}",
                start.len(),
                limit.len(),
                strides.len()
            ),
        );
    }
    let mut out = Vec::with_capacity(r);
    for i in 0..r {
        let (s, l, st, d) = (start[i], limit[i], strides[i], shape[i]);
        if !(0 <= s && s <= l && l <= d) {
            return fail(
                "C3",
                format!("expects 0 <= start_indices <= limit_indices <= dim(operand) in dimension {i}, but got start {s}, limit {l}, dim {d}"),
            );
        }
        if st <= 0 {
            return fail(
                "C4",
                format!("expects positive strides, but stride {i} is {st}"),
            );
        }
        let n = (l as i128 - s as i128 + st as i128 - 1) / st as i128;
        out.push(size(n, "C5", format_args!("result dimension {i}"))?);
    }
    Ok(out)
}

/// `pad`: sizes (C2), non-negative interior (C3), result shape C4.
pub fn pad(shape: &[i64], low: &[i64], high: &[i64], interior: &[i64]) -> ShapeResult<Vec<i64>> {
    let r = shape.len();
    if low.len() != r || high.len() != r || interior.len() != r {
        return fail(
            "C2",
            format!(
                "expects edge_padding_low, edge_padding_high and interior_padding to have size {r} (the operand rank), but they have sizes {}, {} and {}",
                low.len(),
                high.len(),
                interior.len()
            ),
        );
    }
    let mut out = Vec::with_capacity(r);
    for i in 0..r {
        if interior[i] < 0 {
            return fail(
                "C3",
                format!(
                    "expects non-negative interior_padding, but dimension {i} has {}",
                    interior[i]
                ),
            );
        }
        let d = shape[i] as i128;
        let v = d + low[i] as i128 + high[i] as i128 + (d - 1).max(0) * interior[i] as i128;
        out.push(size(v, "C4", format_args!("padded dimension {i}"))?);
    }
    Ok(out)
}

/// `concatenate`: same rank (C2), `dimension` in range (C4), equal other dims (C5); C6.
pub fn concatenate(shapes: &[&[i64]], dim: i64) -> ShapeResult<Vec<i64>> {
    let Some(first) = shapes.first() else {
        return fail("C3", "expects at least one input".into());
    };
    let r = first.len();
    if dim < 0 || dim as u64 >= r as u64 {
        return fail(
            "C4",
            format!("expects dimension in [0, {r}), but got {dim}"),
        );
    }
    let d = dim as usize;
    let mut total: i128 = 0;
    for (i, s) in shapes.iter().enumerate() {
        if s.len() != r {
            return fail(
                "C2",
                format!(
                    "expects all inputs to have rank {r}, but input #{i} has rank {}",
                    s.len()
                ),
            );
        }
        for k in 0..r {
            if k != d && s[k] != first[k] {
                return fail(
                    "C2",
                    format!("expects inputs to agree on every dimension but {d}, but input #{i} has size {} in dimension {k} where input #0 has {}", s[k], first[k]),
                );
            }
        }
        total += s[d] as i128;
    }
    let mut out = first.to_vec();
    out[d] = size(total, "C6", "concatenated dimension")?;
    Ok(out)
}

/// `reduce`: `dimensions` in range (C4) and unique (C5); the kept dims (C7).
pub fn reduce(shape: &[i64], dims: &[i64]) -> ShapeResult<Vec<i64>> {
    check_dims(dims, shape.len(), "dimensions", "C4", "C5")?;
    Ok(shape
        .iter()
        .enumerate()
        .filter(|(i, _)| !dims.contains(&(*i as i64)))
        .map(|(_, &d)| d)
        .collect())
}

fn pick(shape: &[i64], dims: &[i64]) -> Vec<i64> {
    dims.iter().map(|&d| shape[d as usize]).collect()
}

/// `dot_general` result shape (C1-C10, C12).
pub fn dot_general(lhs: &[i64], rhs: &[i64], dd: &DotDims) -> ShapeResult<Vec<i64>> {
    let (lb, rb, lc, rc) = (
        &dd.lhs_batching,
        &dd.rhs_batching,
        &dd.lhs_contracting,
        &dd.rhs_contracting,
    );
    if lb.len() != rb.len() {
        return fail(
            "C1",
            format!(
                "expects the same number of lhs and rhs batching dimensions, but got {} and {}",
                lb.len(),
                rb.len()
            ),
        );
    }
    if lc.len() != rc.len() {
        return fail(
            "C2",
            format!(
                "expects the same number of lhs and rhs contracting dimensions, but got {} and {}",
                lc.len(),
                rc.len()
            ),
        );
    }
    check_dims(lb, lhs.len(), "lhs_batching_dimensions", "C5", "C3")?;
    check_dims(lc, lhs.len(), "lhs_contracting_dimensions", "C6", "C3")?;
    check_dims(rb, rhs.len(), "rhs_batching_dimensions", "C7", "C4")?;
    check_dims(rc, rhs.len(), "rhs_contracting_dimensions", "C8", "C4")?;
    let l_all: SmallVec<[i64; 8]> = lb.iter().chain(lc).copied().collect();
    check_dims(
        &l_all,
        lhs.len(),
        "lhs batching and contracting dimensions",
        "C5",
        "C3",
    )?;
    let r_all: SmallVec<[i64; 8]> = rb.iter().chain(rc).copied().collect();
    check_dims(
        &r_all,
        rhs.len(),
        "rhs batching and contracting dimensions",
        "C7",
        "C4",
    )?;
    // `pick` (allocating) only to spell out a mismatch.
    let sizes = |s: &[i64], d: &[i64]| {
        d.iter()
            .map(|&d| s[d as usize])
            .collect::<SmallVec<[_; 4]>>()
    };
    if sizes(lhs, lb) != sizes(rhs, rb) {
        return fail("C9", format!("expects lhs and rhs batching dimensions to have the same sizes, but got {:?} and {:?}", pick(lhs, lb), pick(rhs, rb)));
    }
    if sizes(lhs, lc) != sizes(rhs, rc) {
        return fail("C10", format!("expects lhs and rhs contracting dimensions to have the same sizes, but got {:?} and {:?}", pick(lhs, lc), pick(rhs, rc)));
    }
    let mut out = pick(lhs, lb);
    out.extend(free_dims(lhs, &l_all));
    out.extend(free_dims(rhs, &r_all));
    Ok(out)
}

fn free_dims<'s>(shape: &'s [i64], used: &'s [i64]) -> impl Iterator<Item = i64> + 's {
    (0..shape.len())
        .filter(|i| !used.contains(&(*i as i64)))
        .map(|i| shape[i])
}

/// Window attributes of `convolution` (one entry per spatial dimension).
#[derive(Clone, Debug, Default)]
pub struct ConvWindow {
    pub strides: Vec<i64>,
    /// `(low, high)` per spatial dimension.
    pub padding: Vec<(i64, i64)>,
    pub lhs_dilation: Vec<i64>,
    pub rhs_dilation: Vec<i64>,
    pub feature_group_count: i64,
    pub batch_group_count: i64,
}

/// Number of windows along one dimension (the `num_windows` formula of the spec).
pub fn num_windows(
    input: i64,
    window: i64,
    stride: i64,
    base_dil: i64,
    win_dil: i64,
    pad: (i64, i64),
) -> i128 {
    let dil_in = if input == 0 {
        0
    } else {
        (input as i128 - 1) * base_dil as i128 + 1
    };
    let padded = pad.0 as i128 + dil_in + pad.1 as i128;
    let dil_win = if window == 0 {
        0
    } else {
        (window as i128 - 1) * win_dil as i128 + 1
    };
    if padded <= 0 || dil_win > padded {
        0
    } else {
        (padded - dil_win) / stride as i128 + 1
    }
}

fn check_len(v: &[i64], n: usize, what: &str, c: &'static str) -> ShapeResult<()> {
    if v.len() != n {
        return fail(
            c,
            format!(
                "expects {what} to have size {n}, but it has size {}",
                v.len()
            ),
        );
    }
    Ok(())
}

fn check_positive(v: &[i64], what: &str, c: &'static str) -> ShapeResult<()> {
    if let Some(x) = v.iter().find(|&&x| x <= 0) {
        return fail(c, format!("expects {what} to be positive, but got {x}"));
    }
    Ok(())
}

/// `convolution` result shape (C1-C23, C25, C26).
pub fn convolution(
    lhs: &[i64],
    rhs: &[i64],
    cd: &ConvDims,
    w: &ConvWindow,
) -> ShapeResult<Vec<i64>> {
    let n = lhs.len();
    if rhs.len() != n {
        return fail(
            "C1",
            format!(
                "expects lhs and rhs to have the same rank, but got {} and {}",
                n,
                rhs.len()
            ),
        );
    }
    if n < 2 {
        return fail(
            "C1",
            format!("expects operands of rank at least 2, but got rank {n}"),
        );
    }
    let s = n - 2;
    check_len(&w.strides, s, "window_strides", "C2")?;
    check_positive(&w.strides, "window_strides", "C3")?;
    if w.padding.len() != s {
        return fail(
            "C4",
            format!(
                "expects padding of shape [{s}, 2], but it has {} rows",
                w.padding.len()
            ),
        );
    }
    check_len(&w.lhs_dilation, s, "lhs_dilation", "C5")?;
    check_positive(&w.lhs_dilation, "lhs_dilation", "C6")?;
    check_len(&w.rhs_dilation, s, "rhs_dilation", "C7")?;
    check_positive(&w.rhs_dilation, "rhs_dilation", "C8")?;
    check_len(&cd.input_spatial, s, "input_spatial_dimensions", "C12")?;
    let mut ins = vec![cd.input_batch];
    ins.extend(&cd.input_spatial);
    ins.push(cd.input_feature);
    check_dims(&ins, n, "input dimensions", "C13", "C13")?;
    check_len(&cd.kernel_spatial, s, "kernel_spatial_dimensions", "C17")?;
    let mut ks = cd.kernel_spatial.clone();
    ks.extend([cd.kernel_input_feature, cd.kernel_output_feature]);
    check_dims(&ks, n, "kernel dimensions", "C18", "C18")?;
    check_len(&cd.output_spatial, s, "output_spatial_dimensions", "C19")?;
    let mut outs = vec![cd.output_batch];
    outs.extend(&cd.output_spatial);
    outs.push(cd.output_feature);
    check_dims(&outs, n, "output dimensions", "C20", "C20")?;
    let (fgc, bgc) = (w.feature_group_count, w.batch_group_count);
    if fgc <= 0 {
        return fail(
            "C21",
            format!("expects positive feature_group_count, but got {fgc}"),
        );
    }
    if bgc <= 0 {
        return fail(
            "C22",
            format!("expects positive batch_group_count, but got {bgc}"),
        );
    }
    if fgc != 1 && bgc != 1 {
        return fail(
            "C23",
            format!(
                "expects feature_group_count or batch_group_count to be 1, but got {fgc} and {bgc}"
            ),
        );
    }
    let batch = lhs[cd.input_batch as usize];
    let feat = lhs[cd.input_feature as usize];
    let kin = rhs[cd.kernel_input_feature as usize];
    let kout = rhs[cd.kernel_output_feature as usize];
    if batch % bgc != 0 {
        return fail("C10", format!("expects the input batch dimension ({batch}) to be divisible by batch_group_count ({bgc})"));
    }
    if feat % fgc != 0 {
        return fail("C11", format!("expects the input feature dimension ({feat}) to be divisible by feature_group_count ({fgc})"));
    }
    if kin != feat / fgc {
        return fail("C14", format!("expects the kernel input feature dimension ({kin}) to equal the input feature dimension ({feat}) / feature_group_count ({fgc})"));
    }
    if kout % bgc != 0 {
        return fail("C15", format!("expects the kernel output feature dimension ({kout}) to be divisible by batch_group_count ({bgc})"));
    }
    if kout % fgc != 0 {
        return fail("C16", format!("expects the kernel output feature dimension ({kout}) to be divisible by feature_group_count ({fgc})"));
    }
    let mut out = vec![0i64; n];
    out[cd.output_batch as usize] = batch / bgc;
    out[cd.output_feature as usize] = kout;
    for i in 0..s {
        let nw = num_windows(
            lhs[cd.input_spatial[i] as usize],
            rhs[cd.kernel_spatial[i] as usize],
            w.strides[i],
            w.lhs_dilation[i],
            w.rhs_dilation[i],
            w.padding[i],
        );
        out[cd.output_spatial[i] as usize] = size(nw, "C25", "output spatial dimension")?;
    }
    Ok(out)
}

/// Window attributes of `reduce_window` (one entry per input dimension).
#[derive(Clone, Debug, Default)]
pub struct Window {
    pub dims: Vec<i64>,
    pub strides: Vec<i64>,
    pub base_dilations: Vec<i64>,
    pub window_dilations: Vec<i64>,
    pub padding: Vec<(i64, i64)>,
}

/// `reduce_window` result shape (C4-C12, C15).
pub fn reduce_window(shape: &[i64], w: &Window) -> ShapeResult<Vec<i64>> {
    let r = shape.len();
    check_len(&w.dims, r, "window_dimensions", "C4")?;
    check_positive(&w.dims, "window_dimensions", "C5")?;
    check_len(&w.strides, r, "window_strides", "C6")?;
    check_positive(&w.strides, "window_strides", "C7")?;
    check_len(&w.base_dilations, r, "base_dilations", "C8")?;
    check_positive(&w.base_dilations, "base_dilations", "C9")?;
    check_len(&w.window_dilations, r, "window_dilations", "C10")?;
    check_positive(&w.window_dilations, "window_dilations", "C11")?;
    if w.padding.len() != r {
        return fail(
            "C12",
            format!(
                "expects padding of shape [{r}, 2], but it has {} rows",
                w.padding.len()
            ),
        );
    }
    (0..r)
        .map(|i| {
            let nw = num_windows(
                shape[i],
                w.dims[i],
                w.strides[i],
                w.base_dilations[i],
                w.window_dilations[i],
                w.padding[i],
            );
            size(nw, "C15", "result dimension")
        })
        .collect()
}

/// `gather` result shape (C1-C22).
pub fn gather(
    operand: &[i64],
    indices: &[i64],
    g: &GatherDims,
    slice_sizes: &[i64],
) -> ShapeResult<Vec<i64>> {
    let (or, ir) = (operand.len(), indices.len());
    let n_offset = g.offset_dims.len();
    if or != n_offset + g.collapsed_slice_dims.len() + g.operand_batching_dims.len() {
        return fail("C1", format!("expects rank(operand) = size(offset_dims) + size(collapsed_slice_dims) + size(operand_batching_dims), but got {or} != {} + {} + {}", n_offset, g.collapsed_slice_dims.len(), g.operand_batching_dims.len()));
    }
    let ivd = g.index_vector_dim;
    if ivd < 0 || ivd as u64 > ir as u64 {
        return fail(
            "C2",
            format!("expects index_vector_dim in [0, {ir}], but got {ivd}"),
        );
    }
    let index_len = if (ivd as usize) < ir {
        indices[ivd as usize]
    } else {
        1
    };
    if g.start_index_map.len() as i64 != index_len {
        return fail("C3", format!("expects start_index_map to have size {index_len} (the index vector size), but it has size {}", g.start_index_map.len()));
    }
    let batch_rank = if (ivd as usize) < ir { ir - 1 } else { ir };
    let rank = batch_rank + n_offset;
    check_dims(&g.offset_dims, rank, "offset_dims", "C5", "C4")?;
    check_sorted(&g.offset_dims, "offset_dims", "C4")?;
    let mut both = g.collapsed_slice_dims.clone();
    both.extend(&g.operand_batching_dims);
    check_dims(
        &g.collapsed_slice_dims,
        or,
        "collapsed_slice_dims",
        "C8",
        "C6",
    )?;
    check_dims(
        &g.operand_batching_dims,
        or,
        "operand_batching_dims",
        "C11",
        "C6",
    )?;
    check_dims(
        &both,
        or,
        "collapsed_slice_dims and operand_batching_dims",
        "C8",
        "C6",
    )?;
    check_sorted(&g.collapsed_slice_dims, "collapsed_slice_dims", "C7")?;
    check_sorted(&g.operand_batching_dims, "operand_batching_dims", "C10")?;
    check_dims(
        &g.start_indices_batching_dims,
        ir,
        "start_indices_batching_dims",
        "C14",
        "C13",
    )?;
    if g.start_indices_batching_dims.contains(&ivd) {
        return fail(
            "C15",
            format!("expects index_vector_dim ({ivd}) not to be a start_indices_batching_dim"),
        );
    }
    if g.operand_batching_dims.len() != g.start_indices_batching_dims.len() {
        return fail(
            "C16",
            "expects operand_batching_dims and start_indices_batching_dims to have the same size"
                .into(),
        );
    }
    if pick(operand, &g.operand_batching_dims) != pick(indices, &g.start_indices_batching_dims) {
        return fail("C17", "expects the operand batching dimensions and start_indices batching dimensions to have the same sizes".into());
    }
    let mut sim = g.start_index_map.clone();
    sim.extend(&g.operand_batching_dims);
    check_dims(&g.start_index_map, or, "start_index_map", "C19", "C18")?;
    check_dims(
        &sim,
        or,
        "start_index_map and operand_batching_dims",
        "C19",
        "C18",
    )?;
    if slice_sizes.len() != or {
        return fail(
            "C20",
            format!(
                "expects slice_sizes to have size {or} (the operand rank), but it has size {}",
                slice_sizes.len()
            ),
        );
    }
    for (i, (&s, &d)) in slice_sizes.iter().zip(operand).enumerate() {
        if s < 0 || s > d {
            return fail("C21", format!("expects 0 <= slice_sizes <= shape(operand), but slice size {i} is {s} and the dimension is {d}"));
        }
    }
    for &d in &both {
        if slice_sizes[d as usize] > 1 {
            let c = if g.collapsed_slice_dims.contains(&d) {
                "C9"
            } else {
                "C12"
            };
            return fail(c, format!("expects the slice size of collapsed or batching dimension {d} to be at most 1, but it is {}", slice_sizes[d as usize]));
        }
    }
    let offsets: Vec<i64> = (0..or)
        .filter(|i| !both.contains(&(*i as i64)))
        .map(|i| slice_sizes[i])
        .collect();
    let batches: Vec<i64> = (0..ir)
        .filter(|&i| i as i64 != ivd)
        .map(|i| indices[i])
        .collect();
    let (mut oi, mut bi) = (offsets.iter(), batches.iter());
    Ok((0..rank)
        .map(|i| {
            if g.offset_dims.contains(&(i as i64)) {
                oi.next().copied().unwrap_or(0)
            } else {
                bi.next().copied().unwrap_or(0)
            }
        })
        .collect())
}
