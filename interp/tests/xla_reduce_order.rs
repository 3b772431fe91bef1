//! f16/bf16 `reduce`s under `FloatSemantics::Xla` give XLA:CPU's results bit for bit.
//!
//! Each `tests/xla_reduce_order/NAME.mlir` is one reduce (sum or product, f16 or bf16,
//! over several dimension sets; two cases reduce a product `x*y` that XLA fuses into the
//! reduce); its `.npz` holds the inputs (`arg_*`, random with wide magnitudes so that the
//! summation order matters) and `out_000` as printed by XLA:CPU (jaxlib 0.10.2 through
//! `tools/xla_run.py`, x86-64 host). Before the vectorized-lane order of
//! `neuronc_interp`'s `reduce/xla_lanes.rs` the interpreter (sequential order) differed
//! from these outputs on 11 of the 15 f16 files; the four that agreed are the ones XLA:CPU
//! also sums sequentially: 6x6x8 and 3x5x2x7 (6- and 5-trip loops are not vectorized),
//! 40x6x8 (a padded tree-rewriter window) and the `x*y` 2x3x2x5 (a two-array body at 2
//! trips; the 2-lane order would differ on 1 of its 3 outputs). bf16 reduces stay
//! sequential and agreed before and after.

mod common;

use std::path::Path;

#[test]
fn f16_and_bf16_reduces_match_xla_cpu_bit_for_bit() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/xla_reduce_order");
    common::assert_all_exact(&dir, 17);
}
