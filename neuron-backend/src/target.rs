//! The NeuronCore hardware model as data: engines, on-chip memories, DMA, HBM, the
//! per-instruction cost formulas and the engine/memory access rules.
//!
//! Owns: [`Target`] (one NeuronCore of a given instance family) and its parts, built by
//! [`Target::by_name`] for `trn1` / `trn1n` / `inf2` (NeuronCore-v2) and `trn2`
//! (NeuronCore-v3).
//! Invariants: every number cites its source: "facts §x.y" is
//! `shared/reference/neuron-facts.md` (which in turn cites the aws-neuron-sdk docs);
//! figures the sources leave uncertain are marked `[U]` with the choice made. Costs are in
//! cycles of the engine that runs the instruction; [`Target::seconds`] converts.

use std::fmt;

/// NeuronCore generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Generation {
    /// NeuronCore-v2: Trn1, Trn1n, Inf2 (facts §1.1, §1.2).
    V2,
    /// NeuronCore-v3: Trn2 (facts §1.6).
    V3,
}

/// The instruction streams of a NeuronCore (facts §1.2): four compute engines and the
/// Sync engine (SP) that mostly triggers DMAs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Engine {
    Tensor,
    Vector,
    Scalar,
    GpSimd,
    Sync,
}

impl Engine {
    pub const ALL: [Engine; 5] = [
        Engine::Tensor,
        Engine::Vector,
        Engine::Scalar,
        Engine::GpSimd,
        Engine::Sync,
    ];
    /// Profiler / NEFF name (facts §1.2 table).
    pub fn short_name(self) -> &'static str {
        match self {
            Engine::Tensor => "PE",
            Engine::Vector => "DVE",
            Engine::Scalar => "ACT",
            Engine::GpSimd => "POOL",
            Engine::Sync => "SP",
        }
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.short_name())
    }
}

/// Where a tensor lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Memory {
    Hbm,
    Sbuf,
    Psum,
}

/// Element width class for the TensorE cost formula (facts §1.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatmulDtype {
    /// BF16 / FP16 / TF32 / cFP8: full rate.
    Fast,
    /// FP32 inputs: about 4x the cycles.
    Fp32,
}

/// SBUF geometry (facts §1.3, §1.6).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sbuf {
    pub partitions: u32,
    pub bytes_per_partition: u64,
}

/// PSUM geometry (facts §1.3, §1.6; same on v2 and v3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Psum {
    pub partitions: u32,
    pub bytes_per_partition: u64,
    pub banks: u32,
}

impl Psum {
    /// Bytes of one bank in one partition (2 KiB = 512 FP32).
    pub fn bank_bytes(&self) -> u64 {
        self.bytes_per_partition / self.banks as u64
    }
}

/// TensorE systolic array limits (facts §1.4, §2.2 TC#1-3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TensorArray {
    /// PE rows = max contraction (partition) size per matmul.
    pub rows: u32,
    /// PE columns = max stationary free size.
    pub cols: u32,
    /// Max moving free size (one PSUM bank of FP32).
    pub moving_free_max: u32,
    /// Minimum initiation interval of MultiplyMoving, in cycles.
    pub min_ii: u64,
    /// FP32 slowdown factor of MultiplyMoving.
    pub fp32_factor: u64,
    /// LoadStationary is up to this many times faster than an MM of the same free size.
    pub ls_speedup: u64,
}

/// DMA resources of one core (facts §1.3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dma {
    pub engines: u32,
    pub queues_per_engine: u32,
    /// Bandwidth of one DMA engine, bytes/s.
    pub bytes_per_s_per_engine: f64,
    /// Per-partition transfer size from which DMA is efficient (2 KiB; 4 KiB saturates).
    pub efficient_bytes_per_partition: u64,
}

