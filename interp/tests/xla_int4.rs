//! i4 / ui4 / i2 / ui2 elementwise ops under `FloatSemantics::Xla` give XLA:CPU's results
//! bit for bit.
//!
//! Each `tests/xla_int4/NAME.mlir` applies every integer elementwise op to all sixteen
//! bytes converted down to each sub-byte type and reads each result three ways (a
//! `convert` to the 8-bit type, a `convert` to i32, an `add` then the 8-bit convert); its
//! `.npz` holds `out_*` as printed by XLA:CPU (jaxlib 0.10.2 through `tools/xla_run.py`;
//! generator `tests/gen_xla_int4.py`). XLA computes 4-bit ops in 8 bits, so an 8-bit
//! convert of a 4-bit sum, product, negation, `not`, left shift or popcount reads the
//! unwrapped value: before `excess_precision` modelled that, 43 of the 228 outputs of
//! `int4_ops_reversed` (39 of `int4_ops_self`) differed. A 2-bit popcount or leading-zero
//! count of 2 wraps to -2 in i2 (it did not before: 4 more outputs of each).

mod common;

use std::path::Path;

#[test]
fn sub_byte_integer_ops_match_xla_cpu_bit_for_bit() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/xla_int4");
    common::assert_all_exact(&dir, 2);
}
