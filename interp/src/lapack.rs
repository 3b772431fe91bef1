//! LAPACK factorizations behind jax's CPU custom calls, in LAPACK's own output
//! conventions: `?getrf` (LU with partial pivoting), `?geqrf` (Householder QR) and
//! `?orgqr` / `?ungqr` (the explicit Q of a product of reflectors).
//!
//! Owns: the batched plumbing shared by every LAPACK kernel ([`Scalar`]: reading a
//! `[..., m, n]` tensor as a list of `nalgebra` matrices and writing them back) and the
//! three factorizations. They are written out here rather than taken from a crate because
//! the outputs are LAPACK's packed formats (unit-lower L and U in one matrix, 1-based pivot
//! rows, Householder vectors below R with their `tau`s), which a program reads directly.
//! Invariants: arithmetic is in f64 / complex f64 whatever the operand type, rounded to
//! the result type once; reflectors follow `?larfg` (`beta = -sign(re alpha) * norm`,
//! `tau = (beta - alpha) / beta`, `v[0] = 1`), pivots follow `i?amax` (the first maximum
//! of `|re| + |im|`). Shapes are checked, never assumed: a mismatch is an error.

use crate::tensor::{Data, Tensor};
use nalgebra::{ComplexField, DMatrix};
use neuronc_ir::{ElemType, TensorType};
use num_complex::Complex;

pub(crate) type R<T> = Result<T, String>;

/// An element type the LAPACK kernels compute in: `f64` for real operands and
/// `Complex<f64>` for complex ones.
pub(crate) trait Scalar: ComplexField<RealField = f64> + Copy {
    /// The operand's elements widened to `Self`.
    fn read(t: &Tensor) -> R<Vec<Self>>;
    /// Elements rounded to `out`'s element type.
    fn write(out: &TensorType, v: Vec<Self>) -> R<Tensor>;
}

impl Scalar for f64 {
    fn read(t: &Tensor) -> R<Vec<f64>> {
        match t.elem() {
            e if e.is_float() => Ok(t.to_f64_vec()),
            e => Err(format!("expected a real float operand, got {e}")),
        }
    }
    fn write(out: &TensorType, v: Vec<f64>) -> R<Tensor> {
        Tensor::from_f64_as(out.elem, &out.shape, &v)
    }
}

impl Scalar for Complex<f64> {
    fn read(t: &Tensor) -> R<Vec<Complex<f64>>> {
        match t.data() {
            Data::C64(v) => Ok(v
                .iter()
                .map(|c| Complex::new(c.re as f64, c.im as f64))
                .collect()),
            Data::C128(v) => Ok(v.clone()),
            _ => Err(format!("expected a complex operand, got {}", t.elem())),
        }
    }
    fn write(out: &TensorType, v: Vec<Complex<f64>>) -> R<Tensor> {
        let data = match out.elem {
            ElemType::Complex64 => Data::C64(
                v.iter()
                    .map(|c| Complex::new(c.re as f32, c.im as f32))
                    .collect(),
            ),
            ElemType::Complex128 => Data::C128(v),
            e => return Err(format!("expected a complex result, got {e}")),
        };
        Tensor::new(out.clone(), data)
    }
}

/// The trailing `(rows, cols)` of a shape of rank >= 2, and the number of matrices.
pub(crate) fn mat_dims(shape: &[i64]) -> R<(usize, usize, usize)> {
    let [.., m, n] = shape else {
        return Err(format!(
            "expected a [..., m, n] operand, got rank {}",
            shape.len()
        ));
    };
    let batch: i64 = shape[..shape.len() - 2].iter().product();
    Ok((
        batch.max(0) as usize,
        (*m).max(0) as usize,
        (*n).max(0) as usize,
    ))
}

/// Reads a `[..., m, n]` tensor as its row-major matrices.
pub(crate) fn read_mats<T: Scalar>(t: &Tensor) -> R<Vec<DMatrix<T>>> {
    let (b, m, n) = mat_dims(t.shape())?;
    let v = T::read(t)?;
    Ok((0..b)
        .map(|i| DMatrix::from_row_slice(m, n, &v[i * m * n..(i + 1) * m * n]))
        .collect())
}

/// Writes matrices (each of `out`'s trailing shape) as a `[..., m, n]` tensor.
pub(crate) fn write_mats<T: Scalar>(out: &TensorType, mats: &[DMatrix<T>]) -> R<Tensor> {
    let (b, m, n) = mat_dims(&out.shape)?;
    if mats.len() != b || mats.iter().any(|a| a.shape() != (m, n)) {
        return Err(format!(
            "result shape {:?} does not match the computed matrices",
            out.shape
        ));
    }
    let mut v = Vec::with_capacity(b * m * n);
    for a in mats {
        v.extend(a.transpose().iter());
    }
    T::write(out, v)
}

