//! Pass tests that build IR through the `Module` API (independent of parser and printer).
//! Expected results are derived by hand from the rule definitions.

mod common;

use common::{ints, kinds, returned, Builder};
use neuronc_ir::{Attr, ElemType, Module, OpKind};
use neuronc_passes::{run_pipeline, PassContext, Pipeline};

const F32: ElemType = ElemType::F32;
const I32: ElemType = ElemType::Int(32);

fn run(m: &mut Module, passes: &str) -> neuronc_passes::PassReport {
    let mut ctx = PassContext::new();
    run_pipeline(m, &Pipeline::parse(passes).unwrap(), &mut ctx).unwrap()
}

#[test]
fn dce_removes_unused_pure_ops_and_keeps_side_effects() {
    let (mut b, a) = Builder::new(&[(F32, &[4])]);
    let t = b.ty(F32, &[4]);
    let _dead = b.op(OpKind::Exponential, &[a[0]], t);
    let dead2 = b.op(OpKind::Negate, &[a[0]], t);
    let _dead3 = b.op(OpKind::Abs, &[dead2], t);
    let _effect = b.op_attrs(
        OpKind::CustomCall,
        &[a[0]],
        t,
        &[("call_target_name", Attr::Str("x".into()))],
    );
    let live = b.op(OpKind::Sine, &[a[0]], t);
    let mut m = b.finish(&[live]);
    let r = run(&mut m, "dce");
    assert_eq!(
        kinds(&m, "main"),
        [OpKind::CustomCall, OpKind::Sine, OpKind::FuncReturn]
    );
    assert_eq!(r.rewrites, 3);
}

#[test]
fn cse_merges_commuted_operands_and_identical_constants() {
    let (mut b, a) = Builder::new(&[(F32, &[4]), (F32, &[4])]);
    let t = b.ty(F32, &[4]);
    let x = b.op(OpKind::Add, &[a[0], a[1]], t);
    let y = b.op(OpKind::Add, &[a[1], a[0]], t);
    let s = b.op(OpKind::Subtract, &[a[0], a[1]], t);
    let s2 = b.op(OpKind::Subtract, &[a[1], a[0]], t); // not commutative: stays
    let c1 = b.splat_f32(&[4], 2.0);
    let c2 = b.splat_f32(&[4], 2.0);
    let z = b.op(OpKind::Multiply, &[x, y], t);
    let w = b.op(OpKind::Multiply, &[c1, c2], t);
    let mut m = b.finish(&[z, w, s, s2]);
    run(&mut m, "cse");
    let k = kinds(&m, "main");
    assert_eq!(k.iter().filter(|&&k| k == OpKind::Add).count(), 1);
    assert_eq!(k.iter().filter(|&&k| k == OpKind::Subtract).count(), 2);
    assert_eq!(k.iter().filter(|&&k| k == OpKind::Constant).count(), 1);
    // mul(x, y) became mul(x, x)
    let mul = m.op(neuronc_passes::ir_util::def_op(&m, returned(&m, "main")[0]).unwrap());
    assert_eq!(mul.operands[0], mul.operands[1]);
}

#[test]
fn cse_does_not_merge_float_constants_that_differ_only_in_sign_of_zero() {
    let (mut b, _) = Builder::new(&[]);
    let c1 = b.splat_f32(&[2], 0.0);
    let c2 = b.splat_f32(&[2], -0.0);
    let mut m = b.finish(&[c1, c2]);
    run(&mut m, "cse");
    assert_eq!(kinds(&m, "main").len(), 3);
}

