//! Materializes a fusion plan in the IR: each multi-op kernel becomes a private function
//! `@<func>.kernel<N>` and a `stablehlo.composite "neuronc.kernel"` call to it.
//!
//! This is the textual form of fused kernels: it parses and verifies as ordinary
//! StableHLO, the interpreter runs it through the decomposition, and `explain` reads the
//! kernel back from it. `composite_attributes` record the kernel number and the partition
//! dimension chosen for each result (`partition_dims`, -1 for none).
//! Invariants: after outlining, the function body is in topological order again and every
//! removed op's results have no remaining users. An op that leaves the body is moved into
//! the body of the last kernel that holds it (keeping its id, results, regions and
//! attributes); every other kernel holding it gets a copy. Only the function body's uses
//! are renamed to the composites' results. A kernel whose body would equal one outlined
//! before calls that function instead ([`super::kernel_share`]); what would have moved
//! into its body is dropped with the rest of its members.

use super::fusion::OpClass;
use super::graph::{captured_values, Csr};
use super::kernel_share::{share_plan, Candidate};
use super::NeuronPlan;
use crate::ir_util::{
    add_private_func, clone_op, make_composite, rename_operands, DenseValueMap, ValueMap,
};
use neuronc_ir::{Attr, ElemType, Module, NamedAttrs, OpId, OpKind, RegionId, ValueDef, ValueId};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

/// "Not set" in the dense side tables below.
const NONE: u32 = u32::MAX;
/// `replaced[op]`: the op leaves the body without a replacement.
const DROPPED: u32 = u32::MAX - 1;

/// Outlines the kernels `k` of `plan` (computed on function `func_index`) with
/// `outlined[k]` (the caller picks [`outlinable`] ones, as many as fuel allows). `extra[k]`
/// are ops added to the body after planning (relayouts) that belong to kernel `k`.
/// Returns how many were outlined.
pub fn outline_kernels(
    m: &mut Module,
    func_index: usize,
    plan: &NeuronPlan,
    extra: &[Vec<OpId>],
    outlined: &[bool],
) -> usize {
    let body = m.funcs[func_index].body;
    let fname = m.funcs[func_index].name.clone();
    let taken = taken_names(m, ".kernel");
    let outlined = |k: usize| outlined.get(k).copied().unwrap_or(false);
    let chosen: Vec<usize> = (0..plan.fusion.kernels.len())
        .filter(|&k| outlined(k))
        .collect();
    if chosen.is_empty() {
        return 0;
    }
    // Position of every op in the body as it is now (the plan's positions predate `extra`).
    let mut pos = vec![NONE; m.ops.len()];
    for (i, &o) in m.region(body).ops.iter().enumerate() {
        pos[o.index()] = i as u32;
    }
    // Members of every chosen kernel in body order (list `c` for `chosen[c]`), and which
    // earlier kernel's function each one calls; both read the module before it changes.
    let members = Members::new(m, &pos, plan, extra, &chosen);
    let shares = {
        let candidates: Vec<Candidate<'_>> = chosen
            .iter()
            .enumerate()
            .map(|(c, &k)| Candidate {
                inputs: &plan.fusion.kernels[k].inputs,
                members: members.of(c),
                outputs: &plan.fusion.kernels[k].outputs,
            })
            .collect();
        share_plan(m, &candidates)
    };
    // Kernel output -> the composite result replacing it (by value index).
    let mut renamed: Vec<u32> = vec![NONE; m.values.len()];
    // Owned op -> the composite replacing it (for the kernel's last op) or `DROPPED`.
    let mut replaced: Vec<u32> = vec![NONE; m.ops.len()];
    let mut map = DenseValueMap::new(m.values.len());
    // Per chosen kernel: the function it calls (index into `m.funcs`).
    let mut callee_of: Vec<usize> = Vec::with_capacity(chosen.len());
    // Scratch: the result types of a kernel.
    let mut types = Vec::new();
    for (c, &k) in chosen.iter().enumerate() {
        let kernel = &plan.fusion.kernels[k];
        let extra = extra.get(k).map_or(&[][..], Vec::as_slice);
        let list = members.of(c);
        let parts = kernel
            .outputs
            .iter()
            .map(|&v| plan.layout.of(v).map_or(-1, i64::from))
            .collect();
        types.clear();
        types.extend(kernel.outputs.iter().map(|&v| m.value_type(v)));
        let call = match shares[c] {
            Some(first) => {
                // The body exists already: what would have moved into it is dropped.
                for &o in list.iter().filter(|&&o| members.moves(o, c)) {
                    m.op_mut(o).parent = None;
                }
                let fi = callee_of[first];
                callee_of.push(fi);
                let callee = m.funcs[fi].name.clone();
                kernel_call(m, callee, k, kernel.inputs.clone(), &types, parts)
            }
            None => {
                map.clear();
                let kbody =
                    build_kernel_body(m, (&members, c), &kernel.inputs, &kernel.outputs, &mut map);
                let callee = fresh_name(m, &taken, kernel_name(&fname, k));
                let call = kernel_call(m, callee.clone(), k, kernel.inputs.clone(), &types, parts);
                add_private_func(m, callee, kbody, types.clone());
                callee_of.push(m.funcs.len() - 1);
                call
            }
        };
        // The composite takes the place of the kernel's last op; the other owned ops leave
        // the body (duplicated ones stay for their other users; DCE removes dead copies).
        let last = *kernel
            .ops
            .iter()
            .max_by_key(|o| pos[o.index()])
            .unwrap_or(&list[0]);
        for &o in kernel.ops.iter().chain(extra) {
            replaced[o.index()] = if o == last { call.0 } else { DROPPED };
        }
        for (&v, &r) in kernel.outputs.iter().zip(&m.op(call).results) {
            renamed[v.index()] = r.0;
        }
    }
    replace_in_body(m, body, &replaced, &renamed);
    chosen.len()
}

