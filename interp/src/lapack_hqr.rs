//! The real Schur decomposition as LAPACK computes it for `?gees` / `?geev`: balancing
//! (`?gebal`), Hessenberg reduction (`?gehrd` + `?orghr`), the double-shift QR iteration
//! of `?lahqr` (what `?hseqr` runs below its crossover size), and the back-transformation
//! of eigenvectors (`?gebak`).
//!
//! Owns: reproducing LAPACK's *order* of eigenvalues along the Schur diagonal and the
//! signs of its Schur vectors, which a program reading `eig` / `schur` results directly
//! depends on: both follow from the exact sequence of shifts, deflations and reflectors,
//! so the algorithm is followed step by step (Francis double shifts from the trailing
//! 2x2 block, exceptional shifts every 10 iterations without a deflation, the Ahues -
//! Tisseur deflation test, `?lanv2` standardisation of converged 2x2 blocks).
//! Invariants: indices inside the iteration are LAPACK's 1-based ones (the `h!` / `z!`
//! macros translate), so each line can be checked against the published algorithm;
//! failure to converge within `30 max(10, n)` iterations per eigenvalue is `None`.

use crate::lapack::Scalar;
use crate::lapack_eig::{lanv2, rotate};
use crate::lapack_hess::gehrd;
use nalgebra::DMatrix;

/// The machine constants of the precision LAPACK ran in (`s` / `c` routines: f32, `d` /
/// `z`: f64). The arithmetic here is f64 either way; the deflation and standardisation
/// tests use these, so the iteration stops after the same sweeps as LAPACK's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Prec {
    pub ulp: f64,
    pub safmin: f64,
}

impl Prec {
    pub(crate) const F64: Prec = Prec {
        ulp: f64::EPSILON,
        safmin: f64::MIN_POSITIVE,
    };
    pub(crate) const F32: Prec = Prec {
        ulp: f32::EPSILON as f64,
        safmin: f32::MIN_POSITIVE as f64,
    };
}

/// What `?gebal` did: rows / columns `ilo..=ihi` (1-based) form the balanced block,
/// `scale[i]` is the diagonal scaling inside it and the exchanged index outside it.
pub(crate) struct Balance {
    pub ilo: usize,
    pub ihi: usize,
    pub scale: Vec<f64>,
}

fn swap_rc<T: Scalar>(a: &mut DMatrix<T>, i: usize, j: usize, rows_to: usize, cols_from: usize) {
    // Columns i and j over rows 1..=rows_to, rows i and j over columns cols_from..=n.
    if i == j {
        return;
    }
    let n = a.nrows();
    for r in 0..rows_to {
        a.swap((r, i - 1), (r, j - 1));
    }
    for c in cols_from - 1..n {
        a.swap((i - 1, c), (j - 1, c));
    }
}

/// `?gebal` (`job = 'B'` when `scale`, else `'P'`) in place.
pub(crate) fn gebal<T: Scalar>(a: &mut DMatrix<T>, scale: bool) -> Balance {
    let n = a.nrows();
    let mut sc = vec![1.0; n];
    if n == 0 {
        return Balance {
            ilo: 1,
            ihi: 0,
            scale: sc,
        };
    }
    let (mut k, mut l) = (1usize, n);
    // Rows isolating an eigenvalue go to the bottom, columns to the left; each search
    // restarts after an exchange.
    let zero = T::zero();
    while let Some(i) = (1..=l)
        .rev()
        .find(|&i| (1..=l).all(|j| i == j || a[(i - 1, j - 1)] == zero))
    {
        sc[l - 1] = i as f64;
        swap_rc(a, i, l, l, k);
        if l == 1 {
            return Balance {
                ilo: 1,
                ihi: 1,
                scale: sc,
            };
        }
        l -= 1;
    }
    while let Some(j) = (k..=l).find(|&j| (k..=l).all(|i| i == j || a[(i - 1, j - 1)] == zero)) {
        sc[k - 1] = j as f64;
        swap_rc(a, j, k, l, k);
        k += 1;
    }
    for s in &mut sc[k - 1..l] {
        *s = 1.0;
    }
    if scale {
        scale_block(a, k, l, &mut sc);
    }
    Balance {
        ilo: k,
        ihi: l,
        scale: sc,
    }
}

