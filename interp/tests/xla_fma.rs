//! XLA:CPU's fused multiply-adds under `FloatSemantics::Xla`, bit for bit against XLA:CPU.
//!
//! Each `tests/xla_fma/NAME.mlir` has its inputs (`arg_*`) and XLA:CPU's results (`out_*`,
//! jaxlib 0.10.2 through `tools/xla_run.py`, x86-64 host with FMA3) in `NAME.npz`, written
//! by `tests/gen_xla_fma.py`:
//! * `f32_forms`, `f64_forms`: `a*b + c`, `c + a*b`, `a*b - c`, `c - a*b`,
//!   `negate(a*b) + c`, `a*0.1 + c`, `a*b + c*d` and `a*b - c*d` (all fused);
//! * `f32_uses`: a product that is also a result (not fused), one also multiplied by
//!   another value or added twice in separate expressions (fused in each), one used twice
//!   in one expression (not fused);
//! * `f32_shapes`: a broadcast product (not fused); a reshaped, a negated and zero-padded,
//!   and a strided-sliced one (fused);
//! * `f16_not_fused`, `bf16_not_fused`: narrow products are rounded before the add;
//! * `f32_product_sums`, `f64_product_sums`: reduce-sums of products over one dimension
//!   (5 to 32 elements, one to three results) and rank-1 dot products (3 to 17 elements):
//!   a sequential chain of fused multiply-adds from the init value (zero for dots).
//!
//! Mutation check (done by hand): with `xla_fma::contract` returning its input unchanged
//! the `forms`, `uses`, `shapes` and `product_sums` cases fail.

mod common;

use std::path::Path;

#[test]
fn fused_multiply_adds_match_xla_cpu_bit_for_bit() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/xla_fma");
    common::assert_all_exact(&dir, 8);
}
