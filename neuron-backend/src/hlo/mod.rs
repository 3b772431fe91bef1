//! XLA HLO emission: a [`Module`] as a serialized `xla.HloModuleProto` (what
//! `neuronx-cc compile --framework XLA` reads) and as HLO text.
//!
//! Owns: the public API [`emit_hlo_module`], [`HloOptions`], [`HloArtifacts`], [`HloError`],
//! and the assembly of the entry computation with the torch-neuronx conventions
//! (`../shared/reference/neuron-facts.md` §3.2, §3.4): per-parameter `neff_input_name`
//! and module-level `neff_input_names` / root `neff_output_names` frontend attributes, a
//! tuple root, `input_output_alias` from `tf.aliasing_output` argument attributes (and
//! [`HloOptions::aliases`]), buffer donors from `jax.buffer_donor`.
//! Submodules: `proto` (prost messages), `shape` (types and literals), `emit`
//! (computations and ids), `lower` / `regions` / `chlo` / `special` / `approx_topk` (op
//! lowering), `ffi` (typed-FFI custom calls: attribute text and layout constraints),
//! `text` (HLO text printer).
//! Invariants: output is a pure function of (module, options): same input, byte-identical
//! bytes and text; every array shape is static and row-major; the entry root is a tuple.

mod approx_topk;
mod chlo;
mod complex_inf;
mod emit;
mod ffi;
mod lower;
pub mod proto;
mod regions;
mod shape;
mod special;
mod text;

use emit::{sanitize, Comp, Emitter};
use neuronc_ir::{Attr, Module};
use prost::Message;
use proto::{
    AliasEntryProto, AliasKind, BufferDonorEntryProto, FrontendAttributes, HloBufferDonorProto,
    HloInputOutputAliasProto, HloModuleProto,
};
use std::collections::BTreeMap;

pub use text::print_hlo_text;

/// Options of [`emit_hlo_module`].
#[derive(Clone, Debug)]
pub struct HloOptions {
    /// Entry function name; default: the module's entry (`main`, else the only public one).
    pub entry: Option<String>,
    /// HLO module name; default: the MLIR module name, else `neuronc_module`.
    pub module_name: Option<String>,
    /// Emit `erf` as neuronx-cc's `AwsNeuronErf` custom call (neuron-facts §3.4). XLA
    /// itself cannot execute it, so the oracle test runs with this off.
    pub neuron_custom_calls: bool,
    /// Attach the torch-neuronx `neff_input_name(s)` / `neff_output_names` attributes.
    pub neff_names: bool,
    /// Alias kind for `input_output_alias` entries: must-alias (torch-neuronx) or may-alias.
    pub must_alias: bool,
    /// Extra (output index, parameter number) aliases, e.g. updated parameters found by
    /// the compiler.
    pub aliases: Vec<(usize, usize)>,
    /// Attach `OpMetadata` (op name and source location) to instructions.
    pub metadata: bool,
}

impl Default for HloOptions {
    fn default() -> Self {
        HloOptions {
            entry: None,
            module_name: None,
            neuron_custom_calls: false,
            neff_names: true,
            must_alias: true,
            aliases: Vec::new(),
            metadata: false,
        }
    }
}

/// What [`emit_hlo_module`] produces.
#[derive(Clone, Debug)]
pub struct HloArtifacts {
    pub proto: HloModuleProto,
    /// `proto` serialized (the `model.hlo.pb` file).
    pub bytes: Vec<u8>,
    /// The same module as HLO text (the `model.hlo.txt` file).
    pub text: String,
}

/// Why a module could not be emitted.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum HloError {
    /// The module uses something HLO (or this emitter) cannot express.
    #[error("cannot emit HLO: {0}")]
    Unsupported(String),
    /// The module breaks an invariant the verifier should have caught.
    #[error("malformed module: {0}")]
    Malformed(String),
    /// No entry function.
    #[error("no entry function{0}")]
    NoEntry(String),
}

/// Emits `module` as an `HloModuleProto` (bytes and message) and HLO text.
pub fn emit_hlo_module(module: &Module, opts: &HloOptions) -> Result<HloArtifacts, HloError> {
    let proto = build_module(module, opts)?;
    let bytes = proto.encode_to_vec();
    let text = print_hlo_text(&proto);
    Ok(HloArtifacts { proto, bytes, text })
}

