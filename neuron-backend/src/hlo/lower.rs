//! Lowering of one IR op to HLO instructions: the dispatch and the region-free ops.
//!
//! Owns: [`Emitter::lower_op`] and the StableHLO-op -> HLO-opcode table. Ops with regions
//! or called computations are in `regions.rs`, CHLO and custom calls in `chlo.rs`.
//! Invariants: after `lower_op(op)` every result of `op` is bound in `Comp::values`; an op
//! that cannot be expressed in HLO is an `HloError::Unsupported` naming the op, never a
//! silently wrong instruction.

use super::emit::{inst, Comp, Emitter};
use super::proto::{
    ConvolutionDimensionNumbers, DotDimensionNumbers, GatherDimensionNumbers, HloInstructionProto,
    PaddingConfig, PaddingConfigDimension, Precision, PrecisionConfig, PrimitiveType,
    SliceDimensions, Window, WindowDimension,
};
use super::shape::{self, dense_literal, with_prim};
use super::HloError;
use neuronc_ir::{Attr, ElemType, Op, OpId, OpKind};

/// The HLO opcode of ops that map one-to-one (same operands, one result, no attributes).
fn direct_opcode(k: OpKind) -> Option<&'static str> {
    use OpKind as K;
    Some(match k {
        K::Abs => "abs",
        K::Cbrt => "cbrt",
        K::Ceil => "ceil",
        K::CountLeadingZeros => "count-leading-zeros",
        K::Cosine => "cosine",
        K::Exponential => "exponential",
        K::ExponentialMinusOne => "exponential-minus-one",
        K::Floor => "floor",
        K::Imag => "imag",
        K::IsFinite => "is-finite",
        K::Log => "log",
        K::LogPlusOne => "log-plus-one",
        K::Logistic => "logistic",
        K::Negate => "negate",
        K::Not => "not",
        K::Popcnt => "popcnt",
        K::Real => "real",
        K::RoundNearestAfz => "round-nearest-afz",
        K::RoundNearestEven => "round-nearest-even",
        K::Rsqrt => "rsqrt",
        K::Sign => "sign",
        K::Sine => "sine",
        K::Sqrt => "sqrt",
        K::Tan | K::ChloTan => "tan",
        K::Tanh => "tanh",
        K::Convert => "convert",
        K::BitcastConvert => "bitcast-convert",
        K::Add => "add",
        K::And => "and",
        K::Atan2 => "atan2",
        K::Complex => "complex",
        K::Divide => "divide",
        K::Maximum => "maximum",
        K::Minimum => "minimum",
        K::Multiply => "multiply",
        K::Or => "or",
        K::Power => "power",
        K::Remainder => "remainder",
        K::ShiftLeft => "shift-left",
        K::ShiftRightArithmetic => "shift-right-arithmetic",
        K::ShiftRightLogical => "shift-right-logical",
        K::Subtract => "subtract",
        K::Xor => "xor",
        K::Reshape => "reshape",
        K::ReplicaId => "replica-id",
        K::PartitionId => "partition-id",
        K::AfterAll | K::CreateToken => "after-all",
        K::Tuple => "tuple",
        _ => return None,
    })
}

/// A required integer-list attribute.
pub fn ints(o: &Op, name: &str) -> Result<Vec<i64>, HloError> {
    o.attrs.i64_array(name).ok_or_else(|| missing(o, name))
}

/// An optional integer-list attribute.
pub fn opt_ints(o: &Op, name: &str) -> Option<Vec<i64>> {
    o.attrs.i64_array(name)
}

/// A required integer attribute.
pub fn int(o: &Op, name: &str) -> Result<i64, HloError> {
    o.attrs.int(name).ok_or_else(|| missing(o, name))
}

pub fn missing(o: &Op, name: &str) -> HloError {
    HloError::Malformed(format!(
        "{} without a valid `{name}` attribute",
        o.kind.name()
    ))
}

/// A boolean attribute, `false` when absent.
pub fn flag(o: &Op, name: &str) -> bool {
    matches!(o.attrs.get(name), Some(Attr::Bool(true)) | Some(Attr::Unit))
}

