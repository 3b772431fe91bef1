//! The engine program: instruction streams of one NeuronCore and the buffers they touch.
//!
//! Owns: [`Engine`] (the in-order instruction streams: Tensor, Vector, Scalar, GpSimd and
//! the DMA queues), [`Opcode`], [`Instr`], [`Buffer`] and [`Program`].
//! Invariants: `Program::instrs[i].id == i`; every dependency of an instruction has a
//! smaller id (instructions are created in a topological order); `count >= 1` (one record
//! stands for `count` identical hardware instructions on tiles of the same shape).

/// Number of DMA queues modelled per core (16 DMA engines per NeuronCore, `neuron-facts.md` §1.3).
pub const DMA_QUEUES: u8 = 16;

/// An in-order instruction stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Engine {
    /// TensorE (PE): LoadStationary / MultiplyMoving.
    Tensor,
    /// VectorE (DVE).
    Vector,
    /// ScalarE (ACT).
    Scalar,
    /// GpSimd (POOL).
    GpSimd,
    /// DMA queue `n` (triggered by the Sync engine).
    Dma(u8),
}

impl Engine {
    /// The four compute engines, in display order.
    pub const COMPUTE: [Engine; 4] = [
        Engine::Tensor,
        Engine::Vector,
        Engine::Scalar,
        Engine::GpSimd,
    ];

    /// Short name used in `program.nir`, the timeline and the report (`PE`, `DVE`, `ACT`,
    /// `POOL`, `DMA3`), the profiler names of `neuron-facts.md` §1.2.
    pub fn name(self) -> String {
        match self {
            Engine::Tensor => "PE".into(),
            Engine::Vector => "DVE".into(),
            Engine::Scalar => "ACT".into(),
            Engine::GpSimd => "POOL".into(),
            Engine::Dma(q) => format!("DMA{q}"),
        }
    }

    /// Dense index: 0..4 compute engines, then the DMA queues.
    pub fn index(self) -> usize {
        match self {
            Engine::Tensor => 0,
            Engine::Vector => 1,
            Engine::Scalar => 2,
            Engine::GpSimd => 3,
            Engine::Dma(q) => 4 + q as usize,
        }
    }

    /// Inverse of [`Engine::index`].
    pub fn from_index(i: usize) -> Engine {
        match i {
            0 => Engine::Tensor,
            1 => Engine::Vector,
            2 => Engine::Scalar,
            3 => Engine::GpSimd,
            n => Engine::Dma((n - 4) as u8),
        }
    }
}

/// Number of streams ([`Engine::index`] range).
pub const NUM_STREAMS: usize = 4 + DMA_QUEUES as usize;

/// What an instruction does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Opcode {
    /// TensorE: cache the stationary operand (`[K, M]`, M ≤ 128).
    LoadStationary,
    /// TensorE: stream the moving operand (`[K, N]`, N ≤ 512) into a PSUM accumulation group.
    MultiplyMoving,
    /// TensorE transpose (`matmul(x, identity)`) of a tile into PSUM.
    Transpose,
    /// ScalarE `func(x*scale+bias)`; `evict` when it reads PSUM. `func` is the function's
    /// name, followed by `(x*s+b)` (or `(x*s)`, `(x+b)`, `(x-b)`) when a scale or bias
    /// combined into it ([`crate::engine::combine`]).
    Activation { func: String, evict: bool },
    /// VectorE/GpSimd/ScalarE elementwise op on tiles (`tensor_tensor`, `tensor_scalar`, copy).
    Elementwise { op: String, inputs: u8 },
    /// `(x op0 s0) op1 s1` with scalar or `[P, 1]` operands, one pass on VectorE, ScalarE or
    /// GpSimd ([`crate::engine::combine`]); `ops` is `op0.op1` (or just `op0`).
    TensorScalar { ops: String },
    /// VectorE `(x op0 s) op1 y` with `s` scalar or `[P, 1]` and `y` a tensor, at the cost
    /// of a `tensor_tensor` ([`crate::engine::combine`]); `ops` is `op0.op1`.
    ScalarTensorTensor { ops: String },
    /// Free-axis reduction (VectorE `tensor_reduce`).
    ReduceFree { op: String },
    /// Cross-partition reduction (GpSimd `partition_reduce`).
    ReducePartition { op: String },
    /// Other GpSimd work: iota, masks, gather/scatter, sort, RNG, custom.
    Pool { op: String },
    /// HBM → SBUF.
    Load,
    /// SBUF → HBM.
    Store,
    /// SBUF → HBM of an evicted resident tensor.
    Spill,
    /// Relayout (partition-dimension change) by DMA.
    DmaTranspose,
}

