//! Householder reductions and the tridiagonal solver behind jax's CPU custom calls, in
//! LAPACK's output conventions: `?gehrd` (upper Hessenberg form), `?sytrd` / `?hetrd`
//! (symmetric / Hermitian tridiagonal form) and `?gtsv` (a tridiagonal system solved by
//! Gaussian elimination with partial pivoting).
//!
//! Owns: the unblocked algorithms LAPACK runs for the matrix sizes of real traces
//! (`?gehd2`, `?sytd2` / `?hetd2`, `?gtsv`), so the packed outputs a program reads (the
//! reduced matrix with its reflectors stored below the sub- or above the super-diagonal,
//! the `tau`s, the diagonals, the pivoted factors) are LAPACK's, up to rounding.
//! Invariants: reflectors follow `?larfg` (`beta = -sign(re alpha) * norm`, `tau = (beta -
//! alpha) / beta`; `tau = 0` when there is nothing to annihilate); the triangle a
//! symmetric routine does not reference is returned unchanged; `?gtsv` pivots on the
//! larger of `|re| + |im|` and reports the 1-based index of the first zero pivot in
//! `info`, leaving the solution unspecified (jax replaces it with NaN).

use crate::lapack::{apply_reflector, Scalar};
use crate::lapack_spectral::hermitian;
use nalgebra::DMatrix;

/// `?larfg` on a vector `alpha, x`: overwrites `x` with the reflector's tail and returns
/// `(beta, tau)`, with `H^H [alpha; x] = [beta; 0]` for `H = I - tau v v^H`, `v = [1; x]`.
fn larfg<T: Scalar>(alpha: T, x: &mut [T]) -> (T, T) {
    let xnorm = x.iter().map(|v| v.modulus_squared()).sum::<f64>().sqrt();
    if xnorm == 0.0 && alpha.imaginary() == 0.0 {
        return (alpha, T::zero());
    }
    let norm = (alpha.modulus_squared() + xnorm * xnorm).sqrt();
    let beta = if alpha.real() >= 0.0 { -norm } else { norm };
    let tau = (T::from_real(beta) - alpha).unscale(beta);
    let scale = T::one() / (alpha - T::from_real(beta));
    for v in x.iter_mut() {
        *v *= scale;
    }
    (T::from_real(beta), tau)
}

/// `a[rows, cols] := a[rows, cols] (I - tau v v^H)`, `v` indexed from `c0`.
fn reflect_right<T: Scalar>(
    a: &mut DMatrix<T>,
    v: &[T],
    tau: T,
    rows: std::ops::Range<usize>,
    c0: usize,
) {
    for i in rows {
        let w = (0..v.len()).fold(T::zero(), |s, k| s + a[(i, c0 + k)] * v[k]);
        let tw = tau * w;
        for (k, &vk) in v.iter().enumerate() {
            a[(i, c0 + k)] -= tw * vk.conjugate();
        }
    }
}

/// `?gehd2` on rows / columns `ilo..ihi` (0-based, `ihi` exclusive) of one square matrix,
/// in place: H on and above the first sub-diagonal, reflector `i` below it in column `i`.
/// Returns the `n - 1` `tau`s (zero outside `ilo..ihi - 1`).
pub(crate) fn gehrd<T: Scalar>(a: &mut DMatrix<T>, ilo: usize, ihi: usize) -> Vec<T> {
    let n = a.nrows();
    let mut taus = vec![T::zero(); n.saturating_sub(1)];
    for i in ilo..ihi.saturating_sub(1) {
        let mut x: Vec<T> = (i + 2..ihi).map(|r| a[(r, i)]).collect();
        let (beta, tau) = larfg(a[(i + 1, i)], &mut x);
        let v: Vec<T> = std::iter::once(T::one()).chain(x.iter().copied()).collect();
        reflect_right(a, &v, tau, 0..ihi, i + 1);
        apply_reflector(a, &v, i + 1, tau.conjugate(), i + 1..n);
        a[(i + 1, i)] = beta;
        for (k, &xk) in x.iter().enumerate() {
            a[(i + 2 + k, i)] = xk;
        }
        taus[i] = tau;
    }
    taus
}

/// One tridiagonal reduction: the packed matrix, diagonal, off-diagonal and `tau`s.
pub(crate) struct Tridiag<T: Scalar> {
    pub a: DMatrix<T>,
    pub d: Vec<f64>,
    pub e: Vec<f64>,
    pub taus: Vec<T>,
}

