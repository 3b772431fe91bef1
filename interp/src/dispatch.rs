//! Routes each op to its implementation.
//!
//! Owns: [`exec`], the one `match` over [`OpKind`], and attribute access helpers. Every
//! kind either runs or returns [`InterpError::UnsupportedOp`] naming it.

use crate::error::InterpError;
use crate::eval::{op_err, Interp, Res, Val};
use crate::tensor::Tensor;
use crate::{convert, elementwise as ew, linalg, reduce, shape};
use neuronc_ir::{Attr, NamedAttrs, Op, OpId, OpKind, TensorType};

/// Attribute and type access for one op, with errors naming it.
pub(crate) struct Ctx<'a> {
    pub op: &'a Op,
    pub m: &'a neuronc_ir::Module,
}

impl<'a> Ctx<'a> {
    pub fn attrs(&self) -> &'a NamedAttrs {
        &self.op.attrs
    }
    pub fn err(&self, msg: impl Into<String>) -> InterpError {
        op_err(self.op.kind, msg)
    }
    pub fn ints(&self, name: &str) -> Res<Vec<i64>> {
        self.op
            .attrs
            .i64_array(name)
            .ok_or_else(|| self.err(format!("missing attribute `{name}`")))
    }
    pub fn ints_or(&self, name: &str, default: Vec<i64>) -> Vec<i64> {
        self.op.attrs.i64_array(name).unwrap_or(default)
    }
    pub fn int(&self, name: &str) -> Res<i64> {
        self.op
            .attrs
            .int(name)
            .ok_or_else(|| self.err(format!("missing attribute `{name}`")))
    }
    pub fn enum_val(&self, name: &str) -> Option<&'a str> {
        self.op.attrs.enum_value(name)
    }
    /// The tensor type of result `i`.
    pub fn out(&self, i: usize) -> Res<&'a TensorType> {
        self.op
            .results
            .get(i)
            .and_then(|&v| self.m.tensor_type(v))
            .ok_or_else(|| self.err(format!("result {i} is not a tensor")))
    }
    pub fn wrap<T>(&self, r: Result<T, String>) -> Res<T> {
        r.map_err(|m| self.err(m))
    }
}

fn one(t: Tensor) -> Vec<Val> {
    vec![Val::T(t)]
}

