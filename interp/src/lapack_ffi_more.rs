//! jax's typed-FFI LAPACK targets for reductions and non-symmetric eigenproblems:
//! `lapack_<p>gehrd_ffi`, `<p>sytrd` / `<p>hetrd`, `<p>gtsv`, `<p>gees`, `<p>geev` (`p`
//! one of `s d c z`), mapped onto [`crate::lapack_hess`] and [`crate::lapack_eig`].
//!
//! Owns: each target's operand and result lists as jax 0.10 lowers them (`num_batch_dims`
//! leading batch dims on every operand and result):
//! * `gehrd(a) -> (a, taus[n-1], info)`, options `low` / `high` (1-based `ilo` / `ihi`);
//! * `sytrd(a) -> (a, d[n], e[n-1], taus[n-1], info)`, option `uplo`;
//! * `gtsv(dl[n], d[n], du[n], b[n, k]) -> (dl, d, du, b, info)` (`dl[0]`, `du[n-1]`
//!   unused);
//! * real `gees(a) -> (t, vs, wr, wi, sdim, info)`, complex `(t, vs, w, sdim, info)`,
//!   options `mode` (`V`: Schur vectors) and `sort` (only `N`);
//! * real `geev(a) -> (wr, wi, vl, vr, info)` with complex eigenvector matrices (conjugate
//!   pairs unpacked, as jax's kernel does), complex `(w, vl, vr, info)`, options
//!   `compute_left` / `compute_right` (`V` / `N`).
//!
//! Invariants: results the options leave unspecified (vectors not asked for) are zeros;
//! `geev` of a matrix with a non-finite entry reports `info = -4` (jax's kernel does not
//! call LAPACK then) and a failed QR iteration `info = 1`, both with NaN results, which
//! jax replaces with NaN anyway.

use crate::dispatch::Ctx;
use crate::lapack::{read_mats, write_ints, write_mats, write_vecs, Scalar, R};
use crate::lapack_eig::{complex_schur, eigenvectors, real_schur, to_complex, SchurForm};
use crate::lapack_ffi::{lapack_opt, out};
use crate::lapack_hess::{gehrd, gtsv, sytrd};
use crate::lapack_hqr::{gebak, Balance, Prec};
use crate::tensor::Tensor;
use nalgebra::DMatrix;
use neuronc_ir::{Attr, ElemType, TensorType};
use num_complex::Complex;

type C = Complex<f64>;

/// The targets of this module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Gehrd,
    Sytrd,
    Gtsv,
    Gees,
    Geev,
}

/// The kind of a LAPACK routine name without its precision letter (`gehrd`, ...).
pub(crate) fn kind_of(base: &str) -> Option<Kind> {
    match base {
        "gehrd" => Some(Kind::Gehrd),
        "sytrd" | "hetrd" => Some(Kind::Sytrd),
        "gtsv" => Some(Kind::Gtsv),
        "gees" => Some(Kind::Gees),
        "geev" => Some(Kind::Geev),
        _ => None,
    }
}

/// An integer option of `mhlo.backend_config` (`low = 1 : i32`).
fn int_opt(cx: &Ctx<'_>, name: &str) -> Option<i64> {
    match cx.attrs().get("mhlo.backend_config") {
        Some(Attr::Dict(d)) => d.int(name),
        _ => None,
    }
}

/// Runs `kind` on the operands, producing the results `outs` describes.
pub(crate) fn run(kind: Kind, cx: &Ctx<'_>, ins: &[Tensor], outs: &[TensorType]) -> R<Vec<Tensor>> {
    let a = ins.first().ok_or("missing operand")?;
    let complex = a.elem().is_complex();
    match (kind, complex) {
        (Kind::Gtsv, false) => run_gtsv::<f64>(ins, outs),
        (Kind::Gtsv, true) => run_gtsv::<C>(ins, outs),
        (Kind::Gehrd, false) => run_gehrd::<f64>(cx, a, outs),
        (Kind::Gehrd, true) => run_gehrd::<C>(cx, a, outs),
        (Kind::Sytrd, false) => run_sytrd::<f64>(cx, a, outs),
        (Kind::Sytrd, true) => run_sytrd::<C>(cx, a, outs),
        (Kind::Gees, _) => run_gees(cx, a, complex, outs),
        (Kind::Geev, _) => run_geev(cx, a, complex, outs),
    }
}

