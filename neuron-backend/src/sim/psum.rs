//! TensorE matmul numerics for the functional simulator: `dot_general` as the engine
//! computes it.
//!
//! Owns: [`tensor_engine_dot`]. The contraction runs in tiles of [`K_TILE`] rows (the
//! 128 SBUF partitions TensorE contracts over, `neuron-facts.md` §1.2); each tile's
//! product is accumulated in FP32 into the PSUM accumulation group of its output tile,
//! and the result is rounded to the output type when PSUM is evicted. Under
//! `--auto-cast matmult|all` the operands are rounded to BF16 first, as the engine
//! reads them. Only float operands go to TensorE; anything else is `None` and the caller
//! falls back to the interpreter's kernel.
//! Invariants: batch, lhs-free and rhs-free dimensions keep StableHLO's result order
//! (batch…, lhs free…, rhs free…); every read of `matrixmultiply` is bounds-checked first.

use crate::engine::AutoCast;
use neuronc_interp::tensor::round_f32;
use neuronc_interp::{Data, Tensor};
use neuronc_ir::attr::DotDims;
use neuronc_ir::{ElemType, TensorType};

/// Rows of the contraction per TensorE pass: the partition count.
pub const K_TILE: usize = 128;

/// `dot_general(lhs, rhs)` with PSUM accumulation, or `None` if TensorE does not take
/// these element types (integers, f64, complex).
pub fn tensor_engine_dot(
    lhs: &Tensor,
    rhs: &Tensor,
    dims: &DotDims,
    out: &TensorType,
    auto_cast: AutoCast,
) -> Option<Result<Tensor, String>> {
    let (a, b) = (lhs.as_f32()?, rhs.as_f32()?);
    if !is_tensor_engine_float(lhs.elem())
        || !is_tensor_engine_float(rhs.elem())
        || !is_tensor_engine_float(out.elem)
    {
        return None;
    }
    Some(dot(a, lhs.shape(), b, rhs.shape(), dims, out, auto_cast))
}

fn is_tensor_engine_float(e: ElemType) -> bool {
    matches!(
        e,
        ElemType::F32 | ElemType::BF16 | ElemType::F16 | ElemType::F8(_)
    )
}

/// The operand permuted to `[batch, free, contracting]` (lhs) or
/// `[batch, contracting, free]` (rhs), with the three extents.
struct Canon {
    data: Vec<f32>,
    batch: usize,
    free: usize,
    k: usize,
}

fn canon(
    x: &[f32],
    shape: &[i64],
    batch: &[i64],
    contract: &[i64],
    k_last: bool,
) -> Result<Canon, String> {
    let rank = shape.len();
    let dim = |d: &i64| usize::try_from(*d).ok().filter(|&d| d < rank);
    let bd: Vec<usize> = batch
        .iter()
        .map(dim)
        .collect::<Option<_>>()
        .ok_or("bad dim")?;
    let cd: Vec<usize> = contract
        .iter()
        .map(dim)
        .collect::<Option<_>>()
        .ok_or("bad dim")?;
    let fd: Vec<usize> = (0..rank)
        .filter(|d| !bd.contains(d) && !cd.contains(d))
        .collect();
    let ext = |ds: &[usize]| {
        ds.iter()
            .map(|&d| shape[d].max(0) as usize)
            .product::<usize>()
    };
    let mut perm = bd.clone();
    if k_last {
        perm.extend(&fd);
        perm.extend(&cd);
    } else {
        perm.extend(&cd);
        perm.extend(&fd);
    }
    Ok(Canon {
        data: permute(x, shape, &perm),
        batch: ext(&bd),
        free: ext(&fd),
        k: ext(&cd),
    })
}

