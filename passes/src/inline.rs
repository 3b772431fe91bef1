//! `inline`: replaces every `func.call` by a copy of its callee's body, then drops the
//! private functions that nothing references any more.
//!
//! Calls to functions that are (directly or transitively) recursive, or whose callee is
//! missing, are left alone. A function stays while any live op anywhere refers to it by
//! symbol (`func.call`'s `callee`, `stablehlo.composite`'s `decomposition`, or any other
//! symbol attribute); public functions always stay.
//! Invariant: the inlined ops appear at the call's position, in the callee's order, with
//! the callee's locations, so the result is deterministic and keeps debug info.
//!
//! A `stablehlo.case` dispatching on a multi-platform jax export's platform index, one of
//! whose branches holds GPU / TPU-only custom calls, is replaced the same way by a copy of
//! its first portable branch (see [`platform`]).

mod platform;

use crate::context::{Changed, PassContext};
use crate::error::PassError;
use crate::ir_util::clone_region_into;
use crate::pass::Pass;
use neuronc_ir::{Attr, Module, OpId, OpKind, RegionId, ValueId};
use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};
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
        if may_inline(module) || platform::has_platform_index(module) {
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

/// Inlines the inlinable calls in module order (pre-order: an inlined body's own calls
/// are inlined before the ops after the call); returns how many.
///
/// The bodies of private functions that only inlinable calls refer to are not walked:
/// every call to them is replaced by a copy (walked where it lands), after which they
/// are dropped, so inlining into them would be wasted. Walking them made a chain of N
/// such functions, each calling the next, cost N²: each body was expanded once for its
/// own sake and once inside every caller's copy.
fn inline_calls(module: &mut Module, ctx: &mut PassContext) -> usize {
    let mut inliner = Inliner {
        recursive: recursive_functions(module),
        bodies: FxHashMap::default(),
        renamed: FxHashMap::default(),
        inlined: 0,
        stopped: false,
    };
    for (i, f) in module.funcs.iter().enumerate() {
        if !module.is_declaration(f) {
            // The first function with a body of a name wins, as symbol lookup does.
            inliner.bodies.entry(f.name.clone()).or_insert(i);
        }
    }
    let only_called = only_called_private(module, &inliner.recursive);
    for (f, skip) in only_called.into_iter().enumerate() {
        if !skip {
            let body = module.funcs[f].body;
            inliner.region(module, ctx, body);
        }
    }
    inliner.inlined
}

/// Per function: whether it is private, not recursive, and nothing refers to it except
/// the `callee` of `func.call`s.
fn only_called_private(m: &Module, recursive: &FxHashSet<String>) -> Vec<bool> {
    let mut other = FxHashSet::default();
    for f in &m.funcs {
        m.walk_region(f.body, &mut |op| {
            let o = m.op(op);
            for (name, a) in o.attrs.iter() {
                if !(o.kind == OpKind::Call && name == "callee") {
                    collect_symbols(a, &mut other);
                }
            }
        });
        for (_, a) in f.attrs.iter() {
            collect_symbols(a, &mut other);
        }
    }
    for (_, a) in m.attrs.iter() {
        collect_symbols(a, &mut other);
    }
    m.funcs
        .iter()
        .map(|f| {
            f.visibility.as_deref() == Some("private")
                && !other.contains(&f.name)
                && !recursive.contains(&f.name)
        })
        .collect()
}

/// One walk over all function bodies that inlines each call as it reaches it.
///
/// Invariant: every op already walked reads its values through `renamed` (the results of
/// inlined calls map to what the callee's copy returns, possibly through further
/// inlined calls), so the walk never revisits an op: a value is defined before its uses
/// in walk order, and its renaming is recorded when its call is inlined. That keeps the
/// pass linear in the module size, where replacing each call's uses over the whole
/// module was quadratic in the number of calls.
struct Inliner {
    recursive: FxHashSet<String>,
    /// Callee name -> function index, for functions with a body.
    bodies: FxHashMap<String, usize>,
    renamed: FxHashMap<ValueId, ValueId>,
    inlined: usize,
    /// Fuel or the inline budget ran out: the walk only renames from here on.
    stopped: bool,
}

impl Inliner {
    /// Walks the ops of region `r`, replacing its op list by the list after inlining.
    fn region(&mut self, m: &mut Module, ctx: &mut PassContext, r: RegionId) {
        let ops = std::mem::take(&mut m.region_mut(r).ops);
        let mut out = Vec::with_capacity(ops.len());
        self.ops(m, ctx, ops, r, &mut out);
        m.region_mut(r).ops = out;
    }

    /// Walks `ops` (ops of region `parent`, in order), appending what remains of them, and
    /// the copies of the callee bodies that replace their calls, to `out`.
    fn ops(
        &mut self,
        m: &mut Module,
        ctx: &mut PassContext,
        ops: Vec<OpId>,
        parent: RegionId,
        out: &mut Vec<OpId>,
    ) {
        for op in ops {
            self.rename_operands(m, op);
            if let Some(branch) = platform::portable_branch(m, op).filter(|_| !self.stopped) {
                if ctx.try_rewrite("inline", m, op) {
                    self.inlined += 1;
                    let copies = self.copy_branch(m, op, branch, parent);
                    self.ops(m, ctx, copies, parent, out);
                    continue;
                }
                self.stopped = true;
            }
            if let Some(callee) = self.inlinable(m, op) {
                if self.inlined < MAX_INLINES && ctx.try_rewrite("inline", m, op) {
                    self.inlined += 1;
                    let copies = self.copy_body(m, op, callee, parent);
                    self.ops(m, ctx, copies, parent, out);
                    continue;
                }
                self.stopped = true;
            }
            for i in 0..m.op(op).regions.len() {
                let r = m.op(op).regions[i];
                self.region(m, ctx, r);
            }
            out.push(op);
        }
    }

    /// Reads the operands of `op` through `renamed`.
    fn rename_operands(&self, m: &mut Module, op: OpId) {
        if self.renamed.is_empty() {
            return;
        }
        for v in &mut m.op_mut(op).operands {
            *v = resolve(&self.renamed, *v);
        }
    }

    /// The function `op` calls, if it is a call to inline.
    fn inlinable(&self, m: &Module, op: OpId) -> Option<usize> {
        if self.stopped || m.op(op).kind != OpKind::Call {
            return None;
        }
        let name = callee_name(m, op)?;
        if self.recursive.contains(name) {
            return None;
        }
        self.bodies.get(name).copied()
    }

    /// Copies the body of function `callee` for `call` (which leaves its region), records
    /// the renaming of the call's results, and returns the copied ops (now in `parent`).
    fn copy_body(
        &mut self,
        m: &mut Module,
        call: OpId,
        callee: usize,
        parent: RegionId,
    ) -> Vec<OpId> {
        let body = m.funcs[callee].body;
        let mut map = FxHashMap::default();
        for (&arg, &operand) in m.region(body).args.iter().zip(&m.op(call).operands) {
            map.insert(arg, operand);
        }
        self.splice(m, body, map, call, parent)
    }

    /// Copies region `src` (its arguments mapped by `map`) in place of `op`: the copies
    /// move to `parent`, `op`'s results are renamed to the copied region's returned
    /// values, and `op` leaves its region. Returns the copied ops.
    fn splice(
        &mut self,
        m: &mut Module,
        src: RegionId,
        mut map: FxHashMap<ValueId, ValueId>,
        op: OpId,
        parent: RegionId,
    ) -> Vec<OpId> {
        let tmp = m.add_region(None);
        let returned = clone_region_into(m, src, tmp, &mut map);
        let copies = std::mem::take(&mut m.region_mut(tmp).ops);
        for &c in &copies {
            m.op_mut(c).parent = Some(parent);
        }
        for (&res, new_v) in m.op(op).results.iter().zip(returned) {
            self.renamed.insert(res, new_v);
        }
        m.op_mut(op).parent = None;
        copies
    }

    /// Copies branch `branch` of the `case` op `op` (which leaves its region) for it, like
    /// [`Inliner::copy_body`] does for a call, and returns the copied ops (now in `parent`).
    fn copy_branch(
        &mut self,
        m: &mut Module,
        op: OpId,
        branch: usize,
        parent: RegionId,
    ) -> Vec<OpId> {
        let src = m.op(op).regions[branch];
        self.splice(m, src, FxHashMap::default(), op, parent)
    }
}

/// The callee name of a `func.call`.
fn callee_name(m: &Module, call: OpId) -> Option<&str> {
    match m.op(call).attrs.get("callee")? {
        Attr::Symbol(s) => Some(s.as_str()),
        _ => None,
    }
}

/// `v` through `renamed`, following chains (a call's result renamed to the result of a
/// call inside the callee that was inlined in turn).
fn resolve(renamed: &FxHashMap<ValueId, ValueId>, mut v: ValueId) -> ValueId {
    while let Some(&to) = renamed.get(&v) {
        v = to;
    }
    v
}

/// Names of functions that can reach themselves through calls: those in a cycle of the
/// call graph (a strongly connected component of more than one function, or a function
/// calling itself), found in one pass (Tarjan's algorithm) rather than one search per
/// function.
fn recursive_functions(m: &Module) -> FxHashSet<String> {
    let mut graph: DiGraph<(), ()> = DiGraph::with_capacity(m.funcs.len(), 0);
    let mut node: FxHashMap<&str, NodeIndex> = FxHashMap::default();
    for f in &m.funcs {
        let n = graph.add_node(());
        node.entry(f.name.as_str()).or_insert(n);
    }
    for (i, f) in m.funcs.iter().enumerate() {
        m.walk_region(f.body, &mut |op| {
            if m.op(op).kind != OpKind::Call {
                return;
            }
            if let Some(&callee) = callee_name(m, op).and_then(|c| node.get(c)) {
                graph.add_edge(NodeIndex::new(i), callee, ());
            }
        });
    }
    let mut out = FxHashSet::default();
    for component in tarjan_scc(&graph) {
        let first = component[0];
        if component.len() > 1 || graph.contains_edge(first, first) {
            out.extend(component.iter().map(|n| m.funcs[n.index()].name.clone()));
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
///
/// Removing a function can leave others unreferenced: they go too (a function referring
/// to itself, or functions referring to each other, stay). Each function's references are
/// collected once and the unreferenced ones peeled off in a worklist, so a chain of N
/// functions each called only by the previous one costs one walk, not N.
fn drop_unreferenced_private(m: &mut Module) -> usize {
    let private = |f: &neuronc_ir::Func| f.visibility.as_deref() == Some("private");
    if !m.funcs.iter().any(private) {
        return 0;
    }
    let dead = {
        let refs = function_references(m);
        let mut pinned = FxHashSet::default();
        for (_, a) in m.attrs.iter() {
            collect_symbols(a, &mut pinned);
        }
        // Name -> how many live functions refer to it.
        let mut count: FxHashMap<&str, usize> = FxHashMap::default();
        for n in refs.iter().flatten() {
            *count.entry(n.as_str()).or_default() += 1;
        }
        let mut private_named: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
        for (i, f) in m.funcs.iter().enumerate().filter(|(_, f)| private(f)) {
            private_named.entry(f.name.as_str()).or_default().push(i);
        }
        let unreferenced = |n: &str, count: &FxHashMap<&str, usize>| {
            count.get(n).copied().unwrap_or(0) == 0 && !pinned.contains(n)
        };
        let mut stack: Vec<usize> = private_named
            .iter()
            .filter(|(n, _)| unreferenced(n, &count))
            .flat_map(|(_, fs)| fs.iter().copied())
            .collect();
        let mut dead = vec![false; m.funcs.len()];
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut dead[i], true) {
                continue;
            }
            for n in &refs[i] {
                let Some(c) = count.get_mut(n.as_str()) else {
                    continue;
                };
                *c -= 1;
                if *c == 0 && !pinned.contains(n) {
                    if let Some(fs) = private_named.get(n.as_str()) {
                        stack.extend(fs);
                    }
                }
            }
        }
        dead
    };
    let mut index = 0;
    m.funcs.retain(|_| {
        index += 1;
        !dead[index - 1]
    });
    dead.iter().filter(|&&d| d).count()
}

/// Per function: the symbols its ops' attributes and its own attributes refer to.
fn function_references(m: &Module) -> Vec<FxHashSet<String>> {
    m.funcs
        .iter()
        .map(|f| {
            let mut refs = FxHashSet::default();
            m.walk_region(f.body, &mut |op| {
                for (_, a) in m.op(op).attrs.iter() {
                    collect_symbols(a, &mut refs);
                }
            });
            for (_, a) in f.attrs.iter() {
                collect_symbols(a, &mut refs);
            }
            refs
        })
        .collect()
}
