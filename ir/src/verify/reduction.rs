//! Rules of the ops with reducer or comparator bodies and the batch-norm family:
//! `reduce`, `reduce_window`, `select_and_scatter`, `sort`, `map`,
//! `batch_norm_inference`, `batch_norm_training`, `batch_norm_grad`.
//!
//! Invariants: a reducer body over N inputs must have type
//! `(tensor<E0>, ..., tensor<EN-1>, tensor<E0>, ..., tensor<EN-1>) -> (tensor<E0>, ...)`
//! with `is_promotable(element_type(inputs[i]), Ei)`; results then take element types
//! `Ei`. Body type errors are reported once per op, against the op's constraint label.

use super::cx::{is_promotable, shape_str, tensor_str, OpV};
use super::shape::{self, Window};
use crate::module::RegionId;
use crate::ops::OpKind;
use crate::types::{ElemType, TensorType};

pub(super) fn check(v: &mut OpV) {
    use OpKind::*;
    let _ = match v.op.kind {
        Reduce => reduce(v),
        ReduceWindow => reduce_window(v),
        SelectAndScatter => select_and_scatter(v),
        Sort => sort(v),
        Map => map(v),
        BatchNormInference | BatchNormTraining | BatchNormGrad => batch_norm(v),
        _ => None,
    };
}

/// Element types of the rank-0 tensors `types` (None if any is not a rank-0 tensor).
fn scalar_elems(v: &OpV, types: &[crate::TypeId]) -> Option<Vec<ElemType>> {
    types
        .iter()
        .map(|&t| v.tensor(t).filter(|t| t.rank() == 0).map(|t| t.elem))
        .collect()
}

/// Which accumulator shapes a reducer body may use besides rank 0.
pub(super) enum Acc<'s> {
    /// Only rank-0 accumulators (the spec's rule).
    Scalar,
    /// `reduce`: also the result shape (a legacy form StableHLO still accepts).
    Result(&'s [i64]),
    /// `reduce_window`: also a lower-rank subsequence of the input dimensions (legacy).
    SubOf(&'s [i64]),
}

impl Acc<'_> {
    fn allows(&self, s: &[i64]) -> bool {
        match self {
            _ if s.is_empty() => true,
            Acc::Scalar => false,
            Acc::Result(r) => s == *r,
            Acc::SubOf(inp) => {
                s.len() < inp.len() && {
                    let mut it = inp.iter();
                    s.iter().all(|d| it.any(|x| x == d))
                }
            }
        }
    }
}

/// Checks a reducer body against `inputs` and returns its accumulator types `Ei`.
pub(super) fn reducer_body(
    v: &mut OpV,
    r: RegionId,
    inputs: &[ElemType],
    c: &str,
    acc: Acc,
) -> Option<Vec<ElemType>> {
    let n = inputs.len();
    let (args, rets) = (v.region_arg_types(r), v.region_ret_types(r));
    let ok = args.len() == 2 * n
        && rets.len() == n
        && (0..n).all(|i| {
            args[i] == rets[i]
                && args[n + i] == rets[i]
                && v.tensor(rets[i])
                    .is_some_and(|t| is_promotable(inputs[i], t.elem) && acc.allows(&t.shape))
        });
    if !ok {
        let e: Vec<String> = inputs.iter().map(|e| format!("tensor<{e}>")).collect();
        let want = format!("({}, {}) -> ({})", e.join(", "), e.join(", "), e.join(", "));
        let (fa, fr) = (v.tys(&args), v.tys(&rets));
        v.err(c, format!("expects the body to have type {want} (or promoted element types), but it has type {fa} -> {fr}"));
        return None;
    }
    rets.iter().map(|&t| v.tensor(t).map(|t| t.elem)).collect()
}

/// Init values must have the accumulator shapes of the body.
fn inits_match_body(v: &mut OpV, inits: &[&TensorType], r: RegionId, c: &str) -> Option<()> {
    let rets = v.region_ret_types(r);
    for (i, (init, &t)) in inits.iter().zip(&rets).enumerate() {
        let acc = v.tensor(t)?;
        if acc.shape != init.shape {
            v.err(
                c,
                format!(
                    "expects init value #{i} to have the body's accumulator shape {}, but got {}",
                    shape_str(&acc.shape),
                    tensor_str(init)
                ),
            );
            return None;
        }
    }
    Some(())
}

