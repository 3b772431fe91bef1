//! Planning the entry function for `compile`, `explain` and `run --engine sim`: the
//! generic clean-up, then NeuronCore layouts and kernels, and the policy that decides
//! whether `recompute-for-contraction` runs first.
//!
//! Owns: [`CLEANUP`] / [`cleanup`], [`RECOMPUTE`], [`Recompute`] (the
//! `--recompute-for-contraction` setting), [`TRANSPOSE_BUDGET`], [`Planned`] /
//! [`RecomputeChoice`] (the plan and why it was chosen), [`plan_cleaned`] and
//! [`plan_function_of`] (clean-up then planning).
//!
//! # The transpose budget
//! A matmul contracts over the partition axis of both operands and a reduction is cheap
//! only along the free axis, so attention's probabilities (reduced along the key axis by
//! softmax, contracted over it by `P·V`) are transposed once per head and layer. That
//! transpose grows as batch × seq² while the weights, most of the matmul operand bytes
//! at small shapes, stay fixed: BERT-base inference spends 2.3% of its matmul operand
//! bytes on transposes at 1×128 but 21% at 1×512 (`bench/transposes_by_shape.py`).
//! Transposes are what the closed Neuron compiler drowns in (`neuron-facts.md`: 97–100%
//! of Tensor-engine time on LayoutLM), and issue 4 bounds them at [`TRANSPOSE_BUDGET`] of
//! the matmul operand bytes. `recompute-for-contraction` removes the probability
//! transposes by recomputing the probabilities with keys on the partitions, at the price
//! of duplicated Vector/Scalar work (the cost model predicts +2–12% time on
//! BERT/LayoutLM at shapes above 1×128).
//!
//! So under [`Recompute::Auto`] (the default) the function is planned as written first;
//! only when that plan's transposes exceed the budget is it planned again after the pass,
//! and the second plan is taken only when it meets the budget and the engine model
//! (both plans lowered and scheduled for the target) predicts it at most
//! [`MAX_SLOWDOWN`] slower. A recompute that cannot bring the transposes within budget (a
//! training step, whose backward pass transposes activations and gradients wherever the
//! forward attention is laid out) costs time for nothing, so it is not taken; nor is one
//! whose duplicated work costs more than the allowance (the softmax gradient of a
//! cross-entropy over a 32000-entry vocabulary recomputed with the vocabulary on the
//! partitions: +37% predicted). [`Recompute::On`] and [`Recompute::Off`] force the choice.
//! Invariant: the decision depends only on the module and the options (deterministic:
//! the predicted times are the schedule's, not measured), and [`RecomputeChoice`] records
//! the numbers behind it for `explain` and the report.

use neuronc_backend::engine::{compile_function, EngineOptions, EngineOutput};
use neuronc_ir::{Func, Module};
use neuronc_passes::neuron::fusion::FusionConfig;
use neuronc_passes::neuron::{plan_function, NeuronPlan};
use neuronc_passes::{run_pipeline, PassContext, Pipeline};

use crate::error::Error;

/// Generic clean-up before planning: sharding annotations go first (one NeuronCore, see
/// `strip-sharding`), then -O2 without outlining (the backend plans kernels itself and the
/// HLO artifact keeps plain ops).
pub const CLEANUP: &str = "strip-sharding,inline,decompose-batch-norm,\
     fixpoint<8>(canonicalize,cse,dce,narrow-index),scale-after-contraction,sink-constants";

/// Run after [`CLEANUP`] when `recompute-for-contraction` is applied.
pub const RECOMPUTE: &str = "recompute-for-contraction,dce";

/// Largest share of the matmul operand bytes that transposes may move before
/// [`Recompute::Auto`] tries `recompute-for-contraction` (issue 4's bar for BERT and
/// LayoutLM inference).
pub const TRANSPOSE_BUDGET: f64 = 0.05;

