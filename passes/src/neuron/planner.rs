//! The greedy kernel-growing state machine behind [`super::fusion::plan_fusion`].
//!
//! Owns: [`Planner`] (grows one kernel at a time, consumer first, and applies the fusion
//! [`Rule`]s to every candidate producer) and [`Grown`] (its raw result, before kernels
//! are renumbered and measured).
//!
//! Everything is indexed by the op's position in the region order (`u32`), never hashed:
//! per-op facts (class, operands, producers, users, reduction row) are computed once into
//! dense tables, per-kernel sets are member lists plus per-position stamps, and the lists
//! of finished kernels are appended to flat [`Csr`]s. Only the kernel being grown changes;
//! earlier kernels are frozen, so the facts the rules ask about the current kernel (its
//! classes, reduction row, external inputs) are kept up to date incrementally as producers
//! join. Producers wait in a sorted queue ([`MaxQueue`]): every producer precedes
//! its consumer, so they are popped in decreasing position and each kernel's members and
//! copies are found in decreasing position. The multi-output cycle check
//! ([`super::cycle`]) only searches the part of the kernel graph between the producer and
//! the growing kernel in a topological order kept up to date as producers join
//! ([`super::topo`]). Search scratch (queue, stamps, found sets) lives as long as the
//! planner, so growing a kernel allocates nothing per candidate.
//! Invariants: `ops[i].kernel == k` iff `i` is in `members[k]` (in `cur.members` while
//! `k` grows); `ops[i].dup == k` iff `i` is in `cur.dup` for the kernel `k` being grown;
//! `inputs` of the current kernel is the set of distinct operands of its members and
//! copies that none of them defines; finished kernels' member and copy lists ascend.

use super::cycle::{Outcome, Reach};
use super::fusion::{classify, FusionConfig, OpClass, Rejection, Rows, Rule};
use super::graph::{captured_values, Csr, MaxQueue, RegionGraph, TypeFacts};
use super::topo::{Node, TopoOrder};
use neuronc_ir::{Module, OpId, ValueId};

/// "No kernel" / "no stamp" / "no row".
const NONE: u32 = u32::MAX;
/// Construction-time mark of a value read by the region but defined outside its ops.
const OUTSIDE: u32 = u32::MAX - 1;

/// Debug builds cross-check the bounded cycle search against a full one in regions of at
/// most this many ops.
#[cfg(debug_assertions)]
const SMALL_REGION: usize = 3000;

/// What the rules need to know about the kernel being grown. Its buffers are reused from
/// one kernel to the next ([`Current::reset`]).
#[derive(Default)]
struct Current {
    /// The opaque member, if any (only a seed can be opaque).
    opaque: Option<u32>,
    matmuls: usize,
    reduces: usize,
    /// Members that are not elementwise-ish (they forbid a matmul joining).
    not_epilogue: usize,
    /// The row ([`Rows`]) shared by every reduce of the kernel.
    row: Option<u32>,
    /// Highest member position (the seed's).
    last: u32,
    /// (element count, summed element bytes) over the tensor results of the members, kept
    /// only once `sized` (the first time a reduction rule needs it).
    elem_bytes: Vec<(u64, u64)>,
    sized: bool,
    /// Candidate external inputs (some may have become internal: see `Val::input`).
    input_list: Vec<ValueId>,
    /// External inputs that are tensors of rank > 0 (each needs a DMA stream).
    tensor_inputs: usize,
    /// Members and copies so far, in decreasing position (appended to `Planner::members`
    /// / `dup` when growth ends).
    members: Vec<u32>,
    dup: Vec<u32>,
}

impl Current {
    /// Facts of a fresh kernel whose seed is at position `seed`.
    fn reset(&mut self, seed: u32) {
        self.opaque = None;
        self.matmuls = 0;
        self.reduces = 0;
        self.not_epilogue = 0;
        self.row = None;
        self.last = seed;
        self.elem_bytes.clear();
        self.sized = false;
        self.input_list.clear();
        self.tensor_inputs = 0;
        self.members.clear();
        self.dup.clear();
    }
}

