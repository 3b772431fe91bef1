//! Which engine work each IR op needs once it sits inside a kernel.
//!
//! Owns: [`OpWork`] and [`op_work`], the op → engine-class table of the lowering:
//! transcendental unary ops on ScalarE; squares (`x * x`) on any of ScalarE/VectorE/GpSimd
//! (one input on ScalarE); elementwise binary ops, casts, selects and
//! free-axis reductions on VectorE (or GpSimd / ScalarE when the cost model balances
//! load); iota, masks, gather/scatter, sort, cross-partition reductions and RNG on GpSimd
//! (`neuron-facts.md` §1.2, §1.5, §6.1); matmul and convolution on TensorE; dense
//! linear-algebra custom calls as one opaque GpSimd kernel each ([`crate::engine::opaque`]).
//! Invariant: the table is total — every op kind maps to some work (unknown ops go to
//! GpSimd, the general-purpose engine).

use crate::engine::isa::Engine;
use neuronc_ir::{Module, OpId, OpKind};
use neuronc_passes::neuron::fusion::{classify, OpClass};

/// Engines that can run an elementwise op with one tensor input.
pub const ANY_EW: &[Engine] = &[Engine::Vector, Engine::Scalar, Engine::GpSimd];

/// A copy on any elementwise engine: also what a view (slice, broadcast, folded convert)
/// becomes when its data must exist in a buffer of its own.
pub const COPY: OpWork = OpWork::Elementwise {
    name: "copy",
    inputs: 1,
    engines: ANY_EW,
};
/// Engines for two-tensor-input ops (ScalarE reads at most one tensor, facts §1.5).
pub const TWO_INPUT: &[Engine] = &[Engine::Vector, Engine::GpSimd];
/// ScalarE only (activation LUTs).
pub const ACT_ONLY: &[Engine] = &[Engine::Scalar];

