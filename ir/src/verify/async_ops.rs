//! Rules of `async_start` / `async_done` and the `!stablehlo.future` values between them.
//!
//! Invariants: an `async_start` body holds exactly one op of the spec's list (a collective
//! or a slice) and a `stablehlo.return`; its arguments mirror the op's operands; the
//! future's element types are the body's returned types, and `async_done` unwraps them.

use super::cx::OpV;
use crate::ops::OpKind;
use crate::types::{Type, TypeId};

pub(super) fn check(v: &mut OpV) {
    let _ = match v.op.kind {
        OpKind::AsyncStart => async_start(v),
        OpKind::AsyncDone => async_done(v),
        _ => None,
    };
}

/// The element types of a future type, or `None` for other types.
fn future_elems<'m>(v: &OpV<'_, 'm>, t: TypeId) -> Option<&'m [TypeId]> {
    match v.m.ty(t) {
        Type::Future(elems) => Some(elems),
        _ => None,
    }
}

/// Ops an `async_start` may wrap (C2).
fn may_be_async(k: OpKind) -> bool {
    use OpKind::*;
    matches!(
        k,
        AllReduce
            | AllGather
            | AllToAll
            | CollectivePermute
            | ReduceScatter
            | CollectiveBroadcast
            | Slice
            | DynamicSlice
            | DynamicUpdateSlice
    )
}

fn async_start(v: &mut OpV) -> Option<()> {
    let body = v.op.regions[0];
    let ops = &v.m.region(body).ops;
    if ops.len() != 2 {
        v.err(
            "C1",
            "region must contain exactly one operation and a return",
        );
        return None;
    }
    let inner = v.m.op(ops[0]).kind;
    if !may_be_async(inner) {
        v.err(
            "C2",
            format!(
                "region must contain a collective or slice operation, but it contains '{}'",
                inner.name()
            ),
        );
        return None;
    }
    let args = v.region_arg_types(body);
    let n = v.op.operands.len();
    if args.len() != n {
        v.err(
            "C3",
            format!(
                "number of operands ({n}) must match number of region arguments ({})",
                args.len()
            ),
        );
        return None;
    }
    for (i, &a) in args.iter().enumerate() {
        let o = v.operand_ty(i)?;
        if o != a {
            let (x, y) = (v.ts(o), v.ts(a));
            v.err(
                "C3",
                format!("operand type {x} at index {i} must match region argument type {y}"),
            );
            return None;
        }
    }
    let rets = v.region_ret_types(body);
    let r = v.result_ty(0)?;
    if future_elems(v, r) != Some(&rets[..]) {
        let want = format!(
            "!stablehlo.future<{}>",
            v.tys(&rets).trim_matches(['(', ')'])
        );
        let got = v.ts(r);
        v.err(
            "C4",
            format!("expects the result type {want} (the body's returned types), but got {got}"),
        );
    }
    Some(())
}

fn async_done(v: &mut OpV) -> Option<()> {
    let f = v.operand_ty(0)?;
    let Some(elems) = future_elems(v, f) else {
        let s = v.ts(f);
        v.err(
            "",
            format!("expects a !stablehlo.future operand, but got {s}"),
        );
        return None;
    };
    let res: Vec<TypeId> = v.op.results.iter().map(|&r| v.m.value_type(r)).collect();
    if res[..] != elems[..] {
        let (a, b) = (v.tys(elems), v.tys(&res));
        v.err(
            "C1",
            format!("expects the future's element types {a} as results, but got {b}"),
        );
    }
    Some(())
}
