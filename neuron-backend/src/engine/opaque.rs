//! Dense linear-algebra custom calls as opaque GpSimd kernels: what one LU, QR, Householder
//! product, Hermitian or general eigendecomposition, Schur, Hessenberg or tridiagonal
//! reduction, SVD, Cholesky, triangular or tridiagonal solve costs.
//!
//! Owns: [`linalg_call`], recognising the targets (jax's CPU `lapack_<p><name>_ffi`,
//! XLA's `Eigh` / `Qr` / `ProductOfElementaryHouseholderReflectors` / TPU
//! `LuDecomposition`) and estimating their
//! GpSimd cycles from the operand shapes. The functional result is the interpreter's
//! kernel (the simulator steps every non-matmul op through it); this module only says how
//! long the call keeps GpSimd busy.
//!
//! Cost model [U: no measurement; operation counts are the textbook ones, throughput and
//! per-step latency are assumptions stated here]:
//! * flops per matrix: LU `2mnk - (m+n)k^2 + 2k^3/3` (`2n^3/3` square), Householder QR
//!   twice that, `orgqr` `4mnk - 2(m+n)k^2 + 4k^3/3`, Cholesky `n^3/3`, triangular solve
//!   `n^2 r` (r right-hand sides), eigendecomposition with vectors `9n^3`, SVD by mode
//!   (Golub & Van Loan's R-SVD counts, `l >= k` the larger and smaller dimension): no
//!   vectors `4lk^2 - 4k^3/3`, thin `6lk^2 + 20k^3`, full `4l^2k + 22k^3`; complex
//!   arithmetic costs 4 real flops per flop; Hessenberg reduction `10n^3/3`, symmetric
//!   tridiagonal reduction `4n^3/3`, real Schur form with vectors `25n^3` (Golub & Van
//!   Loan's count for the Francis QR algorithm), general eigenproblem with vectors that
//!   plus `n^3` for the eigenvector back-substitution, tridiagonal solve `8n r`;
//! * one matrix per GpSimd core (8 cores, `neuron-facts.md` §1.2), 16 FP32 lanes doing
//!   one FMA each per cycle at 50% efficiency: 16 flops / cycle / core;
//! * every sequential step (a pivot search, a reflector norm, a QR sweep; `k` of them for
//!   the direct factorizations and reductions, `10k` for the iterative eigen, Schur and
//!   singular value solvers)
//!   costs a cross-lane reduction and broadcast of 64 cycles.
//!
//! Invariant: [`linalg_call`] is `None` for every other op, so other custom calls keep the
//! generic per-element GpSimd cost.

use neuronc_ir::{Attr, Module, OpId, OpKind};

/// GpSimd cores a batch of independent matrices spreads over.
const CORES: f64 = 8.0;
/// Sustained flops per cycle of one core (16 lanes x 2 flops x 50%).
const FLOPS_PER_CYCLE: f64 = 16.0;
/// Cycles of one sequential step (reduction + broadcast across a core's lanes).
const STEP_CYCLES: f64 = 64.0;

/// One recognised linear-algebra call: a short name for the program listing and its
/// estimated GpSimd cycles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinalgCall {
    pub name: &'static str,
    pub cycles: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Algo {
    Lu,
    Qr,
    Orgqr,
    Cholesky,
    Trsm,
    Eigh,
    Svd(u8),
    Hessenberg,
    Tridiagonal,
    Schur,
    Eig,
    /// A tridiagonal solve; its cost is read from the right-hand side (operand 3).
    Gtsv,
}

fn algo_of(target: &str, m: &Module, op: OpId) -> Option<(Algo, &'static str)> {
    match target {
        "Eigh" => return Some((Algo::Eigh, "eigh")),
        "Qr" => return Some((Algo::Qr, "geqrf")),
        "LuDecomposition" => return Some((Algo::Lu, "getrf")),
        "ProductOfElementaryHouseholderReflectors" => return Some((Algo::Orgqr, "orgqr")),
        _ => {}
    }
    let name = target.strip_prefix("lapack_")?.strip_suffix("_ffi")?;
    let (p, base) = name.split_at_checked(1)?;
    if !matches!(p, "s" | "d" | "c" | "z") {
        return None;
    }
    Some(match base {
        "getrf" => (Algo::Lu, "getrf"),
        "geqrf" => (Algo::Qr, "geqrf"),
        "orgqr" | "ungqr" => (Algo::Orgqr, "orgqr"),
        "potrf" => (Algo::Cholesky, "potrf"),
        "trsm" => (Algo::Trsm, "trsm"),
        "syevd" | "heevd" => (Algo::Eigh, "syevd"),
        "gesdd" | "gesvd" => (Algo::Svd(svd_mode(m, op)), "gesdd"),
        "gehrd" => (Algo::Hessenberg, "gehrd"),
        "sytrd" | "hetrd" => (Algo::Tridiagonal, "sytrd"),
        "gees" => (Algo::Schur, "gees"),
        "geev" => (Algo::Eig, "geev"),
        "gtsv" => (Algo::Gtsv, "gtsv"),
        _ => return None,
    })
}

