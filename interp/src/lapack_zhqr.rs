//! The complex Schur decomposition as LAPACK computes it for `?gees` / `?geev` on complex
//! matrices: balancing and Hessenberg reduction (shared with [`crate::lapack_hqr`]) and the
//! single-shift QR iteration of `zlahqr` (what `zhseqr` runs below its crossover size).
//!
//! Owns: LAPACK's order of eigenvalues along the triangular factor, which follows the
//! exact sequence of Wilkinson shifts (exceptional shifts every 10 iterations without a
//! deflation), deflations (the Ahues - Tisseur test) and the rescalings that keep the
//! sub-diagonal real.
//! Invariants: 1-based indices inside the iteration (the `h!` macro translates), as in
//! the published algorithm; failure to converge within `30 max(10, n)` iterations per
//! eigenvalue is `None`.

use crate::lapack_hqr::{gebal, hessenberg, Balance, Prec};
use nalgebra::DMatrix;
use num_complex::Complex;

type C = Complex<f64>;

fn cabs1(z: C) -> f64 {
    z.re.abs() + z.im.abs()
}

/// Scales row `i` from column `from` to `to` (1-based, inclusive) of `m` by `s`.
fn scale_row(m: &mut DMatrix<C>, i: usize, from: usize, to: usize, s: C) {
    for j in from..=to {
        m[(i - 1, j - 1)] *= s;
    }
}

/// Scales column `j` from row `from` to `to` (1-based, inclusive) of `m` by `s`.
fn scale_col(m: &mut DMatrix<C>, j: usize, from: usize, to: usize, s: C) {
    for i in from..=to {
        m[(i - 1, j - 1)] *= s;
    }
}

/// `zlahqr`'s shift for the active block `l..=i` at deflation count `kdefl`.
fn shift(h: &DMatrix<C>, l: usize, i: usize, kdefl: usize) -> C {
    let at = |r: usize, c: usize| h[(r - 1, c - 1)];
    if kdefl.is_multiple_of(20) {
        return 0.75 * at(i, i - 1).re.abs() + at(i, i);
    }
    if kdefl.is_multiple_of(10) {
        return 0.75 * at(l + 1, l).re.abs() + at(l, l);
    }
    // Wilkinson's shift.
    let mut t = at(i, i);
    let u = at(i - 1, i).sqrt() * at(i, i - 1).sqrt();
    let s = cabs1(u);
    if s != 0.0 {
        let x = 0.5 * (at(i - 1, i - 1) - t);
        let sx = cabs1(x);
        let s = s.max(cabs1(x));
        let mut y = s * ((x / s) * (x / s) + (u / s) * (u / s)).sqrt();
        if sx > 0.0 && (x / sx).re * y.re + (x / sx).im * y.im < 0.0 {
            y = -y;
        }
        t -= u * (u / (x + y));
    }
    t
}

/// Index of the last negligible sub-diagonal entry in `l..=i` (`l` if none).
fn deflation_point(
    h: &DMatrix<C>,
    (l, i): (usize, usize),
    (ilo, ihi): (usize, usize),
    smlnum: f64,
    ulp: f64,
) -> usize {
    let at = |r: usize, c: usize| h[(r - 1, c - 1)];
    let mut k = i;
    while k > l {
        if cabs1(at(k, k - 1)) <= smlnum {
            break;
        }
        let mut tst = cabs1(at(k - 1, k - 1)) + cabs1(at(k, k));
        if tst == 0.0 {
            if k >= ilo + 2 {
                tst += at(k - 1, k - 2).re.abs();
            }
            if k < ihi {
                tst += at(k + 1, k).re.abs();
            }
        }
        if at(k, k - 1).re.abs() <= ulp * tst {
            let ab = cabs1(at(k, k - 1)).max(cabs1(at(k - 1, k)));
            let ba = cabs1(at(k, k - 1)).min(cabs1(at(k - 1, k)));
            let aa = cabs1(at(k, k)).max(cabs1(at(k - 1, k - 1) - at(k, k)));
            let bb = cabs1(at(k, k)).min(cabs1(at(k - 1, k - 1) - at(k, k)));
            let s = aa + ab;
            if ba * (ab / s) <= smlnum.max(ulp * (bb * (aa / s))) {
                break;
            }
        }
        k -= 1;
    }
    k
}

