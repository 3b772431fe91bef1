//! `duplicate-function-elimination`: merges private functions with identical bodies.
//!
//! `neuron-fuse` outlines every kernel into a private function of its own, so a model with
//! N identical layers gets N identical copies of each per-layer kernel (the BERT-base
//! training step: 538 kernel functions with 74 distinct bodies). This pass keeps the first
//! function of each class of structurally equal private functions, points every symbol
//! reference to the others (`decomposition`, `callee`, anywhere in an op's attributes) at
//! it, and removes them. MLIR has a pass of the same name and purpose.
//!
//! Equality: the same argument and result types, the same argument, result and function
//! attributes, and bodies equal op by op — kind, attributes, result types, operands as
//! positions (argument `i` of a region, result `j` of the `k`-th op), nested regions
//! alike. Debug locations are ignored: a merged function keeps the first one's, call sites
//! keep their own. Symbol references compare by name, so two functions that differ only
//! in which of two (now merged) functions they call become equal after the rename; the
//! pass repeats until a round merges nothing.
//!
//! Invariants: public functions are never merged or removed (they are callable by name
//! from outside); the kept function of a class is the first in module order, so the
//! result is deterministic; the ops of removed functions stay in the arena, unreachable.
//! Each merge is one rewrite (`--opt-fuel`, `--trace-rewrites`).

use crate::context::{Changed, PassContext};
use crate::error::PassError;
use crate::ir_util::{symbol_root, DenseValueMap, ValueMap};
use crate::pass::Pass;
use neuronc_ir::{Attr, Module, NamedAttrs, OpId, RegionId, ValueId};
use rustc_hash::{FxHashMap, FxHasher};
use std::hash::{Hash, Hasher};

/// The `duplicate-function-elimination` pass.
pub struct DuplicateFunctionElimination;

impl Pass for DuplicateFunctionElimination {
    fn name(&self) -> &'static str {
        "duplicate-function-elimination"
    }

    fn run(&self, module: &mut Module, ctx: &mut PassContext) -> Result<Changed, PassError> {
        let mut changed = false;
        // One table for every round (it is cleared per function in constant time, and
        // allocating one as large as the value arena is most of a cheap round's cost).
        let mut slots = Slots::new(module.values.len());
        loop {
            let renames = find_duplicates(module, ctx, &mut slots);
            if renames.is_empty() {
                break;
            }
            changed = true;
            if !apply_renames(module, &renames) {
                break;
            }
        }
        Ok(Changed::from_bool(changed))
    }
}

/// Duplicates found in one round: removed function name -> kept function name.
type Renames = FxHashMap<String, String>;

/// One round: every private function equal to an earlier one is renamed to the first
/// such function (a rewrite `ctx` may refuse). Structural hashes (kinds, operand
/// positions, result types, attribute names and values) group candidates,
/// [`same_function`] confirms them. Both read the module only, so in large modules each
/// runs on two threads, over contiguous halves of the functions; the renames are then
/// taken in module order, so the result does not depend on the threads.
fn find_duplicates(m: &Module, ctx: &mut PassContext, slots: &mut Slots) -> Renames {
    let funcs: Vec<usize> = (0..m.funcs.len())
        .filter(|&fi| {
            let f = &m.funcs[fi];
            f.visibility.as_deref() == Some("private") && !m.is_declaration(f)
        })
        .collect();
    let ops: usize = funcs
        .iter()
        .map(|&fi| m.region(m.funcs[fi].body).ops.len())
        .sum();
    let parallel = ops >= PARALLEL_MIN_OPS;
    let hashes = in_halves(m, &funcs, parallel, slots, |slots, fi| {
        function_hash(m, fi, slots)
    });
    // Hash -> positions (in `funcs`) of the functions with that hash, ascending.
    let mut classes: FxHashMap<u64, Vec<usize>> = FxHashMap::default();
    for (i, h) in hashes.iter().enumerate() {
        if let Some(h) = h {
            classes.entry(*h).or_default().push(i);
        }
    }
    let positions: Vec<usize> = (0..funcs.len()).collect();
    // The first earlier function equal to each one: never itself a duplicate (an
    // earlier function equal to it would be equal to this one and found first).
    let firsts = in_halves(m, &positions, parallel, slots, |slots, i| {
        let class = classes.get(&hashes[i]?)?;
        class
            .iter()
            .take_while(|&&j| j < i)
            .find(|&&j| same_function(m, funcs[j], funcs[i], slots))
            .map(|&j| funcs[j])
    });
    let mut renames = Renames::default();
    for (i, first) in firsts.into_iter().enumerate() {
        let Some(k) = first else { continue };
        let f = &m.funcs[funcs[i]];
        let first_op = m.region(f.body).ops[0];
        if ctx.try_rewrite("duplicate-function-elimination", m, first_op) {
            renames.insert(f.name.clone(), m.funcs[k].name.clone());
        }
    }
    renames
}