/// Row-major `x` of `shape` with its axes reordered by `perm`.
fn permute(x: &[f32], shape: &[i64], perm: &[usize]) -> Vec<f32> {
    if perm.iter().enumerate().all(|(i, &p)| i == p) {
        return x.to_vec();
    }
    let dims: Vec<usize> = shape.iter().map(|&d| d.max(0) as usize).collect();
    let mut stride = vec![1usize; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        stride[i] = stride[i + 1] * dims[i + 1];
    }
    let out_dims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
    let out_stride: Vec<usize> = perm.iter().map(|&p| stride[p]).collect();
    let n: usize = dims.iter().product();
    let mut out = Vec::with_capacity(n);
    let mut idx = vec![0usize; out_dims.len()];
    for _ in 0..n {
        let src: usize = idx.iter().zip(&out_stride).map(|(i, s)| i * s).sum();
        out.push(x[src]);
        for d in (0..idx.len()).rev() {
            idx[d] += 1;
            if idx[d] < out_dims[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}

fn dot(
    a: &[f32],
    a_shape: &[i64],
    b: &[f32],
    b_shape: &[i64],
    dims: &DotDims,
    out: &TensorType,
    auto_cast: AutoCast,
) -> Result<Tensor, String> {
    let mut l = canon(a, a_shape, &dims.lhs_batching, &dims.lhs_contracting, true)?;
    let mut r = canon(b, b_shape, &dims.rhs_batching, &dims.rhs_contracting, false)?;
    if l.batch != r.batch || l.k != r.k {
        return Err("dot_general operand extents disagree".into());
    }
    if auto_cast != AutoCast::None {
        for v in l.data.iter_mut().chain(r.data.iter_mut()) {
            *v = round_f32(ElemType::BF16, *v);
        }
    }
    let (m, n, k) = (l.free, r.free, l.k);
    let mut c = vec![0f32; l.batch * m * n];
    for bi in 0..l.batch {
        let ab = &l.data[bi * m * k..(bi + 1) * m * k];
        let bb = &r.data[bi * k * n..(bi + 1) * k * n];
        let cb = &mut c[bi * m * n..(bi + 1) * m * n];
        for k0 in (0..k).step_by(K_TILE) {
            let kw = K_TILE.min(k - k0);
            accumulate(&ab[k0..], k, &bb[k0 * n..], n, cb, m, kw);
        }
    }
    for v in &mut c {
        *v = round_f32(out.elem, *v);
    }
    Tensor::new(out.clone(), Data::F32(c))
}

/// `c[m×n] += a[m×kw] · b[kw×n]` in FP32 (one PSUM accumulation step); `a` has row
/// stride `lda`, `b` row stride `ldb = n`.
fn accumulate(a: &[f32], lda: usize, b: &[f32], n: usize, c: &mut [f32], m: usize, kw: usize) {
    if m == 0 || n == 0 || kw == 0 {
        return;
    }
    let need_a = (m - 1) * lda + kw;
    let need_b = (kw - 1) * n + n;
    assert!(a.len() >= need_a && b.len() >= need_b && c.len() >= m * n);
    // SAFETY: the assert above bounds every element matrixmultiply reads or writes:
    // a[i*lda + p] for i < m, p < kw; b[p*n + j] for p < kw, j < n; c[i*n + j].
    unsafe {
        matrixmultiply::sgemm(
            m,
            kw,
            n,
            1.0,
            a.as_ptr(),
            lda as isize,
            1,
            b.as_ptr(),
            n as isize,
            1,
            1.0,
            c.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(shape: &[i64], v: &[f32]) -> Tensor {
        Tensor::from_f32(shape, v).unwrap()
    }

    /// A 2×300 · 300×3 product against a hand loop in f64 (K spans three PSUM tiles).
    #[test]
    fn tiled_accumulation_matches_plain_sum() {
        let (m, k, n) = (2usize, 300usize, 3usize);
        let a: Vec<f32> = (0..m * k).map(|i| ((i % 17) as f32 - 8.0) / 8.0).collect();
        let b: Vec<f32> = (0..k * n).map(|i| ((i % 13) as f32 - 6.0) / 4.0).collect();
        let dims = DotDims {
            lhs_contracting: vec![1],
            rhs_contracting: vec![0],
            ..DotDims::default()
        };
        let out = TensorType::new(ElemType::F32, &[m as i64, n as i64]);
        let got = tensor_engine_dot(
            &t(&[m as i64, k as i64], &a),
            &t(&[k as i64, n as i64], &b),
            &dims,
            &out,
            AutoCast::None,
        )
        .unwrap()
        .unwrap();
        for i in 0..m {
            for j in 0..n {
                let want: f64 = (0..k)
                    .map(|p| a[i * k + p] as f64 * b[p * n + j] as f64)
                    .sum();
                // Every product is exact in f32 (few mantissa bits), so is every sum.
                assert_eq!(got.as_f32().unwrap()[i * n + j] as f64, want);
            }
        }
    }

    /// Batch and contracting dims in unusual positions: lhs [k, b, m], rhs [b, n, k].
    #[test]
    fn dimension_numbers_are_honoured() {
        let (b, m, n, k) = (2usize, 3usize, 2usize, 4usize);
        let lhs: Vec<f32> = (0..k * b * m).map(|i| i as f32).collect();
        let rhs: Vec<f32> = (0..b * n * k).map(|i| (i as f32) * 0.5).collect();
        let dims = DotDims {
            lhs_batching: vec![1],
            rhs_batching: vec![0],
            lhs_contracting: vec![0],
            rhs_contracting: vec![2],
        };
        let out = TensorType::new(ElemType::F32, &[b as i64, m as i64, n as i64]);
        let got = tensor_engine_dot(
            &t(&[k as i64, b as i64, m as i64], &lhs),
            &t(&[b as i64, n as i64, k as i64], &rhs),
            &dims,
            &out,
            AutoCast::None,
        )
        .unwrap()
        .unwrap();
        let g = got.as_f32().unwrap();
        for bi in 0..b {
            for i in 0..m {
                for j in 0..n {
                    let want: f32 = (0..k)
                        .map(|p| lhs[(p * b + bi) * m + i] * rhs[(bi * n + j) * k + p])
                        .sum();
                    assert_eq!(g[(bi * m + i) * n + j], want);
                }
            }
        }
    }

    /// Auto-cast rounds operands to BF16: 1 + 2^-10 becomes 1.
    #[test]
    fn auto_cast_rounds_operands_to_bf16() {
        let x = 1.0 + f32::powi(2.0, -10);
        let dims = DotDims {
            lhs_contracting: vec![1],
            rhs_contracting: vec![0],
            ..DotDims::default()
        };
        let out = TensorType::new(ElemType::F32, &[1, 1]);
        let run = |ac| {
            tensor_engine_dot(&t(&[1, 1], &[x]), &t(&[1, 1], &[1.0]), &dims, &out, ac)
                .unwrap()
                .unwrap()
                .as_f32()
                .unwrap()[0]
        };
        assert_eq!(run(AutoCast::None), x);
        assert_eq!(run(AutoCast::Matmult), 1.0);
    }
}
