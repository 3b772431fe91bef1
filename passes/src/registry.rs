//! The one registry of passes by kebab-case name.
//!
//! Owns [`registry`] and [`PassInfo`]. Invariant: names are unique, kebab-case, and equal
//! to the [`Pass::name`] of the pass they construct (checked by a unit test).

use crate::pass::Pass;

/// A registered pass: its name, a one-line summary and a constructor.
pub struct PassInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub make: fn() -> Box<dyn Pass>,
}

static REGISTRY: &[PassInfo] = &[
    PassInfo {
        name: "inline",
        summary: "inline every func.call, then drop unreferenced private functions",
        make: || Box::new(crate::inline::Inline),
    },
    PassInfo {
        name: "canonicalize",
        summary: "apply the named local rewrite rules (algebra, shape folding, constant folding)",
        make: || Box::new(crate::canonicalize::Canonicalize),
    },
    PassInfo {
        name: "cse",
        summary: "merge pure ops with identical kind, operands, attributes and types",
        make: || Box::new(crate::cse::Cse),
    },
    PassInfo {
        name: "dce",
        summary: "remove pure ops whose results are unused, also inside regions",
        make: || Box::new(crate::dce::Dce),
    },
    PassInfo {
        name: "decompose-batch-norm",
        summary: "expand batch_norm_{training,inference,grad} into elementwise ops and reductions",
        make: || Box::new(crate::decompose_batch_norm::DecomposeBatchNorm),
    },
    PassInfo {
        name: "sink-constants",
        summary: "copy constants that nested regions capture into those regions",
        make: || Box::new(crate::sink_constants::SinkConstants),
    },
    PassInfo {
        name: "strip-sharding",
        summary: "replace sdy.sharding_constraint / sdy.reshard by their operand (one device)",
        make: || Box::new(crate::strip_sharding::StripSharding),
    },
    PassInfo {
        name: "recompute-for-contraction",
        summary: "copy the elementwise cone of a matmul operand that is also reduced along the \
                  contracted axis (attention probabilities), so neither copy needs a transpose",
        make: || Box::new(crate::recompute_contraction::RecomputeForContraction),
    },
    PassInfo {
        name: "scale-after-contraction",
        summary: "apply a matmul operand's scale that is constant along the contraction to the (smaller) result instead (softmax's division after P·V)",
        make: || Box::new(crate::scale_after_contraction::ScaleAfterContraction),
    },
    PassInfo {
        name: "neuron-fuse",
        summary:
            "assign NeuronCore layouts, plan kernels and outline them as neuronc.kernel composites",
        make: || Box::new(crate::neuron::pass::NeuronFuse),
    },
    PassInfo {
        name: "duplicate-function-elimination",
        summary:
            "merge private functions with identical bodies (outlined kernels of repeated layers)",
        make: || Box::new(crate::dedupe_functions::DuplicateFunctionElimination),
    },
    PassInfo {
        name: "recognize-idioms",
        summary:
            "replace erf-GELU and softmax subgraphs by neuronc.gelu / neuronc.softmax composites",
        make: || Box::new(crate::recognize_idioms::RecognizeIdioms),
    },
    PassInfo {
        name: "narrow-index",
        summary: "narrow i64 index arithmetic to i32 where a range analysis proves it fits",
        make: || Box::new(crate::narrow_index::NarrowIndex),
    },
];

/// All passes, in a fixed order.
pub fn registry() -> &'static [PassInfo] {
    REGISTRY
}

/// Looks a pass up by name.
pub fn lookup(name: &str) -> Option<&'static PassInfo> {
    REGISTRY.iter().find(|p| p.name == name)
}

/// The registered names, comma-separated (for error messages).
pub fn known_names() -> String {
    REGISTRY
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_kebab_case_and_match_the_pass() {
        let mut seen = std::collections::HashSet::new();
        for info in registry() {
            assert!(seen.insert(info.name), "duplicate {}", info.name);
            assert!(info
                .name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c == '-'));
            assert_eq!((info.make)().name(), info.name);
        }
    }
}