/// One NeuronCore of an instance family.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    pub name: &'static str,
    pub generation: Generation,
    /// Clock of each engine in Hz, indexed like [`Engine::ALL`].
    clocks: [f64; 5],
    pub sbuf: Sbuf,
    pub psum: Psum,
    pub tensor: TensorArray,
    pub dma: Dma,
    /// HBM bandwidth available to one core, bytes/s (the chip's bandwidth over its cores).
    pub hbm_bytes_per_s: f64,
    /// HBM capacity per core, bytes.
    pub hbm_bytes: u64,
    /// Vector/Scalar lanes (= partitions) processed per cycle.
    pub lanes: u32,
    /// Fixed cost of one SBUF/PSUM access request, cycles (facts §1.3: ~60).
    pub access_overhead: u64,
    /// Extra VectorE cost of a back-to-back dependent or very small instruction (~100).
    pub vector_dependent_overhead: u64,
    /// Minimum initiation interval of VectorE / ScalarE instructions (~64 cycles).
    pub min_ii: u64,
    /// ScalarE accumulator read-back (`ActReadAccumulator`), cycles (facts §1.5: ~64).
    pub act_read_accumulator: u64,
}

/// Unknown target name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown target `{0}` (expected trn1, trn1n, inf2 or trn2)")]
pub struct UnknownTarget(pub String);

const KIB: u64 = 1024;
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

impl Target {
    /// The target of an instance family: `trn1`, `trn1n`, `inf2` or `trn2`.
    pub fn by_name(name: &str) -> Result<Target, UnknownTarget> {
        match name {
            "trn1" => Ok(Self::nc_v2("trn1")),
            "trn1n" => Ok(Self::nc_v2("trn1n")),
            "inf2" => Ok(Self::nc_v2("inf2")),
            "trn2" => Ok(Self::nc_v3()),
            other => Err(UnknownTarget(other.to_string())),
        }
    }

    /// NeuronCore-v2 (Trn1 / Trn1n / Inf2 share the core: facts §1.1 "Inferentia2 ...
    /// uses the same NeuronCore-v2").
    fn nc_v2(name: &'static str) -> Target {
        Target {
            name,
            generation: Generation::V2,
            // facts §1.2 table: Tensor 2.8, Vector 1.12, Scalar 1.4, GpSimd 1.4 GHz. The
            // Sync engine's clock is not published [U]: taken as ScalarE's.
            clocks: [2.8e9, 1.12e9, 1.4e9, 1.4e9, 1.4e9],
            // facts §1.3: SBUF 24 MiB = 128 partitions x 192 KiB.
            sbuf: Sbuf {
                partitions: 128,
                bytes_per_partition: 192 * KIB,
            },
            // facts §1.3: PSUM 2 MiB = 128 x 16 KiB, 8 banks x 2 KiB per partition.
            psum: Psum {
                partitions: 128,
                bytes_per_partition: 16 * KIB,
                banks: 8,
            },
            tensor: TensorArray {
                // facts §1.4: P <= 128, stationary free <= 128, moving free <= 512;
                // MM II ~ max(N, 64); FP32 ~4x; LS up to 4x faster than MM.
                rows: 128,
                cols: 128,
                moving_free_max: 512,
                min_ii: 64,
                fp32_factor: 4,
                ls_speedup: 4,
            },
            dma: Dma {
                // facts §1.3: 16 DMA engines per core, 16 queues each; per-engine
                // bandwidth is inconsistent across sources [U]: 27 GiB/s (NKI arch guide)
                // is used.
                engines: 16,
                queues_per_engine: 16,
                bytes_per_s_per_engine: 27.0 * GIB,
                efficient_bytes_per_partition: 2 * KIB,
            },
            // facts §1.1: 820 GiB/s per Trn1 chip (unit [U]: GiB vs GB; GiB used), 2 cores
            // per chip. Inf2: same chip memory system assumed [U] (facts §1.1 gives 32 GiB
            // HBM and 2 cores but no bandwidth).
            hbm_bytes_per_s: 820.0 * GIB / 2.0,
            // facts §1.1: 32 GiB HBM per chip, 2 cores (§3.5: 16 GB per-core share).
            hbm_bytes: 16 * 1024 * 1024 * KIB,
            // facts §1.2: 128 lanes.
            lanes: 128,
            // facts §1.3: ~60 cycles per access request, +~100 for dependent DVE ops,
            // ~64-cycle minimum II on ScalarE/VectorE.
            access_overhead: 60,
            vector_dependent_overhead: 100,
            min_ii: 64,
            act_read_accumulator: 64,
        }
    }