/// `f` of every item, in item order, with `slots`; with `parallel`, in two contiguous
/// halves on two threads (the helper with [`Slots`] of its own).
fn in_halves<T: Send>(
    m: &Module,
    items: &[usize],
    parallel: bool,
    slots: &mut Slots,
    f: impl Fn(&mut Slots, usize) -> Option<T> + Sync,
) -> Vec<Option<T>> {
    let run = |part: &[usize], slots: &mut Slots| -> Vec<Option<T>> {
        part.iter().map(|&x| f(slots, x)).collect()
    };
    if !parallel {
        return run(items, slots);
    }
    let (a, b) = items.split_at(items.len() / 2);
    let (mut left, right) =
        neuronc_ir::par::join(|| run(a, slots), || run(b, &mut Slots::new(m.values.len())));
    left.extend(right);
    left
}

/// Functions with fewer body ops than this in all are compared on one thread (a helper
/// thread costs more than it saves: starting one and faulting in its fresh allocator
/// heap took longer than the comparisons of the BERT-base training step's kernels).
const PARALLEL_MIN_OPS: usize = 12288;

/// A value -> number table for the function being hashed (the number is the value's
/// position in definition order) or, in [`same_function`], a value of the second
/// function -> the corresponding value of the first: a [`DenseValueMap`] (cleared per
/// function in constant time) plus the next position.
pub(crate) struct Slots {
    map: DenseValueMap,
    next: u32,
}

impl Slots {
    pub(crate) fn new(values: usize) -> Self {
        Slots {
            map: DenseValueMap::new(values),
            next: 0,
        }
    }

    pub(crate) fn start(&mut self) {
        self.map.clear();
        self.next = 0;
    }

    /// Numbers `v` with the next position.
    pub(crate) fn number(&mut self, v: ValueId) {
        self.map.record(v, ValueId(self.next));
        self.next += 1;
    }

    pub(crate) fn set(&mut self, v: ValueId, x: u32) {
        self.map.record(v, ValueId(x));
    }

    /// The entry of `v`, or `None` when `v` has none since [`Slots::start`] (a value the
    /// function does not define: impossible in verified IR; such functions never merge).
    pub(crate) fn get(&self, v: ValueId) -> Option<u32> {
        self.map.get(v).map(|x| x.0)
    }
}

/// The structural hash of function `fi`, or `None` when its body reads a value it does
/// not define.
fn function_hash(m: &Module, fi: usize, slots: &mut Slots) -> Option<u64> {
    let f = &m.funcs[fi];
    slots.start();
    let mut h = FxHasher::default();
    f.result_types.len().hash(&mut h);
    for t in &f.result_types {
        t.0.hash(&mut h);
    }
    hash_region(m, f.body, slots, &mut h)?;
    Some(h.finish())
}

/// Feeds region `r` (arguments, then each op and its nested regions) to `h`.
fn hash_region(m: &Module, r: RegionId, slots: &mut Slots, h: &mut FxHasher) -> Option<()> {
    let region = m.region(r);
    region.args.len().hash(h);
    for &a in &region.args {
        m.value_type(a).0.hash(h);
        slots.number(a);
    }
    region.ops.len().hash(h);
    for &op in &region.ops {
        hash_op(m, op, slots, h)?;
    }
    Some(())
}

/// Feeds one op (kind, counts, operand numbers, result types, attribute names and values,
/// nested regions) to `h` and numbers its results; `None` when it reads an unnumbered
/// value.
pub(crate) fn hash_op(m: &Module, op: OpId, slots: &mut Slots, h: &mut FxHasher) -> Option<()> {
    let o = m.op(op);
    (
        o.kind as u32,
        o.operands.len(),
        o.results.len(),
        o.regions.len(),
    )
        .hash(h);
    for &v in &o.operands {
        slots.get(v)?.hash(h);
    }
    for &v in &o.results {
        m.value_type(v).0.hash(h);
        slots.number(v);
    }
    for (name, a) in o.attrs.iter() {
        name.hash(h);
        // Values too, alike when `==` (what `same_op` compares): kernels that differ
        // only in a constant must not share a hash class.
        crate::cse::hash_attr::<true>(a, h);
    }
    for &sub in &o.regions {
        hash_region(m, sub, slots, h)?;
    }
    Some(())
}

/// Whether functions `a` and `b` are equal (see the module doc), with `b`'s references
/// to renamed functions read through `renames`.
fn same_function(m: &Module, a: usize, b: usize, slots: &mut Slots) -> bool {
    let (fa, fb) = (&m.funcs[a], &m.funcs[b]);
    slots.start();
    fa.result_types == fb.result_types
        && fa.attrs == fb.attrs
        && fa.arg_attrs == fb.arg_attrs
        && fa.result_attrs == fb.result_attrs
        && same_region(m, fa.body, fb.body, slots)
}

