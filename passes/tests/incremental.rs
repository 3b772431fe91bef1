//! Fixpoint groups run incrementally (`neuronc_passes::edits`: skipped runs, and
//! `canonicalize`/`cse` runs proved empty from the edits alone) and must do exactly what
//! full runs do. Oracle: the same passes unrolled without a fixpoint group (no edit log,
//! every run is a full run) — once an iteration changes nothing, later ones change
//! nothing either, so unrolling the limit's worth of iterations gives the fixpoint's
//! module and rewrite trace. Every run here has `verify_each`, so each skipped or proved
//! run is also rerun in full on a copy by the manager; the last tests check that this
//! check catches a pass that breaks the contract.

use neuronc_ir::{parse_module, print_module, Module, OpKind, PrintOptions};
use neuronc_passes::{run_pipeline, Changed, Pass, PassContext, PassError, Pipeline, PipelineItem};
use std::path::Path;

/// Fixtures where some group below needs a second (changing) iteration, plus the -O2
/// speed target (bert_base) and narrow-index's (gather_scatter).
const FIXTURES: &[&str] = &[
    "models/bert_tiny_train_step.mlir",
    "models/t5_tiny_train_step.mlir",
    "models/jax_vmap_grad_misc.mlir",
    "models/jax_resnet_block.mlir",
    "models/bert_small_infer_bf16.mlir",
    "jax/linalg_lu.mlir",
    "jax/linalg_svd.mlir",
    "jax/binary_math.mlir",
    "jax/edge_int.mlir",
    "jax/x64_mix.mlir",
    "jax/gather_scatter.mlir",
];

const GROUPS: &[&str] = &[
    "canonicalize,cse,dce,narrow-index",
    "narrow-index,cse,canonicalize,dce",
    "cse,narrow-index,canonicalize",
    "dce,cse,canonicalize",
];

fn read_fixture(file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures")
        .join(file);
    std::fs::read_to_string(&path).expect("fixture readable")
}

fn run_items(
    text: &str,
    items: Vec<PipelineItem>,
    fuel: Option<u64>,
) -> Result<(String, Vec<String>, usize), PassError> {
    let mut m = parse_module(text).expect("fixture parses");
    let mut ctx = PassContext::new();
    if let Some(f) = fuel {
        ctx = ctx.with_fuel(f);
    }
    ctx.trace_rewrites = true;
    ctx.verify_each = true;
    let report = run_pipeline(&mut m, &Pipeline { items }, &mut ctx)?;
    let text = print_module(&m, &PrintOptions::default());
    Ok((text, report.trace, report.runs.len()))
}

fn run(text: &str, pipeline: &str, fuel: Option<u64>) -> (String, Vec<String>, usize) {
    let items = Pipeline::parse(pipeline).expect("pipeline parses").items;
    run_items(text, items, fuel).expect("pipeline runs")
}

/// Fixpoint group vs unrolled copies; returns how many passes the fixpoint ran.
fn check_text(name: &str, text: &str, group: &str, fuel: Option<u64>) -> usize {
    let fixpoint = format!("inline,decompose-batch-norm,fixpoint<4>({group})");
    let unrolled = format!("inline,decompose-batch-norm,{}", [group; 4].join(","));
    let (a, ta, runs) = run(text, &fixpoint, fuel);
    let (b, tb, _) = run(text, &unrolled, fuel);
    assert_eq!(
        ta, tb,
        "{name} ({group}, fuel {fuel:?}): rewrite traces differ"
    );
    assert!(a == b, "{name} ({group}, fuel {fuel:?}): modules differ");
    runs
}

#[test]
fn fixpoint_groups_match_unrolled_full_runs() {
    let group_len = |g: &str| g.split(',').count();
    let mut second_changing = 0;
    for file in FIXTURES {
        let text = read_fixture(file);
        for group in GROUPS {
            let runs = check_text(file, &text, group, None);
            // inline, decompose-batch-norm, then whole iterations; a third iteration
            // means the second one changed the module.
            if runs - 2 >= 3 * group_len(group) {
                second_changing += 1;
            }
        }
    }
    assert!(
        second_changing >= 20,
        "only {second_changing} runs needed a changing second iteration"
    );
}

#[test]
fn o2_fixpoint_on_bert_base_matches_unrolled() {
    let text = read_fixture("models/bert_base_train_step.mlir");
    for group in &GROUPS[..2] {
        check_text("bert_base_train_step", &text, group, None);
    }
}

#[test]
fn fixpoint_groups_match_unrolled_under_fuel() {
    for fuel in [0, 7, 40, 150] {
        check_text(
            FIXTURES[0],
            &read_fixture(FIXTURES[0]),
            GROUPS[0],
            Some(fuel),
        );
        check_text(
            FIXTURES[5],
            &read_fixture(FIXTURES[5]),
            GROUPS[1],
            Some(fuel),
        );
    }
}

