//! `dce`: dead code elimination.
//!
//! Removes every pure op (see [`crate::ir_util::is_pure`]) none of whose results is used,
//! in function bodies and inside nested regions. Terminators, side-effecting ops and
//! function arguments are never touched. One reverse sweep per region suffices: a value is
//! only used after its definition (or inside regions of later ops), so by the time an op is
//! visited all of its users have already been visited and, if dead, removed.
//!
//! The same order lets the sweep count uses as it goes: every kept op adds its operands
//! (and, as its regions are swept right after it, those of its kept nested ops) to the use
//! counts, so when an op is reached its results' counts are exactly their uses by the kept
//! ops after it, which are all of their uses. Removed ops never add theirs.
//!
//! Inside fixpoint groups (see [`crate::edits`]) removing an op from a nested region marks
//! the op owning the region as edited; a run removes every dead op (it is idempotent)
//! unless fuel stops it, and the group skips the pass while the module is known to hold
//! no dead op.

use crate::context::{Changed, PassContext};
use crate::error::PassError;
use crate::ir_util::is_pure;
use crate::pass::Pass;
use neuronc_ir::{Module, OpId, RegionId};

/// The name of the pass.
pub const NAME: &str = "dce";

/// The `dce` pass.
pub struct Dce;

impl Pass for Dce {
    fn name(&self) -> &'static str {
        NAME
    }
    fn run(&self, module: &mut Module, ctx: &mut PassContext) -> Result<Changed, PassError> {
        let removed = remove_dead_ops(module, Some(ctx));
        // Without fuel every dead op went (with fuel no run counts as complete anyway).
        ctx.note_dead_free();
        Ok(Changed::from_bool(removed > 0))
    }
    fn tracks_edits(&self) -> bool {
        true
    }
}

/// Removes every dead pure op without asking for fuel (like [`remove_dead_ops`] without
/// a context), for passes cleaning up after their own rewrites; inside fixpoint groups it
/// marks the owners of the regions it shrinks and counts as a complete `dce` run.
pub fn cleanup_dead_ops(m: &mut Module, ctx: &mut PassContext) -> usize {
    let mut uses = vec![0u32; m.values.len()];
    let mut removed = 0;
    let mut cleanup = Some(Remover::Cleanup(ctx));
    for f in 0..m.funcs.len() {
        let body = m.funcs[f].body;
        removed += sweep(m, body, &mut uses, &mut cleanup);
    }
    if let Some(Remover::Cleanup(ctx)) = cleanup {
        ctx.note_dead_free();
    }
    removed
}

/// [`cleanup_dead_ops`] for a pass that knows which ops may have become dead. `seeds`
/// must hold every op the run created, the producer of every value one of whose uses the
/// run removed (an operand it replaced, an operand of an op it erased) and every op whose
/// purity it may have changed. When the module held no dead op before the run (the
/// fixpoint group's edit log knows it), each op dead now is a seed or read only by ops
/// dead now, so after one count of uses only the seeds and the producers of the ops
/// removed are visited, and the same ops go as with the full sweep; otherwise this is the
/// full sweep.
pub(crate) fn cleanup_dead_ops_from(
    m: &mut Module,
    ctx: &mut PassContext,
    seeds: Vec<OpId>,
) -> usize {
    if !ctx.was_dead_free() {
        return cleanup_dead_ops(m, ctx);
    }
    let removed = remove_from_seeds(m, ctx, seeds);
    ctx.note_dead_free();
    removed
}

/// Removes the dead ops reachable from `seeds` (see [`cleanup_dead_ops_from`]): an op
/// goes when it is pure and nothing left reads its results; its operands (and those of
/// the ops of its regions, which go with it) then lose a use each.
fn remove_from_seeds(m: &mut Module, ctx: &mut PassContext, mut work: Vec<OpId>) -> usize {
    let mut uses = crate::ir_util::use_counts(m);
    let mut gone = vec![false; m.ops.len()];
    let mut removed: Vec<OpId> = Vec::new();
    while let Some(op) = work.pop() {
        if gone.get(op.index()).is_none_or(|&g| g) || m.op(op).parent.is_none() {
            continue;
        }
        if is_dead(m, op, &uses) {
            gone[op.index()] = true;
            removed.push(op);
            release(m, op, (&mut uses, &mut gone), &mut work);
        }
    }
    let mut regions: Vec<RegionId> = removed.iter().filter_map(|&o| m.op(o).parent).collect();
    regions.sort_unstable_by_key(|r| r.0);
    regions.dedup();
    for r in regions {
        // A region of a removed op went with it (and is not edited).
        if m.region(r).parent.is_some_and(|owner| gone[owner.index()]) {
            continue;
        }
        let mut ops = std::mem::take(&mut m.region_mut(r).ops);
        ops.retain(|o| !gone[o.index()]);
        m.region_mut(r).ops = ops;
        ctx.mark_region_edited(m, r);
    }
    for &op in &removed {
        m.op_mut(op).parent = None;
    }
    removed.len()
}

/// Drops the uses by removed op `op` and by the ops of its regions (marked gone too),
/// queueing the producers of values left unused.
fn release(m: &Module, op: OpId, (uses, gone): (&mut [u32], &mut [bool]), work: &mut Vec<OpId>) {
    let o = m.op(op);
    for &v in &o.operands {
        let u = &mut uses[v.index()];
        *u -= 1;
        if *u == 0 {
            if let neuronc_ir::ValueDef::Result(d, _) = m.value(v).def {
                work.push(d);
            }
        }
    }
    for &r in &o.regions {
        for &inner in &m.region(r).ops {
            gone[inner.index()] = true;
            release(m, inner, (&mut *uses, &mut *gone), work);
        }
    }
}