/// `?gebal`'s scaling loop on rows / columns `k..=l`: powers of 2 that bring each row's
/// and column's 2-norms within a factor of 2, while they reduce their sum by 5%.
fn scale_block<T: Scalar>(a: &mut DMatrix<T>, k: usize, l: usize, sc: &mut [f64]) {
    let n = a.nrows();
    let radix = 2.0;
    let sfmin1 = f64::MIN_POSITIVE / (f64::EPSILON * 0.5);
    let sfmax1 = 1.0 / sfmin1;
    let sfmin2 = sfmin1 * radix;
    let sfmax2 = 1.0 / sfmin2;
    let mut noconv = true;
    while noconv {
        noconv = false;
        for i in k..=l {
            let mut c = (k..=l)
                .map(|r| a[(r - 1, i - 1)].modulus_squared())
                .sum::<f64>()
                .sqrt();
            let mut r = (k..=l)
                .map(|cc| a[(i - 1, cc - 1)].modulus_squared())
                .sum::<f64>()
                .sqrt();
            let mut ca = (1..=l)
                .map(|rr| a[(rr - 1, i - 1)].modulus())
                .fold(0.0, f64::max);
            let mut ra = (k..=n)
                .map(|cc| a[(i - 1, cc - 1)].modulus())
                .fold(0.0, f64::max);
            if c == 0.0 || r == 0.0 {
                continue;
            }
            if !(c + ca + r + ra).is_finite() {
                return;
            }
            let mut g = r / radix;
            let mut f: f64 = 1.0;
            let s = c + r;
            while c < g && f.max(c).max(ca) < sfmax2 && r.min(g).min(ra) > sfmin2 {
                f *= radix;
                c *= radix;
                ca *= radix;
                r /= radix;
                g /= radix;
                ra /= radix;
            }
            g = c / radix;
            while g >= r && r.max(ra) < sfmax2 && f.min(c).min(g).min(ca) > sfmin2 {
                f /= radix;
                c /= radix;
                g /= radix;
                ca /= radix;
                r *= radix;
                ra *= radix;
            }
            if c + r >= 0.95 * s
                || (f < 1.0 && sc[i - 1] < 1.0 && f * sc[i - 1] <= sfmin1)
                || (f > 1.0 && sc[i - 1] > 1.0 && sc[i - 1] >= sfmax1 / f)
            {
                continue;
            }
            sc[i - 1] *= f;
            noconv = true;
            for cc in k..=n {
                a[(i - 1, cc - 1)] = a[(i - 1, cc - 1)].unscale(f);
            }
            for rr in 1..=l {
                a[(rr - 1, i - 1)] = a[(rr - 1, i - 1)].scale(f);
            }
        }
    }
}

/// `?gebak` on eigenvectors (one per column of `v`): undo the scaling (`1 / scale` for
/// left vectors) and the exchanges.
pub(crate) fn gebak(b: &Balance, v: &mut DMatrix<num_complex::Complex<f64>>, left: bool) {
    let n = v.nrows();
    for i in b.ilo..=b.ihi.min(n) {
        let s = if left {
            1.0 / b.scale[i - 1]
        } else {
            b.scale[i - 1]
        };
        v.row_mut(i - 1).iter_mut().for_each(|z| *z *= s);
    }
    for ii in 1..=n {
        if ii >= b.ilo && ii <= b.ihi {
            continue;
        }
        let i = if ii < b.ilo { b.ilo - ii } else { ii };
        let k = b.scale[i - 1] as usize;
        if k != i && k >= 1 {
            v.swap_rows(i - 1, k - 1);
        }
    }
}

/// `?gehrd` + `?orghr` / `?unghr` on the balanced block: `(H, Q)` with `a = Q H Q^H`.
pub(crate) fn hessenberg<T: Scalar>(
    a: &DMatrix<T>,
    ilo: usize,
    ihi: usize,
) -> (DMatrix<T>, DMatrix<T>) {
    let n = a.nrows();
    let mut h = a.clone();
    let taus = gehrd(&mut h, ilo - 1, ihi);
    let mut q = DMatrix::identity(n, n);
    for i in (ilo - 1..ihi.saturating_sub(1)).rev() {
        let v: Vec<T> = std::iter::once(T::one())
            .chain((i + 2..ihi).map(|r| h[(r, i)]))
            .collect();
        for j in i + 1..ihi {
            let w = (0..v.len()).fold(T::zero(), |s, k| s + v[k].conjugate() * q[(i + 1 + k, j)]);
            for (k, &vk) in v.iter().enumerate() {
                q[(i + 1 + k, j)] -= taus[i] * vk * w;
            }
        }
    }
    for j in 0..n {
        for i in j + 2..n {
            h[(i, j)] = T::zero();
        }
    }
    (h, q)
}