/// Largest predicted slowdown (fraction of the predicted time without the pass) that
/// [`Recompute::Auto`] accepts to meet [`TRANSPOSE_BUDGET`]: the engine model prices a
/// transpose as one TensorE pass and a PSUM copy, which the hardware does not always
/// achieve (`neuron-facts.md`: the closed compiler spends 97–100% of TensorE time on its
/// transposes for LayoutLM), so a bounded cost for the budget is worth paying.
pub const MAX_SLOWDOWN: f64 = 0.15;

/// When `recompute-for-contraction` runs before planning (`--recompute-for-contraction`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Recompute {
    /// Never: attention probabilities are transposed for `P·V`.
    Off,
    /// Always.
    On,
    /// When the plan without it moves more than 5% of its matmul operand bytes in
    /// transposes and the plan with it does not, predicted at most 15% slower
    /// (`TRANSPOSE_BUDGET`, `MAX_SLOWDOWN`).
    #[default]
    Auto,
}

impl Recompute {
    /// The command-line spelling (`off`, `on`, `auto`), as the manifest and cache key
    /// record it.
    pub fn name(self) -> &'static str {
        match self {
            Recompute::Off => "off",
            Recompute::On => "on",
            Recompute::Auto => "auto",
        }
    }
}

/// Transposes of one plan, for the budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransposeCost {
    pub transposes: usize,
    pub transpose_bytes: u64,
    pub matmul_operand_bytes: u64,
}

impl TransposeCost {
    fn of(m: &Module, plan: &NeuronPlan) -> Self {
        TransposeCost {
            transposes: plan.layout.transpose_count(),
            transpose_bytes: plan.layout.transpose_bytes(),
            matmul_operand_bytes: plan.matmul_operand_bytes(m),
        }
    }

    /// Transpose bytes as a fraction of matmul operand bytes.
    pub fn share(&self) -> f64 {
        self.transpose_bytes as f64 / self.matmul_operand_bytes.max(1) as f64
    }

    /// Whether the share is at most [`TRANSPOSE_BUDGET`].
    pub fn within_budget(&self) -> bool {
        self.share() <= TRANSPOSE_BUDGET
    }
}

/// Whether `recompute-for-contraction` was applied, and the other plan's transposes when
/// one was made.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RecomputeChoice {
    pub mode: Recompute,
    pub applied: bool,
    /// The plan without the pass moved more than [`TRANSPOSE_BUDGET`] in transposes
    /// (`false` under [`Recompute::On`], where it is not made).
    pub over_budget: bool,
    /// The transposes of the plan not taken: without the pass when it was applied, with
    /// it when it was not; `None` when no such plan was made (or the pass changed
    /// nothing).
    pub alternative: Option<TransposeCost>,
    /// Predicted seconds (without the pass, with it) when auto compared the two plans.
    pub predicted_s: Option<(f64, f64)>,
}

impl RecomputeChoice {
    /// Predicted slowdown of the plan with the pass, when auto compared the two.
    pub fn slowdown(&self) -> Option<f64> {
        self.predicted_s
            .map(|(without, with)| with / without.max(1e-12) - 1.0)
    }
}

/// The planned entry function.
pub struct Planned {
    pub func: Func,
    pub plan: NeuronPlan,
    pub recompute: RecomputeChoice,
    /// The taken plan lowered with the given engine options, when auto had to lower it
    /// (`compile` reuses it).
    pub lowered: Option<EngineOutput>,
}

/// Runs the [`CLEANUP`] pipeline on `module`.
pub fn cleanup(module: &mut Module) -> Result<(), Error> {
    run_pipeline(module, &Pipeline::parse(CLEANUP)?, &mut PassContext::new())?;
    Ok(())
}

/// [`cleanup`], then [`plan_cleaned`].
pub fn plan_function_of(
    module: &mut Module,
    name: Option<&str>,
    mode: Recompute,
    explore_alternative: bool,
    engine: &EngineOptions,
) -> Result<Planned, Error> {
    cleanup(module)?;
    plan_cleaned(module, name, mode, explore_alternative, engine)
}

