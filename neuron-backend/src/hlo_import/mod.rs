//! Import of an XLA `HloModuleProto` (what torch-neuronx hands `neuronx-cc`, what
//! `--xla_dump_hlo_as_proto` writes, and what our own `compile` emits as `model.hlo.pb`)
//! as StableHLO text that the parser and verifier then read like any other input. HLO
//! text is read into the same protos by `text` ([`hlo_text_to_stablehlo`]).
//!
//! Owns: [`hlo_proto_to_stablehlo`], [`ImportError`], and the walk over computations: the
//! entry computation becomes `func.func @main`; a computation reached by `call` or `fusion`
//! becomes a private function; one reached by `reduce`, `sort`, `scatter`, `while`,
//! `conditional`, … becomes that op's region. Instructions are translated in `ops` (their
//! attributes in `attrs`), shapes and literals in `types`.
//!
//! Tuples do not exist in the output: every tuple-shaped instruction value is a tree of
//! SSA values ([`Val`]); `tuple` and `get-tuple-element` only rearrange that tree, tuple
//! parameters (entry, `call`, `while`) become one argument per leaf, and a tuple root
//! returns its leaves in order. The output uses MLIR's generic op form for StableHLO ops
//! (one uniform spelling for every attribute) inside pretty `func.func`s.
//! Invariants: an opcode or attribute the translation does not cover is an
//! [`ImportError::Unsupported`] naming the instruction, never a guess; SSA names are unique
//! in the whole module (`%vN`, `%aN` for block arguments); computations are emitted once
//! each, in first-use order, so the output is deterministic.

mod attrs;
mod bitcast;
mod ops;
mod text;
mod types;

pub use text::{hlo_text_to_stablehlo, parse_hlo_text};

use crate::hlo::proto::{HloComputationProto, HloInstructionProto, HloModuleProto, ShapeProto};
use prost::Message;
use rustc_hash::FxHashMap;
use std::fmt::Write;

/// Why an `HloModuleProto` could not be imported.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ImportError {
    #[error("not an HloModuleProto: {0}")]
    Decode(String),
    #[error("malformed HloModuleProto: {0}")]
    Malformed(String),
    #[error("unsupported: {0}")]
    Unsupported(String),
    #[error("computation {computation}, instruction {name} ({opcode}): {source}")]
    At {
        computation: String,
        name: String,
        opcode: String,
        source: Box<ImportError>,
    },
    /// An error in HLO text at a 1-based line and column (see [`hlo_text_to_stablehlo`]).
    #[error("{line}:{col}: {source}")]
    Text {
        line: usize,
        col: usize,
        source: Box<ImportError>,
    },
    /// What HLO text holds where its grammar wants something else (inside `Text`).
    #[error("expected {expected}, found {found}")]
    Expected { expected: String, found: String },
}

impl ImportError {
    fn malformed(what: impl Into<String>) -> Self {
        ImportError::Malformed(what.into())
    }
}

/// `xla.HloProto`, the wrapper XLA's `--xla_dump_hlo_as_proto` writes (`*.hlo.pb`): the
/// module and its buffer assignment (not read).
#[derive(Clone, PartialEq, prost::Message)]
struct HloProto {
    #[prost(message, optional, tag = "1")]
    hlo_module: Option<HloModuleProto>,
}

/// Decodes a serialized `HloModuleProto` (or an `HloProto` wrapping one, as XLA's dumps
/// are) and translates it to StableHLO text.
pub fn hlo_proto_to_stablehlo(bytes: &[u8]) -> Result<String, ImportError> {
    let direct = HloModuleProto::decode(bytes);
    if let Ok(m) = &direct {
        if !m.computations.is_empty() {
            return module_to_stablehlo(m);
        }
    }
    match HloProto::decode(bytes) {
        Ok(HloProto {
            hlo_module: Some(m),
        }) if !m.computations.is_empty() => module_to_stablehlo(&m),
        _ => match direct {
            Err(e) => Err(ImportError::Decode(e.to_string())),
            Ok(_) => Err(ImportError::malformed("the module has no computations")),
        },
    }
}

/// Translates a decoded `HloModuleProto` to StableHLO text.
pub fn module_to_stablehlo(m: &HloModuleProto) -> Result<String, ImportError> {
    let mut imp = Importer {
        comps: m.computations.iter().map(|c| (c.id, c)).collect(),
        funcs: Vec::new(),
        func_names: FxHashMap::default(),
        next: 0,
    };
    let entry = imp.comp(m.entry_computation_id)?;
    let main = imp.function(entry, "main", false)?;
    let mut out = format!("module @{} {{\n", symbol(&m.name));
    out.push_str(&main);
    for f in &imp.funcs {
        out.push_str(f);
    }
    out.push_str("}\n");
    Ok(out)
}

