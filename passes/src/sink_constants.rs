//! `sink-constants`: clones constants that nested regions capture into those regions.
//!
//! StableHLO regions (reduce bodies, sort comparators, while/if branches, ...) may use
//! values of the enclosing function; torch_xla prints `any(dim)` as a reduce whose body
//! selects between an outer `true` and `false`. An HLO computation cannot capture
//! values, and neither can a kernel outlined into its own function, so before those back
//! ends run, every captured `stablehlo.constant` gets a copy at the start of each region
//! that uses it, and the region's uses are redirected to the copy.
//!
//! Invariants: only constants move (a captured value computed by any other op stays
//! captured; consumers must treat it as an input); each (region, constant) pair gets at
//! most one copy; regions at every depth are handled in one sweep; the outer constant is
//! left for `dce` if nothing else uses it.

use crate::context::{Changed, PassContext};
use crate::error::PassError;
use crate::ir_util::{clone_op, def_op, ValueMap};
use crate::pass::Pass;
use neuronc_ir::{Module, OpId, OpKind, RegionId, ValueId};
use rustc_hash::FxHashMap;

/// The `sink-constants` pass.
pub struct SinkConstants;

impl Pass for SinkConstants {
    fn name(&self) -> &'static str {
        "sink-constants"
    }
    fn run(&self, module: &mut Module, ctx: &mut PassContext) -> Result<Changed, PassError> {
        let mut sunk = 0;
        for fi in 0..module.funcs.len() {
            let body = &module.region(module.funcs[fi].body).ops;
            let owners: Vec<OpId> = body
                .iter()
                .copied()
                .filter(|&op| !module.op(op).regions.is_empty())
                .collect();
            for op in owners {
                for j in 0..module.op(op).regions.len() {
                    let r = module.op(op).regions[j];
                    sunk += sink_into(module, r, ctx);
                }
            }
        }
        Ok(Changed::from_bool(sunk > 0))
    }
}

/// Sinks the constants `region` captures into it, then recurses into its nested
/// regions. Returns the number of copies made.
fn sink_into(m: &mut Module, region: RegionId, ctx: &mut PassContext) -> usize {
    let ops = m.region(region).ops.clone();
    // A constant is captured when its op lies outside `region` (an op of the region can
    // only read values of the region or of enclosing ones).
    let mut captured: Vec<ValueId> = Vec::new();
    for &op in &ops {
        for &v in &m.op(op).operands {
            let outer_constant = def_op(m, v).is_some_and(|d| {
                let d = m.op(d);
                d.kind == OpKind::Constant && d.parent != Some(region)
            });
            if outer_constant && !captured.contains(&v) {
                captured.push(v);
            }
        }
    }
    let mut map: FxHashMap<ValueId, ValueId> = FxHashMap::default();
    let mut copies = 0;
    for v in captured {
        let Some(def) = def_op(m, v) else { continue };
        if !ctx.try_rewrite("sink-constants", m, def) {
            continue;
        }
        let copy = clone_op(m, def, &mut map);
        m.insert_op(region, copies, copy);
        copies += 1;
    }
    if copies > 0 {
        for &op in &ops {
            let operands: Vec<ValueId> = m.op(op).operands.iter().map(|&v| map.lookup(v)).collect();
            m.op_mut(op).operands = operands;
        }
    }
    for &op in &ops {
        for r in m.op(op).regions.clone() {
            copies += sink_into(m, r, ctx);
        }
    }
    copies
}