/// Queues the producers of op `of` not yet queued while growing kernel `k`
/// ([`OpState::tried`]), so that each is popped, latest first, at most once per kernel.
/// Runs once per op joining a kernel: inlined into its two callers.
#[inline(always)]
fn queue_producers(producers: &Csr, ops: &mut [OpState], queue: &mut MaxQueue, of: u32, k: u32) {
    for &q in producers.of(of) {
        let tried = &mut ops[q as usize].tried;
        if *tried != k {
            *tried = k;
            queue.push(q);
        }
    }
}

/// What the planner tracks per value.
#[derive(Clone, Copy)]
struct Val {
    /// Position of the defining op (`NONE`: not defined in the region; `OUTSIDE` while
    /// reading the region: read by it but defined outside its ops).
    def: u32,
    /// `k`: an external input of the current kernel `k`.
    input: u32,
    /// A tensor of rank > 0 (it needs a DMA stream as a kernel input).
    dma: bool,
}

/// Per-value tables of a region, filled while its ops are read in program order.
struct ValueTables {
    vals: Vec<Val>,
    /// (element count, element bytes) if a tensor.
    tensor: Vec<Option<(u64, u64)>>,
    /// The values marked `OUTSIDE` so far.
    outside: Vec<u32>,
}

impl ValueTables {
    fn new(nv: usize) -> Self {
        let val = Val {
            def: NONE,
            input: NONE,
            dma: false,
        };
        ValueTables {
            vals: vec![val; nv],
            tensor: vec![None; nv],
            outside: Vec::new(),
        }
    }

    /// Records the type facts of `v`.
    fn fill(&mut self, m: &Module, facts: &TypeFacts, v: ValueId) {
        let f = facts.of(m, v);
        if let (Some(rank), Some(t)) = (f.rank, f.tensor) {
            self.vals[v.index()].dma = rank > 0;
            self.tensor[v.index()] = Some(t);
        }
    }

    /// Records that the op being read reads `v`: appends it to `operands`, and its producer
    /// (if in the region) to `producers` (`lists` holds both).
    fn read(&mut self, m: &Module, facts: &TypeFacts, v: ValueId, lists: (&mut Csr, &mut Csr)) {
        let (operands, producers) = lists;
        operands.items_mut().push(v.0);
        match self.vals[v.index()].def {
            NONE => {
                self.vals[v.index()].def = OUTSIDE;
                self.outside.push(v.0);
                self.fill(m, facts, v);
            }
            OUTSIDE => {}
            p => producers.items_mut().push(p),
        }
    }
}

/// Raw planner output, indexed by kernel creation order and op position.
pub struct Grown {
    /// Per kernel: its members, ascending.
    pub members: Csr,
    /// Per kernel: the cheap ops copied into it, ascending.
    pub dup: Csr,
    /// Per kernel: its distinct external inputs (members and copies together).
    pub inputs: Csr<ValueId>,
    pub kernel_of: Vec<u32>,
    pub class: Vec<OpClass>,
    pub rejections: Vec<Rejection>,
    /// Per op: its results (value indices; see [`results_of`]) and the in-region users
    /// of any of them.
    pub results: Csr,
    pub single: Vec<u32>,
    pub users: Csr,
    /// Per op: its operands and the values its regions capture (value indices).
    pub operands: Csr,
}

impl Grown {
    /// A kernel of cheap ops whose every user got its own copy: it need not run.
    pub fn fully_duplicated(&self, k: usize) -> bool {
        let copied_into = |uk: u32, o: u32| {
            uk != NONE && uk as usize != k && self.dup.of(uk).binary_search(&o).is_ok()
        };
        let members = self.members.of(k as u32);
        // The cheap test first: most kernels have a member that is not cheap.
        members
            .iter()
            .all(|&o| self.class[o as usize] <= OpClass::Cheap)
            && members.iter().all(|&o| {
                let mut users = self.users.of(o).iter();
                users.all(|&u| copied_into(self.kernel_of[u as usize], o))
            })
            && members.iter().any(|&o| !self.results_of(o).is_empty())
    }

