//! Materializes a fusion plan in the IR: each multi-op kernel becomes a private function
//! `@<func>.kernel<N>` and a `stablehlo.composite "neuronc.kernel"` call to it.
//!
//! This is the textual form of fused kernels: it parses and verifies as ordinary
//! StableHLO, the interpreter runs it through the decomposition, and `explain` reads the
//! kernel back from it. `composite_attributes` record the kernel number and the partition
//! dimension chosen for each result (`partition_dims`, -1 for none).
//! Invariants: after outlining, the function body is in topological order again and every
//! removed op's results have no remaining users.

use super::fusion::OpClass;
use super::NeuronPlan;
use crate::ir_util::clone_op;
use neuronc_ir::{
    Attr, ElemType, Func, Module, NamedAttrs, OpId, OpKind, RegionId, Span, ValueDef, ValueId,
};
use rustc_hash::{FxHashMap, FxHashSet};

/// Outlines the kernels of `plan` (computed on function `func_index`) that hold more
/// than one op and move data, at most `limit` of them (fuel). Returns how many.
pub fn outline_kernels(
    m: &mut Module,
    func_index: usize,
    plan: &NeuronPlan,
    limit: usize,
) -> usize {
    let body = m.funcs[func_index].body;
    let fname = m.funcs[func_index].name.clone();
    let mut count = 0;
    let mut renamed: FxHashMap<ValueId, ValueId> = FxHashMap::default();
    // Owned op -> the composite replacing it (for the kernel's last op) or nothing.
    let mut replaced: FxHashMap<OpId, Option<OpId>> = FxHashMap::default();
    for (k, kernel) in plan.fusion.kernels.iter().enumerate() {
        if !outlinable(m, kernel) || count >= limit {
            continue;
        }
        let callee = format!("{fname}.kernel{k}");
        let mut members: Vec<OpId> = kernel
            .ops
            .iter()
            .chain(&kernel.duplicated)
            .copied()
            .collect();
        members.sort_by_key(|o| plan.graph.pos[o]);
        let outputs = kernel.outputs.clone();
        let (kbody, result_types) = build_kernel_body(m, &members, &kernel.inputs, &outputs);
        m.funcs.push(Func {
            name: callee.clone(),
            visibility: Some("private".into()),
            body: kbody,
            result_types: result_types.clone(),
            arg_attrs: vec![NamedAttrs::new(); kernel.inputs.len()],
            result_attrs: vec![NamedAttrs::new(); outputs.len()],
            attrs: NamedAttrs::new(),
            loc: None,
            span: Span::default(),
        });
        let parts = outputs
            .iter()
            .map(|&v| plan.layout.of(v).map_or(-1, i64::from))
            .collect();
        let call = make_composite(m, &callee, k, kernel.inputs.clone(), &result_types, parts);
        // The composite takes the place of the kernel's last op; the other owned ops leave
        // the body (duplicated ones stay for their other users; DCE removes dead copies).
        let last = *kernel
            .ops
            .iter()
            .max_by_key(|o| plan.graph.pos[*o])
            .unwrap_or(&members[0]);
        for &o in &kernel.ops {
            replaced.insert(o, (o == last).then_some(call));
        }
        renamed.extend(
            outputs
                .iter()
                .copied()
                .zip(m.op(call).results.iter().copied()),
        );
        count += 1;
    }
    // One pass over the body: owned ops leave, each kernel's last op becomes its call.
    let mut ops = Vec::with_capacity(m.region(body).ops.len());
    for o in m.region(body).ops.clone() {
        match replaced.get(&o) {
            None => ops.push(o),
            Some(call) => {
                m.op_mut(o).parent = None;
                if let Some(c) = *call {
                    m.op_mut(c).parent = Some(body);
                    ops.push(c);
                }
            }
        }
    }
    m.region_mut(body).ops.clone_from(&ops);
    rename_uses(m, &renamed);
    // Multi-output kernels may now feed ops placed before them: restore topological order.
    let terminator = ops.pop_if(|&mut o| m.op(o).kind.is_terminator());
    let mut sorted = topo_sort(m, ops);
    sorted.extend(terminator);
    m.region_mut(body).ops = sorted;
    count
}

