//! Non-symmetric eigenproblems behind jax's CPU custom calls: the Schur decomposition
//! (`?gees`) and eigenvalues with left / right eigenvectors (`?geev`), in LAPACK's output
//! conventions.
//!
//! Owns: the standard Schur form (real: [`crate::lapack_hqr`]'s double-shift QR, complex:
//! [`crate::lapack_zhqr`]'s single-shift QR, both after LAPACK's balancing and Hessenberg
//! reduction, so eigenvalues come in LAPACK's order), the eigenvectors of the
//! (quasi-)triangular factor as `?trevc` starts and back-substitutes them, back-transformed
//! (`Q x`, then `?gebak`), and `?geev`'s normalisation (unit 2-norm, the largest component
//! real: positive for complex matrices, with the sign of its real part for real ones).
//! `?lanv2` (standardising a real 2x2 block: equal diagonal, off-diagonals of opposite
//! sign for a complex pair, triangular otherwise) lives here for both.
//! Invariant: LAPACK's algorithms are followed step by step, so eigenvalue order, Schur
//! vectors and eigenvector signs match LAPACK's up to rounding (a near-tie between
//! rounding paths can still flip a deflation order; matrices of order >= 75, where
//! `?hseqr` switches to the multishift `?laqr0`, are computed with `?lahqr` anyway).

use crate::lapack::Scalar;
use crate::lapack_hqr::{gebak, schur, Balance, Prec};
use nalgebra::{DMatrix, DVector};
use num_complex::Complex;

type C = Complex<f64>;

/// A Schur decomposition `a = q t q^H` in LAPACK's standard form, its diagonal blocks
/// (start, size) and eigenvalues in diagonal order.
pub(crate) struct SchurForm<T: Scalar> {
    pub t: DMatrix<T>,
    pub q: DMatrix<T>,
    pub blocks: Vec<(usize, usize)>,
    pub w: Vec<C>,
}

/// `?lanv2`: the standardising rotation `(cs, sn)` of a real 2x2 block `[a b; c d]` and
/// the block after it, `[cs sn; -sn cs] [a b; c d] [cs -sn; sn cs]`.
pub(crate) fn lanv2(a: f64, b: f64, c: f64, d: f64, eps: f64) -> ([f64; 4], f64, f64) {
    let (mut a, mut b, mut c, mut d) = (a, b, c, d);
    let (mut cs, mut sn) = (1.0, 0.0);
    let sign = |x: f64, y: f64| if y >= 0.0 { x.abs() } else { -x.abs() };
    if c == 0.0 {
    } else if b == 0.0 {
        (cs, sn) = (0.0, 1.0);
        std::mem::swap(&mut a, &mut d);
        b = -c;
        c = 0.0;
    } else if a - d == 0.0 && sign(1.0, b) != sign(1.0, c) {
    } else {
        let temp = a - d;
        let mut p = 0.5 * temp;
        let bcmax = b.abs().max(c.abs());
        let bcmis = b.abs().min(c.abs()) * sign(1.0, b) * sign(1.0, c);
        let scale = p.abs().max(bcmax);
        let mut z = p / scale * p + bcmax / scale * bcmis;
        if z >= 4.0 * eps {
            // Real eigenvalues: make the block upper triangular.
            z = p + sign(scale.sqrt() * z.sqrt(), p);
            a = d + z;
            d -= bcmax / z * bcmis;
            let tau = c.hypot(z);
            (cs, sn) = (z / tau, c / tau);
            b -= c;
            c = 0.0;
        } else {
            // Complex (or nearly equal real) eigenvalues: make the diagonal equal.
            let sigma = b + c;
            let tau = sigma.hypot(temp);
            cs = (0.5 * (1.0 + sigma.abs() / tau)).sqrt();
            sn = -(p / (tau * cs)) * sign(1.0, sigma);
            let (aa, bb) = (a * cs + b * sn, -a * sn + b * cs);
            let (cc, dd) = (c * cs + d * sn, -c * sn + d * cs);
            a = aa * cs + cc * sn;
            b = bb * cs + dd * sn;
            c = -aa * sn + cc * cs;
            d = -bb * sn + dd * cs;
            let mid = 0.5 * (a + d);
            (a, d) = (mid, mid);
            if c != 0.0 {
                if b != 0.0 {
                    if sign(1.0, b) == sign(1.0, c) {
                        let (sab, sac) = (b.abs().sqrt(), c.abs().sqrt());
                        p = sign(sab * sac, c);
                        let tau = 1.0 / (b + c).abs().sqrt();
                        a = mid + p;
                        d = mid - p;
                        b -= c;
                        c = 0.0;
                        let (cs1, sn1) = (sab * tau, sac * tau);
                        (cs, sn) = (cs * cs1 - sn * sn1, cs * sn1 + sn * cs1);
                    }
                } else {
                    b = -c;
                    c = 0.0;
                    (cs, sn) = (-sn, cs);
                }
            }
        }
    }
    ([a, b, c, d], cs, sn)
}

