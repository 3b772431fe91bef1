//! Functional simulation of a compiled function: runs the fusion plan kernel by kernel in
//! the order the engine back end lowers them, with the engines' numerics.
//!
//! Owns: [`simulate`], [`SimOptions`], [`SimError`].
//!
//! # What is simulated
//! * **Order and data flow of the compiled program.** Kernels run in the back end's
//!   topological kernel order (`engine::lower::kernels_in_order`), each op of a kernel in
//!   program order, its cheap duplicated producers recomputed locally. A kernel may read
//!   only its declared inputs and what it computes itself; values local to a kernel are
//!   dropped when it ends and kernel outputs after their last consumer, so a plan that
//!   forgets an input or an output, or orders kernels wrongly, fails here with
//!   [`SimError::Plan`] instead of silently reading a value.
//! * **TensorE numerics** ([`psum`]): `dot_general` contracts in 128-row tiles with FP32
//!   PSUM accumulation and rounds on eviction; `--auto-cast matmult|all` rounds the
//!   operands to BF16.
//! * **Everything else** uses the interpreter's kernels through
//!   [`neuronc_interp::step::Stepper`] (ScalarE's activation tables are modelled as exact
//!   functions; the time side of the simulation is the engine schedule, see
//!   [`crate::engine::schedule`]).
//!
//! Invariants: deterministic; never panics on user input; results in the function's
//! result order.

pub mod psum;

use crate::engine::lower::kernels_in_order;
use crate::engine::{AutoCast, EngineError};
use neuronc_interp::step::Stepper;
use neuronc_interp::{InterpError, Tensor};
use neuronc_ir::{Attr, Func, Module, OpId, OpKind, ValueId};
use neuronc_passes::neuron::fusion::Kernel;
use neuronc_passes::neuron::NeuronPlan;
use rustc_hash::FxHashSet;

/// Options of the functional simulation.
#[derive(Clone, Copy, Debug, Default)]
pub struct SimOptions {
    pub auto_cast: AutoCast,
}

/// Errors of the functional simulation.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Interp(#[from] InterpError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("kernel {kernel}: {msg}")]
    Plan { kernel: usize, msg: String },
    #[error("@{func} takes {expected} argument(s), got {got}")]
    ArgCount {
        func: String,
        expected: usize,
        got: usize,
    },
}

/// Runs `func` (the function `plan` was made for) on `inputs`.
pub fn simulate(
    m: &Module,
    func: &Func,
    plan: &NeuronPlan,
    opts: &SimOptions,
    inputs: Vec<Tensor>,
) -> Result<Vec<Tensor>, SimError> {
    let body = m.region(func.body);
    if body.args.len() != inputs.len() {
        return Err(SimError::ArgCount {
            func: func.name.clone(),
            expected: body.args.len(),
            got: inputs.len(),
        });
    }
    let (kernels, order) = kernels_in_order(m, plan)?;
    let mut sim = Sim {
        m,
        plan,
        opts,
        st: Stepper::new(m),
        last_use: Default::default(),
        outputs: kernels
            .iter()
            .flat_map(|k| k.outputs.iter().copied())
            .collect(),
    };
    for (&a, t) in body.args.iter().zip(inputs) {
        sim.st.set(a, t);
    }
    let returned = returned_values(m, func);
    sim.last_use = last_uses(&kernels, &order, &returned);
    for (pos, &k) in order.iter().enumerate() {
        sim.run_kernel(k, pos, &kernels[k])?;
    }
    returned
        .iter()
        .map(|&v| {
            sim.st.tensor(v).cloned().ok_or_else(|| SimError::Plan {
                kernel: usize::MAX,
                msg: format!("the function returns {v}, which no kernel produced"),
            })
        })
        .collect()
}

/// The terminator's operands of `func`'s body.
fn returned_values(m: &Module, func: &Func) -> Vec<ValueId> {
    m.region(func.body)
        .ops
        .last()
        .map(|&t| m.op(t))
        .filter(|o| o.kind.is_terminator())
        .map(|o| o.operands.clone())
        .unwrap_or_default()
}