    /// The results of op `o` (value indices).
    pub fn results_of(&self, o: u32) -> &[u32] {
        results_of(&self.single, &self.results, o)
    }
}

/// Adds a result of type facts `tensor` to per-element-count byte sums.
fn add_elem_bytes(sums: &mut Vec<(u64, u64)>, tensor: Option<(u64, u64)>) {
    if let Some((n, bytes)) = tensor {
        match sums.iter_mut().find(|e| e.0 == n) {
            Some(e) => e.1 += bytes,
            None => sums.push((n, bytes)),
        }
    }
}

/// The results of op `o`: its only one from `single`, else its list in `results`.
#[inline]
fn results_of<'r>(single: &'r [u32], results: &'r Csr, o: u32) -> &'r [u32] {
    let r = &single[o as usize];
    if *r != NONE {
        std::slice::from_ref(r)
    } else {
        results.of(o)
    }
}

/// What the planner tracks per op of the region.
#[derive(Clone, Copy)]
pub struct OpState {
    /// The kernel owning the op (`NONE`: none yet).
    pub kernel: u32,
    /// `k`: the op is copied into the current kernel `k`.
    dup: u32,
    /// `k`: the op was already queued while growing kernel `k`.
    tried: u32,
    /// Search stamp, compared with an epoch.
    pub seen: u32,
    class: OpClass,
    /// May precede a matmul in its kernel (elementwise-ish).
    epilogue: bool,
}

/// Greedy consumer-first kernel growth over one region.
pub struct Planner<'a> {
    /// The module (read for the kinds of refused opaque ops).
    m: &'a Module,
    /// The region's ops in program order (positions index it).
    order: &'a [OpId],
    cfg: &'a FusionConfig,
    ops: Vec<OpState>,
    /// Per op: its row in `rows` if it is a reduce, else `NONE`.
    row_of: Vec<u32>,
    rows: Rows,
    /// Operand (and captured) and result values of each op (value indices).
    operands: Csr,
    results: Csr,
    /// Per op: its only result, or `NONE` if it has none or several ([`results_of`]).
    single: Vec<u32>,
    vals: Vec<Val>,
    /// Per value: (element count, element bytes) if it is a tensor.
    tensor: Vec<Option<(u64, u64)>>,
    /// In-region producers of each op's operands (with repeats, operand order).
    producers: Csr,
    /// In-region users of each op's results (with repeats, ascending).
    users: Csr,
    members: Csr,
    dup: Csr,
    inputs: Csr<ValueId>,
    rejections: Vec<Rejection>,
    /// Search scratch: kernel stamps, compared with `epoch` (op stamps are in `ops`).
    seen_kernel: Vec<u32>,
    epoch: u32,
    cur: Current,
    /// Topological order of unfused ops and kernels (bounds the cycle check).
    topo: TopoOrder,
    /// Nodes between `moved_for` and the current kernel that must move if `moved_for`
    /// joins it (from its last cycle check): those `moved_for` reaches, which move after
    /// the kernel, or (`moved_before`) those that reach the kernel, which move, followed
    /// by the kernel, to `moved_for`'s place.
    moved: Vec<Node>,
    moved_before: bool,
    moved_for: u32,
    /// Scratch of the cycle check's other search.
    moved_other: Vec<Node>,
    /// Producers waiting to be tried by [`Planner::grow`].
    queue: MaxQueue,
    /// Scratch of [`Planner::reaches_matmul`].
    stack: Vec<u32>,
    /// The operands of `delta_for` that become new inputs of the current kernel if it
    /// joins (from its last check).
    delta: Vec<u32>,
    delta_for: u32,
    /// Scratch of [`Planner::input_row_bytes`].
    delta_rows: Vec<u32>,
}

