//! Static cost statistics of a module: op histogram, FLOPs, parameter and activation bytes.
//!
//! Owns: [`Stats`] and [`compute`]. Every op reachable from a function body is counted once
//! (ops inside `while`/`if`/`reduce` regions are counted once, not per trip or element).
//!
//! FLOP model (one "flop" = one scalar arithmetic operation; a multiply-add is 2):
//! * `dot_general`: `2 * M * N * K` per batch element, i.e. `2 * result_elements * K`
//!   where `K` is the product of the lhs contracting dimensions (`dot`: the lhs's last
//!   dimension).
//! * `convolution`: `2 * output_elements * kernel_input_features * prod(kernel_spatial)`
//!   (each output element is one window's multiply-add over the kernel's input features;
//!   correct for any feature/batch group count since the kernel's input-feature dimension
//!   is already per group).
//! * elementwise ops (the `ELEMENTWISE` trait, and the `chlo.broadcast_*` family): 1 per
//!   result element, summed over results.
//! * reductions: `reduce`, `all_reduce`, `reduce_scatter`: 1 per input element;
//!   `reduce_window`: 1 per window element per output element per input.
//! * everything else (data movement, constants, control flow, custom calls): 0.
//!
//! Parameter bytes are the bytes of the arguments of the public functions; activation bytes
//! are the bytes of every op result. Tuples count their elements; tokens count 0. All sums
//! saturate instead of overflowing.

use std::collections::BTreeMap;

use neuronc_ir::attr::{Attr, ConvDims, DotDims};
use neuronc_ir::{Module, Op, OpKind, Type, TypeId, ValueId};
use serde::Serialize;

/// Cost statistics of a module. Field order is the JSON and text output order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// Number of functions.
    pub functions: u64,
    /// Number of ops reachable from function bodies (terminators included).
    pub ops: u64,
    /// Estimated scalar operations (see the module docs for the model).
    pub flops: u64,
    /// Bytes of the public functions' arguments.
    pub parameter_bytes: u64,
    /// Bytes of all op results.
    pub activation_bytes: u64,
    /// Number of ops of each kind, by fully qualified op name.
    pub op_histogram: BTreeMap<String, u64>,
}

/// Computes the statistics of `module`.
pub fn compute(module: &Module) -> Stats {
    let mut histogram: BTreeMap<&'static str, u64> = BTreeMap::new();
    let (mut ops, mut flops, mut activation) = (0u64, 0u128, 0u128);
    module.walk_ops(|id| {
        let op = module.op(id);
        ops += 1;
        *histogram.entry(op.kind.name()).or_default() += 1;
        flops = flops.saturating_add(op_flops(module, op));
        for &r in &op.results {
            activation = activation.saturating_add(type_bytes(module, module.value_type(r)));
        }
    });
    let parameters = module
        .funcs
        .iter()
        .filter(|f| f.visibility.is_none())
        .flat_map(|f| module.region(f.body).args.iter())
        .fold(0u128, |acc, &v| {
            acc.saturating_add(type_bytes(module, module.value_type(v)))
        });
    Stats {
        functions: module.funcs.len() as u64,
        ops,
        flops: saturate(flops),
        parameter_bytes: saturate(parameters),
        activation_bytes: saturate(activation),
        op_histogram: histogram
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    }
}

fn saturate(v: u128) -> u64 {
    u64::try_from(v).unwrap_or(u64::MAX)
}

/// Bytes of a value of type `ty` (tuples and futures: sum of elements; tokens: 0).
fn type_bytes(module: &Module, ty: TypeId) -> u128 {
    match module.ty(ty) {
        Type::Tensor(t) => t.byte_size() as u128,
        Type::Tuple(elems) | Type::Future(elems) => elems
            .iter()
            .fold(0, |acc, &e| acc.saturating_add(type_bytes(module, e))),
        Type::Token => 0,
    }
}