#[test]
fn canonicalize_transpose_of_transpose_composes_to_identity() {
    let (mut b, a) = Builder::new(&[(F32, &[2, 3, 4])]);
    let t1 = b.ty(F32, &[3, 4, 2]);
    let x = b.op_attrs(
        OpKind::Transpose,
        &[a[0]],
        t1,
        &[("permutation", ints(&[1, 2, 0]))],
    );
    let t2 = b.ty(F32, &[2, 3, 4]);
    let y = b.op_attrs(
        OpKind::Transpose,
        &[x],
        t2,
        &[("permutation", ints(&[2, 0, 1]))],
    );
    let mut m = b.finish(&[y]);
    run(&mut m, "canonicalize");
    assert_eq!(kinds(&m, "main"), [OpKind::FuncReturn]);
    assert_eq!(returned(&m, "main"), [a[0]]);
}

#[test]
fn canonicalize_transpose_of_transpose_composes_permutations() {
    // x: 2x3x4; p = [1,0,2] -> 3x2x4; q = [2,1,0] -> 4x2x3. Composed i -> p[q[i]] = [2,0,1].
    let (mut b, a) = Builder::new(&[(F32, &[2, 3, 4])]);
    let t1 = b.ty(F32, &[3, 2, 4]);
    let x = b.op_attrs(
        OpKind::Transpose,
        &[a[0]],
        t1,
        &[("permutation", ints(&[1, 0, 2]))],
    );
    let t2 = b.ty(F32, &[4, 2, 3]);
    let y = b.op_attrs(
        OpKind::Transpose,
        &[x],
        t2,
        &[("permutation", ints(&[2, 1, 0]))],
    );
    let mut m = b.finish(&[y]);
    run(&mut m, "canonicalize");
    assert_eq!(kinds(&m, "main"), [OpKind::Transpose, OpKind::FuncReturn]);
    let op = neuronc_passes::ir_util::def_op(&m, returned(&m, "main")[0]).unwrap();
    assert_eq!(m.op(op).attrs.i64_array("permutation").unwrap(), [2, 0, 1]);
    assert_eq!(m.op(op).operands, [a[0]]);
}

#[test]
fn canonicalize_algebra_respects_float_semantics() {
    let (mut b, a) = Builder::new(&[(F32, &[4]), (I32, &[4])]);
    let tf = b.ty(F32, &[4]);
    let ti = b.ty(I32, &[4]);
    let zf = b.splat_f32(&[4], 0.0);
    let one = b.splat_f32(&[4], 1.0);
    let zi = b.splat_i32(&[4], 0);
    let f_add0 = b.op(OpKind::Add, &[a[0], zf], tf); // kept: -0.0 + 0.0 = +0.0
    let f_mul1 = b.op(OpKind::Multiply, &[one, a[0]], tf); // -> a0
    let f_mul0 = b.op(OpKind::Multiply, &[a[0], zf], tf); // kept: NaN * 0
    let i_add0 = b.op(OpKind::Add, &[zi, a[1]], ti); // -> a1
    let i_mul0 = b.op(OpKind::Multiply, &[a[1], zi], ti); // -> 0
    let f_sub = b.op(OpKind::Subtract, &[a[0], a[0]], tf); // kept
    let i_sub = b.op(OpKind::Subtract, &[a[1], a[1]], ti); // -> 0
    let n1 = b.op(OpKind::Negate, &[a[0]], tf);
    let n2 = b.op(OpKind::Negate, &[n1], tf); // -> a0
    let mut m = b.finish(&[f_add0, f_mul1, f_mul0, i_add0, i_mul0, f_sub, i_sub, n2]);
    run(&mut m, "canonicalize");
    let r = returned(&m, "main");
    assert_eq!(r[1], a[0]);
    assert_eq!(r[3], a[1]);
    assert_eq!(r[7], a[0]);
    let kind_of = |v| neuronc_passes::ir_util::def_op(&m, v).map(|o| m.op(o).kind);
    assert_eq!(kind_of(r[0]), Some(OpKind::Add));
    assert_eq!(kind_of(r[2]), Some(OpKind::Multiply));
    assert_eq!(kind_of(r[5]), Some(OpKind::Subtract));
    for v in [r[4], r[6]] {
        let c = neuronc_passes::ir_util::constant_of(&m, v).expect("folded to a constant");
        assert_eq!(c.element_bytes(0), 0i32.to_le_bytes());
    }
}