impl<'a> Planner<'a> {
    /// The planner over the ops of one region, `order` (program order). It reads the values
    /// their regions capture off the region's `graph` if given, else finds them itself.
    pub fn new(
        m: &'a Module,
        order: &'a [OpId],
        graph: Option<&RegionGraph>,
        cfg: &'a FusionConfig,
    ) -> Self {
        let n = order.len();
        let facts = TypeFacts::new(m);
        let mut values = ValueTables::new(m.values.len());
        // About two operands per op (the lists grow if there are more).
        let mut operands = Csr::with_capacity(n, 2 * n);
        let mut producers = Csr::with_capacity(n, 2 * n);
        let mut results = Csr::with_capacity(n, n);
        let mut single = Vec::with_capacity(n);
        let mut ops = Vec::with_capacity(n);
        let mut row_of = Vec::with_capacity(n);
        let mut rows = Rows::default();
        // One pass in program order: every operand's producer precedes its user.
        for (i, &op) in order.iter().enumerate() {
            let o = m.op(op);
            for &v in &o.operands {
                values.read(m, &facts, v, (&mut operands, &mut producers));
            }
            // Values captured by an op's regions (a `case` branch reading an argument) are
            // its inputs too: the kernel must load them and keep them alive.
            if !o.regions.is_empty() {
                // (Found here only without a graph; an empty Vec does not allocate.)
                let found = graph.map_or_else(|| captured_values(m, op), |_| Vec::new());
                let captured = graph.map_or(&found[..], |g| g.captured_by(i));
                for &v in captured {
                    values.read(m, &facts, v, (&mut operands, &mut producers));
                }
            }
            operands.close();
            producers.close();
            for &r in &o.results {
                values.fill(m, &facts, r);
                values.vals[r.index()].def = i as u32;
                results.items_mut().push(r.0);
            }
            results.close();
            single.push(match o.results[..] {
                [r] => r.0,
                _ => NONE,
            });
            let c = classify(m, op);
            ops.push(OpState {
                kernel: NONE,
                dup: NONE,
                tried: NONE,
                seen: 0,
                class: c,
                epilogue: match c {
                    OpClass::Free | OpClass::Cheap => true,
                    OpClass::Loop => o.kind.is_elementwise(),
                    _ => false,
                },
            });
            row_of.push(if c == OpClass::Reduce {
                rows.intern(m, o)
            } else {
                NONE
            });
        }
        let ValueTables {
            mut vals,
            tensor,
            outside,
        } = values;
        for v in outside {
            vals[v as usize].def = NONE;
        }
        let users = producers.transpose(n);
        Planner {
            m,
            order,
            cfg,
            ops,
            row_of,
            rows,
            operands,
            results,
            single,
            vals,
            tensor,
            producers,
            users,
            members: Csr::with_capacity(n, n),
            // (Room for about as many copies and inputs as ops, and a kernel per op.)
            dup: Csr::with_capacity(n, n),
            inputs: Csr::with_capacity(n, n),
            rejections: Vec::new(),
            seen_kernel: Vec::with_capacity(n),
            epoch: 0,
            cur: Current::default(),
            topo: TopoOrder::new(n),
            moved: Vec::new(),
            moved_before: false,
            moved_for: NONE,
            moved_other: Vec::new(),
            queue: MaxQueue::default(),
            stack: Vec::new(),
            delta: Vec::new(),
            delta_for: NONE,
            delta_rows: Vec::new(),
        }
    }

    pub fn is_owned(&self, i: usize) -> bool {
        self.ops[i].kernel != NONE
    }

