//! Translation of one HLO instruction to StableHLO ops (generic form).
//!
//! Owns: [`Importer::instruction`] and the HLO-opcode → StableHLO-op table (attribute
//! spellings are in `attrs`). Opcodes that only rearrange values (`tuple`,
//! `get-tuple-element`, `copy`, `bitcast` without a shape change) emit nothing.
//! Invariant: every emitted op's operand and result types come from the protos' shapes,
//! so the verifier checks the translation like any input; an opcode or option this table
//! does not know is [`ImportError::Unsupported`].

use super::attrs::{
    array, collective_attrs, compare_attrs, list, quote, scatter_attrs, simple_op, window_attrs,
};
use super::types::{self, leaf_types};
use super::{pad, shape_of, type_list, ImportError, Importer, Typed, Val};
use crate::hlo::proto::{HloInstructionProto, ShapeProto};
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

/// One op to print: name, operands, regions, attributes, result types.
struct OpText<'a> {
    name: &'a str,
    operands: Vec<Typed>,
    regions: Vec<String>,
    attrs: Vec<String>,
    results: Vec<String>,
}

impl Importer<'_> {
    /// Translates instruction `i` (its operands' values are in `vals`, their shapes in
    /// `operand_shapes`), appending ops to `out`.
    pub(super) fn instruction(
        &mut self,
        i: &HloInstructionProto,
        vals: &FxHashMap<i64, Val>,
        operand_shapes: &[&ShapeProto],
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
        if let Some((name, attrs)) = simple_op(i, shape)? {
            return self.print(name, op(name, attrs)?, shape, out, depth);
        }
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
                let Val::Leaf(n, t) = operand(0)? else {
                    return Err(ImportError::malformed("bitcast of a tuple"));
                };
                let from_shape = operand_shapes
                    .first()
                    .copied()
                    .ok_or_else(|| ImportError::malformed("bitcast operand without a shape"))?;
                let (n, t) = self.bitcast((n.clone(), t.clone()), from_shape, shape, out, depth)?;
                return Ok(Val::Leaf(n, t));
            }
            "compare" => op("stablehlo.compare", compare_attrs(i, &leaves()?)?)?,
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