/// Where the QR sweep starts (`m`) and its first reflector's vector.
fn sweep_start(h: &DMatrix<C>, l: usize, i: usize, t: C, ulp: f64) -> (usize, [C; 2]) {
    let at = |r: usize, c: usize| h[(r - 1, c - 1)];
    let start = |m: usize| {
        let (h11, h21) = (at(m, m), at(m + 1, m).re);
        let h11s = h11 - t;
        let s = cabs1(h11s) + h21.abs();
        (h11s / s, h21 / s)
    };
    for m in (l + 1..i).rev() {
        let (h11s, h21) = start(m);
        let h10 = at(m, m - 1).re;
        if h10.abs() * h21.abs()
            <= ulp * (cabs1(h11s) * (cabs1(at(m, m)) + cabs1(at(m + 1, m + 1))))
        {
            return (m, [h11s, C::new(h21, 0.0)]);
        }
    }
    let (h11s, h21) = start(l);
    (l, [h11s, C::new(h21, 0.0)])
}

/// `zlarfg` on 2 elements: returns `tau`; `v[0]` becomes `beta`, `v[1]` the tail.
fn larfg2(v: &mut [C; 2]) -> C {
    let xnorm = v[1].norm();
    if xnorm == 0.0 && v[0].im == 0.0 {
        return C::new(0.0, 0.0);
    }
    let norm = (v[0].norm_sqr() + xnorm * xnorm).sqrt();
    let beta = if v[0].re >= 0.0 { -norm } else { norm };
    let tau = C::new((beta - v[0].re) / beta, -v[0].im / beta);
    v[1] *= C::new(1.0, 0.0) / (v[0] - beta);
    v[0] = C::new(beta, 0.0);
    tau
}

/// One single-shift QR sweep over rows / columns `m..=i`.
#[allow(clippy::too_many_arguments)]
fn sweep(
    h: &mut DMatrix<C>,
    z: &mut DMatrix<C>,
    l: usize,
    m: usize,
    i: usize,
    mut v: [C; 2],
    ilo: usize,
    ihi: usize,
) {
    let n = h.nrows();
    let (i1, i2) = (1, n);
    for k in m..i {
        if k > m {
            v = [h[(k - 1, k - 2)], h[(k, k - 2)]];
        }
        let t1 = larfg2(&mut v);
        if k > m {
            h[(k - 1, k - 2)] = v[0];
            h[(k, k - 2)] = C::new(0.0, 0.0);
        }
        let v2 = v[1];
        let t2 = (t1 * v2).re;
        for j in k..=i2 {
            let sum = t1.conj() * h[(k - 1, j - 1)] + t2 * h[(k, j - 1)];
            h[(k - 1, j - 1)] -= sum;
            h[(k, j - 1)] -= sum * v2;
        }
        for j in i1..=(k + 2).min(i) {
            let sum = t1 * h[(j - 1, k - 1)] + t2 * h[(j - 1, k)];
            h[(j - 1, k - 1)] -= sum;
            h[(j - 1, k)] -= sum * v2.conj();
        }
        for j in ilo..=ihi {
            let sum = t1 * z[(j - 1, k - 1)] + t2 * z[(j - 1, k)];
            z[(j - 1, k - 1)] -= sum;
            z[(j - 1, k)] -= sum * v2.conj();
        }
        if k == m && m > l {
            // Keep H(m, m-1) real after starting the sweep below row l.
            let temp = C::new(1.0, 0.0) - t1;
            let temp = temp / temp.norm();
            h[(m, m - 1)] *= temp.conj();
            if m + 2 <= i {
                h[(m + 1, m)] *= temp;
            }
            for j in m..=i {
                if j != m + 1 {
                    if i2 > j {
                        scale_row(h, j, j + 1, i2, temp);
                    }
                    scale_col(h, j, i1, j - 1, temp.conj());
                    scale_col(z, j, ilo, ihi, temp.conj());
                }
            }
        }
    }
    // Keep H(i, i-1) real.
    let temp = h[(i - 1, i - 2)];
    if temp.im != 0.0 {
        let r = temp.norm();
        h[(i - 1, i - 2)] = C::new(r, 0.0);
        let temp = temp / r;
        if i2 > i {
            scale_row(h, i, i + 1, i2, temp.conj());
        }
        scale_col(h, i, i1, i - 1, temp);
        scale_col(z, i, ilo, ihi, temp);
    }
}

