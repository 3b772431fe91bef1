//! Instruction combining: a producer op merges into its single consumer inside a kernel
//! when one NeuronCore instruction computes the pair in one pass over the data.
//!
//! Owns: [`plan`] (which ops of a kernel merge, and the combined instruction each
//! consumer becomes), [`apply`] (the kernel's work list after combining), [`Combined`],
//! [`Form`] and [`Role`].
//!
//! # The three forms (`neuron-facts.md` §1.5 and §2.3; NKI ISA docs of the instructions)
//! * **Activation** (ScalarE): `activation` computes `func(x*scale + bias)` at the cost
//!   of a bare activation, `scale` a compile-time scalar or a `[P, 1]` vector, `bias` a
//!   `[P, 1]` vector. So `x*s`, `x+b`, `x*s+b` feeding a unary ScalarE function (a
//!   transcendental, or a square) is one instruction: `Activation.erf(x*s+b)`.
//! * **TensorScalar** (VectorE, ScalarE or GpSimd): `tensor_scalar` computes
//!   `(x op0 s0) op1 s1` with scalar or `[P, 1]` operands; "performing one operator has
//!   the same performance cost as performing two". Two scalar ops in a row are one
//!   instruction: `TensorScalar.divide.add`.
//! * **ScalarTensorTensor** (VectorE only): `scalar_tensor_tensor` computes
//!   `(x op0 s) op1 y` with `y` a tensor of `x`'s shape, at about the cost of a
//!   `tensor_tensor` (the scalar op is free). A scalar op feeding a two-tensor
//!   arithmetic op is one instruction: `ScalarTensorTensor.multiply.add`.
//!
//! # Rules (conservative)
//! A producer `P` merges into a consumer `C` of the same kernel only if: `P`'s result has
//! no use but `C` (so it is neither a kernel output nor returned) and `C` reads it once
//! (twice for a square); `P`, its data operand and `C` have the same shape, floating
//! element type (F32/BF16/F16) and partition dimension; no relayout touches `P` or `C`;
//! `P` is a *scalar op* — `add`/`subtract`/`multiply`/`divide`/`maximum`/`minimum` of a
//! full tensor and a *scalar operand*: a splat constant, a broadcast of a rank-0 value,
//! or a broadcast whose non-unit source dimensions all land on the result's partition
//! dimension or on dimensions that keep one index per instruction
//! (`engine::operands::scalar_operand`: an attention mask `[batch, key]`
//! broadcast over heads and queries, with keys on the partitions and tiles within one
//! batch, is a `[P, 1]` vector in every tile, as a hand-written kernel passes it); and
//! the pair has one of the forms above. ScalarE's
//! prefix must be `multiply` then `add`/`subtract` (scale before bias); a subtracted bias
//! must be a constant (negated at compile time) and the data its left operand. The
//! combined instruction runs on the engines every part could run on (a `divide` is not
//! ScalarE work in `classify`, so `TensorScalar.divide.add` stays on VectorE/GpSimd).
//! Kernels are walked in program order and merge greedily: a consumer takes the latest
//! of its producers that can merge (the one it would wait for: on BERT-base's training
//! step 23.051 ms with the first operand's producer, 22.865 ms with the latest), and a
//! two-op `TensorScalar` may still merge into a ScalarE function (`x*s+b` then `exp` is
//! one `Activation.exp(x*s+b)`).
//! A shift the kernel's matmul applies as extra contraction rows (`engine::shift`: the
//! recomputed attention's `- bcast(max)`) takes over its data's open group and emits
//! nothing, so `exp` after it still merges the eviction's `x*s+b`.
//! Invariants: a merged op emits no instruction (its result passes through like a
//! relabel: the combined instruction reads its operands' buffers); the combined
//! instruction is costed once, as one pass reading `inputs` tensors, so the roofline's
//! ideal work counts it once; combining never changes what is computed (the functional
//! simulator runs the IR ops).

use crate::engine::classify::{OpWork, ACT_ONLY, ANY_EW, TWO_INPUT};
use crate::engine::isa::{Engine, InstrId, Opcode};
use crate::engine::lower::Lowerer;
use crate::engine::operands::{price_broadcasts, scalar_operand};
use neuronc_ir::{ElemType, Module, OpId, OpKind, ValueDef, ValueId};
use neuronc_passes::neuron::graph::RegionGraph;
use neuronc_passes::neuron::layout::LayoutPlan;
use rustc_hash::{FxHashMap, FxHashSet};

/// Engines of a `scalar_tensor_tensor`.
pub const VECTOR_ONLY: &[Engine] = &[Engine::Vector];