/// `?sytd2` / `?hetd2`: `Q^H A Q = T` with `T` tridiagonal, reading the `lower` (or
/// upper) triangle. Lower: reflector `i` annihilates `A[i+2.., i]` and is stored there;
/// upper: reflector `i` annihilates `A[..i, i+1]`, stored above `A[i, i+1]`.
pub(crate) fn sytrd<T: Scalar>(a0: &DMatrix<T>, lower: bool) -> Tridiag<T> {
    let n = a0.nrows();
    let mut h = hermitian(a0, lower);
    let mut a = a0.clone();
    let (mut d, mut e) = (vec![0.0; n], vec![0.0; n.saturating_sub(1)]);
    let mut taus = vec![T::zero(); n.saturating_sub(1)];
    let steps: Vec<usize> = if lower {
        (0..n.saturating_sub(1)).collect()
    } else {
        (0..n.saturating_sub(1)).rev().collect()
    };
    for i in steps {
        // The trailing (lower) or leading (upper) block the reflector acts on.
        let (lo, hi, alpha_row, col) = if lower {
            (i + 1, n, i + 1, i)
        } else {
            (0, i + 1, i, i + 1)
        };
        let mut x: Vec<T> = (lo..hi)
            .filter(|&r| r != alpha_row)
            .map(|r| h[(r, col)])
            .collect();
        let (beta, tau) = larfg(h[(alpha_row, col)], &mut x);
        let mut xs = x.iter().copied();
        let v: Vec<T> = (lo..hi)
            .map(|r| {
                if r == alpha_row {
                    T::one()
                } else {
                    xs.next().unwrap_or_else(T::zero)
                }
            })
            .collect();
        if tau != T::zero() {
            // H^H A H on the block, by the symmetric rank-2 update of ?sytd2.
            let m = hi - lo;
            let p: Vec<T> = (0..m)
                .map(|r| tau * (0..m).fold(T::zero(), |s, c| s + h[(lo + r, lo + c)] * v[c]))
                .collect();
            let pv = (0..m).fold(T::zero(), |s, k| s + p[k].conjugate() * v[k]);
            let alpha = -(tau * pv).unscale(2.0);
            let w: Vec<T> = (0..m).map(|k| p[k] + alpha * v[k]).collect();
            for r in 0..m {
                for c in 0..m {
                    h[(lo + r, lo + c)] -= v[r] * w[c].conjugate() + w[r] * v[c].conjugate();
                }
            }
        }
        e[i] = beta.real();
        taus[i] = tau;
        // The annihilated column / row of the Hermitian working copy.
        for (k, r) in (lo..hi).enumerate() {
            let val = if r == alpha_row { beta } else { T::zero() };
            h[(r, col)] = val;
            h[(col, r)] = val.conjugate();
            if r != alpha_row {
                a[(r, col)] = v[k];
            }
        }
        a[(alpha_row, col)] = beta;
    }
    for i in 0..n {
        d[i] = h[(i, i)].real();
        a[(i, i)] = T::from_real(d[i]);
    }
    Tridiag { a, d, e, taus }
}

