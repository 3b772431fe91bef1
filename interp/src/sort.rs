//! `sort` (comparator region, optionally stable) and `chlo.top_k`.
//!
//! Owns: a stable merge sort driven by a fallible comparator, so that a comparator that
//! is not a strict weak order (or fails) can never panic. A comparator that is a single
//! `compare` of its first two arguments runs without interpreting the region.
//! Invariant: the sort is always stable (allowed for `is_stable = false` too).

use crate::dispatch::Ctx;
use crate::elementwise::compare;
use crate::eval::{Interp, Res};
use crate::region::scalar_at;
use crate::shape::{dims, strides};
use crate::tensor::{Data, Tensor};
use neuronc_ir::{ElemType, OpKind, RegionId, TensorType};

/// Stable merge sort of `v` where `less(a, b)` may fail.
fn merge_sort<E>(
    v: &mut Vec<usize>,
    less: &mut impl FnMut(usize, usize) -> Result<bool, E>,
) -> Result<(), E> {
    let n = v.len();
    let mut buf = v.clone();
    let mut width = 1;
    while width < n {
        let mut i = 0;
        while i < n {
            let mid = (i + width).min(n);
            let hi = (i + 2 * width).min(n);
            let (mut a, mut b, mut k) = (i, mid, i);
            while a < mid && b < hi {
                if less(v[b], v[a])? {
                    buf[k] = v[b];
                    b += 1;
                } else {
                    buf[k] = v[a];
                    a += 1;
                }
                k += 1;
            }
            buf[k..k + mid - a].copy_from_slice(&v[a..mid]);
            k += mid - a;
            buf[k..k + hi - b].copy_from_slice(&v[b..hi]);
            i = hi;
        }
        std::mem::swap(v, &mut buf);
        width *= 2;
    }
    Ok(())
}

/// A comparator that is `compare(arg0, arg1)` with a direction and type.
pub(crate) fn simple_comparator(it: &Interp<'_>, r: RegionId) -> Option<(String, Option<String>)> {
    let m = it.m;
    let reg = m.region(r);
    let [c, ret] = reg.ops.as_slice() else {
        return None;
    };
    let (c, ret) = (m.op(*c), m.op(*ret));
    let ok = c.kind == OpKind::Compare
        && reg.args.len() >= 2
        && c.operands == [reg.args[0], reg.args[1]]
        && ret.operands == c.results;
    if !ok {
        return None;
    }
    let dir = c.attrs.enum_value("comparison_direction")?.to_string();
    let ty = c.attrs.enum_value("compare_type").map(str::to_string);
    Some((dir, ty))
}

/// `sort` along `dimension`, permuting every operand the same way.
pub(crate) fn sort(
    it: &mut Interp<'_>,
    cx: &Ctx<'_>,
    ins: &[Tensor],
    r: Option<RegionId>,
) -> Res<Vec<Tensor>> {
    let region = r.ok_or_else(|| cx.err("missing comparator"))?;
    let first = ins.first().ok_or_else(|| cx.err("no operands"))?;
    let rank = first.rank() as i64;
    let mut dim = cx.op.attrs.int("dimension").unwrap_or(-1);
    if dim < 0 {
        dim += rank;
    }
    if !(0..rank).contains(&dim) {
        return Err(cx.err("bad dimension"));
    }
    sort_along(it, cx, ins, region, dim as usize)
}

/// Sorts every operand along dimension `d` (in range) by the comparator `region`.
pub(crate) fn sort_along(
    it: &mut Interp<'_>,
    cx: &Ctx<'_>,
    ins: &[Tensor],
    region: RegionId,
    d: usize,
) -> Res<Vec<Tensor>> {
    let first = ins.first().ok_or_else(|| cx.err("no operands"))?;
    let shape = dims(first.shape());
    let st = strides(first.shape());
    let len = shape[d];
    let stride = st[d] as usize;
    let simple = simple_comparator(it, region);
    let mut perm_all: Vec<usize> = (0..first.len()).collect();
    // Each line along `d` starts at a base index with coordinate 0 on `d`.
    let bases: Vec<usize> = (0..first.len())
        .filter(|&i| (i / stride).is_multiple_of(len.max(1)))
        .collect();
    for base in bases {
        let line: Vec<usize> = (0..len).map(|j| base + j * stride).collect();
        let mut order: Vec<usize> = (0..len).collect();
        if let Some((dir, ty)) = &simple {
            let keys = Tensor::new(
                TensorType::new(first.elem(), &[len as i64]),
                first.data().gather(&line),
            )
            .map_err(|e| cx.err(e))?;
            let mut less = |a: usize, b: usize| -> Res<bool> {
                let (x, y) = (scalar_at(&keys, a), scalar_at(&keys, b));
                Ok(compare(&x, &y, dir, ty.as_deref())
                    .map_err(|e| cx.err(e))?
                    .get_i64(0)
                    != 0)
            };
            merge_sort(&mut order, &mut less)?;
        } else {
            let mut less = |a: usize, b: usize| -> Res<bool> {
                let mut args = Vec::with_capacity(2 * ins.len());
                for t in ins {
                    args.push(scalar_at(t, line[a]));
                    args.push(scalar_at(t, line[b]));
                }
                let v = it.run_region_t(region, args)?;
                Ok(v.first().map(|t| t.get_i64(0) != 0).unwrap_or(false))
            };
            merge_sort(&mut order, &mut less)?;
        }
        for (j, &o) in order.iter().enumerate() {
            perm_all[line[j]] = line[o];
        }
    }
    ins.iter()
        .map(|t| Tensor::new(t.ty().clone(), t.data().gather(&perm_all)).map_err(|e| cx.err(e)))
        .collect()
}

/// `chlo.top_k`: the `k` largest along the last dim (descending, ties by lower index) and
/// their `i32` indices.
pub(crate) fn top_k(cx: &Ctx<'_>, ins: &[Tensor], outs: &[TensorType]) -> Res<Vec<Tensor>> {
    let x = ins.first().ok_or_else(|| cx.err("no operand"))?;
    let k = cx.int("k")? as usize;
    let n = *x.shape().last().ok_or_else(|| cx.err("rank 0 operand"))? as usize;
    let rows = x.len().checked_div(n).unwrap_or(0);
    let mut take = Vec::with_capacity(rows * k);
    let mut idx = Vec::with_capacity(rows * k);
    for r in 0..rows {
        let mut order: Vec<usize> = (0..n).collect();
        match x.data() {
            Data::F32(v) => order.sort_by(|&a, &b| v[r * n + b].total_cmp(&v[r * n + a])),
            Data::F64(v) => order.sort_by(|&a, &b| v[r * n + b].total_cmp(&v[r * n + a])),
            Data::Int(v) if x.elem().is_unsigned() => {
                order.sort_by(|&a, &b| (v[r * n + b] as u64).cmp(&(v[r * n + a] as u64)))
            }
            Data::Int(v) => order.sort_by(|&a, &b| v[r * n + b].cmp(&v[r * n + a])),
            _ => return Err(cx.err("top_k of complex values")),
        }
        for &o in order.iter().take(k) {
            take.push(r * n + o);
            idx.push(o as i64);
        }
    }
    let vals = Tensor::new(outs[0].clone(), x.data().gather(&take)).map_err(|e| cx.err(e))?;
    let ie = outs.get(1).map_or(ElemType::Int(32), |o| o.elem);
    let shape = outs
        .get(1)
        .map_or(outs[0].shape.clone(), |o| o.shape.clone());
    let inds = Tensor::from_i64(ie, &shape, &idx).map_err(|e| cx.err(e))?;
    Ok(vec![vals, inds])
}