/// `?larfg` on a vector of 2 or 3: returns `tau`, `v[0]` becomes `beta`, `v[1..]` the tail.
fn larfg3(v: &mut [f64]) -> f64 {
    let xnorm = v[1..].iter().map(|x| x * x).sum::<f64>().sqrt();
    if xnorm == 0.0 {
        return 0.0;
    }
    let beta = -v[0].hypot(xnorm).copysign(v[0]);
    let tau = (beta - v[0]) / beta;
    let scale = 1.0 / (v[0] - beta);
    v[1..].iter_mut().for_each(|x| *x *= scale);
    v[0] = beta;
    tau
}

/// `?lahqr` with `wantt` and `wantz` on the whole matrix: `h` (upper Hessenberg) becomes
/// the standard real Schur form, `z` accumulates the transformations. Returns `(wr, wi)`.
pub(crate) fn lahqr(
    h: &mut DMatrix<f64>,
    z: &mut DMatrix<f64>,
    ilo: usize,
    ihi: usize,
    prec: Prec,
) -> Option<(Vec<f64>, Vec<f64>)> {
    let n = h.nrows();
    let (mut wr, mut wi) = (vec![0.0; n], vec![0.0; n]);
    for i in (1..ilo).chain(ihi + 1..=n) {
        wr[i - 1] = h[(i - 1, i - 1)];
    }
    if n == 0 || ilo > ihi {
        return Some((wr, wi));
    }
    if ilo == ihi {
        wr[ilo - 1] = h[(ilo - 1, ilo - 1)];
        return Some((wr, wi));
    }
    macro_rules! h {
        ($i:expr, $j:expr) => {
            h[($i - 1, $j - 1)]
        };
    }
    let nh = ihi - ilo + 1;
    let ulp = prec.ulp;
    let smlnum = prec.safmin * (nh as f64 / ulp);
    let (i1, i2) = (1usize, n);
    let itmax = 30 * nh.max(10);
    let mut kdefl = 0usize;
    let mut i = ihi;
    while i >= ilo {
        let mut l = ilo;
        let mut converged = false;
        for _its in 0..=itmax {
            // A single small sub-diagonal element.
            let mut k = i;
            while k > l {
                if h!(k, k - 1).abs() <= smlnum {
                    break;
                }
                let mut tst = h!(k - 1, k - 1).abs() + h!(k, k).abs();
                if tst == 0.0 {
                    if k >= ilo + 2 {
                        tst += h!(k - 1, k - 2).abs();
                    }
                    if k < ihi {
                        tst += h!(k + 1, k).abs();
                    }
                }
                if h!(k, k - 1).abs() <= ulp * tst {
                    let ab = h!(k, k - 1).abs().max(h!(k - 1, k).abs());
                    let ba = h!(k, k - 1).abs().min(h!(k - 1, k).abs());
                    let aa = h!(k, k).abs().max((h!(k - 1, k - 1) - h!(k, k)).abs());
                    let bb = h!(k, k).abs().min((h!(k - 1, k - 1) - h!(k, k)).abs());
                    let s = aa + ab;
                    if ba * (ab / s) <= smlnum.max(ulp * (bb * (aa / s))) {
                        break;
                    }
                }
                k -= 1;
            }
            l = k;
            if l > ilo {
                h!(l, l - 1) = 0.0;
            }
            if l + 1 >= i {
                converged = true;
                break;
            }
            kdefl += 1;
            let (h11, h12, h21, h22) = if kdefl.is_multiple_of(20) {
                let s = h!(i, i - 1).abs() + h!(i - 1, i - 2).abs();
                let h11 = 0.75 * s + h!(i, i);
                (h11, -0.4375 * s, s, h11)
            } else if kdefl.is_multiple_of(10) {
                let s = h!(l + 1, l).abs() + h!(l + 2, l + 1).abs();
                let h11 = 0.75 * s + h!(l, l);
                (h11, -0.4375 * s, s, h11)
            } else {
                (h!(i - 1, i - 1), h!(i - 1, i), h!(i, i - 1), h!(i, i))
            };
            let (rt1r, rt1i, rt2r, rt2i) = shifts(h11, h12, h21, h22);
            // Two consecutive small sub-diagonal elements.
            let mut v = [0.0f64; 3];
            let mut m = i - 2;
            loop {
                let s = (h!(m, m) - rt2r).abs() + rt2i.abs() + h!(m + 1, m).abs();
                let h21s = h!(m + 1, m) / s;
                v[0] = h21s * h!(m, m + 1) + (h!(m, m) - rt1r) * ((h!(m, m) - rt2r) / s)
                    - rt1i * (rt2i / s);
                v[1] = h21s * (h!(m, m) + h!(m + 1, m + 1) - rt1r - rt2r);
                v[2] = h21s * h!(m + 2, m + 1);
                let s = v[0].abs() + v[1].abs() + v[2].abs();
                v.iter_mut().for_each(|x| *x /= s);
                if m == l {
                    break;
                }
                let h00 = h!(m, m - 1).abs() * (v[1].abs() + v[2].abs());
                let h01 =
                    v[0].abs() * (h!(m - 1, m - 1).abs() + h!(m, m).abs() + h!(m + 1, m + 1).abs());
                if h00 <= ulp * h01 {
                    break;
                }
                m -= 1;
            }
            // The double-shift QR sweep.
            for k in m..i {
                let nr = 3.min(i - k + 1);
                if k > m {
                    for (r, vr) in v.iter_mut().enumerate().take(nr) {
                        *vr = h!(k + r, k - 1);
                    }
                }
                let t1 = larfg3(&mut v[..nr]);
                if k > m {
                    h!(k, k - 1) = v[0];
                    h!(k + 1, k - 1) = 0.0;
                    if k < i - 1 {
                        h!(k + 2, k - 1) = 0.0;
                    }
                } else if m > l {
                    h!(k, k - 1) *= 1.0 - t1;
                }
                let (v2, v3) = (v[1], if nr == 3 { v[2] } else { 0.0 });
                let (t2, t3) = (t1 * v2, t1 * v3);
                for j in k..=i2 {
                    let mut sum = h!(k, j) + v2 * h!(k + 1, j);
                    if nr == 3 {
                        sum += v3 * h!(k + 2, j);
                        h!(k + 2, j) -= sum * t3;
                    }
                    h!(k, j) -= sum * t1;
                    h!(k + 1, j) -= sum * t2;
                }
                let top = if nr == 3 { (k + 3).min(i) } else { i };
                for j in i1..=top {
                    let mut sum = h!(j, k) + v2 * h!(j, k + 1);
                    if nr == 3 {
                        sum += v3 * h!(j, k + 2);
                        h!(j, k + 2) -= sum * t3;
                    }
                    h!(j, k) -= sum * t1;
                    h!(j, k + 1) -= sum * t2;
                }
                for j in ilo..=ihi {
                    let mut sum = z[(j - 1, k - 1)] + v2 * z[(j - 1, k)];
                    if nr == 3 {
                        sum += v3 * z[(j - 1, k + 1)];
                        z[(j - 1, k + 1)] -= sum * t3;
                    }
                    z[(j - 1, k - 1)] -= sum * t1;
                    z[(j - 1, k)] -= sum * t2;
                }
            }
        }
        if !converged {
            return None;
        }
        if l == i {
            wr[i - 1] = h!(i, i);
            wi[i - 1] = 0.0;
        } else {
            let ([a, b, c, d], cs, sn) = lanv2(
                h!(i - 1, i - 1),
                h!(i - 1, i),
                h!(i, i - 1),
                h!(i, i),
                prec.ulp,
            );
            rotate(h, z, i - 2, cs, sn);
            (h!(i - 1, i - 1), h!(i - 1, i), h!(i, i - 1), h!(i, i)) = (a, b, c, d);
            let im = if c == 0.0 {
                0.0
            } else {
                b.abs().sqrt() * c.abs().sqrt()
            };
            (wr[i - 2], wi[i - 2], wr[i - 1], wi[i - 1]) = (a, im, d, -im);
        }
        kdefl = 0;
        if l < 2 {
            break;
        }
        i = l - 1;
    }
    Some((wr, wi))
}

