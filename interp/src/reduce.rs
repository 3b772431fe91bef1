//! Region-carrying reductions: `reduce`, `reduce_window`, `select_and_scatter`, `map`
//! (sorting is in [`crate::sort`]).
//!
//! Owns: the iteration orders of these ops. Each op first tries a fast path (the body is
//! one binary op, see [`crate::region`]) that folds contiguous chunks; otherwise it
//! interprets the body on scalar tensors, in row-major order of the reduced elements.
//! Invariant: the generic and fast paths visit the same elements with the same init.

use crate::dispatch::Ctx;
use crate::eval::{Interp, Res, Val};
use crate::region::{classify, fold_chunks, scalar_at, Accum, Body};
use crate::shape::{dims, strides, transpose};
use crate::tensor::{Data, Tensor};
use neuronc_ir::{OpKind, RegionId, TensorType};

pub(crate) mod xla_lanes;

/// Entry for the region-carrying ops.
pub(crate) fn exec(it: &mut Interp<'_>, cx: &Ctx<'_>) -> Res<Vec<Val>> {
    let ins: Vec<Tensor> = cx
        .op
        .operands
        .iter()
        .map(|&v| it.tensor(v).cloned())
        .collect::<Res<_>>()?;
    let region = cx.op.regions.first().copied();
    let outs: Vec<TensorType> = (0..cx.op.results.len())
        .map(|i| cx.out(i).cloned())
        .collect::<Res<_>>()?;
    let r = match cx.op.kind {
        OpKind::Reduce => reduce(it, cx, &ins, region, &outs)?,
        OpKind::ReduceWindow => reduce_window(it, cx, &ins, region, &outs)?,
        OpKind::SelectAndScatter => select_and_scatter(it, cx, &ins, &outs)?,
        OpKind::Map => map(it, cx, &ins, region, &outs)?,
        OpKind::Sort => crate::sort::sort(it, cx, &ins, region)?,
        _ => crate::sort::top_k(cx, &ins, &outs)?,
    };
    Ok(r.into_iter().map(Val::T).collect())
}

fn need_region(cx: &Ctx<'_>, r: Option<RegionId>) -> Res<RegionId> {
    r.ok_or_else(|| cx.err("missing body region"))
}

/// Moves dims `red` of `t` last (row-major order otherwise kept).
fn move_last(t: &Tensor, red: &[i64]) -> Result<Tensor, String> {
    let keep: Vec<i64> = (0..t.rank() as i64).filter(|d| !red.contains(d)).collect();
    let perm: Vec<i64> = keep.iter().chain(red).copied().collect();
    if perm.iter().enumerate().all(|(i, &d)| i as i64 == d) {
        return Ok(t.clone());
    }
    let shape: Vec<i64> = perm.iter().map(|&d| t.shape()[d as usize]).collect();
    transpose(t, &perm, &TensorType::new(t.elem(), &shape))
}

/// Folds `outs` chunks of `chunk` elements of each input with the body (`accum` says
/// how a fast-path f32-class sum or product accumulates).
fn fold_all(
    it: &mut Interp<'_>,
    region: RegionId,
    srcs: &[Tensor],
    inits: &[Tensor],
    outs: &[TensorType],
    chunk: usize,
    accum: Accum,
) -> Res<Vec<Tensor>> {
    let n_out = outs.first().map_or(0, |o| o.num_elements() as usize);
    if srcs.len() == 1 {
        if let Body::Bin(k) = classify(it.m, region) {
            if let Some(d) = fold_chunks(
                k,
                outs[0].elem,
                srcs[0].data(),
                n_out,
                chunk,
                inits[0].data(),
                accum,
            ) {
                return Ok(vec![
                    Tensor::new(outs[0].clone(), d).map_err(|e| crate::eval::op_err(k, e))?
                ]);
            }
        }
    }
    let mut data: Vec<Data> = inits.iter().map(|t| t.data().empty_like(n_out)).collect();
    for o in 0..n_out {
        let mut acc: Vec<Tensor> = inits.to_vec();
        for j in 0..chunk {
            let mut args = acc;
            args.extend(srcs.iter().map(|s| scalar_at(s, o * chunk + j)));
            acc = it.run_region_t(region, args)?;
        }
        for (d, a) in data.iter_mut().zip(&acc) {
            d.push_from(a.data(), 0);
        }
    }
    data.into_iter()
        .zip(outs)
        .map(|(d, o)| Tensor::new(o.clone(), d).map_err(|e| crate::eval::op_err(OpKind::Reduce, e)))
        .collect()
}

