//! XLA:CPU's result-changing algebraic rewrites and kept reduce loops under
//! `FloatSemantics::Xla`, bit for bit against XLA:CPU.
//!
//! Each `tests/xla_reassoc/NAME.mlir` has its inputs (`arg_*`) and XLA:CPU's results
//! (`out_*`, jaxlib 0.10.2 through `tools/xla_run.py`, x86-64 host) in `NAME.npz`, written
//! by `tests/gen_xla_reassoc.py`:
//! * `f16_const_chains`, `f32_const_chains`: `(x - c) + c`, `c2 + (x + c1)`, broadcast
//!   constants, `(c1 - x) + c2`, `(x - c1) - c2`, `c2 * (x * c1)`, non-splat pairs, a
//!   chain of three, and the mixed splat / non-splat pair XLA leaves alone
//!   (`neuronc_interp`'s `xla_reassoc.rs`);
//! * `f16_root_divides`: `a / sqrt(x)`, `a / rsqrt(x)`, `1 / rsqrt(a)` with single-use
//!   roots, and a `sqrt` with two uses (not rewritten);
//! * `f16_layer_norm_grad`: torch_xla's f16 `LayerNorm` backward, whose
//!   `batch_norm_grad` adds `eps` back to the recomputed `(1 / rsqrt(var + eps))² - eps`
//!   (XLA folds the two `eps` away after expanding the batch norm);
//! * `f16_sum_T_kK_sS`: f16 sums over one dimension of `T` of a chain of `K` ops on `S`
//!   inputs, on both sides of LLVM's full-unroll budget (`xla_unroll.rs`).
//!
//! Mutation check (done by hand): without the re-association rewrite the const-chain,
//! root-divide and layer-norm cases fail; without the kept-loop rule the `k7_s1`,
//! `k5_s2`, `k4_s3`, `16_k16` and `24_k10` sums fail.

mod common;

use std::path::Path;

#[test]
fn xla_rewrites_and_kept_loops_match_xla_cpu_bit_for_bit() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/xla_reassoc");
    common::assert_all_exact(&dir, 11);
}