    /// NeuronCore-v3 (Trn2, facts §1.6).
    fn nc_v3() -> Target {
        let mut t = Self::nc_v2("trn2");
        t.generation = Generation::V3;
        // facts §1.6 table: clocks 2.4/0.96/1.2/1.2 GHz (Sync as Scalar [U]).
        t.clocks = [2.4e9, 0.96e9, 1.2e9, 1.2e9, 1.2e9];
        // facts §1.6: SBUF 28 MiB = 128 x 224 KiB; PSUM 2 MiB as on v2.
        t.sbuf.bytes_per_partition = 224 * KIB;
        // facts §1.6: 2.9 TB/s per chip (NKI guide: 3 TB/s [U]), 8 cores; 96 GiB HBM.
        t.hbm_bytes_per_s = 2.9e12 / 8.0;
        t.hbm_bytes = 12 * 1024 * 1024 * KIB;
        // facts §1.6: 128 DMA engines per chip = 16 per core (per-engine bandwidth not
        // given for v3 [U]: the v2 figure is kept).
        t
    }

    /// Clock of `e` in Hz.
    pub fn clock_hz(&self, e: Engine) -> f64 {
        self.clocks[e as usize]
    }

    /// Converts `cycles` of engine `e` to seconds.
    pub fn seconds(&self, e: Engine, cycles: u64) -> f64 {
        cycles as f64 / self.clock_hz(e)
    }

    /// Total SBUF bytes.
    pub fn sbuf_bytes(&self) -> u64 {
        self.sbuf.partitions as u64 * self.sbuf.bytes_per_partition
    }

    /// Total PSUM bytes.
    pub fn psum_bytes(&self) -> u64 {
        self.psum.partitions as u64 * self.psum.bytes_per_partition
    }

    /// Peak dense TensorE FLOP/s at full rate: rows x cols MACs x 2 x clock (facts §1.2:
    /// "128x128 MACs x 2 FLOP x 2.8 GHz = 91.8 TFLOPS").
    pub fn tensor_peak_flops(&self, dt: MatmulDtype) -> f64 {
        let f = 2.0 * (self.tensor.rows * self.tensor.cols) as f64 * self.clock_hz(Engine::Tensor);
        match dt {
            MatmulDtype::Fast => f,
            MatmulDtype::Fp32 => f / self.tensor.fp32_factor as f64,
        }
    }

    /// MultiplyMoving cycles for moving free size `n` (facts §1.4): `max(N, 64)`, x4 FP32.
    pub fn matmul_cycles(&self, n: u64, dt: MatmulDtype) -> u64 {
        let c = n.max(self.tensor.min_ii);
        match dt {
            MatmulDtype::Fast => c,
            MatmulDtype::Fp32 => c * self.tensor.fp32_factor,
        }
    }

    /// LoadStationary cycles for stationary free size `m`: an MM of the same free size,
    /// up to 4x faster (facts §1.4); rounded up.
    pub fn load_stationary_cycles(&self, m: u64, dt: MatmulDtype) -> u64 {
        self.matmul_cycles(m, dt).div_ceil(self.tensor.ls_speedup)
    }

    /// VectorE instruction cycles for free size `n` and `inputs` tensor inputs (facts §1.5:
    /// ~N for one input, ~2N for two; §1.3: ~60-cycle access overhead, 64-cycle minimum
    /// II, +~100 when dependent on the previous instruction).
    pub fn vector_cycles(&self, n: u64, inputs: u64, dependent: bool) -> u64 {
        let body = (n * inputs.max(1)).max(self.min_ii);
        let dep = if dependent {
            self.vector_dependent_overhead
        } else {
            0
        };
        self.access_overhead + body + dep
    }