/// A letters/digits/underscores spelling of an HLO name, usable as an MLIR symbol.
fn symbol(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    match s.chars().next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => s,
        _ => format!("m_{s}"),
    }
}

/// An SSA value's name and its type (`("%v3", "tensor<2xf32>")`).
type Typed = (String, String);

/// An instruction's value: one SSA value (`%v3`, `%v4#1`) with its type, or a tuple.
#[derive(Clone, Debug)]
enum Val {
    Leaf(String, String),
    Tuple(Vec<Val>),
}

impl Val {
    /// The SSA values of the tree, depth-first.
    fn leaves(&self) -> Vec<Typed> {
        let mut out = Vec::new();
        self.collect(&mut out);
        out
    }
    fn collect(&self, out: &mut Vec<Typed>) {
        match self {
            Val::Leaf(n, t) => out.push((n.clone(), t.clone())),
            Val::Tuple(vs) => vs.iter().for_each(|v| v.collect(out)),
        }
    }
    /// A tree shaped like `shape` over the values `names` (consumed in order).
    fn shaped(
        shape: &ShapeProto,
        names: &mut impl Iterator<Item = String>,
    ) -> Result<Val, ImportError> {
        if types::is_tuple(shape) {
            let elems = shape
                .tuple_shapes
                .iter()
                .map(|s| Val::shaped(s, names))
                .collect::<Result<_, _>>()?;
            return Ok(Val::Tuple(elems));
        }
        let name = names
            .next()
            .ok_or_else(|| ImportError::malformed("fewer values than the shape has leaves"))?;
        Ok(Val::Leaf(name, types::tensor_type(shape)?))
    }
}

/// Module-wide translation state.
struct Importer<'m> {
    comps: FxHashMap<i64, &'m HloComputationProto>,
    /// Private functions emitted so far (text), in first-use order.
    funcs: Vec<String>,
    /// Symbol of each computation emitted as a function.
    func_names: FxHashMap<i64, String>,
    /// Next SSA number.
    next: usize,
}

/// Indentation of `depth` levels.
fn pad(depth: usize) -> String {
    "  ".repeat(depth)
}

/// `(t1, t2)` or `t` for a result list.
fn type_list(types: &[String], parens_for_one: bool) -> String {
    if types.len() == 1 && !parens_for_one {
        types[0].clone()
    } else {
        format!("({})", types.join(", "))
    }
}