/// Regions equal op by op; `slots` maps `b`'s values to `a`'s.
fn same_region(m: &Module, a: RegionId, b: RegionId, slots: &mut Slots) -> bool {
    let (ra, rb) = (m.region(a), m.region(b));
    if ra.args.len() != rb.args.len() || ra.ops.len() != rb.ops.len() {
        return false;
    }
    for (&x, &y) in ra.args.iter().zip(&rb.args) {
        if m.value_type(x) != m.value_type(y) {
            return false;
        }
        slots.set(y, x.0);
    }
    ra.ops
        .iter()
        .zip(&rb.ops)
        .all(|(&x, &y)| same_op(m, x, y, slots))
}

/// Ops equal: kind, operands (as corresponding values), result types, attributes,
/// regions.
#[inline]
pub(crate) fn same_op(m: &Module, x: OpId, y: OpId, slots: &mut Slots) -> bool {
    let (ox, oy) = (m.op(x), m.op(y));
    let shape_ok = ox.kind == oy.kind
        && ox.operands.len() == oy.operands.len()
        && ox.results.len() == oy.results.len()
        && ox.regions.len() == oy.regions.len()
        && ox
            .operands
            .iter()
            .zip(&oy.operands)
            .all(|(&u, &v)| slots.get(v) == Some(u.0))
        && ox
            .results
            .iter()
            .zip(&oy.results)
            .all(|(&u, &v)| m.value_type(u) == m.value_type(v))
        && ox.attrs == oy.attrs;
    if !shape_ok {
        return false;
    }
    for (&u, &v) in ox.results.iter().zip(&oy.results) {
        slots.set(v, u.0);
    }
    ox.regions
        .iter()
        .zip(&oy.regions)
        .all(|(&ra, &rb)| same_region(m, ra, rb, slots))
}

/// Removes the renamed functions and points every symbol reference to them at the
/// function kept in their place. Returns whether a private function's body referred to
/// a renamed function (only then can another round find more duplicates).
fn apply_renames(m: &mut Module, renames: &Renames) -> bool {
    m.funcs.retain(|f| !renames.contains_key(&f.name));
    let mut touched: Vec<OpId> = Vec::new();
    let mut in_private = false;
    for f in &m.funcs {
        let before = touched.len();
        m.walk_region(f.body, &mut |op| {
            if m.op(op)
                .attrs
                .iter()
                .any(|(_, a)| mentions_renamed(a, renames))
            {
                touched.push(op);
            }
        });
        in_private |= touched.len() > before && f.visibility.as_deref() == Some("private");
    }
    for op in touched {
        let renamed: Vec<(String, Attr)> = m
            .op(op)
            .attrs
            .iter()
            .filter(|(_, a)| mentions_renamed(a, renames))
            .map(|(n, a)| (n.to_string(), rename_attr(a, renames)))
            .collect();
        let attrs = &mut m.op_mut(op).attrs;
        for (name, attr) in renamed {
            attrs.set(name, attr);
        }
    }
    in_private
}

/// Whether `a` is, or contains, a reference to a renamed function.
fn mentions_renamed(a: &Attr, renames: &Renames) -> bool {
    match a {
        Attr::Symbol(s) => renames.contains_key(symbol_root(s)),
        Attr::Array(items) => items.iter().any(|x| mentions_renamed(x, renames)),
        Attr::Dict(d) => d.iter().any(|(_, x)| mentions_renamed(x, renames)),
        _ => false,
    }
}

/// `a` with every reference to a renamed function (also as the root of a nested
/// reference `@f::@x`) replaced by the kept one.
fn rename_attr(a: &Attr, renames: &Renames) -> Attr {
    match a {
        Attr::Symbol(s) => {
            let root = symbol_root(s);
            match renames.get(root) {
                Some(kept) => Attr::Symbol(s.replacen(root, kept, 1)),
                None => Attr::Symbol(s.clone()),
            }
        }
        Attr::Array(items) => Attr::Array(items.iter().map(|x| rename_attr(x, renames)).collect()),
        Attr::Dict(d) => {
            let mut out = NamedAttrs::new();
            for (n, x) in d.iter() {
                out.set(n, rename_attr(x, renames));
            }
            Attr::Dict(out)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_references_follow_their_root() {
        let renames: Renames = [("k2".to_string(), "k0".to_string())].into_iter().collect();
        let nested = Attr::Array(vec![
            Attr::Symbol("k2::@inner".into()),
            Attr::Symbol("k20".into()),
        ]);
        assert!(mentions_renamed(&nested, &renames));
        assert_eq!(
            rename_attr(&nested, &renames),
            Attr::Array(vec![
                Attr::Symbol("k0::@inner".into()),
                Attr::Symbol("k20".into()),
            ])
        );
        assert!(!mentions_renamed(&Attr::Symbol("k20".into()), &renames));
    }
}
