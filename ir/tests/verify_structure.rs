//! Structural verifier rules on modules built through the `Module` API (what passes
//! produce): SSA dominance across positions and sibling regions, malformed arenas, and
//! robustness (no panics on hostile attributes) plus a linear-time budget.
use neuronc_ir::attr::Attr;
use neuronc_ir::{
    verify_module, ElemType, Func, Module, NamedAttrs, OpKind, RegionId, TypeId, ValueId,
};

fn main_func(m: &mut Module, arg_types: &[TypeId]) -> (RegionId, Vec<ValueId>) {
    let body = m.add_region(None);
    let args = arg_types
        .iter()
        .map(|&t| m.add_region_arg(body, t))
        .collect::<Vec<_>>();
    m.funcs.push(Func {
        name: "main".into(),
        visibility: None,
        body,
        result_types: Vec::new(),
        arg_attrs: vec![NamedAttrs::new(); arg_types.len()],
        result_attrs: Vec::new(),
        attrs: NamedAttrs::new(),
        loc: None,
        span: Default::default(),
    });
    (body, args)
}

fn messages(m: &Module) -> Vec<String> {
    match verify_module(m) {
        Ok(()) => Vec::new(),
        Err(e) => e.0.into_iter().map(|d| d.message).collect(),
    }
}

fn ret(m: &mut Module, body: RegionId) {
    let r = m.create_op(OpKind::FuncReturn, vec![], &[], NamedAttrs::new());
    m.append_op(body, r);
}

#[test]
fn use_before_definition_is_rejected() {
    let mut m = Module::new();
    let f = m.types.tensor(ElemType::F32, &[]);
    let (body, args) = main_func(&mut m, &[f]);
    let neg = m.create_op(OpKind::Negate, vec![args[0]], &[f], NamedAttrs::new());
    let later = m.ops[neg.index()].results[0];
    let add = m.create_op(OpKind::Add, vec![args[0], later], &[f], NamedAttrs::new());
    m.append_op(body, add);
    m.append_op(body, neg);
    ret(&mut m, body);
    let d = messages(&m);
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(
        d[0].starts_with("'stablehlo.add' op operand #1 uses a value that does not dominate it"),
        "{d:#?}"
    );
}

#[test]
fn value_from_sibling_region_is_rejected() {
    let mut m = Module::new();
    let f = m.types.tensor(ElemType::F32, &[]);
    let p = m.types.tensor(ElemType::I1, &[]);
    let (body, args) = main_func(&mut m, &[p, f]);
    let if_op = m.create_op(OpKind::If, vec![args[0]], &[f], NamedAttrs::new());
    let (then_r, else_r) = (m.add_op_region(if_op), m.add_op_region(if_op));
    let neg = m.create_op(OpKind::Negate, vec![args[1]], &[f], NamedAttrs::new());
    let t = m.ops[neg.index()].results[0];
    m.append_op(then_r, neg);
    for r in [then_r, else_r] {
        let ret = m.create_op(OpKind::Return, vec![t], &[], NamedAttrs::new());
        m.append_op(r, ret);
    }
    m.append_op(body, if_op);
    ret(&mut m, body);
    let d = messages(&m);
    assert_eq!(d, vec!["'stablehlo.return' op operand #0 uses a value that does not dominate it (it is used before its definition or defined in another region)".to_string()]);
}

#[test]
fn dangling_ids_are_reported_not_panicked_on() {
    let mut m = Module::new();
    let f = m.types.tensor(ElemType::F32, &[]);
    let (body, args) = main_func(&mut m, &[f]);
    let neg = m.create_op(
        OpKind::Negate,
        vec![args[0], ValueId(999)],
        &[f],
        NamedAttrs::new(),
    );
    m.append_op(body, neg);
    ret(&mut m, body);
    assert_eq!(
        messages(&m),
        vec!["malformed module: an id refers outside its arena".to_string()]
    );
}

