//! The emitter: computations under construction, instruction ids, and the lowering of
//! functions and regions into HLO computations.
//!
//! Owns: [`Comp`] (one computation being built: instructions in dependency order, the map
//! from IR values to instruction ids) and [`Emitter`] (module-wide state: the id counter,
//! finished computations, lowered functions).
//! Invariants: ids come from one counter shared by instructions and computations, so they
//! are unique module-wide and assigned in emission order (deterministic); so are the
//! channel ids of collectives (a counter of their own); an instruction
//! is pushed only after its operands; a computation is finished (appended to
//! `Emitter::done`) before any computation that calls it, which is the callee-first order
//! `HloModuleProto.computations` requires.

use super::proto::{HloComputationProto, HloInstructionProto, OpMetadata, ProgramShapeProto};
use super::proto::{PrimitiveType, ShapeProto};
use super::shape::{self, shape_of, tuple_shape};
use super::{HloError, HloOptions};
use neuronc_ir::{Module, OpId, OpKind, RegionId, ValueDef, ValueId};
use rustc_hash::{FxHashMap, FxHashSet};

/// A new instruction with `opcode`, `shape` and `operands` (id and name set on push).
pub fn inst(opcode: &str, shape: ShapeProto, operands: Vec<i64>) -> HloInstructionProto {
    HloInstructionProto {
        opcode: opcode.to_string(),
        shape: Some(shape),
        operand_ids: operands,
        ..HloInstructionProto::default()
    }
}

/// One computation under construction.
pub struct Comp {
    pub base: String,
    pub instrs: Vec<HloInstructionProto>,
    pos: FxHashMap<i64, usize>,
    /// IR value -> instruction id, for the values visible in this computation.
    pub values: FxHashMap<ValueId, i64>,
    pub params: Vec<ShapeProto>,
}

impl Comp {
    pub fn new(base: impl Into<String>) -> Self {
        Comp {
            base: base.into(),
            instrs: Vec::new(),
            pos: FxHashMap::default(),
            values: FxHashMap::default(),
            params: Vec::new(),
        }
    }
    /// The shape of instruction `id` of this computation.
    pub fn shape(&self, id: i64) -> &ShapeProto {
        let i = self.pos[&id];
        self.instrs[i]
            .shape
            .as_ref()
            .expect("every pushed instruction has a shape")
    }
    /// The instruction for an IR value.
    pub fn get(&self, v: ValueId) -> Result<i64, HloError> {
        self.values.get(&v).copied().ok_or_else(|| {
            HloError::Malformed(format!(
                "value {v} is used but not visible in this computation"
            ))
        })
    }
}

/// Module-wide emission state.
pub struct Emitter<'a> {
    pub m: &'a Module,
    pub opts: &'a HloOptions,
    next_id: i64,
    /// Next channel id of a cross-partition collective (see [`Emitter::fresh_channel`]).
    next_channel: i64,
    /// Finished computations, callees first.
    pub done: Vec<HloComputationProto>,
    /// Lowered functions: name -> computation id.
    funcs: FxHashMap<String, i64>,
    in_progress: FxHashSet<String>,
}

impl<'a> Emitter<'a> {
    pub fn new(m: &'a Module, opts: &'a HloOptions) -> Self {
        Emitter {
            m,
            opts,
            next_id: 1,
            next_channel: 1,
            done: Vec::new(),
            funcs: FxHashMap::default(),
            in_progress: FxHashSet::default(),
        }
    }

    pub fn fresh(&mut self) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// A channel id no other collective of the module has. StableHLO programs may share
    /// one `channel_handle` among collectives (jax's `shard_map` gives all of them handle
    /// 1), but XLA treats instructions with equal channel ids as one collective and
    /// rejects such a module when their shapes differ; each collective is its own
    /// channel, as XLA's own passes number them.
    pub fn fresh_channel(&mut self) -> i64 {
        let id = self.next_channel;
        self.next_channel += 1;
        id
    }