/// Rotates rows / columns `k, k + 1` of `t` and columns of `q` by `(cs, sn)` (`?rot`).
pub(crate) fn rotate(t: &mut DMatrix<f64>, q: &mut DMatrix<f64>, k: usize, cs: f64, sn: f64) {
    let n = t.nrows();
    let rot = |x: f64, y: f64| (cs * x + sn * y, cs * y - sn * x);
    for j in k + 2..n {
        (t[(k, j)], t[(k + 1, j)]) = rot(t[(k, j)], t[(k + 1, j)]);
    }
    for i in 0..k {
        (t[(i, k)], t[(i, k + 1)]) = rot(t[(i, k)], t[(i, k + 1)]);
    }
    for i in 0..n {
        (q[(i, k)], q[(i, k + 1)]) = rot(q[(i, k)], q[(i, k + 1)]);
    }
}

/// LAPACK's real Schur form of `a` (balanced with scaling when `scale`, as `?geev`;
/// by permutations only otherwise, as `?gees`) and the balancing it used.
pub(crate) fn real_schur(
    a: &DMatrix<f64>,
    scale: bool,
    prec: Prec,
) -> Option<(SchurForm<f64>, Balance)> {
    let (t, q, wr, wi, bal) = schur(a, scale, prec)?;
    let n = t.nrows();
    let mut blocks = Vec::with_capacity(n);
    let mut k = 0;
    while k < n {
        let size = if wi[k] != 0.0 && k + 1 < n { 2 } else { 1 };
        blocks.push((k, size));
        k += size;
    }
    let w = wr.iter().zip(&wi).map(|(&r, &i)| C::new(r, i)).collect();
    Some((SchurForm { t, q, blocks, w }, bal))
}

/// LAPACK's (triangular) complex Schur form of `a` ([`crate::lapack_zhqr`]) and the
/// balancing it used (with scaling when `scale`).
pub(crate) fn complex_schur(
    a: &DMatrix<C>,
    scale: bool,
    prec: Prec,
) -> Option<(SchurForm<C>, Balance)> {
    let (t, q, bal) = crate::lapack_zhqr::complex_schur(a, scale, prec)?;
    let n = t.nrows();
    let w = (0..n).map(|i| t[(i, i)]).collect();
    Some((
        SchurForm {
            t,
            q,
            blocks: (0..n).map(|k| (k, 1)).collect(),
            w,
        },
        bal,
    ))
}

/// Solves the 1x1 or 2x2 system `m x = r` (complex), perturbing a singular pivot as
/// `?laln2` does so close eigenvalues still give a vector.
fn solve_small(m: &[[C; 2]; 2], r: [C; 2], size: usize, smin: f64) -> [C; 2] {
    let lift = |z: C| {
        if z.norm() < smin {
            C::new(smin, 0.0)
        } else {
            z
        }
    };
    if size == 1 {
        return [r[0] / lift(m[0][0]), C::new(0.0, 0.0)];
    }
    let det = lift(m[0][0] * m[1][1] - m[0][1] * m[1][0]);
    [
        (r[0] * m[1][1] - m[0][1] * r[1]) / det,
        (m[0][0] * r[1] - m[1][0] * r[0]) / det,
    ]
}