#[test]
fn hostile_attributes_do_not_panic() {
    let mut m = Module::new();
    let t = m.types.tensor(ElemType::F32, &[4, 5]);
    let s = m.types.tensor(ElemType::F32, &[]);
    let (body, args) = main_func(&mut m, &[t, s]);
    let huge = [i64::MIN, -1, 0, 3, i64::MAX];
    for &a in &huge {
        for &b in &huge {
            let mut pad = NamedAttrs::new();
            for n in ["edge_padding_low", "edge_padding_high", "interior_padding"] {
                pad.set(n, Attr::IntArray(ElemType::Int(64), vec![a, b]));
            }
            let op = m.create_op(OpKind::Pad, vec![args[0], args[1]], &[t], pad);
            m.append_op(body, op);
            let mut sl = NamedAttrs::new();
            sl.set(
                "start_indices",
                Attr::IntArray(ElemType::Int(64), vec![a, 0]),
            );
            sl.set(
                "limit_indices",
                Attr::IntArray(ElemType::Int(64), vec![b, 5]),
            );
            sl.set("strides", Attr::IntArray(ElemType::Int(64), vec![a, b]));
            let op = m.create_op(OpKind::Slice, vec![args[0]], &[t], sl);
            m.append_op(body, op);
            let mut tr = NamedAttrs::new();
            tr.set("permutation", Attr::IntArray(ElemType::Int(64), vec![a, b]));
            let op = m.create_op(OpKind::Transpose, vec![args[0]], &[t], tr);
            m.append_op(body, op);
            let mut rw = NamedAttrs::new();
            rw.set(
                "window_dimensions",
                Attr::IntArray(ElemType::Int(64), vec![a, b]),
            );
            rw.set(
                "window_strides",
                Attr::IntArray(ElemType::Int(64), vec![b, a]),
            );
            rw.set(
                "base_dilations",
                Attr::IntArray(ElemType::Int(64), vec![a, a]),
            );
            let op = m.create_op(OpKind::ReduceWindow, vec![args[0], args[1]], &[t], rw);
            let r = m.add_op_region(op);
            let x = m.add_region_arg(r, s);
            let y = m.add_region_arg(r, s);
            let add = m.create_op(OpKind::Add, vec![x, y], &[s], NamedAttrs::new());
            let sum = m.ops[add.index()].results[0];
            m.append_op(r, add);
            let rr = m.create_op(OpKind::Return, vec![sum], &[], NamedAttrs::new());
            m.append_op(r, rr);
            m.append_op(body, op);
        }
    }
    ret(&mut m, body);
    // Every op breaks some rule; what matters is that nothing panics and all are reported.
    let d = messages(&m);
    assert!(d.len() >= 4 * huge.len() * huge.len() - 4, "{}", d.len());
}

#[test]
fn six_thousand_ops_verify_quickly() {
    let mut m = Module::new();
    let t = m.types.tensor(ElemType::F32, &[128, 256]);
    let (body, args) = main_func(&mut m, &[t]);
    let mut v = args[0];
    for i in 0..6000 {
        let kind = if i % 2 == 0 {
            OpKind::Add
        } else {
            OpKind::Tanh
        };
        let operands = if i % 2 == 0 { vec![v, v] } else { vec![v] };
        let op = m.create_op(kind, operands, &[t], NamedAttrs::new());
        v = m.ops[op.index()].results[0];
        m.append_op(body, op);
    }
    let r = m.create_op(OpKind::FuncReturn, vec![v], &[], NamedAttrs::new());
    m.append_op(body, r);
    m.funcs[0].result_types = vec![t];
    assert!(verify_module(&m).is_ok());
    let start = std::time::Instant::now();
    for _ in 0..10 {
        assert!(verify_module(&m).is_ok());
    }
    let per_run = start.elapsed() / 10;
    eprintln!("verify_module on 6001 ops: {per_run:?} per run");
    // Debug builds are ~10x slower than release; the release budget is 5 ms.
    let budget = if cfg!(debug_assertions) { 100 } else { 5 };
    assert!(per_run.as_millis() < budget, "took {per_run:?}");
}
