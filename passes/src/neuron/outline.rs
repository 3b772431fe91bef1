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
use crate::ir_util::{clone_op, erase_op};
use neuronc_ir::{Attr, ElemType, Func, Module, NamedAttrs, OpId, OpKind, RegionId, Span, ValueDef, ValueId};
use rustc_hash::{FxHashMap, FxHashSet};

/// Outlines every kernel of `plan` (computed on function `func_index`) that holds more
/// than one op and moves data. Returns the number of kernels outlined.
pub fn outline_kernels(m: &mut Module, func_index: usize, plan: &NeuronPlan) -> usize {
    let body = m.funcs[func_index].body;
    let fname = m.funcs[func_index].name.clone();
    let mut placed: FxHashMap<OpId, OpId> = FxHashMap::default(); // last member -> composite
    let mut count = 0;
    for (k, kernel) in plan.fusion.kernels.iter().enumerate() {
        let moves_data = kernel.ops.iter().any(|&o| super::fusion::classify(m, o) >= OpClass::Loop);
        if kernel.ops.len() + kernel.duplicated.len() < 2 || !moves_data {
            continue;
        }
        let callee = format!("{fname}.kernel{k}");
        let mut members: Vec<OpId> = kernel.ops.iter().chain(&kernel.duplicated).copied().collect();
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
        let parts = outputs.iter().map(|&v| plan.layout.of(v).map_or(-1, i64::from)).collect();
        let call = make_composite(m, &callee, k, kernel.inputs.clone(), &result_types, parts);
        let call_results = m.op(call).results.clone();
        for (&old, &new) in outputs.iter().zip(&call_results) {
            m.replace_all_uses(old, new);
        }
        let last = *kernel.ops.iter().max_by_key(|o| plan.graph.pos[*o]).unwrap_or(&members[0]);
        placed.insert(last, call);
        count += 1;
        // Owned ops leave the body; duplicated ones stay for their other users (DCE later).
        for &o in &kernel.ops {
            if o != last {
                erase_op(m, o);
            }
        }
    }
    // Swap each kernel's last op for its composite, then restore topological order.
    let ops = m.region(body).ops.clone();
    let mut new_ops = Vec::with_capacity(ops.len());
    for o in ops {
        match placed.get(&o) {
            Some(&c) => {
                m.op_mut(o).parent = None;
                m.op_mut(c).parent = Some(body);
                new_ops.push(c);
            }
            None => new_ops.push(o),
        }
    }
    let terminator = new_ops.pop_if(|&mut o| m.op(o).kind.is_terminator());
    let mut sorted = topo_sort(m, new_ops);
    sorted.extend(terminator);
    m.region_mut(body).ops = sorted;
    count
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
    comp.set("partition_dims", Attr::IntArray(ElemType::Int(64), partition_dims));
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
            m.walk_region(r, &mut |inner| operands.extend(m.op(inner).operands.iter().copied()));
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
    let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<usize>> =
        (0..ops.len()).filter(|&i| pending[i] == 0).map(std::cmp::Reverse).collect();
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