/// The two shifts of `?lahqr` from a 2x2 block (one real shift used twice when both are
/// real: the one closer to `h22`).
fn shifts(h11: f64, h12: f64, h21: f64, h22: f64) -> (f64, f64, f64, f64) {
    let s = h11.abs() + h12.abs() + h21.abs() + h22.abs();
    if s == 0.0 {
        return (0.0, 0.0, 0.0, 0.0);
    }
    let (h11, h12, h21, h22) = (h11 / s, h12 / s, h21 / s, h22 / s);
    let tr = (h11 + h22) / 2.0;
    let det = (h11 - tr) * (h22 - tr) - h12 * h21;
    let rtdisc = det.abs().sqrt();
    if det >= 0.0 {
        return (tr * s, rtdisc * s, tr * s, -rtdisc * s);
    }
    let (r1, r2) = (tr + rtdisc, tr - rtdisc);
    let r = if (r1 - h22).abs() <= (r2 - h22).abs() {
        r1 * s
    } else {
        r2 * s
    };
    (r, 0.0, r, 0.0)
}

/// `(t, z, wr, wi, balance)` of [`schur`].
pub(crate) type SchurParts = (DMatrix<f64>, DMatrix<f64>, Vec<f64>, Vec<f64>, Balance);

/// LAPACK's real Schur form of `a` after balancing: `(t, z, wr, wi, balance)` with
/// `B = z t z^T` for the balanced `B` (`scale`: `?geev`'s `'B'`, else `?gees`' `'P'`).
pub(crate) fn schur(a: &DMatrix<f64>, scale: bool, prec: Prec) -> Option<SchurParts> {
    let mut b = a.clone();
    let bal = gebal(&mut b, scale);
    let (mut h, mut z) = hessenberg(&b, bal.ilo, bal.ihi);
    let (wr, wi) = lahqr(&mut h, &mut z, bal.ilo, bal.ihi, prec)?;
    Some((h, z, wr, wi, bal))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schur_of_a_rotation_block_and_a_real_eigenvalue() {
        let a = DMatrix::from_row_slice(3, 3, &[1.0, 2.0, 0.5, -3.0, 1.0, 0.2, 0.1, 0.4, 4.0]);
        let (t, z, wr, wi, bal) = schur(&a, false, Prec::F64).unwrap();
        assert_eq!((bal.ilo, bal.ihi), (1, 3));
        assert!((&z * &t * z.transpose() - &a).abs().max() < 1e-12);
        // Eigenvalues: trace and determinant are preserved.
        assert!((wr.iter().sum::<f64>() - 6.0).abs() < 1e-12);
        assert_eq!(wi.iter().filter(|&&x| x != 0.0).count(), 2);
        assert!(t[(2, 0)] == 0.0 && t[(2, 1)].abs() + t[(1, 0)].abs() > 0.0);
    }

    #[test]
    fn gebal_isolates_a_triangular_matrix() {
        // Upper triangular: every eigenvalue is isolated by permutations.
        let mut a = DMatrix::from_row_slice(3, 3, &[1.0, 5.0, 6.0, 0.0, 2.0, 7.0, 0.0, 0.0, 3.0]);
        let b = gebal(&mut a, true);
        assert!(b.ihi <= b.ilo);
        let (t, _, wr, wi, _) = schur(
            &DMatrix::from_row_slice(3, 3, &[1.0, 5.0, 6.0, 0.0, 2.0, 7.0, 0.0, 0.0, 3.0]),
            true,
            Prec::F64,
        )
        .unwrap();
        assert_eq!(wr, vec![1.0, 2.0, 3.0]);
        assert!(wi.iter().all(|&x| x == 0.0));
        assert_eq!(t[(0, 0)], 1.0);
    }

    #[test]
    fn scaling_balances_a_graded_matrix() {
        let mut a = DMatrix::from_row_slice(2, 2, &[1.0, 1024.0, 1.0 / 1024.0, 1.0]);
        let b = gebal(&mut a, true);
        // Powers of 2 until the row and column norms are within a factor of 2: the
        // off-diagonal pair 1024, 1/1024 becomes 2, 1/2 (a similarity: the product stays).
        assert!(b.scale.iter().any(|&s| s != 1.0));
        assert_eq!((a[(0, 1)], a[(1, 0)]), (2.0, 0.5));
    }
}