/// The SVD's `mode` character (`'A'` when absent, as LAPACK's default for jax).
fn svd_mode(m: &Module, op: OpId) -> u8 {
    match m.op(op).attrs.get("mhlo.backend_config") {
        Some(Attr::Dict(d)) => d.int("mode").map_or(b'A', |v| v as u8),
        _ => b'A',
    }
}

/// The linear-algebra call `op` is, with its cost; `None` for any other op.
pub fn linalg_call(m: &Module, op: OpId) -> Option<LinalgCall> {
    let o = m.op(op);
    if o.kind != OpKind::CustomCall {
        return None;
    }
    let target = match o.attrs.get("call_target_name")? {
        Attr::Str(s) | Attr::Symbol(s) => s.as_str(),
        _ => return None,
    };
    let (algo, name) = algo_of(target, m, op)?;
    let matrix = if algo == Algo::Gtsv { 3 } else { 0 };
    let a = m.tensor_type(*o.operands.get(matrix)?)?;
    let [batch @ .., rows, cols] = &a.shape[..] else {
        return None;
    };
    let b: f64 = batch.iter().map(|&d| d.max(0) as f64).product();
    let (rows, cols) = (
        rows.max(&0).to_owned() as f64,
        cols.max(&0).to_owned() as f64,
    );
    let rhs = o
        .operands
        .get(1)
        .and_then(|&v| m.tensor_type(v))
        .and_then(|t| t.shape.last().copied())
        .unwrap_or(1)
        .max(0) as f64;
    let scale = if a.elem.is_complex() { 4.0 } else { 1.0 };
    let (flops, steps) = flops_and_steps(algo, rows, cols, rhs);
    let per_matrix = scale * flops / FLOPS_PER_CYCLE + steps * STEP_CYCLES;
    Some(LinalgCall {
        name,
        cycles: (b / CORES).ceil().max(1.0) * per_matrix,
    })
}