    /// Starts kernel `members.len()` at op `i` and grows it.
    pub fn seed(&mut self, i: usize) {
        let k = self.members.len() as u32;
        let i = i as u32;
        self.seen_kernel.push(0);
        self.topo.seed_kernel(i, k);
        self.moved_for = NONE;
        self.delta_for = NONE;
        self.cur.reset(i);
        self.join(i, k, false);
        self.grow(k);
        let vals = &self.vals;
        let inputs = self.cur.input_list.iter().copied();
        let kept = inputs.filter(|v| vals[v.index()].input == k);
        self.inputs.items_mut().extend(kept);
        self.inputs.close();
        // Members and copies were found in decreasing position.
        self.members
            .items_mut()
            .extend(self.cur.members.iter().rev());
        self.members.close();
        self.dup.items_mut().extend(self.cur.dup.iter().rev());
        self.dup.close();
        debug_assert!(self.members.of(k).windows(2).all(|w| w[0] < w[1]));
        debug_assert!(self.dup.of(k).windows(2).all(|w| w[0] < w[1]));
    }

    pub fn into_grown(self) -> Grown {
        Grown {
            members: self.members,
            dup: self.dup,
            inputs: self.inputs,
            kernel_of: self.ops.iter().map(|o| o.kernel).collect(),
            class: self.ops.iter().map(|o| o.class).collect(),
            rejections: self.rejections,
            results: self.results,
            single: self.single,
            users: self.users,
            operands: self.operands,
        }
    }

    /// Absorbs producers into kernel `k`, latest first, until none is left to try.
    fn grow(&mut self, k: u32) {
        let seed = self.cur.last;
        queue_producers(&self.producers, &mut self.ops, &mut self.queue, seed, k);
        while let Some(p) = self.queue.pop() {
            if !self.is_candidate(p, k) {
                continue;
            }
            match self.check(p, k) {
                Ok(duplicate) => {
                    self.join(p, k, duplicate);
                    queue_producers(&self.producers, &mut self.ops, &mut self.queue, p, k);
                }
                Err(rule) => {
                    self.delta_for = NONE;
                    self.rejections.push(Rejection {
                        producer: self.order[p as usize],
                        kernel: k as usize,
                        rule,
                    });
                }
            }
        }
    }

    /// Adds op `p` to kernel `k` as a member or a copy, updating the current facts.
    #[inline]
    fn join(&mut self, p: u32, k: u32, duplicate: bool) {
        let pi = p as usize;
        if duplicate {
            self.cur.dup.push(p);
            self.ops[pi].dup = k;
        } else {
            self.join_member(p, k);
        }
        for &r in results_of(&self.single, &self.results, p) {
            let r = r as usize;
            if !duplicate && self.cur.sized {
                add_elem_bytes(&mut self.cur.elem_bytes, self.tensor[r]);
            }
            if self.vals[r].input == k {
                self.vals[r].input = NONE;
                self.cur.tensor_inputs -= usize::from(self.vals[r].dma);
            }
        }
        if self.delta_for == p {
            for &v in &self.delta {
                self.vals[v as usize].input = k;
                self.cur.input_list.push(ValueId(v));
                self.cur.tensor_inputs += usize::from(self.vals[v as usize].dma);
            }
            self.delta_for = NONE;
            return;
        }
        for &v in self.operands.of(p) {
            if self.vals[v as usize].input != k && !self.defined_inside(v, k, NONE) {
                self.vals[v as usize].input = k;
                self.cur.input_list.push(ValueId(v));
                self.cur.tensor_inputs += usize::from(self.vals[v as usize].dma);
            }
        }
    }

    /// The member part of [`Planner::join`]: order, ownership and the class facts.
    fn join_member(&mut self, p: u32, k: u32) {
        let pi = p as usize;
        if !self.cur.members.is_empty() {
            if self.moved_for != p {
                // No cycle check ran: every user of `p` is in the kernel.
                self.topo.merge_into(p, k, &[]);
            } else if self.moved_before {
                self.topo.merge_before(p, k, &self.moved);
            } else {
                self.topo.merge_into(p, k, &self.moved);
            }
            self.moved_for = NONE;
        }
        self.cur.members.push(p);
        self.ops[pi].kernel = k;
        match self.ops[pi].class {
            OpClass::Opaque => self.cur.opaque = Some(p),
            OpClass::Matmul => self.cur.matmuls += 1,
            OpClass::Reduce => {
                self.cur.reduces += 1;
                if self.cur.row.is_none() {
                    self.cur.row = Some(self.row_of[pi]);
                }
            }
            _ => {}
        }
        if !self.ops[pi].epilogue {
            self.cur.not_epilogue += 1;
        }
        self.cur.last = self.cur.last.max(p);
    }

