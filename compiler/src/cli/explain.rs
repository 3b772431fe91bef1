//! `neuronc-rs explain FILE [--json] [--recompute-for-contraction]`: the NeuronCore plan of the entry function after the
//! default float-semantics rewrite (as `compile` without flags) and the generic -O2
//! clean-up: each kernel (ops, layout, bytes) and every refused fusion with the
//! rule that refused it. `--json` prints one object with the summary metrics
//! (`kernels`, `hbm_bytes`, `hbm_bytes_unfused`, `transposes`, `transpose_bytes`,
//! `matmul_operand_bytes`) and the details. When the plan has transposes that
//! `recompute-for-contraction` would remove, both forms also give that plan's transposes
//! (`recompute_alternative`, else `null`), so the trade-off is visible without a second run. Ops are named `kind@line:col` after where they
//! start in FILE (the whole file's lines under `--split-input-file`), or `kind#id` when a
//! pass created them.

use clap::Args;
use codespan_reporting::files::{Files, SimpleFile};
use neuronc_ir::{Module, OpId};
use neuronc_passes::neuron::explain::{op_name, Explanation};
use neuronc_passes::neuron::{fusion::FusionConfig, plan_function};
use neuronc_passes::{run_pipeline, PassContext, Pipeline};
use serde_json::json;

use super::{input, Command, Ctx, Status};
use crate::build::{plan_entry, BuildOptions, RECOMPUTE};
use crate::error::Error;
use crate::source::Unit;

#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// Input file (`-` reads stdin).
    pub file: String,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Plan as `compile --recompute-for-contraction` does.
    #[arg(long)]
    pub recompute_for_contraction: bool,
}

impl Command for ExplainArgs {
    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Status, Error> {
        let json = self.json;
        let (text, status) = input::each_unit(ctx, &self.file, |session, unit| {
            let mut module = session.load(unit)?;
            let opts = BuildOptions {
                recompute_for_contraction: self.recompute_for_contraction,
                ..BuildOptions::default()
            };
            let (func, plan) = plan_entry(&mut module, &opts)?;
            let file = SimpleFile::new("", unit.source.text.as_str());
            let name = |m: &Module, op: OpId| located_name(&file, unit, m, op);
            let e = Explanation::with_names(&module, &func.name, &plan, &name);
            let alt = match self.recompute_for_contraction || e.transposes == 0 {
                true => None,
                false => recompute_alternative(&module, &func.name)?,
            };
            Ok(if json {
                to_json(&e, alt.as_ref())
            } else {
                with_alternative(e.to_text(), alt.as_ref())
            })
        })?;
        input::write_output(ctx, None, &text)?;
        Ok(status)
    }
}

/// The transposes of the plan `--recompute-for-contraction` would make.
struct Alternative {
    transposes: usize,
    transpose_bytes: u64,
    matmul_operand_bytes: u64,
}

impl Alternative {
    fn to_text(&self) -> String {
        format!(
            "with --recompute-for-contraction: {} transposes moving {} bytes ({:.2}% of {} matmul \
             operand bytes); matmul operands reduced along their contracted axis (attention \
             probabilities) are recomputed instead of transposed, for more Vector/Scalar work\n",
            self.transposes,
            self.transpose_bytes,
            100.0 * self.transpose_bytes as f64 / self.matmul_operand_bytes.max(1) as f64,
            self.matmul_operand_bytes
        )
    }
}

/// `text` with `alt`'s line after its `transposes:` line.
fn with_alternative(text: String, alt: Option<&Alternative>) -> String {
    let Some(a) = alt else { return text };
    let at = text
        .find("\ntransposes:")
        .and_then(|i| text[i + 1..].find('\n').map(|j| i + j + 2))
        .unwrap_or(text.len());
    format!("{}{}{}", &text[..at], a.to_text(), &text[at..])
}

/// Plans function `func` of the cleaned-up `module` again after `recompute-for-contraction`;
/// `None` when the pass changes nothing.
fn recompute_alternative(module: &Module, func: &str) -> Result<Option<Alternative>, Error> {
    let mut m = module.clone();
    let pipeline = Pipeline::parse(&RECOMPUTE[1..])?;
    let report = run_pipeline(&mut m, &pipeline, &mut PassContext::new())?;
    let Some(f) = m.func(func).cloned().filter(|_| report.rewrites > 0) else {
        return Ok(None);
    };
    let plan = plan_function(&m, &f, &FusionConfig::default());
    Ok(Some(Alternative {
        transposes: plan.layout.transpose_count(),
        transpose_bytes: plan.layout.transpose_bytes(),
        matmul_operand_bytes: plan.matmul_operand_bytes(&m),
    }))
}

/// `kind@line:col` of an op parsed from `unit` (1-based, columns in characters), else
/// [`op_name`]'s fallback.
fn located_name(file: &SimpleFile<&str, &str>, unit: &Unit, m: &Module, op: OpId) -> String {
    let o = m.op(op);
    if o.span.end == 0 {
        return op_name(m, op);
    }
    match file.location((), unit.range.start + o.span.start as usize) {
        Ok(at) => format!(
            "{}@{}:{}",
            o.kind.short_name(),
            at.line_number,
            at.column_number
        ),
        Err(_) => op_name(m, op),
    }
}

fn to_json(e: &Explanation, alt: Option<&Alternative>) -> String {
    let kernels: Vec<_> = e
        .kernels
        .iter()
        .map(|k| {
            json!({
                "id": k.id, "kind": k.kind, "ops": k.ops, "duplicated": k.duplicated,
                "output_partition_dims": k.output_partition_dims,
                "input_bytes": k.input_bytes, "output_bytes": k.output_bytes, "hbm_bytes": k.hbm_bytes,
            })
        })
        .collect();
    let rejections: Vec<_> = e
        .rejections
        .iter()
        .map(|r| json!({"producer": r.producer, "kernel": r.kernel, "rule": r.rule, "detail": r.detail}))
        .collect();
    let v = json!({
        "function": e.function,
        "kernels": e.kernels.len(),
        "hbm_bytes": e.hbm_bytes,
        "hbm_bytes_unfused": e.hbm_bytes_unfused,
        "transposes": e.transposes,
        "transpose_bytes": e.transpose_bytes,
        "matmul_operand_bytes": e.matmul_operand_bytes,
        "cross_partition_reductions": e.cross_partition_reductions,
        "kernel_list": kernels,
        "rejections": rejections,
        "recompute_alternative": alt.map(|a| json!({
            "transposes": a.transposes,
            "transpose_bytes": a.transpose_bytes,
            "matmul_operand_bytes": a.matmul_operand_bytes,
        })),
    });
    format!("{v}\n")
}
