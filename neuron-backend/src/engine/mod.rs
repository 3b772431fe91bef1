//! The NeuronCore engine back end: lowering of fused, laid-out kernels to the instruction
//! streams of the four compute engines and the DMA queues, on-chip memory planning, list
//! scheduling, time simulation, and the `program.nir` / `timeline.json` / report outputs.
//!
//! Pipeline ([`compile_function`]): the lead's plan (`neuronc_passes::neuron::plan_function`)
//! → [`lower::lower`] (tiling, engine choice, SBUF/PSUM allocation with spilling)
//! → [`schedule::schedule`] (list scheduler = time simulator) → [`Report`]; done once per
//! SBUF placement ([`memory::Placement`]), keeping the faster program.
//!
//! * [`isa`] — engines, opcodes, instruction records, buffers.
//! * [`cost`] — the NeuronCore cost model ([`CoreModel`]), every number citing
//!   `neuron-facts.md`.
//! * [`classify`] — op → engine work table.
//! * [`combine`] — instruction combining: a producer merged into its single consumer
//!   when one instruction computes both (`activation`, `tensor_scalar`,
//!   `scalar_tensor_tensor`).
//! * `accumulate` — free-axis add-reduces that the ScalarE instruction producing their
//!   operand accumulates (softmax's sum of exponentials).
//! * `operands` — which operands of a kernel's elementwise ops are `[P, 1]` scalars to
//!   its instructions and which are full tiles (broadcasts varying along the free axis).
//! * `shift` — a shift along the free axis of a matmul's result (the recomputed
//!   attention's `- max`) applied by the matmul as extra contraction rows.
//! * [`tiling`] — tiles, matmul dimensions, storage roots.
//! * [`memory`] — SBUF allocator (next-fit or oldest-tenant-first placement), PSUM banks.
//! * `narrow` — which FP32 values auto-cast lets us hold as BF16.
//! * `hoist` — record-invariant work of a kernel (a mask broadcast over the heads a
//!   kernel's records walk) computed, and relaid, once.
//! * `balance` — windowed look-ahead for the choice among flexible engines.
//! * `kernel_order` — the order kernels are lowered in.
//! * [`lower`], `emit_ops`, `kernel_io`, `emit_mm` — kernel lowering (`kernel_io`: SBUF
//!   planning and input loads of one kernel; `row_order`: the rows of a matmul's
//!   stationary operand each record waits for).
//! * [`schedule`] — list scheduling and simulated time.
//! * [`emit`] — `program.nir` text, Chrome-trace timeline, [`Report`].
//!
//! Invariants: everything is deterministic (no hash-order iteration reaches the output);
//! `predicted_time_s >= roofline_time_s`; the schedule respects every dependency and
//! never overlaps two instructions of one engine.

mod accumulate;
mod balance;
pub mod classify;
pub mod combine;
pub mod cost;
pub mod emit;
mod emit_mm;
mod emit_ops;
mod hoist;
pub mod isa;
mod kernel_io;
mod kernel_order;
pub mod lower;
pub mod memory;
mod narrow;
pub mod opaque;
mod operands;
mod row_order;
pub mod schedule;
mod shift;
pub mod tiling;

pub use cost::CoreModel;
pub use emit::{program_nir, timeline_json, Report};
pub use lower::{AutoCast, EngineError, EngineOptions, Lowered};
pub use memory::Placement;
pub use schedule::Schedule;

use neuronc_ir::{Func, Module};
use neuronc_passes::neuron::NeuronPlan;

/// A compiled and simulated function.
#[derive(Clone, Debug)]
pub struct EngineOutput {
    pub lowered: Lowered,
    pub schedule: Schedule,
    pub report: Report,
    pub target: &'static str,
}

impl EngineOutput {
    /// The `program.nir` text.
    pub fn program_nir(&self) -> String {
        emit::program_nir(&self.lowered, &self.schedule, self.target)
    }
    /// The `timeline.json` text (Chrome trace format).
    pub fn timeline_json(&self) -> String {
        emit::timeline_json(&self.lowered, &self.schedule)
    }
}

/// Lowers, schedules and simulates `func` under `plan`, once per SBUF [`Placement`], and
/// keeps the faster program (ties: next fit). No placement is better everywhere: reusing
/// the address whose tenants are oldest keeps independent kernels from waiting for each
/// other (BERT-base training step 23.32 -> 22.60 ms), while a DMA-bound chain of layers
/// does better with next fit's ring order (BERT-base inference 1.27 vs 1.35 ms).
pub fn compile_function(
    m: &Module,
    func: &Func,
    plan: &NeuronPlan,
    opts: &EngineOptions,
) -> Result<EngineOutput, EngineError> {
    // The two compilations are independent: run them side by side.
    let (ring, oldest) = std::thread::scope(|s| {
        let oldest = s.spawn(|| compile_placed(m, func, plan, opts, Placement::OldestFirst));
        let ring = compile_placed(m, func, plan, opts, Placement::NextFit);
        (ring, oldest.join())
    });
    let ring = ring?;
    match oldest {
        Ok(Ok(oldest)) if oldest.schedule.makespan < ring.schedule.makespan => Ok(oldest),
        Ok(_) => Ok(ring),
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// Lowers, schedules and simulates `func` with SBUF placement `placement` only.
pub fn compile_placed(
    m: &Module,
    func: &Func,
    plan: &NeuronPlan,
    opts: &EngineOptions,
    placement: Placement,
) -> Result<EngineOutput, EngineError> {
    let mut lowered = lower::lower(m, func, plan, opts, placement)?;
    let config = schedule::Config {
        shared_ports: opts.model.shared_ports,
        dma_fixed_s: opts.model.dma_fixed_s,
        dma_queue_weight: schedule::Config::DMA_QUEUE_WEIGHT,
    };
    let schedule = schedule::schedule(&lowered.program, config);
    schedule.assign_queues(&mut lowered.program);
    let report = emit::report(&lowered, &schedule, &opts.model);
    Ok(EngineOutput {
        lowered,
        schedule,
        report,
        target: opts.model.name,
    })
}
