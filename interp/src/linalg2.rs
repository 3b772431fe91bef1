//! Dense linear algebra beyond contractions: `cholesky`, `triangular_solve`, `fft`.
//!
//! Owns: batched (leading dims) factorizations of real and complex operands, computed in
//! f64 / complex f64 ([`Scalar`]) and rounded to the result type, and FFTs through
//! `rustfft` in f64.
//! Invariant: operands are `[..., n, n]` / `[..., m, k]` as the verifier guarantees;
//! anything else is an error.

use crate::lapack::Scalar;
use crate::tensor::{Data, Tensor};
use neuronc_ir::{ElemType, TensorType};
use num_complex::Complex;
use rustfft::FftPlanner;

type R<T> = Result<T, String>;

/// Runs `f` on the operand read as `f64` or `Complex<f64>` (by its element type).
macro_rules! by_class {
    ($t:expr, $f:ident ( $($arg:expr),* )) => {
        if $t.elem().is_complex() {
            $f::<Complex<f64>>($($arg),*)
        } else if $t.elem().is_float() {
            $f::<f64>($($arg),*)
        } else {
            Err(format!("not implemented for {}", $t.elem()))
        }
    };
}

/// `cholesky`: the `lower` (or upper) factor of `a = L L^H` (`U^H U`); the other triangle
/// is zero. Not positive definite inputs give NaNs (implementation-defined in the spec).
pub fn cholesky(a: &Tensor, lower: bool, out: &TensorType) -> R<Tensor> {
    by_class!(a, cholesky_t(a, lower, out))
}

fn cholesky_t<T: Scalar>(a: &Tensor, lower: bool, out: &TensorType) -> R<Tensor> {
    let n = *a.shape().last().ok_or("rank 0 operand")? as usize;
    let x = T::read(a)?;
    let mut res = vec![T::zero(); x.len()];
    for (src, dst) in x.chunks(n * n.max(1)).zip(res.chunks_mut(n * n.max(1))) {
        // The lower triangle of the Hermitian matrix given by `lower` (as LAPACK reads it).
        let at = |i: usize, j: usize| {
            if lower {
                src[i * n + j]
            } else {
                src[j * n + i].conjugate()
            }
        };
        let mut l = vec![T::zero(); n * n];
        for j in 0..n {
            let d = at(j, j).real() - (0..j).map(|p| l[j * n + p].modulus_squared()).sum::<f64>();
            let djj = if d > 0.0 { d.sqrt() } else { f64::NAN };
            l[j * n + j] = T::from_real(djj);
            for i in j + 1..n {
                let s = (0..j).fold(at(i, j), |s, p| s - l[i * n + p] * l[j * n + p].conjugate());
                l[i * n + j] = s.unscale(djj);
            }
        }
        for i in 0..n {
            for j in 0..n {
                dst[i * n + j] = if lower {
                    l[i * n + j]
                } else {
                    l[j * n + i].conjugate()
                };
            }
        }
    }
    T::write(out, res)
}

/// Options of `triangular_solve`.
#[derive(Clone, Copy, Debug)]
pub struct TriOpts {
    pub left: bool,
    pub lower: bool,
    pub unit: bool,
    pub transpose: bool,
    /// With `transpose`: use the conjugate transpose (`ADJOINT`, LAPACK's `'C'`).
    pub conjugate: bool,
}

/// `triangular_solve`: solves `op(a) x = b` (left) or `x op(a) = b` (right).
pub fn triangular_solve(a: &Tensor, b: &Tensor, o: TriOpts, out: &TensorType) -> R<Tensor> {
    by_class!(b, triangular_solve_t(a, b, o, out))
}