#[test]
fn opt_fuel_limits_rewrites_and_trace_lists_them() {
    let build = || {
        let (mut b, a) = Builder::new(&[(F32, &[4])]);
        let t = b.ty(F32, &[4]);
        let n1 = b.op(OpKind::Negate, &[a[0]], t);
        let n2 = b.op(OpKind::Negate, &[n1], t);
        let one = b.splat_f32(&[4], 1.0);
        let x = b.op(OpKind::Multiply, &[n2, one], t);
        b.finish(&[x])
    };
    let pipeline = Pipeline::parse("canonicalize").unwrap();
    let mut full = build();
    let mut ctx = PassContext::new();
    ctx.trace_rewrites = true;
    let r = run_pipeline(&mut full, &pipeline, &mut ctx).unwrap();
    assert_eq!(r.rewrites, 2);
    assert!(
        r.trace[0].starts_with("double-negate @ stablehlo.negate"),
        "{:?}",
        r.trace
    );
    assert!(
        r.trace[1].starts_with("mul-one @ stablehlo.multiply"),
        "{:?}",
        r.trace
    );
    assert_eq!(kinds(&full, "main"), [OpKind::FuncReturn]);

    let mut one = build();
    let mut ctx = PassContext::new().with_fuel(1);
    ctx.trace_rewrites = true;
    let r = run_pipeline(&mut one, &pipeline, &mut ctx).unwrap();
    assert_eq!(r.trace.len(), 1);
    assert_eq!(ctx.fuel(), Some(0));
    assert!(kinds(&one, "main").contains(&OpKind::Multiply));

    let mut none = build();
    let mut ctx = PassContext::new().with_fuel(0);
    let r = run_pipeline(&mut none, &pipeline, &mut ctx).unwrap();
    assert_eq!(r.rewrites, 0);
    assert_eq!(kinds(&none, "main").len(), 5);
}

#[test]
fn inline_replaces_calls_and_drops_private_callees() {
    // private @sq(x) = x * x ; main(a) = sq(a) + 1-free
    let (mut cb, ca) = Builder::new(&[(F32, &[3])]);
    let t = cb.ty(F32, &[3]);
    let sq = cb.op(OpKind::Multiply, &[ca[0], ca[0]], t);
    cb.finish_func("sq", &[sq], true);
    let mut m = cb.m;
    let body = m.add_region(None);
    let t = m.types.tensor(F32, &[3]);
    let arg = m.add_region_arg(body, t);
    let mut attrs = neuronc_ir::NamedAttrs::new();
    attrs.set("callee", Attr::Symbol("sq".into()));
    let call = m.create_op(OpKind::Call, vec![arg], &[t], attrs);
    m.append_op(body, call);
    let cv = m.op(call).results[0];
    let mut b = Builder { m, body };
    let e = b.op(OpKind::Exponential, &[cv], t);
    let mut m = b.finish(&[e]);
    run(&mut m, "inline");
    assert!(m.func("sq").is_none());
    assert_eq!(
        kinds(&m, "main"),
        [OpKind::Multiply, OpKind::Exponential, OpKind::FuncReturn]
    );
    let mul = m.op(m.region(m.func("main").unwrap().body).ops[0]);
    assert_eq!(mul.operands, [arg, arg]);
}

#[test]
fn report_counts_fixpoint_iterations() {
    let (mut b, a) = Builder::new(&[(F32, &[4])]);
    let t = b.ty(F32, &[4]);
    let x = b.op(OpKind::Exponential, &[a[0]], t);
    let y = b.op(OpKind::Exponential, &[a[0]], t);
    let z = b.op(OpKind::Add, &[x, y], t);
    let mut m = b.finish(&[z]);
    let r = run(&mut m, "fixpoint<5>(cse,dce)");
    // iteration 1 changes (cse), iteration 2 changes nothing -> stops.
    assert_eq!(r.runs.len(), 4);
    assert_eq!(r.ops_before, 4);
    assert_eq!(r.ops_after, 3);
    assert!(r.timing_table().contains("cse"));
}

