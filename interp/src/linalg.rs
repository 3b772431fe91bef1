//! Contractions and linear algebra: `dot_general` / `dot`, `cholesky`,
//! `triangular_solve`, `fft`.
//!
//! Owns: the reduction of `dot_general` to batched GEMMs (`matrixmultiply` for f32 and
//! f64, f32 accumulation for narrower floats as XLA:CPU does, exact wrapping loops for
//! integers, plain loops for complex). Operands whose dims are already grouped as
//! (batch, free, contracting) or (batch, contracting, free) are used in place through
//! strides; others are transposed once. A `dot_general` whose operand is a transpose
//! folded by the region's plan reads the transpose's operand with permuted dim groups.
//! Operands of different element types (`f8E4M3FN x f8E5M2`, `i8 x f32`) are contracted
//! in the wider of their two value classes (see `common_class`).
//! Invariant: results are rounded to the result element type once, at the end.

use crate::dispatch::Ctx;
use crate::elementwise::round_vec;
use crate::eval::{op_err, Interp, Res, Val};
use crate::plan::Fold;
use crate::shape::{dims, transpose};
use crate::tensor::{wrap_int, Data, Tensor};
use neuronc_ir::attr::DotDims;
use neuronc_ir::{Attr, ElemType, OpId, OpKind, TensorType};
use num_complex::Complex;

type R<T> = Result<T, String>;

/// A (batch, rows, cols) view of an operand: `data[b * bs + r * rs + c * cs]`.
struct MatView {
    t: Tensor,
    bs: usize,
    rs: usize,
    cs: usize,
}

fn prod(shape: &[i64], ds: &[i64]) -> usize {
    ds.iter()
        .map(|&d| shape[d as usize].max(0) as usize)
        .product()
}

fn is_identity(p: &[i64]) -> bool {
    p.iter().enumerate().all(|(i, &d)| i as i64 == d)
}

/// Views `t` as (batch, rows, cols) with the given dim groups.
fn view(t: &Tensor, batch: &[i64], rows: &[i64], cols: &[i64]) -> R<MatView> {
    let (r, c) = (prod(t.shape(), rows), prod(t.shape(), cols));
    let rc = r * c;
    let p1: Vec<i64> = [batch, rows, cols].concat();
    if is_identity(&p1) {
        return Ok(MatView {
            t: t.clone(),
            bs: rc,
            rs: c,
            cs: 1,
        });
    }
    let p2: Vec<i64> = [batch, cols, rows].concat();
    if is_identity(&p2) {
        return Ok(MatView {
            t: t.clone(),
            bs: rc,
            rs: 1,
            cs: r,
        });
    }
    let shape: Vec<i64> = p1.iter().map(|&d| t.shape()[d as usize]).collect();
    let tt = transpose(t, &p1, &TensorType::new(t.elem(), &shape))?;
    Ok(MatView {
        t: tt,
        bs: rc,
        rs: c,
        cs: 1,
    })
}

fn free_dims(rank: usize, a: &[i64], b: &[i64]) -> Vec<i64> {
    (0..rank as i64)
        .filter(|d| !a.contains(d) && !b.contains(d))
        .collect()
}

/// The dims of one `dot_general` operand, each group in contraction order.
struct Groups {
    batch: Vec<i64>,
    contracting: Vec<i64>,
    free: Vec<i64>,
}

impl Groups {
    /// The groups of an operand of rank `rank` with the given batching and contracting
    /// dims; the free dims are the rest, ascending.
    fn of(rank: usize, batch: &[i64], contracting: &[i64]) -> Groups {
        Groups {
            batch: batch.to_vec(),
            contracting: contracting.to_vec(),
            free: free_dims(rank, batch, contracting),
        }
    }

    /// The same groups on the operand of a transpose by `perm` (dim `d` of the transposed
    /// tensor is dim `perm[d]` of the operand).
    fn through(&self, perm: &[i64]) -> R<Groups> {
        let map = |ds: &[i64]| -> R<Vec<i64>> {
            ds.iter()
                .map(|&d| {
                    usize::try_from(d)
                        .ok()
                        .and_then(|d| perm.get(d).copied())
                        .ok_or_else(|| "dimension out of range".to_string())
                })
                .collect()
        };
        Ok(Groups {
            batch: map(&self.batch)?,
            contracting: map(&self.contracting)?,
            free: map(&self.free)?,
        })
    }
}

