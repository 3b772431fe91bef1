//! The IR data model: a [`Module`] of [`Func`]s whose bodies are [`Region`]s of [`Op`]s
//! over SSA [`Value`]s. Read this module first.
//!
//! # Shape of the data
//! Everything lives in arenas owned by the [`Module`] and is referred to by typed `u32`
//! ids: [`OpId`], [`ValueId`], [`RegionId`], [`TypeId`] (interned in
//! [`crate::TypeInterner`]), [`LocId`]. An op has operands (values), results (values it
//! defines), named attributes ([`NamedAttrs`]) and nested regions. A region is a single
//! block — StableHLO never uses multi-block regions — with block arguments and an ordered
//! op list ending in a terminator (`stablehlo.return` or `func.return`). A function is a
//! module item (name, visibility, attributes, per-argument and per-result attributes) whose
//! body is a region; its arguments are the body's block arguments. A function whose body
//! has arguments but no ops is a declaration (`func.func private @f(tensor<2xf32>) -> ...`
//! without a body, see [`Module::is_declaration`]): it can be called but not run.
//!
//! # Invariants (checked by the verifier, relied on everywhere else)
//! * SSA: every value is defined exactly once, by an op result or a region argument, and
//!   every use is dominated by its definition (defined earlier in the same region or in an
//!   enclosing region).
//! * `ops[op].results[i]` is a value whose [`ValueDef`] is `Result(op, i)`; likewise for
//!   region arguments.
//! * Erased ops stay in the arena (ids remain stable) but appear in no region's op list;
//!   [`Module::compact`] is not needed for correctness, only for memory.
//! * Analyses (shapes, layouts, costs, fusion groups) are side tables indexed by ids, never
//!   fields of `Op`.
//!
//! `loc(...)` debug locations are kept per op in a location table and are not semantic.
//!
//! Module-level Shardy meshes (`sdy.mesh @name = <[...]> {attrs}?`, as jax prints with
//! shardings) are kept as [`Mesh`] items in [`Module::meshes`], in source order, and printed
//! back before the functions. They only name device meshes for `#sdy.sharding<@mesh, ...>`
//! attributes and `sdy.*` ops, which refer to them by symbol; a module built from another
//! must carry them over.

use crate::attr::{Attr, DenseData, DenseElements, NamedAttrs};
use crate::ops::OpKind;
use crate::types::{TensorType, Type, TypeId, TypeInterner};

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);
        impl $name {
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

id_type!(
    /// Index of an [`Op`] in [`Module::ops`].
    OpId, "op"
);
id_type!(
    /// Index of a [`Value`] in [`Module::values`].
    ValueId, "v"
);
id_type!(
    /// Index of a [`Region`] in [`Module::regions`].
    RegionId, "region"
);
id_type!(
    /// Index of a location in [`Module::locs`].
    LocId, "loc"
);
id_type!(
    /// Index of a [`Func`] in [`Module::funcs`].
    FuncId, "func"
);

/// Where a value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueDef {
    /// Result `index` of an op.
    Result(OpId, u32),
    /// Argument `index` of a region (function arguments are the body region's arguments).
    RegionArg(RegionId, u32),
}

/// An SSA value: its type and its definition.
#[derive(Clone, Debug, PartialEq)]
pub struct Value {
    pub ty: TypeId,
    pub def: ValueDef,
}

/// A byte range in the source text the op was parsed from (for diagnostics).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

/// One operation.
#[derive(Clone, Debug, PartialEq)]
pub struct Op {
    pub kind: OpKind,
    pub operands: Vec<ValueId>,
    pub results: Vec<ValueId>,
    /// All attributes, inherent (properties) and discardable, under their generic-form names.
    pub attrs: NamedAttrs,
    pub regions: Vec<RegionId>,
    /// MLIR debug location (`loc(...)`), if the input had one.
    pub loc: Option<LocId>,
    /// Source position of the op in the parsed text (zero for ops built by passes).
    pub span: Span,
    /// The region this op is in (`None` for detached/erased ops).
    pub parent: Option<RegionId>,
}

/// A single-block region: block arguments and an op list ending in a terminator.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Region {
    pub args: Vec<ValueId>,
    pub ops: Vec<OpId>,
    /// The op owning this region, or `None` for a function body.
    pub parent: Option<OpId>,
}