/// Who decides removals and records them: a pass's context (fuel, trace, edit log) or a
/// cleanup (no fuel, edit log only).
enum Remover<'a> {
    Pass(&'a mut PassContext),
    Cleanup(&'a mut PassContext),
}

/// Removes dead pure ops everywhere; returns how many were removed. With a context, each
/// removal is a rewrite (`dce`) that consumes fuel; without, removal is unconditional (used
/// by passes to clean up after their own rewrites). Every region must list each op after
/// the definitions it reads (the verifier's dominance rule), which passes keep while they
/// rewrite: uses are counted in that order.
pub fn remove_dead_ops(m: &mut Module, ctx: Option<&mut PassContext>) -> usize {
    // Uses by the kept ops visited so far (see the module docs).
    let mut uses = vec![0u32; m.values.len()];
    let mut removed = 0;
    let mut remover = ctx.map(Remover::Pass);
    for f in 0..m.funcs.len() {
        let body = m.funcs[f].body;
        removed += sweep(m, body, &mut uses, &mut remover);
    }
    removed
}

fn sweep(
    m: &mut Module,
    region: RegionId,
    uses: &mut [u32],
    remover: &mut Option<Remover>,
) -> usize {
    let mut removed = 0;
    // Compacts the op list in place, from the back: `ops[kept_from..]` are the ops kept
    // so far (the slots behind the visit position are free).
    let mut ops = std::mem::take(&mut m.region_mut(region).ops);
    let mut kept_from = ops.len();
    for i in (0..ops.len()).rev() {
        let op = ops[i];
        if is_dead(m, op, uses) {
            let allowed = match remover {
                Some(Remover::Pass(c)) => c.try_rewrite(NAME, m, op),
                _ => true,
            };
            if allowed {
                if let Some(Remover::Pass(c) | Remover::Cleanup(c)) = remover {
                    c.mark_region_edited(m, region);
                }
                m.op_mut(op).parent = None;
                continue;
            }
        }
        kept_from -= 1;
        ops[kept_from] = op;
        for &v in &m.op(op).operands {
            uses[v.index()] += 1;
        }
        for j in (0..m.op(op).regions.len()).rev() {
            let r = m.op(op).regions[j];
            removed += sweep(m, r, uses, remover);
        }
    }
    removed += kept_from;
    ops.drain(..kept_from);
    m.region_mut(region).ops = ops;
    removed
}

#[inline]
fn is_dead(m: &Module, op: OpId, uses: &[u32]) -> bool {
    m.op(op).results.iter().all(|r| uses[r.index()] == 0) && is_pure(m, op)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edits::EditLog;
    use neuronc_ir::{parse_module, print_module, NamedAttrs, OpKind, PrintOptions};

    /// `%3` instead of `%2` returned (so `%2`, then `%1`, are dead), a new unused op, and
    /// `%4`, dead from the start; returns the module and the seeds of that edit.
    fn edited() -> (Module, Vec<OpId>) {
        let mut m = parse_module(
            "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
               %0 = stablehlo.exponential %a : tensor<4xf32>
               %1 = stablehlo.negate %0 : tensor<4xf32>
               %2 = stablehlo.add %1, %a : tensor<4xf32>
               %3 = stablehlo.multiply %0, %a : tensor<4xf32>
               %4 = stablehlo.sine %a : tensor<4xf32>
               return %2 : tensor<4xf32>
             }",
        )
        .unwrap();
        let body = m.funcs[0].body;
        let ops = m.region(body).ops.clone();
        let (a, v3) = (m.region(body).args[0], m.op(ops[3]).results[0]);
        m.op_mut(ops[5]).operands[0] = v3;
        let ty = m.value_type(a);
        let new = m.create_op(OpKind::Exponential, vec![a], &[ty], NamedAttrs::new());
        m.op_mut(new).parent = Some(body);
        m.region_mut(body).ops.insert(5, new);
        (m, vec![ops[2], new])
    }

    fn text(m: &Module) -> String {
        print_module(m, &PrintOptions::default())
    }

    #[test]
    fn seeded_cleanup_removes_what_the_sweep_removes_in_a_dead_free_module() {
        // Oracle: the full sweep on the module without the op dead from the start.
        let (mut full, _) = edited();
        let body = full.funcs[0].body;
        full.region_mut(body).ops.remove(4);
        let mut ctx = PassContext::new();
        assert_eq!(cleanup_dead_ops(&mut full, &mut ctx), 3);

        let (mut m, seeds) = edited();
        m.region_mut(body).ops.remove(4);
        let mut log = EditLog::new(m.ops.len());
        log.begin();
        log.note_dead_free();
        log.end(NAME, true, m.ops.len(), false);
        log.begin();
        let mut ctx = PassContext::new();
        ctx.edits = Some(log);
        assert_eq!(cleanup_dead_ops_from(&mut m, &mut ctx, seeds), 3);
        assert_eq!(text(&m), text(&full));
    }

    #[test]
    fn seeded_cleanup_sweeps_everything_unless_the_module_was_dead_free() {
        let (mut full, _) = edited();
        let mut ctx = PassContext::new();
        assert_eq!(cleanup_dead_ops(&mut full, &mut ctx), 4);
        // No edit log: nothing known about dead ops before, so `%4` goes too.
        let (mut m, seeds) = edited();
        assert_eq!(cleanup_dead_ops_from(&mut m, &mut ctx, seeds), 4);
        assert_eq!(text(&m), text(&full));
    }
}