/// Replaces every use of a renamed value in the live ops of all functions.
fn rename_uses(m: &mut Module, renamed: &FxHashMap<ValueId, ValueId>) {
    if renamed.is_empty() {
        return;
    }
    let mut live = Vec::new();
    m.walk_ops(|op| live.push(op));
    for op in live {
        for v in &mut m.op_mut(op).operands {
            if let Some(&n) = renamed.get(v) {
                *v = n;
            }
        }
    }
}

/// Whether a kernel becomes a composite: more than one op, and some op moves data.
pub fn outlinable(m: &Module, kernel: &super::fusion::Kernel) -> bool {
    kernel.ops.len() + kernel.duplicated.len() > 1
        && kernel
            .ops
            .iter()
            .any(|&o| super::fusion::classify(m, o) >= OpClass::Loop)
}

fn build_kernel_body(
    m: &mut Module,
    members: &[OpId],
    inputs: &[ValueId],
    outputs: &[ValueId],
) -> (RegionId, Vec<neuronc_ir::TypeId>) {
    let region = m.add_region(None);
    let mut map: FxHashMap<ValueId, ValueId> = FxHashMap::default();
    for &v in inputs {
        let a = m.add_region_arg(region, m.value_type(v));
        map.insert(v, a);
    }
    for &op in members {
        let c = clone_op(m, op, &mut map);
        m.append_op(region, c);
    }
    let rets: Vec<ValueId> = outputs.iter().map(|v| *map.get(v).unwrap_or(v)).collect();
    let types = outputs.iter().map(|&v| m.value_type(v)).collect();
    let ret = m.create_op(OpKind::FuncReturn, rets, &[], NamedAttrs::new());
    m.append_op(region, ret);
    (region, types)
}

fn make_composite(
    m: &mut Module,
    callee: &str,
    k: usize,
    inputs: Vec<ValueId>,
    types: &[neuronc_ir::TypeId],
    partition_dims: Vec<i64>,
) -> OpId {
    let mut comp = NamedAttrs::new();
    comp.set("kernel", Attr::Int(k as i64, ElemType::Int(64)));
    comp.set(
        "partition_dims",
        Attr::IntArray(ElemType::Int(64), partition_dims),
    );
    let mut attrs = NamedAttrs::new();
    attrs.set("name", Attr::Str("neuronc.kernel".into()));
    attrs.set("composite_attributes", Attr::Dict(comp));
    attrs.set("decomposition", Attr::Symbol(callee.into()));
    m.create_op(OpKind::Composite, inputs, types, attrs)
}

/// Stable topological order of `ops` (program order wherever dependencies allow).
fn topo_sort(m: &Module, ops: Vec<OpId>) -> Vec<OpId> {
    let index: FxHashMap<OpId, usize> = ops.iter().enumerate().map(|(i, &o)| (o, i)).collect();
    let producer = |v: ValueId| match m.value(v).def {
        ValueDef::Result(p, _) => index.get(&p).copied(),
        ValueDef::RegionArg(..) => None,
    };
    let mut deps: Vec<Vec<usize>> = vec![Vec::new(); ops.len()];
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); ops.len()];
    for (i, &o) in ops.iter().enumerate() {
        let mut seen = FxHashSet::default();
        let mut operands = m.op(o).operands.clone();
        for &r in &m.op(o).regions {
            m.walk_region(r, &mut |inner| {
                operands.extend(m.op(inner).operands.iter().copied())
            });
        }
        for v in operands {
            if let Some(p) = producer(v) {
                if p != i && seen.insert(p) {
                    deps[i].push(p);
                    users[p].push(i);
                }
            }
        }
    }
    let mut pending: Vec<usize> = deps.iter().map(Vec::len).collect();
    let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<usize>> = (0..ops.len())
        .filter(|&i| pending[i] == 0)
        .map(std::cmp::Reverse)
        .collect();
    let mut out = Vec::with_capacity(ops.len());
    while let Some(std::cmp::Reverse(i)) = ready.pop() {
        out.push(ops[i]);
        for &u in &users[i] {
            pending[u] -= 1;
            if pending[u] == 0 {
                ready.push(std::cmp::Reverse(u));
            }
        }
    }
    if out.len() != ops.len() {
        return ops; // a cycle cannot happen for a valid plan; keep the input order
    }
    out
}
