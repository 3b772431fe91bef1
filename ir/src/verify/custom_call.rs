//! Rules of `stablehlo.custom_call`: layouts, output/operand aliases and the kind of
//! `backend_config` required by `api_version`.
//!
//! Invariants: the call target's semantics are opaque; only the attribute structure the
//! StableHLO op definition prescribes is checked. Results count as the elements of a
//! single tuple result when the op returns one tuple.

use super::cx::OpV;
use crate::attr::Attr;
use crate::types::{Type, TypeId};

pub(super) fn check(v: &mut OpV) {
    layouts(v);
    aliases(v);
    backend_config(v);
}

fn backend_config(v: &mut OpV) {
    let api = match v.attr("api_version") {
        Some(Attr::Int(n, _)) => *n,
        Some(Attr::Opaque(t)) if t.contains("TYPED_FFI") => 4,
        _ => 1,
    };
    match (api, v.attr("backend_config")) {
        (4, Some(a)) if !matches!(a, Attr::Dict(_)) => {
            v.err("", "expects backend_config for api_version API_VERSION_TYPED_FFI to be a dictionary attribute");
        }
        (1..=3, Some(a)) if !matches!(a, Attr::Str(_)) => {
            v.err("", "expects backend_config to be a string attribute for api_version below API_VERSION_TYPED_FFI");
        }
        _ => {}
    }
}

/// The result types as layouts see them (a single tuple result is flattened).
fn result_types(v: &OpV) -> Vec<TypeId> {
    let rs: Vec<TypeId> = v.op.results.iter().map(|&r| v.m.value_type(r)).collect();
    if let [t] = rs[..] {
        if let Type::Tuple(elems) = v.m.ty(t) {
            return elems.to_vec();
        }
    }
    rs
}

fn layout_list(a: &Attr) -> Option<Vec<Vec<i64>>> {
    match a {
        Attr::Array(items) => items.iter().map(layout_of).collect(),
        _ => None,
    }
}

/// One layout: an integer list, or `dense<[...]> : tensor<Nxindex>` kept as opaque text.
fn layout_of(a: &Attr) -> Option<Vec<i64>> {
    if let Some(v) = a.as_i64_array() {
        return Some(v);
    }
    let Attr::Opaque(t) = a else {
        return None;
    };
    let body = t.strip_prefix("dense<")?;
    let body = &body[..body.find('>')?];
    let body = body.trim().trim_start_matches('[').trim_end_matches(']');
    body.split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(|x| x.parse().ok())
        .collect()
}

fn layouts(v: &mut OpV) {
    let (ol, rl) = (v.attr("operand_layouts"), v.attr("result_layouts"));
    let (ol, rl) = match (ol, rl) {
        (None, None) => return,
        (Some(o), Some(r)) => (o, r),
        _ => {
            v.err(
                "",
                "expects layout attributes for both operands and results or for neither",
            );
            return;
        }
    };
    let (Some(ol), Some(rl)) = (layout_list(ol), layout_list(rl)) else {
        v.err(
            "",
            "expects operand_layouts and result_layouts to be arrays of 1-D index tensors",
        );
        return;
    };
    let ots: Vec<TypeId> = v.op.operands.iter().map(|&o| v.m.value_type(o)).collect();
    if ots.iter().any(|&t| matches!(v.m.ty(t), Type::Tuple(_))) {
        v.err(
            "",
            "does not support tuple operands with layout constraints",
        );
        return;
    }
    let rts = result_types(v);
    if ol.len() != ots.len() {
        v.err(
            "",
            format!(
                "expects one operand layout per operand, but got {} layouts for {} operands",
                ol.len(),
                ots.len()
            ),
        );
        return;
    }
    if rl.len() != rts.len() {
        v.err(
            "",
            format!(
                "expects one result layout per result, but got {} layouts for {} results",
                rl.len(),
                rts.len()
            ),
        );
        return;
    }
    for (what, ts, ls) in [("operand", &ots, &ol), ("result", &rts, &rl)] {
        for (i, (&t, l)) in ts.iter().zip(ls.iter()).enumerate() {
            if !layout_fits(v, t, l) {
                let s = v.ts(t);
                v.err("", format!("has an incorrect layout {l:?} for {what} #{i} of type {s}: a tensor layout must be a permutation of its dimensions, other types take an empty layout"));
                return;
            }
        }
    }
}

fn layout_fits(v: &OpV, t: TypeId, l: &[i64]) -> bool {
    match v.m.ty(t) {
        Type::Tensor(tt) => {
            let r = tt.rank();
            let mut seen = vec![false; r];
            l.len() == r
                && l.iter().all(|&d| {
                    usize::try_from(d)
                        .is_ok_and(|d| d < r && !std::mem::replace(&mut seen[d], true))
                })
        }
        _ => l.is_empty(),
    }
}

/// Follows tuple indices into a type.
fn sub_type(v: &OpV, mut t: TypeId, path: &[i64]) -> Option<TypeId> {
    for &i in path {
        let Type::Tuple(elems) = v.m.ty(t) else {
            return None;
        };
        t = *usize::try_from(i).ok().and_then(|i| elems.get(i))?;
    }
    Some(t)
}

fn aliases(v: &mut OpV) {
    let Some(Attr::Array(items)) = v.attr("output_operand_aliases") else {
        return;
    };
    let n_ops = v.op.operands.len();
    let result = match v.op.results[..] {
        [r] => Some(v.m.value_type(r)),
        _ => None,
    };
    for it in items {
        let Attr::OutputOperandAlias {
            output_tuple_indices,
            operand_index,
            operand_tuple_indices,
        } = it
        else {
            continue;
        };
        let Some(&opnd) = usize::try_from(*operand_index)
            .ok()
            .and_then(|i| v.op.operands.get(i))
        else {
            v.err("", format!("expects operand_index in the output_operand_alias attribute to be in [0, {n_ops}), but got {operand_index}"));
            return;
        };
        let out = match (result, output_tuple_indices.is_empty()) {
            (Some(r), _) => sub_type(v, r, output_tuple_indices),
            (None, true) => v.op.results.first().map(|&r| v.m.value_type(r)),
            (None, false) => {
                let first = usize::try_from(output_tuple_indices[0]).ok();
                first
                    .and_then(|i| v.op.results.get(i))
                    .and_then(|&r| sub_type(v, v.m.value_type(r), &output_tuple_indices[1..]))
            }
        };
        let Some(out) = out else {
            v.err(
                "",
                "has output_tuple_indices in the output_operand_alias attribute out of bounds",
            );
            return;
        };
        let Some(inp) = sub_type(v, v.m.value_type(opnd), operand_tuple_indices) else {
            v.err(
                "",
                "has operand_tuple_indices in the output_operand_alias attribute out of bounds",
            );
            return;
        };
        if inp != out {
            let (a, b) = (v.ts(inp), v.ts(out));
            v.err("", format!("has mismatched shapes in the output_operand_alias attribute: the operand part has type {a} and the output part has type {b}"));
            return;
        }
    }
}
