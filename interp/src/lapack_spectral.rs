//! Spectral decompositions behind jax's and torch_xla's custom calls: Hermitian
//! eigendecomposition (`?syevd` / `?heevd`, XLA's `Eigh`) and the SVD (`?gesdd` /
//! `?gesvd`), computed by `nalgebra` (tridiagonal / bidiagonal implicit QR in f64).
//!
//! Owns: building the Hermitian matrix from the triangle LAPACK reads, LAPACK's ordering
//! (eigenvalues ascending, singular values descending, vectors permuted alongside), the
//! full (`mode = 'A'`) SVD bases completed by [`complete_basis`], and the failure
//! convention (non-finite input or no convergence: NaN outputs and `info = 1`, which
//! jax turns into NaNs anyway).
//! Invariant: eigen- and singular vectors are unique only up to a sign (a unit phase
//! for complex), and no library reproduces LAPACK's choice; every product a program can
//! form that is invariant under that choice (`V diag(w) V^H`, `U S V^H`, `|V|` of
//! distinct eigenvalues) matches LAPACK up to rounding.

use crate::lapack::{complete_basis, Scalar, R};
use nalgebra::{DMatrix, SymmetricEigen, SVD};

/// Iteration cap per matrix for the implicit QR sweeps: far above what convergence needs
/// (a few sweeps per eigenvalue), low enough that a pathological input ends.
fn max_iter(n: usize) -> usize {
    1000 + 100 * n * n
}

fn finite<T: Scalar>(a: &DMatrix<T>) -> bool {
    a.iter()
        .all(|x| x.real().is_finite() && x.imaginary().is_finite())
}

/// The Hermitian matrix whose `lower` (or upper) triangle is `a`'s; the diagonal's
/// imaginary part is ignored, as `?heevd` does.
pub(crate) fn hermitian<T: Scalar>(a: &DMatrix<T>, lower: bool) -> DMatrix<T> {
    DMatrix::from_fn(a.nrows(), a.ncols(), |i, j| {
        if i == j {
            T::from_real(a[(i, i)].real())
        } else if (i > j) == lower {
            a[(i, j)]
        } else {
            a[(j, i)].conjugate()
        }
    })
}

/// One Hermitian eigendecomposition: `a = v diag(w) v^H`, `w` ascending.
pub(crate) struct Eig<T: Scalar> {
    pub v: DMatrix<T>,
    pub w: Vec<f64>,
    pub info: i64,
}

/// `?syevd` / `?heevd` (`jobz = 'V'`) reading the `lower` or upper triangle of `a`.
pub(crate) fn eigh<T: Scalar>(a: &DMatrix<T>, lower: bool) -> Eig<T> {
    let n = a.nrows();
    let failed = || Eig {
        v: DMatrix::from_element(n, n, T::from_real(f64::NAN)),
        w: vec![f64::NAN; n],
        info: 1,
    };
    if n == 0 {
        return Eig {
            v: DMatrix::zeros(0, 0),
            w: Vec::new(),
            info: 0,
        };
    }
    let h = hermitian(a, lower);
    if !finite(&h) {
        return failed();
    }
    let Some(e) = SymmetricEigen::try_new(h, f64::EPSILON, max_iter(n)) else {
        return failed();
    };
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| e.eigenvalues[i].total_cmp(&e.eigenvalues[j]));
    Eig {
        v: e.eigenvectors.select_columns(&order),
        w: order.iter().map(|&i| e.eigenvalues[i]).collect(),
        info: 0,
    }
}

/// Which singular vectors an SVD returns (LAPACK's `jobz`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SvdMode {
    /// `'A'`: all of `U` (`m x m`) and `V^H` (`n x n`).
    Full,
    /// `'S'`: the thin `U` (`m x k`) and `V^H` (`k x n`), `k = min(m, n)`.
    Thin,
    /// `'N'`: no vectors; the `U` / `V^H` results are unspecified (zeros here).
    None,
}

impl SvdMode {
    pub(crate) fn from_jobz(c: u8) -> R<SvdMode> {
        match c {
            b'A' => Ok(SvdMode::Full),
            b'S' => Ok(SvdMode::Thin),
            b'N' => Ok(SvdMode::None),
            _ => Err(format!("unsupported SVD mode '{}'", c as char)),
        }
    }
}

/// One SVD: `a = u diag(s) vt`, `s` descending.
pub(crate) struct Svd<T: Scalar> {
    pub s: Vec<f64>,
    pub u: DMatrix<T>,
    pub vt: DMatrix<T>,
    pub info: i64,
}