    /// Appends `i` to `c` with a fresh id and a `opcode.id` name unless one is set.
    pub fn add(&mut self, c: &mut Comp, mut i: HloInstructionProto) -> i64 {
        let id = self.fresh();
        i.id = id;
        if i.name.is_empty() {
            i.name = format!("{}.{id}", i.opcode);
        }
        c.pos.insert(id, c.instrs.len());
        c.instrs.push(i);
        id
    }

    /// Shorthand for [`Emitter::add`] of [`inst`].
    pub fn add3(&mut self, c: &mut Comp, opcode: &str, shape: ShapeProto, ops: Vec<i64>) -> i64 {
        self.add(c, inst(opcode, shape, ops))
    }

    /// Adds parameter `n` of shape `s`.
    pub fn param(&mut self, c: &mut Comp, s: ShapeProto) -> i64 {
        let n = c.params.len();
        c.params.push(s.clone());
        let mut i = inst("parameter", s, vec![]);
        i.parameter_number = n as i64;
        let id = self.fresh();
        i.id = id;
        i.name = format!("p{n}.{id}");
        c.pos.insert(id, c.instrs.len());
        c.instrs.push(i);
        id
    }

    /// Ends `c` with root `root`; returns the computation id.
    pub fn finish(&mut self, c: Comp, root: i64) -> i64 {
        let id = self.fresh();
        let result = c.shape(root).clone();
        self.done.push(HloComputationProto {
            name: format!("{}.{id}", c.base),
            instructions: c.instrs,
            program_shape: Some(ProgramShapeProto {
                parameters: c.params,
                result: Some(result),
                parameter_names: Vec::new(),
            }),
            id,
            root_id: root,
        });
        id
    }

    /// `tuple(elems)`.
    pub fn tuple(&mut self, c: &mut Comp, elems: Vec<i64>) -> i64 {
        let shapes = elems.iter().map(|&e| c.shape(e).clone()).collect();
        self.add3(c, "tuple", tuple_shape(shapes), elems)
    }

    /// `get-tuple-element(t), index=i`.
    pub fn gte(&mut self, c: &mut Comp, t: i64, i: usize) -> Result<i64, HloError> {
        let s = c
            .shape(t)
            .tuple_shapes
            .get(i)
            .cloned()
            .ok_or_else(|| HloError::Malformed(format!("tuple index {i} out of range")))?;
        let mut ins = inst("get-tuple-element", s, vec![t]);
        ins.tuple_index = i as i64;
        Ok(self.add(c, ins))
    }

    /// The shape of an IR value.
    pub fn vshape(&self, v: ValueId) -> Result<ShapeProto, HloError> {
        shape_of(&self.m.types, self.m.value_type(v))
    }

    /// Binds the results of `op` to `tuple`'s elements (one get-tuple-element each).
    pub fn bind_tuple(&mut self, c: &mut Comp, op: OpId, tuple: i64) -> Result<(), HloError> {
        let results = self.m.op(op).results.clone();
        for (i, r) in results.into_iter().enumerate() {
            let g = self.gte(c, tuple, i)?;
            c.values.insert(r, g);
        }
        Ok(())
    }

    /// Debug metadata for an op (its location text), when enabled.
    pub fn metadata(&self, op: OpId) -> Option<OpMetadata> {
        if !self.opts.metadata {
            return None;
        }
        let o = self.m.op(op);
        let loc = o.loc.and_then(|l| self.m.locs.get(l.index())).cloned();
        Some(OpMetadata {
            op_type: o.kind.short_name().to_string(),
            op_name: loc.unwrap_or_default(),
            ..OpMetadata::default()
        })
    }

