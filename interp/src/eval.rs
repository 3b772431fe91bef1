//! The evaluator core: environments, regions, functions and control flow.
//!
//! Owns: [`Val`] (a runtime value: tensor, tuple or token), [`Interp`] (one simulated
//! process: its value environment, constant cache and process ids) and the execution of
//! regions, `func.call`, `while`, `if` and `case`. Per-op semantics live in the other
//! modules; [`crate::dispatch`] routes each op to them.
//! Invariants: the environment is indexed by [`ValueId`] (SSA: each slot is written by
//! exactly one definition per execution of its region); each region runs by its cached
//! [`Plan`]: a value defined in a region is dropped after its last use in that region, so
//! peak memory follows liveness, and transposes feeding only `dot_general`s are folded
//! into them.

use crate::collectives::Comm;
use crate::error::InterpError;
use crate::plan::{Plan, Step};
use crate::tensor::Tensor;
use neuronc_ir::{Module, OpId, OpKind, RegionId, ValueId};
use rustc_hash::FxHashMap;
use std::rc::Rc;
use std::sync::Arc;

/// A runtime value.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    T(Tensor),
    Tuple(Vec<Val>),
    Token,
}

impl Val {
    pub fn tensor(&self) -> Option<&Tensor> {
        match self {
            Val::T(t) => Some(t),
            _ => None,
        }
    }
}

/// Maximum nesting of calls and regions (guards against runaway recursion).
const MAX_DEPTH: u32 = 256;

/// One simulated process running a module.
pub struct Interp<'m> {
    pub m: &'m Module,
    env: Vec<Option<Val>>,
    depth: u32,
    pub(crate) consts: FxHashMap<OpId, Tensor>,
    plans: FxHashMap<RegionId, Rc<Plan>>,
    pub replica: u32,
    pub partition: u32,
    pub(crate) comm: Option<Arc<Comm>>,
    /// Time per op kind of the ops of the outermost region, when profiling.
    pub(crate) profile: Option<crate::profile::Profile>,
}

pub(crate) type Res<T> = Result<T, InterpError>;

impl<'m> Interp<'m> {
    pub fn new(m: &'m Module) -> Self {
        Interp {
            m,
            env: vec![None; m.values.len()],
            depth: 0,
            consts: FxHashMap::default(),
            plans: FxHashMap::default(),
            replica: 0,
            partition: 0,
            comm: None,
            profile: None,
        }
    }

    /// The current value of `v`.
    pub(crate) fn get(&self, v: ValueId) -> Res<&Val> {
        self.env
            .get(v.index())
            .and_then(|s| s.as_ref())
            .ok_or_else(|| InterpError::Op {
                op: "(evaluator)".into(),
                msg: format!("value {v} used before definition"),
            })
    }

    /// The current tensor value of `v`.
    pub(crate) fn tensor(&self, v: ValueId) -> Res<&Tensor> {
        self.get(v)?.tensor().ok_or_else(|| InterpError::Op {
            op: "(evaluator)".into(),
            msg: format!("value {v} is not a tensor"),
        })
    }

    /// Unbinds `v`.
    pub(crate) fn clear(&mut self, v: ValueId) {
        if let Some(slot) = self.env.get_mut(v.index()) {
            *slot = None;
        }
    }

    /// Binds the values an op produced to its results (checking their number).
    pub(crate) fn bind_results(&mut self, op: OpId, results: Vec<Val>) -> Res<()> {
        let o = self.m.op(op);
        if results.len() != o.results.len() {
            return Err(InterpError::Op {
                op: o.kind.name().into(),
                msg: format!(
                    "produced {} results, expected {}",
                    results.len(),
                    o.results.len()
                ),
            });
        }
        for (&r, v) in o.results.iter().zip(results) {
            self.set(r, v);
        }
        Ok(())
    }

    pub(crate) fn set(&mut self, v: ValueId, val: Val) {
        if let Some(slot) = self.env.get_mut(v.index()) {
            *slot = Some(val);
        }
    }

    /// Calls function `name` with `args`.
    pub fn call(&mut self, name: &str, args: Vec<Val>) -> Res<Vec<Val>> {
        let f = self
            .m
            .func(name)
            .ok_or_else(|| InterpError::NoSuchFunction(name.to_string()))?;
        if self.depth >= MAX_DEPTH {
            return Err(InterpError::Recursion(name.to_string()));
        }
        let nargs = self.m.region(f.body).args.len();
        if nargs != args.len() {
            return Err(InterpError::ArgCount {
                func: name.to_string(),
                expected: nargs,
                got: args.len(),
            });
        }
        self.run_region(f.body, args)
    }

