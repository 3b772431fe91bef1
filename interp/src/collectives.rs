//! Collectives over simulated replicas/partitions. (Being written.)

use crate::dispatch::Ctx;
use crate::error::InterpError;
use crate::eval::{Interp, Res, Val};

/// Shared state of the simulated processes of one run.
pub struct Comm {}

pub(crate) fn exec(it: &mut Interp<'_>, cx: &Ctx<'_>) -> Res<Vec<Val>> {
    let _ = it;
    Err(InterpError::UnsupportedOp(cx.op.kind.name().to_string()))
}

/// Runs all simulated processes (stub: sequentially, no communication).
pub(crate) fn run_spmd(
    m: &neuronc_ir::Module,
    f: &str,
    inputs: Vec<crate::Tensor>,
    opts: &crate::RunOptions,
) -> Res<Vec<Vec<crate::Tensor>>> {
    let mut all = Vec::new();
    for r in 0..opts.replicas.max(1) {
        for p in 0..opts.partitions.max(1) {
            let mut it = Interp::new(m);
            it.replica = r;
            it.partition = p;
            let v = it.call(f, inputs.iter().cloned().map(Val::T).collect())?;
            all.push(crate::flatten_vals(v));
        }
    }
    Ok(all)
}