/// A function (`func.func`).
#[derive(Clone, Debug, PartialEq)]
pub struct Func {
    /// Symbol name without `@`.
    pub name: String,
    /// `public` when `None`; otherwise the visibility keyword (`private`, `nested`).
    pub visibility: Option<String>,
    pub body: RegionId,
    /// Result types (argument types are the body's argument types).
    pub result_types: Vec<TypeId>,
    /// Attributes of each argument (`{mhlo.sharding = ...}`), same length as the arguments.
    pub arg_attrs: Vec<NamedAttrs>,
    /// Attributes of each result (`{jax.result_info = ...}`).
    pub result_attrs: Vec<NamedAttrs>,
    /// Function attributes other than name, type, visibility and arg/res attrs.
    pub attrs: NamedAttrs,
    pub loc: Option<LocId>,
    pub span: Span,
}

/// A Shardy device mesh (`sdy.mesh @name = <["x"=2, "y"=4], device_ids=[...]>`).
#[derive(Clone, Debug, PartialEq)]
pub struct Mesh {
    /// Symbol name without `@`.
    pub name: String,
    /// The mesh body as written between and including the angle brackets (`<["x"=1]>`);
    /// `#sdy.mesh` followed by this text is the generic `mesh` attribute.
    pub body: String,
    /// Discardable attributes of the `sdy.mesh` op (`{stablehlo.mesh = {...}}`).
    pub attrs: NamedAttrs,
}

/// A whole program: functions plus the arenas their contents live in.
#[derive(Clone, Debug, Default)]
pub struct Module {
    /// `module @name`, if named.
    pub name: Option<String>,
    /// Module attributes (`mhlo.num_partitions`, `mhlo.num_replicas`, ...).
    pub attrs: NamedAttrs,
    /// Shardy meshes (`sdy.mesh`), in source order; printed before the functions.
    pub meshes: Vec<Mesh>,
    pub funcs: Vec<Func>,
    pub types: TypeInterner,
    pub ops: Vec<Op>,
    pub values: Vec<Value>,
    pub regions: Vec<Region>,
    /// Location texts (resolved `#loc` aliases), indexed by [`LocId`].
    pub locs: Vec<String>,
}

impl Module {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn op(&self, id: OpId) -> &Op {
        &self.ops[id.index()]
    }
    pub fn op_mut(&mut self, id: OpId) -> &mut Op {
        &mut self.ops[id.index()]
    }
    pub fn value(&self, id: ValueId) -> &Value {
        &self.values[id.index()]
    }
    pub fn region(&self, id: RegionId) -> &Region {
        &self.regions[id.index()]
    }
    pub fn region_mut(&mut self, id: RegionId) -> &mut Region {
        &mut self.regions[id.index()]
    }
    /// The type of a value.
    pub fn value_type(&self, v: ValueId) -> TypeId {
        self.values[v.index()].ty
    }
    /// The tensor type of a value, if it is a tensor.
    pub fn tensor_type(&self, v: ValueId) -> Option<&TensorType> {
        self.types.tensor_of(self.value_type(v))
    }
    pub fn ty(&self, id: TypeId) -> &Type {
        self.types.get(id)
    }

    /// Whether `f` is a declaration: a signature without a body (its body region holds
    /// the argument types and no ops).
    pub fn is_declaration(&self, f: &Func) -> bool {
        self.regions
            .get(f.body.index())
            .is_some_and(|r| r.ops.is_empty())
    }

    /// Looks a function up by name.
    pub fn func(&self, name: &str) -> Option<&Func> {
        self.funcs.iter().find(|f| f.name == name)
    }
    /// The entry function: `main`, else the only public function.
    pub fn entry(&self) -> Option<&Func> {
        self.func("main").or_else(|| {
            let mut public = self.funcs.iter().filter(|f| f.visibility.is_none());
            match (public.next(), public.next()) {
                (Some(f), None) => Some(f),
                _ => None,
            }
        })
    }

