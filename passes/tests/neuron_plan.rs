//! Layout and fusion planning on small hand-written modules. Expected kernels follow from
//! the rules in `passes/src/neuron/fusion.rs` and the hardware facts they cite; every
//! veto rule has a case here that triggers it.

use neuronc_ir::parse_module;
use neuronc_passes::neuron::fusion::FusionConfig;
use neuronc_passes::neuron::{plan_function, NeuronPlan};

fn plan(src: &str) -> (neuronc_ir::Module, NeuronPlan) {
    let m = parse_module(src).expect("test module parses");
    let f = m.entry().expect("entry").clone();
    let p = plan_function(&m, &f, &FusionConfig::default());
    (m, p)
}

fn assert_no_relayouts(p: &NeuronPlan) {
    assert_eq!(
        p.layout.transpose_count(),
        0,
        "relayouts: {:?}",
        p.layout.relayouts
    );
}

fn rules(p: &NeuronPlan) -> Vec<&'static str> {
    p.fusion.rejections.iter().map(|r| r.rule.name()).collect()
}

const SOFTMAX: &str = r#"
func.func @main(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<8x128xf32>, tensor<f32>) -> tensor<8xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<8xf32>) -> tensor<8x128xf32>
  %s = stablehlo.subtract %x, %mb : tensor<8x128xf32>
  %e = stablehlo.exponential %s : tensor<8x128xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x128xf32>, tensor<f32>) -> tensor<8xf32>
  %sb = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<8xf32>) -> tensor<8x128xf32>
  %r = stablehlo.divide %e, %sb : tensor<8x128xf32>
  return %r : tensor<8x128xf32>
}
"#;

#[test]
fn softmax_is_one_kernel() {
    let (m, p) = plan(SOFTMAX);
    assert_eq!(p.fusion.kernels.len(), 1, "{:?}", p.fusion.kernels);
    assert_eq!(
        p.fusion.kernels[0].ops.len(),
        m.region(m.entry().unwrap().body).ops.len() - 1
    );
    // One read of x, one write of the result: 2 * 8*128*4 bytes.
    assert_eq!(p.fusion.hbm_bytes(), 2 * 8 * 128 * 4);
    // Softmax rows lie along the free axis: no relayout, no cross-partition reduction.
    assert_eq!(p.layout.transpose_count(), 0);
    assert!(p.layout.cross_partition_reductions.is_empty());
}

#[test]
fn matmul_takes_its_epilogue_but_not_a_second_matmul() {
    let (_, p) = plan(
        r#"
func.func @main(%x: tensor<128x256xf32>, %w: tensor<256x512xf32>, %b: tensor<512xf32>, %w2: tensor<512x64xf32>) -> tensor<128x64xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<128x256xf32>, tensor<256x512xf32>) -> tensor<128x512xf32>
  %1 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<512xf32>) -> tensor<128x512xf32>
  %2 = stablehlo.add %0, %1 : tensor<128x512xf32>
  %3 = stablehlo.tanh %2 : tensor<128x512xf32>
  %4 = stablehlo.dot_general %3, %w2, contracting_dims = [1] x [0] : (tensor<128x512xf32>, tensor<512x64xf32>) -> tensor<128x64xf32>
  return %4 : tensor<128x64xf32>
}"#,
    );
    assert_eq!(p.fusion.kernels.len(), 2);
    let sizes: Vec<usize> = p.fusion.kernels.iter().map(|k| k.ops.len()).collect();
    assert!(
        sizes.contains(&4),
        "dot+broadcast+add+tanh in one kernel: {sizes:?}"
    );
    assert!(
        rules(&p).contains(&"matmul-prologue-not-cheap")
            || rules(&p).contains(&"one-matmul-per-kernel")
    );
}

#[test]
fn weight_transpose_is_free_for_a_matmul() {
    // torch Linear: x @ W^T. The transpose is a relabeling; W is loaded with its
    // contraction dim on the partitions.
    let (_, p) = plan(
        r#"
func.func @main(%x: tensor<64x768xf32>, %w: tensor<3072x768xf32>) -> tensor<64x3072xf32> {
  %t = stablehlo.transpose %w, dims = [1, 0] : (tensor<3072x768xf32>) -> tensor<768x3072xf32>
  %0 = stablehlo.dot_general %x, %t, contracting_dims = [1] x [0] : (tensor<64x768xf32>, tensor<768x3072xf32>) -> tensor<64x3072xf32>
  return %0 : tensor<64x3072xf32>
}"#,
    );
    assert_eq!(p.layout.transpose_bytes(), 0);
}

