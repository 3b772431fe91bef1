//! Translation of one HLO instruction to StableHLO ops (generic form).
//!
//! Owns: [`Importer::instruction`], the HLO-opcode → StableHLO-op table and the attribute
//! spellings (`#stablehlo.dot<…>`, `#stablehlo.gather<…>`, `#stablehlo.conv<…>`, windows,
//! comparison directions). Opcodes that only rearrange values (`tuple`,
//! `get-tuple-element`, `copy`, `bitcast` without a shape change) emit nothing.
//! Invariant: every emitted op's operand and result types come from the protos' shapes,
//! so the verifier checks the translation like any input; an opcode or option this table
//! does not know is [`ImportError::Unsupported`].

use super::types::{self, dense_text, leaf_types, tensor_type};
use super::{pad, shape_of, type_list, ImportError, Importer, Typed, Val};
use crate::hlo::proto::{
    ConvolutionDimensionNumbers, FftType, HloInstructionProto, RandomAlgorithm,
    TriangularTranspose, Window,
};
use rustc_hash::FxHashMap;
use std::fmt::Write;

/// HLO opcodes whose StableHLO op has the same operands and no attributes
/// (`exponential-minus-one` → `stablehlo.exponential_minus_one`, …).
const PLAIN: &[&str] = &[
    "abs",
    "add",
    "and",
    "atan2",
    "bitcast-convert",
    "cbrt",
    "ceil",
    "clamp",
    "complex",
    "convert",
    "cosine",
    "count-leading-zeros",
    "divide",
    "dynamic-update-slice",
    "exponential",
    "exponential-minus-one",
    "floor",
    "imag",
    "is-finite",
    "log",
    "log-plus-one",
    "logistic",
    "maximum",
    "minimum",
    "multiply",
    "negate",
    "not",
    "or",
    "popcnt",
    "power",
    "real",
    "remainder",
    "reshape",
    "round-nearest-afz",
    "round-nearest-even",
    "rsqrt",
    "select",
    "shift-left",
    "shift-right-arithmetic",
    "shift-right-logical",
    "sign",
    "sine",
    "sqrt",
    "subtract",
    "tan",
    "tanh",
    "xor",
];

/// `array<i64: a, b>`.
fn array(v: &[i64]) -> String {
    if v.is_empty() {
        return "array<i64>".into();
    }
    let items: Vec<String> = v.iter().map(i64::to_string).collect();
    format!("array<i64: {}>", items.join(", "))
}

/// `[a, b]` (for the fields of `#stablehlo.dot<…>` and friends).
fn list(v: &[i64]) -> String {
    let items: Vec<String> = v.iter().map(i64::to_string).collect();
    format!("[{}]", items.join(", "))
}

/// `name = [..]` entries of the non-empty lists, joined by `, `.
fn fields(items: &[(&str, &[i64])]) -> Vec<String> {
    items
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(n, v)| format!("{n} = {}", list(v)))
        .collect()
}

/// An `f32` attribute in a spelling MLIR reads back exactly.
fn f32_attr(x: f32) -> String {
    format!("{x:.9e} : f32")
}

/// One op to print: name, operands, regions, attributes, result types.
struct OpText<'a> {
    name: &'a str,
    operands: Vec<Typed>,
    regions: Vec<String>,
    attrs: Vec<String>,
    results: Vec<String>,
}

