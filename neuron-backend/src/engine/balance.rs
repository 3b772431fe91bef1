//! Windowed engine balancing: how much work only one engine (or only v2's shared
//! Vector/GpSimd SBUF port) can do in the kernels around the current one, so that
//! [`Lowerer::pick`] places flexible work (single-input elementwise ops, PSUM evictions,
//! casts, fills) on the engine that is least loaded *at that point of the program*.
//!
//! Owns: [`Lookahead`], [`WINDOW`], [`NEIGHBOUR_WEIGHT`] and [`Lowerer::lookahead`].
//!
//! # Why
//! Kernels are lowered in program order. A greedy choice on the load so far puts the
//! forward pass's flexible ops on VectorE while ScalarE is busier, and the optimizer's
//! two-input ops, which only VectorE/GpSimd can run, arrive later and find the shared
//! port loaded. Weighing the forced work of the next [`WINDOW`] kernels, and only the
//! work of the last [`WINDOW`] kernels, balances the engines over stretches of the
//! program that run at about the same time (measured on the BERT-base training step:
//! before the scheduler tie fix: all-program totals 27.04 → a window of 26 kernels 26.96 ms; such changes move it by about ±0.1 ms).
//! The current kernel weighs most ([`NEIGHBOUR_WEIGHT`]): its work done so far, and the
//! forced work of its tiles still to emit (two-input ops later in its records compete
//! with its flexible ops earlier in them, which a choice on the work so far misses).
//! Invariants: the estimate only steers the choice of engine; every instruction's cost
//! and the roofline's ideal work are computed exactly as before. Estimates use the ideal
//! per-element rates of [`CoreModel`] (no fixed overheads).

use crate::engine::classify::{OpWork, TWO_INPUT};
use crate::engine::combine::VECTOR_ONLY;
use crate::engine::cost::CoreModel;
use crate::engine::isa::Engine;
use crate::engine::lower::Lowerer;
use crate::engine::tiling::elems_bytes;
use neuronc_ir::OpId;

/// Forced work per compute engine (index as [`Engine::index`]) from each kernel position
/// to the end of the order: `suffix[pos]` covers positions `pos..`.
#[derive(Clone, Debug, Default)]
pub struct Lookahead {
    suffix: Vec<[f64; 4]>,
    /// Engine busy time lowered before each kernel position.
    history: Vec<[f64; 4]>,
}

/// Kernels on each side of the current one whose work the balance weighs (about two
/// transformer layers): work far ahead or long done does not compete for the same time.
pub const WINDOW: usize = 26;

/// Weight of the neighbouring kernels' work against the current kernel's own. Kernels on a
/// dependency chain (a transformer layer's forward, its backward data path) run mostly
/// one after the other, each taking as long as its busiest engine, so a kernel's own
/// balance matters most; the neighbours still count for the kernels that overlap (weight
/// updates beside the backward chain, the independent small kernels of small programs).
/// Measured (predicted ms; BERT-base training step / BERT-large training step / sum over
/// the 72 `nir/` snapshot traces relative to weight 1 without the kernel's own forced
/// work): 1 → 23.371 / 68.632 / +0.2%, 0.5 → 23.345 / 68.579 / +0.4%, 0.25 → 23.323 /
/// 68.543 / +0.6%, 0.1 → 23.291 / 68.529 / +0.9%, 0 → 23.755 / - / -; before the kernel's
/// own forced work counted: 23.429 / 68.606 / 0.
pub const NEIGHBOUR_WEIGHT: f64 = 0.25;

impl Lookahead {
    /// Forced work of the [`WINDOW`] kernels after position `pos`.
    fn after(&self, pos: usize) -> [f64; 4] {
        let at = |p: usize| self.suffix.get(p).copied().unwrap_or([0.0; 4]);
        let (a, b) = (at(pos + 1), at(pos + 1 + WINDOW));
        std::array::from_fn(|i| a[i] - b[i])
    }

    /// Forced work of the kernel at position `pos` itself, scaled by `left`: the share of
    /// its tiles not yet emitted.
    fn own(&self, pos: usize, left: f64) -> [f64; 4] {
        let at = |p: usize| self.suffix.get(p).copied().unwrap_or([0.0; 4]);
        let (a, b) = (at(pos), at(pos + 1));
        std::array::from_fn(|i| (a[i] - b[i]) * left)
    }

    /// The loads [`Lowerer::pick`] weighs, given the total `busy` so far and the share
    /// `left` of the current kernel's tiles not yet emitted: (work done, work to come) per
    /// engine, each the current kernel's own plus [`NEIGHBOUR_WEIGHT`] times that of its
    /// [`WINDOW`] neighbours on that side.
    pub fn loads(&self, pos: usize, busy: [f64; 4], left: f64) -> ([f64; 4], [f64; 4]) {
        let (after, own) = (self.after(pos), self.own(pos, left));
        let (recent, current) = (self.recent(pos, busy), self.current(pos, busy));
        let w = NEIGHBOUR_WEIGHT;
        (
            std::array::from_fn(|i| current[i] + w * (recent[i] - current[i])),
            std::array::from_fn(|i| own[i] + w * after[i]),
        )
    }

