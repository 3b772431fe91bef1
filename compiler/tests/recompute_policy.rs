//! The `--recompute-for-contraction=auto` policy (`neuronc::plan`) on real traces: the
//! pass is applied exactly when the plan without it moves more than the transpose budget
//! and the plan with it does not, and the numbers it reports are those of the two plans.

use neuronc::build::{plan_entry, BuildOptions, Planned, Recompute};
use neuronc::plan::{MAX_SLOWDOWN, TRANSPOSE_BUDGET};
use std::path::Path;

fn planned(fixture: &str, mode: Recompute) -> Planned {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures")
        .join(fixture);
    let text = std::fs::read_to_string(&path).expect("fixture");
    let mut module = neuronc::compile(fixture, &text).expect("verifies");
    let opts = BuildOptions {
        recompute_for_contraction: mode,
        ..BuildOptions::default()
    };
    plan_entry(&mut module, &opts, true).expect("plans")
}

/// BERT-base inference at 1x128: the probability transposes are 2.3% of the matmul
/// operand bytes, within budget, so auto plans exactly as `off` does.
#[test]
fn within_budget_keeps_the_transpose() {
    let auto = planned("models/bert_base_infer.mlir", Recompute::Auto);
    let off = planned("models/bert_base_infer.mlir", Recompute::Off);
    assert!(!auto.recompute.applied && !auto.recompute.over_budget);
    assert_eq!(
        auto.plan.layout.transpose_bytes(),
        off.plan.layout.transpose_bytes()
    );
    assert_eq!(
        auto.plan.fusion.kernels.len(),
        off.plan.fusion.kernels.len()
    );
    let alt = auto
        .recompute
        .alternative
        .expect("the pass changes attention");
    assert!(alt.transpose_bytes < auto.plan.layout.transpose_bytes());
}

/// The BERT-base training step transposes activations and gradients in the backward
/// pass wherever the forward attention is laid out: recomputing cannot bring it within
/// budget, so auto leaves the pass off and reports the plan it did not take.
#[test]
fn recompute_that_cannot_meet_the_budget_is_not_taken() {
    let auto = planned("models/bert_base_train_step.mlir", Recompute::Auto);
    assert!(auto.recompute.over_budget && !auto.recompute.applied);
    let alt = auto
        .recompute
        .alternative
        .expect("the pass changes attention");
    assert!(alt.share() > TRANSPOSE_BUDGET);
    let off = planned("models/bert_base_train_step.mlir", Recompute::Off);
    assert_eq!(
        auto.plan.layout.transpose_bytes(),
        off.plan.layout.transpose_bytes()
    );
}

/// A model whose transposes exceed the budget without the pass and meet it with it:
/// auto takes the recomputed plan, identical to `on`'s, and reports the plan without.
#[test]
fn over_budget_applies_the_pass() {
    let fixture = "golden/explain_recompute_auto.mlir";
    let auto = planned(fixture, Recompute::Auto);
    let on = planned(fixture, Recompute::On);
    assert!(auto.recompute.applied && auto.recompute.over_budget);
    assert_eq!(
        auto.plan.layout.transpose_bytes(),
        on.plan.layout.transpose_bytes()
    );
    assert_eq!(auto.plan.fusion.kernels.len(), on.plan.fusion.kernels.len());
    let without = auto
        .recompute
        .alternative
        .expect("the plan without the pass");
    assert!(without.share() > TRANSPOSE_BUDGET);
    let off = planned(fixture, Recompute::Off);
    assert_eq!(without.transpose_bytes, off.plan.layout.transpose_bytes());
    assert!(off.plan.layout.transpose_bytes() > 0);
}

/// A torch_xla training step with cross-entropy over a 32000-entry vocabulary: its
/// softmax gradient is contracted over the vocabulary, and recomputing it with the
/// vocabulary on the partitions removes the transpose but repeats the exponentials over
/// the whole vocabulary. The engine model prices that above the allowance, so auto keeps
/// the transpose, and says what the two plans were predicted to take.
#[test]
fn recompute_slower_than_the_allowance_is_not_taken() {
    let auto = planned("models/vocab32k_ce_train_step.mlir", Recompute::Auto);
    assert!(auto.recompute.over_budget && !auto.recompute.applied);
    let alt = auto
        .recompute
        .alternative
        .expect("the pass changes the softmax gradient");
    assert!(alt.within_budget(), "the recomputed plan meets the budget");
    let slowdown = auto
        .recompute
        .slowdown()
        .expect("auto compared predicted times");
    assert!(slowdown > MAX_SLOWDOWN, "slowdown {slowdown}");
    let on = planned("models/vocab32k_ce_train_step.mlir", Recompute::On);
    assert_eq!(on.plan.layout.transpose_bytes(), alt.transpose_bytes);
}

/// When auto takes the recomputed plan it has lowered it already, and reports both
/// predicted times, the taken one within the allowance.
#[test]
fn applied_recompute_is_within_the_allowance() {
    let auto = planned("golden/explain_recompute_auto.mlir", Recompute::Auto);
    assert!(auto.recompute.applied);
    let (without, with) = auto.recompute.predicted_s.expect("compared");
    assert!(with <= without * (1.0 + MAX_SLOWDOWN));
    let lowered = auto.lowered.expect("the taken plan was lowered");
    assert_eq!(lowered.report.predicted_time_s, with);
}