    /// Lowers the ops of `region` into `c` (its arguments must already be bound) and
    /// returns the instructions of the terminator's operands.
    pub fn lower_body(&mut self, c: &mut Comp, region: RegionId) -> Result<Vec<i64>, HloError> {
        let ops = self.m.region(region).ops.clone();
        for op in ops {
            let o = self.m.op(op);
            if matches!(o.kind, OpKind::Return | OpKind::FuncReturn) {
                return o.operands.iter().map(|&v| c.get(v)).collect();
            }
            let first_new = c.instrs.len();
            self.lower_op(c, op)?;
            if let Some(md) = self.metadata(op) {
                for i in &mut c.instrs[first_new..] {
                    i.metadata = Some(md.clone());
                }
            }
        }
        Err(HloError::Malformed("region without terminator".into()))
    }

    /// Lowers a region whose arguments become parameters, one per argument (reducers,
    /// comparators, scatter updates). Returns the computation id. With `force_tuple` or
    /// several returned values the root is a tuple.
    pub fn region_comp(
        &mut self,
        region: RegionId,
        base: &str,
        force_tuple: bool,
    ) -> Result<i64, HloError> {
        let mut c = Comp::new(base);
        for a in self.m.region(region).args.clone() {
            let s = self.vshape(a)?;
            let p = self.param(&mut c, s);
            c.values.insert(a, p);
        }
        // An HLO computation cannot capture: constants of enclosing regions that this
        // region's ops use are re-emitted inside it (torch_xla's `any(dim)` reducer).
        for def in self.captured_constants(region) {
            self.lower_op(&mut c, def)?;
        }
        let rets = self.lower_body(&mut c, region)?;
        let root = if rets.len() == 1 && !force_tuple {
            rets[0]
        } else {
            self.tuple(&mut c, rets)
        };
        Ok(self.finish(c, root))
    }

    /// Lowers a region that may use values of enclosing regions: the computation takes one
    /// tuple parameter `(args..., captures...)`. Returns the computation id and the root
    /// instructions (the returned values, then `extra_root` captures passed through when
    /// `pass_captures`).
    pub fn capture_comp(
        &mut self,
        region: RegionId,
        base: &str,
        param_shape: ShapeProto,
        captures: &[ValueId],
        root: RootKind,
    ) -> Result<i64, HloError> {
        let mut c = Comp::new(base);
        let p = self.param(&mut c, param_shape);
        let args = self.m.region(region).args.clone();
        let mut elems = Vec::new();
        for (i, v) in args.iter().chain(captures).enumerate() {
            let g = self.gte(&mut c, p, i)?;
            c.values.insert(*v, g);
            elems.push(g);
        }
        let mut rets = self.lower_body(&mut c, region)?;
        let root = match root {
            RootKind::Single => *rets
                .first()
                .ok_or_else(|| HloError::Malformed("empty region result".into()))?,
            RootKind::Tuple => self.tuple(&mut c, rets),
            RootKind::TupleWithCaptures => {
                rets.extend_from_slice(&elems[args.len()..]);
                self.tuple(&mut c, rets)
            }
        };
        Ok(self.finish(c, root))
    }

    /// Values used inside `regions` (at any depth) but defined outside them, in first-use
    /// order.
    /// The `stablehlo.constant` ops of enclosing regions whose results ops directly in
    /// `region` use, in first-use order.
    pub fn captured_constants(&self, region: RegionId) -> Vec<OpId> {
        let r = self.m.region(region);
        let mut defined: FxHashSet<ValueId> = r.args.iter().copied().collect();
        let mut out: Vec<OpId> = Vec::new();
        for &op in &r.ops {
            for &v in &self.m.op(op).operands {
                if let ValueDef::Result(d, _) = self.m.value(v).def {
                    let outer = !defined.contains(&v);
                    if outer && self.m.op(d).kind == OpKind::Constant && !out.contains(&d) {
                        out.push(d);
                    }
                }
            }
            defined.extend(self.m.op(op).results.iter().copied());
        }
        out
    }

