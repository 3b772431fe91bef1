//! Data-movement ops: broadcast, reshape, transpose, slice, dynamic (update) slice,
//! concatenate, pad, reverse, iota.
//!
//! Owns: index arithmetic on row-major tensors. Most ops reduce to one strided copy
//! ([`crate::strided`]). Invariants: shapes come from the op's result
//! type (verified), and every index computed here is checked against the operand's
//! bounds before use, so malformed attributes give an error, never a panic.

use crate::strided::strided_copy;
use crate::tensor::{Data, Tensor};
use neuronc_ir::{ElemType, TensorType};

type R<T> = Result<T, String>;

/// Row-major strides of a shape.
pub fn strides(shape: &[i64]) -> Vec<isize> {
    let mut s = vec![1isize; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * shape[d + 1].max(1) as isize;
    }
    s
}

/// Dims as `usize`.
pub fn dims(shape: &[i64]) -> Vec<usize> {
    shape.iter().map(|&d| d.max(0) as usize).collect()
}

/// Linear source indices `base + sum(idx[d] * strides[d])` for every index of `shape`,
/// in row-major order.
pub fn strided_indices(shape: &[usize], strides: &[isize], base: isize) -> Vec<usize> {
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n);
    if n == 0 {
        return out;
    }
    let Some((&ln, outer)) = shape.split_last() else {
        out.push(base as usize);
        return out;
    };
    let ls = strides[outer.len()];
    crate::strided::for_each_outer(outer, &strides[..outer.len()], base, |off| {
        let mut o = off;
        for _ in 0..ln {
            out.push(o as usize);
            o += ls;
        }
    });
    out
}

fn gather_to(x: &Tensor, out: &TensorType, strides: &[isize], base: isize) -> R<Tensor> {
    let shape = dims(&out.shape);
    let oob = || "index out of bounds".to_string();
    let data = match x.data() {
        Data::Int(v) => Data::Int(strided_copy(v, &shape, strides, base).ok_or_else(oob)?),
        Data::F32(v) => Data::F32(strided_copy(v, &shape, strides, base).ok_or_else(oob)?),
        Data::F64(v) => Data::F64(strided_copy(v, &shape, strides, base).ok_or_else(oob)?),
        Data::C64(v) => Data::C64(strided_copy(v, &shape, strides, base).ok_or_else(oob)?),
        Data::C128(v) => Data::C128(strided_copy(v, &shape, strides, base).ok_or_else(oob)?),
    };
    Tensor::new(out.clone(), data)
}

/// `broadcast_in_dim`.
pub fn broadcast_in_dim(x: &Tensor, bdims: &[i64], out: &TensorType) -> R<Tensor> {
    if bdims.len() != x.rank() {
        return Err("broadcast_dimensions length differs from operand rank".into());
    }
    let xs = strides(x.shape());
    let mut st = vec![0isize; out.rank()];
    for (i, &d) in bdims.iter().enumerate() {
        let d = usize::try_from(d)
            .ok()
            .filter(|&d| d < out.rank())
            .ok_or("bad dimension")?;
        if x.shape()[i] != 1 {
            if x.shape()[i] != out.shape[d] {
                return Err("operand dimension does not match result".into());
            }
            st[d] = xs[i];
        }
    }
    if x.len() == out.num_elements() as usize && st == strides(&out.shape) {
        return Ok(x.with_type(out.clone()));
    }
    gather_to(x, out, &st, 0)
}

/// Deprecated `broadcast`: prepends `sizes` dims.
pub fn broadcast_prefix(x: &Tensor, out: &TensorType) -> R<Tensor> {
    let k = out.rank() - x.rank();
    let bdims: Vec<i64> = (k as i64..out.rank() as i64).collect();
    broadcast_in_dim(x, &bdims, out)
}

/// `reshape` (shares storage).
pub fn reshape(x: &Tensor, out: &TensorType) -> R<Tensor> {
    if x.len() as u64 != out.num_elements() {
        return Err("element count changes".into());
    }
    Ok(x.with_type(out.clone()))
}

/// `transpose`.
pub fn transpose(x: &Tensor, perm: &[i64], out: &TensorType) -> R<Tensor> {
    let xs = strides(x.shape());
    let st: Vec<isize> = perm
        .iter()
        .map(|&p| {
            xs.get(p as usize)
                .copied()
                .ok_or_else(|| "bad permutation".to_string())
        })
        .collect::<R<_>>()?;
    gather_to(x, out, &st, 0)
}

/// `slice` with start indices and strides.
pub fn slice(x: &Tensor, start: &[i64], step: &[i64], out: &TensorType) -> R<Tensor> {
    let xs = strides(x.shape());
    if start.len() != x.rank() || step.len() != x.rank() {
        return Err("slice attributes do not match rank".into());
    }
    let st: Vec<isize> = xs.iter().zip(step).map(|(&s, &k)| s * k as isize).collect();
    let base: isize = xs.iter().zip(start).map(|(&s, &k)| s * k as isize).sum();
    gather_to(x, out, &st, base)
}

/// `reverse` along `rdims`.
pub fn reverse(x: &Tensor, rdims: &[i64]) -> R<Tensor> {
    let mut st = strides(x.shape());
    let mut base = 0isize;
    for &d in rdims {
        let d = d as usize;
        if d >= x.rank() {
            return Err("bad dimension".into());
        }
        base += st[d] * (x.shape()[d] - 1).max(0) as isize;
        st[d] = -st[d];
    }
    gather_to(x, &x.ty().clone(), &st, base)
}

