//! `canonicalize`: applies named, local rewrite rules until none applies.
//!
//! Rules live in [`algebraic`] (identities of arithmetic, logic, select and compare),
//! [`shape`] (reshape, transpose, broadcast and convert folding), [`sink_broadcast`]
//! (elementwise work and unit-dimension reshapes moved before broadcasts) and [`fold`] (constant
//! folding through the interpreter). Each rule is a function that matches one op, asks
//! [`Rewriter::commit`] for permission (fuel, trace) and only then builds replacement ops;
//! it returns the values that replace the op's results.
//!
//! Driver: one forward sweep per region. An op's regions are canonicalized first, then its
//! operands are redirected through the replacements made so far (a value is only used after
//! its definition, so a single sweep sees every use), then the rules for its kind are tried
//! in order. Ops created by a rule are placed before the replaced op and are themselves
//! canonicalized (depth-bounded). Ops left dead by the rewrites are erased at the end.
//!
//! Inside fixpoint groups, a run first tries the rules only on the ops near the edits made
//! since its last complete run and returns at once when none matches (see
//! [`incremental`], which states what rules may read); otherwise it runs in full. Full
//! runs mark the ops whose operands they redirect and the owners of regions they shrink.
//! A run is complete (and a rerun would change nothing: no rule matches any op at the end)
//! unless the depth bound left a created op unvisited.
//! Invariants: rules never increase the number of ops on any path (except by a relabel,
//! a broadcast or reshape, that [`sink_broadcast`] puts after an op it shrinks) nor turn
//! cheap ops into expensive ones; rule order and sweep order are fixed, so the output is
//! deterministic.

pub mod algebraic;
pub mod fold;
pub mod incremental;
pub mod shape;
pub mod sink_broadcast;

use crate::context::{Changed, PassContext};
use crate::error::PassError;
use crate::pass::Pass;
use neuronc_ir::{Module, NamedAttrs, OpId, OpKind, RegionId, TypeId, ValueId};
use std::sync::OnceLock;

/// Nested rewrites of freshly created ops stop at this depth.
const MAX_DEPTH: u32 = 16;

/// The name of the pass.
pub const NAME: &str = "canonicalize";

/// The `canonicalize` pass.
pub struct Canonicalize;

impl Pass for Canonicalize {
    fn name(&self) -> &'static str {
        NAME
    }
    fn run(&self, module: &mut Module, ctx: &mut PassContext) -> Result<Changed, PassError> {
        if let Some(dirty) = ctx.dirty_since(NAME) {
            let near = incremental::ops_near_edits(module, &dirty);
            if !Rewriter::new(module, ctx).any_rule_matches(&near) {
                ctx.note_shortcut();
                return Ok(Changed::No);
            }
        }
        let mut rw = Rewriter::new(module, ctx);
        let bodies: Vec<RegionId> = rw.m.funcs.iter().map(|f| f.body).collect();
        for body in bodies {
            rw.sweep(body);
        }
        let applied = rw.applied;
        if applied > 0 {
            crate::dce::cleanup_dead_ops(module, ctx);
        }
        Ok(Changed::from_bool(applied > 0))
    }
    fn tracks_edits(&self) -> bool {
        true
    }
}

/// A named rule: the op kinds it looks at and its matcher-rewriter.
pub struct Rule {
    pub name: &'static str,
    pub kinds: &'static [OpKind],
    pub apply: fn(&mut Rewriter, OpId) -> Option<Vec<ValueId>>,
}

/// Every rule of the pass in application order (constant folding last).
pub fn rules() -> impl Iterator<Item = &'static Rule> {
    algebraic::RULES
        .iter()
        .chain(shape::RULES)
        .chain(sink_broadcast::RULES)
        .chain(fold::RULES)
}

/// The rules that look at ops of `kind`, in application order (the order of [`rules`]).
/// Built once: the driver asks for every op it visits.
fn rules_for(kind: OpKind) -> &'static [&'static Rule] {
    static TABLE: OnceLock<Vec<Vec<&'static Rule>>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        OpKind::ALL
            .iter()
            .map(|k| {
                rules()
                    .filter(|r| r.kinds.is_empty() || r.kinds.contains(k))
                    .collect()
            })
            .collect()
    });
    &table[kind as usize]
}

/// Editing state handed to rules.
pub struct Rewriter<'a> {
    pub m: &'a mut Module,
    pub ctx: &'a mut PassContext,
    rule: &'static str,
    anchor: Option<OpId>,
    created: Vec<OpId>,
    /// Replaced value → its replacement (`u32::MAX`: not replaced), by value id; grows
    /// on demand (rules create values).
    remap: Vec<u32>,
    applied: u64,
    /// Only find out whether a rule matches: [`Rewriter::commit`] refuses and records.
    probing: bool,
    /// A rule asked to commit while probing.
    matched: bool,
}

impl<'a> Rewriter<'a> {
    fn new(m: &'a mut Module, ctx: &'a mut PassContext) -> Rewriter<'a> {
        Rewriter {
            m,
            ctx,
            rule: "",
            anchor: None,
            created: Vec::new(),
            remap: Vec::new(),
            applied: 0,
            probing: false,
            matched: false,
        }
    }
}