    pub fn captures(&self, regions: &[RegionId]) -> Vec<ValueId> {
        let mut defined = FxHashSet::default();
        let mut used = Vec::new();
        for &r in regions {
            self.collect_uses(r, &mut defined, &mut used);
        }
        let mut seen = FxHashSet::default();
        used.into_iter()
            .filter(|v| !defined.contains(v) && seen.insert(*v))
            .collect()
    }

    fn collect_uses(&self, r: RegionId, defined: &mut FxHashSet<ValueId>, used: &mut Vec<ValueId>) {
        defined.extend(self.m.region(r).args.iter().copied());
        for &op in &self.m.region(r).ops {
            let o = self.m.op(op);
            used.extend(o.operands.iter().copied());
            defined.extend(o.results.iter().copied());
            for &sub in &o.regions {
                self.collect_uses(sub, defined, used);
            }
        }
    }

    /// The computation of function `name` (lowered on first use): one parameter per
    /// argument, root a tuple of the results.
    pub fn func_comp(&mut self, name: &str) -> Result<i64, HloError> {
        if let Some(&id) = self.funcs.get(name) {
            return Ok(id);
        }
        if !self.in_progress.insert(name.to_string()) {
            return Err(HloError::Unsupported(format!("recursive call to @{name}")));
        }
        let f = self
            .m
            .func(name)
            .ok_or_else(|| HloError::Malformed(format!("call to unknown function @{name}")))?;
        let body = f.body;
        let mut c = Comp::new(sanitize(name));
        for a in self.m.region(body).args.clone() {
            let s = self.vshape(a)?;
            let p = self.param(&mut c, s);
            c.values.insert(a, p);
        }
        let rets = self.lower_body(&mut c, body)?;
        let root = self.tuple(&mut c, rets);
        let id = self.finish(c, root);
        self.in_progress.remove(name);
        self.funcs.insert(name.to_string(), id);
        Ok(id)
    }

    /// A scalar constant of primitive type `p` with value `v`.
    pub fn scalar(&mut self, c: &mut Comp, p: PrimitiveType, v: f64) -> Result<i64, HloError> {
        let lit = shape::scalar_literal(p, v)?;
        let mut i = inst("constant", lit.shape.clone().unwrap_or_default(), vec![]);
        i.literal = Some(lit);
        Ok(self.add(c, i))
    }

    /// A constant with value `v` shaped and typed like `like` (scalar broadcast).
    pub fn splat_like(&mut self, c: &mut Comp, like: i64, v: f64) -> Result<i64, HloError> {
        let s = c.shape(like).clone();
        let p = shape::prim_of(&s)
            .ok_or_else(|| HloError::Malformed("constant of unknown element type".into()))?;
        let k = self.scalar(c, p, v)?;
        Ok(self.broadcast_scalar(c, k, &s))
    }

    /// Broadcasts scalar `x` to shape `s` (no-op for scalar `s`).
    pub fn broadcast_scalar(&mut self, c: &mut Comp, x: i64, s: &ShapeProto) -> i64 {
        if s.dimensions.is_empty() {
            return x;
        }
        let elem = PrimitiveType::try_from(c.shape(x).element_type).unwrap_or(PrimitiveType::F32);
        let out = shape::with_prim(s, elem);
        self.add3(c, "broadcast", out, vec![x])
    }
}

/// How [`Emitter::capture_comp`] builds the root.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum RootKind {
    /// The one returned value (while condition).
    Single,
    /// A tuple of the returned values (conditional branches).
    Tuple,
    /// A tuple of the returned values followed by the captures (while body).
    TupleWithCaptures,
}

/// A computation/instruction name from a symbol: `[A-Za-z0-9_]` kept, others become `_`.
pub fn sanitize(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|ch| {
            if ch.is_ascii_alphanumeric() || ch == '_' {
                ch
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.starts_with(|ch: char| ch.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}