/// The members of each of the `chosen` kernels in body order ([`members_in_order`]), list
/// `c` for kernel `chosen[c]`, and which kernel each member moves into rather than being
/// copied: the last one made that holds it, when the op itself leaves the body (it is
/// owned by an outlined kernel, or is an extra op of one). Ops duplicated into several
/// kernels are copied into all of them but that last one.
struct Members {
    lists: Csr<OpId>,
    /// By op index: the last list holding the op, with [`LEAVES`] set when it leaves
    /// the body (only meaningful for members).
    last: Vec<u32>,
}

/// In [`Members::last`]: the op leaves the body.
const LEAVES: u32 = 1 << 31;

impl Members {
    fn new(
        m: &Module,
        pos: &[u32],
        plan: &NeuronPlan,
        extra: &[Vec<OpId>],
        chosen: &[usize],
    ) -> Self {
        let extra_of = |k: usize| extra.get(k).map_or(&[][..], Vec::as_slice);
        let size = |&k: &usize| {
            let kernel = &plan.fusion.kernels[k];
            kernel.ops.len() + kernel.duplicated.len() + extra_of(k).len()
        };
        let mut lists = Csr::with_capacity(chosen.len(), chosen.iter().map(size).sum());
        let mut last = vec![0u32; m.ops.len()];
        for (c, &k) in chosen.iter().enumerate() {
            let kernel = &plan.fusion.kernels[k];
            let extra = extra_of(k);
            members_in_order(
                pos,
                (&kernel.ops, &kernel.duplicated, extra),
                lists.items_mut(),
            );
            lists.close();
            for o in kernel.ops.iter().chain(extra) {
                last[o.index()] = c as u32 | LEAVES;
            }
            for o in &kernel.duplicated {
                last[o.index()] = c as u32 | (last[o.index()] & LEAVES);
            }
        }
        Members { lists, last }
    }

    /// The members of list `c`.
    fn of(&self, c: usize) -> &[OpId] {
        self.lists.of(c as u32)
    }

