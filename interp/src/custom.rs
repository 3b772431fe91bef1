//! `stablehlo.custom_call` targets found in real traces.
//!
//! Owns: the table of supported targets: `mhlo.erf` (torch_xla GELU) and other `mhlo.*`
//! elementwise math, the `check.*` forms, sharding annotations (identity), jax's
//! `shape_assertion`, the LAPACK FFI calls jax emits on CPU (`lapack_?potrf_ffi`,
//! `lapack_?trsm_ffi` here; LU, QR, eigh, SVD, Hessenberg / tridiagonal reductions,
//! tridiagonal solves, Schur and non-symmetric eigen-decompositions in
//! [`crate::lapack_ffi`]) and torch_xla's
//! `Eigh`; jax's `ApproxTopK` in [`crate::approx_topk`]; the interpreter's own
//! `neuronc.xla_fma` (XLA:CPU's fused multiply-add, [`crate::xla_fma`]). Invariant: any other target is
//! [`InterpError::UnsupportedCustomCall`] naming it.

use crate::dispatch::Ctx;
use crate::elementwise as ew;
use crate::error::InterpError;
use crate::eval::{Interp, Res, Val};
use crate::lapack_ffi::lapack_opt;
use crate::linalg2::{cholesky, triangular_solve, TriOpts};
use crate::tensor::Tensor;
use neuronc_ir::{Attr, OpKind};

fn target_name(cx: &Ctx<'_>) -> Res<String> {
    match cx.attrs().get("call_target_name") {
        Some(Attr::Str(s)) | Some(Attr::Symbol(s)) => Ok(s.clone()),
        _ => Err(cx.err("missing call_target_name")),
    }
}

pub(crate) fn exec(it: &mut Interp<'_>, cx: &Ctx<'_>) -> Res<Vec<Val>> {
    let target = target_name(cx)?;
    let ins: Vec<Tensor> = cx
        .op
        .operands
        .iter()
        .filter_map(|&v| it.tensor(v).ok().cloned())
        .collect();
    let arg = |i: usize| {
        ins.get(i)
            .ok_or_else(|| cx.err(format!("@{target}: missing operand {i}")))
    };
    let unary = |k: OpKind| -> Res<Vec<Val>> {
        Ok(vec![Val::T(cx.wrap(ew::unary(k, arg(0)?, cx.out(0)?))?)])
    };
    match target.as_str() {
        "mhlo.erf" => unary(OpKind::ChloErf),
        "mhlo.erfc" => unary(OpKind::ChloErfc),
        "mhlo.erf_inv" => unary(OpKind::ChloErfInv),
        "mhlo.tan" => unary(OpKind::Tan),
        "mhlo.lgamma" => unary(OpKind::ChloLgamma),
        "mhlo.digamma" => unary(OpKind::ChloDigamma),
        "mhlo.asin" => unary(OpKind::ChloAsin),
        "mhlo.acos" => unary(OpKind::ChloAcos),
        "mhlo.atan" => unary(OpKind::ChloAtan),
        "mhlo.sinh" => unary(OpKind::ChloSinh),
        "mhlo.cosh" => unary(OpKind::ChloCosh),
        "mhlo.asinh" => unary(OpKind::ChloAsinh),
        "mhlo.acosh" => unary(OpKind::ChloAcosh),
        "mhlo.atanh" => unary(OpKind::ChloAtanh),
        "ApproxTopK" => crate::approx_topk::exec(it, cx, &ins),
        crate::xla_fma::TARGET => crate::xla_fma::exec(cx, &ins),
        "check.expect_eq" | "check.expect_close" | "check.expect_almost_eq" | "check.eq" => {
            crate::check::custom(it, cx, &target)
        }
        "Sharding"
        | "SPMDFullToShardShape"
        | "SPMDShardToFullShape"
        | "xla.sdy.GlobalToLocalShape"
        | "xla.sdy.LocalToGlobalShape"
        | "MoveToHost"
        | "MoveToDevice"
        | "annotate_device_placement" => cx
            .op
            .operands
            .iter()
            .take(cx.op.results.len())
            .map(|&v| it.get(v).cloned())
            .collect(),
        "shape_assertion" => {
            if arg(0)?.get_i64(0) == 0 {
                let msg = cx
                    .attrs()
                    .str("error_message")
                    .unwrap_or("shape assertion failed");
                return Err(cx.err(msg.to_string()));
            }
            Ok(Vec::new())
        }
        t if t.starts_with("lapack_") && t.ends_with("potrf_ffi") => {
            let lower = lapack_opt(cx, "uplo", b'L') == b'L';
            let f = cx.wrap(cholesky(arg(0)?, lower, cx.out(0)?))?;
            // One `info` per matrix of the batch: nonzero where the factor failed (NaN).
            let per = f.shape().iter().rev().take(2).product::<i64>().max(0) as usize;
            let count = cx.out(1)?.shape.iter().product::<i64>().max(0) as usize;
            let v = f.to_f64_vec();
            let info: Vec<i64> = (0..count)
                .map(|i| {
                    let m = v.get(i * per..(i + 1) * per).unwrap_or(&[]);
                    i64::from(m.iter().any(|x| x.is_nan()))
                })
                .collect();
            let info = cx.wrap(Tensor::from_i64(cx.out(1)?.elem, &cx.out(1)?.shape, &info))?;
            Ok(vec![Val::T(f), Val::T(info)])
        }
        t if t.starts_with("lapack_") && t.ends_with("trsm_ffi") => {
            let opts = TriOpts {
                left: lapack_opt(cx, "side", b'L') == b'L',
                lower: lapack_opt(cx, "uplo", b'L') == b'L',
                unit: lapack_opt(cx, "diag", b'N') == b'U',
                transpose: lapack_opt(cx, "trans_x", b'N') != b'N',
                conjugate: lapack_opt(cx, "trans_x", b'N') == b'C',
            };
            Ok(vec![Val::T(cx.wrap(triangular_solve(
                arg(0)?,
                arg(1)?,
                opts,
                cx.out(0)?,
            ))?)])
        }
        t => crate::lapack_ffi::exec(t, cx, &ins)
            .unwrap_or_else(|| Err(InterpError::UnsupportedCustomCall(target.clone()))),
    }
}
