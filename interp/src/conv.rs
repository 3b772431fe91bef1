//! `convolution`: strides, padding, lhs/rhs dilation, window reversal, feature and batch
//! groups, arbitrary dimension numbers.
//!
//! Owns: the lowering to im2col + GEMM. Operands are first transposed to
//! `[batch, feature, spatial...]` / `[out_feature, in_feature, spatial...]`; each
//! (batch group, feature group) becomes one GEMM of the im2col matrix with the kernel;
//! the `[batch, feature, spatial...]` result is transposed to the result layout.
//! f32 accumulates each output in f32, in XLA:CPU's order (kernel positions outer,
//! input features inner; products rounded, no fused multiply-add), so results match
//! XLA's bit for bit on small convolutions; other real types are computed in f64 and
//! rounded to the result type.

use crate::dispatch::Ctx;
use crate::linalg::gemm_f64;
use crate::reduce::bump;
use crate::shape::{dims, strides, transpose};
use crate::tensor::Tensor;
use neuronc_ir::attr::ConvDims;
use neuronc_ir::{Attr, ElemType, TensorType};

type R<T> = Result<T, String>;

fn permuted(t: &Tensor, perm: &[i64]) -> R<Tensor> {
    let shape: Vec<i64> = perm.iter().map(|&d| t.shape()[d as usize]).collect();
    transpose(t, perm, &TensorType::new(t.elem(), &shape))
}

/// Convolution geometry in canonical layout.
struct Geom {
    in_sp: Vec<i64>,
    k_sp: Vec<i64>,
    out_sp: Vec<i64>,
    stride: Vec<i64>,
    pad_lo: Vec<i64>,
    lhs_dil: Vec<i64>,
    rhs_dil: Vec<i64>,
    reverse: Vec<bool>,
}

impl Geom {
    /// im2col of one (batch, channel range): row per output position, column per
    /// (channel, kernel position). `x` is `[C, in_sp...]` for one batch element.
    fn im2col<T: Copy + Default>(&self, x: &[T], c0: usize, cn: usize, dst: &mut Vec<T>) {
        let ns = self.in_sp.len();
        let isz: usize = dims(&self.in_sp).iter().product();
        let ist = strides(&self.in_sp);
        let kn: usize = dims(&self.k_sp).iter().product();
        let on: usize = dims(&self.out_sp).iter().product();
        let mut oi = vec![0i64; ns];
        for _ in 0..on {
            for c in c0..c0 + cn {
                let mut ki = vec![0i64; ns];
                for _ in 0..kn {
                    let mut lin = Some(c * isz);
                    for d in 0..ns {
                        let k = if self.reverse[d] {
                            self.k_sp[d] - 1 - ki[d]
                        } else {
                            ki[d]
                        };
                        let p = oi[d] * self.stride[d] + k * self.rhs_dil[d] - self.pad_lo[d];
                        if p < 0 || p % self.lhs_dil[d] != 0 || p / self.lhs_dil[d] >= self.in_sp[d]
                        {
                            lin = None;
                            break;
                        }
                        lin = lin.map(|l| l + (p / self.lhs_dil[d]) as usize * ist[d] as usize);
                    }
                    dst.push(lin.map_or_else(T::default, |l| x[l]));
                    bump(&mut ki, &self.k_sp);
                }
            }
            bump(&mut oi, &self.out_sp);
        }
    }
}

/// `convolution` from an op.
pub(crate) fn convolution(cx: &Ctx<'_>, ins: &[&Tensor]) -> R<Tensor> {
    let (lhs, rhs) = match ins {
        [a, b, ..] => (*a, *b),
        _ => return Err("expects two operands".into()),
    };
    let dn = match cx.attrs().get("dimension_numbers") {
        Some(Attr::ConvDims(d)) => d.clone(),
        _ => return Err("missing dimension_numbers".into()),
    };
    let out = cx.out(0).map_err(|e| e.to_string())?;
    let ns = dn.input_spatial.len();
    let a = cx.attrs();
    let pad = a.i64_array("padding").unwrap_or(vec![0; 2 * ns]);
    let reverse = match a.get("window_reversal") {
        Some(Attr::BoolArray(b)) => b.clone(),
        _ => vec![false; ns],
    };
    let g = Geom {
        in_sp: dn
            .input_spatial
            .iter()
            .map(|&d| lhs.shape()[d as usize])
            .collect(),
        k_sp: dn
            .kernel_spatial
            .iter()
            .map(|&d| rhs.shape()[d as usize])
            .collect(),
        out_sp: dn
            .output_spatial
            .iter()
            .map(|&d| out.shape[d as usize])
            .collect(),
        stride: a.i64_array("window_strides").unwrap_or(vec![1; ns]),
        pad_lo: (0..ns)
            .map(|d| pad.get(2 * d).copied().unwrap_or(0))
            .collect(),
        lhs_dil: a.i64_array("lhs_dilation").unwrap_or(vec![1; ns]),
        rhs_dil: a.i64_array("rhs_dilation").unwrap_or(vec![1; ns]),
        reverse,
    };
    let fg = a.int("feature_group_count").unwrap_or(1).max(1) as usize;
    let bg = a.int("batch_group_count").unwrap_or(1).max(1) as usize;
    conv(lhs, rhs, &dn, &g, fg, bg, out)
}

