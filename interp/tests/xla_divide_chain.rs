//! XLA:CPU's divide-chain, `exp`/`pow` divisor, `exp` product, small integer power and
//! log rewrites under `FloatSemantics::Xla`, bit for bit against XLA:CPU.
//!
//! Each `tests/xla_divide_chain/NAME.mlir` has its inputs (`arg_*`) and XLA:CPU's results
//! (`out_*`, jaxlib 0.10.2 through `tools/xla_run.py`, x86-64 host) in `NAME.npz`, written
//! by `tests/gen_xla_divide_chain.py` (4096 elements per operand):
//! * `{f16,bf16,f32,f64}_chains`: `a / pow(b, c)`, `(a / b) / d`, `a / (b / d)`,
//!   `(a / b) / (b / d)`, `(K / a) / b`, `a / (K / b)`, `(a / b) / K`, `a / (b / K)`,
//!   `pow(a, 2)`, `pow(a, 3)`, `pow(a, -1)`, `pow(a, -2)` (not rewritten),
//!   `a / pow(b, -2)`, a chain of four divides, and the inner divide and `pow` as results
//!   (second users);
//! * `{f16,bf16}_transcendental`: `a / exp(b)`, `exp(a) * exp(b)`, `exp(a) / exp(b)`,
//!   `(d / a) / exp(b)`, `log(sqrt(a))`, `log(rsqrt(a))`, `log(pow(b, c))`,
//!   `(d / a) / sqrt(c2)` (root rule first), with the `exp` and `sqrt` as results too.
//!
//! The bf16 cases pin that XLA does not rewrite bf16 (normalized to f32 first).
//! f32/f64 transcendental cases are left out: the interpreter's f32/f64 `exp` and `log`
//! are not XLA's.
//!
//! Mutation check (done by hand): with `xla_divide_chain::has_sites` returning false (no
//! rewrite), every f16, f32 and f64 case fails.

mod common;

use std::path::Path;

#[test]
fn xla_divide_chains_match_xla_cpu_bit_for_bit() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/xla_divide_chain");
    common::assert_all_exact(&dir, 6);
}
