//! Algebraic identities. Each is exact for the element types it is restricted to:
//!
//! | rule | rewrite | types |
//! |---|---|---|
//! | `add-zero` | `x + 0`, `0 + x` → `x` | ints; floats only for `-0.0` (`-0.0 + 0.0` is `+0.0`) |
//! | `sub-zero` | `x - 0` → `x` | ints; floats for `+0.0` |
//! | `mul-one` | `x * 1`, `1 * x` → `x` | all |
//! | `mul-zero-int` | `x * 0`, `0 * x` → `0` | ints, i1 (floats: NaN, inf, -0.0) |
//! | `div-one` | `x / 1` → `x` | all |
//! | `sub-self-int` | `x - x` → `0` | ints (floats: NaN, inf) |
//! | `double-negate` | `-(-x)` → `x` | all |
//! | `double-not` | `not(not(x))` → `x` | ints, i1 |
//! | `idempotent-self` | `and/or/max/min(x, x)` → `x` | all |
//! | `select-const-pred` | `select(splat p, a, b)` → `a` or `b` | all |
//! | `select-same` | `select(p, a, a)` → `a` | all |
//! | `compare-self-int` | `compare(x, x)` → splat of `EQ/LE/GE` | ints, i1 |
//! | `mhlo-erf-to-chlo` | `custom_call @mhlo.erf(x)` (torch_xla's GELU) → `chlo.erf x` | floats |
//!
//! "0"/"1" are splat constants, also seen through `broadcast_in_dim`/`reshape`.

use super::{Rewriter, Rule};
use crate::ir_util::{def_of_kind, is_splat_value, splat_ref};
use neuronc_ir::{Attr, ElemType, Module, OpId, OpKind, ValueId};

pub static RULES: &[Rule] = &[
    Rule {
        name: "add-zero",
        kinds: &[OpKind::Add],
        apply: add_zero,
    },
    Rule {
        name: "sub-zero",
        kinds: &[OpKind::Subtract],
        apply: sub_zero,
    },
    Rule {
        name: "mul-one",
        kinds: &[OpKind::Multiply],
        apply: mul_one,
    },
    Rule {
        name: "mul-zero-int",
        kinds: &[OpKind::Multiply],
        apply: mul_zero_int,
    },
    Rule {
        name: "div-one",
        kinds: &[OpKind::Divide],
        apply: div_one,
    },
    Rule {
        name: "sub-self-int",
        kinds: &[OpKind::Subtract],
        apply: sub_self_int,
    },
    Rule {
        name: "double-negate",
        kinds: &[OpKind::Negate],
        apply: double_negate,
    },
    Rule {
        name: "double-not",
        kinds: &[OpKind::Not],
        apply: double_not,
    },
    Rule {
        name: "idempotent-self",
        kinds: &[OpKind::And, OpKind::Or, OpKind::Maximum, OpKind::Minimum],
        apply: idempotent_self,
    },
    Rule {
        name: "select-const-pred",
        kinds: &[OpKind::Select],
        apply: select_const_pred,
    },
    Rule {
        name: "select-same",
        kinds: &[OpKind::Select],
        apply: select_same,
    },
    Rule {
        name: "compare-self-int",
        kinds: &[OpKind::Compare],
        apply: compare_self_int,
    },
    Rule {
        name: "mhlo-erf-to-chlo",
        kinds: &[OpKind::CustomCall],
        apply: mhlo_erf_to_chlo,
    },
];

/// Element type of the op's first result.
fn result_elem(m: &Module, op: OpId) -> Option<ElemType> {
    m.tensor_type(m.op(op).results[0]).map(|t| t.elem)
}

fn is_int_like(e: ElemType) -> bool {
    e.is_integer() || e.is_bool()
}

/// `x` when its type equals the op's result type (so it can stand in for the result).
fn same_type_as_result(m: &Module, op: OpId, x: ValueId) -> Option<ValueId> {
    (m.value_type(x) == m.value_type(m.op(op).results[0])).then_some(x)
}

/// For a binary op: the operand that is not the splat `c`, trying both sides when
/// `commutes`.
fn other_than_splat(m: &Module, op: OpId, c: f64, commutes: bool) -> Option<ValueId> {
    let ops = &m.op(op).operands;
    if is_splat_value(m, ops[1], c) {
        return same_type_as_result(m, op, ops[0]);
    }
    if commutes && is_splat_value(m, ops[0], c) {
        return same_type_as_result(m, op, ops[1]);
    }
    None
}

/// Whether neither operand of a binary op is a splat (the common case, rejected before
/// the rule looks at types).
fn no_splat_operand(m: &Module, op: OpId) -> bool {
    let ops = &m.op(op).operands;
    splat_ref(m, ops[0]).is_none() && splat_ref(m, ops[1]).is_none()
}

fn add_zero(rw: &mut Rewriter, op: OpId) -> Option<Vec<ValueId>> {
    if no_splat_operand(rw.m, op) {
        return None;
    }
    let zero = if is_int_like(result_elem(rw.m, op)?) {
        0.0
    } else {
        -0.0
    };
    let x = other_than_splat(rw.m, op, zero, true)?;
    rw.commit(op)?;
    Some(vec![x])
}

fn sub_zero(rw: &mut Rewriter, op: OpId) -> Option<Vec<ValueId>> {
    let x = other_than_splat(rw.m, op, 0.0, false)?;
    rw.commit(op)?;
    Some(vec![x])
}

fn mul_one(rw: &mut Rewriter, op: OpId) -> Option<Vec<ValueId>> {
    let x = other_than_splat(rw.m, op, 1.0, true)?;
    rw.commit(op)?;
    Some(vec![x])
}