/// Makes the sub-diagonal of the Hessenberg `h` real (scaling rows / columns, and `z`).
fn real_subdiagonal(h: &mut DMatrix<C>, z: &mut DMatrix<C>, ilo: usize, ihi: usize) {
    let n = h.nrows();
    for i in ilo + 1..=ihi {
        let e = h[(i - 1, i - 2)];
        if e.im != 0.0 {
            let sc = e / cabs1(e);
            let sc = sc.conj() / sc.norm();
            h[(i - 1, i - 2)] = C::new(e.norm(), 0.0);
            scale_row(h, i, i, n, sc);
            scale_col(h, i, 1, n.min(i + 1), sc.conj());
            scale_col(z, i, ilo, ihi, sc.conj());
        }
    }
}

/// `zlahqr` with `wantt` and `wantz`: `h` (upper Hessenberg) becomes upper triangular,
/// `z` accumulates the transformations. Returns the eigenvalues (the diagonal).
pub(crate) fn zlahqr(
    h: &mut DMatrix<C>,
    z: &mut DMatrix<C>,
    ilo: usize,
    ihi: usize,
    prec: Prec,
) -> Option<Vec<C>> {
    let n = h.nrows();
    if n == 0 || ilo > ihi {
        return Some(Vec::new());
    }
    if ilo < ihi {
        real_subdiagonal(h, z, ilo, ihi);
        let smlnum = prec.safmin * ((ihi - ilo + 1) as f64 / prec.ulp);
        let itmax = 30 * (ihi - ilo + 1).max(10);
        let mut kdefl = 0;
        let mut i = ihi;
        while i >= ilo {
            let mut l = ilo;
            let mut converged = false;
            for _its in 0..=itmax {
                l = deflation_point(h, (l, i), (ilo, ihi), smlnum, prec.ulp);
                if l > ilo {
                    h[(l - 1, l - 2)] = C::new(0.0, 0.0);
                }
                if l >= i {
                    converged = true;
                    break;
                }
                kdefl += 1;
                let t = shift(h, l, i, kdefl);
                let (m, v) = sweep_start(h, l, i, t, prec.ulp);
                sweep(h, z, l, m, i, v, ilo, ihi);
            }
            if !converged {
                return None;
            }
            kdefl = 0;
            if l < 2 {
                break;
            }
            i = l - 1;
        }
    }
    Some((0..n).map(|i| h[(i, i)]).collect())
}

/// LAPACK's complex Schur form of `a` after balancing (with scaling when `scale`):
/// `(t, z, balance)` with `B = z t z^H` for the balanced `B`.
pub(crate) fn complex_schur(
    a: &DMatrix<C>,
    scale: bool,
    prec: Prec,
) -> Option<(DMatrix<C>, DMatrix<C>, Balance)> {
    let mut b = a.clone();
    let bal = gebal(&mut b, scale);
    let (mut h, mut z) = hessenberg(&b, bal.ilo, bal.ihi);
    zlahqr(&mut h, &mut z, bal.ilo, bal.ihi, prec)?;
    let n = h.nrows();
    for j in 0..n {
        for i in j + 1..n {
            h[(i, j)] = C::new(0.0, 0.0);
        }
    }
    Some((h, z, bal))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complex_schur_is_a_unitary_similarity_to_triangular_form() {
        let c = |re, im| C::new(re, im);
        let a = DMatrix::from_row_slice(
            3,
            3,
            &[
                c(1.0, 2.0),
                c(0.5, -1.0),
                c(2.0, 0.0),
                c(-1.0, 0.3),
                c(0.0, 1.0),
                c(1.0, 1.0),
                c(0.2, 0.0),
                c(3.0, -2.0),
                c(-1.0, 0.5),
            ],
        );
        let (t, z, bal) = complex_schur(&a, false, Prec::F64).unwrap();
        assert_eq!((bal.ilo, bal.ihi), (1, 3));
        assert!((&z * &t * z.adjoint() - &a)
            .iter()
            .all(|e| e.norm() < 1e-12));
        assert!((z.adjoint() * &z - DMatrix::identity(3, 3))
            .iter()
            .all(|e| e.norm() < 1e-12));
        let trace: C = (0..3).map(|i| t[(i, i)]).sum();
        assert!((trace - c(0.0, 3.5)).norm() < 1e-12);
    }
}
