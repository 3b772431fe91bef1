//! NeuronCore planning: layout assignment and fusion, and the report `explain` prints.
//!
//! Owns: [`plan_function`] (layout and fusion, independent of each other, over one function body) and [`NeuronPlan`]
//! with the summary metrics (`hbm_bytes`, `transpose_bytes`, `matmul_operand_bytes`, ...).
//! Plans are side tables keyed by op/value ids of the module they were computed on; they
//! are invalidated by any mutation of that module.

mod cycle;
pub mod explain;
pub mod fusion;
pub mod graph;
mod kernel_share;
pub mod layout;
mod layout_chain;
mod layout_spec;
mod layout_terms;
mod layout_want;
pub mod outline;
pub mod pass;
mod planner;
pub mod relayout;
mod topo;

use fusion::{FusionConfig, FusionPlan, OpClass};
use graph::{value_bytes, RegionGraph};
use layout::LayoutPlan;
use neuronc_ir::{Func, Module};

/// Layout and fusion decisions for one function, plus summary metrics.
pub struct NeuronPlan {
    pub graph: RegionGraph,
    pub layout: LayoutPlan,
    pub fusion: FusionPlan,
}

impl NeuronPlan {
    /// Bytes read by all matmuls (operands of dot_general / convolution).
    pub fn matmul_operand_bytes(&self, m: &Module) -> u64 {
        self.graph
            .order
            .iter()
            .filter(|&&o| fusion::classify(m, o) == OpClass::Matmul)
            .flat_map(|&o| m.op(o).operands.iter().map(|&v| value_bytes(m, v)))
            .sum()
    }
}

/// Regions with fewer ops than this are planned on one thread. A helper thread costs more
/// than it saves below this size: starting one (the first use of the pool in a process)
/// and its first allocations (a fresh allocator heap whose pages are faulted in, 2 MiB
/// at a time under transparent huge pages) took longer than the ~1 ms of layout work it
/// would take over on the BERT-base training step (about 5,800 ops), on a loaded 2-core
/// machine; BERT-large (about twice the ops) still plans on two threads.
const PARALLEL_MIN_OPS: usize = 8192;

/// Plans the body of `func`: layouts and kernels.
pub fn plan_function(m: &Module, func: &Func, cfg: &FusionConfig) -> NeuronPlan {
    // Layout assignment and fusion planning read the same region and not each other's
    // results, so in large regions they run on two threads (each is deterministic on its
    // own): fusion, the longer, on this one straight from the region's op list; the
    // dataflow graph and layout on a helper. In smaller ones the graph comes first and
    // fusion reads the captured values off it.
    let order = &m.region(func.body).ops;
    if order.len() >= PARALLEL_MIN_OPS {
        let kernels = || fusion::plan_kernels(m, order, None, cfg);
        let layouts = || {
            let graph = RegionGraph::new(m, func.body);
            let layout = layout::assign_layouts(m, &graph);
            (graph, layout)
        };
        let (fusion, (graph, layout)) = neuronc_ir::par::join(kernels, layouts);
        return NeuronPlan {
            graph,
            layout,
            fusion,
        };
    }
    let graph = RegionGraph::new(m, func.body);
    let fusion = fusion::plan_kernels(m, &graph.order, Some(&graph), cfg);
    let layout = layout::assign_layouts(m, &graph);
    NeuronPlan {
        graph,
        layout,
        fusion,
    }
}