/// One `x op s` of a combined instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScalarOp {
    /// The op's short name (`multiply`, `add`, ...).
    pub op: &'static str,
    /// The scalar is a splat constant (known at compile time).
    pub constant: bool,
    /// The data is the right operand (`s op x`; the instructions' `reverse` flags).
    pub reversed: bool,
}

/// What a combined instruction computes.
#[derive(Clone, Debug, PartialEq)]
pub enum Form {
    /// `(x op0 s0) op1 s1`: one or two scalar ops.
    TensorScalar(Vec<ScalarOp>),
    /// `func(x*s+b)`: ScalarE `func` after a scale and/or bias.
    Activation {
        func: &'static str,
        pre: Vec<ScalarOp>,
    },
    /// `(x op0 s) op1 y`.
    ScalarTensorTensor { op0: ScalarOp, op1: &'static str },
}

/// A combined instruction: its form, the tensors it streams and where it can run.
#[derive(Clone, Debug, PartialEq)]
pub struct Combined {
    pub form: Form,
    pub inputs: u8,
    pub engines: &'static [Engine],
}

/// The part an op of a kernel plays.
#[derive(Clone, Debug, PartialEq)]
pub enum Role {
    /// Its own instruction, as before.
    Alone,
    /// Merged into a later op's combined instruction: emits nothing.
    Merged,
    /// Emits the combined instruction.
    Combined(Combined),
}

/// What [`plan`] reads of the function: the module, the dataflow graph (uses) and the
/// layout (partition dimensions, relayouts).
pub struct Ctx<'a> {
    pub m: &'a Module,
    pub graph: &'a RegionGraph,
    pub layout: &'a LayoutPlan,
    /// How the kernel's tiles cut its full-size values (`None`: unknown, only broadcasts
    /// along the partition dimension are `[P, 1]`).
    pub span: Option<crate::engine::operands::Span>,
}

impl Combined {
    /// The opcode of this instruction; `evict` when a PSUM eviction on ScalarE applies it
    /// (only [`Combined::evictable`] ones).
    pub fn opcode(&self, evict: bool) -> Opcode {
        match &self.form {
            Form::Activation { func, pre } => Opcode::Activation {
                func: format!("{func}({})", act_args(pre)),
                evict,
            },
            Form::TensorScalar(ops) if evict => Opcode::Activation {
                func: format!("copy({})", act_args(ops)),
                evict,
            },
            Form::TensorScalar(ops) => Opcode::TensorScalar {
                ops: ops.iter().map(|o| o.op).collect::<Vec<_>>().join("."),
            },
            Form::ScalarTensorTensor { op0, op1 } => Opcode::ScalarTensorTensor {
                ops: format!("{}.{op1}", op0.op),
            },
        }
    }

    /// Whether a PSUM eviction on ScalarE can apply it (`func(x*scale+bias)`).
    pub fn evictable(&self) -> bool {
        match &self.form {
            Form::Activation { .. } => true,
            Form::TensorScalar(ops) => act_prefix(ops) && self.engines.contains(&Engine::Scalar),
            Form::ScalarTensorTensor { .. } => false,
        }
    }
}

/// `x*s+b`, `x*s`, `x+b` or `x-b` for a ScalarE prefix.
fn act_args(pre: &[ScalarOp]) -> String {
    let mut s = "x".to_string();
    for o in pre {
        s.push_str(match o.op {
            "multiply" => "*s",
            "add" => "+b",
            "subtract" => "-b",
            other => other,
        });
    }
    s
}

/// Whether `pre` is a ScalarE scale/bias: `multiply`, then `add` or `subtract` (a
/// constant subtracted from the data, so the bias is its negation).
fn act_prefix(pre: &[ScalarOp]) -> bool {
    let bias = |o: &ScalarOp| o.op == "add" || (o.op == "subtract" && o.constant && !o.reversed);
    match pre {
        [a] => a.op == "multiply" || bias(a),
        [a, b] => a.op == "multiply" && bias(b),
        _ => false,
    }
}

/// The engines in both sets (the classify tables are nested: ScalarE-only, two-input,
/// all three); `None` when no engine runs both.
fn meet(a: &'static [Engine], b: &'static [Engine]) -> Option<&'static [Engine]> {
    let set: &'static [Engine] = if a == ANY_EW {
        b
    } else if b == ANY_EW || a == b {
        a
    } else if a == TWO_INPUT && b == VECTOR_ONLY || a == VECTOR_ONLY && b == TWO_INPUT {
        VECTOR_ONLY
    } else {
        return None;
    };
    Some(set)
}