#[test]
fn reduce_into_reduce_is_refused() {
    let (_, p) = plan(
        r#"
func.func @main(%x: tensor<4x8x16xf32>) -> tensor<4xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [2] : (tensor<4x8x16xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = stablehlo.reduce(%0 init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}"#,
    );
    assert!(
        rules(&p).contains(&"no-reduce-into-reduce"),
        "{:?}",
        rules(&p)
    );
    assert_eq!(p.fusion.kernels.len(), 2);
}

#[test]
fn mismatched_reductions_are_refused() {
    let (_, p) = plan(
        r#"
func.func @main(%x: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<16x32xf32>, tensor<f32>) -> tensor<32xf32>
  %b0 = stablehlo.broadcast_in_dim %r0, dims = [1] : (tensor<32xf32>) -> tensor<16x32xf32>
  %y = stablehlo.multiply %x, %b0 : tensor<16x32xf32>
  %r1 = stablehlo.reduce(%y init: %z) applies stablehlo.add across dimensions = [1] : (tensor<16x32xf32>, tensor<f32>) -> tensor<16xf32>
  %b1 = stablehlo.broadcast_in_dim %r1, dims = [0] : (tensor<16xf32>) -> tensor<16x32xf32>
  %o = stablehlo.divide %y, %b1 : tensor<16x32xf32>
  return %o : tensor<16x32xf32>
}"#,
    );
    assert!(
        rules(&p).contains(&"mismatched-reductions"),
        "{:?}",
        rules(&p)
    );
}

#[test]
fn opaque_ops_and_cycles_are_refused() {
    // %e feeds the kernel of %o directly and through a sort (opaque): fusing %e into
    // that kernel would need the sort's result before the kernel ends.
    let (_, p) = plan(
        r#"
func.func @main(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = stablehlo.exponential %x : tensor<16xf32>
  %s = "stablehlo.sort"(%e) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) : (tensor<16xf32>) -> tensor<16xf32>
  %o = stablehlo.add %e, %s : tensor<16xf32>
  return %o : tensor<16xf32>
}"#,
    );
    let r = rules(&p);
    assert!(r.contains(&"opaque-op"), "{r:?}");
    assert!(r.contains(&"would-create-cycle"), "{r:?}");
    assert_eq!(p.fusion.kernels.len(), 3);
}

#[test]
fn sbuf_capacity_vetoes_huge_rows() {
    // One row of 65536 f32 = 256 KiB per partition > 192 KiB (neuron-facts §1.3).
    let (_, p) = plan(
        r#"
func.func @main(%x: tensor<128x65536xf32>) -> tensor<128xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %e = stablehlo.exponential %x : tensor<128x65536xf32>
  %r = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [1] : (tensor<128x65536xf32>, tensor<f32>) -> tensor<128xf32>
  return %r : tensor<128xf32>
}"#,
    );
    assert!(rules(&p).contains(&"sbuf-capacity"), "{:?}", rules(&p));
}

#[test]
fn too_many_inputs_is_refused() {
    let n = 18;
    let args: Vec<String> = (0..n).map(|i| format!("%a{i}: tensor<64xf32>")).collect();
    let mut body = String::from("  %s0 = stablehlo.add %a0, %a1 : tensor<64xf32>\n");
    for i in 2..n {
        body += &format!(
            "  %s{} = stablehlo.add %s{}, %a{i} : tensor<64xf32>\n",
            i - 1,
            i - 2
        );
    }
    let src = format!(
        "func.func @main({}) -> tensor<64xf32> {{\n{body}  return %s{} : tensor<64xf32>\n}}",
        args.join(", "),
        n - 2
    );
    let (_, p) = plan(&src);
    assert!(rules(&p).contains(&"too-many-inputs"), "{:?}", rules(&p));
    assert!(p.fusion.kernels.iter().all(|k| k.inputs.len() <= 16));
}