    /// Records the busy time lowered before kernel position `pos`.
    pub fn record(&mut self, pos: usize, busy: [f64; 4]) {
        self.history.truncate(pos);
        self.history.push(busy);
    }

    /// Busy time lowered in the current kernel (at `pos`) so far, given the total `busy`.
    fn current(&self, pos: usize, busy: [f64; 4]) -> [f64; 4] {
        let base = self.history.get(pos).copied().unwrap_or([0.0; 4]);
        std::array::from_fn(|i| busy[i] - base[i])
    }

    /// Busy time lowered in the [`WINDOW`] kernels up to now, given the total `busy`.
    fn recent(&self, pos: usize, busy: [f64; 4]) -> [f64; 4] {
        let base = self
            .history
            .get(pos.saturating_sub(WINDOW))
            .copied()
            .unwrap_or([0.0; 4]);
        std::array::from_fn(|i| busy[i] - base[i])
    }
}

impl Lowerer<'_> {
    /// The forced work of every kernel of `order`, as suffix sums.
    pub(crate) fn lookahead(&self, order: &[usize]) -> Lookahead {
        let mut per: Vec<[f64; 4]> = order.iter().map(|&k| self.forced_work(k)).collect();
        let mut acc = [0.0; 4];
        for w in per.iter_mut().rev() {
            for (a, x) in acc.iter_mut().zip(w.iter()) {
                *a += *x;
            }
            *w = acc;
        }
        per.push([0.0; 4]);
        Lookahead {
            suffix: per,
            history: Vec::new(),
        }
    }

    /// Ideal seconds of single-engine work in kernel `k`.
    fn forced_work(&self, k: usize) -> [f64; 4] {
        let model = &self.opts.model;
        let kernel = &self.kernels[k];
        let mut ops: Vec<OpId> = kernel
            .ops
            .iter()
            .chain(&kernel.duplicated)
            .copied()
            .collect();
        ops.sort_by_key(|o| self.plan.graph.pos.get(o).copied().unwrap_or(usize::MAX));
        let works: Vec<OpWork> = ops.iter().map(|&op| self.work_of(op, true)).collect();
        // Merged ops do no work of their own ([`crate::engine::combine`]).
        let (_, works, _) = self.combine(&ops, &works);
        let mut out = [0.0; 4];
        for (&op, work) in ops.iter().zip(works) {
            let o = self.m.op(op);
            let elems = o
                .results
                .iter()
                .chain(&o.operands)
                .map(|&v| elems_bytes(self.m, v).0)
                .max()
                .unwrap_or(0) as f64;
            let rows = elems / model.partitions as f64;
            match work {
                OpWork::Elementwise {
                    inputs, engines, ..
                } => {
                    if engines == TWO_INPUT || engines == VECTOR_ONLY {
                        out[1] += rows * per_elem(model, Engine::Vector, inputs);
                    } else if engines == [Engine::Scalar] {
                        out[2] += rows * per_elem(model, Engine::Scalar, 1);
                    }
                }
                OpWork::ReduceFree {
                    accumulate: true, ..
                } => {}
                OpWork::ReduceFree { inputs, .. } => {
                    out[1] += rows * per_elem(model, Engine::Vector, inputs);
                }
                OpWork::ReducePartition { .. } | OpWork::Pool { .. } => {
                    out[3] += rows * per_elem(model, Engine::GpSimd, 1);
                }
                OpWork::Opaque { cycles, .. } => out[3] += cycles / model.gpsimd_hz,
                OpWork::Matmul | OpWork::Relabel | OpWork::HbmConstant => {}
            }
        }
        out
    }
}

/// Ideal seconds per free element of one partition row.
fn per_elem(model: &CoreModel, e: Engine, inputs: u8) -> f64 {
    model.ew_ideal_s(e, 1, inputs)
}

#[cfg(test)]
mod tests {
    use super::{Lookahead, NEIGHBOUR_WEIGHT};

    /// Three kernels whose forced work is k0: 1 s DVE, k1: 2 s DVE + 4 s ACT, k2: 8 s ACT.
    /// At k1, with 5 s DVE + 1 s ACT lowered by k0 and 1 s DVE + 2 s ACT by k1 so far and
    /// half of k1's tiles still to emit: done = k1's own + w × k0's; to come = half of
    /// k1's forced work + w × k2's.
    #[test]
    fn the_current_kernel_counts_fully_and_its_neighbours_by_the_weight() {
        let mut la = Lookahead {
            suffix: vec![
                [0.0, 3.0, 12.0, 0.0],
                [0.0, 2.0, 12.0, 0.0],
                [0.0, 0.0, 8.0, 0.0],
                [0.0; 4],
            ],
            history: Vec::new(),
        };
        la.record(0, [0.0; 4]);
        la.record(1, [0.0, 5.0, 1.0, 0.0]);
        let (done, to_come) = la.loads(1, [0.0, 6.0, 3.0, 0.0], 0.5);
        let w = NEIGHBOUR_WEIGHT;
        assert_eq!(done, [0.0, 1.0 + w * 5.0, 2.0 + w * 1.0, 0.0]);
        assert_eq!(to_come, [0.0, 1.0, 2.0 + w * 8.0, 0.0]);
    }
}