/// Plans function `name` (`None`: the entry function) of the cleaned-up `module` under
/// `mode` (see the module documentation), comparing predicted times under `engine` when
/// auto has to. `module` is left as planned (with the recomputed copies when the pass was
/// applied). `explore_alternative`: under [`Recompute::Off`], and under
/// [`Recompute::Auto`] when the budget is met, also plan with the pass to report its
/// transposes (`explain`); under [`Recompute::Auto`] when the pass was applied, the plan
/// without it is always known.
pub fn plan_cleaned(
    module: &mut Module,
    name: Option<&str>,
    mode: Recompute,
    explore_alternative: bool,
    engine: &EngineOptions,
) -> Result<Planned, Error> {
    if mode == Recompute::On {
        run_recompute(module)?;
    }
    let func = find_func(module, name)?;
    let plan = plan_function(module, &func, &FusionConfig::default());
    let mut planned = Planned {
        func,
        plan,
        recompute: RecomputeChoice {
            mode,
            applied: mode == Recompute::On,
            over_budget: false,
            alternative: None,
            predicted_s: None,
        },
        lowered: None,
    };
    if mode == Recompute::On {
        return Ok(planned);
    }
    let cost = TransposeCost::of(module, &planned.plan);
    planned.recompute.over_budget = !cost.within_budget();
    let over = mode == Recompute::Auto && planned.recompute.over_budget;
    if cost.transposes == 0 || !(over || explore_alternative) {
        return Ok(planned);
    }
    let Some((m2, f2, p2)) = recomputed(module, &planned.func.name)? else {
        return Ok(planned);
    };
    let cost2 = TransposeCost::of(&m2, &p2);
    planned.recompute.alternative = Some(cost2);
    if !(over && cost2.within_budget()) {
        return Ok(planned);
    }
    // Both plans meet the hardware's constraints; compare what the engine model predicts.
    let (without, with) = rayon::join(
        || compile_function(module, &planned.func, &planned.plan, engine),
        || compile_function(&m2, &f2, &p2, engine),
    );
    let (Ok(without), Ok(with)) = (without, with) else {
        return Ok(planned);
    };
    let times = (
        without.report.predicted_time_s,
        with.report.predicted_time_s,
    );
    planned.recompute.predicted_s = Some(times);
    if times.1 > times.0 * (1.0 + MAX_SLOWDOWN) {
        planned.lowered = Some(without);
        return Ok(planned);
    }
    *module = m2;
    Ok(Planned {
        func: f2,
        plan: p2,
        recompute: RecomputeChoice {
            applied: true,
            alternative: Some(cost),
            ..planned.recompute
        },
        lowered: Some(with),
    })
}

/// Runs [`RECOMPUTE`] on `module`; returns how many rewrites it applied.
fn run_recompute(module: &mut Module) -> Result<u64, Error> {
    let report = run_pipeline(
        module,
        &Pipeline::parse(RECOMPUTE)?,
        &mut PassContext::new(),
    )?;
    Ok(report.rewrites)
}

/// `module` after [`RECOMPUTE`], with function `func` planned again; `None` when the
/// pass changes nothing.
fn recomputed(module: &Module, func: &str) -> Result<Option<(Module, Func, NeuronPlan)>, Error> {
    let mut m = module.clone();
    let rewrites = run_recompute(&mut m)?;
    let Some(f) = m.func(func).cloned().filter(|_| rewrites > 0) else {
        return Ok(None);
    };
    let plan = plan_function(&m, &f, &FusionConfig::default());
    Ok(Some((m, f, plan)))
}

fn find_func(module: &Module, name: Option<&str>) -> Result<Func, Error> {
    let func = match name {
        Some(n) => module.func(n).cloned(),
        None => module.entry().cloned(),
    };
    func.ok_or_else(|| match name {
        Some(n) => Error::Run(format!("no function @{n} (after inlining)")),
        None => Error::Run("no entry function (@main or a single public function)".into()),
    })
}