impl Importer<'_> {
    /// Translates instruction `i` (its operands are in `vals`), appending ops to `out`.
    pub(super) fn instruction(
        &mut self,
        i: &HloInstructionProto,
        vals: &FxHashMap<i64, Val>,
        out: &mut String,
        depth: usize,
    ) -> Result<Val, ImportError> {
        let operand = |k: usize| -> Result<&Val, ImportError> {
            let id = i
                .operand_ids
                .get(k)
                .ok_or_else(|| ImportError::malformed(format!("operand {k} missing")))?;
            vals.get(id).ok_or_else(|| {
                ImportError::malformed(format!("operand id {id} not defined before use"))
            })
        };
        let all: Vec<Val> = (0..i.operand_ids.len())
            .map(|k| operand(k).cloned())
            .collect::<Result<_, _>>()?;
        let leaves = || -> Result<Vec<Typed>, ImportError> {
            all.iter()
                .map(|v| match v {
                    Val::Leaf(n, t) => Ok((n.clone(), t.clone())),
                    Val::Tuple(_) => Err(ImportError::Unsupported("a tuple operand".into())),
                })
                .collect()
        };
        let shape = shape_of(i)?;
        let op = |name: &'static str, attrs: Vec<String>| -> Result<OpText<'static>, ImportError> {
            Ok(OpText {
                name,
                operands: leaves()?,
                regions: Vec::new(),
                attrs,
                results: leaf_types(shape)?,
            })
        };
        let dims = &i.dimensions;
        let first_dim = || {
            dims.first()
                .copied()
                .ok_or_else(|| ImportError::malformed("missing dimension"))
        };
        let text = match i.opcode.as_str() {
            "tuple" => return Ok(Val::Tuple(all)),
            "get-tuple-element" => {
                return match operand(0)? {
                    Val::Tuple(vs) => vs
                        .get(i.tuple_index as usize)
                        .cloned()
                        .ok_or_else(|| ImportError::malformed("tuple index out of range")),
                    Val::Leaf(..) => Err(ImportError::malformed("get-tuple-element of an array")),
                }
            }
            "copy" | "domain" | "add-dependency" => return operand(0).cloned(),
            "bitcast" if !types::is_tuple(shape) => {
                // A layout-level reinterpretation: a reshape, a bitcast-convert when the
                // element type changes (same bit width), or nothing at all.
                let Val::Leaf(_, from) = operand(0)? else {
                    return Err(ImportError::malformed("bitcast of a tuple"));
                };
                let to = tensor_type(shape)?;
                if *from == to {
                    return operand(0).cloned();
                }
                let ((from_dims, from_elem), (to_dims, to_elem)) =
                    (split_type(from), split_type(&to));
                let name = if from_elem == to_elem {
                    "stablehlo.reshape"
                } else if from_dims == to_dims {
                    "stablehlo.bitcast_convert"
                } else {
                    return Err(ImportError::Unsupported(format!(
                        "bitcast from {from} to {to} (shape and element type both change)"
                    )));
                };
                op(name, vec![])?
            }
            "constant" => {
                let lit = i
                    .literal
                    .as_ref()
                    .ok_or_else(|| ImportError::malformed("constant without a literal"))?;
                let t = tensor_type(shape)?;
                let value = format!("value = {} : {t}", dense_text(lit, shape)?);
                op("stablehlo.constant", vec![value])?
            }
            "erf" => op("chlo.erf", vec![])?,
            "partition-id" => op("stablehlo.partition_id", vec![])?,
            "replica-id" => op("stablehlo.replica_id", vec![])?,
            "broadcast" => op(
                "stablehlo.broadcast_in_dim",
                vec![format!("broadcast_dimensions = {}", array(dims))],
            )?,
            "transpose" => op(
                "stablehlo.transpose",
                vec![format!("permutation = {}", array(dims))],
            )?,
            "reverse" => op(
                "stablehlo.reverse",
                vec![format!("dimensions = {}", array(dims))],
            )?,
            "concatenate" => op(
                "stablehlo.concatenate",
                vec![format!("dimension = {} : i64", first_dim()?)],
            )?,
            "iota" => op(
                "stablehlo.iota",
                vec![format!("iota_dimension = {} : i64", first_dim()?)],
            )?,
            "compare" => op("stablehlo.compare", compare_attrs(i, &leaves()?)?)?,
            "dot" => op("stablehlo.dot_general", vec![dot_attr(i)?])?,
            "slice" => op("stablehlo.slice", slice_attrs(i))?,
            "pad" => op("stablehlo.pad", pad_attrs(i)?)?,
            "dynamic-slice" => op(
                "stablehlo.dynamic_slice",
                vec![format!("slice_sizes = {}", array(&i.dynamic_slice_sizes))],
            )?,
            "gather" => op("stablehlo.gather", gather_attrs(i)?)?,
            "convolution" => op("stablehlo.convolution", conv_attrs(i)?)?,
            "reduce-precision" => op(
                "stablehlo.reduce_precision",
                vec![
                    format!("exponent_bits = {} : i32", i.exponent_bits),
                    format!("mantissa_bits = {} : i32", i.mantissa_bits),
                ],
            )?,
            "batch-norm-training" | "batch-norm-inference" | "batch-norm-grad" => {
                let name = match i.opcode.as_str() {
                    "batch-norm-training" => "stablehlo.batch_norm_training",
                    "batch-norm-inference" => "stablehlo.batch_norm_inference",
                    _ => "stablehlo.batch_norm_grad",
                };
                op(
                    name,
                    vec![
                        format!("epsilon = {}", f32_attr(i.epsilon)),
                        format!("feature_index = {} : i64", i.feature_index),
                    ],
                )?
            }
            "cholesky" => {
                let lower = i.cholesky_options.as_ref().is_some_and(|o| o.lower);
                op("stablehlo.cholesky", vec![format!("lower = {lower}")])?
            }
            "triangular-solve" => op("stablehlo.triangular_solve", triangular_attrs(i)?)?,
            "fft" => op("stablehlo.fft", fft_attrs(i)?)?,
            "rng-bit-generator" => {
                let alg = match RandomAlgorithm::try_from(i.rng_algorithm) {
                    Ok(RandomAlgorithm::RngThreeFry) => "THREE_FRY",
                    Ok(RandomAlgorithm::RngPhilox) => "PHILOX",
                    _ => "DEFAULT",
                };
                op(
                    "stablehlo.rng_bit_generator",
                    vec![format!("rng_algorithm = #stablehlo<rng_algorithm {alg}>")],
                )?
            }
            "custom-call" => self.custom_call(i, &all)?,
            "opt-barrier" => {
                let ops: Vec<Typed> = all.iter().flat_map(Val::leaves).collect();
                OpText {
                    name: "stablehlo.optimization_barrier",
                    results: ops.iter().map(|o| o.1.clone()).collect(),
                    operands: ops,
                    regions: Vec::new(),
                    attrs: Vec::new(),
                }
            }
            "call" | "fusion" => return self.call(i, &all, out, depth),
            "all-reduce" | "reduce-scatter" => {
                let name = if i.opcode == "all-reduce" {
                    "stablehlo.all_reduce"
                } else {
                    "stablehlo.reduce_scatter"
                };
                let mut t = self.region_op(i, leaves()?, depth)?;
                t.name = name;
                t.attrs = collective_attrs(i)?;
                if i.opcode == "reduce-scatter" {
                    t.attrs
                        .push(format!("scatter_dimension = {} : i64", first_dim()?));
                }
                t
            }
            "all-gather" => {
                let mut a = collective_attrs(i)?;
                a.push(format!("all_gather_dim = {} : i64", first_dim()?));
                op("stablehlo.all_gather", a)?
            }
            "collective-permute" => {
                let pairs: Vec<String> = i
                    .source_target_pairs
                    .iter()
                    .map(|p| format!("[{}, {}]", p.source, p.target))
                    .collect();
                let mut a = channel(i);
                a.push(format!(
                    "source_target_pairs = dense<[{}]> : tensor<{}x2xi64>",
                    pairs.join(", "),
                    pairs.len()
                ));
                op("stablehlo.collective_permute", a)?
            }
            "conditional" => self.conditional(i, &all, depth)?,
            "while" => self.while_loop(i, &all, depth)?,
            "reduce" | "reduce-window" | "sort" | "scatter" | "map" | "select-and-scatter" => {
                self.region_op(i, leaves()?, depth)?
            }
            o if PLAIN.contains(&o) => OpText {
                name: "",
                operands: leaves()?,
                regions: Vec::new(),
                attrs: Vec::new(),
                results: leaf_types(shape)?,
            },
            other => {
                return Err(ImportError::Unsupported(format!("opcode `{other}`")));
            }
        };
        let name = if text.name.is_empty() {
            format!("stablehlo.{}", i.opcode.replace('-', "_"))
        } else {
            text.name.to_string()
        };
        self.print(&name, text, shape, out, depth)
    }

    /// Prints one op and returns its results shaped like `shape`.
    fn print(
        &mut self,
        name: &str,
        t: OpText<'_>,
        shape: &crate::hlo::proto::ShapeProto,
        out: &mut String,
        depth: usize,
    ) -> Result<Val, ImportError> {
        let r = self.fresh('v');
        let n = t.results.len();
        let names: Vec<&str> = t.operands.iter().map(|o| o.0.as_str()).collect();
        let types: Vec<&str> = t.operands.iter().map(|o| o.1.as_str()).collect();
        let lhs = match n {
            0 => String::new(),
            1 => format!("{r} = "),
            _ => format!("{r}:{n} = "),
        };
        let _ = write!(out, "{}{lhs}\"{name}\"({})", pad(depth), names.join(", "));
        if !t.regions.is_empty() {
            let _ = write!(out, " ({})", t.regions.join(", "));
        }
        if !t.attrs.is_empty() {
            let _ = write!(out, " {{{}}}", t.attrs.join(", "));
        }
        let _ = writeln!(
            out,
            " : ({}) -> {}",
            types.join(", "),
            type_list(&t.results, n != 1)
        );
        let mut leaves = (0..n).map(|k| {
            if n == 1 {
                r.clone()
            } else {
                format!("{r}#{k}")
            }
        });
        Val::shaped(shape, &mut leaves)
    }

    /// `call` / `fusion`: a call of the computation's private function.
    fn call(
        &mut self,
        i: &HloInstructionProto,
        all: &[Val],
        out: &mut String,
        depth: usize,
    ) -> Result<Val, ImportError> {
        let id = *i
            .called_computation_ids
            .first()
            .ok_or_else(|| ImportError::malformed("call without a computation"))?;
        let callee = self.callee(id)?;
        let ops: Vec<Typed> = all.iter().flat_map(Val::leaves).collect();
        let results = leaf_types(shape_of(i)?)?;
        let r = self.fresh('v');
        let n = results.len();
        let lhs = if n == 1 {
            format!("{r} = ")
        } else {
            format!("{r}:{n} = ")
        };
        let names: Vec<&str> = ops.iter().map(|o| o.0.as_str()).collect();
        let types: Vec<&str> = ops.iter().map(|o| o.1.as_str()).collect();
        let _ = writeln!(
            out,
            "{}{lhs}func.call @{callee}({}) : ({}) -> {}",
            pad(depth),
            names.join(", "),
            types.join(", "),
            type_list(&results, true)
        );
        let mut leaves = (0..n).map(|k| {
            if n == 1 {
                r.clone()
            } else {
                format!("{r}#{k}")
            }
        });
        Val::shaped(shape_of(i)?, &mut leaves)
    }

    /// `while`: the state's leaves are the loop's operands and block arguments.
    fn while_loop(
        &mut self,
        i: &HloInstructionProto,
        all: &[Val],
        depth: usize,
    ) -> Result<OpText<'static>, ImportError> {
        // XLA's order of a while's called computations: body, then condition.
        let [body, cond] = i.called_computation_ids[..] else {
            return Err(ImportError::malformed("while needs a body and a condition"));
        };
        let state = all
            .first()
            .ok_or_else(|| ImportError::malformed("while without a state"))?
            .leaves();
        Ok(OpText {
            name: "stablehlo.while",
            results: state.iter().map(|s| s.1.clone()).collect(),
            operands: state,
            regions: vec![self.region(cond, depth)?, self.region(body, depth)?],
            attrs: Vec::new(),
        })
    }

    /// `conditional`: `stablehlo.if` on a predicate (true branch first), `stablehlo.case`
    /// on an index; branch `k` sees operand `k + 1` as its parameter.
    fn conditional(
        &mut self,
        i: &HloInstructionProto,
        all: &[Val],
        depth: usize,
    ) -> Result<OpText<'static>, ImportError> {
        let (selector, args) = all
            .split_first()
            .ok_or_else(|| ImportError::malformed("conditional without a selector"))?;
        let Val::Leaf(sel, sel_ty) = selector else {
            return Err(ImportError::malformed("tuple selector"));
        };
        if args.len() != i.called_computation_ids.len() {
            return Err(ImportError::malformed("one operand per branch expected"));
        }
        let mut regions = Vec::new();
        for (&comp, arg) in i.called_computation_ids.iter().zip(args) {
            regions.push(self.capturing_region(comp, vec![arg.clone()], depth)?);
        }
        let name = if sel_ty.ends_with("i1>") {
            "stablehlo.if"
        } else {
            "stablehlo.case"
        };
        Ok(OpText {
            name,
            operands: vec![(sel.clone(), sel_ty.clone())],
            regions,
            attrs: Vec::new(),
            results: leaf_types(shape_of(i)?)?,
        })
    }

    /// Ops with a called computation as their region (`to_apply`, comparators, …).
    fn region_op(
        &mut self,
        i: &HloInstructionProto,
        operands: Vec<Typed>,
        depth: usize,
    ) -> Result<OpText<'static>, ImportError> {
        let mut regions = Vec::new();
        for &c in &i.called_computation_ids {
            regions.push(self.region(c, depth)?);
        }
        let window = || {
            i.window
                .as_ref()
                .ok_or_else(|| ImportError::malformed("missing window"))
        };
        let (name, attrs) = match i.opcode.as_str() {
            "reduce" => (
                "stablehlo.reduce",
                vec![format!("dimensions = {}", array(&i.dimensions))],
            ),
            "map" => (
                "stablehlo.map",
                vec![format!("dimensions = {}", array(&i.dimensions))],
            ),
            "sort" => (
                "stablehlo.sort",
                vec![
                    format!(
                        "dimension = {} : i64",
                        i.dimensions.first().copied().unwrap_or(0)
                    ),
                    format!("is_stable = {}", i.is_stable),
                ],
            ),
            "reduce-window" => ("stablehlo.reduce_window", window_attrs(window()?, true)),
            "select-and-scatter" => (
                "stablehlo.select_and_scatter",
                window_attrs(window()?, false),
            ),
            "scatter" => ("stablehlo.scatter", scatter_attrs(i)?),
            _ => ("", Vec::new()),
        };
        Ok(OpText {
            name,
            operands,
            regions,
            attrs,
            results: leaf_types(shape_of(i)?)?,
        })
    }

    /// `custom-call`: target, backend config, side effect, API version, layouts.
    fn custom_call(
        &mut self,
        i: &HloInstructionProto,
        all: &[Val],
    ) -> Result<OpText<'static>, ImportError> {
        let ops: Vec<Typed> = all.iter().flat_map(Val::leaves).collect();
        let mut attrs = vec![format!(
            "call_target_name = {}",
            quote(&i.custom_call_target)
        )];
        let config = String::from_utf8_lossy(&i.backend_config).into_owned();
        // Typed-FFI calls (API version 4) carry their attributes as a dictionary.
        if i.custom_call_api_version == 4 {
            attrs.push("api_version = 4 : i32".into());
            if config.trim_start().starts_with('{') {
                attrs.push(format!("mhlo.backend_config = {config}"));
            }
        } else if !config.is_empty() {
            attrs.push(format!("backend_config = {}", quote(&config)));
        }
        if i.custom_call_has_side_effect {
            attrs.push("has_side_effect = true".into());
        }
        if i.constrain_layout {
            let layouts = |shapes: Vec<&crate::hlo::proto::ShapeProto>| {
                let items: Vec<String> = shapes
                    .iter()
                    .map(|s| {
                        let mtm = s
                            .layout
                            .as_ref()
                            .map(|l| l.minor_to_major.clone())
                            .unwrap_or_default();
                        format!("dense<{}> : tensor<{}xindex>", list(&mtm), mtm.len())
                    })
                    .collect();
                format!("[{}]", items.join(", "))
            };
            let shape = shape_of(i)?;
            let results: Vec<&crate::hlo::proto::ShapeProto> = if types::is_tuple(shape) {
                shape.tuple_shapes.iter().collect()
            } else {
                vec![shape]
            };
            attrs.push(format!(
                "operand_layouts = {}",
                layouts(i.operand_shapes_with_layout.iter().collect())
            ));
            attrs.push(format!("result_layouts = {}", layouts(results)));
        }
        Ok(OpText {
            name: "stablehlo.custom_call",
            operands: ops,
            regions: Vec::new(),
            attrs,
            results: leaf_types(shape_of(i)?)?,
        })
    }
}

