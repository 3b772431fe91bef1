//! Property: on random chains of elementwise, reshape, transpose, broadcast and convert
//! ops (with splat constants such as 0, -0, 1 and 2 that trigger the algebraic rules),
//! `-O2` preserves what the interpreter computes (rtol 1e-4) and verifies after every pass,
//! and the generic clean-up pipeline never grows the number of ops that compute (relabels,
//! broadcasts, reshapes and constants, may move: broadcast sinking puts one after the
//! elementwise work it moves before it) nor the elements they compute.

mod common;

use common::{ints, Builder};
use neuronc_interp::{compare, run_function, RunOptions, Tensor};
use neuronc_ir::{verify_module, ElemType, Module, OpKind, TypeId, ValueId};
use neuronc_passes::{run_pipeline, PassContext, Pipeline};
use proptest::prelude::*;

const F32: ElemType = ElemType::F32;

/// Builds `main(x: f32[2x3x4])` from op codes; every step appends one value.
fn build(steps: &[(u8, u32)]) -> Module {
    let (mut b, args) = Builder::new(&[(F32, &[2, 3, 4])]);
    let mut vals: Vec<ValueId> = vec![args[0]];
    for &(code, p) in steps {
        let x = vals[p as usize % vals.len()];
        let shape =
            b.m.tensor_type(x)
                .map(|t| t.shape.to_vec())
                .unwrap_or_default();
        let elem = b.m.tensor_type(x).map_or(F32, |t| t.elem);
        let ty = b.m.value_type(x);
        let v = match code % 12 {
            0 => b.op(OpKind::Negate, &[x], ty),
            1 => b.op(OpKind::Abs, &[x], ty),
            2 => b.op(OpKind::Tanh, &[x], ty),
            3 | 4 => {
                let c = splat_like(
                    &mut b,
                    &shape,
                    elem,
                    [0.0, -0.0, 1.0, 2.0][(p / 7) as usize % 4],
                );
                let kind = [
                    OpKind::Add,
                    OpKind::Subtract,
                    OpKind::Multiply,
                    OpKind::Maximum,
                ][(p / 3) as usize % 4];
                let (l, r) = if p % 2 == 0 { (x, c) } else { (c, x) };
                b.op(kind, &[l, r], ty)
            }
            5 => {
                // A second operand of the same type, if any, else x itself.
                let y = vals
                    .iter()
                    .rev()
                    .copied()
                    .find(|&v| b.m.value_type(v) == ty)
                    .unwrap_or(x);
                let kind = [
                    OpKind::Add,
                    OpKind::Subtract,
                    OpKind::Multiply,
                    OpKind::Minimum,
                ][(p / 5) as usize % 4];
                b.op(kind, &[x, y], ty)
            }
            6 | 7 => transpose(&mut b, x, &shape, elem, p),
            8 => {
                let mut s = shape.clone();
                s.reverse();
                let t = b.ty(elem, &s);
                b.op(OpKind::Reshape, &[x], t)
            }
            9 if shape.len() < 4 => {
                let mut s = vec![2];
                s.extend(&shape);
                let t = b.ty(elem, &s);
                let dims: Vec<i64> = (1..=shape.len() as i64).collect();
                b.op_attrs(
                    OpKind::BroadcastInDim,
                    &[x],
                    t,
                    &[("broadcast_dimensions", ints(&dims))],
                )
            }
            10 => {
                let wide = if elem == F32 { ElemType::F64 } else { F32 };
                let t = b.ty(wide, &shape);
                b.op(OpKind::Convert, &[x], t)
            }
            _ => {
                let t = b.ty(F32, &shape);
                b.op(OpKind::Convert, &[x], t)
            }
        };
        vals.push(v);
    }
    let last = *vals.last().unwrap_or(&args[0]);
    let t = b.m.tensor_type(last).unwrap().clone();
    let out = if t.elem == F32 {
        last
    } else {
        let ty: TypeId = b.ty(F32, &t.shape);
        b.op(OpKind::Convert, &[last], ty)
    };
    b.finish(&[out])
}

/// Ops of `main` that compute (not constants, broadcasts or reshapes), and the elements
/// they produce.
fn computing_ops(m: &Module) -> (usize, i64) {
    let f = m.entry().expect("entry");
    let relabel = [
        OpKind::Constant,
        OpKind::BroadcastInDim,
        OpKind::Reshape,
        OpKind::FuncReturn,
    ];
    let mut out = (0, 0);
    for &op in &m.region(f.body).ops {
        let o = m.op(op);
        if relabel.contains(&o.kind) {
            continue;
        }
        out.0 += 1;
        out.1 += o
            .results
            .iter()
            .filter_map(|&r| m.tensor_type(r))
            .map(|t| t.shape.iter().product::<i64>())
            .sum::<i64>();
    }
    out
}

fn splat_like(b: &mut Builder, shape: &[i64], elem: ElemType, v: f64) -> ValueId {
    let ty = b.ty(elem, shape);
    let bytes = neuronc_passes::ir_util::encode_scalar(elem, v).unwrap();
    let op = neuronc_passes::ir_util::make_splat_constant(&mut b.m, ty, bytes).unwrap();
    b.m.append_op(b.body, op);
    b.m.op(op).results[0]
}

fn transpose(b: &mut Builder, x: ValueId, shape: &[i64], elem: ElemType, p: u32) -> ValueId {
    let n = shape.len();
    let mut perm: Vec<i64> = (0..n as i64).collect();
    perm.rotate_left(p as usize % n.max(1));
    if p.is_multiple_of(3) && n >= 2 {
        perm.swap(0, 1);
    }
    let s: Vec<i64> = perm.iter().map(|&d| shape[d as usize]).collect();
    let t = b.ty(elem, &s);
    b.op_attrs(OpKind::Transpose, &[x], t, &[("permutation", ints(&perm))])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn o2_preserves_semantics(
        steps in prop::collection::vec((0u8..12, 0u32..1000), 1..12),
        data in prop::collection::vec(-3.0f32..3.0, 24),
    ) {
        let m = build(&steps);
        verify_module(&m).map_err(|e| TestCaseError::fail(format!("generator built invalid IR: {e}")))?;
        let x = Tensor::from_f32(&[2, 3, 4], &data).unwrap();
        let expected = run_function(&m, "main", vec![x.clone()], &RunOptions::default()).unwrap();
        let mut generic = m.clone();
        let before = computing_ops(&m);
        run_pipeline(&mut generic, &Pipeline::parse("inline,fixpoint<8>(canonicalize,cse,dce)").unwrap(), &mut PassContext::new()).unwrap();
        let after = computing_ops(&generic);
        prop_assert!(after.0 <= before.0 && after.1 <= before.1, "{:?} -> {:?} (ops, elements)", before, after);
        let mut opt = m.clone();
        let mut ctx = PassContext::new();
        ctx.verify_each = true;
        run_pipeline(&mut opt, &Pipeline::preset(2).unwrap(), &mut ctx).unwrap();
        let actual = run_function(&opt, "main", vec![x], &RunOptions::default()).unwrap();
        let e = &expected[0];
        let r = compare(e, &actual[0], 1e-4, 1e-4 * compare::max_abs(e));
        prop_assert!(r.is_ok(), "{:?}", r);
    }
}