fn run_gehrd<T: Scalar>(cx: &Ctx<'_>, a: &Tensor, outs: &[TensorType]) -> R<Vec<Tensor>> {
    let mut mats = read_mats::<T>(a)?;
    let mut taus = Vec::with_capacity(mats.len());
    for m in &mut mats {
        let n = m.nrows();
        if m.ncols() != n {
            return Err(format!("gehrd of a non-square {}x{} matrix", n, m.ncols()));
        }
        let ilo = int_opt(cx, "low").unwrap_or(1).clamp(1, n.max(1) as i64) as usize;
        let ihi = int_opt(cx, "high").unwrap_or(n as i64).clamp(0, n as i64) as usize;
        taus.push(gehrd(m, ilo - 1, ihi));
    }
    let info = vec![0; mats.len()];
    Ok(vec![
        write_mats(out(outs, 0)?, &mats)?,
        write_vecs(out(outs, 1)?, taus)?,
        write_ints(out(outs, 2)?, &info)?,
    ])
}

fn run_sytrd<T: Scalar>(cx: &Ctx<'_>, a: &Tensor, outs: &[TensorType]) -> R<Vec<Tensor>> {
    let lower = lapack_opt(cx, "uplo", b'L') == b'L';
    let mats = read_mats::<T>(a)?;
    let (mut packed, mut d, mut e, mut taus) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for m in &mats {
        if m.nrows() != m.ncols() {
            return Err(format!(
                "sytrd of a non-square {}x{} matrix",
                m.nrows(),
                m.ncols()
            ));
        }
        let t = sytrd(m, lower);
        packed.push(t.a);
        d.push(t.d);
        e.push(t.e);
        taus.push(t.taus);
    }
    let info = vec![0; mats.len()];
    Ok(vec![
        write_mats(out(outs, 0)?, &packed)?,
        write_vecs::<f64>(out(outs, 1)?, d)?,
        write_vecs::<f64>(out(outs, 2)?, e)?,
        write_vecs(out(outs, 3)?, taus)?,
        write_ints(out(outs, 4)?, &info)?,
    ])
}

fn run_gtsv<T: Scalar>(ins: &[Tensor], outs: &[TensorType]) -> R<Vec<Tensor>> {
    let [dl, d, du, b] = ins else {
        return Err(format!("gtsv takes 4 operands, got {}", ins.len()));
    };
    let mut bs = read_mats::<T>(b)?;
    let n = bs.first().map_or(0, |m| m.nrows());
    let (mut vl, mut vd, mut vu) = (T::read(dl)?, T::read(d)?, T::read(du)?);
    if [vl.len(), vd.len(), vu.len()]
        .iter()
        .any(|&l| l != n * bs.len())
    {
        return Err("gtsv diagonals do not match the right-hand side".into());
    }
    let mut info = Vec::with_capacity(bs.len());
    for (i, m) in bs.iter_mut().enumerate() {
        let r = i * n..(i + 1) * n;
        info.push(gtsv(&mut vl[r.clone()], &mut vd[r.clone()], &mut vu[r], m));
    }
    Ok(vec![
        T::write(out(outs, 0)?, vl)?,
        T::write(out(outs, 1)?, vd)?,
        T::write(out(outs, 2)?, vu)?,
        write_mats(out(outs, 3)?, &bs)?,
        write_ints(out(outs, 4)?, &info)?,
    ])
}

/// A Schur form of one matrix (and, for a real one, the balancing LAPACK applied first:
/// with scaling for `geev`, permutations only for `gees`), or `None` when the input is
/// not finite or the iteration did not converge.
fn schur_of(
    m: &DMatrix<C>,
    complex: bool,
    scale: bool,
    prec: Prec,
) -> Option<(SchurForm<C>, Option<Balance>)> {
    if m.iter().any(|z| !z.re.is_finite() || !z.im.is_finite()) {
        return None;
    }
    if complex {
        complex_schur(m, scale, prec).map(|(s, b)| (s, Some(b)))
    } else {
        real_schur(&m.map(|z| z.re), scale, prec).map(|(s, b)| (to_complex(&s), Some(b)))
    }
}

/// The precision the LAPACK routine for `a`'s element type runs in.
fn prec_of(a: &Tensor) -> Prec {
    match a.elem() {
        ElemType::F32 | ElemType::Complex64 => Prec::F32,
        _ => Prec::F64,
    }
}

fn check_square(mats: &[DMatrix<C>]) -> R<usize> {
    let n = mats.first().map_or(0, |m| m.nrows());
    match mats.iter().find(|m| m.nrows() != m.ncols()) {
        Some(m) => Err(format!("a non-square {}x{} matrix", m.nrows(), m.ncols())),
        None => Ok(n),
    }
}

