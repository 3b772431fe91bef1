//! The cost model of one NeuronCore: per-instruction busy times and the ideal
//! (tiling-independent) work used by the roofline.
//!
//! Owns: [`CoreModel`] — the numbers the engine back end needs, each citing
//! `/work/shared/reference/neuron-facts.md` (“facts”) — and the cost formulas.
//! `crate::target` is still a placeholder, so the numbers are defined here.
//! Invariants: every cost is finite and non-negative; `ideal <= cost` for every formula, so
//! the roofline never exceeds the simulated time.

use crate::engine::isa::Engine;

/// Target generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generation {
    /// NeuronCore-v2 (`trn1`, `inf2`).
    V2,
    /// NeuronCore-v3 (`trn2`).
    V3,
}

/// Numbers describing one NeuronCore.
#[derive(Clone, Debug, PartialEq)]
pub struct CoreModel {
    pub generation: Generation,
    /// Target name (`trn1`, `inf2`, `trn2`).
    pub name: &'static str,
    /// Clocks in Hz: Tensor, Vector, Scalar, GpSimd (facts §1.2; v3: §1.6).
    pub tensor_hz: f64,
    pub vector_hz: f64,
    pub scalar_hz: f64,
    pub gpsimd_hz: f64,
    /// SBUF partitions (facts §1.3).
    pub partitions: u32,
    /// SBUF bytes per partition: 192 KiB on v2, 224 KiB on v3 (facts §1.3, §1.6).
    pub sbuf_partition_bytes: u64,
    /// PSUM banks per partition and bytes per bank: 8 × 2 KiB (facts §1.3).
    pub psum_banks: u8,
    pub psum_bank_bytes: u64,
    /// Stationary free size limit (PE columns) and moving free size limit (facts §1.4).
    pub stationary_max: u32,
    pub moving_max: u32,
    /// Minimum MultiplyMoving initiation interval in cycles: `max(N, 64)` (facts §1.4).
    pub mm_min_ii: f64,
    /// FP32 matmul slowdown (facts §1.4: about 4×).
    pub fp32_matmul_factor: f64,
    /// LoadStationary is up to 4× faster than an MM of the same free size (facts §1.4).
    pub ls_speedup: f64,
    /// Fixed overhead per SBUF/PSUM access request, cycles (facts §1.3: about 60).
    pub access_overhead_cycles: f64,
    /// Minimum initiation interval of ScalarE/VectorE, cycles (facts §1.3: about 64).
    pub min_ii_cycles: f64,
    /// HBM bandwidth available to one core, bytes/s: 820 GB/s per Trn1 chip shared by its
    /// 2 cores (facts §1.1); 2.9 TB/s shared by 8 cores on Trn2 (facts §1.6).
    pub hbm_core_bw: f64,
    /// Bandwidth of one DMA queue, bytes/s: 27.2 GB/s per DMA engine (facts §1.3 [U]),
    /// capped so that 16 queues do not exceed `hbm_core_bw`.
    pub dma_queue_bw: f64,
    /// Fixed cost of one DMA transfer, seconds: ~600 ns per DMA instruction (facts §1.6,
    /// the hardware-DGE figure; used for v2 as well [U]).
    pub dma_fixed_s: f64,
    /// Bytes per partition at which DMA reaches full efficiency (facts §1.3: 4 KiB or more
    /// nearly saturates).
    pub dma_full_eff_bytes: f64,
    /// v2 only: Vector and GpSimd share the SBUF port, Vector and Scalar the PSUM port
    /// (facts §1.3). Lifted on v3.
    pub shared_ports: bool,
}

impl CoreModel {
    /// NeuronCore-v2 as in a Trn1 chip.
    pub fn trn1() -> Self {
        let hbm_core_bw = 820e9 / 2.0;
        CoreModel {
            generation: Generation::V2,
            name: "trn1",
            tensor_hz: 2.8e9,
            vector_hz: 1.12e9,
            scalar_hz: 1.4e9,
            gpsimd_hz: 1.4e9,
            partitions: 128,
            sbuf_partition_bytes: 192 * 1024,
            psum_banks: 8,
            psum_bank_bytes: 2048,
            stationary_max: 128,
            moving_max: 512,
            mm_min_ii: 64.0,
            fp32_matmul_factor: 4.0,
            ls_speedup: 4.0,
            access_overhead_cycles: 60.0,
            min_ii_cycles: 64.0,
            hbm_core_bw,
            dma_queue_bw: f64::min(27.2e9, hbm_core_bw / 16.0),
            dma_fixed_s: 600e-9,
            dma_full_eff_bytes: 4096.0,
            shared_ports: true,
        }
    }

    /// Inferentia2 uses the same NeuronCore-v2 (facts §1.1).
    pub fn inf2() -> Self {
        CoreModel {
            name: "inf2",
            ..Self::trn1()
        }
    }