/// `channel_handle` of a collective with a channel (type 1: device to device).
fn channel(i: &HloInstructionProto) -> Vec<String> {
    if i.channel_id > 0 {
        vec![format!(
            "channel_handle = #stablehlo.channel_handle<handle = {}, type = 1>",
            i.channel_id
        )]
    } else {
        Vec::new()
    }
}

/// Replica groups (a rectangular `dense<…>`, padded with -1 as StableHLO does), channel
/// and device-id mode of a collective.
fn collective_attrs(i: &HloInstructionProto) -> Result<Vec<String>, ImportError> {
    let width = i
        .replica_groups
        .iter()
        .map(|g| g.replica_ids.len())
        .max()
        .unwrap_or(0);
    let rows: Vec<String> = i
        .replica_groups
        .iter()
        .map(|g| {
            let mut ids = g.replica_ids.clone();
            ids.resize(width, -1);
            list(&ids)
        })
        .collect();
    let mut a = channel(i);
    a.push(format!(
        "replica_groups = dense<[{}]> : tensor<{}x{width}xi64>",
        rows.join(", "),
        rows.len()
    ));
    if i.use_global_device_ids {
        a.push("use_global_device_ids".into());
    }
    Ok(a)
}

/// The dimensions and the element type of `tensor<AxBxT>`.
fn split_type(t: &str) -> (Vec<&str>, &str) {
    let mut rest = t.strip_prefix("tensor<").unwrap_or(t);
    rest = rest.strip_suffix('>').unwrap_or(rest);
    let mut dims = Vec::new();
    while let Some((d, tail)) = rest.split_once('x') {
        if d.is_empty() || !d.bytes().all(|b| b.is_ascii_digit()) {
            break;
        }
        dims.push(d);
        rest = tail;
    }
    (dims, rest)
}