/// The eigenvectors (right: `t x = w x`; left: `y^H t = w y^H`) of the Schur factor for
/// the eigenvalue at diagonal position `j`, started as `?trevc` starts them.
fn trevc(s: &SchurForm<C>, j: usize, left: bool) -> DVector<C> {
    let n = s.t.nrows();
    let t = &s.t;
    let (bi, &(k, size)) = s
        .blocks
        .iter()
        .enumerate()
        .find(|(_, &(k, sz))| j >= k && j < k + sz)
        .expect("every position is in a block");
    let lam = s.w[j];
    let (i, zero) = (C::new(0.0, 1.0), C::new(0.0, 0.0));
    let mut x = DVector::from_element(n, zero);
    if size == 1 {
        x[k] = C::new(1.0, 0.0);
    } else {
        let (b, c, wi) = (t[(k, k + 1)], t[(k + 1, k)], lam.im);
        match (left, b.norm() >= c.norm()) {
            (false, true) => (x[k], x[k + 1]) = (C::new(1.0, 0.0), i * wi / b),
            (false, false) => (x[k], x[k + 1]) = (-wi / c, i),
            (true, true) => (x[k], x[k + 1]) = (wi / b, i),
            (true, false) => (x[k], x[k + 1]) = (C::new(1.0, 0.0), -i * wi / c),
        }
    }
    let smin = (f64::EPSILON * lam.norm()).max(f64::MIN_POSITIVE);
    let solve_block =
        |x: &mut DVector<C>, (s0, sz): (usize, usize), range: std::ops::Range<usize>| {
            let at = |r: usize, c: usize| if left { t[(c, r)].conj() } else { t[(r, c)] };
            let shift = if left { lam.conj() } else { lam };
            let mut r = [zero; 2];
            for (a, rv) in r.iter_mut().enumerate().take(sz) {
                *rv = -range
                    .clone()
                    .fold(zero, |acc, l| acc + at(s0 + a, l) * x[l]);
            }
            let mut m = [[zero; 2]; 2];
            for (a, row) in m.iter_mut().enumerate().take(sz) {
                for (b, e) in row.iter_mut().enumerate().take(sz) {
                    *e = at(s0 + a, s0 + b) - if a == b { shift } else { zero };
                }
            }
            let sol = solve_small(&m, r, sz, smin);
            x[s0] = sol[0];
            if sz == 2 {
                x[s0 + 1] = sol[1];
            }
        };
    if left {
        for &blk in &s.blocks[bi + 1..] {
            solve_block(&mut x, blk, k..blk.0);
        }
    } else {
        for &blk in s.blocks[..bi].iter().rev() {
            solve_block(&mut x, blk, blk.0 + blk.1..k + size);
        }
    }
    x
}

/// `?geev`'s normalisation: unit 2-norm, then the largest component made real
/// (positive if `positive`, else keeping the sign of its real part).
fn normalise(v: &mut DVector<C>, positive: bool) {
    let norm = v.norm();
    if norm > 0.0 {
        v.unscale_mut(norm);
    }
    let mut kmax = 0;
    for k in 1..v.len() {
        if v[k].norm_sqr() > v[kmax].norm_sqr() {
            kmax = k;
        }
    }
    let Some(&vk) = v.as_slice().get(kmax) else {
        return;
    };
    let mag = vk.norm();
    if mag == 0.0 {
        return;
    }
    let r = if positive || vk.re >= 0.0 { mag } else { -mag };
    let phase = vk.conj() / r;
    v.iter_mut().for_each(|z| *z *= phase);
    v[kmax] = C::new(v[kmax].re, 0.0);
}

/// Eigenvectors of `a` from its Schur form, one per column, in eigenvalue order; a real
/// matrix's conjugate pair shares one computation (the second is the conjugate). `bal`
/// is the balancing the Schur form was computed after, undone before normalising.
pub(crate) fn eigenvectors(
    s: &SchurForm<C>,
    real: bool,
    left: bool,
    bal: Option<&Balance>,
) -> DMatrix<C> {
    let n = s.t.nrows();
    let mut out = DMatrix::from_element(n, n, C::new(0.0, 0.0));
    let mut j = 0;
    while j < n {
        let v = &s.q * trevc(s, j, left);
        out.set_column(j, &v);
        if real && s.w[j].im > 0.0 && j + 1 < n {
            out.set_column(j + 1, &v.map(|z| z.conj()));
            j += 1;
        }
        j += 1;
    }
    if let Some(b) = bal {
        gebak(b, &mut out, left);
    }
    for mut col in out.column_iter_mut() {
        let mut v = col.clone_owned();
        normalise(&mut v, !real);
        col.copy_from(&v);
    }
    out
}