    /// Whether value `v` is defined by a member or copy of kernel `k`, or by op `extra`.
    #[inline]
    fn defined_inside(&self, v: u32, k: u32, extra: u32) -> bool {
        let i = self.vals[v as usize].def;
        i != NONE
            && (i == extra || self.ops[i as usize].kernel == k || self.ops[i as usize].dup == k)
    }

    /// Whether producer `p` may still be tried for kernel `k`: unowned, or cheap and
    /// owned elsewhere (then it is copied).
    fn is_candidate(&self, p: u32, k: u32) -> bool {
        let owner = self.ops[p as usize].kernel;
        if owner == k || self.ops[p as usize].dup == k {
            return false;
        }
        owner == NONE || self.ops[p as usize].class <= OpClass::Cheap
    }

    /// Decides whether producer `p` joins kernel `k`: `Ok(true)` duplicates it,
    /// `Ok(false)` moves it in, `Err` names the refusing rule.
    fn check(&mut self, p: u32, k: u32) -> Result<bool, Rule> {
        let class = self.ops[p as usize].class;
        if class == OpClass::Opaque {
            return Err(Rule::OpaqueOp(self.kind(p)));
        }
        if let Some(o) = self.cur.opaque {
            return Err(Rule::OpaqueOp(self.kind(o)));
        }
        if let Some(rule) = self.matmul_rule(p, class, k) {
            return Err(rule);
        }
        if class == OpClass::Reduce || self.cur.reduces > 0 {
            self.reduction_rules(p, k)?;
        }
        let outside = self
            .users
            .of(p)
            .iter()
            .any(|&u| self.ops[u as usize].kernel != k);
        let duplicate = outside && class <= OpClass::Cheap;
        // Non-cheap producers are never recomputed: they become an extra kernel output
        // (multi-output fusion), which is only legal without a cycle.
        if outside && !duplicate {
            self.cycle_check(p, k)?;
        }
        // Joining adds at most one input per operand of `p`: below the limit even then,
        // the count is not needed ([`Planner::join`] finds the new inputs itself).
        if self.cur.tensor_inputs + self.operands.of(p).len() <= self.cfg.max_inputs {
            return Ok(duplicate);
        }
        let inputs = self.tensor_inputs_with(p, k);
        if inputs > self.cfg.max_inputs {
            return Err(Rule::TooManyInputs {
                inputs,
                limit: self.cfg.max_inputs,
            });
        }
        Ok(duplicate)
    }

    /// The kind of op `p`.
    fn kind(&self, p: u32) -> neuronc_ir::OpKind {
        self.m.op(self.order[p as usize]).kind
    }

    /// Number of rank > 0 tensor inputs of kernel `k` if `p` joined it. Leaves the
    /// operands of `p` that would become new inputs in `delta` for [`Planner::join`].
    // (`delta` holds a few values at most: scanning it is cheaper than `contains`, which
    // sets up a vectorised search for every operand.)
    #[allow(clippy::manual_contains)]
    fn tensor_inputs_with(&mut self, p: u32, k: u32) -> usize {
        let mut n = self.cur.tensor_inputs;
        for &r in results_of(&self.single, &self.results, p) {
            if self.vals[r as usize].input == k && self.vals[r as usize].dma {
                n -= 1;
            }
        }
        self.delta.clear();
        for &v in self.operands.of(p) {
            if self.vals[v as usize].input == k
                || self.defined_inside(v, k, p)
                || self.delta.iter().any(|&d| d == v)
            {
                continue;
            }
            self.delta.push(v);
            n += usize::from(self.vals[v as usize].dma);
        }
        self.delta_for = p;
        n
    }