fn triangular_solve_t<T: Scalar>(
    a: &Tensor,
    b: &Tensor,
    o: TriOpts,
    out: &TensorType,
) -> R<Tensor> {
    let rank = b.rank();
    if rank < 2 {
        return Err("operands must have rank >= 2".into());
    }
    let (m, k) = (b.shape()[rank - 2] as usize, b.shape()[rank - 1] as usize);
    let n = if o.left { m } else { k };
    let (av, bv) = (T::read(a)?, T::read(b)?);
    let batches = bv.len() / (m * k).max(1);
    if av.len() != batches * n * n {
        return Err("operand shapes do not match".into());
    }
    let mut res = vec![T::zero(); bv.len()];
    for bi in 0..batches {
        let aa = &av[bi * n * n..(bi + 1) * n * n];
        // op(a) as a dense matrix with the unused triangle ignored.
        let t = |i: usize, j: usize| -> T {
            let (r, c) = if o.transpose { (j, i) } else { (i, j) };
            let keep = if o.lower { c <= r } else { c >= r };
            if r == c && o.unit {
                T::one()
            } else if !keep {
                T::zero()
            } else if o.transpose && o.conjugate {
                aa[r * n + c].conjugate()
            } else {
                aa[r * n + c]
            }
        };
        let eff_lower = o.lower != o.transpose;
        let bb = &bv[bi * m * k..(bi + 1) * m * k];
        let xx = &mut res[bi * m * k..(bi + 1) * m * k];
        if o.left {
            // op(a) (n x n) * x (m x k) = b, solve per column.
            for col in 0..k {
                let order: Vec<usize> = if eff_lower {
                    (0..n).collect()
                } else {
                    (0..n).rev().collect()
                };
                for &i in &order {
                    let mut s = bb[i * k + col];
                    for j in 0..n {
                        if j != i && (if eff_lower { j < i } else { j > i }) {
                            s -= t(i, j) * xx[j * k + col];
                        }
                    }
                    xx[i * k + col] = s / t(i, i);
                }
            }
        } else {
            // x (m x n) * op(a) (n x n) = b, solve per row: x[r, j] over columns.
            for row in 0..m {
                let order: Vec<usize> = if eff_lower {
                    (0..n).rev().collect()
                } else {
                    (0..n).collect()
                };
                for &j in &order {
                    let mut s = bb[row * k + j];
                    for p in 0..n {
                        if p != j && (if eff_lower { p > j } else { p < j }) {
                            s -= xx[row * k + p] * t(p, j);
                        }
                    }
                    xx[row * k + j] = s / t(j, j);
                }
            }
        }
    }
    T::write(out, res)
}

fn to_c128(t: &Tensor) -> Vec<Complex<f64>> {
    match t.data() {
        Data::C64(v) => v
            .iter()
            .map(|c| Complex::new(c.re as f64, c.im as f64))
            .collect(),
        Data::C128(v) => v.clone(),
        _ => t
            .to_f64_vec()
            .into_iter()
            .map(|x| Complex::new(x, 0.0))
            .collect(),
    }
}

/// Applies a 1-D FFT of length `shape[axis]` along `axis` of a row-major complex buffer.
fn fft_axis(buf: &mut [Complex<f64>], shape: &[usize], axis: usize, inverse: bool) {
    let n = shape[axis];
    if n == 0 {
        return;
    }
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    let mut planner = FftPlanner::<f64>::new();
    let plan = if inverse {
        planner.plan_fft_inverse(n)
    } else {
        planner.plan_fft_forward(n)
    };
    let mut line = vec![Complex::new(0.0, 0.0); n];
    for o in 0..outer {
        for i in 0..inner {
            let base = o * n * inner + i;
            for (j, l) in line.iter_mut().enumerate() {
                *l = buf[base + j * inner];
            }
            plan.process(&mut line);
            for (j, l) in line.iter().enumerate() {
                let v = if inverse { *l / n as f64 } else { *l };
                buf[base + j * inner] = v;
            }
        }
    }
}

