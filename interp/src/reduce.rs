//! Region-carrying reductions: `reduce`, `reduce_window`, `select_and_scatter`, `map`
//! (sorting is in [`crate::sort`]).
//!
//! Owns: the iteration orders of these ops. Each op first tries a fast path (the body is
//! one binary op, see [`crate::region`]) that folds contiguous chunks; otherwise it
//! interprets the body on scalar tensors, in row-major order of the reduced elements.
//! `reduce_window` gathers its windows a batch of outputs at a time (scratch memory is
//! bounded, not proportional to outputs × window), and folds a cumulative window
//! (`cumsum` and friends) as a running fold when that is provably the same fold.
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
    pad_hi: Vec<i64>,
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
            pad_hi: (0..rank)
                .map(|d| pad.get(2 * d + 1).copied().unwrap_or(0))
                .collect(),
        })
    }

    /// The axis of a cumulative window (what jax and torch_xla lower `cumsum`, `cumprod`,
    /// `cummax`, ... to): along `axis` (length `n > 1`) window `n`, low padding `n - 1`,
    /// no high padding; every other dimension has window 1 and no padding; strides and
    /// dilations are 1, and the output shape is the input shape. Output `o` along `axis`
    /// then sees `n - 1 - o` padding positions, then input elements `0..=o` in order.
    fn cumulative_axis(&self, in_shape: &[i64], out_shape: &[i64]) -> Option<usize> {
        let rank = in_shape.len();
        let ones = |v: &[i64]| v.len() == rank && v.iter().all(|&x| x == 1);
        if in_shape != out_shape || !ones(&self.stride) || !ones(&self.base_dil) {
            return None;
        }
        if !ones(&self.win_dil) || self.size.len() != rank {
            return None;
        }
        let axis = (0..rank).find(|&d| self.size[d] != 1)?;
        let plain = |d: usize| self.size[d] == 1 && self.pad_lo[d] == 0 && self.pad_hi[d] == 0;
        let n = in_shape[axis];
        let cum = n > 1 && self.size[axis] == n && self.pad_lo[axis] == n - 1;
        let ok = cum && self.pad_hi[axis] == 0 && (0..rank).all(|d| d == axis || plain(d));
        ok.then_some(axis)
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
    if let Some(axis) = w.cumulative_axis(srcs[0].shape(), &outs[0].shape) {
        if let Some(r) = window_scan(it, region, (srcs, inits), outs, axis)? {
            return Ok(r);
        }
    }
    window_fold(it, cx, region, (srcs, inits), outs, &w)
}

/// Gathered window elements per batch of outputs: bounds the scratch memory of
/// [`window_fold`] (a batch holds at least one whole window).
const WINDOW_BATCH: usize = 1 << 16;

/// Folds every window from the init value, in row-major order of the window positions
/// (padding and base-dilation holes read as the init value), as XLA:CPU does in the
/// element type. Windows are gathered and folded a batch of outputs at a time.
fn window_fold(
    it: &mut Interp<'_>,
    cx: &Ctx<'_>,
    region: RegionId,
    (srcs, inits): (&[Tensor], &[Tensor]),
    outs: &[TensorType],
    w: &Window,
) -> Res<Vec<Tensor>> {
    let out_shape = &outs[0].shape;
    let n_out: usize = dims(out_shape).iter().product();
    let chunk: usize = dims(&w.size).iter().product();
    // Each input followed by its init value, read at index `pad` for padding and holes.
    let pad = srcs[0].len();
    let ext: Vec<Data> = srcs
        .iter()
        .zip(inits)
        .map(|(s, i)| {
            let mut e = s.data().empty_like(s.len() + 1);
            (0..s.len()).for_each(|j| e.push_from(s.data(), j));
            e.push_from(i.data(), 0);
            e
        })
        .collect();
    let mut data: Vec<Data> = inits.iter().map(|t| t.data().empty_like(n_out)).collect();
    let mut cursor = WindowCursor::new(w, srcs[0].shape(), out_shape);
    let per_batch = (WINDOW_BATCH / chunk.max(1)).max(1);
    let mut g = Vec::new();
    let mut done = 0;
    while done < n_out {
        let b = per_batch.min(n_out - done);
        g.clear();
        (0..b).for_each(|_| cursor.next_window(pad, &mut g));
        let windows: Vec<Tensor> = ext
            .iter()
            .zip(srcs)
            .map(|(e, s)| {
                let ty = TensorType::new(s.elem(), &[g.len() as i64]);
                Tensor::new(ty, e.gather(&g)).map_err(|m| cx.err(m))
            })
            .collect::<Res<_>>()?;
        let tys: Vec<TensorType> = outs
            .iter()
            .map(|o| TensorType::new(o.elem, &[b as i64]))
            .collect();
        let part = fold_all(it, region, &windows, inits, &tys, chunk, Accum::Sequential)?;
        for (d, t) in data.iter_mut().zip(&part) {
            (0..b).for_each(|j| d.push_from(t.data(), j));
        }
        done += b;
    }
    data.into_iter()
        .zip(outs)
        .map(|(d, o)| Tensor::new(o.clone(), d).map_err(|m| cx.err(m)))
        .collect()
}

