//! The [`Pass`] trait every transformation implements.
//!
//! Invariants: a pass is deterministic (same module in, same module out), reports
//! [`Changed::Yes`] iff it mutated the module, and asks [`PassContext::try_rewrite`] before
//! each individual rewrite.

use crate::context::{Changed, PassContext};
use crate::error::PassError;
use neuronc_ir::{Module, RegionId};

/// A module-to-module transformation.
pub trait Pass {
    /// Kebab-case name, as used in `--passes=` and in the registry.
    fn name(&self) -> &'static str;
    /// Transforms `module` in place.
    fn run(&self, module: &mut Module, ctx: &mut PassContext) -> Result<Changed, PassError>;
    /// Whether the pass keeps the contract of [`crate::edits`], so that fixpoint groups
    /// made only of such passes run incrementally: it marks every op it creates or edits
    /// in place (`PassContext::mark_edited`), calls `PassContext::note_incomplete` when
    /// a run leaves work undone, and is idempotent (after a complete run, a rerun changes
    /// nothing). The marking API is crate-private: only this crate's passes can keep it.
    fn tracks_edits(&self) -> bool {
        false
    }
}

/// Runs `f` on the body of every function of `module`, in order: whether any run changed
/// something (for passes that rewrite each function body on its own).
pub(crate) fn each_body(
    module: &mut Module,
    ctx: &mut PassContext,
    mut f: impl FnMut(&mut Module, RegionId, &mut PassContext) -> bool,
) -> Changed {
    let mut changed = false;
    for fi in 0..module.funcs.len() {
        let body = module.funcs[fi].body;
        changed |= f(module, body, ctx);
    }
    Changed::from_bool(changed)
}
