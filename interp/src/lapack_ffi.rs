//! The linear-algebra custom calls of real traces, mapped onto the kernels of
//! [`crate::lapack`] and [`crate::lapack_spectral`].
//!
//! Owns: jax's typed-FFI LAPACK targets on CPU (`lapack_<p><name>_ffi`, `p` one of
//! `s d c z`: `getrf`, `geqrf`, `orgqr` / `ungqr`, `syevd` / `heevd`, `gesdd` / `gesvd`;
//! and, through [`crate::lapack_ffi_more`], `gehrd`, `sytrd` / `hetrd`, `gtsv`, `gees`,
//! `geev`; options are `ui8` characters in the `mhlo.backend_config` dictionary) and torch_xla's
//! `Eigh` and XLA's TPU `LuDecomposition` (0-based pivots and the permutation) (`Eigh`:
//! operand `[..., n, n]`, one tuple result `(v, w)`, `backend_config =
//! "lower,sort_eigenvalues,max_iter,tol"`). Operands carry any number of leading batch
//! dims; results follow jax's shapes (`info` per matrix, pivots / `tau`s / eigenvalues /
//! singular values `[..., k]`). XLA's own `Qr` (a tuple `(packed, taus)`, as `?geqrf`)
//! and `ProductOfElementaryHouseholderReflectors` (as `?orgqr`), which torch_xla emits
//! for `inv` / `slogdet`, share the LAPACK kernels: XLA's expanders use the same
//! reflectors. The computing type follows the operand: complex operands compute in
//! complex f64, real ones in f64. `Eigh` always returns ascending eigenvalues (with
//! `sort_eigenvalues = 0` XLA keeps its own order, which no program can rely on).
//! Invariant: a target not listed here returns `None`, so the caller reports it.

use crate::dispatch::Ctx;
use crate::eval::{Res, Val};
use crate::lapack::{
    geqrf, getrf, mat_dims, orgqr, read_mats, write_ints, write_mats, write_vecs, Scalar,
};
use crate::lapack_spectral::{eigh, svd, SvdMode};
use crate::tensor::Tensor;
use nalgebra::DMatrix;
use neuronc_ir::{Attr, TensorType, Type};
use num_complex::Complex;

/// A character option of jax's LAPACK `mhlo.backend_config` (`uplo = 76 : ui8` is 'L').
pub(crate) fn lapack_opt(cx: &Ctx<'_>, name: &str, default: u8) -> u8 {
    match cx.attrs().get("mhlo.backend_config") {
        Some(Attr::Dict(d)) => d.int(name).map_or(default, |v| v as u8),
        _ => default,
    }
}

/// The factorization a target names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Getrf,
    /// XLA's TPU `LuDecomposition`: `(lu, pivots, permutation)`, both 0-based.
    XlaLu,
    Geqrf,
    Orgqr,
    Syevd,
    Gesdd,
    TorchEigh,
    /// Handled by [`crate::lapack_ffi_more`].
    More(crate::lapack_ffi_more::Kind),
}

fn kind_of(target: &str) -> Option<Kind> {
    match target {
        "Eigh" => return Some(Kind::TorchEigh),
        "Qr" => return Some(Kind::Geqrf),
        "LuDecomposition" => return Some(Kind::XlaLu),
        "ProductOfElementaryHouseholderReflectors" => return Some(Kind::Orgqr),
        _ => {}
    }
    let name = target.strip_prefix("lapack_")?.strip_suffix("_ffi")?;
    let (p, base) = name.split_at_checked(1)?;
    if !matches!(p, "s" | "d" | "c" | "z") {
        return None;
    }
    match base {
        "getrf" => Some(Kind::Getrf),
        "geqrf" => Some(Kind::Geqrf),
        "orgqr" | "ungqr" => Some(Kind::Orgqr),
        "syevd" | "heevd" => Some(Kind::Syevd),
        "gesdd" | "gesvd" => Some(Kind::Gesdd),
        other => crate::lapack_ffi_more::kind_of(other).map(Kind::More),
    }
}

/// Runs `target` if it is one of ours; `None` otherwise.
pub(crate) fn exec(target: &str, cx: &Ctx<'_>, ins: &[Tensor]) -> Option<Res<Vec<Val>>> {
    kind_of(target).map(|kind| exec_kind(kind, target, cx, ins))
}

fn exec_kind(kind: Kind, target: &str, cx: &Ctx<'_>, ins: &[Tensor]) -> Res<Vec<Val>> {
    let a = ins
        .first()
        .ok_or_else(|| cx.err(format!("@{target}: missing operand")))?;
    let outs = result_types(cx)?;
    let vals = if let Kind::More(k) = kind {
        crate::lapack_ffi_more::run(k, cx, ins, &outs)
    } else if a.elem().is_complex() {
        run::<Complex<f64>>(kind, cx, ins, &outs)
    } else {
        run::<f64>(kind, cx, ins, &outs)
    };
    let vals = cx.wrap(vals.map_err(|e| format!("@{target}: {e}")))?;
    Ok(if tuple_result(cx) {
        vec![Val::Tuple(vals.into_iter().map(Val::T).collect())]
    } else {
        vals.into_iter().map(Val::T).collect()
    })
}

