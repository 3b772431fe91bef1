//! Rules of the dynamic-shape ops on static types: `dynamic_broadcast_in_dim`,
//! `dynamic_iota`, `dynamic_reshape`, `dynamic_pad`, `dynamic_gather`.
//!
//! Invariants: a shape operand is only interpreted when it is produced by a
//! `stablehlo.constant` in the same module (then the result type must match it exactly);
//! otherwise only the attribute rules are checked. `real_dynamic_slice` gets structural
//! checks only; `dynamic_conv` is checked with `convolution` (see `contraction`).

use super::cx::{shape_str, tensor_str, OpV};
use super::shape::{self, check_dims};
use crate::attr::Attr;
use crate::module::ValueDef;
use crate::ops::OpKind;

pub(super) fn check(v: &mut OpV) {
    use OpKind::*;
    let _ = match v.op.kind {
        DynamicBroadcastInDim => broadcast_in_dim(v),
        DynamicIota => iota(v),
        DynamicReshape => reshape(v),
        DynamicPad => pad(v),
        DynamicGather => gather(v),
        _ => None,
    };
}

/// The integer values of operand `i` when a `stablehlo.constant` defines it.
pub(super) fn const_ints(v: &OpV, i: usize) -> Option<Vec<i64>> {
    let val = *v.op.operands.get(i)?;
    let ValueDef::Result(def, _) = v.m.value(val).def else {
        return None;
    };
    let d = v.m.op(def);
    if d.kind != OpKind::Constant {
        return None;
    }
    d.attrs.get("value").and_then(Attr::as_i64_array)
}

/// Compares a constant shape operand with the result shape.
fn shape_matches(v: &mut OpV, i: usize) -> Option<()> {
    let Some(s) = const_ints(v, i) else {
        return Some(());
    };
    let r = v.result(0)?;
    if s[..] != r.shape[..] {
        v.err(
            "",
            format!(
                "output shape {} is incompatible with the result type {}",
                shape_str(&s),
                tensor_str(r)
            ),
        );
        return None;
    }
    Some(())
}

fn broadcast_in_dim(v: &mut OpV) -> Option<()> {
    let (a, r) = (v.operand(0)?, v.result(0)?);
    let dims = v.req_i64s("broadcast_dimensions")?;
    if dims.len() != a.rank() {
        v.err("C2", format!("expects broadcast_dimensions to have size {} (the operand rank), but it has size {}", a.rank(), dims.len()));
        return None;
    }
    if let Err(e) = check_dims(&dims, r.rank(), "broadcast_dimensions", "C3", "C4") {
        v.shape_err(e);
        return None;
    }
    for (i, &d) in dims.iter().enumerate() {
        let (od, rd) = (a.shape[i], r.shape[d as usize]);
        if od != 1 && od != rd {
            v.err("C5", format!("expects operand dimension {i} (size {od}) to be 1 or equal to result dimension {d} (size {rd})"));
            return None;
        }
    }
    shape_matches(v, 1)
}

fn iota(v: &mut OpV) -> Option<()> {
    let r = v.result(0)?;
    let d = v.req_int("iota_dimension")?;
    if d < 0 || d as u64 >= r.rank() as u64 {
        v.err(
            "C1",
            format!(
                "expects iota_dimension in [0, {}) (the output rank), but got {d}",
                r.rank()
            ),
        );
    }
    shape_matches(v, 0)
}

fn reshape(v: &mut OpV) -> Option<()> {
    let (a, r) = (v.operand(0)?, v.result(0)?);
    if a.num_elements() != r.num_elements() {
        v.err("", format!("requires operand and result to have the same number of elements, but got {} and {}", tensor_str(a), tensor_str(r)));
        return None;
    }
    shape_matches(v, 1)
}

fn pad(v: &mut OpV) -> Option<()> {
    let a = v.operand(0)?;
    let (Some(lo), Some(hi), Some(it)) = (const_ints(v, 2), const_ints(v, 3), const_ints(v, 4))
    else {
        return Some(());
    };
    match shape::pad(&a.shape, &lo, &hi, &it) {
        Ok(s) => v.expect_result(
            0,
            a.elem,
            &s,
            "C4",
            "operand + low + high + interior padding",
        ),
        Err(e) => {
            v.shape_err(e);
            None
        }
    }
}

fn gather(v: &mut OpV) -> Option<()> {
    let (a, idx) = (v.operand(0)?, v.operand(1)?);
    let g = match v.attr("dimension_numbers") {
        Some(Attr::GatherDims(g)) => g,
        _ => {
            v.err(
                "",
                "requires attribute 'dimension_numbers' (#stablehlo.gather<...>)",
            );
            return None;
        }
    };
    let known = const_ints(v, 2);
    let sizes = known.clone().unwrap_or_else(|| vec![1; a.rank()]);
    match shape::gather(&a.shape, &idx.shape, g, &sizes) {
        Ok(s) if known.is_some() => {
            v.expect_result(0, a.elem, &s, "C22", "from the constant slice sizes")
        }
        Ok(s) => {
            // Offset dimensions come from the run-time slice sizes; the rank and the
            // batch dimensions do not.
            let r = v.result(0)?;
            let batch_ok = (0..s.len())
                .filter(|d| !g.offset_dims.contains(&(*d as i64)))
                .all(|d| r.shape.get(d) == Some(&s[d]));
            if r.rank() != s.len() || !batch_ok {
                let want = s
                    .iter()
                    .enumerate()
                    .map(|(d, x)| {
                        if g.offset_dims.contains(&(d as i64)) {
                            "?".to_string()
                        } else {
                            x.to_string()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("x");
                v.err(
                    "C22",
                    format!(
                        "expects a result of shape [{want}] (? for a slice size), but got {}",
                        tensor_str(r)
                    ),
                );
                return None;
            }
            Some(())
        }
        Err(e) => {
            v.shape_err(e);
            None
        }
    }
}
