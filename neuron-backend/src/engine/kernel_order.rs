//! The order in which kernels are lowered (and simulated): a topological order of the
//! kernel graph.
//!
//! Owns: [`kernels_in_order`] (moved out of `lower`).
//! Invariants: every kernel comes after the kernels whose outputs it reads; ties go to
//! kernels whose outputs no other kernel reads (optimizer updates), then to program order;
//! a plan with a cycle is split into single-op kernels on and after the cycle.

use crate::engine::lower::EngineError;
use neuronc_ir::{Module, OpId, ValueDef, ValueId};
use neuronc_passes::neuron::fusion::Kernel;
use neuronc_passes::neuron::NeuronPlan;
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The kernels to lower, in a topological order of the kernel graph (Kahn; ties by the
/// program position of the first op).
/// Kernels on or after a cycle of the fusion plan (which the plan should never contain)
/// are split into one kernel per op, so lowering still succeeds.
pub(crate) fn kernels_in_order(
    m: &Module,
    plan: &NeuronPlan,
) -> Result<(Vec<Kernel>, Vec<usize>), EngineError> {
    let mut ks: Vec<Kernel> = plan.fusion.kernels.clone();
    for _ in 0..2 {
        match kernel_order(m, plan, &ks) {
            Ok(order) => return Ok((ks, order)),
            Err(stuck) => {
                let mut next: Vec<Kernel> = Vec::with_capacity(ks.len());
                for (k, kernel) in ks.into_iter().enumerate() {
                    if stuck.contains(&k) && kernel.ops.len() > 1 {
                        next.extend(kernel.ops.iter().map(|&o| singleton(m, o)));
                    } else {
                        next.push(kernel);
                    }
                }
                ks = next;
            }
        }
    }
    kernel_order(m, plan, &ks)
        .map(|o| (ks, o))
        .map_err(|stuck| EngineError::KernelCycle(stuck[0]))
}

/// A kernel holding just `op`.
fn singleton(m: &Module, op: OpId) -> Kernel {
    let o = m.op(op);
    let mut inputs: Vec<ValueId> = o
        .operands
        .iter()
        .copied()
        .filter(|&v| m.tensor_type(v).is_none_or(|t| t.rank() > 0))
        .collect();
    inputs.sort_unstable();
    inputs.dedup();
    Kernel {
        ops: vec![op],
        duplicated: vec![],
        inputs,
        outputs: o.results.clone(),
        hbm_bytes: 0,
    }
}

/// Kahn's algorithm over `ks`; on a cycle, the kernels that never became ready.
fn kernel_order(m: &Module, plan: &NeuronPlan, ks: &[Kernel]) -> Result<Vec<usize>, Vec<usize>> {
    let mut owner: FxHashMap<OpId, usize> = FxHashMap::default();
    for (k, kernel) in ks.iter().enumerate() {
        owner.extend(kernel.ops.iter().map(|&o| (o, k)));
    }
    let mut indeg = vec![0usize; ks.len()];
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); ks.len()];
    for (k, kernel) in ks.iter().enumerate() {
        let mut preds: Vec<usize> = kernel
            .inputs
            .iter()
            .filter_map(|&v| match m.value(v).def {
                ValueDef::Result(op, _) => owner.get(&op).copied(),
                ValueDef::RegionArg(..) => None,
            })
            .filter(|&p| p != k)
            .collect();
        preds.sort_unstable();
        preds.dedup();
        indeg[k] = preds.len();
        for p in preds {
            succ[p].push(k);
        }
    }
    let key = |k: usize| {
        let pos = ks[k]
            .ops
            .first()
            .and_then(|o| plan.graph.pos.get(o))
            .copied()
            .unwrap_or(usize::MAX);
        (!succ[k].is_empty(), pos)
    };
    let mut ready: BinaryHeap<Reverse<((bool, usize), usize)>> = (0..ks.len())
        .filter(|&k| indeg[k] == 0)
        .map(|k| Reverse((key(k), k)))
        .collect();
    let mut order = Vec::with_capacity(ks.len());
    while let Some(Reverse((_, k))) = ready.pop() {
        order.push(k);
        for &s in &succ[k] {
            indeg[s] -= 1;
            if indeg[s] == 0 {
                ready.push(Reverse((key(s), s)));
            }
        }
    }
    let stuck: Vec<usize> = (0..ks.len()).filter(|&k| indeg[k] > 0).collect();
    if stuck.is_empty() {
        Ok(order)
    } else {
        Err(stuck)
    }
}
