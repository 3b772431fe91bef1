//! The `neuron-fuse` pass: plans layouts and kernels for every public function and
//! outlines each multi-op kernel into a `stablehlo.composite "neuronc.kernel"` call.
//!
//! Each outlined kernel counts as one rewrite (so `--opt-fuel` bisects kernels and
//! `--trace-rewrites` lists them). Functions created by a previous run (`*.kernel<N>`)
//! are not planned again, so the pass is idempotent on its own output.

use super::fusion::FusionConfig;
use super::{outline, plan_function};
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
            let func = module.funcs[fi].clone();
            let t0 = std::time::Instant::now();
            let graph = super::graph::RegionGraph::new(module, func.body);
            let t1 = std::time::Instant::now();
            let layout = super::layout::assign_layouts(module, &graph);
            let t2 = std::time::Instant::now();
            let fusion = super::fusion::plan_fusion(module, &graph, &cfg);
            let t3 = std::time::Instant::now();
            let plan = super::NeuronPlan { graph, layout, fusion };
            let _ = plan_function;
            let budget = plan
                .fusion
                .kernels
                .iter()
                .enumerate()
                .filter(|(_, k)| outline::outlinable(module, k))
                .take_while(|(_, k)| ctx.try_rewrite("fuse-kernel", module, k.ops[k.ops.len() - 1]))
                .count();
            let t4 = std::time::Instant::now();
            changed |= outline::outline_kernels(module, fi, &plan, budget) > 0;
            let t5 = std::time::Instant::now();
            if std::env::var_os("NEURONC_FUSE_TIMING").is_some() {
                eprintln!("graph {:?} layout {:?} fusion {:?} budget {:?} outline {:?}", t1-t0, t2-t1, t3-t2, t4-t3, t5-t4);
            }
        }
        Ok(Changed::from_bool(changed))
    }
}
