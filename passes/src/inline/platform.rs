//! Platform dispatch of multi-platform jax exports.
//!
//! `jax.export(..., platforms=("cpu", "cuda"))` gives every function a leading
//! `tensor<i32>` argument marked `{jax.global_constant = "_platform_index"}` and lowers each
//! primitive whose lowering differs per platform to a `stablehlo.case` on that index (often
//! through a `case` mapping platform index to rule index whose branches return constants).
//! By jax's contract every branch computes the same function. Branches holding custom calls
//! that only a GPU or TPU runtime implements (`cusolver_*`, `cublas*`, `cu_*`, `hip*`,
//! `tpu_custom_call`, ...) cannot be compiled for a NeuronCore nor run by XLA:CPU, whatever
//! index the caller passes, so [`portable_branch`] names a branch to use instead: the
//! `inline` pass replaces such a `case` by a copy of the first branch without them.
//!
//! Owns: [`portable_branch`], [`has_platform_index`]. Invariant: only `case`s whose index
//! derives from the platform index are touched (a data-dependent `case` is never rewritten), and only when some
//! branch holds a foreign custom call and another holds none.

use neuronc_ir::{Attr, Module, NamedAttrs, OpId, OpKind, RegionId, ValueDef, ValueId};

/// The argument attribute jax puts on the platform index.
const GLOBAL_CONSTANT: &str = "jax.global_constant";
const PLATFORM_INDEX: &str = "_platform_index";

/// Custom-call target prefixes that only GPU (CUDA / ROCm) or TPU runtimes implement.
const FOREIGN_TARGETS: &[&str] = &[
    "cusolver",
    "cublas",
    "cudnn",
    "__cudnn",
    "__cublas",
    "cu_",
    "cusparse",
    "cufft",
    "hipsolver",
    "hipblas",
    "hipsparse",
    "hip_",
    "miopen",
    "rocsolver",
    "__gpu$",
    "triton_kernel_call",
    "__triton",
    "mosaic_gpu",
    "tpu_custom_call",
];

/// Whether argument attributes `a` mark a multi-platform export's platform index.
fn is_platform_index(a: &NamedAttrs) -> bool {
    matches!(a.get(GLOBAL_CONSTANT), Some(Attr::Str(s)) if s == PLATFORM_INDEX)
}

/// Whether some function argument is a multi-platform export's platform index.
pub(super) fn has_platform_index(m: &Module) -> bool {
    m.funcs
        .iter()
        .any(|f| f.arg_attrs.iter().any(is_platform_index))
}

/// For a `case` op dispatching on the platform index where some branch holds a foreign
/// custom call: the index of the first branch that holds none (`None` otherwise).
pub(super) fn portable_branch(m: &Module, op: OpId) -> Option<usize> {
    let o = m.op(op);
    if o.kind != OpKind::Case || o.regions.len() < 2 {
        return None;
    }
    let foreign: Vec<bool> = o
        .regions
        .iter()
        .map(|&r| holds_foreign_call(m, r))
        .collect();
    if !foreign.iter().any(|&f| f) {
        return None;
    }
    let keep = foreign.iter().position(|&f| !f)?;
    platform_derived(m, *o.operands.first()?, 0).then_some(keep)
}

/// Whether region `r` (or a region nested in it) holds a custom call to a foreign target.
fn holds_foreign_call(m: &Module, r: RegionId) -> bool {
    let mut found = false;
    m.walk_region(r, &mut |op| {
        let o = m.op(op);
        if o.kind == OpKind::CustomCall {
            if let Some(Attr::Str(t)) = o.attrs.get("call_target_name") {
                found |= FOREIGN_TARGETS.iter().any(|p| t.starts_with(p));
            }
        }
    });
    found
}

/// Whether `v` is the platform index (an argument of a function body marked
/// `jax.global_constant = "_platform_index"`), or a `case` on such a value whose branches all
/// return constants (jax's platform-to-rule index map), or a `convert` of one.
fn platform_derived(m: &Module, v: ValueId, depth: u32) -> bool {
    if depth > 8 {
        return false;
    }
    match m.value(v).def {
        ValueDef::RegionArg(region, i) => m.funcs.iter().any(|f| {
            f.body == region && f.arg_attrs.get(i as usize).is_some_and(is_platform_index)
        }),
        ValueDef::Result(op, _) => {
            let o = m.op(op);
            match o.kind {
                OpKind::Convert | OpKind::Reshape => platform_derived(m, o.operands[0], depth + 1),
                OpKind::Case => {
                    platform_derived(m, o.operands[0], depth + 1)
                        && o.regions.iter().all(|&r| returns_constants(m, r))
                }
                _ => false,
            }
        }
    }
}

/// Whether the terminator of region `r` returns only values defined by constants.
fn returns_constants(m: &Module, r: RegionId) -> bool {
    let Some(&last) = m.region(r).ops.last() else {
        return false;
    };
    let term = m.op(last);
    term.kind.is_terminator()
        && term.operands.iter().all(|&v| {
            matches!(m.value(v).def, ValueDef::Result(d, _) if m.op(d).kind == OpKind::Constant)
        })
}