/// `dot_general`.
pub fn dot_general(l: &Tensor, r: &Tensor, dd: &DotDims, out: &TensorType) -> R<Tensor> {
    let lg = Groups::of(l.rank(), &dd.lhs_batching, &dd.lhs_contracting);
    let rg = Groups::of(r.rank(), &dd.rhs_batching, &dd.rhs_contracting);
    contract(l, &lg, r, &rg, out)
}

/// Operands held in different value classes (integer, f32-class, f64, complex64,
/// complex128) are both converted exactly to the wider class (f64 with complex64 meets in
/// complex128); `None` when they already share one. Narrow floats (f16, bf16, f8) are
/// f32-class values, so `f8E4M3FN x f8E5M2` needs no conversion.
fn common_class(l: &Tensor, r: &Tensor) -> R<Option<(Tensor, Tensor)>> {
    let class = |t: &Tensor| match t.data() {
        Data::Int(_) => 0,
        Data::F32(_) => 1,
        Data::F64(_) => 2,
        Data::C64(_) => 3,
        Data::C128(_) => 4,
    };
    let (a, b) = (class(l), class(r));
    if a == b {
        return Ok(None);
    }
    let elem = match (a.max(b), a.min(b)) {
        (3, 2) | (4, _) => ElemType::Complex128,
        (3, _) => ElemType::Complex64,
        (2, _) => ElemType::F64,
        _ => ElemType::F32,
    };
    let to = |t: &Tensor| crate::convert::convert(t, &TensorType::new(elem, t.shape()));
    Ok(Some((to(l)?, to(r)?)))
}

/// `dot_general` on operands given with their dim groups.
fn contract(l: &Tensor, lg: &Groups, r: &Tensor, rg: &Groups, out: &TensorType) -> R<Tensor> {
    if let Some((l, r)) = common_class(l, r)? {
        return contract(&l, lg, &r, rg, out);
    }
    let in_range = |t: &Tensor, g: &Groups| {
        [&g.batch, &g.contracting, &g.free]
            .iter()
            .all(|ds| ds.iter().all(|&d| (0..t.rank() as i64).contains(&d)))
    };
    if !in_range(l, lg) || !in_range(r, rg) {
        return Err("dimension out of range".into());
    }
    let b = prod(l.shape(), &lg.batch);
    let (m, k, n) = (
        prod(l.shape(), &lg.free),
        prod(l.shape(), &lg.contracting),
        prod(r.shape(), &rg.free),
    );
    if k != prod(r.shape(), &rg.contracting) || b != prod(r.shape(), &rg.batch) {
        return Err("contracting or batching dimension sizes differ".into());
    }
    let a = view(l, &lg.batch, &lg.free, &lg.contracting)?;
    let bv = view(r, &rg.batch, &rg.contracting, &rg.free)?;
    let data = match (a.t.data(), bv.t.data()) {
        (Data::F32(x), Data::F32(y)) => {
            let mut c = vec![0f32; b * m * n];
            for bi in 0..b {
                let (xa, yb) = (&x[bi * a.bs..], &y[bi * bv.bs..]);
                let cc = &mut c[bi * m * n..(bi + 1) * m * n];
                gemm_f32(m, k, n, xa, (a.rs, a.cs), yb, (bv.rs, bv.cs), cc);
            }
            to_out(Data::F32(c), out)?
        }
        (Data::F64(x), Data::F64(y)) => {
            let mut c = vec![0f64; b * m * n];
            for bi in 0..b {
                let (xa, yb) = (&x[bi * a.bs..], &y[bi * bv.bs..]);
                let cc = &mut c[bi * m * n..(bi + 1) * m * n];
                gemm_f64(m, k, n, xa, (a.rs, a.cs), yb, (bv.rs, bv.cs), cc);
            }
            to_out(Data::F64(c), out)?
        }
        (Data::Int(x), Data::Int(y)) => {
            let e = out.elem;
            let c = naive(b, m, k, n, &a, &bv, x, y, 0i64, |s, p, q| {
                s.wrapping_add(p.wrapping_mul(q))
            });
            to_out(
                Data::Int(c.into_iter().map(|v| wrap_int(e, v)).collect()),
                out,
            )?
        }
        (Data::C64(x), Data::C64(y)) => Data::C64(naive(
            b,
            m,
            k,
            n,
            &a,
            &bv,
            x,
            y,
            Complex::new(0.0, 0.0),
            |s, p, q| s + p * q,
        )),
        (Data::C128(x), Data::C128(y)) => Data::C128(naive(
            b,
            m,
            k,
            n,
            &a,
            &bv,
            x,
            y,
            Complex::new(0.0, 0.0),
            |s, p, q| s + p * q,
        )),
        _ => return Err("operand element types are not supported together".into()),
    };
    Tensor::new(out.clone(), data)
}

