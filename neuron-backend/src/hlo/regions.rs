//! Lowering of ops with regions or called computations: reductions, windows, sort,
//! scatter, map, control flow, calls and collectives.
//!
//! Owns: [`Emitter::lower_region_op`].
//! Invariants: region-bodied ops whose bodies HLO evaluates per element (reduce, sort,
//! scatter, map, reducers of collectives) become computations with one scalar parameter
//! per block argument and must not use values of enclosing regions; control flow
//! (`while`, `if`, `case`) may, and passes the captured values explicitly through its
//! tuple operand, because HLO computations cannot capture.

use super::emit::{inst, Comp, Emitter, RootKind};
use super::lower::{flag, int, ints, missing, opt_ints, window};
use super::proto::{ReplicaGroup, ScatterDimensionNumbers, ShapeProto, SourceTarget};
use super::shape::tuple_shape;
use super::HloError;
use neuronc_ir::{Attr, Op, OpId, OpKind, ValueId};

impl Emitter<'_> {
    /// Lowers an op with regions / called computations (or a CHLO op, or reports it as
    /// unsupported).
    pub fn lower_region_op(
        &mut self,
        c: &mut Comp,
        op: OpId,
        ops: Vec<i64>,
    ) -> Result<(), HloError> {
        use OpKind as K;
        let o = self.m.op(op);
        match o.kind {
            K::Reduce => {
                let body = self.pure_region(o, 0, "reducer")?;
                let mut i = self.multi_result_inst(o, "reduce", ops)?;
                i.dimensions = ints(o, "dimensions")?;
                i.called_computation_ids = vec![body];
                self.emit_multi(c, op, i)
            }
            K::ReduceWindow => {
                let body = self.pure_region(o, 0, "reducer")?;
                let mut i = self.multi_result_inst(o, "reduce-window", ops)?;
                let sizes = ints(o, "window_dimensions")?;
                i.window = Some(window(
                    &sizes,
                    opt_ints(o, "window_strides"),
                    opt_ints(o, "padding"),
                    opt_ints(o, "base_dilations"),
                    opt_ints(o, "window_dilations"),
                    &[],
                ));
                i.called_computation_ids = vec![body];
                self.emit_multi(c, op, i)
            }
            K::SelectAndScatter => {
                let select = self.pure_region(o, 0, "select")?;
                let scatter = self.pure_region(o, 1, "scatter")?;
                let mut i = self.multi_result_inst(o, "select-and-scatter", ops)?;
                let sizes = ints(o, "window_dimensions")?;
                i.window = Some(window(
                    &sizes,
                    opt_ints(o, "window_strides"),
                    opt_ints(o, "padding"),
                    None,
                    None,
                    &[],
                ));
                i.called_computation_ids = vec![select, scatter];
                self.emit_multi(c, op, i)
            }
            K::Sort => {
                let cmp = self.pure_region(o, 0, "comparator")?;
                let mut i = self.multi_result_inst(o, "sort", ops)?;
                i.dimensions = vec![o.attrs.int("dimension").unwrap_or(-1)];
                if i.dimensions[0] < 0 {
                    let rank = self.vshape(o.results[0])?.dimensions.len() as i64;
                    i.dimensions[0] += rank;
                }
                i.is_stable = flag(o, "is_stable");
                i.called_computation_ids = vec![cmp];
                self.emit_multi(c, op, i)
            }
            K::Map => {
                let f = self.pure_region(o, 0, "mapped")?;
                let mut i = self.multi_result_inst(o, "map", ops)?;
                i.dimensions = ints(o, "dimensions")?;
                i.called_computation_ids = vec![f];
                self.emit_multi(c, op, i)
            }
            K::Scatter => self.scatter(c, op, ops),
            K::While => self.while_loop(c, op, ops),
            K::If | K::Case => self.conditional(c, op, ops),
            K::Call | K::Composite => {
                let attr = if o.kind == K::Call {
                    "callee"
                } else {
                    "decomposition"
                };
                let callee = match o.attrs.get(attr) {
                    Some(Attr::Symbol(s)) => s.clone(),
                    _ => return Err(missing(o, attr)),
                };
                let comp = self.func_comp(&callee)?;
                let shapes = self.result_shapes(o)?;
                let mut i = inst("call", tuple_shape(shapes), ops);
                i.called_computation_ids = vec![comp];
                let t = self.add(c, i);
                self.bind_tuple(c, op, t)
            }
            K::AllReduce | K::AllGather | K::ReduceScatter | K::AllToAll => {
                self.collective(c, op, ops)
            }
            K::CollectivePermute | K::CollectiveBroadcast => {
                let code = if o.kind == K::CollectivePermute {
                    "collective-permute"
                } else {
                    "collective-broadcast"
                };
                let mut i = self.multi_result_inst(o, code, ops)?;
                self.collective_attrs(o, &mut i)?;
                self.emit_multi(c, op, i)
            }
            _ => self.lower_chlo(c, op, ops),
        }
    }

    fn result_shapes(&self, o: &Op) -> Result<Vec<ShapeProto>, HloError> {
        o.results.iter().map(|&r| self.vshape(r)).collect()
    }

    /// An instruction whose shape is the result's (one result) or a tuple of them.
    fn multi_result_inst(
        &self,
        o: &Op,
        code: &str,
        ops: Vec<i64>,
    ) -> Result<super::proto::HloInstructionProto, HloError> {
        let mut shapes = self.result_shapes(o)?;
        let s = if shapes.len() == 1 {
            shapes.pop().unwrap_or_default()
        } else {
            tuple_shape(shapes)
        };
        Ok(inst(code, s, ops))
    }

    /// Adds `i` and binds the op's results to it (one result) or to its elements.
    fn emit_multi(
        &mut self,
        c: &mut Comp,
        op: OpId,
        i: super::proto::HloInstructionProto,
    ) -> Result<(), HloError> {
        let id = self.add(c, i);
        let results = &self.m.op(op).results;
        if results.len() == 1 {
            c.values.insert(results[0], id);
            Ok(())
        } else {
            self.bind_tuple(c, op, id)
        }
    }

    /// The computation of region `idx` of `o`, which may capture outer constants only.
    fn pure_region(&mut self, o: &Op, idx: usize, base: &str) -> Result<i64, HloError> {
        let r = *o.regions.get(idx).ok_or_else(|| {
            HloError::Malformed(format!("{} without region {idx}", o.kind.name()))
        })?;
        let m = self.m;
        let is_constant = |v: &ValueId| match m.value(*v).def {
            neuronc_ir::ValueDef::Result(d, _) => m.op(d).kind == OpKind::Constant,
            neuronc_ir::ValueDef::RegionArg(..) => false,
        };
        if !self.captures(&[r]).iter().all(is_constant) {
            return Err(HloError::Unsupported(format!(
                "{} body uses values defined outside it",
                o.kind.name()
            )));
        }
        self.region_comp(r, base, false)
    }

    fn scatter(&mut self, c: &mut Comp, op: OpId, ops: Vec<i64>) -> Result<(), HloError> {
        let o = self.m.op(op);
        let update = self.pure_region(o, 0, "update")?;
        let Some(Attr::ScatterDims(d)) = o.attrs.get("scatter_dimension_numbers") else {
            return Err(missing(o, "scatter_dimension_numbers"));
        };
        let mut i = self.multi_result_inst(o, "scatter", ops)?;
        i.scatter_dimension_numbers = Some(ScatterDimensionNumbers {
            update_window_dims: d.update_window_dims.clone(),
            inserted_window_dims: d.inserted_window_dims.clone(),
            scatter_dims_to_operand_dims: d.scatter_dims_to_operand_dims.clone(),
            index_vector_dim: d.index_vector_dim,
            input_batching_dims: d.input_batching_dims.clone(),
            scatter_indices_batching_dims: d.scatter_indices_batching_dims.clone(),
        });
        i.indices_are_sorted = flag(o, "indices_are_sorted");
        i.unique_indices = flag(o, "unique_indices");
        i.called_computation_ids = vec![update];
        self.emit_multi(c, op, i)
    }

    /// `while`: the loop state is a tuple of the operands and the captured values; the
    /// body passes the captures through unchanged.
    fn while_loop(&mut self, c: &mut Comp, op: OpId, ops: Vec<i64>) -> Result<(), HloError> {
        let o = self.m.op(op);
        let (cond_r, body_r) = match o.regions.as_slice() {
            [a, b] => (*a, *b),
            _ => return Err(HloError::Malformed("while needs two regions".into())),
        };
        let caps = self.captures(&[cond_r, body_r]);
        let mut elems = ops;
        for &v in &caps {
            elems.push(c.get(v)?);
        }
        let init = self.tuple(c, elems);
        let state = c.shape(init).clone();
        let cond = self.capture_comp(cond_r, "cond", state.clone(), &caps, RootKind::Single)?;
        let body = self.capture_comp(
            body_r,
            "body",
            state.clone(),
            &caps,
            RootKind::TupleWithCaptures,
        )?;
        let mut i = inst("while", state, vec![init]);
        // XLA's order of a while's called computations: body, then condition.
        i.called_computation_ids = vec![body, cond];
        let w = self.add(c, i);
        self.bind_tuple(c, op, w)
    }

    /// `if` / `case`: each branch gets a tuple of the values it captures.
    fn conditional(&mut self, c: &mut Comp, op: OpId, ops: Vec<i64>) -> Result<(), HloError> {
        let o = self.m.op(op);
        // `if` becomes an index conditional: s32(pred) selects branch 1 (true) or 0.
        let (index, regions) = if o.kind == OpKind::If {
            let s = super::shape::with_prim(c.shape(ops[0]), super::proto::PrimitiveType::S32);
            let idx = self.add3(c, "convert", s, vec![ops[0]]);
            (idx, o.regions.iter().rev().copied().collect::<Vec<_>>())
        } else {
            (ops[0], o.regions.clone())
        };
        let mut operands = vec![index];
        let mut comps = Vec::new();
        for (k, &r) in regions.iter().enumerate() {
            let caps = self.captures(&[r]);
            let elems = caps
                .iter()
                .map(|&v| c.get(v))
                .collect::<Result<Vec<_>, _>>()?;
            let t = self.tuple(c, elems);
            let s = c.shape(t).clone();
            operands.push(t);
            comps.push(self.capture_comp(r, &format!("branch{k}"), s, &caps, RootKind::Tuple)?);
        }
        let mut i = inst("conditional", tuple_shape(self.result_shapes(o)?), operands);
        i.called_computation_ids = comps;
        let id = self.add(c, i);
        self.bind_tuple(c, op, id)
    }

    fn collective(&mut self, c: &mut Comp, op: OpId, ops: Vec<i64>) -> Result<(), HloError> {
        use OpKind as K;
        let o = self.m.op(op);
        let code = match o.kind {
            K::AllReduce => "all-reduce",
            K::AllGather => "all-gather",
            K::ReduceScatter => "reduce-scatter",
            _ => "all-to-all",
        };
        let mut i = self.multi_result_inst(o, code, ops)?;
        self.collective_attrs(o, &mut i)?;
        match o.kind {
            K::AllReduce | K::ReduceScatter => {
                i.called_computation_ids = vec![self.pure_region(o, 0, "reducer")?];
                if o.kind == K::ReduceScatter {
                    i.dimensions = vec![int(o, "scatter_dimension")?];
                }
            }
            K::AllGather => i.dimensions = vec![int(o, "all_gather_dim")?],
            _ => {
                let split = int(o, "split_dimension")?;
                if o.attrs.int("concat_dimension") != Some(split) {
                    return Err(HloError::Unsupported(
                        "all_to_all with split_dimension != concat_dimension".into(),
                    ));
                }
                i.dimensions = vec![split];
            }
        }
        self.emit_multi(c, op, i)
    }

    fn collective_attrs(
        &mut self,
        o: &Op,
        i: &mut super::proto::HloInstructionProto,
    ) -> Result<(), HloError> {
        if let Some(Attr::ChannelHandle { handle, .. }) = o.attrs.get("channel_handle") {
            if *handle > 0 {
                i.channel_id = self.fresh_channel();
            }
        }
        i.use_global_device_ids = flag(o, "use_global_device_ids");
        if let Some(Attr::Elements(d)) = o.attrs.get("replica_groups") {
            let width = self
                .m
                .types
                .tensor_of(d.ty)
                .and_then(|t| t.shape.get(1).copied())
                .unwrap_or(1)
                .max(1) as usize;
            let ids = Attr::Elements(d.clone()).as_i64_array().unwrap_or_default();
            i.replica_groups = ids
                .chunks(width)
                .map(|g| ReplicaGroup {
                    replica_ids: g.iter().copied().filter(|&x| x >= 0).collect(),
                })
                .collect();
        }
        if let Some(pairs) = opt_ints(o, "source_target_pairs") {
            i.source_target_pairs = pairs
                .chunks(2)
                .filter(|p| p.len() == 2)
                .map(|p| SourceTarget {
                    source: p[0],
                    target: p[1],
                })
                .collect();
        }
        Ok(())
    }
}