#[test]
fn elementwise_prologue_through_relabels_stays_out_of_a_matmul() {
    // tanh -> reshape -> transpose -> dot: the tanh reaches the matmul through free
    // relabels, so it is a (non-cheap) prologue and must stay in its own kernel.
    let (_, p) = plan(
        r#"
func.func @main(%x: tensor<4x32x64xf32>, %w: tensor<64x128xf32>) -> tensor<128x128xf32> {
  %0 = stablehlo.tanh %x : tensor<4x32x64xf32>
  %1 = stablehlo.reshape %0 : (tensor<4x32x64xf32>) -> tensor<128x64xf32>
  %2 = stablehlo.transpose %1, dims = [1, 0] : (tensor<128x64xf32>) -> tensor<64x128xf32>
  %3 = stablehlo.dot_general %2, %w, contracting_dims = [0] x [0] : (tensor<64x128xf32>, tensor<64x128xf32>) -> tensor<128x128xf32>
  return %3 : tensor<128x128xf32>
}"#,
    );
    assert!(
        rules(&p).contains(&"matmul-prologue-not-cheap"),
        "{:?}",
        rules(&p)
    );
    assert_eq!(p.fusion.kernels.len(), 2);
}

#[test]
fn attention_values_and_context_need_no_transpose() {
    // P·V contracts over tokens and the output projection over features. A layout with
    // no relayout exists: the V projection puts tokens on partitions (x is an argument,
    // loaded with its features on partitions for the contraction), reshape + transpose
    // keep tokens there for P·V; P·V takes V as stationary, so its result has the head
    // dim (64, innermost of 12 × 64) on partitions, which the transpose + reshape turn
    // into features for the output projection. Reaching it needs the bias add, the
    // reshape and the transpose to change together (`layout_chain`).
    let (_, p) = plan(
        r#"
func.func @main(%x: tensor<128x768xf32>, %wv: tensor<768x768xf32>, %bv: tensor<768xf32>, %p: tensor<12x128x128xf32>, %wo: tensor<768x768xf32>) -> tensor<128x768xf32> {
  %v = stablehlo.dot_general %x, %wv, contracting_dims = [1] x [0] : (tensor<128x768xf32>, tensor<768x768xf32>) -> tensor<128x768xf32>
  %b = stablehlo.broadcast_in_dim %bv, dims = [1] : (tensor<768xf32>) -> tensor<128x768xf32>
  %vb = stablehlo.add %v, %b : tensor<128x768xf32>
  %v4 = stablehlo.reshape %vb : (tensor<128x768xf32>) -> tensor<128x12x64xf32>
  %vt = stablehlo.transpose %v4, dims = [1, 0, 2] : (tensor<128x12x64xf32>) -> tensor<12x128x64xf32>
  %ctx = stablehlo.dot_general %p, %vt, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<12x128x128xf32>, tensor<12x128x64xf32>) -> tensor<12x128x64xf32>
  %ct = stablehlo.transpose %ctx, dims = [1, 0, 2] : (tensor<12x128x64xf32>) -> tensor<128x12x64xf32>
  %c2 = stablehlo.reshape %ct : (tensor<128x12x64xf32>) -> tensor<128x768xf32>
  %out = stablehlo.dot_general %c2, %wo, contracting_dims = [1] x [0] : (tensor<128x768xf32>, tensor<768x768xf32>) -> tensor<128x768xf32>
  return %out : tensor<128x768xf32>
}"#,
    );
    assert_no_relayouts(&p);
}