/// `?gesdd` / `?gesvd` of `a` in `mode`; `u_shape` / `vt_shape` are the result shapes
/// (used as given for [`SvdMode::None`], checked otherwise by the caller's writer).
pub(crate) fn svd<T: Scalar>(
    a: &DMatrix<T>,
    mode: SvdMode,
    u_shape: (usize, usize),
    vt_shape: (usize, usize),
) -> R<Svd<T>> {
    let (m, n) = a.shape();
    let k = m.min(n);
    let nan = T::from_real(f64::NAN);
    let failed = || Svd {
        s: vec![f64::NAN; k],
        u: DMatrix::from_element(u_shape.0, u_shape.1, nan),
        vt: DMatrix::from_element(vt_shape.0, vt_shape.1, nan),
        info: 1,
    };
    if k == 0 {
        return Ok(Svd {
            s: Vec::new(),
            u: DMatrix::identity(u_shape.0, u_shape.1),
            vt: DMatrix::identity(vt_shape.0, vt_shape.1),
            info: 0,
        });
    }
    if !finite(a) {
        return Ok(failed());
    }
    let vecs = mode != SvdMode::None;
    let Some(d) = SVD::try_new_unordered(a.clone(), vecs, vecs, f64::EPSILON, max_iter(k)) else {
        return Ok(failed());
    };
    let mut order: Vec<usize> = (0..k).collect();
    order.sort_by(|&i, &j| d.singular_values[j].total_cmp(&d.singular_values[i]));
    let s = order.iter().map(|&i| d.singular_values[i]).collect();
    let (u, vt) = match (mode, d.u, d.v_t) {
        (SvdMode::None, ..) => (
            DMatrix::zeros(u_shape.0, u_shape.1),
            DMatrix::zeros(vt_shape.0, vt_shape.1),
        ),
        (_, Some(u), Some(vt)) => {
            let (u, vt) = (u.select_columns(&order), vt.select_rows(&order));
            if mode == SvdMode::Full {
                let v_full = complete_basis(&vt.adjoint())?;
                (complete_basis(&u)?, v_full.adjoint())
            } else {
                (u, vt)
            }
        }
        _ => return Err("SVD did not return its vectors".into()),
    };
    Ok(Svd { s, u, vt, info: 0 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_complex::Complex;

    #[test]
    fn eigh_of_a_2x2_is_ascending_and_reads_one_triangle() {
        // [[2, 1], [1, 2]] has eigenvalues 1 and 3; the upper triangle holds garbage.
        let a = DMatrix::from_row_slice(2, 2, &[2.0, 99.0, 1.0, 2.0]);
        let e = eigh(&a, true);
        assert_eq!(e.info, 0);
        assert!((e.w[0] - 1.0).abs() < 1e-12 && (e.w[1] - 3.0).abs() < 1e-12);
        // The eigenvector of 1 is +-[1, -1] / sqrt 2.
        assert!((e.v[(0, 0)] + e.v[(1, 0)]).abs() < 1e-12);
    }

    #[test]
    fn heevd_of_a_hermitian_2x2() {
        // [[1, i], [-i, 1]] has eigenvalues 0 and 2.
        let c = |re, im| Complex::new(re, im);
        let a =
            DMatrix::from_row_slice(2, 2, &[c(1.0, 0.0), c(0.0, 1.0), c(0.0, -1.0), c(1.0, 0.0)]);
        let e = eigh(&a, false);
        assert!(e.w[0].abs() < 1e-12 && (e.w[1] - 2.0).abs() < 1e-12);
        let rebuilt = &e.v
            * DMatrix::from_diagonal(&nalgebra::DVector::from_fn(2, |i, _| c(e.w[i], 0.0)))
            * e.v.adjoint();
        assert!((rebuilt - a).iter().all(|x| x.norm() < 1e-12));
    }

    #[test]
    fn eigh_of_nan_sets_info() {
        let a = DMatrix::from_row_slice(1, 1, &[f64::NAN]);
        assert_eq!(eigh(&a, true).info, 1);
    }

    #[test]
    fn full_svd_of_a_column() {
        // [3, 4]^T = u * 5 * [1] with u = +-[0.6, 0.8].
        let a = DMatrix::from_row_slice(2, 1, &[3.0, 4.0]);
        let d = svd(&a, SvdMode::Full, (2, 2), (1, 1)).unwrap();
        assert!((d.s[0] - 5.0).abs() < 1e-12);
        assert_eq!(d.u.shape(), (2, 2));
        let rebuilt = d.u.columns(0, 1) * d.s[0] * &d.vt;
        assert!((rebuilt - a).abs().max() < 1e-12);
        assert!(
            (d.u.transpose() * &d.u - DMatrix::identity(2, 2))
                .abs()
                .max()
                < 1e-12
        );
    }

    #[test]
    fn singular_values_descend() {
        let a = DMatrix::from_row_slice(2, 3, &[1.0, 0.0, 0.0, 0.0, 3.0, 0.0]);
        let d = svd(&a, SvdMode::Thin, (2, 2), (2, 3)).unwrap();
        assert!((d.s[0] - 3.0).abs() < 1e-12 && (d.s[1] - 1.0).abs() < 1e-12);
        assert!(
            (&d.u * DMatrix::from_diagonal(&nalgebra::DVector::from_vec(d.s.clone())) * &d.vt - a)
                .abs()
                .max()
                < 1e-12
        );
    }
}
