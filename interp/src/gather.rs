//! `gather`, `scatter` and the deprecated `torch_index_select`, following the index maps
//! of the StableHLO spec (including operand/start-indices batching dims).
//!
//! Owns: the index arithmetic. Gather clamps start indices so slices stay in bounds (as
//! the spec says); scatter skips every update window that does not fit in the operand
//! as a whole (XLA's choice for what the spec leaves implementation-defined: a window
//! hanging over an edge updates nothing, not its in-bounds part).
//! Invariant: every computed operand index is bounds-checked before use.

use crate::dispatch::Ctx;
use crate::eval::{Interp, Res, Val};
use crate::reduce::bump;
use crate::region::{classify, combine_at, scalar_at, Body};
use crate::shape::strides;
use crate::tensor::{Data, Tensor};
use neuronc_ir::attr::{GatherDims, ScatterDims};
use neuronc_ir::{Attr, TensorType};

type R<T> = Result<T, String>;

/// Reads the index vector at batch position `batch` (dims of `idx` other than `ivd`).
fn index_vector(idx: &Tensor, ivd: usize, batch: &[i64], out: &mut Vec<i64>) {
    out.clear();
    let st = strides(idx.shape());
    let rank = idx.rank();
    let mut base = 0isize;
    let mut b = batch.iter();
    for (d, &s) in st.iter().enumerate() {
        if d == ivd {
            continue;
        }
        base += *b.next().unwrap_or(&0) as isize * s;
    }
    if ivd < rank {
        for k in 0..idx.shape()[ivd] {
            out.push(idx.get_i64((base + k as isize * st[ivd]) as usize));
        }
    } else {
        out.push(idx.get_i64(base as usize));
    }
}

/// `gather`.
pub fn gather(
    x: &Tensor,
    idx: &Tensor,
    g: &GatherDims,
    slice_sizes: &[i64],
    out: &TensorType,
) -> R<Tensor> {
    let rank = x.rank();
    let xs = strides(x.shape());
    let batch_dims: Vec<usize> = (0..out.rank())
        .filter(|d| !g.offset_dims.contains(&(*d as i64)))
        .collect();
    let offset_operand_dims: Vec<usize> = (0..rank)
        .filter(|d| {
            !g.collapsed_slice_dims.contains(&(*d as i64))
                && !g.operand_batching_dims.contains(&(*d as i64))
        })
        .collect();
    if offset_operand_dims.len() != g.offset_dims.len() || slice_sizes.len() != rank {
        return Err("inconsistent gather dimension numbers".into());
    }
    let n = out.num_elements() as usize;
    let mut take = Vec::with_capacity(n);
    let mut oi = vec![0i64; out.rank()];
    let mut sv = Vec::new();
    let mut start = vec![0i64; rank];
    let mut full = vec![0i64; rank];
    // The batch index whose slice start is in `start` (recomputed when it changes).
    let mut cached: Option<Vec<i64>> = None;
    let mut batch = Vec::with_capacity(batch_dims.len());
    for _ in 0..n {
        batch.clear();
        batch.extend(batch_dims.iter().map(|&d| oi[d]));
        if cached.as_ref() != Some(&batch) {
            slice_start(x, idx, g, slice_sizes, &batch, &mut sv, &mut start);
            cached = Some(batch.clone());
        }
        full.copy_from_slice(&start);
        for (k, &od) in g.offset_dims.iter().enumerate() {
            full[offset_operand_dims[k]] += oi[od as usize];
        }
        let mut lin = 0isize;
        for d in 0..rank {
            if full[d] < 0 || full[d] >= x.shape()[d] {
                return Err("gather index out of bounds".into());
            }
            lin += full[d] as isize * xs[d];
        }
        take.push(lin as usize);
        bump(&mut oi, &out.shape);
    }
    Tensor::new(out.clone(), x.data().gather(&take))
}