    fn matmul_rule(&mut self, p: u32, class: OpClass, k: u32) -> Option<Rule> {
        let has_matmul = self.cur.matmuls > 0;
        if class == OpClass::Matmul {
            if has_matmul {
                return Some(Rule::OneMatmulPerKernel);
            }
            // Epilogue: everything already in the kernel must be elementwise-ish.
            return (self.cur.not_epilogue > 0).then_some(Rule::MatmulEpilogueOnly);
        }
        if has_matmul {
            if class > OpClass::Cheap && self.reaches_matmul(p, k) {
                return Some(Rule::MatmulPrologueNotCheap);
            }
            if class == OpClass::Reduce {
                return Some(Rule::MatmulEpilogueOnly);
            }
        }
        None
    }

    /// Whether op `u` is a member or copy of kernel `k`.
    #[inline]
    fn in_kernel(&self, u: u32, k: u32) -> bool {
        self.ops[u as usize].kernel == k || self.ops[u as usize].dup == k
    }

    /// Whether `p` feeds the kernel's matmul (directly or through other kernel ops):
    /// then it is a prologue rather than a side input of the epilogue.
    fn reaches_matmul(&mut self, p: u32, k: u32) -> bool {
        let epoch = self.next_epoch();
        let mut stack = std::mem::take(&mut self.stack);
        stack.clear();
        stack.extend(self.users.of(p).iter().filter(|&&u| self.in_kernel(u, k)));
        let mut found = false;
        while let Some(u) = stack.pop() {
            if self.ops[u as usize].seen == epoch {
                continue;
            }
            self.ops[u as usize].seen = epoch;
            if self.ops[u as usize].class == OpClass::Matmul {
                found = true;
                break;
            }
            for &x in self.users.of(u) {
                if self.in_kernel(x, k) {
                    stack.push(x);
                }
            }
        }
        self.stack = stack;
        found
    }

    fn reduction_rules(&mut self, p: u32, k: u32) -> Result<(), Rule> {
        let p_reduces = self.ops[p as usize].class == OpClass::Reduce;
        if p_reduces
            && self
                .users
                .of(p)
                .iter()
                .any(|&u| self.in_kernel(u, k) && self.ops[u as usize].class == OpClass::Reduce)
        {
            return Err(Rule::ReduceIntoReduce);
        }
        // Every reduce of the kernel shares one row (enforced here as they join).
        let p_row = p_reduces.then(|| self.row_of[p as usize]);
        let row = match (self.cur.row, p_row) {
            (Some(r), Some(pr)) if r != pr => return Err(Rule::MismatchedReductions),
            (Some(r), _) => r,
            (None, Some(pr)) => pr,
            (None, None) => return Ok(()),
        };
        let mut per_partition = self.resident_row_bytes(p, row);
        // The inputs' share only when it could cross the budget: at most every tensor
        // input (with `p`'s operands) at 16 bytes per element (complex128).
        let (row_elems, _) = self.rows.sizes[row as usize];
        let inputs = self.cur.tensor_inputs + self.operands.of(p).len();
        let bound = row_elems.saturating_mul(16 * inputs as u64);
        if per_partition.saturating_add(bound) > self.cfg.sbuf_partition_bytes {
            per_partition += self.input_row_bytes(p, k, row);
        }
        if per_partition > self.cfg.sbuf_partition_bytes {
            return Err(Rule::SbufCapacity {
                per_partition_bytes: per_partition,
                budget: self.cfg.sbuf_partition_bytes,
            });
        }
        Ok(())
    }