/// Executes one (non-terminator) op and returns its results.
pub(crate) fn exec(it: &mut Interp<'_>, id: OpId) -> Res<Vec<Val>> {
    let m = it.m;
    let op = m.op(id);
    let cx = Ctx { op, m };
    let k = op.kind;
    use OpKind::*;
    if k.is_elementwise()
        && op.operands.len() <= 2
        && !matches!(k, Compare | Convert | Select | Clamp)
    {
        return elementwise_op(it, &cx);
    }
    match k {
        Constant | ChloConstant => {
            if let Some(t) = it.consts.get(&id) {
                return Ok(one(t.clone()));
            }
            let t = match op.attrs.get("value") {
                Some(Attr::Elements(d)) => cx.wrap(Tensor::from_dense(d, m))?,
                _ => return Err(cx.err("missing dense `value`")),
            };
            it.consts.insert(id, t.clone());
            Ok(one(t))
        }
        ChloConstantLike => {
            let out = cx.out(0)?;
            let v = match op.attrs.get("value") {
                Some(Attr::Float(f, _)) => *f,
                Some(Attr::Int(i, _)) => *i as f64,
                Some(Attr::Elements(d)) => cx.wrap(Tensor::from_dense(d, m))?.get_f64(0),
                _ => return Err(cx.err("missing `value`")),
            };
            let s = cx.wrap(Tensor::from_f64(&[], &[v]))?;
            let s = cx.wrap(convert::convert(&s, &TensorType::new(out.elem, &[])))?;
            Ok(one(cx.wrap(shape::broadcast_in_dim(&s, &[], out))?))
        }
        Compare | ChloBroadcastCompare => {
            let (a, b) = broadcast_pair(it, &cx)?;
            let dir = cx
                .enum_val("comparison_direction")
                .ok_or_else(|| cx.err("missing direction"))?;
            let ty = cx
                .enum_val("compare_type")
                .or(cx.enum_val("comparison_type"));
            Ok(one(cx.wrap(ew::compare(&a, &b, dir, ty))?))
        }
        k if k.is_chlo_broadcast() && k != ChloBroadcastSelect => {
            let (a, b) = broadcast_pair(it, &cx)?;
            let base = if k == ChloBroadcastComplex {
                Complex
            } else {
                k
            };
            Ok(one(cx.wrap(ew::binary(base, &a, &b, cx.out(0)?))?))
        }
        Select => {
            let t = |i: usize| it.tensor(op.operands[i]);
            Ok(one(cx.wrap(ew::select(t(0)?, t(1)?, t(2)?))?))
        }
        ChloBroadcastSelect => {
            let out = cx.out(0)?;
            let mut ts = Vec::new();
            for &v in &op.operands {
                let t = it.tensor(v)?;
                let ty = TensorType::new(t.elem(), &out.shape);
                ts.push(cx.wrap(broadcast_numpy(t, &ty, None))?);
            }
            Ok(one(cx.wrap(ew::select(&ts[0], &ts[1], &ts[2]))?))
        }
        Clamp => {
            let t = |i: usize| it.tensor(op.operands[i]);
            Ok(one(cx.wrap(ew::clamp(t(0)?, t(1)?, t(2)?))?))
        }
        Convert => Ok(one(
            cx.wrap(convert::convert(it.tensor(op.operands[0])?, cx.out(0)?))?
        )),
        BitcastConvert => Ok(one(
            cx.wrap(convert::bitcast(it.tensor(op.operands[0])?, cx.out(0)?))?
        )),
        While => it.exec_while(id),
        If | Case => it.exec_branch(id),
        Call => {
            let name = match op.attrs.get("callee") {
                Some(Attr::Symbol(s)) => s.clone(),
                _ => return Err(cx.err("missing callee")),
            };
            let args = op
                .operands
                .iter()
                .map(|&v| it.get(v).cloned())
                .collect::<Res<_>>()?;
            it.call(&name, args)
        }
        Composite => {
            let name = match op.attrs.get("decomposition") {
                Some(Attr::Symbol(s)) => s.clone(),
                _ => return Err(cx.err("missing decomposition")),
            };
            let args = op
                .operands
                .iter()
                .map(|&v| it.get(v).cloned())
                .collect::<Res<_>>()?;
            it.call(&name, args)
        }
        // Sharding annotations are value identities on one device.
        OptimizationBarrier | SdyShardingConstraint | SdyReshard => {
            op.operands.iter().map(|&v| it.get(v).cloned()).collect()
        }
        Tuple => Ok(vec![Val::Tuple(
            op.operands
                .iter()
                .map(|&v| it.get(v).cloned())
                .collect::<Res<_>>()?,
        )]),
        GetTupleElement => {
            let i = cx.int("index")? as usize;
            match it.get(op.operands[0])? {
                Val::Tuple(vs) => Ok(vec![vs
                    .get(i)
                    .cloned()
                    .ok_or_else(|| cx.err("index out of range"))?]),
                _ => Err(cx.err("operand is not a tuple")),
            }
        }
        AfterAll | CreateToken => Ok(vec![Val::Token]),
        ReplicaId | PartitionId => {
            let v = if k == ReplicaId {
                it.replica
            } else {
                it.partition
            };
            Ok(one(cx.wrap(Tensor::from_i64(
                cx.out(0)?.elem,
                &[],
                &[v as i64],
            ))?))
        }
        GetDimensionSize => {
            let t = it.tensor(op.operands[0])?;
            let d = cx.int("dimension")? as usize;
            let n = *t.shape().get(d).ok_or_else(|| cx.err("bad dimension"))?;
            Ok(one(cx.wrap(Tensor::from_i64(
                cx.out(0)?.elem,
                &[],
                &[n],
            ))?))
        }
        CustomCall => crate::custom::exec(it, &cx),
        CheckExpectEq
        | CheckExpectEqConst
        | CheckExpectAlmostEq
        | CheckExpectAlmostEqConst
        | CheckExpectClose => crate::check::exec(it, &cx),
        Reduce | ReduceWindow | SelectAndScatter | Sort | Map | ChloTopK => reduce::exec(it, &cx),
        Scatter => crate::gather::scatter(it, &cx),
        AllReduce | AllGather | ReduceScatter | AllToAll | CollectivePermute
        | CollectiveBroadcast | CrossReplicaSum => crate::collectives::exec(it, &cx),
        _ => {
            let ins: Vec<&Tensor> = op
                .operands
                .iter()
                .map(|&v| it.tensor(v))
                .collect::<Res<_>>()?;
            data_op(&cx, &ins)
        }
    }
}

fn elementwise_op(it: &mut Interp<'_>, cx: &Ctx<'_>) -> Res<Vec<Val>> {
    let op = cx.op;
    let out = cx.out(0)?;
    let a = it.tensor(op.operands[0])?;
    let r = match op.kind {
        OpKind::ReducePrecision => {
            let e = cx.int("exponent_bits")? as u32;
            let mb = cx.int("mantissa_bits")? as u32;
            ew_reduce_precision(a, e, mb)
        }
        _ if op.operands.len() == 1 => ew::unary(op.kind, a, out),
        _ => ew::binary(op.kind, a, it.tensor(op.operands[1])?, out),
    };
    Ok(one(cx.wrap(r)?))
}

fn ew_reduce_precision(a: &Tensor, e: u32, mb: u32) -> Result<Tensor, String> {
    use crate::floatfmt::{reduce_precision_f32, reduce_precision_f64};
    use crate::tensor::{round_f32, Data};
    let data = match a.data() {
        Data::F32(v) => Data::F32(
            v.iter()
                .map(|&x| round_f32(a.elem(), reduce_precision_f32(x, e, mb)))
                .collect(),
        ),
        Data::F64(v) => Data::F64(v.iter().map(|&x| reduce_precision_f64(x, e, mb)).collect()),
        _ => return Err("reduce_precision needs a float operand".into()),
    };
    Tensor::new(a.ty().clone(), data)
}