    /// Whether member `op` of list `c` moves into that kernel's body (rather than being
    /// copied).
    fn moves(&self, op: OpId, c: usize) -> bool {
        self.last[op.index()] == c as u32 | LEAVES
    }
}

/// Rebuilds the op list of `body` in one pass: ops `replaced` by `DROPPED` leave, those
/// replaced by a composite become it; then renames the body's uses of kernel outputs to
/// the composites' results (`renamed`) and restores topological order.
fn replace_in_body(m: &mut Module, body: RegionId, replaced: &[u32], renamed: &[u32]) {
    let mut list = std::mem::take(&mut m.region_mut(body).ops);
    let mut ops = Vec::with_capacity(list.len());
    for &o in &list {
        match replaced.get(o.index()).copied().unwrap_or(NONE) {
            NONE => ops.push(o),
            r => {
                // `o` was moved into a kernel body (its last copy): it keeps that parent.
                if r != DROPPED {
                    let c = OpId(r);
                    m.op_mut(c).parent = Some(body);
                    ops.push(c);
                }
            }
        }
    }
    list.clone_from(&ops);
    m.region_mut(body).ops = list;
    // Only the function body's uses: its values are used nowhere else, and the ops moved
    // into kernel bodies keep reading the original values there.
    rename_operands(m, body, renamed);
    // Multi-output kernels may now feed ops placed before them: restore topological order.
    let terminator = ops.pop_if(|&mut o| m.op(o).kind.is_terminator());
    let mut sorted = topo_sort(m, ops);
    sorted.extend(terminator);
    m.region_mut(body).ops = sorted;
}

/// Appends the ops of a kernel (owned, copied and extra) to `out` in body order (`pos`).
/// Owned and copied ops come sorted by plan position, which body order preserves, so they
/// are merged; the few extra ops (relayouts) are sorted in.
fn members_in_order(
    pos: &[u32],
    (ops, dup, extra): (&[OpId], &[OpId], &[OpId]),
    out: &mut Vec<OpId>,
) {
    let key = |o: &OpId| pos[o.index()];
    let start = out.len();
    out.reserve(ops.len() + dup.len() + extra.len());
    let sorted = |list: &[OpId]| list.windows(2).all(|w| key(&w[0]) < key(&w[1]));
    if sorted(ops) && sorted(dup) {
        let (mut i, mut j) = (0, 0);
        while i < ops.len() && j < dup.len() {
            if key(&ops[i]) < key(&dup[j]) {
                out.push(ops[i]);
                i += 1;
            } else {
                out.push(dup[j]);
                j += 1;
            }
        }
        out.extend_from_slice(&ops[i..]);
        out.extend_from_slice(&dup[j..]);
        if extra.is_empty() {
            return;
        }
    } else {
        out.extend_from_slice(ops);
        out.extend_from_slice(dup);
    }
    out.extend_from_slice(extra);
    // Members are distinct ops of the body: their positions are distinct keys.
    out[start..].sort_by_key(key);
}

/// Names of the module's functions that contain `infix`: the only ones a generated
/// `<func><infix><n>` name can collide with (they came with the input, e.g. an earlier
/// `opt` output read back).
pub(super) fn taken_names(m: &Module, infix: &str) -> HashSet<String> {
    m.funcs
        .iter()
        .filter(|f| f.name.contains(infix))
        .map(|f| f.name.clone())
        .collect()
}

/// `name`, or when the input already had a function of that name, the first free
/// `<name>_<i>` (generated names end in a digit, so a suffixed one never equals another
/// generated name; the module is searched only in that rare case).
pub(super) fn fresh_name(m: &Module, taken: &HashSet<String>, name: String) -> String {
    if !taken.contains(&name) {
        return name;
    }
    (1..)
        .map(|i| format!("{name}_{i}"))
        .find(|n| !taken.contains(n) && m.func(n).is_none())
        .unwrap_or(name)
}

