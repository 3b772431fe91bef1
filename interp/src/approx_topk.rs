//! `stablehlo.custom_call @ApproxTopK` (jax `lax.approx_max_k` / `approx_min_k`).
//!
//! Owns: [`exec`]. The call takes `N` inputs and `N` initial values (unused here) and a
//! comparator function (`called_computations[0]`, `2N` scalar arguments); its
//! `mhlo.backend_config` names `reduction_dim`. XLA:CPU computes it exactly (the TPU
//! approximation is allowed, not required, to return the exact answer): sort every input
//! along `reduction_dim` by the comparator, then keep the leading elements along that
//! dimension up to each result's extent. Like XLA:CPU (whose `TopkRewriter` turns a sort
//! by a plain `compare GT` followed by a slice into its TopK kernel), such a call on
//! floats orders them totally (NaN first, -NaN last) with ties by lower index; the
//! comparator alone leaves NaN placement to the sort algorithm.
//! Invariants: never panics on malformed calls (typed errors); results in result order.

use crate::dispatch::Ctx;
use crate::eval::{Interp, Res, Val};
use crate::shape::slice;
use crate::shape::{dims, strides};
use crate::tensor::{Data, Tensor};
use neuronc_ir::Attr;

/// Runs one `@ApproxTopK` call on its (already evaluated) operands `ins`.
pub(crate) fn exec(it: &mut Interp<'_>, cx: &Ctx<'_>, ins: &[Tensor]) -> Res<Vec<Val>> {
    let n = cx.op.results.len();
    if n == 0 || ins.len() != 2 * n {
        return Err(cx.err(format!(
            "@ApproxTopK: expected {} operands (inputs and init values), got {}",
            2 * n,
            ins.len()
        )));
    }
    let inputs = &ins[..n];
    let rank = inputs[0].rank() as i64;
    let mut dim = reduction_dim(cx)?;
    if dim < 0 {
        dim += rank;
    }
    if !(0..rank).contains(&dim) || inputs.iter().any(|t| t.shape() != inputs[0].shape()) {
        return Err(cx.err("@ApproxTopK: bad reduction_dim or mismatched inputs"));
    }
    let region = comparator(it, cx)?;
    let d = dim as usize;
    let len = inputs[0].shape()[d];
    let slices = (0..n).all(|i| cx.out(i).is_ok_and(|o| o.shape.get(d) < Some(&len)));
    let sorted = match total_order_top_k(it, region, inputs, d) {
        Some(perm) if slices => inputs
            .iter()
            .map(|t| Tensor::new(t.ty().clone(), t.data().gather(&perm)).map_err(|e| cx.err(e)))
            .collect::<Res<Vec<_>>>()?,
        _ => crate::sort::sort_along(it, cx, inputs, region, d)?,
    };
    let start = vec![0; rank as usize];
    let step = vec![1; rank as usize];
    sorted
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let out = cx.out(i)?;
            let fits = out.rank() == t.rank()
                && out.elem == t.elem()
                && (0..t.rank()).all(|d| {
                    let (o, s) = (out.shape[d], t.shape()[d]);
                    if d == dim as usize {
                        o <= s
                    } else {
                        o == s
                    }
                });
            if !fits {
                return Err(cx.err(format!("@ApproxTopK: result {i} does not fit its input")));
            }
            Ok(Val::T(cx.wrap(slice(t, &start, &step, out))?))
        })
        .collect()
}

/// `reduction_dim` from `mhlo.backend_config` (or a dictionary `backend_config`).
fn reduction_dim(cx: &Ctx<'_>) -> Res<i64> {
    let attrs = cx.attrs();
    [
        attrs.get("mhlo.backend_config"),
        attrs.get("backend_config"),
    ]
    .into_iter()
    .flatten()
    .find_map(|a| match a {
        Attr::Dict(d) => d.int("reduction_dim"),
        _ => None,
    })
    .ok_or_else(|| cx.err("@ApproxTopK: missing reduction_dim"))
}

/// The body of the comparator function named by `called_computations`.
fn comparator(it: &Interp<'_>, cx: &Ctx<'_>) -> Res<neuronc_ir::RegionId> {
    let name = match cx.attrs().get("called_computations") {
        Some(Attr::Array(a)) => match a.first() {
            Some(Attr::Symbol(s)) => Some(s.as_str()),
            _ => None,
        },
        _ => None,
    }
    .ok_or_else(|| cx.err("@ApproxTopK: missing comparator (called_computations)"))?;
    it.m.func(name)
        .map(|f| f.body)
        .ok_or_else(|| cx.err(format!("@ApproxTopK: unknown comparator @{name}")))
}

/// The gather permutation sorting `inputs` along `d` descending in IEEE total order
/// (stable), when the comparator is a plain `compare GT` on `f32`/`f64` keys.
fn total_order_top_k(
    it: &Interp<'_>,
    region: neuronc_ir::RegionId,
    inputs: &[Tensor],
    d: usize,
) -> Option<Vec<usize>> {
    let (dir, ty) = crate::sort::simple_comparator(it, region)?;
    if dir != "GT" || !matches!(ty.as_deref(), None | Some("FLOAT") | Some("TOTALORDER")) {
        return None;
    }
    let first = inputs.first()?;
    let desc = |a: usize, b: usize| match first.data() {
        Data::F32(v) => Some(v[b].total_cmp(&v[a])),
        Data::F64(v) => Some(v[b].total_cmp(&v[a])),
        _ => None,
    };
    desc(0, 0)?;
    let shape = dims(first.shape());
    let stride = strides(first.shape())[d] as usize;
    let len = shape[d];
    let mut perm: Vec<usize> = (0..first.len()).collect();
    for base in (0..first.len()).filter(|&i| (i / stride).is_multiple_of(len.max(1))) {
        let mut line: Vec<usize> = (0..len).map(|j| base + j * stride).collect();
        line.sort_by(|&a, &b| desc(a, b).unwrap_or(std::cmp::Ordering::Equal));
        for (j, &src) in line.iter().enumerate() {
            perm[base + j * stride] = src;
        }
    }
    Some(perm)
}
