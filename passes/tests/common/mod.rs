//! Test helpers: a tiny IR builder over the `Module` API and a FileCheck-style matcher.
#![allow(dead_code)]

pub mod check;

use neuronc_ir::{
    Attr, ElemType, Func, Module, NamedAttrs, OpId, OpKind, RegionId, Span, TypeId, ValueId,
};

/// Builds one function `name` with the given argument types.
pub struct Builder {
    pub m: Module,
    pub body: RegionId,
}

impl Builder {
    pub fn new(args: &[(ElemType, &[i64])]) -> (Builder, Vec<ValueId>) {
        let mut m = Module::new();
        let body = m.add_region(None);
        let vals = args
            .iter()
            .map(|(e, s)| {
                let t = m.types.tensor(*e, s);
                m.add_region_arg(body, t)
            })
            .collect();
        (Builder { m, body }, vals)
    }
    pub fn ty(&mut self, e: ElemType, s: &[i64]) -> TypeId {
        self.m.types.tensor(e, s)
    }
    pub fn op_in(
        &mut self,
        region: RegionId,
        kind: OpKind,
        operands: &[ValueId],
        ty: TypeId,
        attrs: NamedAttrs,
    ) -> OpId {
        let op = self.m.create_op(kind, operands.to_vec(), &[ty], attrs);
        self.m.append_op(region, op);
        op
    }
    pub fn op(&mut self, kind: OpKind, operands: &[ValueId], ty: TypeId) -> ValueId {
        let op = self.op_in(self.body, kind, operands, ty, NamedAttrs::new());
        self.m.op(op).results[0]
    }
    pub fn op_attrs(
        &mut self,
        kind: OpKind,
        operands: &[ValueId],
        ty: TypeId,
        attrs: &[(&str, Attr)],
    ) -> ValueId {
        let mut a = NamedAttrs::new();
        for (n, v) in attrs {
            a.set(*n, v.clone());
        }
        let op = self.op_in(self.body, kind, operands, ty, a);
        self.m.op(op).results[0]
    }
    pub fn splat_f32(&mut self, shape: &[i64], v: f32) -> ValueId {
        let ty = self.ty(ElemType::F32, shape);
        let op =
            neuronc_passes::ir_util::make_splat_constant(&mut self.m, ty, v.to_le_bytes().to_vec())
                .unwrap();
        self.m.append_op(self.body, op);
        self.m.op(op).results[0]
    }
    pub fn splat_i32(&mut self, shape: &[i64], v: i32) -> ValueId {
        let ty = self.ty(ElemType::Int(32), shape);
        let op =
            neuronc_passes::ir_util::make_splat_constant(&mut self.m, ty, v.to_le_bytes().to_vec())
                .unwrap();
        self.m.append_op(self.body, op);
        self.m.op(op).results[0]
    }
    /// Finishes the function `name` (public) returning `rets`.
    pub fn finish_func(&mut self, name: &str, rets: &[ValueId], private: bool) {
        let ret = self
            .m
            .create_op(OpKind::FuncReturn, rets.to_vec(), &[], NamedAttrs::new());
        self.m.append_op(self.body, ret);
        let result_types: Vec<TypeId> = rets.iter().map(|&v| self.m.value_type(v)).collect();
        let nargs = self.m.region(self.body).args.len();
        self.m.funcs.push(Func {
            name: name.into(),
            visibility: private.then(|| "private".to_string()),
            body: self.body,
            result_types: result_types.clone(),
            arg_attrs: vec![NamedAttrs::new(); nargs],
            result_attrs: vec![NamedAttrs::new(); result_types.len()],
            attrs: NamedAttrs::new(),
            loc: None,
            span: Span::default(),
        });
    }
    pub fn finish(mut self, rets: &[ValueId]) -> Module {
        self.finish_func("main", rets, false);
        self.m
    }
}

pub fn ints(v: &[i64]) -> Attr {
    Attr::IntArray(ElemType::Int(64), v.to_vec())
}

/// Kinds of the live ops of function `name`, in order (pre-order, nested included).
pub fn kinds(m: &Module, name: &str) -> Vec<OpKind> {
    let f = m.func(name).unwrap();
    let mut out = Vec::new();
    m.walk_region(f.body, &mut |op| out.push(m.op(op).kind));
    out
}

/// The operands of the function's return.
pub fn returned(m: &Module, name: &str) -> Vec<ValueId> {
    let f = m.func(name).unwrap();
    let last = *m.region(f.body).ops.last().unwrap();
    m.op(last).operands.clone()
}

/// One `// -----` case of a pass fixture before and after `pipeline` (run with
/// `verify_each` and the rewrite trace on); the result is printed, parsed back and
/// verified. Returns (before, after, the rewrite trace).
pub fn rewrite_case(chunk: &str, pipeline: &str) -> (Module, Module, Vec<String>) {
    use neuronc_passes::{run_pipeline, PassContext, Pipeline};
    let m = neuronc_ir::parse_module(chunk).expect("parses");
    let mut after = m.clone();
    let mut ctx = PassContext::new();
    ctx.verify_each = true;
    ctx.trace_rewrites = true;
    let pipeline = Pipeline::parse(pipeline).expect("pipeline");
    run_pipeline(&mut after, &pipeline, &mut ctx).expect("pass runs");
    let printed = neuronc_ir::print_module(&after, &neuronc_ir::PrintOptions::default());
    let after = neuronc_ir::parse_module(&printed).expect("output re-parses");
    neuronc_ir::verify_module(&after).expect("output verifies");
    (m, after, ctx.trace().to_vec())
}

/// The outputs of `m`'s entry function on `inputs`, as f64 (the interpreter).
pub fn run_entry(m: &Module, inputs: &[neuronc_interp::Tensor]) -> Vec<Vec<f64>> {
    let name = m.entry().expect("entry").name.clone();
    let opts = neuronc_interp::RunOptions::default();
    let out = neuronc_interp::run_function(m, &name, inputs.to_vec(), &opts).expect("runs");
    out.iter().map(neuronc_interp::Tensor::to_f64_vec).collect()
}

/// Arguments of `m`'s entry function from a xorshift generator seeded by `seed`: each
/// element is `value(element type, next random u64)`, booleans true when it is nonzero.
pub fn random_inputs(
    m: &Module,
    seed: u64,
    value: impl Fn(ElemType, u64) -> f64,
) -> Vec<neuronc_interp::Tensor> {
    use neuronc_interp::Tensor;
    let mut s = seed | 1;
    let name = m.entry().expect("entry").name.clone();
    let types = neuronc_interp::arg_types(m, &name).expect("argument types");
    types
        .iter()
        .map(|t| {
            let v: Vec<f64> = (0..t.num_elements())
                .map(|_| {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    value(t.elem, s)
                })
                .collect();
            match t.elem {
                ElemType::I1 => {
                    let b: Vec<bool> = v.iter().map(|&x| x != 0.0).collect();
                    Tensor::from_bool(&t.shape, &b)
                }
                e if e.is_float() => Tensor::from_f64_as(e, &t.shape, &v),
                e => {
                    let i: Vec<i64> = v.iter().map(|&x| x as i64).collect();
                    Tensor::from_i64(e, &t.shape, &i)
                }
            }
            .expect("input tensor")
        })
        .collect()
}