/// The operand index where the slice of batch position `batch` starts: the clamped start
/// indices plus the operand batching dims. `sv` is scratch space.
fn slice_start(
    x: &Tensor,
    idx: &Tensor,
    g: &GatherDims,
    slice_sizes: &[i64],
    batch: &[i64],
    sv: &mut Vec<i64>,
    start: &mut [i64],
) {
    let ivd = g.index_vector_dim as usize;
    index_vector(idx, ivd, batch, sv);
    start.iter_mut().for_each(|v| *v = 0);
    for (k, &od) in g.start_index_map.iter().enumerate() {
        let od = od as usize;
        let hi = (x.shape()[od] - slice_sizes[od]).max(0);
        start[od] = sv.get(k).copied().unwrap_or(0).clamp(0, hi);
    }
    for (ob, sb) in g
        .operand_batching_dims
        .iter()
        .zip(&g.start_indices_batching_dims)
    {
        let sb = *sb as usize;
        let pos = if sb < ivd { sb } else { sb - 1 };
        start[*ob as usize] += batch.get(pos).copied().unwrap_or(0);
    }
}

/// `gather` / `dynamic_gather` / `torch_index_select` from an op.
pub(crate) fn exec(cx: &Ctx<'_>, ins: &[&Tensor]) -> Res<Vec<Tensor>> {
    let out = cx.out(0)?;
    if cx.op.kind == neuronc_ir::OpKind::TorchIndexSelect {
        return Ok(vec![cx.wrap(index_select(cx, ins[0], ins[1], out))?]);
    }
    let g = match cx.attrs().get("dimension_numbers") {
        Some(Attr::GatherDims(g)) => g.clone(),
        _ => return Err(cx.err("missing gather dimension_numbers")),
    };
    let sizes = match cx.op.attrs.i64_array("slice_sizes") {
        Some(s) => s,
        None => ins
            .get(2)
            .map(|t| t.to_i64_vec())
            .ok_or_else(|| cx.err("missing slice_sizes"))?,
    };
    Ok(vec![cx.wrap(gather(ins[0], ins[1], &g, &sizes, out))?])
}

fn index_select(cx: &Ctx<'_>, x: &Tensor, idx: &Tensor, out: &TensorType) -> R<Tensor> {
    let dim = cx.op.attrs.int("dim").unwrap_or(0) as usize;
    let bd = cx.op.attrs.int("batch_dims").unwrap_or(0) as usize;
    // out = x[:dim] ++ idx[bd:] ++ x[dim+1:], batch dims shared.
    let xs = strides(x.shape());
    let is = strides(idx.shape());
    let n = out.num_elements() as usize;
    let mut oi = vec![0i64; out.rank()];
    let ir = idx.rank() - bd;
    let mut take = Vec::with_capacity(n);
    for _ in 0..n {
        let mut ilin = 0isize;
        for d in 0..bd {
            ilin += oi[d] as isize * is[d];
        }
        for k in 0..ir {
            ilin += oi[dim + k] as isize * is[bd + k];
        }
        let sel = idx.get_i64(ilin as usize);
        let mut lin = 0isize;
        for d in 0..x.rank() {
            let v = if d < dim {
                oi[d]
            } else if d == dim {
                sel
            } else {
                oi[d - 1 + ir]
            };
            if v < 0 || v >= x.shape()[d] {
                return Err("index out of bounds".into());
            }
            lin += v as isize * xs[d];
        }
        take.push(lin as usize);
        bump(&mut oi, &out.shape);
    }
    Tensor::new(out.clone(), x.data().gather(&take))
}