    /// NeuronCore-v3 (Trn2): lower clocks, 224 KiB SBUF partitions, 2.9 TB/s per 8 cores,
    /// no shared-port limits (facts §1.6).
    pub fn trn2() -> Self {
        let hbm_core_bw = 2.9e12 / 8.0;
        CoreModel {
            generation: Generation::V3,
            name: "trn2",
            tensor_hz: 2.4e9,
            vector_hz: 0.96e9,
            scalar_hz: 1.2e9,
            gpsimd_hz: 1.2e9,
            sbuf_partition_bytes: 224 * 1024,
            hbm_core_bw,
            dma_queue_bw: f64::min(27.2e9, hbm_core_bw / 16.0),
            shared_ports: false,
            ..Self::trn1()
        }
    }

    /// Looks a target up by its `--target` name.
    pub fn by_name(name: &str) -> Option<Self> {
        match name {
            "trn1" | "trn1n" => Some(Self::trn1()),
            "inf2" => Some(Self::inf2()),
            "trn2" => Some(Self::trn2()),
            _ => None,
        }
    }

    /// Clock of a compute engine.
    pub fn hz(&self, e: Engine) -> f64 {
        match e {
            Engine::Tensor => self.tensor_hz,
            Engine::Vector => self.vector_hz,
            Engine::Scalar => self.scalar_hz,
            Engine::GpSimd | Engine::Dma(_) => self.gpsimd_hz,
        }
    }

    /// SBUF bytes of the whole core.
    pub fn sbuf_bytes(&self) -> u64 {
        self.sbuf_partition_bytes * self.partitions as u64
    }

    fn matmul_factor(&self, fp32: bool) -> f64 {
        if fp32 {
            self.fp32_matmul_factor
        } else {
            1.0
        }
    }

    /// One MultiplyMoving with moving free size `n`: `max(n, 64)` cycles (×4 for FP32).
    pub fn mm_s(&self, n: u32, fp32: bool) -> f64 {
        f64::max(n as f64, self.mm_min_ii) * self.matmul_factor(fp32) / self.tensor_hz
    }

    /// One LoadStationary of free size `m`: a quarter of an MM of the same size.
    pub fn ls_s(&self, m: u32, fp32: bool) -> f64 {
        self.mm_s(m, fp32) / self.ls_speedup
    }

    /// Ideal TensorE time of `k × m × n` MACs on the full 128×128 array.
    pub fn matmul_ideal_s(&self, macs: f64, fp32: bool) -> f64 {
        let per_cycle = (self.stationary_max as f64) * (self.partitions as f64);
        macs / per_cycle * self.matmul_factor(fp32) / self.tensor_hz
    }

    /// Cycles per free element of an elementwise/reduce instruction reading `inputs`
    /// tensors on engine `e` (facts §1.5: DVE ≈ N for one input, 2N for two; ACT ≈ N;
    /// GpSimd has no published rule — 2× DVE assumed [U]).
    fn per_elem_cycles(&self, e: Engine, inputs: u8) -> f64 {
        let inputs = inputs.max(1) as f64;
        match e {
            Engine::Vector => inputs,
            Engine::Scalar => 1.0,
            Engine::GpSimd => 2.0 * inputs,
            Engine::Tensor | Engine::Dma(_) => 1.0,
        }
    }

    /// One ScalarE/VectorE/GpSimd instruction on a tile with `n` free elements:
    /// `max(work, 64) + 60` cycles (facts §1.3 minimum II and access overhead).
    pub fn ew_s(&self, e: Engine, n: u32, inputs: u8) -> f64 {
        let work = n as f64 * self.per_elem_cycles(e, inputs);
        (f64::max(work, self.min_ii_cycles) + self.access_overhead_cycles) / self.hz(e)
    }

    /// Ideal time of the same work (no floor, no overhead).
    pub fn ew_ideal_s(&self, e: Engine, n: u32, inputs: u8) -> f64 {
        n as f64 * self.per_elem_cycles(e, inputs) / self.hz(e)
    }

    /// One DMA transfer of `bytes_per_partition × partitions` bytes on one queue.
    /// Efficiency falls linearly below 4 KiB per partition down to 50% [U] (facts §1.3).
    pub fn dma_s(&self, bytes_per_partition: u64, partitions: u32) -> f64 {
        let bytes = (bytes_per_partition * partitions as u64) as f64;
        let eff = f64::min(
            1.0,
            0.5 + bytes_per_partition as f64 / (2.0 * self.dma_full_eff_bytes),
        );
        self.dma_fixed_s + bytes / (self.dma_queue_bw * eff)
    }

    /// Ideal DMA time of the same bytes at the core's HBM bandwidth.
    pub fn dma_ideal_s(&self, bytes: u64) -> f64 {
        bytes as f64 / self.hbm_core_bw
    }
}