/// Writes per-matrix vectors (`[..., k]`) as one tensor, checking the length.
pub(crate) fn write_vecs<T: Scalar>(out: &TensorType, vecs: Vec<Vec<T>>) -> R<Tensor> {
    let v: Vec<T> = vecs.concat();
    if v.len() as i64 != out.shape.iter().product::<i64>() {
        return Err(format!(
            "result shape {:?} does not match {} computed values",
            out.shape,
            v.len()
        ));
    }
    T::write(out, v)
}

/// Writes per-matrix integers (`info`, pivots) as one integer tensor.
pub(crate) fn write_ints(out: &TensorType, v: &[i64]) -> R<Tensor> {
    if v.len() as i64 != out.shape.iter().product::<i64>() {
        return Err(format!(
            "result shape {:?} does not match {} computed values",
            out.shape,
            v.len()
        ));
    }
    Tensor::from_i64(out.elem, &out.shape, v)
}

/// `?getrf` on one matrix, in place: `a` becomes L (unit diagonal, below) and U (on and
/// above the diagonal) of `P a = L U`. Returns the 1-based pivot rows (`a`'s row `i` was
/// swapped with row `ipiv[i] - 1` at step `i`) and `info` (the 1-based index of the
/// first exactly zero pivot, 0 if none; the factorization still completes).
pub(crate) fn getrf<T: Scalar>(a: &mut DMatrix<T>) -> (Vec<i64>, i64) {
    let (m, n) = a.shape();
    let mut ipiv = Vec::with_capacity(m.min(n));
    let mut info = 0;
    for j in 0..m.min(n) {
        let mut p = j;
        for i in j + 1..m {
            if a[(i, j)].norm1() > a[(p, j)].norm1() {
                p = i;
            }
        }
        ipiv.push(p as i64 + 1);
        let pivot = a[(p, j)];
        if pivot.is_zero() {
            if info == 0 {
                info = j as i64 + 1;
            }
            continue;
        }
        a.swap_rows(j, p);
        for i in j + 1..m {
            a[(i, j)] /= pivot;
        }
        for c in j + 1..n {
            let u = a[(j, c)];
            for i in j + 1..m {
                let l = a[(i, j)];
                a[(i, c)] -= l * u;
            }
        }
    }
    (ipiv, info)
}

/// `?larfg` on column `c` of `a` from row `r` down: turns it into `beta e_0` and stores
/// the reflector's tail below `a[(r, c)] = beta`. Returns `tau`.
fn larfg<T: Scalar>(a: &mut DMatrix<T>, r: usize, c: usize) -> T {
    let m = a.nrows();
    let alpha = a[(r, c)];
    let xnorm = (r + 1..m)
        .map(|i| a[(i, c)].modulus_squared())
        .sum::<f64>()
        .sqrt();
    if xnorm == 0.0 && alpha.imaginary() == 0.0 {
        return T::zero();
    }
    let norm = (alpha.modulus_squared() + xnorm * xnorm).sqrt();
    let beta = if alpha.real() >= 0.0 { -norm } else { norm };
    let tau = (T::from_real(beta) - alpha).unscale(beta);
    let scale = T::one() / (alpha - T::from_real(beta));
    for i in r + 1..m {
        a[(i, c)] *= scale;
    }
    a[(r, c)] = T::from_real(beta);
    tau
}

/// The reflector stored in column `c` of `a` below row `r`: `[1, a[(r+1.., c)]]`.
fn reflector<T: Scalar>(a: &DMatrix<T>, r: usize, c: usize) -> Vec<T> {
    std::iter::once(T::one())
        .chain((r + 1..a.nrows()).map(|i| a[(i, c)]))
        .collect()
}

/// Applies `I - tau v v^H` from the left to rows `r..` of the columns `cols` of `q`.
pub(crate) fn apply_reflector<T: Scalar>(
    q: &mut DMatrix<T>,
    v: &[T],
    r: usize,
    tau: T,
    cols: std::ops::Range<usize>,
) {
    for j in cols {
        let w = v
            .iter()
            .zip(r..)
            .fold(T::zero(), |s, (&vi, i)| s + vi.conjugate() * q[(i, j)]);
        let tw = tau * w;
        for (&vi, i) in v.iter().zip(r..) {
            q[(i, j)] -= vi * tw;
        }
    }
}