/// Splits `inputs..., init_values...`, checking same shapes and init element types.
fn inputs_and_inits<'m>(
    v: &mut OpV<'_, 'm>,
    c_count: &str,
    c_shape: &str,
    c_elem: &str,
) -> Option<(Vec<&'m TensorType>, Vec<&'m TensorType>)> {
    let all = v.operands()?;
    if !all.len().is_multiple_of(2) || v.op.results.len() * 2 != all.len() {
        v.err(c_count, format!("expects the same number of inputs, init_values and results, but got {} operands and {} results", all.len(), v.op.results.len()));
        return None;
    }
    let (ins, inits) = all.split_at(all.len() / 2);
    if let Some(i) = ins.iter().position(|t| t.shape != ins[0].shape) {
        v.err(c_shape, format!("requires all inputs to have the same shape, but input #{i} is {} and input #0 is {}", tensor_str(ins[i]), tensor_str(ins[0])));
        return None;
    }
    for (i, (t, init)) in ins.iter().zip(inits).enumerate() {
        if !is_promotable(t.elem, init.elem) {
            v.err(c_elem, format!("expects init value #{i} to be a scalar of the input element type {}, but got {}", t.elem, tensor_str(init)));
            return None;
        }
    }
    Some((ins.to_vec(), inits.to_vec()))
}

fn elems(ts: &[&TensorType]) -> Vec<ElemType> {
    ts.iter().map(|t| t.elem).collect()
}

fn reduce(v: &mut OpV) -> Option<()> {
    let (ins, inits) = inputs_and_inits(v, "C3", "C1", "C2")?;
    let dims = v.req_i64s("dimensions")?;
    let shape = match shape::reduce(&ins[0].shape, &dims) {
        Ok(s) => s,
        Err(e) => {
            v.shape_err(e);
            return None;
        }
    };
    let es = reducer_body(v, v.op.regions[0], &elems(&ins), "C6", Acc::Result(&shape))?;
    inits_match_body(v, &inits, v.op.regions[0], "C2")?;
    for (i, e) in es.into_iter().enumerate() {
        v.expect_result(
            i,
            e,
            &shape,
            "C7",
            "the inputs without the reduced dimensions",
        )?;
    }
    Some(())
}

/// `padding` as `(low, high)` pairs, defaulting to zeros.
fn padding_pairs(v: &mut OpV, rank: usize, c: &str) -> Option<Vec<(i64, i64)>> {
    match v.opt_matrix("padding")? {
        None => Some(vec![(0, 0); rank]),
        Some((0, 0, _)) if rank == 0 => Some(Vec::new()),
        Some((rows, 2, vals)) => Some((0..rows).map(|i| (vals[2 * i], vals[2 * i + 1])).collect()),
        Some((rows, cols, _)) => {
            v.err(
                c,
                format!("expects padding of shape [{rank}, 2], but got [{rows}, {cols}]"),
            );
            None
        }
    }
}

fn reduce_window(v: &mut OpV) -> Option<()> {
    let (ins, inits) = inputs_and_inits(v, "C1", "C2", "C3")?;
    let rank = ins[0].rank();
    let ones = vec![1i64; rank];
    let w = Window {
        dims: v.req_i64s("window_dimensions")?,
        strides: v
            .opt_i64s("window_strides")?
            .unwrap_or_else(|| ones.clone()),
        base_dilations: v
            .opt_i64s("base_dilations")?
            .unwrap_or_else(|| ones.clone()),
        window_dilations: v.opt_i64s("window_dilations")?.unwrap_or(ones),
        padding: padding_pairs(v, rank, "C12")?,
    };
    let shape = match shape::reduce_window(&ins[0].shape, &w) {
        Ok(s) => s,
        Err(e) => {
            v.shape_err(e);
            return None;
        }
    };
    let es = reducer_body(
        v,
        v.op.regions[0],
        &elems(&ins),
        "C13",
        Acc::SubOf(&ins[0].shape),
    )?;
    inits_match_body(v, &inits, v.op.regions[0], "C3")?;
    for (i, e) in es.into_iter().enumerate() {
        v.expect_result(
            i,
            e,
            &shape,
            "C15",
            "the number of windows in each dimension",
        )?;
    }
    Some(())
}

