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
use crate::ir_util::{add_private_func, clone_op, make_composite, DenseValueMap, ValueMap};
use neuronc_ir::{Attr, ElemType, Module, NamedAttrs, OpId, OpKind, RegionId, ValueDef, ValueId};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// "Not set" in the dense side tables below.
const NONE: u32 = u32::MAX;
/// `replaced[op]`: the op leaves the body without a replacement.
const DROPPED: u32 = u32::MAX - 1;

/// Outlines the kernels of `plan` (computed on function `func_index`) that hold more
/// than one op and move data, at most `limit` of them (fuel). `extra[k]` are ops added to
/// the body after planning (relayouts) that belong to kernel `k`. Returns how many.
pub fn outline_kernels(
    m: &mut Module,
    func_index: usize,
    plan: &NeuronPlan,
    extra: &[Vec<OpId>],
    limit: usize,
) -> usize {
    let body = m.funcs[func_index].body;
    let fname = m.funcs[func_index].name.clone();
    // Position of every op in the body as it is now (the plan's positions predate `extra`).
    let mut pos = vec![NONE; m.ops.len()];
    for (i, &o) in m.region(body).ops.iter().enumerate() {
        pos[o.index()] = i as u32;
    }
    let mut count = 0;
    // Kernel output -> the composite result replacing it (by value index).
    let mut renamed: Vec<u32> = vec![NONE; m.values.len()];
    // Owned op -> the composite replacing it (for the kernel's last op) or `DROPPED`.
    let mut replaced: Vec<u32> = vec![NONE; m.ops.len()];
    let mut map = DenseValueMap::new(m.values.len());
    // Ops copied into some kernel must keep their attributes for every copy; the others
    // leave the body when their kernel is outlined, so their clone may take them.
    let mut copied = vec![false; m.ops.len()];
    for kernel in &plan.fusion.kernels {
        for o in &kernel.duplicated {
            copied[o.index()] = true;
        }
    }
    for (k, kernel) in plan.fusion.kernels.iter().enumerate() {
        if !outlinable(m, kernel) || count >= limit {
            continue;
        }
        let callee = format!("{fname}.kernel{k}");
        let extra = extra.get(k).map_or(&[][..], Vec::as_slice);
        let mut members: Vec<OpId> = kernel
            .ops
            .iter()
            .chain(&kernel.duplicated)
            .chain(extra)
            .copied()
            .collect();
        members.sort_by_key(|o| pos[o.index()]);
        map.clear();
        let movable: Vec<bool> = members
            .iter()
            .map(|o| !copied[o.index()] && (kernel.ops.contains(o) || extra.contains(o)))
            .collect();
        let (kbody, result_types) = build_kernel_body(
            m,
            (&members, &movable),
            &kernel.inputs,
            &kernel.outputs,
            &mut map,
        );
        let parts = kernel
            .outputs
            .iter()
            .map(|&v| plan.layout.of(v).map_or(-1, i64::from))
            .collect();
        let call = kernel_call(m, &callee, k, kernel.inputs.clone(), &result_types, parts);
        add_private_func(m, callee, kbody, result_types);
        // The composite takes the place of the kernel's last op; the other owned ops leave
        // the body (duplicated ones stay for their other users; DCE removes dead copies).
        let last = *kernel
            .ops
            .iter()
            .max_by_key(|o| pos[o.index()])
            .unwrap_or(&members[0]);
        for &o in kernel.ops.iter().chain(extra) {
            replaced[o.index()] = if o == last { call.0 } else { DROPPED };
        }
        for (&v, &r) in kernel.outputs.iter().zip(&m.op(call).results) {
            renamed[v.index()] = r.0;
        }
        count += 1;
    }
    if count == 0 {
        return 0;
    }
    // One pass over the body: owned ops leave, each kernel's last op becomes its call.
    let mut ops = Vec::with_capacity(m.region(body).ops.len());
    for i in 0..m.region(body).ops.len() {
        let o = m.region(body).ops[i];
        match replaced.get(o.index()).copied().unwrap_or(NONE) {
            NONE => ops.push(o),
            r => {
                m.op_mut(o).parent = None;
                if r != DROPPED {
                    let c = OpId(r);
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
fn rename_uses(m: &mut Module, renamed: &[u32]) {
    let mut live = Vec::new();
    m.walk_ops(|op| live.push(op));
    for op in live {
        for v in &mut m.op_mut(op).operands {
            if let Some(&n) = renamed.get(v.index()).filter(|&&n| n != NONE) {
                *v = ValueId(n);
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

/// Builds the decomposition body of one kernel: an argument per input, a copy of every
/// member (in program order), and a return of the outputs. Members flagged movable hand
/// their attributes to their copy instead of having them cloned.
fn build_kernel_body(
    m: &mut Module,
    (members, movable): (&[OpId], &[bool]),
    inputs: &[ValueId],
    outputs: &[ValueId],
    map: &mut DenseValueMap,
) -> (RegionId, Vec<neuronc_ir::TypeId>) {
    let region = m.add_region(None);
    for &v in inputs {
        let a = m.add_region_arg(region, m.value_type(v));
        map.record(v, a);
    }
    for (&op, &take) in members.iter().zip(movable) {
        let attrs = take.then(|| std::mem::take(&mut m.op_mut(op).attrs));
        let c = clone_op(m, op, map);
        if let Some(attrs) = attrs {
            m.op_mut(c).attrs = attrs;
        }
        m.append_op(region, c);
    }
    let rets: Vec<ValueId> = outputs.iter().map(|&v| map.lookup(v)).collect();
    let types = outputs.iter().map(|&v| m.value_type(v)).collect();
    let ret = m.create_op(OpKind::FuncReturn, rets, &[], NamedAttrs::new());
    m.append_op(region, ret);
    (region, types)
}

/// The `neuronc.kernel` composite calling `callee`: kernel number `k` and the partition
/// dimension of each result.
fn kernel_call(
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
    make_composite(m, "neuronc.kernel", callee, comp, inputs, types)
}

/// Stable topological order of `ops` (program order wherever dependencies allow): among
/// the ops whose producers are all placed, the earliest in `ops` goes next.
fn topo_sort(m: &Module, ops: Vec<OpId>) -> Vec<OpId> {
    let n = ops.len();
    let mut index = vec![NONE; m.ops.len()];
    for (i, &o) in ops.iter().enumerate() {
        index[o.index()] = i as u32;
    }
    // Distinct producers of each op (operands, and values its nested regions capture).
    let mut dep_start = Vec::with_capacity(n + 1);
    let mut deps: Vec<u32> = Vec::new();
    let mut last_user = vec![NONE; n];
    let mut captured = Vec::new();
    dep_start.push(0u32);
    for (i, &o) in ops.iter().enumerate() {
        captured.clear();
        for &r in &m.op(o).regions {
            m.walk_region(r, &mut |inner| {
                captured.extend(m.op(inner).operands.iter().copied())
            });
        }
        for &v in m.op(o).operands.iter().chain(&captured) {
            let ValueDef::Result(d, _) = m.value(v).def else {
                continue;
            };
            let p = index.get(d.index()).copied().unwrap_or(NONE);
            if p != NONE && p as usize != i && last_user[p as usize] != i as u32 {
                last_user[p as usize] = i as u32;
                deps.push(p);
            }
        }
        dep_start.push(deps.len() as u32);
    }
    // Users of each op, by counting sort of the dependency edges.
    let mut user_start = vec![0u32; n + 1];
    for &p in &deps {
        user_start[p as usize + 1] += 1;
    }
    for i in 0..n {
        user_start[i + 1] += user_start[i];
    }
    let mut fill = user_start.clone();
    let mut users = vec![0u32; deps.len()];
    for i in 0..n {
        for &p in &deps[dep_start[i] as usize..dep_start[i + 1] as usize] {
            users[fill[p as usize] as usize] = i as u32;
            fill[p as usize] += 1;
        }
    }
    let mut pending: Vec<u32> = (0..n).map(|i| dep_start[i + 1] - dep_start[i]).collect();
    let mut ready: BinaryHeap<Reverse<u32>> = (0..n as u32)
        .filter(|&i| pending[i as usize] == 0)
        .map(Reverse)
        .collect();
    let mut out = Vec::with_capacity(n);
    while let Some(Reverse(i)) = ready.pop() {
        out.push(ops[i as usize]);
        for &u in &users[user_start[i as usize] as usize..user_start[i as usize + 1] as usize] {
            pending[u as usize] -= 1;
            if pending[u as usize] == 0 {
                ready.push(Reverse(u));
            }
        }
    }
    if out.len() != n {
        return ops; // a cycle cannot happen for a valid plan; keep the input order
    }
    out
}
