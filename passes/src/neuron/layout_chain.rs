//! Chain moves of layout assignment: taking a whole chain of layout-only views
//! (`reshape`, `transpose`) and the elementwise group it starts from to the layouts that
//! remove one relayout, when that lowers the total cost.
//!
//! Owns: `Solver::chain_moves`. Coordinate descent moves one elementwise group at a time,
//! and a view between two groups maps one partition dimension to another, so a relayout at
//! the end of `producer -> reshape -> transpose -> reshape -> matmul` only disappears if
//! the producer's group and every view in between change together: each single step costs
//! more, and the sweeps never take it. Typical case: the V projection of attention, whose
//! bias add prefers features on partitions while `P·V` contracts over tokens. When the
//! group the chain reaches is itself fed through a view (torch_xla's lazy capture reshapes
//! the matmul result to 3-D before the bias add), moving the path alone still leaves a
//! relayout at that view; then the move also takes the views that feed the group's
//! members, back to their own producers (`Solver::chain_tree`), within the same limits.
//! Invariants: a move only sets values to candidate layouts of their types, and is kept
//! only if the summed cost at every op it touches drops (the costs of all other ops do not
//! read the moved layouts), so the total cost never rises; deterministic order.

use super::layout::{Part, Solver};
use super::layout_terms::{relayout_sites, Term};
use super::layout_want::{Want, NONE};
use neuronc_ir::{OpKind, ValueDef, ValueId};

/// Longest view chain followed back from a relayout.
const MAX_CHAIN: usize = 16;
/// Most values one move may change. A move is evaluated at every op around the values it
/// changes; moving a large group (a residual stream) for one relayout never paid on the
/// BERT, LayoutLM and ViT traces (0 of 144 tries above 128 values were kept, all kept
/// moves had at most 32), and evaluating those tries cost 4 ms of `opt -O2` on the
/// BERT-base training step.
const MAX_MOVE: usize = 32;