impl<'m> Importer<'m> {
    fn comp(&self, id: i64) -> Result<&'m HloComputationProto, ImportError> {
        self.comps
            .get(&id)
            .copied()
            .ok_or_else(|| ImportError::malformed(format!("no computation with id {id}")))
    }

    fn fresh(&mut self, prefix: char) -> String {
        self.next += 1;
        format!("%{prefix}{}", self.next)
    }

    /// The parameter shapes of a computation, by parameter number.
    fn param_shapes(c: &HloComputationProto) -> Result<Vec<&ShapeProto>, ImportError> {
        let mut params: Vec<(i64, &ShapeProto)> = Vec::new();
        for i in c.instructions.iter().filter(|i| i.opcode == "parameter") {
            let s = i
                .shape
                .as_ref()
                .ok_or_else(|| ImportError::malformed(format!("{} has no shape", i.name)))?;
            params.push((i.parameter_number, s));
        }
        params.sort_by_key(|p| p.0);
        if params.iter().enumerate().any(|(k, p)| p.0 != k as i64) {
            return Err(ImportError::malformed(format!(
                "computation {}: parameter numbers are not 0..n",
                c.name
            )));
        }
        Ok(params.into_iter().map(|p| p.1).collect())
    }

    /// Fresh block arguments for the parameters of `c`: their `%aN: type` list and the
    /// parameter values they make up.
    fn block_args(
        &mut self,
        c: &HloComputationProto,
    ) -> Result<(Vec<Typed>, Vec<Val>), ImportError> {
        let mut args = Vec::new();
        let mut vals = Vec::new();
        for s in Self::param_shapes(c)? {
            let n = types::leaf_types(s)?.len();
            let names: Vec<String> = (0..n).map(|_| self.fresh('a')).collect();
            let v = Val::shaped(s, &mut names.clone().into_iter())?;
            args.extend(v.leaves());
            vals.push(v);
        }
        Ok((args, vals))
    }

    /// `c` as a function named `name` (private unless it is the entry).
    fn function(
        &mut self,
        c: &HloComputationProto,
        name: &str,
        private: bool,
    ) -> Result<String, ImportError> {
        let (args, params) = self.block_args(c)?;
        let mut body = String::new();
        let root = self.body(c, params, &mut body, 2)?;
        let results = root.leaves();
        let arg_text: Vec<String> = args.iter().map(|(n, t)| format!("{n}: {t}")).collect();
        let res_types: Vec<String> = results.iter().map(|r| r.1.clone()).collect();
        let vis = if private { "private " } else { "" };
        let mut f = format!(
            "  func.func {vis}@{name}({}) -> {} {{\n",
            arg_text.join(", "),
            type_list(&res_types, true)
        );
        f.push_str(&body);
        let names: Vec<&str> = results.iter().map(|r| r.0.as_str()).collect();
        let _ = writeln!(
            f,
            "    func.return {} : {}",
            names.join(", "),
            res_types.join(", ")
        );
        f.push_str("  }\n");
        Ok(f)
    }

    /// The symbol of the private function of computation `id`, emitting it on first use.
    fn callee(&mut self, id: i64) -> Result<String, ImportError> {
        if let Some(n) = self.func_names.get(&id) {
            return Ok(n.clone());
        }
        let c = self.comp(id)?;
        let name = format!("{}_{}", symbol(&c.name), id);
        self.func_names.insert(id, name.clone());
        let f = self.function(c, &name, true)?;
        self.funcs.push(f);
        Ok(name)
    }

    /// Emits the instructions of `c` (parameters bound to `params`) into `out`; returns the
    /// root's value.
    fn body(
        &mut self,
        c: &HloComputationProto,
        params: Vec<Val>,
        out: &mut String,
        depth: usize,
    ) -> Result<Val, ImportError> {
        let mut vals: FxHashMap<i64, Val> = FxHashMap::default();
        let mut shapes: FxHashMap<i64, &ShapeProto> = FxHashMap::default();
        for i in &c.instructions {
            if let Some(s) = &i.shape {
                shapes.insert(i.id, s);
            }
            let operand_shapes: Vec<&ShapeProto> = i
                .operand_ids
                .iter()
                .filter_map(|o| shapes.get(o).copied())
                .collect();
            let v = if i.opcode == "parameter" {
                params
                    .get(i.parameter_number as usize)
                    .cloned()
                    .ok_or_else(|| ImportError::malformed("parameter out of range"))
            } else {
                self.instruction(i, &vals, &operand_shapes, out, depth)
            };
            let v = v.map_err(|e| ImportError::At {
                computation: c.name.clone(),
                name: i.name.clone(),
                opcode: i.opcode.clone(),
                source: Box::new(e),
            })?;
            vals.insert(i.id, v);
        }
        vals.remove(&c.root_id).ok_or_else(|| {
            ImportError::malformed(format!("computation {} has no root instruction", c.name))
        })
    }

    /// Computation `id` as a region whose block arguments are its parameters' leaves.
    fn region(&mut self, id: i64, depth: usize) -> Result<String, ImportError> {
        let c = self.comp(id)?;
        let (args, params) = self.block_args(c)?;
        let arg_text: Vec<String> = args.iter().map(|(n, t)| format!("{n}: {t}")).collect();
        let mut r = format!("{{\n{}^bb0({}):\n", pad(depth), arg_text.join(", "));
        self.region_body(c, params, &mut r, depth + 1)?;
        let _ = write!(r, "{}}}", pad(depth));
        Ok(r)
    }

    /// Computation `id` as a region without arguments, its parameters bound to `params`
    /// (values of the enclosing scope, as `if` / `case` branches capture them).
    fn capturing_region(
        &mut self,
        id: i64,
        params: Vec<Val>,
        depth: usize,
    ) -> Result<String, ImportError> {
        let c = self.comp(id)?;
        let mut r = String::from("{\n");
        self.region_body(c, params, &mut r, depth + 1)?;
        let _ = write!(r, "{}}}", pad(depth));
        Ok(r)
    }

    /// The body of a region and its `stablehlo.return` of the root's leaves.
    fn region_body(
        &mut self,
        c: &HloComputationProto,
        params: Vec<Val>,
        out: &mut String,
        depth: usize,
    ) -> Result<(), ImportError> {
        let root = self.body(c, params, out, depth)?.leaves();
        let names: Vec<&str> = root.iter().map(|r| r.0.as_str()).collect();
        let types: Vec<String> = root.iter().map(|r| r.1.clone()).collect();
        let _ = writeln!(
            out,
            "{}\"stablehlo.return\"({}) : ({}) -> ()",
            pad(depth),
            names.join(", "),
            types.join(", ")
        );
        Ok(())
    }
}

/// The shape of an instruction.
fn shape_of(i: &HloInstructionProto) -> Result<&ShapeProto, ImportError> {
    i.shape
        .as_ref()
        .ok_or_else(|| ImportError::malformed(format!("{} has no shape", i.name)))
}