impl Opcode {
    /// Mnemonic for `program.nir` and the timeline.
    pub fn mnemonic(&self) -> String {
        match self {
            Opcode::LoadStationary => "LoadStationary".into(),
            Opcode::MultiplyMoving => "MultiplyMoving".into(),
            Opcode::Transpose => "Transpose".into(),
            Opcode::Activation { func, evict: true } => format!("Activation.{func}.evict"),
            Opcode::Activation { func, .. } => format!("Activation.{func}"),
            Opcode::Elementwise { op, .. } => format!("TensorOp.{op}"),
            Opcode::TensorScalar { ops } => format!("TensorScalar.{ops}"),
            Opcode::ScalarTensorTensor { ops } => format!("ScalarTensorTensor.{ops}"),
            Opcode::ReduceFree { op } => format!("TensorReduce.{op}"),
            Opcode::ReducePartition { op } => format!("PartitionReduce.{op}"),
            Opcode::Pool { op } => format!("Pool.{op}"),
            Opcode::Load => "DmaLoad".into(),
            Opcode::Store => "DmaStore".into(),
            Opcode::Spill => "DmaSpill".into(),
            Opcode::DmaTranspose => "DmaTranspose".into(),
        }
    }
}

/// Memory a buffer lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mem {
    Hbm,
    Sbuf,
    /// A PSUM bank (0..8).
    Psum(u8),
}

/// A range of on-chip or HBM memory an instruction reads or writes.
#[derive(Clone, Debug, PartialEq)]
pub struct Buffer {
    /// Human-readable name: the SSA value (`v12`), or `k3.t1` for kernel-local tiles.
    pub name: String,
    pub mem: Mem,
    /// Byte offset within each partition (SBUF/PSUM) or in HBM.
    pub offset: u64,
    /// Bytes per partition (SBUF/PSUM) or total bytes (HBM).
    pub bytes: u64,
}

/// Index of a [`Buffer`] in [`Program::buffers`].
pub type BufId = u32;
/// Index of an [`Instr`] in [`Program::instrs`].
pub type InstrId = u32;

/// One instruction record: `count` hardware instructions on tiles of shape
/// `[partitions, free]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Instr {
    pub id: InstrId,
    pub engine: Engine,
    pub op: Opcode,
    /// Kernel index in the fusion plan.
    pub kernel: u32,
    /// Partitions of one tile (≤ 128).
    pub partitions: u32,
    /// Free elements of one tile (moving free size for MultiplyMoving, bytes per partition
    /// for DMA records).
    pub free: u32,
    /// Number of identical hardware instructions this record stands for.
    pub count: u32,
    /// Bytes per element of the data it processes.
    pub elem_bytes: u8,
    /// Consecutive streams occupied from `engine` on (DMA transfers spread over several
    /// queues; 1 for everything else).
    pub span: u8,
    pub reads: Vec<BufId>,
    pub writes: Vec<BufId>,
    /// Instructions that must end before this one starts.
    pub deps: Vec<InstrId>,
    /// Busy time on its engine, seconds.
    pub duration_s: f64,
    /// The part of `duration_s` that no tiling could avoid (roofline accounting).
    pub ideal_s: f64,
}

/// A lowered program, before scheduling.
#[derive(Clone, Debug, Default)]
pub struct Program {
    pub instrs: Vec<Instr>,
    pub buffers: Vec<Buffer>,
}

impl Program {
    /// Adds a buffer and returns its id.
    pub fn buffer(&mut self, name: String, mem: Mem, offset: u64, bytes: u64) -> BufId {
        let id = self.buffers.len() as BufId;
        self.buffers.push(Buffer {
            name,
            mem,
            offset,
            bytes,
        });
        id
    }

    /// Hardware instruction count (sum of record counts).
    pub fn hardware_instructions(&self) -> u64 {
        self.instrs.iter().map(|i| i.count as u64).sum()
    }
}

/// An instruction record of `count` hardware instructions on `parts` × `free` elements of
/// `eb` bytes, with no buffers, dependencies or cost yet (its emitter fills them in).
pub(crate) fn instr(
    engine: Engine,
    op: Opcode,
    kernel: u32,
    parts: u32,
    free: u32,
    count: u32,
    eb: u8,
) -> Instr {
    Instr {
        id: 0,
        engine,
        op,
        kernel,
        partitions: parts.clamp(1, 128),
        free: free.max(1),
        count: count.max(1),
        elem_bytes: eb,
        span: 1,
        reads: Vec::new(),
        writes: Vec::new(),
        deps: Vec::new(),
        duration_s: 0.0,
        ideal_s: 0.0,
    }
}