/// Number of elements of a value (0 if it is not a tensor).
fn elements(module: &Module, v: ValueId) -> u128 {
    module
        .tensor_type(v)
        .map_or(0, |t| t.num_elements() as u128)
}

/// Dimension `d` of a tensor value, if it exists.
fn dim(module: &Module, v: ValueId, d: i64) -> Option<u128> {
    let t = module.tensor_type(v)?;
    let d = usize::try_from(d).ok()?;
    t.shape.get(d).map(|&x| x.max(0) as u128)
}

fn product(module: &Module, v: ValueId, dims: &[i64]) -> u128 {
    dims.iter().fold(1u128, |acc, &d| {
        acc.saturating_mul(dim(module, v, d).unwrap_or(1))
    })
}

fn sum_elements(module: &Module, values: &[ValueId]) -> u128 {
    values
        .iter()
        .fold(0, |acc, &v| acc.saturating_add(elements(module, v)))
}

/// FLOPs of one op under the model in the module docs.
fn op_flops(module: &Module, op: &Op) -> u128 {
    let results = sum_elements(module, &op.results);
    match op.kind {
        OpKind::DotGeneral => {
            let k = match op.attrs.get("dot_dimension_numbers") {
                Some(Attr::DotDims(DotDims {
                    lhs_contracting, ..
                })) => op
                    .operands
                    .first()
                    .map_or(1, |&lhs| product(module, lhs, lhs_contracting)),
                _ => last_dim(module, op),
            };
            results.saturating_mul(k).saturating_mul(2)
        }
        OpKind::Dot => results
            .saturating_mul(last_dim(module, op))
            .saturating_mul(2),
        OpKind::Convolution => {
            let window = match (op.attrs.get("dimension_numbers"), op.operands.get(1)) {
                (
                    Some(Attr::ConvDims(ConvDims {
                        kernel_input_feature,
                        kernel_spatial,
                        ..
                    })),
                    Some(&kernel),
                ) => product(module, kernel, kernel_spatial)
                    .saturating_mul(dim(module, kernel, *kernel_input_feature).unwrap_or(1)),
                _ => 1,
            };
            results.saturating_mul(window).saturating_mul(2)
        }
        OpKind::Reduce => sum_elements(module, &op.operands[..op.operands.len() / 2]),
        OpKind::ReduceWindow => {
            let window: u128 = op
                .attrs
                .i64_array("window_dimensions")
                .unwrap_or_default()
                .iter()
                .fold(1, |acc, &d| acc.saturating_mul(d.max(0) as u128));
            results.saturating_mul(window)
        }
        OpKind::AllReduce | OpKind::ReduceScatter => sum_elements(module, &op.operands),
        k if k.is_elementwise() || k.name().starts_with("chlo.broadcast_") => results,
        _ => 0,
    }
}

/// The lhs's last dimension: the contracting size of a plain `dot`.
fn last_dim(module: &Module, op: &Op) -> u128 {
    op.operands
        .first()
        .and_then(|&lhs| {
            let rank = module.tensor_type(lhs)?.rank();
            dim(module, lhs, rank.checked_sub(1)? as i64)
        })
        .unwrap_or(1)
}

impl Stats {
    /// The human-readable report: totals, then the histogram (most frequent first, ties by
    /// name).
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(s, "functions: {}", self.functions);
        let _ = writeln!(s, "ops: {}", self.ops);
        let _ = writeln!(s, "flops: {}", self.flops);
        let _ = writeln!(s, "parameter_bytes: {}", self.parameter_bytes);
        let _ = writeln!(s, "activation_bytes: {}", self.activation_bytes);
        let _ = writeln!(s, "op_histogram:");
        let mut rows: Vec<_> = self.op_histogram.iter().collect();
        rows.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        for (name, count) in rows {
            let _ = writeln!(s, "  {name:<width$} {count}");
        }
        s
    }

    /// The JSON report (pretty-printed, keys in a fixed order, trailing newline).
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}