/// A string attribute with MLIR escapes.
fn quote(s: &str) -> String {
    let mut q = String::from("\"");
    for b in s.bytes() {
        match b {
            b'"' | b'\\' => {
                q.push('\\');
                q.push(b as char);
            }
            0x20..=0x7e => q.push(b as char),
            _ => {
                let _ = write!(q, "\\{b:02X}");
            }
        }
    }
    q.push('"');
    q
}

fn compare_attrs(i: &HloInstructionProto, operands: &[Typed]) -> Result<Vec<String>, ImportError> {
    let dir = match i.comparison_direction.as_str() {
        d @ ("EQ" | "NE" | "LT" | "LE" | "GT" | "GE") => d,
        d => {
            return Err(ImportError::malformed(format!(
                "comparison direction `{d}`"
            )))
        }
    };
    let ty = match i.comparison_type.as_str() {
        "" => {
            let t = operands.first().map(|o| o.1.as_str()).unwrap_or("");
            let elem = t.rsplit('x').next().unwrap_or(t);
            if elem.contains('f') || elem.contains("complex") {
                "FLOAT"
            } else if elem.starts_with("ui") || elem.starts_with("i1>") || t.ends_with("<i1>") {
                "UNSIGNED"
            } else {
                "SIGNED"
            }
        }
        "FLOAT" => "FLOAT",
        "TOTALORDER" => "TOTALORDER",
        "SIGNED" => "SIGNED",
        "UNSIGNED" => "UNSIGNED",
        t => return Err(ImportError::malformed(format!("comparison type `{t}`"))),
    };
    Ok(vec![
        format!("compare_type = #stablehlo<comparison_type {ty}>"),
        format!("comparison_direction = #stablehlo<comparison_direction {dir}>"),
    ])
}