impl Rewriter<'_> {
    /// Asks to apply the current rule at `op`. `None` means "do not rewrite" (no fuel);
    /// rules call it after matching and before any mutation: `rw.commit(op)?;`.
    pub fn commit(&mut self, op: OpId) -> Option<()> {
        if self.probing {
            self.matched = true;
            return None;
        }
        if self.ctx.try_rewrite(self.rule, self.m, op) {
            self.applied += 1;
            Some(())
        } else {
            None
        }
    }

    /// Creates an op placed just before the op being rewritten, with its location.
    pub fn create(
        &mut self,
        kind: OpKind,
        operands: Vec<ValueId>,
        types: &[TypeId],
        attrs: NamedAttrs,
    ) -> OpId {
        let op = self.m.create_op(kind, operands, types, attrs);
        self.adopt(op);
        op
    }

    /// Registers an op built elsewhere (detached) as created by the current rewrite.
    pub fn adopt(&mut self, op: OpId) {
        if let Some(a) = self.anchor {
            let (loc, span) = (self.m.op(a).loc, self.m.op(a).span);
            let o = self.m.op_mut(op);
            o.loc = loc;
            o.span = span;
        }
        self.created.push(op);
    }

    /// Creates a splat constant of type `ty`; returns its value.
    pub fn splat(&mut self, ty: TypeId, bytes: Vec<u8>) -> Option<ValueId> {
        let op = crate::ir_util::make_splat_constant(self.m, ty, bytes)?;
        self.adopt(op);
        Some(self.m.op(op).results[0])
    }

    /// Whether a rule of its kind matches one of `ops` (nothing is rewritten: the rules
    /// stop at [`Rewriter::commit`]).
    fn any_rule_matches(&mut self, ops: &[OpId]) -> bool {
        self.probing = true;
        let found = ops.iter().any(|&op| {
            rules_for(self.m.op(op).kind).iter().any(|rule| {
                self.rule = rule.name;
                self.anchor = Some(op);
                let returned = (rule.apply)(self, op).is_some();
                self.created.clear();
                returned || self.matched
            })
        });
        self.probing = false;
        found
    }

    /// Redirects the operands of `op` through the replacements made so far (marking it
    /// edited when one changes).
    fn remap_operands(&mut self, op: OpId) {
        if self.remap.is_empty() {
            return;
        }
        let remap = &self.remap;
        let mut changed = false;
        for v in &mut self.m.op_mut(op).operands {
            while let Some(&to) = remap.get(v.index()).filter(|&&to| to != u32::MAX) {
                *v = ValueId(to);
                changed = true;
            }
        }
        if changed {
            self.ctx.mark_edited(op);
        }
    }

    fn sweep(&mut self, region: RegionId) {
        let old = std::mem::take(&mut self.m.region_mut(region).ops);
        let mut out = Vec::with_capacity(old.len());
        for op in old {
            // `process` redirects the operands: the rewrites in the op's regions only
            // replace values defined there, never one of its operands.
            for i in 0..self.m.op(op).regions.len() {
                let r = self.m.op(op).regions[i];
                self.sweep(r);
            }
            self.process(op, region, &mut out, 0);
        }
        self.m.region_mut(region).ops = out;
    }

    fn process(&mut self, op: OpId, region: RegionId, out: &mut Vec<OpId>, depth: u32) {
        self.remap_operands(op);
        let kind = self.m.op(op).kind;
        if depth < MAX_DEPTH {
            for rule in rules_for(kind) {
                self.rule = rule.name;
                self.anchor = Some(op);
                let Some(values) = (rule.apply)(self, op) else {
                    self.created.clear();
                    continue;
                };
                self.replace(op, values, (region, out), depth);
                return;
            }
        } else {
            self.ctx.note_incomplete();
        }
        self.m.op_mut(op).parent = Some(region);
        out.push(op);
    }

    /// Replaces the results of `op` by `values` (what a rule returned), detaches `op` and
    /// processes the ops the rule created in its place. Out of line: most ops are not
    /// rewritten, and [`Rewriter::process`] stays small.
    #[inline(never)]
    fn replace(
        &mut self,
        op: OpId,
        values: Vec<ValueId>,
        (region, out): (RegionId, &mut Vec<OpId>),
        depth: u32,
    ) {
        let created = std::mem::take(&mut self.created);
        let results = self.m.op(op).results.clone();
        for (r, v) in results.into_iter().zip(values) {
            if self.remap.len() <= r.index() {
                self.remap
                    .resize(self.m.values.len().max(r.index() + 1), u32::MAX);
            }
            self.remap[r.index()] = v.0;
        }
        self.m.op_mut(op).parent = None;
        self.ctx.mark_region_edited(self.m, region);
        for c in created {
            self.m.op_mut(c).parent = Some(region);
            self.process(c, region, out, depth + 1);
        }
    }
}