/// Broadcasts `t` to `ty` numpy-style (right-aligned) or along `bdims`.
fn broadcast_numpy(t: &Tensor, ty: &TensorType, bdims: Option<&[i64]>) -> Result<Tensor, String> {
    if t.shape() == &*ty.shape {
        return Ok(t.clone());
    }
    let off = ty.rank() as i64 - t.rank() as i64;
    let dims: Vec<i64> = match bdims {
        Some(d) => d.to_vec(),
        None => (0..t.rank() as i64).map(|i| i + off).collect(),
    };
    shape::broadcast_in_dim(t, &dims, ty)
}

/// The two operands of a (CHLO broadcasting) binary op, broadcast to the result shape.
fn broadcast_pair(it: &Interp<'_>, cx: &Ctx<'_>) -> Res<(Tensor, Tensor)> {
    let a = it.tensor(cx.op.operands[0])?;
    let b = it.tensor(cx.op.operands[1])?;
    if a.shape() == b.shape() {
        return Ok((a.clone(), b.clone()));
    }
    let out = cx.out(0)?;
    let bd = cx.op.attrs.i64_array("broadcast_dimensions");
    let big = |t: &Tensor| -> Res<Tensor> {
        let ty = TensorType::new(t.elem(), &out.shape);
        let dims = if t.rank() < out.rank() {
            bd.as_deref()
        } else {
            None
        };
        cx.wrap(broadcast_numpy(t, &ty, dims))
    };
    Ok((big(a)?, big(b)?))
}

/// Ops that only read tensors and attributes.
fn data_op(cx: &Ctx<'_>, ins: &[&Tensor]) -> Res<Vec<Val>> {
    use OpKind::*;
    let arg = |i: usize| {
        ins.get(i)
            .copied()
            .ok_or_else(|| cx.err(format!("missing operand {i}")))
    };
    let t = match cx.op.kind {
        Iota | DynamicIota => shape::iota(cx.out(0)?, cx.int("iota_dimension")? as usize),
        BroadcastInDim | DynamicBroadcastInDim => {
            shape::broadcast_in_dim(arg(0)?, &cx.ints("broadcast_dimensions")?, cx.out(0)?)
        }
        Broadcast => shape::broadcast_prefix(arg(0)?, cx.out(0)?),
        Reshape | DynamicReshape => shape::reshape(arg(0)?, cx.out(0)?),
        Transpose => shape::transpose(arg(0)?, &cx.ints("permutation")?, cx.out(0)?),
        Reverse => shape::reverse(arg(0)?, &cx.ints("dimensions")?),
        Slice => {
            let x = arg(0)?;
            let st = cx.ints_or("strides", vec![1; x.rank()]);
            shape::slice(x, &cx.ints("start_indices")?, &st, cx.out(0)?)
        }
        RealDynamicSlice => {
            let x = arg(0)?;
            let s = arg(1)?.to_i64_vec();
            let st = arg(3)?.to_i64_vec();
            shape::slice(x, &s, &st, cx.out(0)?)
        }
        DynamicSlice => {
            let starts: Vec<i64> = ins[1..].iter().map(|t| t.get_i64(0)).collect();
            shape::dynamic_slice(arg(0)?, &starts, cx.out(0)?)
        }
        DynamicUpdateSlice => {
            let starts: Vec<i64> = ins[2..].iter().map(|t| t.get_i64(0)).collect();
            shape::dynamic_update_slice(arg(0)?, arg(1)?, &starts)
        }
        Concatenate => shape::concatenate(ins, cx.int("dimension")? as usize, cx.out(0)?),
        Pad => shape::pad(
            arg(0)?,
            arg(1)?,
            &cx.ints("edge_padding_low")?,
            &cx.ints("interior_padding")?,
            cx.out(0)?,
        ),
        DynamicPad => shape::pad(
            arg(0)?,
            arg(1)?,
            &arg(2)?.to_i64_vec(),
            &arg(4)?.to_i64_vec(),
            cx.out(0)?,
        ),
        Gather | DynamicGather | TorchIndexSelect => {
            return crate::gather::exec(cx, ins).map(|v| v.into_iter().map(Val::T).collect())
        }
        DotGeneral | Dot => linalg::dot_op(cx, ins),
        Convolution => crate::conv::convolution(cx, ins),
        Cholesky | TriangularSolve | Fft => linalg::other(cx, ins),
        BatchNormInference | BatchNormTraining | BatchNormGrad => {
            return crate::batchnorm::exec(cx, ins).map(|v| v.into_iter().map(Val::T).collect())
        }
        RngBitGenerator => return crate::rng::rng_bit_generator(cx, ins),
        k => return Err(InterpError::UnsupportedOp(k.name().to_string())),
    };
    Ok(one(cx.wrap(t)?))
}
