//! `neuronc-rs explain FILE [--json] [--recompute-for-contraction[=WHEN]]`: the NeuronCore
//! plan of the entry function after the default float-semantics rewrite (as `compile`
//! without flags) and the generic -O2 clean-up: each kernel (ops, layout, bytes) and every
//! refused fusion with the rule that refused it. `--json` prints one object with the
//! summary metrics (`kernels`, `hbm_bytes`, `hbm_bytes_unfused`, `transposes`,
//! `transpose_bytes`, `matmul_operand_bytes`) and the details. Both forms say what the
//! `recompute-for-contraction` policy (`crate::plan`) chose and the other plan's
//! transposes (`recompute`: mode, applied, alternative; `recompute_alternative`: the plan
//! with the pass when it was not applied, else `null`), so the trade-off is visible
//! without a second run. Ops are named `kind@line:col` after where they
//! start in FILE (the whole file's lines under `--split-input-file`), or `kind#id` when a
//! pass created them.

use clap::Args;
use codespan_reporting::files::{Files, SimpleFile};
use neuronc_ir::{Module, OpId};
use neuronc_passes::neuron::explain::{op_name, Explanation};
use serde_json::json;

use super::{input, Command, Ctx, Status};
use crate::build::{cost_json, plan_entry, recompute_json, BuildOptions, Planned};
use crate::error::Error;
use crate::plan::{Recompute, RecomputeChoice, TransposeCost, MAX_SLOWDOWN, TRANSPOSE_BUDGET};
use crate::source::Unit;

#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// Input file (`-` reads stdin).
    pub file: String,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Plan as `compile --recompute-for-contraction=WHEN` does (`auto` by default; the
    /// bare flag means `on`).
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto", num_args = 0..=1,
          require_equals = true, default_missing_value = "on")]
    pub recompute_for_contraction: Recompute,
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
            let Planned {
                func,
                plan,
                recompute,
                ..
            } = plan_entry(&mut module, &opts, true)?;
            let file = SimpleFile::new("", unit.source.text.as_str());
            let name = |m: &Module, op: OpId| located_name(&file, unit, m, op);
            let e = Explanation::with_names(&module, &func.name, &plan, &name);
            Ok(if json {
                to_json(&e, &recompute)
            } else {
                with_recompute_line(e.to_text(), &recompute)
            })
        })?;
        input::write_output(ctx, None, &text)?;
        Ok(status)
    }
}

/// The line after `transposes:` that says what `recompute-for-contraction` did or would
/// do; `None` when it was not applied and would change nothing.
fn recompute_line(c: &RecomputeChoice) -> Option<String> {
    let share = |a: &TransposeCost| {
        format!(
            "{} transposes moving {} bytes ({:.2}% of {} matmul operand bytes)",
            a.transposes,
            a.transpose_bytes,
            100.0 * a.share(),
            a.matmul_operand_bytes
        )
    };
    let budget = 100.0 * TRANSPOSE_BUDGET;
    let allowance = 100.0 * MAX_SLOWDOWN;
    let predicted = match (c.predicted_s, c.slowdown()) {
        (Some((without, with)), Some(slow)) => format!(
            "predicted time {:.3} -> {:.3} ms ({:+.1}%)",
            without * 1e3,
            with * 1e3,
            100.0 * slow
        ),
        _ => String::new(),
    };
    let alt = c.alternative.as_ref();
    Some(match (c.applied, c.mode) {
        (true, Recompute::Auto) => format!(
            "recompute-for-contraction applied (auto): without it {}, over the {budget:.0}% \
             budget; {predicted}, within the {allowance:.0}% allowance; matmul operands \
             reduced along their contracted axis (attention probabilities) are recomputed \
             with that axis on the partitions instead of transposed\n",
            share(alt?)
        ),
        (true, _) => "recompute-for-contraction applied (on)\n".to_string(),
        (false, mode) => {
            let why = match (mode, c.over_budget) {
                (Recompute::Auto, false) => format!(
                    " (auto leaves it off: the plan above is within the {budget:.0}% budget)"
                ),
                (Recompute::Auto, true) if c.predicted_s.is_some() => format!(
                    " (auto leaves it off: {predicted}, more than the {allowance:.0}% \
                     allowance for meeting the {budget:.0}% budget)"
                ),
                (Recompute::Auto, true) => format!(
                    " (auto leaves it off: still over the {budget:.0}% budget, so not worth \
                     its Vector/Scalar work)"
                ),
                _ => String::new(),
            };
            format!(
                "with --recompute-for-contraction: {}{why}; matmul operands reduced along their \
                 contracted axis (attention probabilities) are recomputed instead of \
                 transposed, for more Vector/Scalar work\n",
                share(alt?)
            )
        }
    })
}

/// `text` with [`recompute_line`] after its `transposes:` line.
fn with_recompute_line(text: String, c: &RecomputeChoice) -> String {
    let Some(line) = recompute_line(c) else {
        return text;
    };
    let at = text
        .find("\ntransposes:")
        .and_then(|i| text[i + 1..].find('\n').map(|j| i + j + 2))
        .unwrap_or(text.len());
    format!("{}{}{}", &text[..at], line, &text[at..])
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

fn to_json(e: &Explanation, c: &RecomputeChoice) -> String {
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
        "recompute": recompute_json(c),
        // The plan with the pass when it was not applied (kept for earlier readers).
        "recompute_alternative": c.alternative.as_ref().filter(|_| !c.applied).map(cost_json),
    });
    format!("{v}\n")
}
