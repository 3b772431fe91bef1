//! `neuronc-interp`: the reference interpreter of neuronc-rs — the semantic ground truth
//! every pass and the backend are checked against.
//!
//! Entry point: [`run_function`]. Modules:
//! * [`tensor`] — host tensors ([`Tensor`]) and the byte encoding of every element type;
//! * [`floatfmt`] — the f8/f6/f4 formats and `reduce_precision`;
//! * `eval` / `plan` / `dispatch` — regions (each run by a cached plan: liveness, transposes
//!   folded into `dot_general`), control flow, and the routing of each op;
//! * `elementwise` (with `complexfn`: accurate complex elementary functions), `convert`,
//!   `shape` (with `strided`: tiled strided copies), `gather`, `reduce`, `sort`, `linalg`,
//!   `linalg2`, `conv`, `batchnorm`, `rng`, `collectives`, `custom`, `check` — op
//!   semantics;
//! * [`excess_precision`] — [`FloatSemantics`]: strict StableHLO rounding, or XLA:CPU's
//!   bf16 excess precision (a module rewrite applied before running);
//! * [`npz`] — `.npz` input/output files; [`profile`] — time per op kind; [`compare`] —
//!   tolerance checks for tests.
//!
//! Invariants: running user input never panics — every failure is an [`InterpError`];
//! results are deterministic.

mod approx_topk;
mod batchnorm;
pub mod check;
mod collectives;
pub mod compare;
mod complexfn;
mod complexspecial;
mod conv;
mod convert;
mod custom;
mod dispatch;
mod elementwise;
mod error;
mod eval;
pub mod excess_precision;
pub mod floatfmt;
mod gather;
mod lapack;
mod lapack_eig;
mod lapack_ffi;
mod lapack_ffi_more;
mod lapack_hess;
mod lapack_hqr;
mod lapack_spectral;
mod lapack_zhqr;
mod linalg;
mod linalg2;
mod mathfn;
pub mod npz;
mod plan;
pub mod profile;
mod reduce;
mod region;
mod rng;
mod shape;
mod sort;
pub mod step;
mod strided;
pub mod tensor;
mod xla_batch_norm;
mod xla_divide;
mod xla_divide_chain;
mod xla_fma;
mod xla_logistic;
mod xla_reassoc;
mod xla_simplify;
mod xla_unroll;

pub use compare::{compare, Mismatch};
pub use error::InterpError;
pub use excess_precision::FloatSemantics;
pub use profile::{Profile, ProfileRow};
pub use tensor::{Data, Tensor};

use eval::{Interp, Val};
use neuronc_ir::{Module, TensorType};

/// How to run a function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Number of simulated replicas (>= 1).
    pub replicas: u32,
    /// Number of simulated partitions (>= 1).
    pub partitions: u32,
    /// Rounding semantics of bf16 values (default: [`FloatSemantics::Strict`]).
    pub float_semantics: FloatSemantics,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            replicas: 1,
            partitions: 1,
            float_semantics: FloatSemantics::Strict,
        }
    }
}

/// The argument types of function `func_name` (tensor arguments only).
pub fn arg_types(module: &Module, func_name: &str) -> Result<Vec<TensorType>, InterpError> {
    let f = module
        .func(func_name)
        .ok_or_else(|| InterpError::NoSuchFunction(func_name.to_string()))?;
    module
        .region(f.body)
        .args
        .iter()
        .map(|&a| {
            module
                .tensor_type(a)
                .cloned()
                .ok_or_else(|| InterpError::ArgType {
                    func: func_name.to_string(),
                    index: 0,
                    expected: "tensor".into(),
                    got: "non-tensor argument".into(),
                })
        })
        .collect()
}

fn check_inputs(module: &Module, func_name: &str, inputs: &[Tensor]) -> Result<(), InterpError> {
    let types = arg_types(module, func_name)?;
    if types.len() != inputs.len() {
        return Err(InterpError::ArgCount {
            func: func_name.to_string(),
            expected: types.len(),
            got: inputs.len(),
        });
    }
    for (i, (t, x)) in types.iter().zip(inputs).enumerate() {
        if t != x.ty() {
            return Err(InterpError::ArgType {
                func: func_name.to_string(),
                index: i,
                expected: format!("{} {:?}", t.elem, t.shape),
                got: format!("{} {:?}", x.elem(), x.shape()),
            });
        }
    }
    Ok(())
}