/// An open group: scalar ops that a later consumer may still absorb.
#[derive(Clone, Debug)]
pub(crate) struct Open {
    pub(crate) ops: Vec<ScalarOp>,
    pub(crate) engines: &'static [Engine],
}

/// The roles of the ops of one kernel (`ops` in program order, `works` their work).
/// `keep_act`: the op a matmul's PSUM eviction applies, which may merge into its consumer
/// only when the eviction can still apply the combined instruction.
/// `shift`: an op the kernel's matmul applies as extra contraction rows
/// (`engine::shift`): it passes its data's open group on and emits nothing.
pub fn plan(
    cx: &Ctx,
    ops: &[OpId],
    works: &[OpWork],
    keep_act: Option<usize>,
    shift: Option<usize>,
) -> Vec<Role> {
    let index: FxHashMap<OpId, usize> = ops.iter().enumerate().map(|(i, &o)| (o, i)).collect();
    let relaid: FxHashSet<OpId> = cx.layout.relayouts.iter().map(|r| r.consumer).collect();
    let mut open: Vec<Option<Open>> = vec![None; ops.len()];
    let mut roles = vec![Role::Alone; ops.len()];
    for c in 0..ops.len() {
        if Some(c) == shift {
            crate::engine::shift::pass_shift(cx, &index, &mut open, &mut roles, ops[c], c);
            continue;
        }
        let own = scalar_op(cx, ops[c], &works[c]);
        let merge = if relaid.contains(&ops[c]) {
            None
        } else {
            producer_to_merge(cx, &index, &open, &relaid, ops, works, c, &own)
                .filter(|(p, comb)| keep_act != Some(*p) || comb.evictable())
        };
        match merge {
            Some((p, comb)) => {
                roles[p] = Role::Merged;
                open[p] = None;
                open[c] = match &comb.form {
                    Form::TensorScalar(ts) => Some(Open {
                        ops: ts.clone(),
                        engines: comb.engines,
                    }),
                    _ => None,
                };
                roles[c] = Role::Combined(comb);
            }
            None => {
                open[c] = own.map(|(o, _, engines)| Open {
                    ops: vec![o],
                    engines,
                });
            }
        }
    }
    roles
}