/// A real Schur form widened to complex, for [`eigenvectors`].
pub(crate) fn to_complex(s: &SchurForm<f64>) -> SchurForm<C> {
    SchurForm {
        t: s.t.map(|x| C::new(x, 0.0)),
        q: s.q.map(|x| C::new(x, 0.0)),
        blocks: s.blocks.clone(),
        w: s.w.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn residual(a: &DMatrix<f64>, w: &[C], v: &DMatrix<C>, left: bool) -> f64 {
        let ac = a.map(|x| C::new(x, 0.0));
        (0..w.len())
            .map(|j| {
                let col = v.column(j).into_owned();
                let r = if left {
                    ac.adjoint() * &col - col * w[j].conj()
                } else {
                    &ac * &col - col * w[j]
                };
                r.norm()
            })
            .fold(0.0, f64::max)
    }

    #[test]
    fn rotation_matrix_has_a_standard_complex_pair() {
        // [[0, -2], [1, 0]]: eigenvalues +-i sqrt 2, already equal diagonal.
        let a = DMatrix::from_row_slice(3, 3, &[0.0, -2.0, 1.0, 1.0, 0.0, 0.5, 0.0, 0.0, 3.0]);
        let (s, _) = real_schur(&a, false, Prec::F64).unwrap();
        let pair = s.w.iter().position(|w| w.im > 0.0).unwrap();
        assert!((s.w[pair].im - 2f64.sqrt()).abs() < 1e-12);
        assert_eq!(s.w[pair + 1], s.w[pair].conj());
        assert!(s
            .w
            .iter()
            .any(|w| (w.re - 3.0).abs() < 1e-12 && w.im == 0.0));
        let (k, _) = s.blocks.iter().copied().find(|&(_, sz)| sz == 2).unwrap();
        assert!((s.t[(k, k)] - s.t[(k + 1, k + 1)]).abs() < 1e-12);
        assert!(s.t[(k, k + 1)] * s.t[(k + 1, k)] < 0.0);
        assert!((&s.q * &s.t * s.q.transpose() - &a).abs().max() < 1e-12);
    }

    #[test]
    fn lanv2_splits_real_eigenvalues() {
        // [[1, 2], [3, 4]]: eigenvalues (5 +- sqrt 33) / 2, triangular after the rotation.
        let ([a, _, c, d], cs, sn) = lanv2(1.0, 2.0, 3.0, 4.0, f64::EPSILON);
        assert_eq!(c, 0.0);
        let (l1, l2) = ((5.0 + 33f64.sqrt()) / 2.0, (5.0 - 33f64.sqrt()) / 2.0);
        assert!(
            ((a - l1).abs() < 1e-12 && (d - l2).abs() < 1e-12)
                || ((a - l2).abs() < 1e-12 && (d - l1).abs() < 1e-12)
        );
        assert!((cs * cs + sn * sn - 1.0).abs() < 1e-12);
    }

    #[test]
    fn eigenvectors_satisfy_both_equations() {
        let a = DMatrix::from_row_slice(
            4,
            4,
            &[
                1.0, 2.0, 0.0, -1.0, -3.0, 0.5, 1.0, 2.0, 0.0, 1.0, 2.0, 0.3, 1.0, 0.0, -2.0, 1.0,
            ],
        );
        let (rs, bal) = real_schur(&a, true, Prec::F64).unwrap();
        let s = to_complex(&rs);
        for left in [false, true] {
            let v = eigenvectors(&s, true, left, Some(&bal));
            assert!(residual(&a, &s.w, &v, left) < 1e-10);
            for j in 0..4 {
                assert!((v.column(j).norm() - 1.0).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn complex_eigenvector_has_a_real_positive_largest_component() {
        let a = DMatrix::from_row_slice(
            2,
            2,
            &[
                C::new(2.0, 1.0),
                C::new(1.0, 0.0),
                C::new(0.0, 0.0),
                C::new(-1.0, 0.0),
            ],
        );
        let (s, bal) = complex_schur(&a, true, Prec::F64).unwrap();
        let v = eigenvectors(&s, false, false, Some(&bal));
        for j in 0..2 {
            let col = v.column(j);
            let k = (0..2)
                .max_by(|&x, &y| col[x].norm().total_cmp(&col[y].norm()))
                .unwrap();
            assert!(col[k].im == 0.0 && col[k].re > 0.0);
        }
    }
}
