//! `rng_bit_generator`.
//!
//! Owns: the bit generators. (Being written.)

use crate::dispatch::Ctx;
use crate::error::InterpError;
use crate::eval::{Res, Val};
use crate::tensor::Tensor;

pub(crate) fn rng_bit_generator(cx: &Ctx<'_>, ins: &[&Tensor]) -> Res<Vec<Val>> {
    let _ = ins;
    Err(InterpError::UnsupportedOp(format!("{} (not implemented yet)", cx.op.kind.name())))
}