/// Flops of one matrix and its number of sequential steps.
fn flops_and_steps(algo: Algo, m: f64, n: f64, rhs: f64) -> (f64, f64) {
    let (k, l) = (m.min(n), m.max(n));
    let lu = 2.0 * m * n * k - (m + n) * k * k + 2.0 * k.powi(3) / 3.0;
    match algo {
        Algo::Lu => (lu, k),
        Algo::Qr => (2.0 * lu, k),
        // The Householder product's `k` is the reflector count, at most `n`.
        Algo::Orgqr => (
            4.0 * m * n * k - 2.0 * (m + n) * k * k + 4.0 * k.powi(3) / 3.0,
            k,
        ),
        Algo::Cholesky => (n.powi(3) / 3.0, n),
        Algo::Trsm => (m * m * rhs, m),
        Algo::Eigh => (9.0 * n.powi(3), 10.0 * n),
        Algo::Hessenberg => (10.0 * n.powi(3) / 3.0, n),
        Algo::Tridiagonal => (4.0 * n.powi(3) / 3.0, n),
        Algo::Schur => (25.0 * n.powi(3), 10.0 * n),
        Algo::Eig => (26.0 * n.powi(3), 10.0 * n),
        // `m` is the system size, `n` the right-hand-side count: one forward elimination
        // and one back substitution, sequential along the diagonal.
        Algo::Gtsv => (8.0 * m * n, m),
        Algo::Svd(mode) => {
            let f = match mode {
                b'N' => 4.0 * l * k * k - 4.0 * k.powi(3) / 3.0,
                b'S' => 6.0 * l * k * k + 20.0 * k.powi(3),
                _ => 4.0 * l * l * k + 22.0 * k.powi(3),
            };
            (f, 10.0 * k)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_lu_is_two_thirds_n_cubed() {
        let (f, steps) = flops_and_steps(Algo::Lu, 6.0, 6.0, 1.0);
        assert!((f - 2.0 * 216.0 / 3.0).abs() < 1e-9);
        assert_eq!(steps, 6.0);
        // Householder QR of a tall matrix: 2mn^2 - 2n^3/3.
        let (q, _) = flops_and_steps(Algo::Qr, 8.0, 4.0, 1.0);
        assert!((q - (2.0 * 8.0 * 16.0 - 2.0 * 64.0 / 3.0)).abs() < 1e-9);
        // orgqr with k = n = m is also 4n^3/3.
        let (o, _) = flops_and_steps(Algo::Orgqr, 3.0, 3.0, 1.0);
        assert!((o - 4.0 * 27.0 / 3.0).abs() < 1e-9);
    }

    fn calls(src: &str) -> Vec<LinalgCall> {
        let m = neuronc_ir::parse_module(src).unwrap();
        let f = m.entry().unwrap();
        let body = m.region(f.body);
        body.ops
            .iter()
            .filter_map(|&op| linalg_call(&m, op))
            .collect()
    }

    #[test]
    fn recognises_lapack_and_xla_targets_and_spreads_batches() {
        let src = r#"func.func @main(%a: tensor<16x4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0:3 = stablehlo.custom_call @lapack_sgetrf_ffi(%a) {mhlo.backend_config = {}} : (tensor<16x4x4xf32>) -> (tensor<16x4x4xf32>, tensor<16x4xi32>, tensor<16xi32>)
  %1:3 = stablehlo.custom_call @lapack_sgetrf_ffi(%b) {mhlo.backend_config = {}} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4xi32>, tensor<i32>)
  %2 = stablehlo.custom_call @Eigh(%b) {backend_config = "1,1,100,0.000001"} : (tensor<4x4xf32>) -> tuple<tensor<4x4xf32>, tensor<4xf32>>
  %3 = stablehlo.custom_call @mhlo.erf(%b) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %3 : tensor<4x4xf32>
}"#;
        let c = calls(src);
        assert_eq!(c.len(), 3, "erf is not a linear-algebra call");
        assert_eq!(
            (c[0].name, c[1].name, c[2].name),
            ("getrf", "getrf", "eigh")
        );
        // 16 matrices over 8 cores: two rounds of one matrix's cycles.
        assert!((c[0].cycles - 2.0 * c[1].cycles).abs() < 1e-9);
        // One 4x4 LU: 2/3 * 64 flops at 16 per cycle plus 4 steps of 64 cycles.
        assert!((c[1].cycles - (128.0 / 3.0 / 16.0 + 4.0 * 64.0)).abs() < 1e-9);
    }

    #[test]
    fn recognises_reductions_schur_eig_and_tridiagonal_solve() {
        let src = r#"func.func @main(%a: tensor<8x8xf32>, %d: tensor<2x8xf32>, %r: tensor<2x8x3xf32>) -> tensor<8x8xf32> {
  %0:5 = stablehlo.custom_call @lapack_sgeev_ffi(%a) {mhlo.backend_config = {}} : (tensor<8x8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<i32>)
  %1:2 = stablehlo.custom_call @lapack_sgehrd_ffi(%a) {mhlo.backend_config = {}} : (tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<7xf32>)
  %2:5 = stablehlo.custom_call @lapack_sgtsv_ffi(%d, %d, %d, %r) {mhlo.backend_config = {}} : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8x3xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8x3xf32>, tensor<2xi32>)
  return %a : tensor<8x8xf32>
}"#;
        let c = calls(src);
        let names: Vec<_> = c.iter().map(|c| c.name).collect();
        assert_eq!(names, ["geev", "gehrd", "gtsv"]);
        // geev of 8x8: 26 * 512 flops at 16 per cycle plus 80 steps of 64 cycles.
        assert!((c[0].cycles - (26.0 * 512.0 / 16.0 + 80.0 * 64.0)).abs() < 1e-9);
        // gtsv: 2 systems of size 8 with 3 right-hand sides, both on their own core:
        // 8 * 8 * 3 flops and 8 sequential steps each.
        assert!((c[2].cycles - (192.0 / 16.0 + 8.0 * 64.0)).abs() < 1e-9);
    }

    #[test]
    fn cost_grows_cubically() {
        let (small, _) = flops_and_steps(Algo::Eigh, 10.0, 10.0, 1.0);
        let (big, _) = flops_and_steps(Algo::Eigh, 20.0, 20.0, 1.0);
        assert!((big / small - 8.0).abs() < 1e-9);
    }
}