impl Solver<'_> {
    /// Tries a chain move at every relayout of `terms` (the plan's terms under the current
    /// layouts, [`super::layout_terms`]), in program order (one pass: on every fixture a
    /// second pass over the remaining relayouts kept nothing, and each pass costs a scan
    /// of all edges). `group_of[v]` is the index in `groups` of `v`'s elementwise group (or
    /// `NONE`). Returns the values of the moves kept (sorted, distinct): every value whose
    /// layout changed is one of them.
    pub(super) fn chain_moves(
        &mut self,
        group_of: &[u32],
        groups: &[(&[u32], &[Part])],
        terms: &[Term],
    ) -> Vec<u32> {
        let mut moved = Vec::new();
        // A move is decided by where its chain starts and what it wants there.
        let mut tried = rustc_hash::FxHashSet::default();
        for (v, to) in relayout_sites(terms) {
            // Without a view on the path (the relayout reads an elementwise result
            // directly), the move starts at `v` itself.
            let path = self.chain_to(v, to, group_of, groups);
            let start = path.as_ref().map_or((v, to), |p| p.0);
            if !tried.insert(start) {
                continue;
            }
            let path_len = match path {
                Some((_, moves)) if self.try_move(&moves) => {
                    moved.extend(moves.iter().map(|&(y, _)| y));
                    continue;
                }
                Some((_, moves)) => moves.len(),
                None => 0,
            };
            // The path alone did not pay (or there is none): also take back the views
            // that feed the group it ended in (a bias add after a reshape of the matmul
            // result).
            if let Some(wide) = self.chain_tree(v, to, group_of, groups) {
                if wide.len() > path_len && self.try_move(&wide) {
                    moved.extend(wide.iter().map(|&(y, _)| y));
                }
            }
        }
        moved.sort_unstable();
        moved.dedup();
        moved
    }

    /// The layouts that give `v` layout `to`: back through the views that define it (at
    /// least one), each operand taking what its view wants, to the first non-view value,
    /// plus the elementwise groups of all of them; and that first value with the layout it
    /// takes. `None` when some value cannot take its layout, when there is no view (the
    /// sweeps already tried moving the group alone), or when nothing would change.
    #[allow(clippy::type_complexity)]
    fn chain_to(
        &self,
        v: u32,
        to: Part,
        group_of: &[u32],
        groups: &[(&[u32], &[Part])],
    ) -> Option<((u32, Part), Vec<(u32, Part)>)> {
        let mut moves = Vec::new();
        let (mut x, mut want) = (v, to);
        let mut views = 0;
        for _ in 0..MAX_CHAIN {
            let (g, members) = self.movers(&x, want, group_of, groups)?;
            if g != NONE && moves.len() + members.len() > MAX_MOVE {
                return None;
            }
            moves.extend(members.iter().map(|&y| (y, want)));
            // The walk stops at the first value that is not a view's result; that value
            // must be a first result of an op the cost model knows.
            let first = matches!(self.m.value(ValueId(x)).def, ValueDef::Result(_, 0));
            if !first || self.costs.def0(x).is_none() {
                return None;
            }
            let Some(next) = self.view_operand(x, want) else {
                break;
            };
            (x, want) = next?;
            views += 1;
        }
        Some(((x, want), self.settle(moves, views)?))
    }

    /// Like [`Self::chain_to`], but when the walk reaches an elementwise group it also
    /// follows back the views that define the group's other members, so that
    /// `matmul -> reshape -> add(bias) -> reshape -> transpose -> reshape -> matmul` moves
    /// as one. `None` under the same conditions as `chain_to`, or when the values or
    /// views exceed the limits.
    #[allow(clippy::type_complexity)]
    fn chain_tree(
        &self,
        v: u32,
        to: Part,
        group_of: &[u32],
        groups: &[(&[u32], &[Part])],
    ) -> Option<Vec<(u32, Part)>> {
        let mut moves: Vec<(u32, Part)> = Vec::new();
        let mut work = vec![(v, to)];
        let mut views = 0;
        // Groups taken so far, with their layout: a group reached again is taken once,
        // and reached with another layout, there is no single move.
        let mut seen: Vec<(u32, Part)> = Vec::new();
        while let Some((x, want)) = work.pop() {
            let (g, members) = self.movers(&x, want, group_of, groups)?;
            if g != NONE {
                match seen.iter().find(|s| s.0 == g) {
                    Some(&(_, q)) if q == want => continue,
                    Some(_) => return None,
                    None => seen.push((g, want)),
                }
            }
            if moves.len() + members.len() > MAX_MOVE {
                return None;
            }
            for &y in members {
                moves.push((y, want));
                if let Some(next) = self.view_operand(y, want) {
                    views += 1;
                    work.push(next?);
                }
            }
            if views > MAX_CHAIN {
                return None;
            }
        }
        self.settle(moves, views)
    }

    /// The elementwise group of `x` (`NONE` if it has none) and the values that take
    /// layout `want` with `x`: the group's members, or `x` alone. `None` when `x` or its
    /// group cannot take `want`.
    fn movers<'a>(
        &self,
        x: &'a u32,
        want: Part,
        group_of: &[u32],
        groups: &[(&'a [u32], &[Part])],
    ) -> Option<(u32, &'a [u32])> {
        if !self.types.cands(self.m, ValueId(*x)).contains(&want) {
            return None;
        }
        match group_of.get(*x as usize) {
            Some(&g) if g != NONE => {
                let (members, cands) = groups[g as usize];
                cands.contains(&want).then_some((g, members))
            }
            _ => Some((NONE, std::slice::from_ref(x))),
        }
    }

    /// `moves` as one move, sorted and without repeats; `None` when it follows no view
    /// (`views`), gives a value two layouts, changes nothing or is too large.
    fn settle(&self, mut moves: Vec<(u32, Part)>, views: usize) -> Option<Vec<(u32, Part)>> {
        moves.sort_unstable();
        moves.dedup();
        let clash = moves.windows(2).any(|w| w[0].0 == w[1].0);
        let changes = moves.iter().any(|&(y, q)| self.part[y as usize] != q);
        let small = moves.len() <= MAX_MOVE;
        (views > 0 && !clash && changes && small).then_some(moves)
    }

    /// When `y` is the result of a view (`reshape`, `transpose`): `Some` of its operand
    /// with the layout the view wants for result layout `want` (`Some(None)` when the view
    /// wants no exact layout); `None` when `y` is not a view result.
    fn view_operand(&self, y: u32, want: Part) -> Option<Option<(u32, Part)>> {
        let ValueDef::Result(op, 0) = self.m.value(ValueId(y)).def else {
            return None;
        };
        if !matches!(self.m.op(op).kind, OpKind::Reshape | OpKind::Transpose) {
            return None;
        }
        let pos = self.costs.def0(y)?;
        let Want::Exact(q @ Some(_)) = self.costs.want(pos, 0, want) else {
            return Some(None);
        };
        Some(self.costs.operands(pos).next().map(|x| (x, q)))
    }

    /// Applies `moves` if the cost at the ops they touch drops; else leaves `part` as it
    /// was. Returns whether it was kept.
    fn try_move(&mut self, moves: &[(u32, Part)]) -> bool {
        // The ops defining or reading a moved value, sized up front (a move touches a few
        // dozen ops, and growing the list step by step cost more than filling it).
        let touched = moves
            .iter()
            .map(|&(y, _)| 1 + self.costs.uses(y).len())
            .sum();
        let mut ops: Vec<usize> = Vec::with_capacity(touched);
        for &(y, _) in moves {
            ops.extend(self.costs.def0(y));
            ops.extend(self.costs.uses(y).iter().map(|&e| self.costs.edge_op(e)));
        }
        ops.sort_unstable();
        ops.dedup();
        let cost = |s: &Self| {
            ops.iter()
                .map(|&p| s.costs.cost_at(p, &s.part))
                .sum::<f64>()
        };
        let before = cost(self);
        let old: Vec<(u32, Part)> = moves
            .iter()
            .map(|&(y, _)| (y, self.part[y as usize]))
            .collect();
        for &(y, q) in moves {
            self.part[y as usize] = q;
        }
        if cost(self) < before - 1e-9 {
            return true;
        }
        for (y, q) in old {
            self.part[y as usize] = q;
        }
        false
    }
}