fn flatten(v: Val, out: &mut Vec<Tensor>) {
    match v {
        Val::T(t) => out.push(t),
        Val::Tuple(vs) => vs.into_iter().for_each(|x| flatten(x, out)),
        Val::Token => {}
    }
}

/// Runs `func_name` of `module` on `inputs` and returns its results (tuples flattened,
/// tokens dropped). With several replicas/partitions, every simulated process gets the
/// same inputs and the results of process 0 are returned.
pub fn run_function(
    module: &Module,
    func_name: &str,
    inputs: Vec<Tensor>,
    opts: &RunOptions,
) -> Result<Vec<Tensor>, InterpError> {
    check_inputs(module, func_name, &inputs)?;
    let module = &*with_semantics(module, opts.float_semantics);
    let n = opts.replicas.max(1) * opts.partitions.max(1);
    if n > 1 {
        return collectives::run_spmd(module, func_name, inputs, opts)
            .map(|mut all| all.swap_remove(0));
    }
    let mut it = Interp::new(module);
    let vals = it.call(func_name, inputs.into_iter().map(Val::T).collect())?;
    let mut out = Vec::new();
    vals.into_iter().for_each(|v| flatten(v, &mut out));
    Ok(out)
}

/// Like [`run_function`] on one process with [`FloatSemantics::Strict`], also timing
/// each op of the function body by kind (see [`Profile`]).
pub fn run_function_profiled(
    module: &Module,
    func_name: &str,
    inputs: Vec<Tensor>,
) -> Result<(Vec<Tensor>, Profile), InterpError> {
    check_inputs(module, func_name, &inputs)?;
    let mut it = Interp::new(module);
    it.profile = Some(Profile::default());
    let vals = it.call(func_name, inputs.into_iter().map(Val::T).collect())?;
    Ok((flatten_vals(vals), it.profile.take().unwrap_or_default()))
}

/// Runs every simulated process and returns each one's results, indexed by
/// `replica * partitions + partition`.
pub fn run_function_all(
    module: &Module,
    func_name: &str,
    inputs: Vec<Tensor>,
    opts: &RunOptions,
) -> Result<Vec<Vec<Tensor>>, InterpError> {
    check_inputs(module, func_name, &inputs)?;
    let module = &*with_semantics(module, opts.float_semantics);
    collectives::run_spmd(module, func_name, inputs, opts)
}

/// `module` as the interpreter must run it to follow `semantics`: for `xla`, jaxlib's
/// `A / broadcast(B)` reciprocal rewrite (interpreter only, see [`xla_divide`]), then the
/// rewrite `compile` plans from too ([`excess_precision::xla_module`]), then XLA:CPU's
/// fused multiply-adds (interpreter only, see [`xla_fma`]).
fn with_semantics(module: &Module, semantics: FloatSemantics) -> std::borrow::Cow<'_, Module> {
    use std::borrow::Cow;
    match semantics {
        FloatSemantics::Strict => Cow::Borrowed(module),
        FloatSemantics::Xla => {
            let m = xla_divide::broadcast_reciprocals(module);
            then(then(m, excess_precision::xla_module), xla_fma::contract)
        }
    }
}

/// `rewrite` applied to `m`: still borrowed from the original module while no rewrite
/// changed it, and a module that `rewrite` leaves alone is kept, not copied.
fn then<'a>(
    m: std::borrow::Cow<'a, Module>,
    rewrite: for<'b> fn(&'b Module) -> std::borrow::Cow<'b, Module>,
) -> std::borrow::Cow<'a, Module> {
    use std::borrow::Cow;
    match m {
        Cow::Borrowed(m) => rewrite(m),
        Cow::Owned(m) => {
            let changed = match rewrite(&m) {
                Cow::Owned(n) => Some(n),
                Cow::Borrowed(_) => None,
            };
            Cow::Owned(changed.unwrap_or(m))
        }
    }
}

pub(crate) fn flatten_vals(vals: Vec<Val>) -> Vec<Tensor> {
    let mut out = Vec::new();
    vals.into_iter().for_each(|v| flatten(v, &mut out));
    out
}