/// `?gtsv` for one system: `dl[1..]`, `d`, `du[..n-1]` the sub-, main and
/// super-diagonal (jax's length-`n` layout), `b` `n x nrhs`. Overwrites them with
/// LAPACK's outputs (`dl[1..n-1]` the second super-diagonal of U, `d` / `du` its
/// diagonal and first super-diagonal, `b` the solution) and returns `info`.
pub(crate) fn gtsv<T: Scalar>(dl: &mut [T], d: &mut [T], du: &mut [T], b: &mut DMatrix<T>) -> i64 {
    let n = d.len();
    let nrhs = b.ncols();
    // LAPACK's DL(k) (1-based, k < n) is jax's dl[k]; DU(k) is du[k - 1].
    for k in 0..n.saturating_sub(1) {
        let sub = dl[k + 1];
        if sub == T::zero() {
            if d[k] == T::zero() {
                return k as i64 + 1;
            }
        } else if d[k].norm1() >= sub.norm1() {
            let mult = sub / d[k];
            d[k + 1] -= mult * du[k];
            for j in 0..nrhs {
                let bk = b[(k, j)];
                b[(k + 1, j)] -= mult * bk;
            }
            if k + 2 < n {
                dl[k + 1] = T::zero();
            }
        } else {
            let mult = d[k] / sub;
            d[k] = sub;
            let temp = d[k + 1];
            d[k + 1] = du[k] - mult * temp;
            if k + 2 < n {
                dl[k + 1] = du[k + 1];
                du[k + 1] = -mult * dl[k + 1];
            }
            du[k] = temp;
            for j in 0..nrhs {
                let (bk, bk1) = (b[(k, j)], b[(k + 1, j)]);
                b[(k, j)] = bk1;
                b[(k + 1, j)] = bk - mult * bk1;
            }
        }
    }
    if n > 0 && d[n - 1] == T::zero() {
        return n as i64;
    }
    for j in 0..nrhs {
        for k in (0..n).rev() {
            let mut s = b[(k, j)];
            if k + 1 < n {
                s -= du[k] * b[(k + 1, j)];
            }
            if k + 2 < n {
                s -= dl[k + 1] * b[(k + 2, j)];
            }
            b[(k, j)] = s / d[k];
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &DMatrix<f64>, b: &DMatrix<f64>, tol: f64) -> bool {
        (a - b).abs().max() < tol
    }

    /// `Q` from reflectors stored in column `i` from row `i + 1 + off` down.
    fn q_of(a: &DMatrix<f64>, taus: &[f64]) -> DMatrix<f64> {
        let n = a.nrows();
        let mut q = DMatrix::identity(n, n);
        for (i, &t) in taus.iter().enumerate().rev() {
            let v: Vec<f64> = std::iter::once(1.0)
                .chain((i + 2..n).map(|r| a[(r, i)]))
                .collect();
            apply_reflector(&mut q, &v, i + 1, t, 0..n);
        }
        q
    }

    #[test]
    fn gehrd_is_a_similarity_to_hessenberg_form() {
        let a0 = DMatrix::from_row_slice(
            4,
            4,
            &[
                4.0, 1.0, -2.0, 2.0, 1.0, 2.0, 0.0, 1.0, -2.0, 0.0, 3.0, -2.0, 2.0, 1.0, -2.0, -1.0,
            ],
        );
        let mut a = a0.clone();
        let taus = gehrd(&mut a, 0, 4);
        let h = DMatrix::from_fn(4, 4, |i, j| if i <= j + 1 { a[(i, j)] } else { 0.0 });
        let q = q_of(&a, &taus);
        assert!(close(&(&q * h * q.transpose()), &a0, 1e-12));
        // larfg sign: the first sub-diagonal entry is -sign(1) * ||[1, -2, 2]|| = -3.
        assert!((a[(1, 0)] + 3.0).abs() < 1e-12);
    }

    #[test]
    fn sytrd_lower_matches_the_textbook_example() {
        // Symmetric 3x3: one reflector maps [1, 2] (column 0 below the diagonal) to
        // -sqrt 5 e_0.
        let a0 = DMatrix::from_row_slice(3, 3, &[2.0, 9.0, 9.0, 1.0, 3.0, 9.0, 2.0, 0.5, 4.0]);
        let t = sytrd(&a0, true);
        assert!((t.e[0] + 5f64.sqrt()).abs() < 1e-12);
        let s = hermitian(&a0, true);
        let tri = DMatrix::from_fn(3, 3, |i, j| match i.abs_diff(j) {
            0 => t.d[i],
            1 => t.e[i.min(j)],
            _ => 0.0,
        });
        let q = q_of(&t.a, &t.taus);
        assert!(close(&(&q * tri * q.transpose()), &s, 1e-12));
        // The unreferenced upper triangle is kept.
        assert_eq!(t.a[(0, 1)], 9.0);
    }

    #[test]
    fn sytrd_upper_reconstructs() {
        let a0 = DMatrix::from_row_slice(3, 3, &[2.0, 1.0, 2.0, 7.0, 3.0, 0.5, 7.0, 7.0, 4.0]);
        let t = sytrd(&a0, false);
        let s = hermitian(&a0, false);
        let tri = DMatrix::from_fn(3, 3, |i, j| match i.abs_diff(j) {
            0 => t.d[i],
            1 => t.e[i.min(j)],
            _ => 0.0,
        });
        // Upper: Q = H(n-2) ... H(0), reflector i stored above a[(i, i+1)].
        let mut q = DMatrix::identity(3, 3);
        for i in 0..2 {
            let v: Vec<f64> = (0..=i)
                .map(|r| if r == i { 1.0 } else { t.a[(r, i + 1)] })
                .collect();
            apply_reflector(&mut q, &v, 0, t.taus[i], 0..3);
        }
        assert!(close(&(&q * tri * q.transpose()), &s, 1e-12));
    }

    #[test]
    fn gtsv_solves_with_and_without_pivoting() {
        // [[1, 2, 0], [5, 1, 3], [0, 1, 4]] x = [3, 9, 5] has x = [1, 1, 1]; row 1's
        // sub-diagonal 5 > 1 forces an interchange at step 0.
        let (mut dl, mut d, mut du) = (
            vec![0.0, 5.0, 1.0],
            vec![1.0, 1.0, 4.0],
            vec![2.0, 3.0, 0.0],
        );
        let mut b = DMatrix::from_row_slice(3, 1, &[3.0, 9.0, 5.0]);
        assert_eq!(gtsv(&mut dl, &mut d, &mut du, &mut b), 0);
        assert!(close(&b, &DMatrix::from_element(3, 1, 1.0), 1e-12));
        let (mut dl, mut d, mut du) = (vec![0.0, 0.0], vec![0.0, 1.0], vec![1.0, 0.0]);
        let mut b = DMatrix::from_element(2, 1, 1.0);
        assert_eq!(gtsv(&mut dl, &mut d, &mut du, &mut b), 1);
    }
}