fn dot_attr(i: &HloInstructionProto) -> Result<String, ImportError> {
    let d = i
        .dot_dimension_numbers
        .as_ref()
        .ok_or_else(|| ImportError::malformed("dot without dimension numbers"))?;
    let f = fields(&[
        ("lhs_batching_dimensions", &d.lhs_batch_dimensions),
        ("rhs_batching_dimensions", &d.rhs_batch_dimensions),
        ("lhs_contracting_dimensions", &d.lhs_contracting_dimensions),
        ("rhs_contracting_dimensions", &d.rhs_contracting_dimensions),
    ]);
    Ok(format!(
        "dot_dimension_numbers = #stablehlo.dot<{}>",
        f.join(", ")
    ))
}

fn slice_attrs(i: &HloInstructionProto) -> Vec<String> {
    let get = |f: fn(&crate::hlo::proto::SliceDimensions) -> i64| -> Vec<i64> {
        i.slice_dimensions.iter().map(f).collect()
    };
    vec![
        format!("limit_indices = {}", array(&get(|s| s.limit))),
        format!("start_indices = {}", array(&get(|s| s.start))),
        format!("strides = {}", array(&get(|s| s.stride))),
    ]
}

fn pad_attrs(i: &HloInstructionProto) -> Result<Vec<String>, ImportError> {
    let p = i
        .padding_config
        .as_ref()
        .ok_or_else(|| ImportError::malformed("pad without a padding config"))?;
    let get = |f: fn(&crate::hlo::proto::PaddingConfigDimension) -> i64| -> Vec<i64> {
        p.dimensions.iter().map(f).collect()
    };
    Ok(vec![
        format!(
            "edge_padding_high = {}",
            array(&get(|d| d.edge_padding_high))
        ),
        format!("edge_padding_low = {}", array(&get(|d| d.edge_padding_low))),
        format!("interior_padding = {}", array(&get(|d| d.interior_padding))),
    ])
}