fn select_and_scatter(v: &mut OpV) -> Option<()> {
    let (a, src, init) = (v.operand(0)?, v.operand(1)?, v.operand(2)?);
    if a.elem != src.elem {
        v.err(
            "C1",
            format!(
                "requires operand and source to have the same element type, but got {} and {}",
                a.elem, src.elem
            ),
        );
    }
    if init.rank() != 0 || init.elem != a.elem {
        v.err(
            "C3",
            format!(
                "expects init_value to be a scalar of element type {}, but got {}",
                a.elem,
                tensor_str(init)
            ),
        );
    }
    let rank = a.rank();
    let ones = vec![1i64; rank];
    let dims = v.opt_i64s("window_dimensions")?.unwrap_or_default();
    let strides = v
        .opt_i64s("window_strides")?
        .unwrap_or_else(|| ones.clone());
    let padding = padding_pairs(v, rank, "C8")?;
    let w = Window {
        dims,
        strides,
        base_dilations: ones.clone(),
        window_dilations: ones,
        padding,
    };
    match shape::reduce_window(&a.shape, &w) {
        Ok(s) if s[..] != src.shape[..] => {
            v.err(
                "C2",
                format!(
                    "expects source of shape {} (the number of windows), but got {}",
                    shape_str(&s),
                    tensor_str(src)
                ),
            );
        }
        Ok(_) => {}
        Err(mut e) => {
            e.constraint = match e.constraint {
                "C4" => "C4",
                "C5" => "C5",
                "C6" => "C6",
                "C7" => "C7",
                _ => "C8",
            };
            v.shape_err(e);
        }
    }
    let (sel, scat) = (v.op.regions[0], v.op.regions[1]);
    let (args, rets) = (v.region_arg_types(sel), v.region_ret_types(sel));
    let args_ok = scalar_elems(v, &args).is_some_and(|e| e == [a.elem, a.elem]);
    let rets_ok = scalar_elems(v, &rets).is_some_and(|e| e == [ElemType::I1]);
    if !args_ok || !rets_ok {
        let (x, y) = (v.tys(&args), v.tys(&rets));
        v.err("C9", format!("expects select to have type (tensor<{0}>, tensor<{0}>) -> tensor<i1>, but it has type {x} -> {y}", a.elem));
    }
    let es = reducer_body(v, scat, &[a.elem], "C10", Acc::Scalar)?;
    v.expect_result(0, es[0], &a.shape, "C11", "the operand shape")
}

fn sort(v: &mut OpV) -> Option<()> {
    let ins = v.operands()?;
    if v.op.results.len() != ins.len() {
        v.err(
            "C2",
            format!(
                "expects as many results as inputs, but got {} and {}",
                v.op.results.len(),
                ins.len()
            ),
        );
        return None;
    }
    for i in 0..ins.len() {
        if v.operand_ty(i) != v.result_ty(i) {
            let (a, b) = (v.vs(v.op.operands[i]), v.vs(v.op.results[i]));
            v.err("C2", format!("requires input #{i} and result #{i} to have the same type, but got {a} and {b}"));
            return None;
        }
    }
    if let Some(i) = ins.iter().position(|t| t.shape != ins[0].shape) {
        v.err("C3", format!("requires all inputs to have the same shape, but input #{i} is {} and input #0 is {}", tensor_str(ins[i]), tensor_str(ins[0])));
        return None;
    }
    let r = ins[0].rank() as i64;
    let d = v.int_or("dimension", -1)?;
    if d < -r || d >= r {
        v.err(
            "C4",
            format!("expects dimension in [{}, {r}), but got {d}", -r),
        );
    }
    let cmp = v.op.regions[0];
    let (args, rets) = (v.region_arg_types(cmp), v.region_ret_types(cmp));
    let want: Vec<ElemType> = ins.iter().flat_map(|t| [t.elem, t.elem]).collect();
    let ok = scalar_elems(v, &args).is_some_and(|e| e == want)
        && scalar_elems(v, &rets).is_some_and(|e| e == [ElemType::I1]);
    if !ok {
        let w: Vec<String> = want.iter().map(|e| format!("tensor<{e}>")).collect();
        let (x, y) = (v.tys(&args), v.tys(&rets));
        v.err(
            "C5",
            format!(
                "expects comparator to have type ({}) -> tensor<i1>, but it has type {x} -> {y}",
                w.join(", ")
            ),
        );
    }
    Some(())
}

