//! The `explain` report: every planned kernel (ops, layout, bytes) and every refused fusion
//! candidate with the rule that refused it, plus the summary metrics.
//!
//! Owns: [`Explanation`] (plain data, built from a [`NeuronPlan`]) and its text rendering.
//! The CLI serializes the same data as JSON. Ops are named by the caller's naming function
//! (the CLI: `kind@line:col` in the input file); [`op_name`], the default, names them
//! `kind@offset` after their source byte offset. Ops created by passes have no source
//! position and are named `kind#id`. Both are stable for a given input.
//! Every refused fusion carries its rule's kebab-case name and a sentence saying why, with
//! the numbers the rule compared.

use super::fusion::{self, classify, OpClass, Rule};
use super::graph::value_bytes;
use super::NeuronPlan;
use neuronc_ir::{Module, OpId};
use std::fmt::Write;

/// Summary and per-kernel detail of a plan.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Explanation {
    pub function: String,
    /// Kernels that run (all of them, including single-op ones).
    pub kernels: Vec<KernelInfo>,
    pub rejections: Vec<RejectionInfo>,
    /// Bytes all kernels read from and write to HBM.
    pub hbm_bytes: u64,
    /// The same with every op as its own kernel.
    pub hbm_bytes_unfused: u64,
    /// Relayouts (physical transposes) the layout requires.
    pub transposes: usize,
    pub transpose_bytes: u64,
    /// Bytes read by all matmul/convolution operands.
    pub matmul_operand_bytes: u64,
    pub cross_partition_reductions: usize,
}

/// One kernel.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelInfo {
    pub id: usize,
    /// `matmul`, `reduction`, `loop`, `opaque` or `relabel`.
    pub kind: &'static str,
    pub ops: Vec<String>,
    pub duplicated: Vec<String>,
    /// Partition dimension of each output (`None`: scalar/no partition axis).
    pub output_partition_dims: Vec<Option<u8>>,
    pub input_bytes: u64,
    pub output_bytes: u64,
    pub hbm_bytes: u64,
}

/// A refused fusion.
#[derive(Clone, Debug, PartialEq)]
pub struct RejectionInfo {
    pub producer: String,
    pub kernel: usize,
    /// Kebab-case rule name.
    pub rule: &'static str,
    /// Why the rule refused, as a sentence.
    pub detail: String,
}

/// Short stable name of an op for reports.
pub fn op_name(m: &Module, op: OpId) -> String {
    let o = m.op(op);
    if o.span.end > 0 {
        format!("{}@{}", o.kind.short_name(), o.span.start)
    } else {
        format!("{}#{}", o.kind.short_name(), op.0)
    }
}

/// Names an op for a report (see [`op_name`]).
pub type OpNamer<'a> = dyn Fn(&Module, OpId) -> String + 'a;

impl Explanation {
    /// The plan's report with ops named by [`op_name`].
    pub fn new(m: &Module, function: &str, plan: &NeuronPlan) -> Self {
        Self::with_names(m, function, plan, &op_name)
    }

    /// The plan's report with ops named by `name`.
    pub fn with_names(m: &Module, function: &str, plan: &NeuronPlan, name: &OpNamer) -> Self {
        let kernels = plan
            .fusion
            .kernels
            .iter()
            .enumerate()
            .map(|(id, k)| KernelInfo {
                id,
                kind: kernel_kind(m, &k.ops),
                ops: k.ops.iter().map(|&o| name(m, o)).collect(),
                duplicated: k.duplicated.iter().map(|&o| name(m, o)).collect(),
                output_partition_dims: k.outputs.iter().map(|&v| plan.layout.of(v)).collect(),
                input_bytes: k.inputs.iter().map(|&v| value_bytes(m, v)).sum(),
                output_bytes: k.outputs.iter().map(|&v| value_bytes(m, v)).sum(),
                hbm_bytes: k.hbm_bytes,
            })
            .collect();
        let rejections = plan
            .fusion
            .rejections
            .iter()
            .map(|r| RejectionInfo {
                producer: name(m, r.producer),
                kernel: r.kernel,
                rule: r.rule.name(),
                detail: rule_detail(&r.rule, m.op(r.producer).kind.short_name()),
            })
            .collect();
        Explanation {
            function: function.to_string(),
            kernels,
            rejections,
            hbm_bytes: plan.fusion.hbm_bytes(),
            hbm_bytes_unfused: fusion::unfused_hbm_bytes(m, &plan.graph.order),
            transposes: plan.layout.transpose_count(),
            transpose_bytes: plan.layout.transpose_bytes(),
            matmul_operand_bytes: plan.matmul_operand_bytes(m),
            cross_partition_reductions: plan.layout.cross_partition_reductions.len(),
        }
    }