/// A cumulative `reduce_window` ([`Window::cumulative_axis`]) as a running fold along
/// `axis`. Output `o` of a line folds `init` over `n - 1 - o` padding copies of `init`
/// and then elements `0..=o` in order; when `body(init, init)` is bitwise `init`, the
/// padding steps leave `init` unchanged, so that fold is exactly the running fold after
/// step `o` (each step is a deterministic function of the accumulator and the element).
/// `None` when `body(init, init)` is not `init`.
fn window_scan(
    it: &mut Interp<'_>,
    region: RegionId,
    (srcs, inits): (&[Tensor], &[Tensor]),
    outs: &[TensorType],
    axis: usize,
) -> Res<Option<Vec<Tensor>>> {
    let scalars: Vec<TensorType> = outs.iter().map(|o| TensorType::new(o.elem, &[])).collect();
    let step = |it: &mut Interp<'_>, acc: &[Tensor], xs: Vec<Tensor>| {
        fold_all(it, region, &xs, acc, &scalars, 1, Accum::Sequential)
    };
    let twice = step(it, inits, inits.to_vec())?;
    if !twice
        .iter()
        .zip(inits)
        .all(|(a, b)| same_bits(a.data(), b.data()))
    {
        return Ok(None);
    }
    let shape = dims(srcs[0].shape());
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let lines: usize = shape[..axis].iter().product::<usize>() * inner;
    let total = lines * n;
    let mut data: Vec<Data> = inits.iter().map(|t| t.data().repeat(0, total)).collect();
    for line in 0..lines {
        let base = (line / inner) * n * inner + line % inner;
        let mut acc: Vec<Tensor> = inits.to_vec();
        for o in 0..n {
            let at = base + o * inner;
            acc = step(it, &acc, srcs.iter().map(|s| scalar_at(s, at)).collect())?;
            for (d, a) in data.iter_mut().zip(&acc) {
                d.set_from(at, a.data(), 0);
            }
        }
    }
    let r = data
        .into_iter()
        .zip(outs)
        .map(|(d, o)| {
            Tensor::new(o.clone(), d).map_err(|m| crate::eval::op_err(OpKind::ReduceWindow, m))
        })
        .collect::<Res<_>>()?;
    Ok(Some(r))
}

/// Whether two storages hold the same bits (so `-0.0` differs from `0.0`, and a NaN
/// equals itself).
fn same_bits(a: &Data, b: &Data) -> bool {
    match (a, b) {
        (Data::Int(x), Data::Int(y)) => x == y,
        (Data::F32(x), Data::F32(y)) => x
            .iter()
            .map(|v| v.to_bits())
            .eq(y.iter().map(|v| v.to_bits())),
        (Data::F64(x), Data::F64(y)) => x
            .iter()
            .map(|v| v.to_bits())
            .eq(y.iter().map(|v| v.to_bits())),
        (Data::C64(x), Data::C64(y)) => x
            .iter()
            .map(|v| (v.re.to_bits(), v.im.to_bits()))
            .eq(y.iter().map(|v| (v.re.to_bits(), v.im.to_bits()))),
        (Data::C128(x), Data::C128(y)) => x
            .iter()
            .map(|v| (v.re.to_bits(), v.im.to_bits()))
            .eq(y.iter().map(|v| (v.re.to_bits(), v.im.to_bits()))),
        _ => false,
    }
}