fn build_module(module: &Module, opts: &HloOptions) -> Result<HloModuleProto, HloError> {
    let entry = match &opts.entry {
        Some(n) => module
            .func(n)
            .ok_or_else(|| HloError::NoEntry(format!(" named @{n}")))?,
        None => module
            .entry()
            .ok_or_else(|| HloError::NoEntry(String::new()))?,
    };
    let mut em = Emitter::new(module, opts);
    let mut c = Comp::new(sanitize(&entry.name));
    let args = module.region(entry.body).args.clone();
    let mut params = Vec::new();
    for (n, &a) in args.iter().enumerate() {
        let s = em.vshape(a)?;
        let p = em.param(&mut c, s);
        if opts.neff_names {
            let last = c.instrs.len() - 1;
            c.instrs[last].frontend_attributes =
                Some(attrs([("neff_input_name", format!("input{n}"))]));
        }
        c.values.insert(a, p);
        params.push(p);
    }
    let rets = em.lower_body(&mut c, entry.body)?;
    let n_out = rets.len();
    let root = em.tuple(&mut c, rets);
    if opts.neff_names {
        let last = c.instrs.len() - 1;
        c.instrs[last].frontend_attributes =
            Some(attrs([("neff_output_names", names("output", n_out))]));
    }
    let program_params: Vec<_> = params.iter().map(|&p| c.shape(p).clone()).collect();
    let result = c.shape(root).clone();
    let entry_id = em.finish(c, root);
    let computations = std::mem::take(&mut em.done);
    let entry_name = computations
        .last()
        .map(|c| c.name.clone())
        .unwrap_or_default();
    let name = opts
        .module_name
        .clone()
        .or_else(|| module.name.clone())
        .unwrap_or_else(|| "neuronc_module".into());
    let alias = aliases(entry, opts, n_out);
    Ok(HloModuleProto {
        name: sanitize(&name),
        entry_computation_name: entry_name,
        entry_computation_id: entry_id,
        computations,
        host_program_shape: Some(proto::ProgramShapeProto {
            parameter_names: (0..program_params.len())
                .map(|i| format!("input{i}"))
                .collect(),
            parameters: program_params,
            result: Some(result),
        }),
        id: 0,
        buffer_donor: donors(entry, alias.as_ref()),
        input_output_alias: alias,
        is_dynamic: false,
        frontend_attributes: opts.neff_names.then(|| {
            attrs([
                ("neff_input_names", names("input", args.len())),
                ("neff_output_names", names("output", n_out)),
            ])
        }),
    })
}

fn names(prefix: &str, n: usize) -> String {
    (0..n)
        .map(|i| format!("{prefix}{i}"))
        .collect::<Vec<_>>()
        .join(",")
}

fn attrs<const N: usize>(kv: [(&str, String); N]) -> FrontendAttributes {
    FrontendAttributes {
        map: kv
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect::<BTreeMap<_, _>>(),
    }
}

/// Aliases from `tf.aliasing_output` argument attributes and the options, sorted by output.
fn aliases(
    entry: &neuronc_ir::Func,
    opts: &HloOptions,
    n_out: usize,
) -> Option<HloInputOutputAliasProto> {
    let mut pairs: BTreeMap<usize, usize> = opts.aliases.iter().copied().collect();
    for (param, a) in entry.arg_attrs.iter().enumerate() {
        if let Some(Attr::Int(out, _)) = a.get("tf.aliasing_output") {
            pairs.insert(*out as usize, param);
        }
    }
    let kind = if opts.must_alias {
        AliasKind::MustAlias
    } else {
        AliasKind::MayAlias
    };
    let entries: Vec<_> = pairs
        .into_iter()
        .filter(|&(out, _)| out < n_out)
        .map(|(out, param)| AliasEntryProto {
            output_shape_index: vec![out as i64],
            parameter_number: param as i64,
            parameter_shape_index: Vec::new(),
            kind: kind as i32,
        })
        .collect();
    (!entries.is_empty()).then_some(HloInputOutputAliasProto { entries })
}

/// Buffer donors from `jax.buffer_donor = true` argument attributes (parameters that are
/// already aliased to an output are not listed again).
fn donors(
    entry: &neuronc_ir::Func,
    alias: Option<&HloInputOutputAliasProto>,
) -> Option<HloBufferDonorProto> {
    let aliased: Vec<i64> = alias
        .map(|a| a.entries.iter().map(|e| e.parameter_number).collect())
        .unwrap_or_default();
    let entries: Vec<_> = entry
        .arg_attrs
        .iter()
        .enumerate()
        .filter(|(p, a)| {
            matches!(a.get("jax.buffer_donor"), Some(Attr::Bool(true)))
                && !aliased.contains(&(*p as i64))
        })
        .map(|(p, _)| BufferDonorEntryProto {
            parameter_number: p as i64,
            parameter_shape_index: Vec::new(),
        })
        .collect();
    (!entries.is_empty()).then_some(HloBufferDonorProto { entries })
}