    /// Human-readable report.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let plural = if self.kernels.len() == 1 { "" } else { "s" };
        let _ = writeln!(
            s,
            "function @{}: {} kernel{plural}",
            self.function,
            self.kernels.len()
        );
        let _ = write!(
            s,
            "hbm bytes: {} fused, {} unfused",
            self.hbm_bytes, self.hbm_bytes_unfused
        );
        let _ = match self.hbm_bytes {
            0 => writeln!(s),
            b => writeln!(
                s,
                " ({:.1}x less)",
                self.hbm_bytes_unfused as f64 / b as f64
            ),
        };
        let _ = writeln!(
            s,
            "transposes: {} moving {} bytes ({:.2}% of {} matmul operand bytes); cross-partition reductions: {}",
            self.transposes,
            self.transpose_bytes,
            100.0 * self.transpose_bytes as f64 / self.matmul_operand_bytes.max(1) as f64,
            self.matmul_operand_bytes,
            self.cross_partition_reductions
        );
        for k in &self.kernels {
            let parts: Vec<String> = k
                .output_partition_dims
                .iter()
                .map(|p| p.map_or("-".to_string(), |d| format!("d{d}")))
                .collect();
            let _ = writeln!(
                s,
                "kernel {} [{}] hbm {} B (in {} B, out {} B) partition [{}]: {}",
                k.id,
                k.kind,
                k.hbm_bytes,
                k.input_bytes,
                k.output_bytes,
                parts.join(", "),
                k.ops.join(", ")
            );
            if !k.duplicated.is_empty() {
                let _ = writeln!(s, "  copies: {}", k.duplicated.join(", "));
            }
            for r in self.rejections.iter().filter(|r| r.kernel == k.id) {
                let _ = writeln!(s, "  not fused: {} ({}): {}", r.producer, r.rule, r.detail);
            }
        }
        s
    }
}

/// Why `rule` refused to fuse a `producer` op into a kernel, as a sentence.
fn rule_detail(rule: &Rule, producer: &str) -> String {
    match rule {
        Rule::OpaqueOp(kind) => format!(
            "{} runs as a kernel of its own (gathers, scatters, sorts, control flow and \
             custom calls are never fused)",
            kind.short_name()
        ),
        Rule::OneMatmulPerKernel => {
            "the kernel already has its TensorE contraction, and a kernel holds one".into()
        }
        Rule::MatmulEpilogueOnly => format!(
            "a kernel with a matmul may only continue with elementwise ops, and fusing \
             {producer} would put other work (a reduction or a loop) after its matmul"
        ),
        Rule::MatmulPrologueNotCheap => format!(
            "only converts, broadcasts and relabels may feed a matmul inside its kernel, \
             so {producer}'s result goes through HBM"
        ),
        Rule::ReduceIntoReduce => {
            "a reduction's result may not feed another reduction in the same kernel".into()
        }
        Rule::MismatchedReductions => {
            "the kernel already reduces rows of another shape; all its reductions share one".into()
        }
        Rule::WouldCreateCycle => format!(
            "a user of {producer} outside the kernel leads back into it, so the two kernels \
             would depend on each other"
        ),
        Rule::CycleCheckLimit { limit } => format!(
            "{producer} has users outside the kernel, and proving that fusing it creates \
             no cycle would search more than {limit} ops and kernels"
        ),
        Rule::SbufCapacity {
            per_partition_bytes,
            budget,
        } => format!(
            "keeping the kernel's reduction rows resident would take {:.1} KiB per SBUF \
             partition, over the budget of {:.1} KiB",
            *per_partition_bytes as f64 / 1024.0,
            *budget as f64 / 1024.0
        ),
        Rule::TooManyInputs { inputs, limit } => format!(
            "the kernel would stream {inputs} distinct inputs from HBM, over the limit of {limit}"
        ),
    }
}

fn kernel_kind(m: &Module, ops: &[OpId]) -> &'static str {
    let max = ops.iter().map(|&o| classify(m, o)).max();
    match max {
        Some(OpClass::Matmul) => "matmul",
        Some(OpClass::Opaque) => "opaque",
        _ if ops.iter().any(|&o| classify(m, o) == OpClass::Reduce) => "reduction",
        Some(OpClass::Loop) => "loop",
        _ => "relabel",
    }
}
