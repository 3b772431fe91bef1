//! The `neuron-fuse` pass: plans layouts and kernels for every public function and
//! outlines each multi-op kernel into a `stablehlo.composite "neuronc.kernel"` call.
//!
//! Relayouts the layout plan forces become explicit `neuronc.relayout` composites
//! ([`super::relayout`]), inside the kernel that needs them.
//! Each outlined kernel counts as one rewrite (so `--opt-fuel` bisects kernels and
//! `--trace-rewrites` lists them). Functions created by a previous run (`*.kernel<N>`)
//! are not planned again, so the pass is idempotent on its own output.

use super::fusion::FusionConfig;
use super::{outline, plan_function, relayout};
use crate::context::{Changed, PassContext};
use crate::error::PassError;
use crate::pass::Pass;
use neuronc_ir::Module;

/// Layout assignment + fusion + outlining.
pub struct NeuronFuse;

impl Pass for NeuronFuse {
    fn name(&self) -> &'static str {
        "neuron-fuse"
    }

    fn run(&self, module: &mut Module, ctx: &mut PassContext) -> Result<Changed, PassError> {
        let cfg = FusionConfig::default();
        let mut changed = false;
        let targets: Vec<usize> = (0..module.funcs.len())
            .filter(|&i| module.funcs[i].visibility.is_none())
            .collect();
        for fi in targets {
            let plan = plan_function(module, &module.funcs[fi], &cfg);
            let chosen: Vec<usize> = plan
                .fusion
                .kernels
                .iter()
                .enumerate()
                .filter(|(_, k)| outline::outlinable(module, k))
                .take_while(|(_, k)| ctx.try_rewrite("fuse-kernel", module, k.ops[k.ops.len() - 1]))
                .map(|(i, _)| i)
                .collect();
            let mut outlined = vec![false; plan.fusion.kernels.len()];
            for &k in &chosen {
                outlined[k] = true;
            }
            let relayouts = relayout::materialize_relayouts(module, fi, &plan, |k| outlined[k]);
            changed |= relayouts.added > 0;
            let n = outline::outline_kernels(module, fi, &plan, &relayouts.members, &outlined);
            changed |= n > 0;
        }
        Ok(Changed::from_bool(changed))
    }
}