/// The latest producer `p` of an operand of op `c` (an open group of this kernel) that
/// can merge into it, and the combined instruction.
#[allow(clippy::too_many_arguments)]
fn producer_to_merge(
    cx: &Ctx,
    index: &FxHashMap<OpId, usize>,
    open: &[Option<Open>],
    relaid: &FxHashSet<OpId>,
    ops: &[OpId],
    works: &[OpWork],
    c: usize,
    own: &Option<(ScalarOp, ValueId, &'static [Engine])>,
) -> Option<(usize, Combined)> {
    let m = cx.m;
    let co = m.op(ops[c]);
    let res = *co.results.first()?;
    // The latest producer first: it is the one the consumer waits for.
    let mut cands: Vec<(usize, ValueId)> = co
        .operands
        .iter()
        .filter_map(|&v| match m.value(v).def {
            ValueDef::Result(pop, _) => index.get(&pop).map(|&p| (p, v)),
            ValueDef::RegionArg(..) => None,
        })
        .collect();
    cands.sort_by_key(|&(p, _)| std::cmp::Reverse(p));
    for (p, v) in cands {
        let pop = ops[p];
        let Some(group) = open.get(p).and_then(|g| g.as_ref()) else {
            continue;
        };
        if p >= c || relaid.contains(&pop) || m.op(pop).results.len() != 1 {
            continue;
        }
        if !only_used_by(cx, v, ops[c]) || !same_tile(cx, v, res) {
            continue;
        }
        if let Some(comb) = form_of(cx, group, ops[c], &works[c], v, own) {
            return Some((p, comb));
        }
    }
    None
}

/// The combined instruction of open group `g` (producing `v`) merged into op `c`.
fn form_of(
    cx: &Ctx,
    g: &Open,
    c: OpId,
    work: &OpWork,
    v: ValueId,
    own: &Option<(ScalarOp, ValueId, &'static [Engine])>,
) -> Option<Combined> {
    let co = cx.m.op(c);
    if let Some((o, data, engines)) = own {
        // Two scalar ops: `tensor_scalar`.
        if *data != v || g.ops.len() != 1 {
            return None;
        }
        let mut ops = g.ops.clone();
        ops.push(*o);
        return Some(Combined {
            form: Form::TensorScalar(ops),
            inputs: 1,
            engines: meet(g.engines, engines)?,
        });
    }
    let OpWork::Elementwise {
        name,
        inputs,
        engines,
    } = *work
    else {
        return None;
    };
    let square = name == "square" && co.operands.iter().all(|&x| x == v);
    let unary = co.operands.len() == 1 && engines == ACT_ONLY;
    if square || unary {
        // A ScalarE function after a scale and bias: `activation`.
        if !act_prefix(&g.ops) || !g.engines.contains(&Engine::Scalar) {
            return None;
        }
        return Some(Combined {
            form: Form::Activation {
                func: name,
                pre: g.ops.clone(),
            },
            inputs: 1,
            engines: ACT_ONLY,
        });
    }
    // A scalar op then a two-tensor arithmetic op: `scalar_tensor_tensor`.
    let two_tensor = inputs == 2
        && co.operands.len() == 2
        && arithmetic(co.kind)
        && co.operands.iter().filter(|&&x| x == v).count() == 1;
    let other = co.operands.iter().copied().find(|&x| x != v)?;
    let res = *co.results.first()?;
    if !two_tensor || g.ops.len() != 1 || !same_tile(cx, other, res) {
        return None;
    }
    Some(Combined {
        form: Form::ScalarTensorTensor {
            op0: g.ops[0],
            op1: co.kind.short_name(),
        },
        inputs: 2,
        engines: meet(g.engines, VECTOR_ONLY)?,
    })
}

/// Ops the three instructions compute (NKI "arithmetic operators").
fn arithmetic(k: OpKind) -> bool {
    use OpKind::*;
    matches!(k, Add | Subtract | Multiply | Divide | Maximum | Minimum)
}

/// `op` as a scalar op: (the op, its data operand, its engines).
pub(crate) fn scalar_op(
    cx: &Ctx,
    op: OpId,
    work: &OpWork,
) -> Option<(ScalarOp, ValueId, &'static [Engine])> {
    let OpWork::Elementwise {
        inputs: 1, engines, ..
    } = *work
    else {
        return None;
    };
    let o = cx.m.op(op);
    let res = *o.results.first()?;
    if !arithmetic(o.kind) || o.operands.len() != 2 || o.results.len() != 1 {
        return None;
    }
    let (a, b) = (o.operands[0], o.operands[1]);
    let tensor = |v: ValueId| same_tile(cx, v, res) && scalar_operand(cx, v, res).is_none();
    let (data, constant, reversed) = if tensor(a) {
        (a, scalar_operand(cx, b, res)?, false)
    } else if tensor(b) {
        (b, scalar_operand(cx, a, res)?, true)
    } else {
        return None;
    };
    let sop = ScalarOp {
        op: o.kind.short_name(),
        constant,
        reversed,
    };
    Some((sop, data, engines))
}

/// Whether `v` is a full tile of `res`'s shape: same shape, a float element type an
/// engine computes in, and the same partition dimension.
pub(crate) fn same_tile(cx: &Ctx, v: ValueId, res: ValueId) -> bool {
    let m = cx.m;
    let (Some(a), Some(b)) = (m.tensor_type(v), m.tensor_type(res)) else {
        return false;
    };
    let float = |e: ElemType| matches!(e, ElemType::F32 | ElemType::BF16 | ElemType::F16);
    a.shape == b.shape
        && a.elem == b.elem
        && float(a.elem)
        && a.shape.iter().product::<i64>() > 1
        && cx.layout.of(v) == cx.layout.of(res)
}

/// Whether `user` is the only op (and no terminator or nested region) that reads `v`.
pub(crate) fn only_used_by(cx: &Ctx, v: ValueId, user: OpId) -> bool {
    let users = cx.graph.users_of(cx.m, v);
    !users.is_empty() && users.iter().all(|&(op, j)| op == user && j != usize::MAX)
}

/// The kernel's work after combining: merged ops relabel, a combined consumer is
/// elementwise work reading the combined instruction's tensors on its engines.
pub fn apply(works: &[OpWork], roles: &[Role]) -> Vec<OpWork> {
    works
        .iter()
        .zip(roles)
        .map(|(w, r)| match (w, r) {
            (_, Role::Merged) => OpWork::Relabel,
            (OpWork::Elementwise { name, .. }, Role::Combined(c)) => OpWork::Elementwise {
                name,
                inputs: c.inputs,
                engines: c.engines,
            },
            _ => w.clone(),
        })
        .collect()
}

impl Lowerer<'_> {
    /// Combines the ops of a kernel (`ops` in program order, `works` their work): the
    /// roles and the work list after combining. The works are first priced for the
    /// kernel's tiling (`operands::price_broadcasts`: a broadcast that is not a `[P, 1]`
    /// operand is a tensor input), so a matmul's PSUM eviction only applies a one-input
    /// op. An op that eviction would apply merges only into an instruction that eviction
    /// can still apply. Without [`crate::engine::EngineOptions::combine`] every op is
    /// alone (the pricing still holds).
    /// Free-axis add-reduces that a ScalarE instruction accumulates are marked in the work
    /// list (`engine::accumulate`). The third result: whether the kernel's matmul applies a
    /// shift as extra contraction rows (`engine::shift`).
    pub(crate) fn combine(&self, ops: &[OpId], works: &[OpWork]) -> (Vec<Role>, Vec<OpWork>, bool) {
        let cx = Ctx {
            m: self.m,
            graph: &self.plan.graph,
            layout: &self.plan.layout,
            span: crate::engine::operands::tile_span(self, ops, works),
        };
        let works = price_broadcasts(&cx, ops, works);
        if !self.opts.combine {
            return (vec![Role::Alone; ops.len()], works, false);
        }
        let keep_act = works
            .iter()
            .position(|w| *w == OpWork::Matmul)
            .and_then(|mi| crate::engine::emit_mm::fusable_epilogue(self, ops, &works, mi))
            .map(|(j, _)| j);
        let shift = crate::engine::shift::contraction_shift(&cx, ops, &works);
        let roles = plan(&cx, ops, &works, keep_act, shift);
        let mut works = apply(&works, &roles);
        crate::engine::accumulate::mark(self.m, ops, &mut works, &roles);
        (roles, works, shift.is_some())
    }

    /// Names instruction `id` after the combined instruction `c` it is (`emit_mm` costs
    /// it as `c`'s work and names it after the consumer op); `evict`: a PSUM eviction
    /// applying `c`, renamed only when it runs on ScalarE.
    pub(crate) fn name_combined(&mut self, id: InstrId, c: &Combined, evict: bool) {
        if let Some(ins) = self.prog.instrs.get_mut(id as usize) {
            if !evict || ins.engine == Engine::Scalar {
                ins.op = c.opcode(evict);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::classify::op_work;
    use crate::engine::{compile_function, EngineOptions, EngineOutput};
    use neuronc_ir::parse_module;
    use neuronc_passes::neuron::{fusion::FusionConfig, plan_function};

    /// Roles of the ops of `@main` (the terminator left out) taken as one kernel.
    fn roles(src: &str) -> (Vec<Role>, Vec<String>) {
        let m = parse_module(src).expect("parse");
        let f = m.entry().expect("entry").clone();
        let plan = plan_function(&m, &f, &FusionConfig::default());
        let body = &m.region(f.body).ops;
        let ops = &body[..body.len() - 1];
        let works: Vec<OpWork> = ops.iter().map(|&o| op_work(&m, o, false, true)).collect();
        let cx = Ctx {
            m: &m,
            graph: &plan.graph,
            layout: &plan.layout,
            span: None,
        };
        let roles = super::plan(&cx, ops, &works, None, None);
        let names = roles
            .iter()
            .map(|r| match r {
                Role::Combined(c) => c.opcode(false).mnemonic(),
                Role::Merged => "merged".into(),
                Role::Alone => "-".into(),
            })
            .collect();
        (roles, names)
    }

    /// The embedding-table AdamW update of the BERT training step (kernel 206), smaller.
    /// By hand, in program order (`[N]` the op index; broadcasts are relabels): [1] p*wd
    /// is a scalar op; [3] g-m two tensors; [4] s*[3] a scalar op; [5] m+[4]: [4] merges,
    /// scalar_tensor_tensor multiply.add; [7] v*b2 scalar op; [8] g*g square; [10] [8]*c
    /// scalar op on a square (no form: the square's function comes last); [11] [7]+[10]:
    /// both producers could merge, the later [10] does (multiply.add); [12] sqrt; [14]
    /// /s2 scalar op (divide); [16] +eps merges [14]: tensor_scalar divide.add; [17]
    /// [5]/[16]: [16] already has two scalar ops, [5] none: alone; [19] *s3 scalar op;
    /// [20] [1]+[19]: the later [19] merges (multiply.add), [1] stays.
    const ADAMW: &str = r#"func.func @main(%p: tensor<1024x256xf32>, %wd: tensor<f32>, %s2: tensor<f32>, %b2: tensor<f32>, %v: tensor<1024x256xf32>, %s: tensor<f32>, %m: tensor<1024x256xf32>, %c: tensor<f32>, %g: tensor<1024x256xf32>, %s3: tensor<f32>, %eps: tensor<f32>) -> (tensor<1024x256xf32>, tensor<1024x256xf32>, tensor<1024x256xf32>) {
  %0 = stablehlo.broadcast_in_dim %wd, dims = [] : (tensor<f32>) -> tensor<1024x256xf32>
  %1 = stablehlo.multiply %p, %0 : tensor<1024x256xf32>
  %2 = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<1024x256xf32>
  %3 = stablehlo.subtract %g, %m : tensor<1024x256xf32>
  %4 = stablehlo.multiply %2, %3 : tensor<1024x256xf32>
  %5 = stablehlo.add %m, %4 : tensor<1024x256xf32>
  %6 = stablehlo.broadcast_in_dim %b2, dims = [] : (tensor<f32>) -> tensor<1024x256xf32>
  %7 = stablehlo.multiply %v, %6 : tensor<1024x256xf32>
  %8 = stablehlo.multiply %g, %g : tensor<1024x256xf32>
  %9 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<1024x256xf32>
  %10 = stablehlo.multiply %8, %9 : tensor<1024x256xf32>
  %11 = stablehlo.add %7, %10 : tensor<1024x256xf32>
  %12 = stablehlo.sqrt %11 : tensor<1024x256xf32>
  %13 = stablehlo.broadcast_in_dim %s2, dims = [] : (tensor<f32>) -> tensor<1024x256xf32>
  %14 = stablehlo.divide %12, %13 : tensor<1024x256xf32>
  %15 = stablehlo.broadcast_in_dim %eps, dims = [] : (tensor<f32>) -> tensor<1024x256xf32>
  %16 = stablehlo.add %14, %15 : tensor<1024x256xf32>
  %17 = stablehlo.divide %5, %16 : tensor<1024x256xf32>
  %18 = stablehlo.broadcast_in_dim %s3, dims = [] : (tensor<f32>) -> tensor<1024x256xf32>
  %19 = stablehlo.multiply %17, %18 : tensor<1024x256xf32>
  %20 = stablehlo.add %1, %19 : tensor<1024x256xf32>
  return %5, %11, %20 : tensor<1024x256xf32>, tensor<1024x256xf32>, tensor<1024x256xf32>
}"#;

    #[test]
    fn adamw_merges_four_scalar_ops_into_their_consumers() {
        let (_, names) = roles(ADAMW);
        let stt = "ScalarTensorTensor.multiply.add";
        #[rustfmt::skip]
        let want: Vec<&str> = vec![
            "-", "-", "-", "-", "merged", stt, "-", "-", "-", "-", "merged", // 0..=10
            stt, "-", "-", "merged", "-", "TensorScalar.divide.add", "-", "-", // 11..=18
            "merged", stt, // 19, 20
        ];
        assert_eq!(names, want);
    }

    #[test]
    fn adamw_combined_costs_one_pass_each_and_the_roofline_counts_it_once() {
        let run = |combine: bool| -> EngineOutput {
            let m = parse_module(ADAMW).expect("parse");
            let f = m.entry().expect("entry").clone();
            let plan = plan_function(&m, &f, &FusionConfig::default());
            let opts = EngineOptions {
                combine,
                ..EngineOptions::default()
            };
            compile_function(&m, &f, &plan, &opts).expect("compile")
        };
        let (off, on) = (run(false), run(true));
        let compute = |o: &EngineOutput| {
            o.lowered
                .program
                .instrs
                .iter()
                .filter(|i| matches!(i.engine, Engine::Vector | Engine::Scalar | Engine::GpSimd))
                .map(|i| i.count as u64)
                .sum::<u64>()
        };
        // 14 compute ops, 4 merged, on 1024 × 256 FP32 = 8 tiles of 128 × 256 (the
        // 8 KiB tile budget per partition holds a whole row of 256).
        assert_eq!(compute(&off), 14 * 8);
        assert_eq!(compute(&on), 10 * 8);
        // Ideal elementwise work: every merge removes one single-input pass over the
        // 2048 elements per partition at the cheapest rate (ScalarE, 1 element per cycle
        // at 1.4 GHz): the add of divide.add, and the scalar op of each
        // scalar_tensor_tensor (which costs a tensor_tensor).
        let ew = |o: &EngineOutput| {
            let w = &o.lowered.work;
            w.fixed[1] + w.fixed[2] + w.fixed[3] + w.flexible
        };
        let want = 4.0 * 2048.0 / 1.4e9;
        let got = ew(&off) - ew(&on);
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        // The two-input work through v2's shared port stays: 5 tensor_tensor passes and
        // the divide (2 + 2 + 2 + 2 + 2 + 1 elements per cycle-element at 1.12 GHz).
        let port = |o: &EngineOutput| {
            let w = &o.lowered.work;
            w.fixed[1] + w.fixed[3] + w.vector_or_pool
        };
        let want_port = 11.0 * 2048.0 / 1.12e9;
        assert!((port(&on) - want_port).abs() < 1e-12, "{}", port(&on));
        assert!((port(&off) - want_port).abs() < 1e-12, "{}", port(&off));
        let p = &on.lowered.program;
        let stt = p
            .instrs
            .iter()
            .filter(
                |i| matches!(&i.op, Opcode::ScalarTensorTensor { ops } if ops == "multiply.add"),
            )
            .collect::<Vec<_>>();
        assert_eq!(stt.iter().map(|i| i.count).sum::<u32>(), 3 * 8);
        assert!(stt.iter().all(|i| i.engine == Engine::Vector));
    }

    #[test]
    fn scale_and_bias_fold_into_a_scalar_engine_function() {
        // [1] x*0.5, [3] +1 → tensor_scalar multiply.add, [4] exp of it → one activation
        // exp(x*s+b); [6] x*c feeds erf but also the return: alone; [7] erf alone.
        let src = r#"func.func @main(%x: tensor<256x512xf32>) -> (tensor<256x512xf32>, tensor<256x512xf32>, tensor<256x512xf32>) {
  %0 = stablehlo.constant dense<0.5> : tensor<256x512xf32>
  %1 = stablehlo.multiply %x, %0 : tensor<256x512xf32>
  %2 = stablehlo.constant dense<1.0> : tensor<256x512xf32>
  %3 = stablehlo.add %1, %2 : tensor<256x512xf32>
  %4 = stablehlo.exponential %3 : tensor<256x512xf32>
  %5 = stablehlo.constant dense<0.7> : tensor<256x512xf32>
  %6 = stablehlo.multiply %x, %5 : tensor<256x512xf32>
  %7 = chlo.erf %6 : tensor<256x512xf32> -> tensor<256x512xf32>
  return %4, %6, %7 : tensor<256x512xf32>, tensor<256x512xf32>, tensor<256x512xf32>
}"#;
        let (roles, names) = roles(src);
        assert_eq!(
            names,
            vec![
                "-",
                "merged",
                "-",
                "merged",
                "Activation.exponential(x*s+b)",
                "-",
                "-",
                "-"
            ]
        );
        let Role::Combined(c) = &roles[4] else {
            panic!("{:?}", roles[4])
        };
        assert_eq!((c.inputs, c.engines), (1, ACT_ONLY));
    }

    #[test]
    fn only_per_partition_scalars_combine() {
        // Partition dimension: the 1024 rows (asserted below). [2] x - mean (a [P, 1]
        // broadcast along the rows) then [4] * rstd ([P, 1]) → tensor_scalar
        // subtract.multiply. [6] * gamma varies along the free axis (a row vector, no
        // scalar operand) and [7] + [6]... stays: [8] * 2.0 then [9] + y → the scalar op
        // merges into the tensor_tensor. Integer ops never combine ([11], [12]).
        let src = r#"func.func @main(%x: tensor<1024x256xf32>, %mean: tensor<1024xf32>, %rstd: tensor<1024xf32>, %gamma: tensor<256xf32>, %y: tensor<1024x256xf32>, %i: tensor<1024x256xi32>) -> (tensor<1024x256xf32>, tensor<1024x256xf32>, tensor<1024x256xi32>) {
  %0 = stablehlo.broadcast_in_dim %mean, dims = [0] : (tensor<1024xf32>) -> tensor<1024x256xf32>
  %1 = stablehlo.broadcast_in_dim %rstd, dims = [0] : (tensor<1024xf32>) -> tensor<1024x256xf32>
  %2 = stablehlo.subtract %x, %0 : tensor<1024x256xf32>
  %3 = stablehlo.broadcast_in_dim %gamma, dims = [1] : (tensor<256xf32>) -> tensor<1024x256xf32>
  %4 = stablehlo.multiply %2, %1 : tensor<1024x256xf32>
  %5 = stablehlo.constant dense<2.0> : tensor<1024x256xf32>
  %6 = stablehlo.multiply %4, %3 : tensor<1024x256xf32>
  %7 = stablehlo.add %6, %y : tensor<1024x256xf32>
  %8 = stablehlo.multiply %y, %5 : tensor<1024x256xf32>
  %9 = stablehlo.add %8, %y : tensor<1024x256xf32>
  %10 = stablehlo.constant dense<3> : tensor<1024x256xi32>
  %11 = stablehlo.multiply %i, %10 : tensor<1024x256xi32>
  %12 = stablehlo.add %11, %10 : tensor<1024x256xi32>
  return %7, %9, %12 : tensor<1024x256xf32>, tensor<1024x256xf32>, tensor<1024x256xi32>
}"#;
        let m = parse_module(src).expect("parse");
        let f = m.entry().expect("entry").clone();
        let plan = plan_function(&m, &f, &FusionConfig::default());
        assert_eq!(plan.layout.of(f_arg(&m, &f, 0)), Some(0));
        let (_, names) = roles(src);
        let want: Vec<&str> = vec![
            "-",
            "-",
            "merged",
            "-",
            "TensorScalar.subtract.multiply",
            "-",
            "-",
            "-",
            "merged",
            "ScalarTensorTensor.multiply.add",
            "-",
            "-",
            "-",
        ];
        assert_eq!(names, want);
    }

    #[test]
    fn an_eviction_keeps_its_epilogue_and_may_take_a_scalar_engine_combination() {
        // Kernel of the matmul: `[0] * [P, 1]` is what the PSUM eviction applies; merging
        // it into `+ y` (scalar_tensor_tensor, VectorE only) would cost the eviction its
        // epilogue, so it stays `Activation.multiply.evict` and the add a tensor_tensor.
        // `z + [P, 1]` then `logistic`: one `Activation.logistic(x+b)`.
        let src = r#"func.func @main(%x: tensor<512x256xf32>, %w: tensor<256x128xf32>, %b: tensor<512xf32>, %y: tensor<512x128xf32>, %z: tensor<512x128xf32>) -> (tensor<512x128xf32>, tensor<512x128xf32>) {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<512x256xf32>, tensor<256x128xf32>) -> tensor<512x128xf32>
  %1 = stablehlo.broadcast_in_dim %b, dims = [0] : (tensor<512xf32>) -> tensor<512x128xf32>
  %2 = stablehlo.multiply %0, %1 : tensor<512x128xf32>
  %3 = stablehlo.add %2, %y : tensor<512x128xf32>
  %4 = stablehlo.add %z, %1 : tensor<512x128xf32>
  %5 = stablehlo.logistic %4 : tensor<512x128xf32>
  return %3, %5 : tensor<512x128xf32>, tensor<512x128xf32>
}"#;
        let m = parse_module(src).expect("parse");
        let f = m.entry().expect("entry").clone();
        let plan = plan_function(&m, &f, &FusionConfig::default());
        let out = compile_function(&m, &f, &plan, &EngineOptions::default()).expect("compile");
        let names: Vec<String> = out
            .lowered
            .program
            .instrs
            .iter()
            .filter(|i| matches!(i.engine, Engine::Vector | Engine::Scalar | Engine::GpSimd))
            .map(|i| i.op.mnemonic())
            .collect();
        assert!(
            names.iter().any(|n| n == "Activation.multiply.evict"),
            "{names:?}"
        );
        assert!(
            !names.iter().any(|n| n.starts_with("ScalarTensorTensor")),
            "{names:?}"
        );
        assert!(
            names.iter().any(|n| n == "Activation.logistic(x+b)"),
            "{names:?}"
        );
        assert!(
            !names.iter().any(|n| n == "Activation.logistic"),
            "{names:?}"
        );
    }

    fn f_arg(m: &Module, f: &neuronc_ir::Func, i: usize) -> ValueId {
        m.region(f.body).args[i]
    }

    #[test]
    fn a_value_with_two_uses_or_a_divide_before_a_function_stays() {
        // [1] x*2 read by [2] and [3]: never merged. [5] x/3 feeds tanh: a divide is not
        // ScalarE work, so no activation; tanh alone.
        let src = r#"func.func @main(%x: tensor<256x512xf32>) -> (tensor<256x512xf32>, tensor<256x512xf32>, tensor<256x512xf32>) {
  %0 = stablehlo.constant dense<2.0> : tensor<256x512xf32>
  %1 = stablehlo.multiply %x, %0 : tensor<256x512xf32>
  %2 = stablehlo.add %1, %0 : tensor<256x512xf32>
  %3 = stablehlo.exponential %1 : tensor<256x512xf32>
  %4 = stablehlo.constant dense<3.0> : tensor<256x512xf32>
  %5 = stablehlo.divide %x, %4 : tensor<256x512xf32>
  %6 = stablehlo.tanh %5 : tensor<256x512xf32>
  return %2, %3, %6 : tensor<256x512xf32>, tensor<256x512xf32>, tensor<256x512xf32>
}"#;
        let (_, names) = roles(src);
        assert!(names.iter().all(|n| n == "-"), "{names:?}");
    }
}