/// The work of one op.
#[derive(Clone, Debug, PartialEq)]
pub enum OpWork {
    /// Moves no data (relabel, free-axis broadcast or slice absorbed in access patterns,
    /// small constants as immediates, casts fused into the consumer).
    Relabel,
    /// TensorE contraction.
    Matmul,
    /// Elementwise work reading `inputs` full tensors, on one of `engines`.
    Elementwise {
        name: &'static str,
        inputs: u8,
        engines: &'static [Engine],
    },
    /// Free-axis reduction (VectorE); `accumulate`: an add-reduce that the ScalarE
    /// instruction producing its operand accumulates (`engine::accumulate`), leaving only
    /// the read-back of ScalarE's accumulator registers.
    ReduceFree {
        name: &'static str,
        inputs: u8,
        accumulate: bool,
    },
    /// Reduction across partitions (GpSimd).
    ReducePartition { name: &'static str },
    /// GpSimd work costing `cycles_per_elem` per output element per lane group.
    Pool {
        name: &'static str,
        cycles_per_elem: f64,
    },
    /// A large constant: lives in HBM, loaded by its consumers.
    HbmConstant,
    /// One opaque GpSimd kernel (a linear-algebra custom call, see
    /// [`crate::engine::opaque`]) costing `cycles` for the whole op, however it is tiled.
    Opaque { name: &'static str, cycles: f64 },
}

fn is_transcendental(k: OpKind) -> bool {
    use OpKind::*;
    matches!(
        k,
        Exponential
            | ExponentialMinusOne
            | Log
            | LogPlusOne
            | Logistic
            | Tanh
            | Sqrt
            | Rsqrt
            | Cbrt
            | Sine
            | Cosine
            | Tan
            | Power
            | Atan2
            | ChloErf
            | ChloErfc
            | ChloErfInv
            | ChloTan
            | ChloLgamma
            | ChloDigamma
            | ChloAcos
            | ChloAcosh
            | ChloAsin
            | ChloAsinh
            | ChloAtan
            | ChloAtanh
            | ChloCosh
            | ChloSinh
            | ChloBesselI1e
            | ChloPolygamma
            | ChloZeta
    )
}

fn is_int(m: &Module, op: OpId) -> bool {
    let o = m.op(op);
    o.results
        .first()
        .and_then(|&r| m.tensor_type(r))
        .is_some_and(|t| t.elem.is_integer() || t.elem.is_bool())
}

/// Number of operands that are full tensors: not scalars and not broadcasts of smaller
/// tensors. Which of those broadcasts an instruction reads as a `[P, 1]` operand and
/// which as a full tile depends on the layout and tiling of the kernel:
/// `engine::operands::price_broadcasts` adds the latter when a kernel is lowered.
fn tensor_inputs(m: &Module, op: OpId) -> u8 {
    let o = m.op(op);
    let full = o
        .results
        .first()
        .and_then(|&r| m.tensor_type(r))
        .map_or(1, |t| t.num_elements());
    let is_broadcast = |v: neuronc_ir::ValueId| match m.value(v).def {
        neuronc_ir::ValueDef::Result(p, _) => {
            let po = m.op(p);
            matches!(
                po.kind,
                BroadcastInDim | OpKind::Broadcast | OpKind::Constant | OpKind::Iota
            ) && po
                .operands
                .first()
                .and_then(|&s| m.tensor_type(s))
                .is_none_or(|t| t.num_elements() < full)
        }
        neuronc_ir::ValueDef::RegionArg(..) => false,
    };
    o.operands
        .iter()
        .filter(|&&v| {
            m.tensor_type(v)
                .is_some_and(|t| t.num_elements() == full && full > 1)
                && !is_broadcast(v)
        })
        .count() as u8
}

use OpKind::BroadcastInDim;

/// `multiply(x, x)` on floats reads one tensor: ScalarE squares it in one `activation`
/// (`func(in*scale+bias)` with `func` = square, facts §1.5), bit-exact in FP32; VectorE
/// and GpSimd still run it as a two-input `tensor_tensor` ([`inputs_on`]).
fn squares(m: &Module, op: OpId) -> bool {
    let o = m.op(op);
    o.operands.len() == 2 && o.operands[0] == o.operands[1] && !is_int(m, op)
}

/// Tensor inputs an elementwise op `name` (reading `inputs` tensors) streams on engine
/// `e`: a square is one input on ScalarE but two on VectorE/GpSimd (`tensor_tensor`).
pub fn inputs_on(name: &str, inputs: u8, e: Engine) -> u8 {
    if name == "square" && e != Engine::Scalar {
        inputs.max(2)
    } else {
        inputs
    }
}

/// The work `op` needs; `in_compute_kernel` says whether other ops of its kernel compute
/// (a convert then fuses into their reads, facts §1.2: input/output casts are free).
pub fn op_work(m: &Module, op: OpId, cross_partition: bool, in_compute_kernel: bool) -> OpWork {
    use OpKind::*;
    let o = m.op(op);
    let k = o.kind;
    if let Some(call) = crate::engine::opaque::linalg_call(m, op) {
        return OpWork::Opaque {
            name: call.name,
            cycles: call.cycles,
        };
    }
    match classify(m, op) {
        OpClass::Free => return OpWork::Relabel,
        OpClass::Matmul => return OpWork::Matmul,
        OpClass::Reduce => {
            let name = reduce_name(m, op);
            let inputs = (o.operands.len() / 2).max(1) as u8;
            return if cross_partition {
                OpWork::ReducePartition { name }
            } else {
                OpWork::ReduceFree {
                    name,
                    inputs,
                    accumulate: false,
                }
            };
        }
        _ => {}
    }
    match k {
        Constant if classify(m, op) == OpClass::Opaque => OpWork::HbmConstant,
        Constant | BroadcastInDim | Broadcast | Slice | Reverse | DynamicSlice | Reshape
        | Transpose => OpWork::Relabel,
        Convert if in_compute_kernel => OpWork::Relabel,
        Iota => OpWork::Pool {
            name: "iota",
            cycles_per_elem: 1.0,
        },
        Pad | Concatenate | Convert | BitcastConvert => COPY,
        _ if is_transcendental(k) => OpWork::Elementwise {
            name: k.short_name(),
            inputs: 1,
            engines: ACT_ONLY,
        },
        Multiply if squares(m, op) => OpWork::Elementwise {
            name: "square",
            inputs: 1,
            engines: ANY_EW,
        },
        _ if k.is_elementwise() => {
            let inputs = tensor_inputs(m, op).max(1);
            let scalar_engine_ok =
                matches!(k, Add | Subtract | Multiply | Negate | Abs) || o.operands.len() == 1;
            let engines = if inputs >= 2 || is_int(m, op) || !scalar_engine_ok {
                TWO_INPUT
            } else {
                ANY_EW
            };
            OpWork::Elementwise {
                name: k.short_name(),
                inputs,
                engines,
            }
        }
        ReduceWindow => OpWork::ReduceFree {
            name: "window",
            inputs: 1,
            accumulate: false,
        },
        BatchNormInference | BatchNormTraining | BatchNormGrad => OpWork::Elementwise {
            name: k.short_name(),
            inputs: 3,
            engines: TWO_INPUT,
        },
        Sort => OpWork::Pool {
            name: "sort",
            cycles_per_elem: sort_cycles(m, op),
        },
        Gather | Scatter | TorchIndexSelect | DynamicUpdateSlice | DynamicGather => OpWork::Pool {
            name: k.short_name(),
            cycles_per_elem: 2.0,
        },
        Rng | RngBitGenerator => OpWork::Pool {
            name: "rng",
            cycles_per_elem: 4.0,
        },
        _ => OpWork::Pool {
            name: k.short_name(),
            cycles_per_elem: 4.0,
        },
    }
}

/// log2 of the sorted dimension: a comparison network costs about n·log2(n) [U].
fn sort_cycles(m: &Module, op: OpId) -> f64 {
    let o = m.op(op);
    let dim = o.attrs.int("dimension").unwrap_or(0).max(0) as usize;
    let n = o
        .operands
        .first()
        .and_then(|&v| m.tensor_type(v))
        .and_then(|t| t.shape.get(dim).copied())
        .unwrap_or(2);
    (n.max(2) as f64).log2()
}

/// Name of a reduction's combiner (`add`, `maximum`, ...), from its body.
fn reduce_name(m: &Module, op: OpId) -> &'static str {
    let o = m.op(op);
    o.regions
        .first()
        .and_then(|&r| m.region(r).ops.first())
        .map_or("reduce", |&inner| m.op(inner).kind.short_name())
}

#[cfg(test)]
mod tests {
    use super::*;
    use neuronc_ir::parse_module;

