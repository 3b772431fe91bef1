//! `inline`: replaces every `func.call` by a copy of its callee's body, then drops the
//! private functions that nothing references any more.
//!
//! Calls to functions that are (directly or transitively) recursive, or whose callee is
//! missing, are left alone. A function stays while any live op anywhere refers to it by
//! symbol (`func.call`'s `callee`, `stablehlo.composite`'s `decomposition`, or any other
//! symbol attribute); public functions always stay.
//! Invariant: the inlined ops appear at the call's position, in the callee's order, with
//! the callee's locations, so the result is deterministic and keeps debug info.

use crate::context::{Changed, PassContext};
use crate::error::PassError;
use crate::ir_util::{clone_region_into, erase_op};
use crate::pass::Pass;
use neuronc_ir::{Attr, Module, OpId, OpKind};
use rustc_hash::{FxHashMap, FxHashSet};

/// Upper bound on inlined calls per run (guards against exponential blow-up).
const MAX_INLINES: usize = 100_000;

/// The `inline` pass.
pub struct Inline;

impl Pass for Inline {
    fn name(&self) -> &'static str {
        "inline"
    }
    fn run(&self, module: &mut Module, ctx: &mut PassContext) -> Result<Changed, PassError> {
        let mut inlined = 0;
        if may_inline(module) {
            inlined = inline_calls(module, ctx);
        }
        let dropped = drop_unreferenced_private(module);
        Ok(Changed::from_bool(inlined > 0 || dropped > 0))
    }
}

/// Whether a call can be inlined at all: its callee must have a body and differ from
/// the function holding the call (a self-call is recursive), so a module with fewer than
/// two functions with bodies has nothing to inline (and needs no walk to find out).
fn may_inline(m: &Module) -> bool {
    m.funcs
        .iter()
        .filter(|f| !m.is_declaration(f))
        .nth(1)
        .is_some()
}

/// Inlines the inlinable calls one at a time, in module order; returns how many.
fn inline_calls(module: &mut Module, ctx: &mut PassContext) -> usize {
    let recursive = recursive_functions(module);
    let mut inlined = 0;
    while inlined < MAX_INLINES {
        let Some((call, callee)) = next_call(module, &recursive) else {
            break;
        };
        if !ctx.try_rewrite("inline", module, call) {
            break;
        }
        inline_call(module, call, callee);
        inlined += 1;
    }
    inlined
}

/// The callee name of a `func.call`.
fn callee_name(m: &Module, call: OpId) -> Option<&str> {
    match m.op(call).attrs.get("callee")? {
        Attr::Symbol(s) => Some(s.as_str()),
        _ => None,
    }
}

/// The first live call (in module order) whose callee exists, has a body and is not
/// recursive.
fn next_call(m: &Module, recursive: &FxHashSet<String>) -> Option<(OpId, usize)> {
    let mut found = None;
    m.walk_ops(|op| {
        if found.is_some() || m.op(op).kind != OpKind::Call {
            return;
        }
        let Some(name) = callee_name(m, op) else {
            return;
        };
        if recursive.contains(name) {
            return;
        }
        // Declarations (no body) have nothing to inline.
        if let Some(idx) = m
            .funcs
            .iter()
            .position(|f| f.name == name && !m.is_declaration(f))
        {
            found = Some((op, idx));
        }
    });
    found
}

fn inline_call(m: &mut Module, call: OpId, callee: usize) {
    let body = m.funcs[callee].body;
    let Some(parent) = m.op(call).parent else {
        return;
    };
    let mut map = FxHashMap::default();
    for (arg, &operand) in m
        .region(body)
        .args
        .clone()
        .iter()
        .zip(&m.op(call).operands.clone())
    {
        map.insert(*arg, operand);
    }
    let tmp = m.add_region(None);
    let returned = clone_region_into(m, body, tmp, &mut map);
    let new_ops = std::mem::take(&mut m.region_mut(tmp).ops);
    let pos = m
        .region(parent)
        .ops
        .iter()
        .position(|&o| o == call)
        .unwrap_or(0);
    for &op in &new_ops {
        m.op_mut(op).parent = Some(parent);
    }
    m.region_mut(parent).ops.splice(pos..pos, new_ops);
    for (res, new_v) in m.op(call).results.clone().into_iter().zip(returned) {
        m.replace_all_uses(res, new_v);
    }
    erase_op(m, call);
}

/// Names of functions that can reach themselves through calls.
fn recursive_functions(m: &Module) -> FxHashSet<String> {
    let mut edges: FxHashMap<&str, Vec<String>> = FxHashMap::default();
    for f in &m.funcs {
        let mut callees = Vec::new();
        m.walk_region(f.body, &mut |op| {
            if m.op(op).kind == OpKind::Call {
                if let Some(c) = callee_name(m, op) {
                    callees.push(c.to_string());
                }
            }
        });
        edges.insert(f.name.as_str(), callees);
    }
    let mut out = FxHashSet::default();
    for f in &m.funcs {
        let mut stack: Vec<&str> = edges[f.name.as_str()].iter().map(String::as_str).collect();
        let mut seen = FxHashSet::default();
        while let Some(n) = stack.pop() {
            if n == f.name {
                out.insert(f.name.clone());
                break;
            }
            if seen.insert(n) {
                if let Some(next) = edges.get(n) {
                    stack.extend(next.iter().map(String::as_str));
                }
            }
        }
    }
    out
}

fn collect_symbols(a: &Attr, out: &mut FxHashSet<String>) {
    match a {
        Attr::Symbol(s) => {
            out.insert(crate::ir_util::symbol_root(s).to_string());
        }
        Attr::Array(items) => items.iter().for_each(|i| collect_symbols(i, out)),
        Attr::Dict(d) => d.iter().for_each(|(_, v)| collect_symbols(v, out)),
        _ => {}
    }
}

/// Removes private functions no remaining function refers to; returns how many.
fn drop_unreferenced_private(m: &mut Module) -> usize {
    let mut dropped = 0;
    // Only private functions are ever dropped: without one, no symbol needs collecting.
    while m
        .funcs
        .iter()
        .any(|f| f.visibility.as_deref() == Some("private"))
    {
        let mut referenced = FxHashSet::default();
        for f in &m.funcs {
            m.walk_region(f.body, &mut |op| {
                for (_, a) in m.op(op).attrs.iter() {
                    collect_symbols(a, &mut referenced);
                }
            });
            for (_, a) in f.attrs.iter() {
                collect_symbols(a, &mut referenced);
            }
        }
        for (_, a) in m.attrs.iter() {
            collect_symbols(a, &mut referenced);
        }
        let before = m.funcs.len();
        m.funcs
            .retain(|f| f.visibility.as_deref() != Some("private") || referenced.contains(&f.name));
        let removed = before - m.funcs.len();
        if removed == 0 {
            break;
        }
        dropped += removed;
    }
    dropped
}