fn reduce(
    it: &mut Interp<'_>,
    cx: &Ctx<'_>,
    ins: &[Tensor],
    r: Option<RegionId>,
    outs: &[TensorType],
) -> Res<Vec<Tensor>> {
    let region = need_region(cx, r)?;
    let n = ins.len() / 2;
    let red = cx.ints("dimensions")?;
    let (srcs, inits) = ins.split_at(n);
    let moved: Vec<Tensor> = srcs
        .iter()
        .map(|t| cx.wrap(move_last(t, &red)))
        .collect::<Res<_>>()?;
    let sizes: Vec<usize> = red
        .iter()
        .map(|&d| srcs[0].shape().get(d as usize).copied().unwrap_or(0).max(0) as usize)
        .collect();
    let chunk: usize = sizes.iter().product();
    if let Some(attr) = cx.attrs().get(xla_lanes::ATTR) {
        let streams = match attr {
            neuronc_ir::Attr::Int(n, _) => *n,
            _ => 1,
        };
        let shape = (sizes.as_slice(), streams);
        if let Some(t) = xla_order(it, region, (&moved, inits), &outs[0], shape) {
            return Ok(vec![t]);
        }
    }
    fold_all(it, region, &moved, inits, outs, chunk, Accum::Wide)
}

/// A single-input f32-class sum or product folded in XLA:CPU's order
/// ([`xla_lanes::fold`]); `None` for other reductions.
fn xla_order(
    it: &Interp<'_>,
    region: RegionId,
    (srcs, inits): (&[Tensor], &[Tensor]),
    out: &TensorType,
    (sizes, streams): (&[usize], i64),
) -> Option<Tensor> {
    let Body::Bin(kind @ (OpKind::Add | OpKind::Multiply)) = classify(it.m, region) else {
        return None;
    };
    let (Data::F32(src), Data::F32(init)) = (srcs.first()?.data(), inits.first()?.data()) else {
        return None;
    };
    let outs = out.num_elements() as usize;
    let v = xla_lanes::fold(kind, out.elem, src, (outs, sizes, streams), *init.first()?);
    Tensor::new(out.clone(), Data::F32(v)).ok()
}

/// Window geometry of `reduce_window` / `select_and_scatter`.
struct Window {
    size: Vec<i64>,
    stride: Vec<i64>,
    base_dil: Vec<i64>,
    win_dil: Vec<i64>,
    pad_lo: Vec<i64>,
}

impl Window {
    fn from_attrs(cx: &Ctx<'_>, rank: usize) -> Res<Window> {
        let pad = cx.ints_or("padding", vec![0; 2 * rank]);
        Ok(Window {
            size: cx.ints("window_dimensions")?,
            stride: cx.ints_or("window_strides", vec![1; rank]),
            base_dil: cx.ints_or("base_dilations", vec![1; rank]),
            win_dil: cx.ints_or("window_dilations", vec![1; rank]),
            pad_lo: (0..rank)
                .map(|d| pad.get(2 * d).copied().unwrap_or(0))
                .collect(),
        })
    }

    /// For each output index (row-major over `out_shape`) and each window position, the
    /// linear input index or `None` for padding/holes.
    fn indices(&self, in_shape: &[i64], out_shape: &[i64]) -> Vec<Option<usize>> {
        let rank = in_shape.len();
        let ist = strides(in_shape);
        let n_out: usize = dims(out_shape).iter().product();
        let wn: usize = dims(&self.size).iter().product();
        let mut res = Vec::with_capacity(n_out * wn);
        let mut oi = vec![0i64; rank];
        for _ in 0..n_out {
            let mut wi = vec![0i64; rank];
            for _ in 0..wn {
                let mut lin = Some(0usize);
                for d in 0..rank {
                    let p = oi[d] * self.stride[d] + wi[d] * self.win_dil[d] - self.pad_lo[d];
                    if p < 0 || p % self.base_dil[d] != 0 || p / self.base_dil[d] >= in_shape[d] {
                        lin = None;
                        break;
                    }
                    lin = lin.map(|l| l + (p / self.base_dil[d]) as usize * ist[d] as usize);
                }
                res.push(lin);
                bump(&mut wi, &self.size);
            }
            bump(&mut oi, out_shape);
        }
        res
    }
}