/// Whether the op has one tuple result (XLA's `Eigh` and `Qr` as torch_xla prints them).
fn tuple_result(cx: &Ctx<'_>) -> bool {
    matches!(cx.op.results.as_slice(), [v] if matches!(cx.m.ty(cx.m.value_type(*v)), Type::Tuple(_)))
}

/// The result tensor types, with a single tuple result (torch_xla's form) flattened.
fn result_types(cx: &Ctx<'_>) -> Res<Vec<TensorType>> {
    let tys: Vec<&Type> = cx
        .op
        .results
        .iter()
        .map(|&v| cx.m.ty(cx.m.value_type(v)))
        .collect();
    let ids: Vec<&Type> = match tys.as_slice() {
        [Type::Tuple(elems)] => elems.iter().map(|&t| cx.m.ty(t)).collect(),
        _ => tys,
    };
    ids.into_iter()
        .map(|t| match t {
            Type::Tensor(tt) => Ok(tt.clone()),
            _ => Err(cx.err("linear-algebra results must be tensors")),
        })
        .collect()
}

pub(crate) fn out(outs: &[TensorType], i: usize) -> Result<&TensorType, String> {
    outs.get(i).ok_or_else(|| format!("missing result {i}"))
}

fn run<T: Scalar>(
    kind: Kind,
    cx: &Ctx<'_>,
    ins: &[Tensor],
    outs: &[TensorType],
) -> Result<Vec<Tensor>, String> {
    let mats = read_mats::<T>(&ins[0])?;
    match kind {
        Kind::Getrf => run_getrf(mats, outs),
        Kind::XlaLu => run_xla_lu(mats, outs),
        Kind::Geqrf => run_geqrf(mats, outs),
        Kind::Orgqr => run_orgqr(mats, ins.get(1).ok_or("missing taus")?, outs),
        Kind::Syevd => {
            let lower = lapack_opt(cx, "uplo", b'L') == b'L';
            let vectors = lapack_opt(cx, "mode", b'V') == b'V';
            let (v, w, info) = run_eigh(&mats, lower, vectors, outs)?;
            Ok(vec![v, w, write_ints(out(outs, 2)?, &info)?])
        }
        Kind::TorchEigh => {
            let lower = torch_eigh_lower(cx);
            let (v, w, _) = run_eigh(&mats, lower, true, outs)?;
            Ok(vec![v, w])
        }
        Kind::Gesdd => {
            let mode = SvdMode::from_jobz(lapack_opt(cx, "mode", b'A'))?;
            run_svd(&ins[0], mats, mode, outs)
        }
        Kind::More(_) => Err("not a kind of this module".into()),
    }
}

/// XLA's `LuDecomposition`: LAPACK's LU with 0-based pivots, and the row permutation
/// they compose to (`permutation[i]` is the original row at position `i`).
fn run_xla_lu<T: Scalar>(
    mut mats: Vec<DMatrix<T>>,
    outs: &[TensorType],
) -> Result<Vec<Tensor>, String> {
    let (mut piv, mut perm) = (Vec::new(), Vec::new());
    for a in &mut mats {
        let (p, _) = getrf(a);
        perm.extend(permutation(&p, a.nrows()));
        piv.extend(p.iter().map(|r| r - 1));
    }
    Ok(vec![
        write_mats(out(outs, 0)?, &mats)?,
        write_ints(out(outs, 1)?, &piv)?,
        write_ints(out(outs, 2)?, &perm)?,
    ])
}

/// The row order that 1-based LAPACK pivots of an `m`-row matrix compose to.
fn permutation(ipiv: &[i64], m: usize) -> Vec<i64> {
    let mut order: Vec<i64> = (0..m as i64).collect();
    for (i, &r) in ipiv.iter().enumerate() {
        order.swap(i, (r - 1).clamp(0, m as i64 - 1) as usize);
    }
    order
}

fn run_getrf<T: Scalar>(
    mut mats: Vec<DMatrix<T>>,
    outs: &[TensorType],
) -> Result<Vec<Tensor>, String> {
    let (mut piv, mut info) = (Vec::new(), Vec::new());
    for a in &mut mats {
        let (p, i) = getrf(a);
        piv.extend(p);
        info.push(i);
    }
    Ok(vec![
        write_mats(out(outs, 0)?, &mats)?,
        write_ints(out(outs, 1)?, &piv)?,
        write_ints(out(outs, 2)?, &info)?,
    ])
}

fn run_geqrf<T: Scalar>(
    mut mats: Vec<DMatrix<T>>,
    outs: &[TensorType],
) -> Result<Vec<Tensor>, String> {
    let taus: Vec<Vec<T>> = mats.iter_mut().map(geqrf).collect();
    Ok(vec![
        write_mats(out(outs, 0)?, &mats)?,
        write_vecs(out(outs, 1)?, taus)?,
    ])
}