/// `scatter` with its update computation.
pub(crate) fn scatter(it: &mut Interp<'_>, cx: &Ctx<'_>) -> Res<Vec<Val>> {
    let ins: Vec<Tensor> = cx
        .op
        .operands
        .iter()
        .map(|&v| it.tensor(v).cloned())
        .collect::<Res<_>>()?;
    let n = ins.len().saturating_sub(1) / 2;
    if n == 0 {
        return Err(cx.err("expects operands, indices and updates"));
    }
    let (operands, rest) = ins.split_at(n);
    let (idx, updates) = (&rest[0], &rest[1..]);
    let s = match cx.attrs().get("scatter_dimension_numbers") {
        Some(Attr::ScatterDims(s)) => s.clone(),
        _ => return Err(cx.err("missing scatter_dimension_numbers")),
    };
    let region = *cx
        .op
        .regions
        .first()
        .ok_or_else(|| cx.err("missing update region"))?;
    let targets = cx.wrap(scatter_targets(&operands[0], idx, &updates[0], &s))?;
    let mut res: Vec<Data> = operands.iter().map(|t| t.data().clone()).collect();
    let body = if n == 1 {
        classify(it.m, region)
    } else {
        Body::Generic
    };
    let elem = operands[0].elem();
    for (u, t) in targets.iter().enumerate() {
        let Some(p) = *t else { continue };
        match body {
            Body::TakeNew => res[0].set_from(p, updates[0].data(), u),
            Body::Bin(k) if combine_at(k, elem, &mut res[0], p, updates[0].data(), u) => {}
            _ => {
                let mut args: Vec<Tensor> = res
                    .iter()
                    .zip(operands)
                    .map(|(d, o)| Tensor::scalar(o.elem(), d.gather(&[p])))
                    .collect();
                args.extend(updates.iter().map(|t| scalar_at(t, u)));
                let v = it.run_region_t(region, args)?;
                for (d, r) in res.iter_mut().zip(&v) {
                    d.set_from(p, r.data(), 0);
                }
            }
        }
    }
    res.into_iter()
        .zip(operands)
        .map(|(d, o)| {
            Ok(Val::T(
                Tensor::new(o.ty().clone(), d).map_err(|e| cx.err(e))?,
            ))
        })
        .collect()
}

/// For each update element, the linear operand index it targets (`None`: its update
/// window does not fit in the operand, so XLA skips the whole window).
fn scatter_targets(
    x: &Tensor,
    idx: &Tensor,
    upd: &Tensor,
    s: &ScatterDims,
) -> R<Vec<Option<usize>>> {
    let rank = x.rank();
    let xs = strides(x.shape());
    let ivd = s.index_vector_dim as usize;
    let scatter_dims: Vec<usize> = (0..upd.rank())
        .filter(|d| !s.update_window_dims.contains(&(*d as i64)))
        .collect();
    let window_operand_dims: Vec<usize> = (0..rank)
        .filter(|d| {
            !s.inserted_window_dims.contains(&(*d as i64))
                && !s.input_batching_dims.contains(&(*d as i64))
        })
        .collect();
    if window_operand_dims.len() != s.update_window_dims.len() {
        return Err("inconsistent scatter dimension numbers".into());
    }
    let mut ui = vec![0i64; upd.rank()];
    let mut sv = Vec::new();
    let mut out = Vec::with_capacity(upd.len());
    for _ in 0..upd.len() {
        let batch: Vec<i64> = scatter_dims.iter().map(|&d| ui[d]).collect();
        index_vector(idx, ivd, &batch, &mut sv);
        let mut full = vec![0i64; rank];
        for (k, &od) in s.scatter_dims_to_operand_dims.iter().enumerate() {
            full[od as usize] = sv.get(k).copied().unwrap_or(0);
        }
        for (ob, sb) in s
            .input_batching_dims
            .iter()
            .zip(&s.scatter_indices_batching_dims)
        {
            let sb = *sb as usize;
            let pos = if sb < ivd { sb } else { sb - 1 };
            full[*ob as usize] += batch.get(pos).copied().unwrap_or(0);
        }
        let mut extent = vec![1i64; rank];
        for (k, &ud) in s.update_window_dims.iter().enumerate() {
            extent[window_operand_dims[k]] = upd.shape()[ud as usize];
        }
        let inb = (0..rank).all(|d| full[d] >= 0 && full[d] + extent[d] <= x.shape()[d]);
        for (k, &ud) in s.update_window_dims.iter().enumerate() {
            full[window_operand_dims[k]] += ui[ud as usize];
        }
        out.push(inb.then(|| (0..rank).map(|d| full[d] as isize * xs[d]).sum::<isize>() as usize));
        bump(&mut ui, upd.shape());
    }
    Ok(out)
}
