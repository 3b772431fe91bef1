//! Makes the layout plan's relayouts explicit in the IR, so that every physical transpose
//! the NeuronCore layout forces is an op whose cost can be seen in `opt` output.
//!
//! Owns: [`materialize_relayouts`]. Each distinct relayout — a value moved to another
//! partition dimension for one kernel (or for the ops left outside kernels) — becomes
//!
//! ```text
//! %r = stablehlo.composite "neuronc.relayout" %v {composite_attributes =
//!        {from = 0 : i64, to = 1 : i64, bytes = 1048576 : i64},
//!        decomposition = @main.relayout0} : (tensor<..>) -> tensor<..>
//! ```
//!
//! placed right before its first consumer, which (with the kernel's other consumers of the
//! same move) now reads `%r`. The decomposition is an identity function per tensor type:
//! a relayout changes where the bytes live, never their values, so the interpreter runs
//! the program unchanged. `from`/`to` are partition dimensions (-1: none).
//! Invariants: a relayout op is placed after its operand's definition and before every
//! consumer rewritten to use it; a relayout for consumers inside a kernel is returned as
//! an extra member of that kernel (so outlining moves it into the kernel's body and the
//! kernel keeps reading the original value); consumers that are copied into several
//! kernels are left alone (their copies would need one relayout each), and counted, as
//! are relayouts of an op's own result (reported by the layout plan with no operand).

use super::layout::Part;
use super::{outline, NeuronPlan};
use crate::ir_util::{add_private_func, make_composite};
use neuronc_ir::{Attr, ElemType, Module, NamedAttrs, OpId, OpKind, TypeId, ValueId};
use std::collections::BTreeMap;

/// Relayout ops added to the body, grouped for outlining.
#[derive(Default)]
pub struct Materialized {
    /// Per kernel index: relayout ops that belong to it.
    pub members: Vec<Vec<OpId>>,
    /// Relayouts added (top level and inside kernels).
    pub added: usize,
    /// Relayouts left implicit: their consumer is copied into kernels, or they move an
    /// op's own result.
    pub skipped: usize,
}

/// One relayout op to create: the value, its move, and who reads the result.
struct Group {
    value: ValueId,
    from: Part,
    to: Part,
    bytes: u64,
    /// (consumer, operand index), consumers in program order.
    uses: Vec<(OpId, usize)>,
}

/// Inserts a relayout op for every distinct (value, target layout, kernel) of `plan`'s
/// relayouts in function `func_index`. Kernels that will not be outlined get their
/// relayouts at top level too; `outlined(k)` says which will be.
pub fn materialize_relayouts(
    m: &mut Module,
    func_index: usize,
    plan: &NeuronPlan,
    outlined: impl Fn(usize) -> bool,
) -> Materialized {
    let mut out = Materialized {
        members: vec![Vec::new(); plan.fusion.kernels.len()],
        ..Materialized::default()
    };
    let mut copied = vec![false; m.ops.len()];
    for o in plan.fusion.kernels.iter().flat_map(|k| &k.duplicated) {
        copied[o.index()] = true;
    }
    // (value, to, kernel or usize::MAX for top level) -> group, in a deterministic order.
    let mut groups: BTreeMap<(u32, i64, usize), Group> = BTreeMap::new();
    for r in &plan.layout.relayouts {
        // `operand == usize::MAX`: the op's own result is produced in another layout (a
        // matmul whose output partition axis is a batch dimension); left implicit.
        if r.operand == usize::MAX || copied.get(r.consumer.index()).copied().unwrap_or(false) {
            out.skipped += 1;
            continue;
        }
        let kernel = plan
            .fusion
            .kernel_of
            .get(&r.consumer)
            .copied()
            .filter(|&k| outlined(k))
            .unwrap_or(usize::MAX);
        let key = (r.value.0, part_attr(r.to), kernel);
        let g = groups.entry(key).or_insert_with(|| Group {
            value: r.value,
            from: r.from,
            to: r.to,
            bytes: r.bytes,
            uses: Vec::new(),
        });
        g.uses.push((r.consumer, r.operand));
    }
    if groups.is_empty() {
        return out;
    }
    let body = m.funcs[func_index].body;
    let fname = m.funcs[func_index].name.clone();
    let mut identity: BTreeMap<TypeId, String> = BTreeMap::new();
    // Ops to insert before each consumer, as (consumer, relayout) sorted by consumer.
    let mut before: Vec<(OpId, OpId)> = Vec::new();
    for ((_, _, kernel), mut g) in groups {
        g.uses.sort_by_key(|(c, _)| plan.graph.pos.get(c).copied());
        let ty = m.value_type(g.value);
        let callee = identity_func(m, &mut identity, &fname, ty);
        let op = make_relayout(m, &g, callee);
        let r = m.op(op).results[0];
        for &(c, i) in &g.uses {
            m.op_mut(c).operands[i] = r;
        }
        before.push((g.uses[0].0, op));
        if kernel != usize::MAX {
            out.members[kernel].push(op);
        }
        out.added += 1;
    }
    // A stable sort keeps each consumer's relayouts in creation order.
    before.sort_by_key(|&(c, _)| c);
    let mut has_before = vec![false; m.ops.len()];
    for &(c, _) in &before {
        has_before[c.index()] = true;
    }
    let old = std::mem::take(&mut m.region_mut(body).ops);
    let mut ops = Vec::with_capacity(old.len() + out.added);
    for o in old {
        if !has_before.get(o.index()).copied().unwrap_or(false) {
            ops.push(o);
            continue;
        }
        let from = before.partition_point(|&(c, _)| c < o);
        let to = from + before[from..].partition_point(|&(c, _)| c == o);
        for &(_, r) in &before[from..to] {
            m.op_mut(r).parent = Some(body);
            ops.push(r);
        }
        ops.push(o);
    }
    m.region_mut(body).ops = ops;
    out
}

fn part_attr(p: Part) -> i64 {
    p.map_or(-1, i64::from)
}

/// The identity function on `ty` that relayout composites decompose to (one per type).
fn identity_func(
    m: &mut Module,
    made: &mut BTreeMap<TypeId, String>,
    fname: &str,
    ty: TypeId,
) -> String {
    if let Some(name) = made.get(&ty) {
        return name.clone();
    }
    let taken = outline::taken_names(m, ".relayout");
    let name = outline::fresh_name(m, &taken, format!("{fname}.relayout{}", made.len()));
    let region = m.add_region(None);
    let arg = m.add_region_arg(region, ty);
    let ret = m.create_op(OpKind::FuncReturn, vec![arg], &[], NamedAttrs::new());
    m.append_op(region, ret);
    add_private_func(m, name.clone(), region, vec![ty]);
    made.insert(ty, name.clone());
    name
}

fn make_relayout(m: &mut Module, g: &Group, callee: String) -> OpId {
    let int = |v: i64| Attr::Int(v, ElemType::Int(64));
    // Set in name order, so that each lands at the end of the sorted list.
    let mut comp = NamedAttrs::with_capacity(3);
    comp.set("bytes", int(g.bytes.min(i64::MAX as u64) as i64));
    comp.set("from", int(part_attr(g.from)));
    comp.set("to", int(part_attr(g.to)));
    let ty = m.value_type(g.value);
    make_composite(m, "neuronc.relayout", callee, comp, vec![g.value], &[ty])
}
