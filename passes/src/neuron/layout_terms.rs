//! The terms of a layout plan: what each op contributes to [`LayoutPlan`] (its cost, its
//! relayouts, its cross-partition reductions) under the solver's current layouts.
//!
//! Owns [`Term`], `Solver::scan` and `Solver::finish`. The solver scans every op once
//! after its first sweeps: the chain moves ([`super::layout_chain`]) start from the
//! relayouts of that scan, and the finished plan reuses its terms at every op whose
//! layouts did not change since (only the ops defining or reading a value that moved are
//! scanned again), instead of scanning every op twice more.
//! Invariants: terms are in program order, and within an op in the order the plan records
//! them (the op's own cost, then its operand edges in operand order); only terms of
//! nonzero cost are kept (adding a zero changes no sum), so the plan's cost is summed
//! in the same order as a full scan would, bit for bit. An op's terms are a function of
//! the layouts of its first result and its operands only.

use super::graph::value_bytes;
use super::layout::{LayoutPlan, Part, Relayout, Solver};
use super::layout_want::{Want, NONE};
use neuronc_ir::ValueId;

/// One nonzero term of the plan's cost, at op `pos` (position in the region order).
pub(super) struct Term {
    pub(super) pos: u32,
    pub(super) cost: f64,
    pub(super) what: Recorded,
}

/// What a [`Term`] records besides its cost.
pub(super) enum Recorded {
    Nothing,
    /// A relayout; `site` when a chain move may remove it (the op wants a layout of the
    /// operand, and a partition dimension at that).
    Relayout {
        relayout: Relayout,
        site: bool,
    },
    /// A cross-partition reduction by the op.
    Cross,
}

impl Solver<'_> {
    /// The terms of every op under the current layouts, in program order.
    pub(super) fn scan(&self) -> Vec<Term> {
        // Real traces have fewer terms than ops; reserving that many spares copying the
        // terms as the list grows.
        let mut out = Vec::with_capacity(self.g.order.len());
        for p in 0..self.g.order.len() {
            self.terms_at(p, &mut out);
        }
        out
    }

    /// Appends the terms of op `p`.
    fn terms_at(&self, p: usize, out: &mut Vec<Term>) {
        // Elsewhere every layout costs zero: no cost, no relayout.
        if !self.costs.costly(p) {
            return;
        }
        let (m, op) = (self.m, self.g.order[p]);
        let pos = p as u32;
        let res = self.costs.first_result(p);
        let r = match res {
            NONE => None,
            v => self.part[v as usize],
        };
        if res != NONE {
            let own = self.costs.op_cost(p, r);
            if own != 0.0 {
                let what = if own > 0.0 {
                    let relayout = Relayout {
                        value: ValueId(res),
                        consumer: op,
                        operand: usize::MAX,
                        from: r,
                        to: r,
                        bytes: value_bytes(m, ValueId(res)),
                    };
                    let site = false;
                    Recorded::Relayout { relayout, site }
                } else {
                    Recorded::Nothing
                };
                out.push(Term {
                    pos,
                    cost: own,
                    what,
                });
            }
        }
        for (i, v, q, cost) in self.costs.costly_edges(p, r, &self.part) {
            let w = self.costs.want(p, i, r);
            let what = match (w, q) {
                (Want::Reduce { reduced, .. }, Some(d)) if reduced.contains(d) => Recorded::Cross,
                _ => {
                    let (to, wanted) = match w {
                        Want::Exact(p) | Want::Reduce { keep: p, .. } => (p, true),
                        Want::OneOf(d) => (d.first(), true),
                        Want::Any => (q, false),
                    };
                    let relayout = Relayout {
                        value: ValueId(v),
                        consumer: op,
                        operand: i,
                        from: q,
                        to,
                        bytes: value_bytes(m, ValueId(v)),
                    };
                    let site = wanted && to.is_some();
                    Recorded::Relayout { relayout, site }
                }
            };
            out.push(Term { pos, cost, what });
        }
    }

    /// The plan from the terms of a scan (`terms`), after the layouts of the values
    /// `changed` (repeats allowed) changed: the ops defining one as their first result or
    /// reading one are scanned again, the others keep their terms.
    pub(super) fn finish(self, terms: Vec<Term>, changed: &[u32]) -> LayoutPlan {
        let mut again: Vec<u32> = Vec::new();
        for &v in changed {
            again.extend(self.costs.def0(v).map(|p| p as u32));
            let uses = self.costs.uses(v).iter();
            again.extend(uses.map(|&e| self.costs.edge_op(e) as u32));
        }
        again.sort_unstable();
        again.dedup();
        let order = &self.g.order;
        let mut plan = LayoutPlan {
            relayouts: Vec::with_capacity(terms.len()),
            ..LayoutPlan::default()
        };
        let mut fresh = Vec::new();
        let mut old = terms.into_iter().peekable();
        for &p in &again {
            while let Some(t) = old.next_if(|t| t.pos < p) {
                add_term(&mut plan, t, order);
            }
            while old.next_if(|t| t.pos == p).is_some() {}
            self.terms_at(p as usize, &mut fresh);
            for t in fresh.drain(..) {
                add_term(&mut plan, t, order);
            }
        }
        for t in old {
            add_term(&mut plan, t, order);
        }
        plan.part = self.part;
        plan
    }
}

/// Adds term `t` to `plan` (`order`: the region's ops).
fn add_term(plan: &mut LayoutPlan, t: Term, order: &[neuronc_ir::OpId]) {
    plan.cost += t.cost;
    match t.what {
        Recorded::Nothing => {}
        Recorded::Relayout { relayout, .. } => plan.relayouts.push(relayout),
        Recorded::Cross => plan.cross_partition_reductions.push(order[t.pos as usize]),
    }
}

/// The relayouts of `terms` a chain move may remove: (operand, the layout it wants), in
/// program order.
pub(super) fn relayout_sites(terms: &[Term]) -> impl Iterator<Item = (u32, Part)> + '_ {
    terms.iter().filter_map(|t| match &t.what {
        Recorded::Relayout {
            relayout,
            site: true,
        } => Some((relayout.value.0, relayout.to)),
        _ => None,
    })
}