/// Converts a contraction result to the result element type.
fn to_out(d: Data, out: &TensorType) -> R<Data> {
    let cls_ok = matches!(
        (&d, out.elem),
        (Data::F64(_), ElemType::F64)
            | (
                Data::Int(_),
                ElemType::Int(_) | ElemType::UInt(_) | ElemType::I1
            )
    );
    if cls_ok {
        return Ok(d);
    }
    if let (Data::F32(mut v), e) = (d.clone(), out.elem) {
        if e.is_float() && e != ElemType::F64 {
            round_vec(e, &mut v);
            return Ok(Data::F32(v));
        }
    }
    let shape = [d.len() as i64];
    let src_elem = match &d {
        Data::F32(_) => ElemType::F32,
        Data::F64(_) => ElemType::F64,
        Data::Int(_) => ElemType::Int(64),
        Data::C64(_) => ElemType::Complex64,
        Data::C128(_) => ElemType::Complex128,
    };
    let t = Tensor::new(TensorType::new(src_elem, &shape), d)?;
    Ok(crate::convert::convert(&t, &TensorType::new(out.elem, &shape))?.into_data())
}

#[allow(clippy::too_many_arguments)]
fn naive<T: Copy>(
    b: usize,
    m: usize,
    k: usize,
    n: usize,
    a: &MatView,
    bv: &MatView,
    x: &[T],
    y: &[T],
    zero: T,
    fma: impl Fn(T, T, T) -> T,
) -> Vec<T> {
    let mut c = Vec::with_capacity(b * m * n);
    for bi in 0..b {
        for i in 0..m {
            for j in 0..n {
                let mut s = zero;
                for p in 0..k {
                    let xv = x[bi * a.bs + i * a.rs + p * a.cs];
                    let yv = y[bi * bv.bs + p * bv.rs + j * bv.cs];
                    s = fma(s, xv, yv);
                }
                c.push(s);
            }
        }
    }
    c
}

/// `c = a * b` for an m×k `a` and k×n `b` given by (row, col) strides; `c` row-major.
#[allow(clippy::too_many_arguments)]
pub fn gemm_f32(
    m: usize,
    k: usize,
    n: usize,
    a: &[f32],
    sa: (usize, usize),
    b: &[f32],
    sb: (usize, usize),
    c: &mut [f32],
) {
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        c.fill(0.0);
        return;
    }
    let need_a = (m - 1) * sa.0 + (k - 1) * sa.1 + 1;
    let need_b = (k - 1) * sb.0 + (n - 1) * sb.1 + 1;
    assert!(a.len() >= need_a && b.len() >= need_b && c.len() >= m * n);
    // SAFETY: the asserts above bound every index matrixmultiply reads or writes.
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            sa.0 as isize,
            sa.1 as isize,
            b.as_ptr(),
            sb.0 as isize,
            sb.1 as isize,
            0.0,
            c.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