/// `<func>.kernel<k>`.
fn kernel_name(func: &str, k: usize) -> String {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = k;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let mut name = String::with_capacity(func.len() + 7 + digits.len() - at);
    name.push_str(func);
    name.push_str(".kernel");
    name.extend(digits[at..].iter().map(|&d| char::from(d)));
    name
}

/// Moves `op` (detached from the body by the caller's rebuild) into a kernel body: its
/// operands, and those of the ops nested in its regions, read through `map` (kernel
/// inputs become arguments, copies made earlier in the kernel replace their originals);
/// its results, regions and attributes stay its own, so later members read them as they
/// are.
fn move_op(m: &mut Module, op: OpId, map: &DenseValueMap) {
    for v in &mut m.op_mut(op).operands {
        *v = map.lookup(*v);
    }
    if m.op(op).regions.is_empty() {
        return;
    }
    let mut nested = Vec::new();
    for ri in 0..m.op(op).regions.len() {
        m.walk_region(m.op(op).regions[ri], &mut |inner| nested.push(inner));
    }
    for inner in nested {
        for v in &mut m.op_mut(inner).operands {
            *v = map.lookup(*v);
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
/// member of list `c` (in program order), and a return of the outputs. Members that
/// [`Members::moves`] into it are moved in instead of copied.
fn build_kernel_body(
    m: &mut Module,
    (members, c): (&Members, usize),
    inputs: &[ValueId],
    outputs: &[ValueId],
    map: &mut DenseValueMap,
) -> RegionId {
    let list = members.of(c);
    let region = m.add_region(None);
    let r = m.region_mut(region);
    r.args.reserve_exact(inputs.len());
    r.ops.reserve_exact(list.len() + 1);
    for &v in inputs {
        let a = m.add_region_arg(region, m.value_type(v));
        map.record(v, a);
    }
    for &op in list {
        if members.moves(op, c) {
            move_op(m, op, map);
            m.append_op(region, op);
        } else {
            let c = clone_op(m, op, map);
            m.append_op(region, c);
        }
    }
    let rets: Vec<ValueId> = outputs.iter().map(|&v| map.lookup(v)).collect();
    let ret = m.create_op(OpKind::FuncReturn, rets, &[], NamedAttrs::new());
    m.append_op(region, ret);
    region
}

/// The `neuronc.kernel` composite calling `callee`: kernel number `k` and the partition
/// dimension of each result.
fn kernel_call(
    m: &mut Module,
    callee: String,
    k: usize,
    inputs: Vec<ValueId>,
    types: &[neuronc_ir::TypeId],
    partition_dims: Vec<i64>,
) -> OpId {
    let mut comp = NamedAttrs::with_capacity(2);
    comp.set("kernel", Attr::Int(k as i64, ElemType::Int(64)));
    comp.set(
        "partition_dims",
        Attr::IntArray(ElemType::Int(64), partition_dims),
    );
    make_composite(m, "neuronc.kernel", callee, comp, inputs, types)
}

/// Stable topological order of `ops` (program order wherever dependencies allow): among
/// the ops whose producers are all placed, the earliest in `ops` goes next. The ops before
/// the first one that reads a later op's result keep their places (each is the earliest
/// ready op in its turn), so only the ops from there on are sorted.
fn topo_sort(m: &Module, mut ops: Vec<OpId>) -> Vec<OpId> {
    let mut index = vec![NONE; m.ops.len()];
    for (i, &o) in ops.iter().enumerate() {
        index[o.index()] = i as u32;
    }
    let first = (0..ops.len()).find(|&i| {
        let mut late = false;
        each_producer(m, ops[i], &index, |p| late |= p as usize > i);
        late
    });
    if let Some(first) = first {
        let tail = sort_tail(m, &ops[first..], (&index, first));
        ops.truncate(first);
        ops.extend(tail);
    }
    ops
}

/// Calls `f` with the position (`index`) of the producer of every operand of `op` and of
/// every value its nested regions capture ([`captured_values`]), when that producer is one
/// of the sorted ops.
fn each_producer(m: &Module, op: OpId, index: &[u32], mut f: impl FnMut(u32)) {
    let o = m.op(op);
    let captured = if o.regions.is_empty() {
        Vec::new()
    } else {
        captured_values(m, op)
    };
    for &v in o.operands.iter().chain(&captured) {
        if let ValueDef::Result(d, _) = m.value(v).def {
            let p = index.get(d.index()).copied().unwrap_or(NONE);
            if p != NONE {
                f(p);
            }
        }
    }
}

/// [`topo_sort`] of `ops`, the sorted ops from position `base` on (`index` holds the
/// positions of all of them; producers before `base` are placed already).
fn sort_tail(m: &Module, ops: &[OpId], (index, base): (&[u32], usize)) -> Vec<OpId> {
    let n = ops.len();
    // Distinct producers of each op among `ops`: `deps[dep_start[i]..dep_start[i + 1]]`.
    let mut dep_start = Vec::with_capacity(n + 1);
    let mut deps: Vec<u32> = Vec::new();
    let mut last_user = vec![NONE; n];
    dep_start.push(0u32);
    for (i, &o) in ops.iter().enumerate() {
        each_producer(m, o, index, |p| {
            let Some(p) = (p as usize).checked_sub(base) else {
                return;
            };
            if p != i && last_user[p] != i as u32 {
                last_user[p] = i as u32;
                deps.push(p as u32);
            }
        });
        dep_start.push(deps.len() as u32);
    }
    heap_order(ops, &dep_start, &deps)
}

/// The stable order of `ops` given the producers of each (`deps`, list `i` from
/// `dep_start[i]`): repeatedly the earliest op whose producers are all placed.
fn heap_order(ops: &[OpId], dep_start: &[u32], deps: &[u32]) -> Vec<OpId> {
    let n = ops.len();
    // Users of each op, by counting sort of the dependency edges.
    let mut user_start = vec![0u32; n + 1];
    for &p in deps {
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
        return ops.to_vec(); // a cycle cannot happen for a valid plan; keep the input order
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{kernel_name, topo_sort};
    use neuronc_ir::parse_module;

    /// The stable topological order, derived by hand: at each step the earliest op (in
    /// the given order) whose producers are all placed.
    #[test]
    fn topo_sort_places_the_earliest_ready_op_first() {
        let m = parse_module(
            "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
               %0 = stablehlo.exponential %a : tensor<4xf32>
               %1 = stablehlo.negate %a : tensor<4xf32>
               %2 = stablehlo.add %0, %1 : tensor<4xf32>
               %3 = stablehlo.abs %a : tensor<4xf32>
               %4 = stablehlo.multiply %2, %3 : tensor<4xf32>
               %5 = stablehlo.sqrt %a : tensor<4xf32>
               return %4 : tensor<4xf32>
             }",
        )
        .unwrap();
        let op = m.region(m.funcs[0].body).ops.clone();
        // Already in order: unchanged.
        assert_eq!(topo_sort(&m, op[..6].to_vec()), op[..6]);
        // %2 (third) reads %1 (fifth): %0 and %3 stay, then %5 and %1 are ready before
        // %2, and %4 waits for %2.
        let given = vec![op[0], op[3], op[2], op[5], op[1], op[4]];
        let expected = vec![op[0], op[3], op[5], op[1], op[2], op[4]];
        assert_eq!(topo_sort(&m, given), expected);
        // The first op already reads a later one: all of it is sorted.
        let given = vec![op[4], op[2], op[0], op[1], op[3], op[5]];
        let expected = vec![op[0], op[1], op[2], op[3], op[4], op[5]];
        assert_eq!(topo_sort(&m, given), expected);
    }

    #[test]
    fn kernel_names_spell_the_number_in_decimal() {
        assert_eq!(kernel_name("main", 0), "main.kernel0");
        assert_eq!(kernel_name("f", 1207), "f.kernel1207");
        assert_eq!(
            kernel_name("g", usize::MAX),
            format!("g.kernel{}", usize::MAX)
        );
    }
}
