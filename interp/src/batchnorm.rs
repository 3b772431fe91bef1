//! `batch_norm_inference`, `batch_norm_training`, `batch_norm_grad` (spec formulas,
//! computed in f64 per feature and rounded to the element type once).
//!
//! Owns: the per-feature statistics. Invariant: `feature_index` is checked against the
//! operand rank; variances are biased (divided by the element count), as in the spec.

use crate::dispatch::Ctx;
use crate::eval::Res;
use crate::tensor::Tensor;
use neuronc_ir::{Attr, OpKind};

/// Per-feature view: the elements are `outer` blocks of `nf` features of `inner`
/// contiguous elements each.
struct Feat {
    inner: usize,
    nf: usize,
}

impl Feat {
    fn of(&self, i: usize) -> usize {
        (i / self.inner) % self.nf
    }

    /// Calls `f(feature, run)` for each maximal run of one feature's elements, in
    /// element order (`v.len()` must be a multiple of `inner * nf`).
    fn runs<'v, T>(&self, v: &'v [T], mut f: impl FnMut(usize, &'v [T])) {
        for (k, run) in v.chunks(self.inner.max(1)).enumerate() {
            f(k % self.nf.max(1), run);
        }
    }

    /// Maps each element with its feature, in element order.
    fn map(&self, v: &[f64], f: impl Fn(usize, f64) -> f64) -> Vec<f64> {
        let mut out = Vec::with_capacity(v.len());
        self.runs(v, |c, run| out.extend(run.iter().map(|&a| f(c, a))));
        out
    }
}

pub(crate) fn exec(cx: &Ctx<'_>, ins: &[&Tensor]) -> Res<Vec<Tensor>> {
    let x = *ins.first().ok_or_else(|| cx.err("missing operand"))?;
    let fi = cx.int("feature_index")? as usize;
    if fi >= x.rank() {
        return Err(cx.err("feature_index out of range"));
    }
    let eps = match cx.attrs().get("epsilon") {
        Some(Attr::Float(f, _)) => *f as f32 as f64,
        _ => return Err(cx.err("missing epsilon")),
    };
    let nf = x.shape()[fi] as usize;
    let inner: usize = x.shape()[fi + 1..].iter().map(|&d| d as usize).product();
    let f = Feat { inner, nf };
    let xv = x.to_f64_vec();
    let cnt = (xv.len() / nf.max(1)).max(1) as f64;
    let get = |i: usize| -> Res<Vec<f64>> {
        Ok(ins
            .get(i)
            .ok_or_else(|| cx.err("missing operand"))?
            .to_f64_vec())
    };
    let stats = |v: &[f64]| -> (Vec<f64>, Vec<f64>) {
        let mut mean = vec![0.0; nf];
        f.runs(v, |c, run| run.iter().for_each(|&a| mean[c] += a));
        mean.iter_mut().for_each(|m| *m /= cnt);
        let mut var = vec![0.0; nf];
        f.runs(v, |c, run| {
            run.iter().for_each(|&a| var[c] += (a - mean[c]).powi(2));
        });
        var.iter_mut().for_each(|m| *m /= cnt);
        (mean, var)
    };
    let mk = |i: usize, v: &[f64]| -> Res<Tensor> {
        let o = cx.out(i)?;
        cx.wrap(Tensor::from_f64_as(o.elem, &o.shape, v))
    };
    let normalize = |mean: &[f64], var: &[f64], scale: &[f64], off: &[f64]| -> Vec<f64> {
        let sd: Vec<f64> = var.iter().map(|v| (v + eps).sqrt()).collect();
        f.map(&xv, |c, a| scale[c] * (a - mean[c]) / sd[c] + off[c])
    };
    match cx.op.kind {
        OpKind::BatchNormInference => {
            let (scale, off, mean, var) = (get(1)?, get(2)?, get(3)?, get(4)?);
            Ok(vec![mk(0, &normalize(&mean, &var, &scale, &off))?])
        }
        OpKind::BatchNormTraining => {
            let (scale, off) = (get(1)?, get(2)?);
            let (mean, var) = stats(&xv);
            Ok(vec![
                mk(0, &normalize(&mean, &var, &scale, &off))?,
                mk(1, &mean)?,
                mk(2, &var)?,
            ])
        }
        _ => {
            let (scale, mean, var, gy) = (get(1)?, get(2)?, get(3)?, get(4)?);
            let sd: Vec<f64> = var.iter().map(|v| (v + eps).sqrt()).collect();
            let norm: Vec<f64> = xv
                .iter()
                .enumerate()
                .map(|(i, &a)| (a - mean[f.of(i)]) / sd[f.of(i)])
                .collect();
            let mut g_off = vec![0.0; nf];
            let mut g_scale = vec![0.0; nf];
            for i in 0..xv.len() {
                g_off[f.of(i)] += gy[i];
                g_scale[f.of(i)] += gy[i] * norm[i];
            }
            let gx: Vec<f64> = (0..xv.len())
                .map(|i| {
                    let c = f.of(i);
                    scale[c] / sd[c] * (gy[i] - g_off[c] / cnt - norm[i] * g_scale[c] / cnt)
                })
                .collect();
            Ok(vec![mk(0, &gx)?, mk(1, &g_scale)?, mk(2, &g_off)?])
        }
    }
}