fn conv(
    lhs: &Tensor,
    rhs: &Tensor,
    dn: &ConvDims,
    g: &Geom,
    fg: usize,
    bg: usize,
    out: &TensorType,
) -> R<Tensor> {
    let lp: Vec<i64> = [dn.input_batch, dn.input_feature]
        .iter()
        .chain(&dn.input_spatial)
        .copied()
        .collect();
    let rp: Vec<i64> = [dn.kernel_output_feature, dn.kernel_input_feature]
        .iter()
        .chain(&dn.kernel_spatial)
        .copied()
        .collect();
    let (l, r) = (permuted(lhs, &lp)?, permuted(rhs, &rp)?);
    let (n_in, c) = (l.shape()[0] as usize, l.shape()[1] as usize);
    let (o, ig) = (r.shape()[0] as usize, r.shape()[1] as usize);
    let n_out = n_in / bg;
    if c != ig * fg || o % (fg * bg) != 0 || n_in % bg != 0 {
        return Err("feature/batch group counts do not divide the dims".into());
    }
    let og = o / (fg * bg);
    let isz: usize = dims(&g.in_sp).iter().product();
    let kn: usize = dims(&g.k_sp).iter().product();
    let on: usize = dims(&g.out_sp).iter().product();
    let kcols = ig * kn;
    let canon_shape: Vec<i64> = [n_out as i64, o as i64]
        .iter()
        .chain(&g.out_sp)
        .copied()
        .collect();
    let f32_path = l.elem() == ElemType::F32 && r.elem() == ElemType::F32;
    let mut res = vec![0f64; n_out * o * on];
    let mut res32 = vec![0f32; if f32_path { n_out * o * on } else { 0 }];
    let (lv32, rv32) = (l.as_f32().unwrap_or(&[]), r.as_f32().unwrap_or(&[]));
    let (lv64, rv64) = if f32_path {
        (Vec::new(), Vec::new())
    } else {
        (l.to_f64_vec(), r.to_f64_vec())
    };
    // Groups: output features are ordered (batch group, feature group, og).
    for b in 0..bg {
        for f in 0..fg {
            let o0 = (b * fg + f) * og;
            for n in 0..n_out {
                let bn = b * n_out + n;
                let cell = |k: usize, oc: usize| (n * o + o0 + oc) * on + k;
                if f32_path {
                    let mut cols = Vec::with_capacity(on * kcols);
                    g.im2col(
                        &lv32[bn * c * isz..(bn + 1) * c * isz],
                        f * ig,
                        ig,
                        &mut cols,
                    );
                    // Kernel block [og, ig*kn] for output features o0..o0+og, used transposed.
                    let kb = &rv32[o0 * kcols..(o0 + og) * kcols];
                    let mut tmp = vec![0f32; on * og];
                    dot_kernel_major(&cols, kb, (ig, kn), &mut tmp);
                    for k in 0..on {
                        for oc in 0..og {
                            res32[cell(k, oc)] = tmp[k * og + oc];
                        }
                    }
                } else {
                    let mut cols = Vec::with_capacity(on * kcols);
                    g.im2col(
                        &lv64[bn * c * isz..(bn + 1) * c * isz],
                        f * ig,
                        ig,
                        &mut cols,
                    );
                    let kb = &rv64[o0 * kcols..(o0 + og) * kcols];
                    let mut tmp = vec![0f64; on * og];
                    gemm_f64(on, kcols, og, &cols, (kcols, 1), kb, (1, kcols), &mut tmp);
                    for k in 0..on {
                        for oc in 0..og {
                            res[cell(k, oc)] = tmp[k * og + oc];
                        }
                    }
                }
            }
        }
    }
    let canon = if f32_path {
        let mut v = res32;
        crate::elementwise::round_vec(out.elem, &mut v);
        Tensor::new(
            TensorType::new(out.elem, &canon_shape),
            crate::tensor::Data::F32(v),
        )?
    } else if out.elem.is_float() {
        Tensor::from_f64_as(out.elem, &canon_shape, &res)?
    } else {
        let t = Tensor::from_f64(&canon_shape, &res)?;
        crate::convert::convert(&t, &TensorType::new(out.elem, &canon_shape))?
    };
    // canon dims: [batch, feature, spatial...] -> result layout.
    let mut perm = vec![0i64; out.rank()];
    perm[dn.output_batch as usize] = 0;
    perm[dn.output_feature as usize] = 1;
    for (i, &d) in dn.output_spatial.iter().enumerate() {
        perm[d as usize] = 2 + i as i64;
    }
    if f32_path && out.elem != ElemType::F32 && !out.elem.is_float() {
        return Err("unsupported result type".into());
    }
    transpose(&canon, &perm, out)
}

/// `out[i, j] = sum_p cols[i, p] * kernel[j, p]` over im2col rows `cols` (columns
/// ordered (input feature, kernel position)) and kernel rows, accumulated in f32 with
/// kernel positions outer and input features inner. `out` is `[rows, kernel rows]`.
fn dot_kernel_major(cols: &[f32], kernel: &[f32], (ig, kn): (usize, usize), out: &mut [f32]) {
    let k = ig * kn;
    if k == 0 {
        out.fill(0.0);
        return;
    }
    let n = kernel.len() / k;
    for (row, dst) in cols.chunks_exact(k).zip(out.chunks_exact_mut(n)) {
        for (w, d) in kernel.chunks_exact(k).zip(dst.iter_mut()) {
            let mut acc = 0f32;
            for q in 0..kn {
                for ch in 0..ig {
                    let p = ch * kn + q;
                    acc += row[p] * w[p];
                }
            }
            *d = acc;
        }
    }
}
