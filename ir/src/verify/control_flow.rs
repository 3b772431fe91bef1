//! Rules of control flow and functions: `while`, `if`, `case`, `optimization_barrier`,
//! `func.call`, `func.return` (against the enclosing function's signature), and
//! `stablehlo.return` (whose types are checked by the op owning the region, or like
//! `func.return` when it ends a function body).
//!
//! Invariants: region argument and terminator types are compared as whole type lists and
//! reported once per region; callees are looked up by symbol in the module.

use super::cx::OpV;
use crate::attr::Attr;
use crate::module::RegionId;
use crate::ops::OpKind;
use crate::types::{ElemType, TypeId};

pub(super) fn check(v: &mut OpV) {
    use OpKind::*;
    let _ = match v.op.kind {
        While => while_(v),
        If => if_(v),
        Case => case(v),
        // `stablehlo.return` ending a function body (which MLIR allows) is checked like
        // `func.return`; elsewhere its types are checked by the op owning the region.
        FuncReturn | Return => func_return(v),
        Call => call(v),
        OptimizationBarrier => barrier(v),
        _ => None,
    };
}

fn types_of(v: &OpV, vals: &[crate::ValueId]) -> Vec<TypeId> {
    vals.iter().map(|&x| v.m.value_type(x)).collect()
}

/// Checks a region's argument types (`args`, when given) and terminator operand types.
fn region_sig(
    v: &mut OpV,
    r: RegionId,
    what: &str,
    args: Option<&[TypeId]>,
    rets: &[TypeId],
    c: &str,
) -> bool {
    let (ga, gr) = (v.region_arg_types(r), v.region_ret_types(r));
    let args_ok = args.is_none_or(|a| a == ga);
    if args_ok && gr == rets {
        return true;
    }
    let want_args = args.map_or("(...)".to_string(), |a| v.tys(a));
    let (wr, fa, fr) = (v.tys(rets), v.tys(&ga), v.tys(&gr));
    v.err(
        c,
        format!("expects {what} to have type {want_args} -> {wr}, but it has type {fa} -> {fr}"),
    );
    false
}

fn is_scalar(v: &OpV, t: TypeId, e: ElemType) -> bool {
    v.tensor(t).is_some_and(|t| t.rank() == 0 && t.elem == e)
}

fn while_(v: &mut OpV) -> Option<()> {
    let ts = types_of(v, &v.op.operands);
    let (cond, body) = (v.op.regions[0], v.op.regions[1]);
    let (ca, cr) = (v.region_arg_types(cond), v.region_ret_types(cond));
    if ca != ts || cr.len() != 1 || !is_scalar(v, cr[0], ElemType::I1) {
        let (w, fa, fr) = (v.tys(&ts), v.tys(&ca), v.tys(&cr));
        v.err(
            "C1",
            format!("expects cond to have type {w} -> tensor<i1>, but it has type {fa} -> {fr}"),
        );
    }
    region_sig(v, body, "body", Some(&ts), &ts, "C2");
    let rs = types_of(v, &v.op.results);
    if rs != ts {
        let (a, b) = (v.tys(&ts), v.tys(&rs));
        v.err(
            "C3",
            format!("requires results to have the operand types {a}, but got {b}"),
        );
    }
    Some(())
}

fn branches(v: &mut OpV, c_args: &str, c_same: &str, c_res: &str) -> Option<()> {
    let rs = types_of(v, &v.op.results);
    let regions = v.op.regions.clone();
    for (i, &r) in regions.iter().enumerate() {
        let args = v.region_arg_types(r);
        if !args.is_empty() {
            let a = v.tys(&args);
            v.err(
                c_args,
                format!("expects branch #{i} to take no arguments, but it takes {a}"),
            );
            return None;
        }
    }
    let first = v.region_ret_types(regions[0]);
    for (i, &r) in regions.iter().enumerate().skip(1) {
        let ri = v.region_ret_types(r);
        if ri != first {
            let (a, b) = (v.tys(&first), v.tys(&ri));
            v.err(c_same, format!("requires all branches to return the same types, but branch #0 returns {a} and branch #{i} returns {b}"));
            return None;
        }
    }
    if rs != first {
        let (a, b) = (v.tys(&first), v.tys(&rs));
        v.err(
            c_res,
            format!("requires results to have the branch output types {a}, but got {b}"),
        );
    }
    Some(())
}

fn if_(v: &mut OpV) -> Option<()> {
    let p = v.operand_ty(0)?;
    if !is_scalar(v, p, ElemType::I1) {
        let s = v.ts(p);
        v.err("", format!("expects pred to be tensor<i1>, but got {s}"));
    }
    branches(v, "C1", "C2", "C3")
}

fn case(v: &mut OpV) -> Option<()> {
    let p = v.operand_ty(0)?;
    if !is_scalar(v, p, ElemType::Int(32)) {
        let s = v.ts(p);
        v.err("", format!("expects index to be tensor<i32>, but got {s}"));
    }
    branches(v, "C2", "C3", "C4")
}

fn func_return(v: &mut OpV) -> Option<()> {
    let f = *v.g.body_of.get(&v.op.parent?)?;
    let func = &v.m.funcs[f.index()];
    let got = types_of(v, &v.op.operands);
    if got != func.result_types {
        let (a, b) = (v.tys(&func.result_types), v.tys(&got));
        v.err(
            "",
            format!(
                "requires operand types to match the result types of '@{}' {a}, but got {b}",
                func.name
            ),
        );
    }
    Some(())
}

fn call(v: &mut OpV) -> Option<()> {
    let name = match v.attr("callee") {
        Some(Attr::Symbol(s)) => s.clone(),
        _ => {
            v.err("", "requires a symbol attribute 'callee'");
            return None;
        }
    };
    let Some(&f) = v.g.funcs.get(name.as_str()) else {
        v.err("", format!("'@{name}' does not reference a valid function"));
        return None;
    };
    let func = &v.m.funcs[f.index()];
    let params = v.region_arg_types(func.body);
    let (args, res) = (types_of(v, &v.op.operands), types_of(v, &v.op.results));
    if args != params || res != func.result_types {
        let (pa, pr) = (v.tys(&params), v.tys(&func.result_types));
        let (ga, gr) = (v.tys(&args), v.tys(&res));
        v.err("", format!("expects the callee '@{name}' type {pa} -> {pr}, but the call has type {ga} -> {gr}"));
    }
    Some(())
}

fn barrier(v: &mut OpV) -> Option<()> {
    let (a, r) = (types_of(v, &v.op.operands), types_of(v, &v.op.results));
    if a != r {
        let (x, y) = (v.tys(&a), v.tys(&r));
        v.err(
            "C1",
            format!("requires results to have the operand types {x}, but got {y}"),
        );
    }
    Some(())
}