    /// ScalarE `activation` cycles for free size `n` (facts §1.5: one input, ~N cycles,
    /// `func(x*scale+bias)` costs the same as a bare activation; §1.3 overheads).
    pub fn scalar_cycles(&self, n: u64, accumulate: bool) -> u64 {
        let acc = if accumulate {
            self.act_read_accumulator
        } else {
            0
        };
        self.access_overhead + n.max(self.min_ii) + acc
    }

    /// GpSimd cycles for free size `n` of 32-bit data: each of the 8 cores serves 16
    /// partitions at 512 bits (16 x FP32) per cycle (facts §1.2, §1.5), i.e. one element
    /// per partition per cycle. "No rule of thumb" is published for its cost [U].
    pub fn gpsimd_cycles(&self, n: u64) -> u64 {
        self.access_overhead + n.max(self.min_ii)
    }

    /// Seconds to move `bytes` between HBM and SBUF using `engines` DMA engines: limited by
    /// the engines' combined bandwidth and by the core's HBM bandwidth (facts §1.3, §1.1).
    pub fn dma_seconds(&self, bytes: u64, engines: u32) -> f64 {
        let e = engines.clamp(1, self.dma.engines) as f64;
        let bw = (e * self.dma.bytes_per_s_per_engine).min(self.hbm_bytes_per_s);
        bytes as f64 / bw
    }

    /// Whether engine `e` can read memory `m` (facts §1.3 "Connectivity"): TensorE reads
    /// SBUF only; VectorE and ScalarE read SBUF and PSUM; GpSimd cannot access PSUM; only
    /// DMA (issued from Sync) touches HBM.
    pub fn can_read(&self, e: Engine, m: Memory) -> bool {
        match (e, m) {
            (Engine::Tensor, m) => m == Memory::Sbuf,
            (Engine::Vector | Engine::Scalar, m) => m != Memory::Hbm,
            (Engine::GpSimd, m) => m == Memory::Sbuf,
            (Engine::Sync, m) => m != Memory::Psum,
        }
    }

    /// Whether engine `e` can write memory `m`: TensorE writes PSUM only; otherwise as
    /// [`Target::can_read`].
    pub fn can_write(&self, e: Engine, m: Memory) -> bool {
        match e {
            Engine::Tensor => m == Memory::Psum,
            _ => self.can_read(e, m),
        }
    }