fn gather_attrs(i: &HloInstructionProto) -> Result<Vec<String>, ImportError> {
    let g = i
        .gather_dimension_numbers
        .as_ref()
        .ok_or_else(|| ImportError::malformed("gather without dimension numbers"))?;
    let mut f = fields(&[
        ("offset_dims", &g.offset_dims),
        ("collapsed_slice_dims", &g.collapsed_slice_dims),
        ("operand_batching_dims", &g.operand_batching_dims),
        (
            "start_indices_batching_dims",
            &g.start_indices_batching_dims,
        ),
        ("start_index_map", &g.start_index_map),
    ]);
    f.push(format!("index_vector_dim = {}", g.index_vector_dim));
    Ok(vec![
        format!("dimension_numbers = #stablehlo.gather<{}>", f.join(", ")),
        format!("indices_are_sorted = {}", i.indices_are_sorted),
        format!("slice_sizes = {}", array(&i.gather_slice_sizes)),
    ])
}

fn scatter_attrs(i: &HloInstructionProto) -> Result<Vec<String>, ImportError> {
    let s = i
        .scatter_dimension_numbers
        .as_ref()
        .ok_or_else(|| ImportError::malformed("scatter without dimension numbers"))?;
    let mut f = fields(&[
        ("update_window_dims", &s.update_window_dims),
        ("inserted_window_dims", &s.inserted_window_dims),
        ("input_batching_dims", &s.input_batching_dims),
        (
            "scatter_indices_batching_dims",
            &s.scatter_indices_batching_dims,
        ),
        (
            "scatter_dims_to_operand_dims",
            &s.scatter_dims_to_operand_dims,
        ),
    ]);
    f.push(format!("index_vector_dim = {}", s.index_vector_dim));
    Ok(vec![
        format!("indices_are_sorted = {}", i.indices_are_sorted),
        format!(
            "scatter_dimension_numbers = #stablehlo.scatter<{}>",
            f.join(", ")
        ),
        format!("unique_indices = {}", i.unique_indices),
    ])
}