    /// Bytes per partition to keep one reduced row of every tensor of the current kernel
    /// (plus `p`) resident.
    fn resident_row_bytes(&mut self, p: u32, row: u32) -> u64 {
        if !self.cur.sized {
            for &o in &self.cur.members {
                for &r in results_of(&self.single, &self.results, o) {
                    add_elem_bytes(&mut self.cur.elem_bytes, self.tensor[r as usize]);
                }
            }
            self.cur.sized = true;
        }
        let (row_elems, full) = self.rows.sizes[row as usize];
        let members: u64 = self
            .cur
            .elem_bytes
            .iter()
            .filter(|e| e.0 == full)
            .map(|e| e.1)
            .sum();
        let own: u64 = results_of(&self.single, &self.results, p)
            .iter()
            .filter_map(|&r| self.tensor[r as usize])
            .filter(|t| t.0 == full)
            .map(|t| t.1)
            .sum();
        row_elems.wrapping_mul(members.wrapping_add(own))
    }

    /// Bytes per partition to keep one reduced row of every external input of kernel `k`
    /// (with `p` joined) that has the reduction's full shape and that an op other than a
    /// reduce reads: the engine holds such an input whole while the rows are reduced
    /// (`log_softmax`'s kernel subtracts from the shifted logits after summing the
    /// exponentials). Inputs only reduces read stream through in pieces.
    #[allow(clippy::manual_contains)]
    fn input_row_bytes(&mut self, p: u32, k: u32, row: u32) -> u64 {
        let (row_elems, full) = self.rows.sizes[row as usize];
        let mut seen = std::mem::take(&mut self.delta_rows);
        seen.clear();
        let readers = self.cur.members.iter().copied().chain(std::iter::once(p));
        for o in readers {
            if self.ops[o as usize].class == OpClass::Reduce {
                continue;
            }
            for &v in self.operands.of(o) {
                let row_sized = matches!(self.tensor[v as usize], Some((n, _)) if n == full);
                if row_sized && !self.defined_inside(v, k, p) && !seen.iter().any(|&w| w == v) {
                    seen.push(v);
                }
            }
        }
        let bytes: u64 = seen
            .iter()
            .filter_map(|&v| self.tensor[v as usize].map(|t| t.1))
            .sum();
        self.delta_rows = seen;
        row_elems.wrapping_mul(bytes)
    }

    fn next_epoch(&mut self) -> u32 {
        self.epoch += 1;
        self.epoch
    }

    /// Refuses `p` if some user of it outside kernel `k` reaches `k` (a user that belongs
    /// to another kernel stands for all of that kernel's ops) or [`Reach`] gives up. Without
    /// a cycle, the nodes that must move in [`TopoOrder`] if `p` joins are kept in `moved`.
    fn cycle_check(&mut self, p: u32, k: u32) -> Result<(), Rule> {
        let epoch = self.next_epoch();
        self.next_epoch();
        self.moved_for = NONE;
        let outcome = Reach {
            users: &self.users,
            producers: &self.producers,
            ops: &mut self.ops,
            members: &self.members,
            current: &self.cur.members,
            topo: &self.topo,
            seen_kernel: &mut self.seen_kernel,
            fwd: &mut self.moved,
            bwd: &mut self.moved_other,
            p,
            k,
            epoch,
            limit: self.cfg.cycle_check_limit,
        }
        .run();
        #[cfg(debug_assertions)]
        if self.ops.len() <= SMALL_REGION && outcome != Outcome::GaveUp {
            let e = self.next_epoch();
            let full = super::cycle::reaches_unbounded(
                &self.users,
                &self.members,
                &mut self.ops,
                (p, k, e),
            );
            assert_eq!(
                full,
                outcome == Outcome::Cycle,
                "bounded and full cycle checks differ"
            );
        }
        match outcome {
            Outcome::Cycle => return Err(Rule::WouldCreateCycle),
            Outcome::GaveUp => {
                let limit = self.cfg.cycle_check_limit;
                return Err(Rule::CycleCheckLimit { limit });
            }
            Outcome::After => self.moved_before = false,
            Outcome::Before => {
                self.moved_before = true;
                std::mem::swap(&mut self.moved, &mut self.moved_other);
            }
        }
        self.moved_for = p;
        Ok(())
    }
}