/// `fft` of type FFT, IFFT, RFFT or IRFFT over the trailing `len.len()` dims.
pub fn fft(x: &Tensor, ty: &str, len: &[usize], out: &TensorType) -> R<Tensor> {
    let rank = x.rank();
    let l = len.len();
    if l == 0 || l > rank {
        return Err("bad fft_length".into());
    }
    let mut shape: Vec<usize> = x.shape().iter().map(|&d| d as usize).collect();
    let mut buf = to_c128(x);
    match ty {
        "FFT" | "IFFT" => {
            for ax in rank - l..rank {
                fft_axis(&mut buf, &shape, ax, ty == "IFFT");
            }
        }
        "RFFT" => {
            for ax in rank - l..rank {
                fft_axis(&mut buf, &shape, ax, false);
            }
            let keep = len[l - 1] / 2 + 1;
            buf = truncate_last(&buf, &shape, keep);
            shape[rank - 1] = keep;
        }
        "IRFFT" => {
            for ax in rank - l..rank - 1 {
                fft_axis(&mut buf, &shape, ax, true);
            }
            let n = len[l - 1];
            let have = shape[rank - 1];
            let outer = buf.len() / have.max(1);
            let mut full = vec![Complex::new(0.0, 0.0); outer * n];
            for o in 0..outer {
                for j in 0..n {
                    full[o * n + j] = if j < have {
                        buf[o * have + j]
                    } else {
                        buf[o * have + (n - j)].conj()
                    };
                }
            }
            shape[rank - 1] = n;
            fft_axis(&mut full, &shape, rank - 1, true);
            buf = full;
        }
        _ => return Err(format!("unknown fft_type {ty}")),
    }
    let data = match out.elem {
        ElemType::Complex64 => Data::C64(
            buf.iter()
                .map(|c| Complex::new(c.re as f32, c.im as f32))
                .collect(),
        ),
        ElemType::Complex128 => Data::C128(buf),
        _ => {
            return Tensor::from_f64_as(
                out.elem,
                &out.shape,
                &buf.iter().map(|c| c.re).collect::<Vec<_>>(),
            )
        }
    };
    Tensor::new(out.clone(), data)
}

fn truncate_last(buf: &[Complex<f64>], shape: &[usize], keep: usize) -> Vec<Complex<f64>> {
    let n = *shape.last().unwrap_or(&1);
    buf.chunks(n.max(1))
        .flat_map(|c| c[..keep.min(c.len())].to_vec())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cholesky_2x2() {
        // [[4, 2], [2, 3]] = L L^T with L = [[2, 0], [1, sqrt(2)]].
        let a = Tensor::from_f64(&[2, 2], &[4., 2., 2., 3.]).unwrap();
        let r = cholesky(&a, true, a.ty()).unwrap();
        let v = r.as_f64().unwrap();
        assert_eq!(&v[..3], &[2., 0., 1.]);
        assert!((v[3] - 2f64.sqrt()).abs() < 1e-15);
    }

    #[test]
    fn lower_left_solve() {
        let a = Tensor::from_f64(&[2, 2], &[2., 0., 1., 1.]).unwrap();
        let b = Tensor::from_f64(&[2, 1], &[4., 5.]).unwrap();
        let o = TriOpts {
            left: true,
            lower: true,
            unit: false,
            transpose: false,
            conjugate: false,
        };
        let r = triangular_solve(&a, &b, o, b.ty()).unwrap();
        assert_eq!(r.as_f64().unwrap(), &[2., 3.]);
    }

    #[test]
    fn complex_adjoint_solve() {
        // a = [[2, 0], [i, 1]] (lower); a^H = [[2, -i], [0, 1]]; a^H x = [2 - i, 1] has
        // x = [1, 1].
        let c = |re: f32, im: f32| Complex::new(re, im);
        let ty = |shape: &[i64]| TensorType::new(ElemType::Complex64, shape);
        let a = Tensor::new(
            ty(&[2, 2]),
            Data::C64(vec![c(2., 0.), c(0., 0.), c(0., 1.), c(1., 0.)]),
        )
        .unwrap();
        let b = Tensor::new(ty(&[2, 1]), Data::C64(vec![c(2., -1.), c(1., 0.)])).unwrap();
        let o = TriOpts {
            left: true,
            lower: true,
            unit: false,
            transpose: true,
            conjugate: true,
        };
        let r = triangular_solve(&a, &b, o, b.ty()).unwrap();
        match r.data() {
            Data::C64(v) => assert_eq!(v, &[c(1., 0.), c(1., 0.)]),
            _ => panic!("complex result expected"),
        }
    }
}