/// For each value some kernel reads, the last kernel position reading it (returned values
/// live to the end).
fn last_uses(
    kernels: &[Kernel],
    order: &[usize],
    returned: &[ValueId],
) -> rustc_hash::FxHashMap<ValueId, usize> {
    let mut last = rustc_hash::FxHashMap::default();
    for (pos, &k) in order.iter().enumerate() {
        for &v in &kernels[k].inputs {
            last.insert(v, pos);
        }
    }
    for &v in returned {
        last.insert(v, usize::MAX);
    }
    last
}

struct Sim<'a> {
    m: &'a Module,
    plan: &'a NeuronPlan,
    opts: &'a SimOptions,
    st: Stepper<'a>,
    last_use: rustc_hash::FxHashMap<ValueId, usize>,
    /// Every kernel output (values that outlive the kernel computing them).
    outputs: FxHashSet<ValueId>,
}

impl Sim<'_> {
    fn run_kernel(&mut self, k: usize, pos: usize, kernel: &Kernel) -> Result<(), SimError> {
        let m = self.m;
        let mut ops: Vec<OpId> = kernel
            .ops
            .iter()
            .chain(&kernel.duplicated)
            .copied()
            .collect();
        ops.sort_by_key(|o| self.plan.graph.pos.get(o).copied().unwrap_or(usize::MAX));
        ops.dedup();
        let local: FxHashSet<ValueId> = ops
            .iter()
            .flat_map(|&o| m.op(o).results.iter().copied())
            .collect();
        let inputs: FxHashSet<ValueId> = kernel.inputs.iter().copied().collect();
        for &op in &ops {
            for &v in &m.op(op).operands {
                if !local.contains(&v) && !inputs.contains(&v) {
                    return Err(plan_err(k, m, op, v, "is not among the kernel's inputs"));
                }
                if !self.st.has(v) {
                    return Err(plan_err(k, m, op, v, "has not been computed yet"));
                }
            }
            self.exec(op)?;
        }
        for &v in &local {
            if !self.outputs.contains(&v) {
                self.st.clear(v);
            }
        }
        for &v in &kernel.inputs {
            if self.last_use.get(&v) == Some(&pos) {
                self.st.clear(v);
            }
        }
        Ok(())
    }

    /// Runs one op: `dot_general` on TensorE numerics, everything else as interpreted.
    fn exec(&mut self, op: OpId) -> Result<(), SimError> {
        let o = self.m.op(op);
        if o.kind == OpKind::DotGeneral {
            if let Some(t) = self.tensor_engine(op)? {
                self.st.set(o.results[0], t);
                return Ok(());
            }
        }
        Ok(self.st.exec(op)?)
    }

    fn tensor_engine(&self, op: OpId) -> Result<Option<Tensor>, SimError> {
        let o = self.m.op(op);
        let (Some(Attr::DotDims(dims)), [l, r], [res]) = (
            o.attrs.get("dot_dimension_numbers"),
            o.operands.as_slice(),
            o.results.as_slice(),
        ) else {
            return Ok(None);
        };
        let (Some(lhs), Some(rhs), Some(out)) = (
            self.st.tensor(*l),
            self.st.tensor(*r),
            self.m.tensor_type(*res),
        ) else {
            return Ok(None);
        };
        match psum::tensor_engine_dot(lhs, rhs, dims, out, self.opts.auto_cast) {
            None => Ok(None),
            Some(Ok(t)) => Ok(Some(t)),
            Some(Err(msg)) => Err(InterpError::Op {
                op: "stablehlo.dot_general".into(),
                msg,
            }
            .into()),
        }
    }
}

fn plan_err(k: usize, m: &Module, op: OpId, v: ValueId, what: &str) -> SimError {
    SimError::Plan {
        kernel: k,
        msg: format!("'{}' reads {v}, which {what}", m.op(op).kind.name()),
    }
}