/// f64 version of [`gemm_f32`].
#[allow(clippy::too_many_arguments)]
pub fn gemm_f64(
    m: usize,
    k: usize,
    n: usize,
    a: &[f64],
    sa: (usize, usize),
    b: &[f64],
    sb: (usize, usize),
    c: &mut [f64],
) {
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        c.fill(0.0);
        return;
    }
    let need_a = (m - 1) * sa.0 + (k - 1) * sa.1 + 1;
    let need_b = (k - 1) * sb.0 + (n - 1) * sb.1 + 1;
    assert!(a.len() >= need_a && b.len() >= need_b && c.len() >= m * n);
    // SAFETY: the asserts above bound every index matrixmultiply reads or writes.
    unsafe {
        matrixmultiply::dgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            sa.0 as isize,
            sa.1 as isize,
            b.as_ptr(),
            sb.0 as isize,
            sb.1 as isize,
            0.0,
            c.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

/// `dot_general` / `dot` from an op.
pub(crate) fn dot_op(cx: &Ctx<'_>, ins: &[&Tensor]) -> R<Tensor> {
    let (l, r) = match ins {
        [l, r, ..] => (*l, *r),
        _ => return Err("expects two operands".into()),
    };
    let dd = if cx.op.kind == OpKind::Dot {
        DotDims {
            lhs_contracting: vec![l.rank() as i64 - 1],
            rhs_contracting: vec![0],
            ..DotDims::default()
        }
    } else {
        match cx.attrs().get("dot_dimension_numbers") {
            Some(Attr::DotDims(d)) => d.clone(),
            _ => return Err("missing dot_dimension_numbers".into()),
        }
    };
    let out = cx.out(0).map_err(|e| e.to_string())?;
    dot_general(l, r, &dd, out)
}

/// A `dot_general` op whose operands may be read through folded transposes (see
/// [`crate::plan`]).
pub(crate) fn folded_dot(it: &Interp<'_>, id: OpId, folds: &[Option<Fold>; 2]) -> Res<Vec<Val>> {
    let op = it.m.op(id);
    let err = |msg: String| op_err(op.kind, msg);
    let dd = match op.attrs.get("dot_dimension_numbers") {
        Some(Attr::DotDims(d)) => d,
        _ => return Err(err("missing dot_dimension_numbers".into())),
    };
    let operand = |i: usize, batch: &[i64], contracting: &[i64]| -> Res<(&Tensor, Groups)> {
        let v = *op
            .operands
            .get(i)
            .ok_or_else(|| err(format!("missing operand {i}")))?;
        match &folds[i] {
            Some(f) => {
                let t = it.tensor(f.src)?;
                let g = Groups::of(f.perm.len(), batch, contracting);
                Ok((t, g.through(&f.perm).map_err(err)?))
            }
            None => {
                let t = it.tensor(v)?;
                Ok((t, Groups::of(t.rank(), batch, contracting)))
            }
        }
    };
    let (l, lg) = operand(0, &dd.lhs_batching, &dd.lhs_contracting)?;
    let (r, rg) = operand(1, &dd.rhs_batching, &dd.rhs_contracting)?;
    let out = op
        .results
        .first()
        .and_then(|&v| it.m.tensor_type(v))
        .ok_or_else(|| err("result 0 is not a tensor".into()))?;
    let t = contract(l, &lg, r, &rg, out).map_err(err)?;
    Ok(vec![Val::T(t)])
}

/// `cholesky`, `triangular_solve`, `fft`.
pub(crate) fn other(cx: &Ctx<'_>, ins: &[&Tensor]) -> R<Tensor> {
    let out = cx.out(0).map_err(|e| e.to_string())?;
    match cx.op.kind {
        OpKind::Cholesky => {
            let lower = cx.attrs().bool("lower").unwrap_or(false);
            crate::linalg2::cholesky(ins[0], lower, out)
        }
        OpKind::TriangularSolve => {
            let a = cx.attrs();
            let opts = crate::linalg2::TriOpts {
                left: a.bool("left_side").unwrap_or(true),
                lower: a.bool("lower").unwrap_or(true),
                unit: a.bool("unit_diagonal").unwrap_or(false),
                transpose: a.enum_value("transpose_a").unwrap_or("NO_TRANSPOSE") != "NO_TRANSPOSE",
                conjugate: a.enum_value("transpose_a") == Some("ADJOINT"),
            };
            crate::linalg2::triangular_solve(ins[0], ins[1], opts, out)
        }
        _ => {
            let ty = cx.attrs().enum_value("fft_type").unwrap_or("FFT");
            let len = cx.attrs().i64_array("fft_length").unwrap_or_default();
            crate::linalg2::fft(ins[0], ty, &dims(&len), out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batched_matmul_with_transposed_rhs() {
        // a: [1,2,3], b: [1,2,3] contracting the last dims: a @ b^T.
        let a = Tensor::from_f32(&[1, 2, 3], &[1., 2., 3., 4., 5., 6.]).unwrap();
        let b = Tensor::from_f32(&[1, 2, 3], &[1., 0., 0., 0., 1., 1.]).unwrap();
        let dd = DotDims {
            lhs_batching: vec![0],
            rhs_batching: vec![0],
            lhs_contracting: vec![2],
            rhs_contracting: vec![2],
        };
        let r = dot_general(&a, &b, &dd, &TensorType::new(ElemType::F32, &[1, 2, 2])).unwrap();
        assert_eq!(r.as_f32().unwrap(), &[1., 5., 4., 11.]);
    }

    #[test]
    fn int_dot_wraps() {
        let a = Tensor::from_i64(ElemType::Int(8), &[2], &[100, 100]).unwrap();
        let dd = DotDims {
            lhs_contracting: vec![0],
            rhs_contracting: vec![0],
            ..DotDims::default()
        };
        let r = dot_general(&a, &a, &dd, &TensorType::new(ElemType::Int(8), &[])).unwrap();
        assert_eq!(r.as_i64().unwrap(), &[wrap_int(ElemType::Int(8), 20000)]);
    }
}