/// Writes complex matrices as a complex result, or their real parts as a real one.
fn write_c(out: &TensorType, mats: &[DMatrix<C>], complex: bool) -> R<Tensor> {
    if complex {
        write_mats(out, mats)
    } else {
        write_mats(
            out,
            &mats.iter().map(|m| m.map(|z| z.re)).collect::<Vec<_>>(),
        )
    }
}

fn run_gees(cx: &Ctx<'_>, a: &Tensor, complex: bool, outs: &[TensorType]) -> R<Vec<Tensor>> {
    if lapack_opt(cx, "sort", b'N') != b'N' {
        return Err("gees with eigenvalue sorting is not supported".into());
    }
    let vectors = lapack_opt(cx, "mode", b'V') == b'V';
    let mats = read_c(a, complex)?;
    let n = check_square(&mats)?;
    let nan = DMatrix::from_element(n, n, C::new(f64::NAN, f64::NAN));
    let (mut ts, mut qs, mut ws, mut info) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for m in &mats {
        match schur_of(m, complex, false, prec_of(a)) {
            Some((s, bal)) => {
                let mut q = s.q;
                if let Some(b) = &bal {
                    gebak(b, &mut q, false);
                }
                ts.push(s.t);
                qs.push(if vectors { q } else { DMatrix::zeros(n, n) });
                ws.push(s.w);
                info.push(0);
            }
            None => {
                ts.push(nan.clone());
                qs.push(nan.clone());
                ws.push(vec![C::new(f64::NAN, f64::NAN); n]);
                info.push(1);
            }
        }
    }
    let sdim = vec![0; mats.len()];
    let mut res = vec![
        write_c(out(outs, 0)?, &ts, complex)?,
        write_c(out(outs, 1)?, &qs, complex)?,
    ];
    res.extend(eigenvalue_results(outs, 2, ws, complex)?);
    let k = res.len();
    res.push(write_ints(out(outs, k)?, &sdim)?);
    res.push(write_ints(out(outs, k + 1)?, &info)?);
    Ok(res)
}

/// Eigenvalues as results `first..`: `(wr, wi)` for a real operand, `w` for a complex one.
fn eigenvalue_results(
    outs: &[TensorType],
    first: usize,
    ws: Vec<Vec<C>>,
    complex: bool,
) -> R<Vec<Tensor>> {
    if complex {
        return Ok(vec![write_vecs(out(outs, first)?, ws)?]);
    }
    let re = ws
        .iter()
        .map(|w| w.iter().map(|z| z.re).collect())
        .collect();
    let im = ws
        .iter()
        .map(|w| w.iter().map(|z| z.im).collect())
        .collect();
    Ok(vec![
        write_vecs::<f64>(out(outs, first)?, re)?,
        write_vecs::<f64>(out(outs, first + 1)?, im)?,
    ])
}

fn read_c(a: &Tensor, complex: bool) -> R<Vec<DMatrix<C>>> {
    if complex {
        read_mats::<C>(a)
    } else {
        Ok(read_mats::<f64>(a)?
            .iter()
            .map(|m| m.map(|x| C::new(x, 0.0)))
            .collect())
    }
}

fn run_geev(cx: &Ctx<'_>, a: &Tensor, complex: bool, outs: &[TensorType]) -> R<Vec<Tensor>> {
    let left = lapack_opt(cx, "compute_left", b'N') == b'V';
    let right = lapack_opt(cx, "compute_right", b'N') == b'V';
    let mats = read_c(a, complex)?;
    let n = check_square(&mats)?;
    let nan = DMatrix::from_element(n, n, C::new(f64::NAN, f64::NAN));
    let (mut ws, mut vls, mut vrs, mut info) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for m in &mats {
        let finite = m.iter().all(|z| z.re.is_finite() && z.im.is_finite());
        match schur_of(m, complex, true, prec_of(a)) {
            Some((s, bal)) => {
                let vecs = |on: bool, l: bool| {
                    if on {
                        eigenvectors(&s, !complex, l, bal.as_ref())
                    } else {
                        DMatrix::zeros(n, n)
                    }
                };
                vls.push(vecs(left, true));
                vrs.push(vecs(right, false));
                ws.push(s.w);
                info.push(0);
            }
            None => {
                vls.push(nan.clone());
                vrs.push(nan.clone());
                ws.push(vec![C::new(f64::NAN, f64::NAN); n]);
                info.push(if finite { 1 } else { -4 });
            }
        }
    }
    let mut res = eigenvalue_results(outs, 0, ws, complex)?;
    let k = res.len();
    res.push(write_mats(out(outs, k)?, &vls)?);
    res.push(write_mats(out(outs, k + 1)?, &vrs)?);
    res.push(write_ints(out(outs, k + 2)?, &info)?);
    Ok(res)
}