    /// Runs `region` with block arguments `args`; returns the terminator's operands.
    pub fn run_region(&mut self, region: RegionId, args: Vec<Val>) -> Res<Vec<Val>> {
        self.depth += 1;
        let r = self.run_region_inner(region, args);
        self.depth -= 1;
        r
    }

    fn run_region_inner(&mut self, region: RegionId, args: Vec<Val>) -> Res<Vec<Val>> {
        let m = self.m;
        let reg = m.region(region);
        if reg.args.len() != args.len() {
            return Err(InterpError::Op {
                op: "(region)".into(),
                msg: format!("expects {} arguments, got {}", reg.args.len(), args.len()),
            });
        }
        for (&a, v) in reg.args.iter().zip(args) {
            self.set(a, v);
        }
        let plan = self.plan(region);
        for (i, &op) in reg.ops.iter().enumerate() {
            let o = m.op(op);
            if o.kind.is_terminator() {
                return o.operands.iter().map(|&v| self.get(v).cloned()).collect();
            }
            let t0 = self
                .profile
                .as_ref()
                .filter(|_| self.depth == 1)
                .map(|_| std::time::Instant::now());
            let results = match &plan.steps[i] {
                Step::Normal => crate::dispatch::exec(self, op)?,
                Step::Skip => continue,
                Step::FoldedDot(folds) => crate::linalg::folded_dot(self, op, folds)?,
            };
            if let (Some(t0), Some(p)) = (t0, self.profile.as_mut()) {
                p.record(o.kind, t0.elapsed());
            }
            self.bind_results(op, results)?;
            for &v in &plan.dead[i] {
                self.env[v.index()] = None;
            }
        }
        Err(InterpError::Op {
            op: "(region)".into(),
            msg: "region has no terminator".into(),
        })
    }

    /// The (cached) execution plan of `region`.
    fn plan(&mut self, region: RegionId) -> Rc<Plan> {
        let m = self.m;
        self.plans
            .entry(region)
            .or_insert_with(|| Rc::new(Plan::new(m, region)))
            .clone()
    }

    /// Runs a region on tensors and returns tensors.
    pub(crate) fn run_region_t(&mut self, region: RegionId, args: Vec<Tensor>) -> Res<Vec<Tensor>> {
        let out = self.run_region(region, args.into_iter().map(Val::T).collect())?;
        out.into_iter()
            .map(|v| match v {
                Val::T(t) => Ok(t),
                _ => Err(InterpError::Op {
                    op: "(region)".into(),
                    msg: "region returned a non-tensor".into(),
                }),
            })
            .collect()
    }

    /// `stablehlo.while`.
    pub(crate) fn exec_while(&mut self, op: OpId) -> Res<Vec<Val>> {
        let o = self.m.op(op);
        let (cond, body) = match o.regions.as_slice() {
            [c, b] => (*c, *b),
            _ => return Err(op_err(o.kind, "expects two regions")),
        };
        let mut state: Vec<Val> = o
            .operands
            .iter()
            .map(|&v| self.get(v).cloned())
            .collect::<Res<_>>()?;
        loop {
            let c = self.run_region(cond, state.clone())?;
            let go = c
                .first()
                .and_then(Val::tensor)
                .map(|t| t.get_i64(0) != 0)
                .ok_or_else(|| op_err(o.kind, "condition did not return i1"))?;
            if !go {
                return Ok(state);
            }
            state = self.run_region(body, state)?;
        }
    }

    /// `stablehlo.if` / `stablehlo.case`.
    pub(crate) fn exec_branch(&mut self, op: OpId) -> Res<Vec<Val>> {
        let o = self.m.op(op);
        let sel = self.tensor(o.operands[0])?.get_i64(0);
        let n = o.regions.len() as i64;
        let idx = if o.kind == OpKind::If {
            if sel != 0 {
                0
            } else {
                1
            }
        } else if (0..n).contains(&sel) {
            sel
        } else {
            n - 1
        };
        let r = *o
            .regions
            .get(idx as usize)
            .ok_or_else(|| op_err(o.kind, "missing branch region"))?;
        self.run_region(r, Vec::new())
    }
}

/// An op error naming the op kind.
pub(crate) fn op_err(kind: OpKind, msg: impl Into<String>) -> InterpError {
    InterpError::Op {
        op: kind.name().into(),
        msg: msg.into(),
    }
}