fn map(v: &mut OpV) -> Option<()> {
    let ins = v.operands()?;
    let r = v.result(0)?;
    if let Some(i) = ins.iter().position(|t| t.shape != r.shape) {
        v.err("C1", format!("requires inputs and result to have the same shape, but input #{i} is {} and the result is {}", tensor_str(ins[i]), tensor_str(r)));
        return None;
    }
    let dims = v.req_i64s("dimensions")?;
    if !dims.iter().copied().eq(0..r.rank() as i64) {
        v.err(
            "C3",
            format!(
                "expects dimensions to be [0, ..., {}], but got {dims:?}",
                r.rank() as i64 - 1
            ),
        );
    }
    let body = v.op.regions[0];
    let (args, rets) = (v.region_arg_types(body), v.region_ret_types(body));
    let ok = scalar_elems(v, &args).is_some_and(|e| e == elems(&ins))
        && scalar_elems(v, &rets).is_some_and(|e| e == [r.elem]);
    if !ok {
        let w: Vec<String> = ins.iter().map(|t| format!("tensor<{}>", t.elem)).collect();
        let (x, y) = (v.tys(&args), v.tys(&rets));
        v.err(
            "C4",
            format!(
                "expects computation to have type ({}) -> tensor<{}>, but it has type {x} -> {y}",
                w.join(", "),
                r.elem
            ),
        );
    }
    Some(())
}

/// All batch-norm variants: operand first, then 1-D per-feature tensors, with the result
/// layout of each variant.
fn batch_norm(v: &mut OpV) -> Option<()> {
    use OpKind::*;
    let ops = v.operands()?;
    let res = v.results()?;
    let k = v.op.kind;
    let a = ops[0];
    let fi = v.req_int("feature_index")?;
    if v.attr("epsilon").is_none() {
        v.err("", "requires attribute 'epsilon'");
    }
    if fi < 0 || fi as u64 >= a.rank() as u64 {
        v.err(
            "C1",
            format!(
                "expects feature_index in [0, {}) (the operand rank), but got {fi}",
                a.rank()
            ),
        );
        return None;
    }
    if !a.elem.is_float() {
        v.err(
            "",
            format!(
                "expects a floating-point operand, but got {}",
                tensor_str(a)
            ),
        );
        return None;
    }
    let feat = [a.shape[fi as usize]];
    let all: Vec<&TensorType> = ops.iter().chain(res.iter()).copied().collect();
    if let Some(t) = all.iter().find(|t| t.elem != a.elem) {
        v.err(
            "C2",
            format!(
                "requires all operands and results to have element type {}, but got {}",
                a.elem,
                tensor_str(t)
            ),
        );
        return None;
    }
    // (index into operands ++ results, must be operand-shaped?)
    let (full, per_feature): (&[usize], &[usize]) = match k {
        BatchNormInference => (&[5], &[1, 2, 3, 4]),
        BatchNormTraining => (&[3], &[1, 2, 4, 5]),
        _ => (&[4, 5], &[1, 2, 3, 6, 7]),
    };
    for &i in full {
        if all[i].shape != a.shape {
            v.err(
                "C3",
                format!(
                    "requires {} to have the operand shape {}, but got {}",
                    slot_name(k, i),
                    shape_str(&a.shape),
                    tensor_str(all[i])
                ),
            );
            return None;
        }
    }
    for &i in per_feature {
        if all[i].shape[..] != feat[..] {
            v.err(
                "C4",
                format!(
                    "expects {} to be 1-D of size {} (the feature dimension), but got {}",
                    slot_name(k, i),
                    feat[0],
                    tensor_str(all[i])
                ),
            );
            return None;
        }
    }
    Some(())
}

fn slot_name(k: OpKind, i: usize) -> &'static str {
    use OpKind::*;
    let names: &[&str] = match k {
        BatchNormInference => &["operand", "scale", "offset", "mean", "variance", "result"],
        BatchNormTraining => &[
            "operand",
            "scale",
            "offset",
            "output",
            "batch_mean",
            "batch_var",
        ],
        _ => &[
            "operand",
            "scale",
            "mean",
            "variance",
            "grad_output",
            "grad_operand",
            "grad_scale",
            "grad_offset",
        ],
    };
    names.get(i).copied().unwrap_or("value")
}