    /// The ops of `@main` in order, without the terminator.
    fn ops(m: &Module) -> Vec<OpId> {
        let f = m.entry().expect("entry");
        let body = &m.region(f.body).ops;
        body[..body.len() - 1].to_vec()
    }

    #[test]
    fn a_square_reads_one_tensor_on_scalar_and_two_on_vector() {
        let src = r#"func.func @main(%a: tensor<256x64xf32>, %b: tensor<256x64xf32>, %i: tensor<256x64xi32>) -> (tensor<256x64xf32>, tensor<256x64xf32>, tensor<256x64xi32>) {
  %0 = stablehlo.multiply %a, %a : tensor<256x64xf32>
  %1 = stablehlo.multiply %a, %b : tensor<256x64xf32>
  %2 = stablehlo.multiply %i, %i : tensor<256x64xi32>
  return %0, %1, %2 : tensor<256x64xf32>, tensor<256x64xf32>, tensor<256x64xi32>
}"#;
        let m = parse_module(src).expect("parse");
        let w: Vec<OpWork> = ops(&m)
            .into_iter()
            .map(|o| op_work(&m, o, false, true))
            .collect();
        // x * x: one tensor read; ScalarE's activation can square it (facts §1.5).
        let square = OpWork::Elementwise {
            name: "square",
            inputs: 1,
            engines: ANY_EW,
        };
        assert_eq!(w[0], square);
        assert_eq!(inputs_on("square", 1, Engine::Scalar), 1);
        assert_eq!(inputs_on("square", 1, Engine::Vector), 2);
        assert_eq!(inputs_on("square", 1, Engine::GpSimd), 2);
        // Two different tensors: VectorE/GpSimd only; an integer square stays there too.
        let two = |w: &OpWork| matches!(w, OpWork::Elementwise { inputs: 2, engines, .. } if *engines == TWO_INPUT);
        assert!(two(&w[1]), "{:?}", w[1]);
        assert!(two(&w[2]), "{:?}", w[2]);
        assert_eq!(inputs_on("multiply", 2, Engine::Vector), 2);
    }
}