/// `padding = dense<[[lo, hi], …]> : tensor<Nx2xi64>`.
fn padding_attr(w: &Window) -> String {
    let pairs: Vec<String> = w
        .dimensions
        .iter()
        .map(|d| format!("[{}, {}]", d.padding_low, d.padding_high))
        .collect();
    format!(
        "padding = dense<[{}]> : tensor<{}x2xi64>",
        pairs.join(", "),
        w.dimensions.len()
    )
}

/// `reduce_window` (with dilations) or `select_and_scatter` window attributes.
fn window_attrs(w: &Window, dilations: bool) -> Vec<String> {
    let get = |f: fn(&crate::hlo::proto::WindowDimension) -> i64| -> Vec<i64> {
        w.dimensions.iter().map(f).collect()
    };
    let mut a = vec![
        format!("window_dimensions = {}", array(&get(|d| d.size))),
        format!("window_strides = {}", array(&get(|d| d.stride))),
        padding_attr(w),
    ];
    if dilations {
        a.push(format!(
            "base_dilations = {}",
            array(&get(|d| d.base_dilation.max(1)))
        ));
        a.push(format!(
            "window_dilations = {}",
            array(&get(|d| d.window_dilation.max(1)))
        ));
    }
    a
}

/// `#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>`.
fn conv_labels(d: &ConvolutionDimensionNumbers) -> Result<String, ImportError> {
    fn one(rank: usize, named: &[(i64, &str)], spatial: &[i64]) -> Result<String, ImportError> {
        let mut labels = vec![String::new(); rank];
        let mut set = |pos: i64, l: String| -> Result<(), ImportError> {
            let slot = usize::try_from(pos)
                .ok()
                .and_then(|p| labels.get_mut(p))
                .ok_or_else(|| ImportError::malformed(format!("convolution dimension {pos}")))?;
            *slot = l;
            Ok(())
        };
        for &(pos, l) in named {
            set(pos, l.to_string())?;
        }
        for (k, &pos) in spatial.iter().enumerate() {
            set(pos, k.to_string())?;
        }
        Ok(format!("[{}]", labels.join(", ")))
    }
    let rank = d.input_spatial_dimensions.len() + 2;
    Ok(format!(
        "#stablehlo.conv<{}x{}->{}>",
        one(
            rank,
            &[
                (d.input_batch_dimension, "b"),
                (d.input_feature_dimension, "f")
            ],
            &d.input_spatial_dimensions
        )?,
        one(
            rank,
            &[
                (d.kernel_input_feature_dimension, "i"),
                (d.kernel_output_feature_dimension, "o")
            ],
            &d.kernel_spatial_dimensions
        )?,
        one(
            rank,
            &[
                (d.output_batch_dimension, "b"),
                (d.output_feature_dimension, "f")
            ],
            &d.output_spatial_dimensions
        )?,
    ))
}