#[test]
fn attention_values_reshaped_before_the_bias_add_need_no_transpose() {
    // The same values path as torch_xla's lazy capture prints it: the V projection's
    // result is reshaped to 1x128x768 *before* the bias add, so the add's elementwise
    // group starts at a view of the matmul result, not at the matmul result itself. No
    // relayout is needed (tokens on partitions from the V projection to P·V); reaching
    // it takes the matmul result, both reshapes, the add and the transpose together.
    let (_, p) = plan(
        r#"
func.func @main(%x: tensor<128x768xf32>, %wv: tensor<768x768xf32>, %bv: tensor<768xf32>, %p: tensor<12x128x128xf32>, %wo: tensor<768x768xf32>) -> tensor<128x768xf32> {
  %v = stablehlo.dot_general %x, %wv, contracting_dims = [1] x [0] : (tensor<128x768xf32>, tensor<768x768xf32>) -> tensor<128x768xf32>
  %v3 = stablehlo.reshape %v : (tensor<128x768xf32>) -> tensor<1x128x768xf32>
  %b = stablehlo.broadcast_in_dim %bv, dims = [2] : (tensor<768xf32>) -> tensor<1x128x768xf32>
  %vb = stablehlo.add %v3, %b : tensor<1x128x768xf32>
  %v4 = stablehlo.reshape %vb : (tensor<1x128x768xf32>) -> tensor<1x128x12x64xf32>
  %vt = stablehlo.transpose %v4, dims = [0, 2, 1, 3] : (tensor<1x128x12x64xf32>) -> tensor<1x12x128x64xf32>
  %v5 = stablehlo.reshape %vt : (tensor<1x12x128x64xf32>) -> tensor<12x128x64xf32>
  %ctx = stablehlo.dot_general %p, %v5, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<12x128x128xf32>, tensor<12x128x64xf32>) -> tensor<12x128x64xf32>
  %c1 = stablehlo.reshape %ctx : (tensor<12x128x64xf32>) -> tensor<1x12x128x64xf32>
  %ct = stablehlo.transpose %c1, dims = [0, 2, 1, 3] : (tensor<1x12x128x64xf32>) -> tensor<1x128x12x64xf32>
  %c2 = stablehlo.reshape %ct : (tensor<1x128x12x64xf32>) -> tensor<128x768xf32>
  %out = stablehlo.dot_general %c2, %wo, contracting_dims = [1] x [0] : (tensor<128x768xf32>, tensor<768x768xf32>) -> tensor<128x768xf32>
  return %out : tensor<128x768xf32>
}"#,
    );
    assert_no_relayouts(&p);
}

#[test]
fn query_path_reshaped_before_the_bias_add_needs_no_transpose() {
    // torch_xla's lazy capture of a query projection at 8 x 128 tokens: the matmul result
    // (1024 x 768: more tokens than features, so the forward pass puts tokens on
    // partitions) is reshaped before the bias add, and the scores contract over the head
    // dim. The relayout the sweeps leave reads the bias add's result itself (no view in
    // between), and removing it takes the add's group, the reshape feeding it and the
    // matmul result together (`layout_chain`'s tree move, tried even with no view path).
    let (_, p) = plan(
        r#"
func.func @main(%x: tensor<1024x768xf32>, %wq: tensor<768x768xf32>, %bq: tensor<768xf32>, %k: tensor<96x64x128xf32>) -> tensor<96x128x128xf32> {
  %q = stablehlo.dot_general %x, %wq, contracting_dims = [1] x [0] : (tensor<1024x768xf32>, tensor<768x768xf32>) -> tensor<1024x768xf32>
  %q3 = stablehlo.reshape %q : (tensor<1024x768xf32>) -> tensor<8x128x768xf32>
  %b = stablehlo.broadcast_in_dim %bq, dims = [2] : (tensor<768xf32>) -> tensor<8x128x768xf32>
  %qb = stablehlo.add %q3, %b : tensor<8x128x768xf32>
  %q4 = stablehlo.reshape %qb : (tensor<8x128x768xf32>) -> tensor<8x128x12x64xf32>
  %qt = stablehlo.transpose %q4, dims = [0, 2, 1, 3] : (tensor<8x128x12x64xf32>) -> tensor<8x12x128x64xf32>
  %q5 = stablehlo.reshape %qt : (tensor<8x12x128x64xf32>) -> tensor<96x128x64xf32>
  %s = stablehlo.dot_general %q5, %k, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<96x128x64xf32>, tensor<96x64x128xf32>) -> tensor<96x128x128xf32>
  return %s : tensor<96x128x128xf32>
}"#,
    );
    assert_no_relayouts(&p);
}