impl Emitter<'_> {
    /// Lowers `op` into `c`, binding its results.
    pub fn lower_op(&mut self, c: &mut Comp, op: OpId) -> Result<(), HloError> {
        let m = self.m;
        let o = m.op(op);
        let operands = o
            .operands
            .iter()
            .map(|&v| c.get(v))
            .collect::<Result<Vec<_>, _>>()?;
        // Shardy annotations are identities on one device (the frameworks partition before
        // the Neuron compiler sees the graph; `compile` strips them before this point).
        if matches!(o.kind, OpKind::SdyShardingConstraint | OpKind::SdyReshard) {
            if let ([r], [x]) = (o.results.as_slice(), operands.as_slice()) {
                c.values.insert(*r, *x);
                return Ok(());
            }
        }
        if let Some(code) = direct_opcode(o.kind) {
            let s = self.vshape(o.results[0])?;
            let id = self.add3(c, code, s, operands);
            c.values.insert(o.results[0], id);
            return Ok(());
        }
        let id = match self.lower_simple(c, o, &operands)? {
            Some(i) => self.add(c, i),
            None => return self.lower_complex(c, op, operands),
        };
        if let Some(&r) = o.results.first() {
            c.values.insert(r, id);
        }
        Ok(())
    }

    /// Single-instruction ops with attributes: returns the instruction, or `None` when the
    /// op needs more than one instruction.
    fn lower_simple(
        &mut self,
        c: &mut Comp,
        o: &Op,
        ops: &[i64],
    ) -> Result<Option<HloInstructionProto>, HloError> {
        use OpKind as K;
        let Some(&res) = o.results.first() else {
            return Ok(None);
        };
        let s = self.vshape(res)?;
        let mut i = inst("", s.clone(), ops.to_vec());
        match o.kind {
            K::Iota => {
                i.opcode = "iota".into();
                i.dimensions = vec![int(o, "iota_dimension")?];
            }
            K::BroadcastInDim => {
                i.opcode = "broadcast".into();
                i.dimensions = ints(o, "broadcast_dimensions")?;
            }
            K::Broadcast => {
                let rank = s.dimensions.len() as i64;
                let orank = c.shape(ops[0]).dimensions.len() as i64;
                i.opcode = "broadcast".into();
                i.dimensions = (rank - orank..rank).collect();
            }
            K::Transpose => {
                i.opcode = "transpose".into();
                i.dimensions = ints(o, "permutation")?;
            }
            K::Reverse => {
                i.opcode = "reverse".into();
                i.dimensions = ints(o, "dimensions")?;
            }
            K::Concatenate => {
                i.opcode = "concatenate".into();
                i.dimensions = vec![int(o, "dimension")?];
            }
            K::Slice => {
                i.opcode = "slice".into();
                let start = ints(o, "start_indices")?;
                let limit = ints(o, "limit_indices")?;
                let strides = opt_ints(o, "strides").unwrap_or_else(|| vec![1; start.len()]);
                i.slice_dimensions = (0..start.len())
                    .map(|d| SliceDimensions {
                        start: start[d],
                        limit: limit.get(d).copied().unwrap_or(start[d]),
                        stride: strides.get(d).copied().unwrap_or(1),
                    })
                    .collect();
            }
            K::DynamicSlice => {
                i.opcode = "dynamic-slice".into();
                i.dynamic_slice_sizes = ints(o, "slice_sizes")?;
            }
            K::DynamicUpdateSlice => i.opcode = "dynamic-update-slice".into(),
            K::Pad => {
                i.opcode = "pad".into();
                let lo = ints(o, "edge_padding_low")?;
                let hi = ints(o, "edge_padding_high")?;
                let interior = opt_ints(o, "interior_padding").unwrap_or_else(|| vec![0; lo.len()]);
                i.padding_config = Some(PaddingConfig {
                    dimensions: (0..lo.len())
                        .map(|d| PaddingConfigDimension {
                            edge_padding_low: lo[d],
                            edge_padding_high: hi.get(d).copied().unwrap_or(0),
                            interior_padding: interior.get(d).copied().unwrap_or(0),
                        })
                        .collect(),
                });
            }
            K::Gather => {
                i.opcode = "gather".into();
                let Some(Attr::GatherDims(g)) = o.attrs.get("dimension_numbers") else {
                    return Err(missing(o, "dimension_numbers"));
                };
                i.gather_dimension_numbers = Some(GatherDimensionNumbers {
                    offset_dims: g.offset_dims.clone(),
                    collapsed_slice_dims: g.collapsed_slice_dims.clone(),
                    start_index_map: g.start_index_map.clone(),
                    index_vector_dim: g.index_vector_dim,
                    operand_batching_dims: g.operand_batching_dims.clone(),
                    start_indices_batching_dims: g.start_indices_batching_dims.clone(),
                });
                i.gather_slice_sizes = ints(o, "slice_sizes")?;
                i.indices_are_sorted = flag(o, "indices_are_sorted");
            }
            K::DotGeneral | K::Dot => self.dot(c, o, &mut i)?,
            K::Convolution => self.convolution(c, o, &mut i)?,
            K::GetTupleElement => {
                i.opcode = "get-tuple-element".into();
                i.tuple_index = int(o, "index")?;
            }
            K::ReducePrecision => {
                i.opcode = "reduce-precision".into();
                i.exponent_bits = int(o, "exponent_bits")? as i32;
                i.mantissa_bits = int(o, "mantissa_bits")? as i32;
            }
            K::Compare => {
                i.opcode = "compare".into();
                self.compare_attrs(c, o, ops[0], &mut i)?;
            }
            K::GetDimensionSize => {
                let d = int(o, "dimension")? as usize;
                let size = c.shape(ops[0]).dimensions.get(d).copied().unwrap_or(0);
                i = inst("constant", s.clone(), vec![]);
                i.literal = Some(shape::literal(
                    ElemType::Int(32),
                    &(size as i32).to_le_bytes(),
                    s,
                )?);
            }
            K::Constant => {
                if let Some(Attr::Elements(d)) = o.attrs.get("value") {
                    if d.is_splat() && d.len > 1 {
                        return Ok(None);
                    }
                }
                return self.constant(o, s).map(Some);
            }
            K::BatchNormInference => {
                i.opcode = "batch-norm-inference".into();
                self.batch_norm_attrs(o, &mut i)?;
            }
            K::Cholesky => {
                i.opcode = "cholesky".into();
                i.cholesky_options = Some(super::proto::CholeskyOptions {
                    lower: flag(o, "lower"),
                });
            }
            K::TriangularSolve => self.triangular_solve(o, &mut i)?,
            K::Fft => self.fft(o, &mut i)?,
            K::Rng => {
                i.opcode = "rng".into();
                i.operand_ids.truncate(2);
                i.distribution = match o.attrs.enum_value("rng_distribution") {
                    Some("NORMAL") => 2,
                    _ => 1,
                };
            }
            _ => return Ok(None),
        }
        Ok(Some(i))
    }

    fn constant(
        &mut self,
        o: &Op,
        s: super::proto::ShapeProto,
    ) -> Result<HloInstructionProto, HloError> {
        let Some(Attr::Elements(d)) = o.attrs.get("value") else {
            return Err(missing(o, "value"));
        };
        let mut i = inst("constant", s.clone(), vec![]);
        i.literal = Some(dense_literal(d, s)?);
        Ok(i)
    }

    /// Splat constants of more than one element become a scalar constant and a broadcast.
    pub fn lower_splat_constant(&mut self, c: &mut Comp, op: OpId) -> Result<bool, HloError> {
        let o = self.m.op(op);
        let Some(Attr::Elements(d)) = o.attrs.get("value") else {
            return Ok(false);
        };
        if !d.is_splat() || d.len <= 1 {
            return Ok(false);
        }
        let s = self.vshape(o.results[0])?;
        let scalar_shape = shape::with_dims(&s, &[]);
        let bytes = d.element_bytes(0).to_vec();
        let mut k = inst("constant", scalar_shape.clone(), vec![]);
        k.literal = Some(shape::literal(d.elem, &bytes, scalar_shape)?);
        let k = self.add(c, k);
        let b = self.add3(c, "broadcast", s, vec![k]);
        c.values.insert(o.results[0], b);
        Ok(true)
    }

    fn dot(&mut self, c: &Comp, o: &Op, i: &mut HloInstructionProto) -> Result<(), HloError> {
        i.opcode = "dot".into();
        let dims = if o.kind == OpKind::Dot {
            let lr = c.shape(i.operand_ids[0]).dimensions.len() as i64;
            DotDimensionNumbers {
                lhs_contracting_dimensions: vec![lr - 1],
                rhs_contracting_dimensions: vec![0],
                ..DotDimensionNumbers::default()
            }
        } else {
            let Some(Attr::DotDims(d)) = o.attrs.get("dot_dimension_numbers") else {
                return Err(missing(o, "dot_dimension_numbers"));
            };
            DotDimensionNumbers {
                lhs_contracting_dimensions: d.lhs_contracting.clone(),
                rhs_contracting_dimensions: d.rhs_contracting.clone(),
                lhs_batch_dimensions: d.lhs_batching.clone(),
                rhs_batch_dimensions: d.rhs_batching.clone(),
            }
        };
        i.dot_dimension_numbers = Some(dims);
        i.precision_config = precision(o);
        Ok(())
    }

    fn convolution(
        &mut self,
        c: &Comp,
        o: &Op,
        i: &mut HloInstructionProto,
    ) -> Result<(), HloError> {
        i.opcode = "convolution".into();
        let Some(Attr::ConvDims(d)) = o.attrs.get("dimension_numbers") else {
            return Err(missing(o, "dimension_numbers"));
        };
        let kernel = c.shape(i.operand_ids[1]).dimensions.clone();
        let n = d.kernel_spatial.len();
        let sizes: Vec<i64> = d
            .kernel_spatial
            .iter()
            .map(|&k| kernel.get(k as usize).copied().unwrap_or(1))
            .collect();
        let reversal = match o.attrs.get("window_reversal") {
            Some(Attr::BoolArray(b)) => b.clone(),
            _ => vec![false; n],
        };
        i.window = Some(window(
            &sizes,
            opt_ints(o, "window_strides"),
            opt_ints(o, "padding"),
            opt_ints(o, "lhs_dilation"),
            opt_ints(o, "rhs_dilation"),
            &reversal,
        ));
        i.convolution_dimension_numbers = Some(ConvolutionDimensionNumbers {
            input_batch_dimension: d.input_batch,
            input_feature_dimension: d.input_feature,
            input_spatial_dimensions: d.input_spatial.clone(),
            kernel_input_feature_dimension: d.kernel_input_feature,
            kernel_output_feature_dimension: d.kernel_output_feature,
            kernel_spatial_dimensions: d.kernel_spatial.clone(),
            output_batch_dimension: d.output_batch,
            output_feature_dimension: d.output_feature,
            output_spatial_dimensions: d.output_spatial.clone(),
        });
        i.feature_group_count = o.attrs.int("feature_group_count").unwrap_or(1);
        i.batch_group_count = o.attrs.int("batch_group_count").unwrap_or(1);
        i.precision_config = precision(o);
        Ok(())
    }

    /// `comparison_direction` and `comparison_type` of a compare.
    pub fn compare_attrs(
        &self,
        c: &Comp,
        o: &Op,
        lhs: i64,
        i: &mut HloInstructionProto,
    ) -> Result<(), HloError> {
        i.comparison_direction = o
            .attrs
            .enum_value("comparison_direction")
            .ok_or_else(|| missing(o, "comparison_direction"))?
            .to_string();
        i.comparison_type = match o.attrs.enum_value("compare_type") {
            Some(t) if t != "NOTYPE" => t.to_string(),
            _ => default_comparison_type(c.shape(lhs).element_type).to_string(),
        };
        Ok(())
    }

    fn batch_norm_attrs(&self, o: &Op, i: &mut HloInstructionProto) -> Result<(), HloError> {
        i.epsilon = match o.attrs.get("epsilon") {
            Some(Attr::Float(v, _)) => *v as f32,
            _ => return Err(missing(o, "epsilon")),
        };
        i.feature_index = int(o, "feature_index")?;
        Ok(())
    }

    fn triangular_solve(&self, o: &Op, i: &mut HloInstructionProto) -> Result<(), HloError> {
        use super::proto::TriangularTranspose as T;
        i.opcode = "triangular-solve".into();
        let t = match o.attrs.enum_value("transpose_a") {
            Some("TRANSPOSE") => T::Transpose,
            Some("ADJOINT") => T::Adjoint,
            _ => T::NoTranspose,
        };
        i.triangular_solve_options = Some(super::proto::TriangularSolveOptions {
            left_side: flag(o, "left_side"),
            lower: flag(o, "lower"),
            unit_diagonal: flag(o, "unit_diagonal"),
            transpose_a: t as i32,
        });
        Ok(())
    }

    fn fft(&self, o: &Op, i: &mut HloInstructionProto) -> Result<(), HloError> {
        i.opcode = "fft".into();
        i.fft_type = match o.attrs.enum_value("fft_type") {
            Some("IFFT") => 1,
            Some("RFFT") => 2,
            Some("IRFFT") => 3,
            _ => 0,
        };
        i.fft_length = ints(o, "fft_length")?;
        Ok(())
    }

    /// Ops that need several instructions, regions or called computations.
    fn lower_complex(&mut self, c: &mut Comp, op: OpId, ops: Vec<i64>) -> Result<(), HloError> {
        use OpKind as K;
        let o = self.m.op(op);
        match o.kind {
            K::Constant if self.lower_splat_constant(c, op)? => Ok(()),
            K::Select => self.select(c, op, ops),
            K::Clamp => self.clamp(c, op, ops),
            K::BatchNormTraining | K::BatchNormGrad => {
                let shapes = o
                    .results
                    .iter()
                    .map(|&r| self.vshape(r))
                    .collect::<Result<Vec<_>, _>>()?;
                let code = if o.kind == K::BatchNormTraining {
                    "batch-norm-training"
                } else {
                    "batch-norm-grad"
                };
                let mut i = inst(code, shape::tuple_shape(shapes), ops);
                self.batch_norm_attrs(o, &mut i)?;
                let t = self.add(c, i);
                self.bind_tuple(c, op, t)
            }
            K::OptimizationBarrier => {
                let t = self.tuple(c, ops);
                let s = c.shape(t).clone();
                let b = self.add3(c, "opt-barrier", s, vec![t]);
                self.bind_tuple(c, op, b)
            }
            K::RngBitGenerator => {
                let shapes = o
                    .results
                    .iter()
                    .map(|&r| self.vshape(r))
                    .collect::<Result<Vec<_>, _>>()?;
                let mut i = inst("rng-bit-generator", shape::tuple_shape(shapes), ops);
                i.rng_algorithm = match o.attrs.enum_value("rng_algorithm") {
                    Some("THREE_FRY") => 1,
                    Some("PHILOX") => 2,
                    _ => 0,
                };
                let t = self.add(c, i);
                self.bind_tuple(c, op, t)
            }
            _ => self.lower_region_op(c, op, ops),
        }
    }

    /// `select`, broadcasting a scalar predicate.
    fn select(&mut self, c: &mut Comp, op: OpId, ops: Vec<i64>) -> Result<(), HloError> {
        let o = self.m.op(op);
        let s = self.vshape(o.results[0])?;
        let pred_shape = with_prim(&s, PrimitiveType::Pred);
        let pred = if c.shape(ops[0]).dimensions.len() != s.dimensions.len() {
            self.add3(c, "broadcast", pred_shape, vec![ops[0]])
        } else {
            ops[0]
        };
        let id = self.add3(c, "select", s, vec![pred, ops[1], ops[2]]);
        c.values.insert(o.results[0], id);
        Ok(())
    }

    /// `clamp`, broadcasting scalar bounds.
    fn clamp(&mut self, c: &mut Comp, op: OpId, ops: Vec<i64>) -> Result<(), HloError> {
        let o = self.m.op(op);
        let s = self.vshape(o.results[0])?;
        let mut args = Vec::with_capacity(3);
        for &x in &ops {
            let b = if c.shape(x).dimensions.len() != s.dimensions.len() {
                self.broadcast_scalar(c, x, &s)
            } else {
                x
            };
            args.push(b);
        }
        let id = self.add3(c, "clamp", s, args);
        c.values.insert(o.results[0], id);
        Ok(())
    }
}