    /// Creates an empty region (no parent yet).
    pub fn add_region(&mut self, parent: Option<OpId>) -> RegionId {
        let id = RegionId(self.regions.len() as u32);
        self.regions.push(Region {
            parent,
            ..Region::default()
        });
        id
    }
    /// Appends a block argument of type `ty` to `region`.
    pub fn add_region_arg(&mut self, region: RegionId, ty: TypeId) -> ValueId {
        let idx = self.regions[region.index()].args.len() as u32;
        let v = ValueId(self.values.len() as u32);
        self.values.push(Value {
            ty,
            def: ValueDef::RegionArg(region, idx),
        });
        self.regions[region.index()].args.push(v);
        v
    }

    /// Creates (detached) a `stablehlo.constant` of tensor type `ty` whose elements all
    /// equal `bytes` (one element, little-endian); `None` if `ty` is not a tensor type.
    pub fn create_splat_constant(&mut self, ty: TypeId, bytes: Vec<u8>) -> Option<OpId> {
        let t = self.types.tensor_of(ty)?;
        let dense = DenseElements {
            ty,
            elem: t.elem,
            len: t.num_elements(),
            data: DenseData::Splat(bytes.into_boxed_slice()),
        };
        let mut attrs = NamedAttrs::new();
        attrs.set("value", Attr::Elements(std::sync::Arc::new(dense)));
        Some(self.create_op(OpKind::Constant, Vec::new(), &[ty], attrs))
    }

    /// Creates an op with fresh result values of `result_types`, not yet placed in a region.
    pub fn create_op(
        &mut self,
        kind: OpKind,
        operands: Vec<ValueId>,
        result_types: &[TypeId],
        attrs: NamedAttrs,
    ) -> OpId {
        let id = OpId(self.ops.len() as u32);
        let first = self.values.len() as u32;
        let results = (first..first + result_types.len() as u32)
            .map(ValueId)
            .collect();
        self.values
            .extend(result_types.iter().enumerate().map(|(i, &ty)| Value {
                ty,
                def: ValueDef::Result(id, i as u32),
            }));
        self.ops.push(Op {
            kind,
            operands,
            results,
            attrs,
            regions: Vec::new(),
            loc: None,
            span: Span::default(),
            parent: None,
        });
        id
    }

    /// Appends a detached op to the end of `region`.
    pub fn append_op(&mut self, region: RegionId, op: OpId) {
        self.ops[op.index()].parent = Some(region);
        self.regions[region.index()].ops.push(op);
    }

    /// Inserts a detached op into `region` at position `pos`.
    pub fn insert_op(&mut self, region: RegionId, pos: usize, op: OpId) {
        self.ops[op.index()].parent = Some(region);
        self.regions[region.index()].ops.insert(pos, op);
    }

    /// Attaches a fresh region to `op` and returns it.
    pub fn add_op_region(&mut self, op: OpId) -> RegionId {
        let r = self.add_region(Some(op));
        self.ops[op.index()].regions.push(r);
        r
    }

    /// Interns a location text.
    pub fn add_loc(&mut self, text: String) -> LocId {
        let id = LocId(self.locs.len() as u32);
        self.locs.push(text);
        id
    }

    /// Calls `f` on every op reachable from every function body, in pre-order (an op
    /// before the ops of its regions).
    pub fn walk_ops(&self, mut f: impl FnMut(OpId)) {
        for func in &self.funcs {
            self.walk_region(func.body, &mut f);
        }
    }

    /// Pre-order walk of the ops of one region and its nested regions.
    pub fn walk_region(&self, region: RegionId, f: &mut impl FnMut(OpId)) {
        for &op in &self.regions[region.index()].ops {
            f(op);
            for &r in &self.ops[op.index()].regions {
                self.walk_region(r, f);
            }
        }
    }

    /// Number of live ops (reachable from function bodies).
    pub fn num_live_ops(&self) -> usize {
        let mut n = 0;
        self.walk_ops(|_| n += 1);
        n
    }

    /// Replaces every use of `from` by `to` in all live ops.
    pub fn replace_all_uses(&mut self, from: ValueId, to: ValueId) {
        let mut live = Vec::new();
        self.walk_ops(|op| live.push(op));
        for op in live {
            for o in &mut self.ops[op.index()].operands {
                if *o == from {
                    *o = to;
                }
            }
        }
    }
}