/// Row-major increment of a multi-index.
pub(crate) fn bump(idx: &mut [i64], shape: &[i64]) {
    for d in (0..idx.len()).rev() {
        idx[d] += 1;
        if idx[d] < shape[d] {
            return;
        }
        idx[d] = 0;
    }
}

fn reduce_window(
    it: &mut Interp<'_>,
    cx: &Ctx<'_>,
    ins: &[Tensor],
    r: Option<RegionId>,
    outs: &[TensorType],
) -> Res<Vec<Tensor>> {
    let region = need_region(cx, r)?;
    let n = ins.len() / 2;
    let (srcs, inits) = ins.split_at(n);
    let w = Window::from_attrs(cx, srcs[0].rank())?;
    let idx = w.indices(srcs[0].shape(), &outs[0].shape);
    let chunk: usize = dims(&w.size).iter().product();
    // Gather windows; index `len` is the init value appended at the end.
    let windows: Vec<Tensor> = srcs
        .iter()
        .zip(inits)
        .map(|(s, i)| {
            let mut ext = s.data().empty_like(s.len() + 1);
            for j in 0..s.len() {
                ext.push_from(s.data(), j);
            }
            ext.push_from(i.data(), 0);
            let g: Vec<usize> = idx.iter().map(|o| o.unwrap_or(s.len())).collect();
            Tensor::new(TensorType::new(s.elem(), &[g.len() as i64]), ext.gather(&g))
                .map_err(|e| cx.err(e))
        })
        .collect::<Res<_>>()?;
    // XLA:CPU folds each window in order in the element type.
    fold_all(it, region, &windows, inits, outs, chunk, Accum::Sequential)
}

fn select_and_scatter(
    it: &mut Interp<'_>,
    cx: &Ctx<'_>,
    ins: &[Tensor],
    outs: &[TensorType],
) -> Res<Vec<Tensor>> {
    let (operand, source, init) = match ins {
        [a, b, c] => (a, b, c),
        _ => return Err(cx.err("expects three operands")),
    };
    let (select, scatter) = match cx.op.regions.as_slice() {
        [a, b] => (*a, *b),
        _ => return Err(cx.err("expects two regions")),
    };
    let w = Window::from_attrs(cx, operand.rank())?;
    let idx = w.indices(operand.shape(), source.shape());
    let wn: usize = dims(&w.size).iter().product();
    let n = operand.len();
    let mut res = init.data().repeat(0, n);
    let fast = classify(it.m, scatter);
    for s in 0..source.len() {
        let mut sel: Option<usize> = None;
        for cand in idx[s * wn..(s + 1) * wn].iter().flatten() {
            sel = match sel {
                None => Some(*cand),
                Some(cur) => {
                    let keep = it.run_region_t(
                        select,
                        vec![scalar_at(operand, cur), scalar_at(operand, *cand)],
                    )?;
                    if keep.first().map(|t| t.get_i64(0) != 0).unwrap_or(true) {
                        Some(cur)
                    } else {
                        Some(*cand)
                    }
                }
            };
        }
        let Some(p) = sel else { continue };
        let done = matches!(fast, Body::Bin(k) if crate::region::combine_at(k, outs[0].elem, &mut res, p, source.data(), s));
        if !done {
            let cur = Tensor::scalar(outs[0].elem, res.gather(&[p]));
            let v = it.run_region_t(scatter, vec![cur, scalar_at(source, s)])?;
            res.set_from(p, v[0].data(), 0);
        }
    }
    Ok(vec![
        Tensor::new(outs[0].clone(), res).map_err(|e| cx.err(e))?
    ])
}

fn map(
    it: &mut Interp<'_>,
    cx: &Ctx<'_>,
    ins: &[Tensor],
    r: Option<RegionId>,
    outs: &[TensorType],
) -> Res<Vec<Tensor>> {
    let region = need_region(cx, r)?;
    let n = outs[0].num_elements() as usize;
    if ins.len() == 2 {
        if let Body::Bin(k) = classify(it.m, region) {
            let t = crate::elementwise::binary(k, &ins[0], &ins[1], &outs[0]);
            return Ok(vec![cx.wrap(t)?]);
        }
    }
    let mut data = Data::zeros(outs[0].elem, 0).empty_like(n);
    for i in 0..n {
        let args = ins.iter().map(|t| scalar_at(t, i)).collect();
        let v = it.run_region_t(region, args)?;
        data.push_from(v[0].data(), 0);
    }
    Ok(vec![
        Tensor::new(outs[0].clone(), data).map_err(|e| cx.err(e))?
    ])
}