fn run_orgqr<T: Scalar>(
    mats: Vec<DMatrix<T>>,
    taus: &Tensor,
    outs: &[TensorType],
) -> Result<Vec<Tensor>, String> {
    let k = *taus.shape().last().ok_or("rank-0 taus")? as usize;
    let tv = T::read(taus)?;
    if tv.len() != k * mats.len() {
        return Err(format!("{} taus for {} matrices", tv.len(), mats.len()));
    }
    let qs = mats
        .iter()
        .enumerate()
        .map(|(i, a)| orgqr(a, &tv[i * k..(i + 1) * k]))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(vec![write_mats(out(outs, 0)?, &qs)?])
}

/// Eigenvectors (zeros unless `vectors`) and eigenvalues as tensors, and each `info`.
fn run_eigh<T: Scalar>(
    mats: &[DMatrix<T>],
    lower: bool,
    vectors: bool,
    outs: &[TensorType],
) -> Result<(Tensor, Tensor, Vec<i64>), String> {
    let (mut vs, mut ws, mut info) = (Vec::new(), Vec::new(), Vec::new());
    for a in mats {
        if a.nrows() != a.ncols() {
            return Err(format!(
                "eigh of a non-square {}x{} matrix",
                a.nrows(),
                a.ncols()
            ));
        }
        let e = eigh(a, lower);
        vs.push(if vectors {
            e.v
        } else {
            DMatrix::zeros(a.nrows(), a.nrows())
        });
        ws.push(e.w);
        info.push(e.info);
    }
    Ok((
        write_mats(out(outs, 0)?, &vs)?,
        write_vecs(out(outs, 1)?, ws)?,
        info,
    ))
}

/// The `lower` flag of torch_xla's `Eigh` (`backend_config = "1,1,100,1e-06"`, lower
/// first; absent means lower, XLA's default).
fn torch_eigh_lower(cx: &Ctx<'_>) -> bool {
    match cx.attrs().get("backend_config") {
        Some(Attr::Str(s)) => s.split(',').next().is_none_or(|f| f.trim() != "0"),
        _ => true,
    }
}

/// `gesdd` results: the (unspecified, here unchanged) operand, `s`, `u`, `vt`, `info`.
fn run_svd<T: Scalar>(
    a: &Tensor,
    mats: Vec<DMatrix<T>>,
    mode: SvdMode,
    outs: &[TensorType],
) -> Result<Vec<Tensor>, String> {
    let shape2 = |t: &TensorType| mat_dims(&t.shape).map(|(_, r, c)| (r, c));
    let (us, vts) = (shape2(out(outs, 2)?)?, shape2(out(outs, 3)?)?);
    let (mut s, mut u, mut vt, mut info) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for m in &mats {
        let d = svd(m, mode, us, vts)?;
        s.push(d.s);
        u.push(d.u);
        vt.push(d.vt);
        info.push(d.info);
    }
    Ok(vec![
        a.clone(),
        write_vecs(out(outs, 1)?, s)?,
        write_mats(out(outs, 2)?, &u)?,
        write_mats(out(outs, 3)?, &vt)?,
        write_ints(out(outs, 4)?, &info)?,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pivots_compose_to_a_permutation() {
        // Swap rows 0 and 2, then rows 1 and 2: [0, 1, 2] -> [2, 1, 0] -> [2, 0, 1].
        assert_eq!(permutation(&[3, 3, 3], 3), vec![2, 0, 1]);
        assert_eq!(permutation(&[1, 2], 2), vec![0, 1]);
    }

    #[test]
    fn targets_map_to_kernels() {
        assert_eq!(kind_of("lapack_sgetrf_ffi"), Some(Kind::Getrf));
        assert_eq!(kind_of("lapack_zungqr_ffi"), Some(Kind::Orgqr));
        assert_eq!(kind_of("lapack_cheevd_ffi"), Some(Kind::Syevd));
        assert_eq!(kind_of("lapack_dgesvd_ffi"), Some(Kind::Gesdd));
        assert_eq!(kind_of("Qr"), Some(Kind::Geqrf));
        assert_eq!(kind_of("Eigh"), Some(Kind::TorchEigh));
        assert_eq!(kind_of("LuDecomposition"), Some(Kind::XlaLu));
        // potrf / trsm stay in `custom`; unknown prefixes and names are not ours.
        assert_eq!(kind_of("lapack_spotrf_ffi"), None);
        assert_eq!(kind_of("lapack_xgetrf_ffi"), None);
        assert_eq!(kind_of("lapack_sgeevx_ffi"), None);
        assert!(matches!(kind_of("lapack_sgeev_ffi"), Some(Kind::More(_))));
        assert!(matches!(kind_of("lapack_zhetrd_ffi"), Some(Kind::More(_))));
    }
}