fn div_one(rw: &mut Rewriter, op: OpId) -> Option<Vec<ValueId>> {
    let x = other_than_splat(rw.m, op, 1.0, false)?;
    rw.commit(op)?;
    Some(vec![x])
}

/// Replaces the op by a splat of `value` in its result type.
fn replace_by_splat(rw: &mut Rewriter, op: OpId, value: f64) -> Option<Vec<ValueId>> {
    let ty = rw.m.value_type(rw.m.op(op).results[0]);
    let bytes = crate::ir_util::encode_scalar(result_elem(rw.m, op)?, value)?;
    rw.commit(op)?;
    Some(vec![rw.splat(ty, bytes)?])
}

fn mul_zero_int(rw: &mut Rewriter, op: OpId) -> Option<Vec<ValueId>> {
    if !is_int_like(result_elem(rw.m, op)?) {
        return None;
    }
    let ops = &rw.m.op(op).operands;
    if !ops.iter().any(|&v| is_splat_value(rw.m, v, 0.0)) {
        return None;
    }
    replace_by_splat(rw, op, 0.0)
}

fn sub_self_int(rw: &mut Rewriter, op: OpId) -> Option<Vec<ValueId>> {
    let ops = &rw.m.op(op).operands;
    if ops[0] != ops[1] || !is_int_like(result_elem(rw.m, op)?) {
        return None;
    }
    replace_by_splat(rw, op, 0.0)
}

/// `f(f(x))` → `x` for an involution `f`.
fn involution(rw: &mut Rewriter, op: OpId, kind: OpKind) -> Option<Vec<ValueId>> {
    let inner = def_of_kind(rw.m, rw.m.op(op).operands[0], kind)?;
    let x = same_type_as_result(rw.m, op, rw.m.op(inner).operands[0])?;
    rw.commit(op)?;
    Some(vec![x])
}

fn double_negate(rw: &mut Rewriter, op: OpId) -> Option<Vec<ValueId>> {
    involution(rw, op, OpKind::Negate)
}

fn double_not(rw: &mut Rewriter, op: OpId) -> Option<Vec<ValueId>> {
    if !is_int_like(result_elem(rw.m, op)?) {
        return None;
    }
    involution(rw, op, OpKind::Not)
}

fn idempotent_self(rw: &mut Rewriter, op: OpId) -> Option<Vec<ValueId>> {
    let ops = &rw.m.op(op).operands;
    if ops[0] != ops[1] {
        return None;
    }
    let x = same_type_as_result(rw.m, op, ops[0])?;
    rw.commit(op)?;
    Some(vec![x])
}

fn select_const_pred(rw: &mut Rewriter, op: OpId) -> Option<Vec<ValueId>> {
    let ops = rw.m.op(op).operands.clone();
    let (elem, bytes) = splat_ref(rw.m, ops[0])?;
    if !elem.is_bool() {
        return None;
    }
    let chosen = if bytes.first().copied().unwrap_or(0) & 1 == 1 {
        ops[1]
    } else {
        ops[2]
    };
    let x = same_type_as_result(rw.m, op, chosen)?;
    rw.commit(op)?;
    Some(vec![x])
}

fn select_same(rw: &mut Rewriter, op: OpId) -> Option<Vec<ValueId>> {
    let ops = &rw.m.op(op).operands;
    if ops[1] != ops[2] {
        return None;
    }
    let x = same_type_as_result(rw.m, op, ops[1])?;
    rw.commit(op)?;
    Some(vec![x])
}

fn compare_self_int(rw: &mut Rewriter, op: OpId) -> Option<Vec<ValueId>> {
    let o = rw.m.op(op);
    if o.operands[0] != o.operands[1] {
        return None;
    }
    let operand_elem = rw.m.tensor_type(o.operands[0])?.elem;
    if !is_int_like(operand_elem) {
        return None;
    }
    let value = match o.attrs.enum_value("comparison_direction")? {
        "EQ" | "LE" | "GE" => 1.0,
        "NE" | "LT" | "GT" => 0.0,
        _ => return None,
    };
    replace_by_splat(rw, op, value)
}

/// `custom_call @mhlo.erf` is an opaque, side-effecting op to every pass; `chlo.erf` is the
/// same function as a pure elementwise op. Only plain calls are rewritten: one operand, one
/// result of the same float type, and no attributes beyond the target and the empty
/// `mhlo.attributes`/`mhlo.version`/`api_version`/`backend_config` that torch_xla prints.
fn mhlo_erf_to_chlo(rw: &mut Rewriter, op: OpId) -> Option<Vec<ValueId>> {
    let o = rw.m.op(op);
    let plain = o.attrs.iter().all(|(name, a)| match name {
        "call_target_name" => matches!(a, Attr::Str(s) if s == "mhlo.erf"),
        "mhlo.attributes" => matches!(a, Attr::Dict(d) if d.is_empty()),
        "mhlo.version" | "api_version" => true,
        "backend_config" => matches!(a, Attr::Str(s) if s.is_empty()),
        _ => false,
    });
    let (x, r) = match (o.operands.as_slice(), o.results.as_slice()) {
        ([x], [r]) => (*x, *r),
        _ => return None,
    };
    let ty = rw.m.value_type(r);
    if !plain
        || o.attrs.str("call_target_name") != Some("mhlo.erf")
        || rw.m.value_type(x) != ty
        || !rw.m.types.tensor_of(ty)?.elem.is_float()
    {
        return None;
    }
    rw.commit(op)?;
    let new = rw.create(
        OpKind::ChloErf,
        vec![x],
        &[ty],
        neuronc_ir::NamedAttrs::new(),
    );
    Some(vec![rw.m.op(new).results[0]])
}