/// Breaks the module: gives the first op's result a different shape.
struct Breaker;
impl neuronc_passes::Pass for Breaker {
    fn name(&self) -> &'static str {
        "breaker"
    }
    fn run(
        &self,
        m: &mut Module,
        _: &mut PassContext,
    ) -> Result<neuronc_passes::Changed, neuronc_passes::PassError> {
        let op = m.region(m.funcs[0].body).ops[0];
        let r = m.op(op).results[0];
        let bad = m.types.tensor(F32, &[7]);
        m.values[r.index()].ty = bad;
        Ok(neuronc_passes::Changed::Yes)
    }
}

#[test]
fn verify_each_names_the_breaking_pass() {
    use neuronc_passes::{PassError, PipelineItem};
    let (mut b, a) = Builder::new(&[(F32, &[4])]);
    let t = b.ty(F32, &[4]);
    let x = b.op(OpKind::Negate, &[a[0]], t);
    let mut m = b.finish(&[x]);
    let pipeline = Pipeline {
        items: vec![
            PipelineItem::Pass(Box::new(neuronc_passes::dce::Dce)),
            PipelineItem::Pass(Box::new(Breaker)),
        ],
    };
    let mut ctx = PassContext::new();
    ctx.verify_each = true;
    let err = run_pipeline(&mut m, &pipeline, &mut ctx).unwrap_err();
    assert!(
        matches!(
            err,
            PassError::VerifyAfter {
                pass: "breaker",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn print_after_sends_the_module_to_the_sink() {
    use std::sync::{Arc, Mutex};
    let (mut b, a) = Builder::new(&[(F32, &[4])]);
    let t = b.ty(F32, &[4]);
    let n1 = b.op(OpKind::Negate, &[a[0]], t);
    let n2 = b.op(OpKind::Negate, &[n1], t);
    let mut m = b.finish(&[n2]);
    let seen: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let sink = seen.clone();
    let mut ctx = PassContext::new();
    ctx.print_after = vec!["canonicalize".into()];
    ctx.print_sink = Some(Box::new(move |pass, text| {
        sink.lock()
            .unwrap()
            .push((pass.to_string(), text.to_string()))
    }));
    run_pipeline(
        &mut m,
        &Pipeline::parse("cse,canonicalize,dce").unwrap(),
        &mut ctx,
    )
    .unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].0, "canonicalize");
    assert!(seen[0].1.contains("return %arg0"), "{}", seen[0].1);
    assert!(!seen[0].1.contains("stablehlo.negate"), "{}", seen[0].1);
}

#[test]
fn opt_options_map_to_pipeline_and_context() {
    use neuronc_passes::OptOptions;
    let o = OptOptions {
        opt_level: Some(1),
        opt_fuel: Some(3),
        trace_rewrites: true,
        verify_each: true,
        print_after: vec!["cse".into()],
        ..OptOptions::default()
    };
    assert_eq!(
        o.pipeline().unwrap().to_string(),
        "inline,canonicalize,cse,dce"
    );
    let ctx = o.context().unwrap();
    assert_eq!(ctx.fuel(), Some(3));
    assert!(ctx.trace_rewrites && ctx.verify_each);
    let with_passes = OptOptions {
        passes: Some("dce".into()),
        ..o.clone()
    };
    assert_eq!(with_passes.pipeline().unwrap().to_string(), "dce");
    let bad = OptOptions {
        print_after: vec!["nope".into()],
        ..OptOptions::default()
    };
    assert!(bad.context().is_err());
}
