#![allow(clippy::needless_range_loop)] // indices pair inputs with outputs
//! Property tests: elementwise ops and conversions against Rust's own arithmetic where
//! the StableHLO semantics coincide with it (wrapping integer arithmetic, IEEE f32/f64
//! arithmetic, saturating float -> int casts, `half`'s round-to-nearest-even f16/bf16).

use neuronc_interp::{run_function, RunOptions, Tensor};
use neuronc_ir::{ElemType, Module, NamedAttrs, OpKind};
use proptest::prelude::*;

/// A module `main(a: T[n], b: T[n]) -> R[n]` applying `kind` (binary if `binary`).
fn module(kind: OpKind, t: ElemType, r: ElemType, n: i64, binary: bool) -> Module {
    let mut m = Module::new();
    let ti = m.types.tensor(t, &[n]);
    let ri = m.types.tensor(r, &[n]);
    let body = m.add_region(None);
    let a = m.add_region_arg(body, ti);
    let mut ops = vec![a];
    if binary {
        ops.push(m.add_region_arg(body, ti));
    }
    let op = m.create_op(kind, ops, &[ri], NamedAttrs::new());
    m.append_op(body, op);
    let res = m.op(op).results[0];
    let ret = m.create_op(OpKind::FuncReturn, vec![res], &[], NamedAttrs::new());
    m.append_op(body, ret);
    m.funcs.push(neuronc_ir::Func {
        name: "main".into(),
        visibility: None,
        body,
        result_types: vec![ri],
        arg_attrs: vec![NamedAttrs::new(); if binary { 2 } else { 1 }],
        result_attrs: vec![NamedAttrs::new()],
        attrs: NamedAttrs::new(),
        loc: None,
        span: Default::default(),
    });
    m
}

fn run(m: &Module, ins: Vec<Tensor>) -> Tensor {
    run_function(m, "main", ins, &RunOptions::default())
        .expect("runs")
        .remove(0)
}

proptest! {
    #[test]
    fn i32_add_mul_wrap(a in prop::collection::vec(any::<i32>(), 8), b in prop::collection::vec(any::<i32>(), 8)) {
        let i32t = ElemType::Int(32);
        let ta = Tensor::from_i64(i32t, &[8], &a.iter().map(|&x| x as i64).collect::<Vec<_>>()).unwrap();
        let tb = Tensor::from_i64(i32t, &[8], &b.iter().map(|&x| x as i64).collect::<Vec<_>>()).unwrap();
        let add = run(&module(OpKind::Add, i32t, i32t, 8, true), vec![ta.clone(), tb.clone()]);
        let mul = run(&module(OpKind::Multiply, i32t, i32t, 8, true), vec![ta, tb]);
        for i in 0..8 {
            prop_assert_eq!(add.as_i64().unwrap()[i], a[i].wrapping_add(b[i]) as i64);
            prop_assert_eq!(mul.as_i64().unwrap()[i], a[i].wrapping_mul(b[i]) as i64);
        }
    }

    #[test]
    fn f32_arith_is_ieee(a in prop::collection::vec(any::<f32>(), 8), b in prop::collection::vec(any::<f32>(), 8)) {
        for (kind, f) in [(OpKind::Add, (|x: f32, y: f32| x + y) as fn(f32, f32) -> f32),
                          (OpKind::Divide, |x, y| x / y), (OpKind::Subtract, |x, y| x - y)] {
            let out = run(&module(kind, ElemType::F32, ElemType::F32, 8, true),
                vec![Tensor::from_f32(&[8], &a).unwrap(), Tensor::from_f32(&[8], &b).unwrap()]);
            for i in 0..8 {
                let (got, want) = (out.as_f32().unwrap()[i], f(a[i], b[i]));
                prop_assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()));
            }
        }
    }

    #[test]
    fn f32_to_int_saturates(a in prop::collection::vec(any::<f32>(), 8)) {
        let out = run(&module(OpKind::Convert, ElemType::F32, ElemType::Int(32), 8, false),
            vec![Tensor::from_f32(&[8], &a).unwrap()]);
        for i in 0..8 {
            prop_assert_eq!(out.as_i64().unwrap()[i], a[i] as i32 as i64);
        }
        let out = run(&module(OpKind::Convert, ElemType::F32, ElemType::UInt(16), 8, false),
            vec![Tensor::from_f32(&[8], &a).unwrap()]);
        for i in 0..8 {
            prop_assert_eq!(out.as_i64().unwrap()[i], a[i] as u16 as i64);
        }
    }

    #[test]
    fn f32_to_half_rounds_to_nearest_even(a in prop::collection::vec(any::<f32>(), 8)) {
        for e in [ElemType::F16, ElemType::BF16] {
            let out = run(&module(OpKind::Convert, ElemType::F32, e, 8, false),
                vec![Tensor::from_f32(&[8], &a).unwrap()]);
            for i in 0..8 {
                let want = if e == ElemType::F16 { half::f16::from_f32(a[i]).to_f32() } else { half::bf16::from_f32(a[i]).to_f32() };
                let got = out.as_f32().unwrap()[i];
                prop_assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()));
            }
        }
    }

    #[test]
    fn shifts_match_checked_shifts(a in prop::collection::vec(any::<i32>(), 8), s in prop::collection::vec(-40i32..40, 8)) {
        let i32t = ElemType::Int(32);
        let ta = Tensor::from_i64(i32t, &[8], &a.iter().map(|&x| x as i64).collect::<Vec<_>>()).unwrap();
        let ts = Tensor::from_i64(i32t, &[8], &s.iter().map(|&x| x as i64).collect::<Vec<_>>()).unwrap();
        let shl = run(&module(OpKind::ShiftLeft, i32t, i32t, 8, true), vec![ta.clone(), ts.clone()]);
        let srl = run(&module(OpKind::ShiftRightLogical, i32t, i32t, 8, true), vec![ta, ts]);
        for i in 0..8 {
            let amt = s[i] as u32;
            prop_assert_eq!(shl.as_i64().unwrap()[i], a[i].checked_shl(amt).unwrap_or(0) as i64);
            prop_assert_eq!(srl.as_i64().unwrap()[i], (a[i] as u32).checked_shr(amt).unwrap_or(0) as i32 as i64);
        }
    }
}