/// The `PrecisionConfig` of a dot or convolution, if the op has `precision_config`.
pub fn precision(o: &Op) -> Option<PrecisionConfig> {
    let Some(Attr::Array(items)) = o.attrs.get("precision_config") else {
        return None;
    };
    let operand_precision = items
        .iter()
        .map(|a| match a {
            Attr::Enum(e) if e.value == "HIGH" => Precision::High as i32,
            Attr::Enum(e) if e.value == "HIGHEST" => Precision::Highest as i32,
            _ => Precision::Default as i32,
        })
        .collect();
    Some(PrecisionConfig { operand_precision })
}

/// XLA's default comparison type for operands of element type `p`.
pub fn default_comparison_type(p: i32) -> &'static str {
    use PrimitiveType as P;
    match P::try_from(p) {
        Ok(P::Pred | P::U2 | P::U4 | P::U8 | P::U16 | P::U32 | P::U64) => "UNSIGNED",
        Ok(P::S2 | P::S4 | P::S8 | P::S16 | P::S32 | P::S64) => "SIGNED",
        _ => "FLOAT",
    }
}

/// A window from StableHLO's per-dimension lists (`padding` flattened `[lo0, hi0, ...]`).
pub fn window(
    sizes: &[i64],
    strides: Option<Vec<i64>>,
    padding: Option<Vec<i64>>,
    base_dilation: Option<Vec<i64>>,
    window_dilation: Option<Vec<i64>>,
    reversal: &[bool],
) -> Window {
    let at = |v: &Option<Vec<i64>>, d: usize, dflt: i64| {
        v.as_ref().and_then(|v| v.get(d).copied()).unwrap_or(dflt)
    };
    Window {
        dimensions: sizes
            .iter()
            .enumerate()
            .map(|(d, &size)| WindowDimension {
                size,
                stride: at(&strides, d, 1),
                padding_low: at(&padding, 2 * d, 0),
                padding_high: at(&padding, 2 * d + 1, 0),
                window_dilation: at(&window_dilation, d, 1),
                base_dilation: at(&base_dilation, d, 1),
                window_reversal: reversal.get(d).copied().unwrap_or(false),
            })
            .collect(),
    }
}