/// `?geqrf` on one matrix, in place: R on and above the diagonal, the Householder vectors
/// (without their unit first element) below it. Returns the `min(m, n)` `tau`s; `a` equals
/// `H_0 H_1 ... H_{k-1} R` with `H_i = I - tau_i v_i v_i^H`.
pub(crate) fn geqrf<T: Scalar>(a: &mut DMatrix<T>) -> Vec<T> {
    let (m, n) = a.shape();
    let mut taus = Vec::with_capacity(m.min(n));
    for i in 0..m.min(n) {
        let tau = larfg(a, i, i);
        // H_i^H applied to the trailing columns, reading the reflector just stored.
        let v = reflector(a, i, i);
        apply_reflector(a, &v, i, tau.conjugate(), i + 1..n);
        taus.push(tau);
    }
    taus
}

/// `?orgqr` / `?ungqr`: the first `n` columns of `H_0 H_1 ... H_{k-1}` for reflectors
/// stored below the diagonal of the `m x n` matrix `a` (as `geqrf` leaves them), `k =
/// taus.len() <= n <= m`.
pub(crate) fn orgqr<T: Scalar>(a: &DMatrix<T>, taus: &[T]) -> R<DMatrix<T>> {
    let (m, n) = a.shape();
    if taus.len() > n || n > m {
        return Err(format!(
            "orgqr needs k <= n <= m, got m={m} n={n} k={}",
            taus.len()
        ));
    }
    let mut q = DMatrix::<T>::identity(m, n);
    for (i, &tau) in taus.iter().enumerate().rev() {
        apply_reflector(&mut q, &reflector(a, i, i), i, tau, i..n);
    }
    Ok(q)
}

/// An `m x m` unitary matrix whose first `k` columns are the orthonormal columns of `u`
/// (`m x k`): LAPACK's full `U` / `V^H` when only a thin basis was computed.
pub(crate) fn complete_basis<T: Scalar>(u: &DMatrix<T>) -> R<DMatrix<T>> {
    let (m, k) = u.shape();
    let mut packed = u.clone();
    let taus = geqrf(&mut packed);
    let mut full = DMatrix::<T>::zeros(m, m);
    full.columns_mut(0, k).copy_from(&packed);
    let mut q = orgqr(&full, &taus)?;
    q.columns_mut(0, k).copy_from(u);
    Ok(q)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &DMatrix<f64>, b: &DMatrix<f64>) -> bool {
        (a - b).abs().max() < 1e-12
    }

    #[test]
    fn getrf_matches_hand_elimination() {
        // Column 0's largest entry is in row 2: swap rows 0 and 2 first.
        let a0 = DMatrix::from_row_slice(3, 3, &[1.0, 2.0, 3.0, 2.0, 1.0, 1.0, 4.0, 2.0, 0.0]);
        let mut a = a0.clone();
        let (ipiv, info) = getrf(&mut a);
        assert_eq!(info, 0);
        assert_eq!(ipiv[0], 3);
        // Rebuild P a = L U and compare with the hand-permuted a0.
        let l = DMatrix::from_fn(3, 3, |i, j| match i.cmp(&j) {
            std::cmp::Ordering::Greater => a[(i, j)],
            std::cmp::Ordering::Equal => 1.0,
            _ => 0.0,
        });
        let u = a.upper_triangle();
        let mut pa = a0.clone();
        for (i, &p) in ipiv.iter().enumerate() {
            pa.swap_rows(i, p as usize - 1);
        }
        assert!(close(&(l * u), &pa));
    }

    #[test]
    fn getrf_reports_first_zero_pivot() {
        let mut a = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 4.0]);
        let (_, info) = getrf(&mut a);
        assert_eq!(info, 2);
    }

    #[test]
    fn geqrf_orgqr_reconstructs_with_lapack_signs() {
        let a0 = DMatrix::from_row_slice(3, 2, &[3.0, 1.0, 4.0, 2.0, 0.0, 5.0]);
        let mut a = a0.clone();
        let taus = geqrf(&mut a);
        // larfg: beta = -sign(alpha) * ||x|| = -5 for the first column [3, 4, 0].
        assert!((a[(0, 0)] + 5.0).abs() < 1e-12);
        assert!((taus[0] - 1.6).abs() < 1e-12); // (beta - alpha) / beta = 8 / 5
        let q = orgqr(&a, &taus).unwrap();
        let r = a.rows(0, 2).upper_triangle();
        assert!(close(&(&q * r), &a0));
        assert!(close(&(q.transpose() * &q), &DMatrix::identity(2, 2)));
    }

    #[test]
    fn complete_basis_is_unitary_and_keeps_columns() {
        let s = 0.5f64.sqrt();
        let u = DMatrix::from_row_slice(3, 1, &[s, s, 0.0]);
        let q = complete_basis(&u).unwrap();
        assert!(close(&(q.transpose() * &q), &DMatrix::identity(3, 3)));
        assert!(close(&q.columns(0, 1).into_owned(), &u));
    }
}