fn conv_attrs(i: &HloInstructionProto) -> Result<Vec<String>, ImportError> {
    let d = i
        .convolution_dimension_numbers
        .as_ref()
        .ok_or_else(|| ImportError::malformed("convolution without dimension numbers"))?;
    let default = Window::default();
    let w = i.window.as_ref().unwrap_or(&default);
    let get = |f: fn(&crate::hlo::proto::WindowDimension) -> i64| -> Vec<i64> {
        w.dimensions.iter().map(f).collect()
    };
    let reversal: Vec<&str> = w
        .dimensions
        .iter()
        .map(|d| if d.window_reversal { "true" } else { "false" })
        .collect();
    let mut a = vec![
        format!("batch_group_count = {} : i64", i.batch_group_count.max(1)),
        format!("dimension_numbers = {}", conv_labels(d)?),
        format!(
            "feature_group_count = {} : i64",
            i.feature_group_count.max(1)
        ),
    ];
    if !w.dimensions.is_empty() {
        a.push(format!(
            "lhs_dilation = {}",
            array(&get(|d| d.base_dilation.max(1)))
        ));
        a.push(padding_attr(w));
        a.push(format!(
            "rhs_dilation = {}",
            array(&get(|d| d.window_dilation.max(1)))
        ));
        a.push(format!(
            "window_reversal = array<i1: {}>",
            reversal.join(", ")
        ));
        a.push(format!(
            "window_strides = {}",
            array(&get(|d| d.stride.max(1)))
        ));
    }
    Ok(a)
}

fn triangular_attrs(i: &HloInstructionProto) -> Result<Vec<String>, ImportError> {
    let o = i
        .triangular_solve_options
        .as_ref()
        .ok_or_else(|| ImportError::malformed("triangular-solve without options"))?;
    let t = match TriangularTranspose::try_from(o.transpose_a) {
        Ok(TriangularTranspose::Transpose) => "TRANSPOSE",
        Ok(TriangularTranspose::Adjoint) => "ADJOINT",
        _ => "NO_TRANSPOSE",
    };
    Ok(vec![
        format!("left_side = {}", o.left_side),
        format!("lower = {}", o.lower),
        format!("transpose_a = #stablehlo<transpose {t}>"),
        format!("unit_diagonal = {}", o.unit_diagonal),
    ])
}

fn fft_attrs(i: &HloInstructionProto) -> Result<Vec<String>, ImportError> {
    let t = match FftType::try_from(i.fft_type) {
        Ok(FftType::Fft) => "FFT",
        Ok(FftType::Ifft) => "IFFT",
        Ok(FftType::Rfft) => "RFFT",
        Ok(FftType::Irfft) => "IRFFT",
        Err(_) => return Err(ImportError::malformed(format!("fft type {}", i.fft_type))),
    };
    Ok(vec![
        format!("fft_length = {}", array(&i.fft_length)),
        format!("fft_type = #stablehlo<fft_type {t}>"),
    ])
}