/// `cse` turns `%0 - %1` into `%0 - %0` in the first iteration; only the second
/// `canonicalize` can fold it to zero and then `%arg1 + 0` to `%arg1`.
const CSE_EXPOSES_FOLDS: &str = r#"
func.func @main(%arg0: tensor<4xi32>, %arg1: tensor<4xi32>) -> tensor<4xi32> {
  %0 = stablehlo.multiply %arg0, %arg1 : tensor<4xi32>
  %1 = stablehlo.multiply %arg0, %arg1 : tensor<4xi32>
  %2 = stablehlo.subtract %0, %1 : tensor<4xi32>
  %3 = stablehlo.add %arg1, %2 : tensor<4xi32>
  %4 = stablehlo.multiply %arg0, %arg0 : tensor<4xi32>
  %5 = stablehlo.add %4, %arg1 : tensor<4xi32>
  %6 = stablehlo.add %5, %3 : tensor<4xi32>
  return %6 : tensor<4xi32>
}
"#;

/// `canonicalize` folds `%2` to `%0` in the first iteration, which makes `%3` and `%4`
/// identical; only the second `cse` merges them.
const CANONICALIZE_EXPOSES_MERGES: &str = r#"
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<1.0> : tensor<4xf32>
  %0 = stablehlo.exponential %arg0 : tensor<4xf32>
  %1 = stablehlo.tanh %arg0 : tensor<4xf32>
  %2 = stablehlo.multiply %0, %c : tensor<4xf32>
  %3 = stablehlo.add %0, %1 : tensor<4xf32>
  %4 = stablehlo.add %2, %1 : tensor<4xf32>
  %5 = stablehlo.multiply %3, %4 : tensor<4xf32>
  return %5 : tensor<4xf32>
}
"#;

fn rule_names(trace: &[String]) -> Vec<&str> {
    trace
        .iter()
        .map(|t| t.split(" @ ").next().unwrap_or(""))
        .collect()
}

#[test]
fn later_iterations_still_see_what_other_passes_expose() {
    let (out, trace, _) = run(
        CSE_EXPOSES_FOLDS,
        "fixpoint<4>(canonicalize,cse,dce,narrow-index)",
        None,
    );
    assert_eq!(
        rule_names(&trace),
        ["cse", "sub-self-int", "add-zero"],
        "{out}"
    );
    assert!(!out.contains("subtract"), "{out}");

    let (out, trace, _) = run(
        CANONICALIZE_EXPOSES_MERGES,
        "fixpoint<4>(cse,canonicalize)",
        None,
    );
    assert_eq!(rule_names(&trace), ["mul-one", "cse"], "{out}");
    assert_eq!(out.matches("stablehlo.add").count(), 1, "{out}");

    for text in [CSE_EXPOSES_FOLDS, CANONICALIZE_EXPOSES_MERGES] {
        for group in GROUPS {
            for fuel in [None, Some(1), Some(2)] {
                check_text("hand-written", text, group, fuel);
            }
        }
    }
}

/// A pass that claims to keep the edit-log contract but edits without marking: it
/// rewrites the first `subtract` with distinct operands into `x - x` (or, with `merge`,
/// the first `tanh` into an `exponential` of the same operand), once.
struct Liar {
    merge: bool,
}

impl Pass for Liar {
    fn name(&self) -> &'static str {
        "liar"
    }
    fn run(&self, m: &mut Module, _ctx: &mut PassContext) -> Result<Changed, PassError> {
        let mut target = None;
        m.walk_ops(|op| {
            let o = m.op(op);
            let hit = if self.merge {
                o.kind == OpKind::Tanh
            } else {
                o.kind == OpKind::Subtract && o.operands[0] != o.operands[1]
            };
            if hit && target.is_none() {
                target = Some(op);
            }
        });
        let Some(op) = target else {
            return Ok(Changed::No);
        };
        let o = m.op_mut(op);
        if self.merge {
            o.kind = OpKind::Exponential;
        } else {
            o.operands[1] = o.operands[0];
        }
        Ok(Changed::Yes)
    }
    fn tracks_edits(&self) -> bool {
        true
    }
}

fn group_with_liar(pass: &str, merge: bool) -> Vec<PipelineItem> {
    let real = Pipeline::parse(pass).expect("pass name").items;
    let mut items = real;
    items.push(PipelineItem::Pass(Box::new(Liar { merge })));
    vec![PipelineItem::Fixpoint {
        items,
        max_iterations: 4,
    }]
}

#[test]
fn verify_each_catches_an_unmarked_edit() {
    const SUB: &str = r#"
func.func @main(%arg0: tensor<4xi32>, %arg1: tensor<4xi32>) -> tensor<4xi32> {
  %0 = stablehlo.subtract %arg0, %arg1 : tensor<4xi32>
  return %0 : tensor<4xi32>
}
"#;
    const TWO: &str = r#"
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.exponential %arg0 : tensor<4xf32>
  %1 = stablehlo.tanh %arg0 : tensor<4xf32>
  %2 = stablehlo.add %0, %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}
"#;
    for (text, pass, merge) in [(SUB, "canonicalize", false), (TWO, "cse", true)] {
        match run_items(text, group_with_liar(pass, merge), None) {
            Err(PassError::Failed { pass: p, message }) => {
                assert_eq!(p, pass);
                assert!(message.contains("internal error"), "{message}");
            }
            other => panic!("{pass}: expected an internal error, got {other:?}"),
        }
    }
}