/// Walks the outputs of a `reduce_window` in row-major order, appending each one's window
/// (linear input indices in row-major order of the window positions) to a buffer.
struct WindowCursor<'w> {
    w: &'w Window,
    in_shape: Vec<i64>,
    ist: Vec<isize>,
    out_shape: Vec<i64>,
    oi: Vec<i64>,
    /// Per dimension and window position: the input offset, or `None` for padding/holes.
    offs: Vec<Vec<Option<usize>>>,
}

impl<'w> WindowCursor<'w> {
    fn new(w: &'w Window, in_shape: &[i64], out_shape: &[i64]) -> WindowCursor<'w> {
        WindowCursor {
            w,
            in_shape: in_shape.to_vec(),
            ist: strides(in_shape),
            out_shape: out_shape.to_vec(),
            oi: vec![0; out_shape.len()],
            offs: vec![Vec::new(); in_shape.len()],
        }
    }

    /// Appends the window of the current output (`pad` for padding/holes) to `g`, then
    /// moves to the next output.
    fn next_window(&mut self, pad: usize, g: &mut Vec<usize>) {
        let w = self.w;
        for (d, offs) in self.offs.iter_mut().enumerate() {
            offs.clear();
            offs.extend((0..w.size[d]).map(|k| {
                let p = self.oi[d] * w.stride[d] + k * w.win_dil[d] - w.pad_lo[d];
                let inside =
                    p >= 0 && p % w.base_dil[d] == 0 && p / w.base_dil[d] < self.in_shape[d];
                inside.then(|| (p / w.base_dil[d]) as usize * self.ist[d] as usize)
            }));
        }
        push_product(&self.offs, Some(0), pad, g);
        bump(&mut self.oi, &self.out_shape);
    }
}

/// Appends `base` plus every row-major combination of one offset per dimension of
/// `offs` to `g` (`pad` where any part is `None`).
fn push_product(offs: &[Vec<Option<usize>>], base: Option<usize>, pad: usize, g: &mut Vec<usize>) {
    match offs {
        [] => g.push(base.unwrap_or(pad)),
        [last] => g.extend(
            last.iter()
                .map(|&o| base.zip(o).map_or(pad, |(a, b)| a + b)),
        ),
        [first, rest @ ..] => {
            for &o in first {
                push_product(rest, base.zip(o).map(|(a, b)| a + b), pad, g);
            }
        }
    }
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

#[cfg(test)]
mod tests {
    use super::{Window, WindowCursor};

    /// xorshift64: a deterministic stream for the geometries below.
    fn next(s: &mut u64, below: i64) -> i64 {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        (*s % below as u64) as i64
    }

    /// The window walk lists, output by output, the same input positions as
    /// [`Window::indices`] (the straightforward per-position computation) for random
    /// shapes, windows, strides, dilations and paddings.
    #[test]
    fn cursor_walks_the_same_windows_as_indices() {
        let mut s = 0x2545_F491_4F6C_DD1D_u64;
        for _ in 0..500 {
            let rank = 1 + next(&mut s, 3) as usize;
            let mut v = |lo: i64, n: i64| (0..rank).map(|_| lo + next(&mut s, n)).collect();
            let in_shape: Vec<i64> = v(1, 5);
            let w = Window {
                size: v(1, 4),
                stride: v(1, 3),
                base_dil: v(1, 3),
                win_dil: v(1, 3),
                pad_lo: v(0, 4),
                pad_hi: v(0, 4),
            };
            let out_shape: Vec<i64> = (0..rank)
                .map(|d| {
                    let padded = (in_shape[d] - 1) * w.base_dil[d] + 1 + w.pad_lo[d] + w.pad_hi[d];
                    let span = (w.size[d] - 1) * w.win_dil[d] + 1;
                    if padded < span {
                        0
                    } else {
                        (padded - span) / w.stride[d] + 1
                    }
                })
                .collect();
            let pad = in_shape.iter().product::<i64>() as usize;
            let want: Vec<usize> = w
                .indices(&in_shape, &out_shape)
                .into_iter()
                .map(|i| i.unwrap_or(pad))
                .collect();
            let mut cursor = WindowCursor::new(&w, &in_shape, &out_shape);
            let mut got = Vec::new();
            let n_out: i64 = out_shape.iter().product();
            (0..n_out).for_each(|_| cursor.next_window(pad, &mut got));
            assert_eq!(got, want, "{in_shape:?} {out_shape:?}");
        }
    }
}