    /// Whether `a` and `b` share the access port of `m`, so their accesses serialize
    /// (facts §1.3: on v2, Vector and GpSimd share SBUF, Vector and Scalar share PSUM;
    /// lifted on v3).
    pub fn shares_port(&self, a: Engine, b: Engine, m: Memory) -> bool {
        if self.generation != Generation::V2 || a == b {
            return false;
        }
        let pair = |x, y| (a == x && b == y) || (a == y && b == x);
        match m {
            Memory::Sbuf => pair(Engine::Vector, Engine::GpSimd),
            Memory::Psum => pair(Engine::Vector, Engine::Scalar),
            Memory::Hbm => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn names() {
        assert_eq!(Target::by_name("trn1").unwrap().generation, Generation::V2);
        assert_eq!(Target::by_name("inf2").unwrap().generation, Generation::V2);
        assert_eq!(Target::by_name("trn2").unwrap().generation, Generation::V3);
        assert!(Target::by_name("trn3").is_err());
    }

    #[test]
    fn peak_flops_match_published_per_core_figures() {
        // facts §1.2: ~92 TFLOPS BF16, 23 FP32 per v2 core; §1.6: 79 / 20 on v3.
        let v2 = Target::by_name("trn1").unwrap();
        assert!(close(v2.tensor_peak_flops(MatmulDtype::Fast), 92e12, 0.01));
        assert!(close(v2.tensor_peak_flops(MatmulDtype::Fp32), 23e12, 0.01));
        let v3 = Target::by_name("trn2").unwrap();
        assert!(close(v3.tensor_peak_flops(MatmulDtype::Fast), 79e12, 0.01));
        assert!(close(v3.tensor_peak_flops(MatmulDtype::Fp32), 20e12, 0.02));
    }

    #[test]
    fn memory_geometry() {
        let v2 = Target::by_name("trn1").unwrap();
        assert_eq!(v2.sbuf_bytes(), 24 * 1024 * 1024);
        assert_eq!(v2.psum_bytes(), 2 * 1024 * 1024);
        assert_eq!(v2.psum.bank_bytes(), 2048); // 512 FP32 per bank
        assert_eq!(
            Target::by_name("trn2").unwrap().sbuf_bytes(),
            28 * 1024 * 1024
        );
    }

    #[test]
    fn matmul_costs() {
        let t = Target::by_name("trn1").unwrap();
        // II = max(N, 64): N = 512 -> 512 cycles = 182.857 ns at 2.8 GHz.
        assert_eq!(t.matmul_cycles(512, MatmulDtype::Fast), 512);
        assert!(close(t.seconds(Engine::Tensor, 512), 512.0 / 2.8e9, 1e-12));
        assert_eq!(t.matmul_cycles(32, MatmulDtype::Fast), 64);
        assert_eq!(t.matmul_cycles(512, MatmulDtype::Fp32), 2048);
        assert_eq!(t.load_stationary_cycles(128, MatmulDtype::Fast), 32);
        // One LS 128x128 + MM 128x512 does 128*128*512 MACs in 512 cycles: the peak.
        let flops = 2.0 * 128.0 * 128.0 * 512.0 / t.seconds(Engine::Tensor, 512);
        assert!(close(flops, t.tensor_peak_flops(MatmulDtype::Fast), 1e-9));
    }

    #[test]
    fn vector_scalar_gpsimd_costs() {
        let t = Target::by_name("trn1").unwrap();
        // tensor_tensor over N = 1024: 60 + 2*1024 cycles at 1.12 GHz.
        assert_eq!(t.vector_cycles(1024, 2, false), 2108);
        assert_eq!(t.vector_cycles(8, 1, true), 60 + 64 + 100);
        assert_eq!(t.scalar_cycles(512, false), 572);
        assert_eq!(t.scalar_cycles(10, true), 60 + 64 + 64);
        assert_eq!(t.gpsimd_cycles(256), 316);
        assert!(close(t.seconds(Engine::Vector, 1120), 1e-6, 1e-12));
    }

    #[test]
    fn dma_bandwidth_is_capped_by_hbm() {
        let t = Target::by_name("trn1").unwrap();
        // 1 engine: 27 GiB/s; 16 engines would be 432 GiB/s > 410 GiB/s HBM per core.
        assert!(close(t.dma_seconds(27 << 30, 1), 1.0, 1e-12));
        assert!(close(t.dma_seconds(410 << 30, 16), 1.0, 1e-12));
    }

    #[test]
    fn access_rules() {
        let v2 = Target::by_name("trn1").unwrap();
        assert!(v2.can_read(Engine::Tensor, Memory::Sbuf));
        assert!(!v2.can_read(Engine::Tensor, Memory::Psum));
        assert!(v2.can_write(Engine::Tensor, Memory::Psum));
        assert!(!v2.can_write(Engine::Tensor, Memory::Sbuf));
        assert!(!v2.can_read(Engine::GpSimd, Memory::Psum));
        assert!(!v2.can_write(Engine::GpSimd, Memory::Psum));
        assert!(v2.can_read(Engine::Scalar, Memory::Psum));
        assert!(v2.shares_port(Engine::Vector, Engine::GpSimd, Memory::Sbuf));
        assert!(v2.shares_port(Engine::Scalar, Engine::Vector, Memory::Psum));
        assert!(!v2.shares_port(Engine::Scalar, Engine::GpSimd, Memory::Sbuf));
        let v3 = Target::by_name("trn2").unwrap();
        assert!(!v3.shares_port(Engine::Vector, Engine::GpSimd, Memory::Sbuf));
    }
}
