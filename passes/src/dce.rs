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

fn is_dead(m: &Module, op: OpId, uses: &[u32]) -> bool {
    m.op(op).results.iter().all(|r| uses[r.index()] == 0) && is_pure(m, op)
}