/// Clamps dynamic start indices so that the slice of `sizes` fits in `shape`.
pub fn clamp_starts(starts: &[i64], shape: &[i64], sizes: &[i64]) -> Vec<i64> {
    starts
        .iter()
        .zip(shape.iter().zip(sizes))
        .map(|(&s, (&n, &k))| s.clamp(0, (n - k).max(0)))
        .collect()
}

/// `dynamic_slice`.
pub fn dynamic_slice(x: &Tensor, starts: &[i64], out: &TensorType) -> R<Tensor> {
    let s = clamp_starts(starts, x.shape(), &out.shape);
    slice(x, &s, &vec![1; x.rank()], out)
}

/// `dynamic_update_slice`.
pub fn dynamic_update_slice(x: &Tensor, upd: &Tensor, starts: &[i64]) -> R<Tensor> {
    if upd.rank() != x.rank() || starts.len() != x.rank() {
        return Err("rank mismatch".into());
    }
    let s = clamp_starts(starts, x.shape(), upd.shape());
    let xs = strides(x.shape());
    let base: isize = xs.iter().zip(&s).map(|(&a, &b)| a * b as isize).sum();
    let idx = strided_indices(&dims(upd.shape()), &xs, base);
    let mut data = x.data().clone();
    for (j, &i) in idx.iter().enumerate() {
        if i >= data.len() {
            return Err("update out of bounds".into());
        }
        data.set_from(i, upd.data(), j);
    }
    Tensor::new(x.ty().clone(), data)
}

/// `concatenate` along `dim`.
pub fn concatenate(xs: &[&Tensor], dim: usize, out: &TensorType) -> R<Tensor> {
    if xs.is_empty() || dim >= out.rank() {
        return Err("bad concatenate".into());
    }
    let outer: usize = dims(&out.shape[..dim]).iter().product();
    let n = out.num_elements() as usize;
    let mut data = xs[0].data().empty_like(n);
    let chunks: Vec<usize> = xs
        .iter()
        .map(|t| dims(&t.shape()[dim..]).iter().product())
        .collect();
    for o in 0..outer {
        for (t, &c) in xs.iter().zip(&chunks) {
            for k in 0..c {
                data.push_from(t.data(), o * c + k);
            }
        }
    }
    Tensor::new(out.clone(), data)
}

/// `pad` with low/high (possibly negative) and interior padding.
pub fn pad(x: &Tensor, val: &Tensor, lo: &[i64], interior: &[i64], out: &TensorType) -> R<Tensor> {
    let n = out.num_elements() as usize;
    let mut data = val.data().repeat(0, n);
    let os = strides(&out.shape);
    let xs_shape = dims(x.shape());
    let rank = x.rank();
    if lo.len() != rank || interior.len() != rank {
        return Err("padding attributes do not match rank".into());
    }
    let mut idx = vec![0usize; rank];
    for j in 0..x.len() {
        let mut pos = 0isize;
        let mut inside = true;
        for d in 0..rank {
            let p = lo[d] + idx[d] as i64 * (interior[d] + 1);
            if p < 0 || p >= out.shape[d] {
                inside = false;
                break;
            }
            pos += p as isize * os[d];
        }
        if inside {
            data.set_from(pos as usize, x.data(), j);
        }
        for d in (0..rank).rev() {
            idx[d] += 1;
            if idx[d] < xs_shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Tensor::new(out.clone(), data)
}

/// `iota` along `dim`.
pub fn iota(out: &TensorType, dim: usize) -> R<Tensor> {
    if dim >= out.rank() {
        return Err("bad iota_dimension".into());
    }
    let st = strides(&out.shape);
    let n = out.num_elements() as usize;
    let len = out.shape[dim] as usize;
    let coord = |i: usize| (i / st[dim] as usize) % len;
    let data = match out.elem {
        ElemType::F64 => Data::F64((0..n).map(|i| coord(i) as f64).collect()),
        ElemType::Complex64 | ElemType::Complex128 => {
            let t = Tensor::from_f64(
                &out.shape,
                &(0..n).map(|i| coord(i) as f64).collect::<Vec<_>>(),
            )?;
            return crate::convert::convert(&t, out);
        }
        e if e.is_float() => {
            let v: Vec<f64> = (0..n).map(|i| coord(i) as f64).collect();
            return Tensor::from_f64_as(e, &out.shape, &v);
        }
        e => Data::Int(
            (0..n)
                .map(|i| crate::tensor::wrap_int(e, coord(i) as i64))
                .collect(),
        ),
    };
    Tensor::new(out.clone(), data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose_2x3() {
        let x = Tensor::from_f32(&[2, 3], &[0., 1., 2., 3., 4., 5.]).unwrap();
        let r = transpose(&x, &[1, 0], &TensorType::new(ElemType::F32, &[3, 2])).unwrap();
        assert_eq!(r.as_f32().unwrap(), &[0., 3., 1., 4., 2., 5.]);
    }

    #[test]
    fn pad_negative_and_interior() {
        // [1,2,3] with lo=-1, interior=1, hi=1 -> [_,0,2,0,3,0] minus first: [0,2,0,3,0]
        let x = Tensor::from_f32(&[3], &[1., 2., 3.]).unwrap();
        let v = Tensor::from_f32(&[], &[0.]).unwrap();
        let r = pad(&x, &v, &[-1], &[1], &TensorType::new(ElemType::F32, &[5])).unwrap();
        assert_eq!(r.as_f32().unwrap(), &[0., 2., 0., 3., 0.]);
    }

    #[test]
    fn dynamic_slice_clamps() {
        let x = Tensor::from_f32(&[4], &[1., 2., 3., 4.]).unwrap();
        let r = dynamic_slice(&x, &[3], &TensorType::new(ElemType::F32, &[2])).unwrap();
        assert_eq!(r.as_f32().unwrap(), &[3., 4.]);
    }
}