#[test]
fn a_cycle_check_past_its_limit_keeps_the_producer_out() {
    // The kernel grown from %o refuses the sort (opaque); then %e may join it as an extra
    // output (it also feeds the chain %c1..%c4), which takes a cycle check: forward from
    // %c1 along the chain, backward from the sort. The searches alternate, node by node,
    // until one runs out: under the default limit the backward one does (the sort has no
    // producer in the region) and %e joins; under a limit of two reached nodes the check
    // has reached three (%c1, the sort, %c2) before that, gives up, and %e stays out.
    let src = r#"
func.func @main(%x: tensor<16xf32>, %z: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %e = stablehlo.exponential %x : tensor<16xf32>
  %c1 = stablehlo.sine %e : tensor<16xf32>
  %c2 = stablehlo.cosine %c1 : tensor<16xf32>
  %c3 = stablehlo.tanh %c2 : tensor<16xf32>
  %c4 = stablehlo.abs %c3 : tensor<16xf32>
  %s = "stablehlo.sort"(%z) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) : (tensor<16xf32>) -> tensor<16xf32>
  %o = stablehlo.add %e, %s : tensor<16xf32>
  return %o, %c4 : tensor<16xf32>, tensor<16xf32>
}"#;
    let m = parse_module(src).expect("test module parses");
    let f = m.entry().expect("entry").clone();
    let tight = FusionConfig {
        cycle_check_limit: 2,
        ..FusionConfig::default()
    };
    let limited = plan_function(&m, &f, &tight);
    assert!(
        rules(&limited).contains(&"cycle-check-limit"),
        "{:?}",
        rules(&limited)
    );
    let p = plan_function(&m, &f, &FusionConfig::default());
    assert!(!rules(&p).contains(&"cycle-check-limit"), "{:?}", rules(&p));
    // %e (the first op) and %o (the last) share a kernel only without the limit.
    let ops = &m.region(f.body).ops;
    let (e, o) = (ops[0], ops[ops.len() - 2]);
    let together = |p: &NeuronPlan| {
        p.fusion
            .kernels
            .iter()
            .any(|k| k.ops.contains(&e) && k.ops.contains(&o))
    };
    assert!(together(&p) && !together(&limited));
}

/// Scores, masked softmax and P·V of one attention block (8 heads, 128 tokens).
const ATTENTION: &str = r#"
func.func @main(%q: tensor<8x128x64xf32>, %k: tensor<8x128x64xf32>, %v: tensor<8x128x64xf32>, %mask: tensor<128xf32>) -> tensor<8x128x64xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %c = stablehlo.constant dense<0.125> : tensor<8x128x128xf32>
  %s = stablehlo.dot_general %q, %k, batching_dims = [0] x [0], contracting_dims = [2] x [2] : (tensor<8x128x64xf32>, tensor<8x128x64xf32>) -> tensor<8x128x128xf32>
  %ss = stablehlo.multiply %s, %c : tensor<8x128x128xf32>
  %mb = stablehlo.broadcast_in_dim %mask, dims = [2] : (tensor<128xf32>) -> tensor<8x128x128xf32>
  %x = stablehlo.add %ss, %mb : tensor<8x128x128xf32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [2] : (tensor<8x128x128xf32>, tensor<f32>) -> tensor<8x128xf32>
  %m2 = stablehlo.broadcast_in_dim %m, dims = [0, 1] : (tensor<8x128xf32>) -> tensor<8x128x128xf32>
  %d = stablehlo.subtract %x, %m2 : tensor<8x128x128xf32>
  %e = stablehlo.exponential %d : tensor<8x128x128xf32>
  %l = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [2] : (tensor<8x128x128xf32>, tensor<f32>) -> tensor<8x128xf32>
  %l2 = stablehlo.broadcast_in_dim %l, dims = [0, 1] : (tensor<8x128xf32>) -> tensor<8x128x128xf32>
  %p = stablehlo.divide %e, %l2 : tensor<8x128x128xf32>
  %o = stablehlo.dot_general %p, %v, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<8x128x128xf32>, tensor<8x128x64xf32>) -> tensor<8x128x64xf32>
  return %o : tensor<8x128x64xf32>
}"#;

#[test]
fn attention_probabilities_need_one_transpose_unless_recomputed() {
    use neuronc_passes::{run_pipeline, PassContext, Pipeline};
    // Softmax reduces along keys (free axis) and P·V contracts over them (partitions):
    // as traced, the probabilities move once.
    let (_, p) = plan(ATTENTION);
    assert_eq!(p.layout.transpose_count(), 1, "{:?}", p.layout.relayouts);
    // With their own copy from the score matmul on, made with keys on the partitions
    // (the row max and sum come in through broadcasts), nothing moves.
    let mut m = parse_module(ATTENTION).expect("test module parses");
    let mut ctx = PassContext::new();
    ctx.verify_each = true;
    let pipeline = Pipeline::parse("recompute-for-contraction,dce").expect("pipeline");
    run_pipeline(&mut m, &pipeline, &mut ctx).expect("runs");
    let f = m.entry().expect("entry").clone();
    let p = plan_function(&m, &f, &FusionConfig::default());
    assert_no_relayouts(&p);
    assert!(p.layout.cross_partition_reductions.is_empty());
}
