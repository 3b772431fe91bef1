//! The greedy kernel-growing state machine behind [`super::fusion::plan_fusion`].
//!
//! Owns: [`Planner`] (grows one kernel at a time, consumer first, and applies the fusion
//! [`Rule`]s to every candidate producer) and [`Grown`] (its raw result, before kernels
//! are renumbered and measured).
//!
//! Everything is indexed by the op's position in the region order (`u32`), never hashed:
//! per-op tables are dense vectors, per-kernel sets are member lists plus per-position
//! stamps. Only the kernel being grown changes; earlier kernels are frozen, so the facts
//! the rules ask about the current kernel (its classes, reduction row, external inputs)
//! are kept up to date incrementally as producers join. The multi-output cycle check
//! ([`super::cycle`]) only searches the part of the kernel graph between the producer and
//! the growing kernel in a topological order kept up to date as producers join
//! ([`super::topo`]). Search scratch (heap, stamps, found sets) lives as long as the
//! planner, so growing a kernel allocates nothing per candidate.
//! Invariants: `kernel_of[i] == k` iff `i` is in `members[k]` (in `cur.members` while `k`
//! grows); `dup_mark[i] == k` iff `i` is in `cur.dup` for the kernel `k` being grown; `inputs` of the current kernel is the set
//! of distinct operands of its members and copies that none of them defines.

use super::cycle::{Outcome, Reach};
use super::fusion::{classify, FusionConfig, OpClass, Rejection, Rule};
use super::graph::{captured_values, RegionGraph, TypeFacts};
use super::topo::{Node, TopoOrder};
use neuronc_ir::{Module, ValueId};
use std::collections::BinaryHeap;

/// "No kernel" / "no stamp".
const NONE: u32 = u32::MAX;
/// Construction-time mark of a value read by the region but defined outside its ops.
const OUTSIDE: u32 = u32::MAX - 1;

/// Debug builds cross-check the bounded cycle search against a full one in regions of at
/// most this many ops.
#[cfg(debug_assertions)]
const SMALL_REGION: usize = 3000;

/// Compressed adjacency: `items[start[i]..start[i + 1]]` are the neighbours of `i`.
pub(super) struct Csr {
    start: Vec<u32>,
    items: Vec<u32>,
}

impl Csr {
    /// Calls `each(i, items)` for `i` in `0..n` to append the neighbours of `i`; `items`
    /// is sized for `capacity` of them up front.
    fn build(n: usize, capacity: usize, mut each: impl FnMut(usize, &mut Vec<u32>)) -> Csr {
        let mut start = Vec::with_capacity(n + 1);
        let mut items = Vec::with_capacity(capacity);
        start.push(0);
        for i in 0..n {
            each(i, &mut items);
            start.push(items.len() as u32);
        }
        Csr { start, items }
    }
    pub(super) fn of(&self, i: u32) -> &[u32] {
        &self.items[self.start[i as usize] as usize..self.start[i as usize + 1] as usize]
    }
}

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
    /// (operand shape, reduced dims) shared by every reduce of the kernel.
    row: Option<(Vec<i64>, Vec<i64>)>,
    /// Highest member position (the seed's).
    last: u32,
    /// (element count, summed element bytes) over the tensor results of the members.
    elem_bytes: Vec<(u64, u64)>,
    /// Candidate external inputs (some may have become internal: see `input_mark`).
    input_list: Vec<ValueId>,
    /// External inputs that are tensors of rank > 0 (each needs a DMA stream).
    tensor_inputs: usize,
    /// Members and copies so far (moved to `Planner::members` / `dup` when growth ends).
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
        self.input_list.clear();
        self.tensor_inputs = 0;
        self.members.clear();
        self.dup.clear();
    }
}

/// Queues the producers of op `of` not yet queued while growing kernel `k` (`tried`), so
/// that each is popped, latest first, at most once per kernel.
fn queue_producers(
    producers: &Csr,
    tried: &mut [u32],
    heap: &mut BinaryHeap<u32>,
    of: u32,
    k: u32,
) {
    for &q in producers.of(of) {
        if tried[q as usize] != k {
            tried[q as usize] = k;
            heap.push(q);
        }
    }
}

/// Raw planner output, indexed by kernel creation order and op position.
pub struct Grown {
    pub members: Vec<Vec<u32>>,
    pub dup: Vec<Vec<u32>>,
    /// Distinct external inputs of each kernel (members and copies together).
    pub inputs: Vec<Vec<ValueId>>,
    pub kernel_of: Vec<u32>,
    pub class: Vec<OpClass>,
    pub rejections: Vec<Rejection>,
    users: Csr,
}

impl Grown {
    /// Kernel (creation index) owning op `u` of the region, if any.
    pub fn kernel_of_op(&self, g: &RegionGraph, u: neuronc_ir::OpId) -> Option<usize> {
        let i = *g.pos.get(&u)?;
        let k = self.kernel_of[i];
        (k != NONE).then_some(k as usize)
    }

    /// A kernel of cheap ops whose every user got its own copy: it need not run.
    pub fn fully_duplicated(&self, m: &Module, g: &RegionGraph, k: usize) -> bool {
        let copied_into = |uk: u32, o: u32| {
            uk != NONE && uk as usize != k && self.dup[uk as usize].binary_search(&o).is_ok()
        };
        self.members[k].iter().all(|&o| {
            self.class[o as usize] <= OpClass::Cheap
                && self
                    .users
                    .of(o)
                    .iter()
                    .all(|&u| copied_into(self.kernel_of[u as usize], o))
        }) && self.members[k]
            .iter()
            .any(|&o| !m.op(g.order[o as usize]).results.is_empty())
    }
}

/// Greedy consumer-first kernel growth over one region.
pub struct Planner<'a> {
    m: &'a Module,
    g: &'a RegionGraph,
    cfg: &'a FusionConfig,
    class: Vec<OpClass>,
    /// Whether each op may precede a matmul in its kernel (elementwise-ish).
    epilogue: Vec<bool>,
    /// Operand and result values of each op (value indices).
    operands: Csr,
    results: Csr,
    /// Per value: position of its defining op (`NONE`: not defined in the region).
    def_pos: Vec<u32>,
    /// Per value: a tensor of rank > 0 (it needs a DMA stream as a kernel input).
    needs_dma: Vec<bool>,
    /// Per value: (element count, element bytes) if it is a tensor.
    tensor: Vec<Option<(u64, u64)>>,
    /// In-region producers of each op's operands (with repeats, operand order).
    producers: Csr,
    /// In-region users of each op's results (with repeats, result then use order).
    users: Csr,
    kernel_of: Vec<u32>,
    members: Vec<Vec<u32>>,
    dup: Vec<Vec<u32>>,
    inputs: Vec<Vec<ValueId>>,
    rejections: Vec<Rejection>,
    /// `dup_mark[i] == k`: op `i` is copied into the current kernel `k`.
    dup_mark: Vec<u32>,
    /// `tried[i] == k`: op `i` was already queued while growing kernel `k`.
    tried: Vec<u32>,
    /// `input_mark[v] == k`: value `v` is an external input of the current kernel `k`.
    input_mark: Vec<u32>,
    /// Search scratch: op stamps and kernel stamps, compared with `epoch`.
    seen: Vec<u32>,
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
    /// Producers waiting to be tried by [`Planner::grow`] (kept for its allocation).
    heap: BinaryHeap<u32>,
}

impl<'a> Planner<'a> {
    pub fn new(m: &'a Module, g: &'a RegionGraph, cfg: &'a FusionConfig) -> Self {
        let n = g.order.len();
        let nv = m.values.len();
        let mut def_pos = vec![NONE; nv];
        let mut needs_dma = vec![false; nv];
        let mut tensor = vec![None; nv];
        // Values captured by an op's regions (a `case` branch reading an argument) are its
        // inputs too: the kernel must load them and keep them alive.
        let uses: usize = g.order.iter().map(|&op| m.op(op).operands.len()).sum();
        let defs: usize = g.order.iter().map(|&op| m.op(op).results.len()).sum();
        let operands = Csr::build(n, uses, |i, out| {
            let op = g.order[i];
            out.extend(m.op(op).operands.iter().map(|v| v.0));
            if !m.op(op).regions.is_empty() {
                out.extend(captured_values(m, op).iter().map(|v| v.0));
            }
        });
        let results = Csr::build(n, defs, |i, out| {
            out.extend(m.op(g.order[i]).results.iter().map(|v| v.0));
        });
        let facts = TypeFacts::new(m);
        let mut fill = |v: ValueId| {
            let f = facts.of(m, v);
            if let (Some(rank), Some(t)) = (f.rank, f.tensor) {
                needs_dma[v.index()] = rank > 0;
                tensor[v.index()] = Some(t);
            }
        };
        // Type facts of every value an op of the region defines or reads: the results
        // first, then (once each) the operands defined outside the region's ops.
        for (i, &op) in g.order.iter().enumerate() {
            for &r in &m.op(op).results {
                fill(r);
                def_pos[r.index()] = i as u32;
            }
        }
        for &v in &operands.items {
            if def_pos[v as usize] == NONE {
                def_pos[v as usize] = OUTSIDE;
                fill(ValueId(v));
            }
        }
        for d in def_pos.iter_mut().filter(|d| **d == OUTSIDE) {
            *d = NONE;
        }
        let producers = Csr::build(n, operands.items.len(), |i, out| {
            out.extend(
                operands
                    .of(i as u32)
                    .iter()
                    .map(|&v| def_pos[v as usize])
                    .filter(|&p| p != NONE),
            );
        });
        let users = Csr::build(n, operands.items.len(), |i, out| {
            for &r in results.of(i as u32) {
                out.extend(
                    g.users_of(ValueId(r))
                        .iter()
                        .map(|&(u, _)| g.pos[&u] as u32),
                );
            }
        });
        let class: Vec<OpClass> = g.order.iter().map(|&o| classify(m, o)).collect();
        let epilogue = g
            .order
            .iter()
            .zip(&class)
            .map(|(&o, c)| match c {
                OpClass::Free | OpClass::Cheap => true,
                OpClass::Loop => m.op(o).kind.is_elementwise(),
                _ => false,
            })
            .collect();
        Planner {
            m,
            g,
            cfg,
            class,
            epilogue,
            operands,
            results,
            def_pos,
            needs_dma,
            tensor,
            producers,
            users,
            kernel_of: vec![NONE; n],
            members: Vec::new(),
            dup: Vec::new(),
            inputs: Vec::new(),
            rejections: Vec::new(),
            dup_mark: vec![NONE; n],
            tried: vec![NONE; n],
            input_mark: vec![NONE; nv],
            seen: vec![0; n],
            seen_kernel: Vec::new(),
            epoch: 0,
            cur: Current::default(),
            topo: TopoOrder::new(n),
            moved: Vec::new(),
            moved_before: false,
            moved_for: NONE,
            moved_other: Vec::new(),
            heap: BinaryHeap::new(),
        }
    }

    pub fn is_owned(&self, i: usize) -> bool {
        self.kernel_of[i] != NONE
    }

    /// Starts kernel `members.len()` at op `i` and grows it.
    pub fn seed(&mut self, i: usize) {
        let k = self.members.len() as u32;
        let i = i as u32;
        self.members.push(Vec::new());
        self.dup.push(Vec::new());
        self.seen_kernel.push(0);
        self.topo.seed_kernel(i, k);
        self.moved_for = NONE;
        self.cur.reset(i);
        self.join(i, k, false);
        self.grow(k);
        let marks = &self.input_mark;
        let inputs = self.cur.input_list.iter().copied();
        self.inputs
            .push(inputs.filter(|v| marks[v.index()] == k).collect());
        self.members[k as usize] = self.cur.members.clone();
        self.cur.dup.sort_unstable();
        self.dup[k as usize] = self.cur.dup.clone();
    }

    pub fn into_grown(self) -> Grown {
        Grown {
            members: self.members,
            dup: self.dup,
            inputs: self.inputs,
            kernel_of: self.kernel_of,
            class: self.class,
            rejections: self.rejections,
            users: self.users,
        }
    }

    /// Absorbs producers into kernel `k`, latest first, until none is left to try.
    fn grow(&mut self, k: u32) {
        let mut heap = std::mem::take(&mut self.heap);
        heap.clear();
        queue_producers(
            &self.producers,
            &mut self.tried,
            &mut heap,
            self.cur.last,
            k,
        );
        while let Some(p) = heap.pop() {
            if !self.is_candidate(p, k) {
                continue;
            }
            match self.check(p, k) {
                Ok(duplicate) => {
                    self.join(p, k, duplicate);
                    queue_producers(&self.producers, &mut self.tried, &mut heap, p, k);
                }
                Err(rule) => self.rejections.push(Rejection {
                    producer: self.g.order[p as usize],
                    kernel: k as usize,
                    rule,
                }),
            }
        }
        self.heap = heap;
    }

    /// Adds op `p` to kernel `k` as a member or a copy, updating the current facts.
    fn join(&mut self, p: u32, k: u32, duplicate: bool) {
        let pi = p as usize;
        if duplicate {
            self.cur.dup.push(p);
            self.dup_mark[pi] = k;
        } else {
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
            self.kernel_of[pi] = k;
            match self.class[pi] {
                OpClass::Opaque => self.cur.opaque = Some(p),
                OpClass::Matmul => self.cur.matmuls += 1,
                OpClass::Reduce => {
                    self.cur.reduces += 1;
                    if self.cur.row.is_none() {
                        self.cur.row = Some(self.row_shape(p));
                    }
                }
                _ => {}
            }
            if !self.epilogue[pi] {
                self.cur.not_epilogue += 1;
            }
            self.cur.last = self.cur.last.max(p);
            for &r in self.results.of(p) {
                if let Some((n, bytes)) = self.tensor[r as usize] {
                    match self.cur.elem_bytes.iter_mut().find(|e| e.0 == n) {
                        Some(e) => e.1 += bytes,
                        None => self.cur.elem_bytes.push((n, bytes)),
                    }
                }
            }
        }
        for &r in self.results.of(p) {
            if self.input_mark[r as usize] == k {
                self.input_mark[r as usize] = NONE;
                self.cur.tensor_inputs -= usize::from(self.needs_dma[r as usize]);
            }
        }
        for &v in self.operands.of(p) {
            if self.input_mark[v as usize] != k && !self.defined_inside(v, k, NONE) {
                self.input_mark[v as usize] = k;
                self.cur.input_list.push(ValueId(v));
                self.cur.tensor_inputs += usize::from(self.needs_dma[v as usize]);
            }
        }
    }

    /// Whether value `v` is defined by a member or copy of kernel `k`, or by op `extra`.
    fn defined_inside(&self, v: u32, k: u32, extra: u32) -> bool {
        let i = self.def_pos[v as usize];
        i != NONE
            && (i == extra || self.kernel_of[i as usize] == k || self.dup_mark[i as usize] == k)
    }

    /// Whether producer `p` may still be tried for kernel `k`: unowned, or cheap and
    /// owned elsewhere (then it is copied).
    fn is_candidate(&self, p: u32, k: u32) -> bool {
        let owner = self.kernel_of[p as usize];
        if owner == k || self.dup_mark[p as usize] == k {
            return false;
        }
        owner == NONE || self.class[p as usize] <= OpClass::Cheap
    }

    /// Decides whether producer `p` joins kernel `k`: `Ok(true)` duplicates it,
    /// `Ok(false)` moves it in, `Err` names the refusing rule.
    fn check(&mut self, p: u32, k: u32) -> Result<bool, Rule> {
        let class = self.class[p as usize];
        let kind_of = |i: u32| self.m.op(self.g.order[i as usize]).kind;
        if class == OpClass::Opaque {
            return Err(Rule::OpaqueOp(kind_of(p)));
        }
        if let Some(o) = self.cur.opaque {
            return Err(Rule::OpaqueOp(kind_of(o)));
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
            .any(|&u| self.kernel_of[u as usize] != k);
        let duplicate = outside && class <= OpClass::Cheap;
        // Non-cheap producers are never recomputed: they become an extra kernel output
        // (multi-output fusion), which is only legal without a cycle.
        if outside && !duplicate && self.creates_cycle(p, k) {
            return Err(Rule::WouldCreateCycle);
        }
        let inputs = self.tensor_inputs_with(p, k);
        if inputs > self.cfg.max_inputs {
            return Err(Rule::TooManyInputs { inputs });
        }
        Ok(duplicate)
    }

    /// Number of rank > 0 tensor inputs of kernel `k` if `p` joined it.
    fn tensor_inputs_with(&self, p: u32, k: u32) -> usize {
        let mut n = self.cur.tensor_inputs;
        for &r in self.results.of(p) {
            if self.input_mark[r as usize] == k && self.needs_dma[r as usize] {
                n -= 1;
            }
        }
        let operands = self.operands.of(p);
        for (j, &v) in operands.iter().enumerate() {
            if self.input_mark[v as usize] == k
                || !self.needs_dma[v as usize]
                || operands[..j].contains(&v)
                || self.defined_inside(v, k, p)
            {
                continue;
            }
            n += 1;
        }
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

    /// Users of `p` that are members or copies of kernel `k`.
    fn users_in(&self, p: u32, k: u32) -> impl Iterator<Item = u32> + '_ {
        self.users
            .of(p)
            .iter()
            .copied()
            .filter(move |&u| self.kernel_of[u as usize] == k || self.dup_mark[u as usize] == k)
    }

    /// Whether `p` feeds the kernel's matmul (directly or through other kernel ops):
    /// then it is a prologue rather than a side input of the epilogue.
    fn reaches_matmul(&mut self, p: u32, k: u32) -> bool {
        let epoch = self.next_epoch();
        let mut stack: Vec<u32> = self.users_in(p, k).collect();
        while let Some(u) = stack.pop() {
            if self.seen[u as usize] == epoch {
                continue;
            }
            self.seen[u as usize] = epoch;
            if self.class[u as usize] == OpClass::Matmul {
                return true;
            }
            let before = stack.len();
            stack.extend(self.users.of(u));
            let (kernel_of, dup_mark) = (&self.kernel_of, &self.dup_mark);
            let mut j = before;
            for i in before..stack.len() {
                let x = stack[i] as usize;
                if kernel_of[x] == k || dup_mark[x] == k {
                    stack[j] = stack[i];
                    j += 1;
                }
            }
            stack.truncate(j);
        }
        false
    }

    fn reduction_rules(&self, p: u32, k: u32) -> Result<(), Rule> {
        let p_reduces = self.class[p as usize] == OpClass::Reduce;
        if p_reduces
            && self
                .users_in(p, k)
                .any(|u| self.class[u as usize] == OpClass::Reduce)
        {
            return Err(Rule::ReduceIntoReduce);
        }
        // Every reduce of the kernel shares one row shape (enforced here as they join).
        let p_row = p_reduces.then(|| self.row_shape(p));
        let row = match (&self.cur.row, &p_row) {
            (Some(r), Some(pr)) if r != pr => return Err(Rule::MismatchedReductions),
            (Some(r), _) => r,
            (None, Some(pr)) => pr,
            (None, None) => return Ok(()),
        };
        let per_partition = self.resident_row_bytes(p, row);
        if per_partition > self.cfg.sbuf_partition_bytes {
            return Err(Rule::SbufCapacity {
                per_partition_bytes: per_partition,
            });
        }
        Ok(())
    }

    /// (operand shape, reduced dims) of a reduce.
    fn row_shape(&self, op: u32) -> (Vec<i64>, Vec<i64>) {
        let o = self.m.op(self.g.order[op as usize]);
        let shape = self
            .m
            .tensor_type(o.operands[0])
            .map(|t| t.shape.to_vec())
            .unwrap_or_default();
        (shape, o.attrs.i64_array("dimensions").unwrap_or_default())
    }

    /// Bytes per partition to keep one reduced row of every tensor of the current kernel
    /// (plus `p`) resident.
    fn resident_row_bytes(&self, p: u32, row: &(Vec<i64>, Vec<i64>)) -> u64 {
        let row_elems: u64 = row
            .1
            .iter()
            .filter_map(|&d| row.0.get(d as usize))
            .map(|&n| n.max(0) as u64)
            .product();
        let full: u64 = row.0.iter().map(|&n| n.max(0) as u64).product();
        let members: u64 = self
            .cur
            .elem_bytes
            .iter()
            .filter(|e| e.0 == full)
            .map(|e| e.1)
            .sum();
        let own: u64 = self
            .results
            .of(p)
            .iter()
            .filter_map(|&r| self.tensor[r as usize])
            .filter(|t| t.0 == full)
            .map(|t| t.1)
            .sum();
        row_elems.wrapping_mul(members.wrapping_add(own))
    }

    fn next_epoch(&mut self) -> u32 {
        self.epoch += 1;
        self.epoch
    }

    /// Whether some user of `p` outside kernel `k` reaches `k` (a user that belongs to
    /// another kernel stands for all of that kernel's ops), by [`Reach`]. Without a cycle,
    /// the nodes that must move in [`TopoOrder`] if `p` joins are kept in `moved`.
    fn creates_cycle(&mut self, p: u32, k: u32) -> bool {
        let epoch = self.next_epoch();
        self.next_epoch();
        self.moved_for = NONE;
        let outcome = Reach {
            users: &self.users,
            producers: &self.producers,
            kernel_of: &self.kernel_of,
            members: &self.members,
            current: &self.cur.members,
            topo: &self.topo,
            seen: &mut self.seen,
            seen_kernel: &mut self.seen_kernel,
            fwd: &mut self.moved,
            bwd: &mut self.moved_other,
            p,
            k,
            epoch,
        }
        .run();
        #[cfg(debug_assertions)]
        assert!(
            self.kernel_of.len() > SMALL_REGION
                || self.reaches_unbounded(p, k) == (outcome == Outcome::Cycle),
            "the bounded cycle check disagrees with a full search"
        );
        match outcome {
            Outcome::Cycle => return true,
            Outcome::After => self.moved_before = false,
            Outcome::Before => {
                self.moved_before = true;
                std::mem::swap(&mut self.moved, &mut self.moved_other);
            }
        }
        self.moved_for = p;
        false
    }

    /// The cycle search without the topological bound (debug cross-check).
    #[cfg(debug_assertions)]
    fn reaches_unbounded(&mut self, p: u32, k: u32) -> bool {
        let epoch = self.next_epoch();
        let outside = |&u: &u32| self.kernel_of[u as usize] != k;
        let mut stack: Vec<u32> = self.users.of(p).iter().copied().filter(outside).collect();
        while let Some(u) = stack.pop() {
            match self.kernel_of[u as usize] {
                uk if uk == k => return true,
                _ if self.seen[u as usize] == epoch => {}
                NONE => {
                    self.seen[u as usize] = epoch;
                    stack.extend(self.users.of(u));
                }
                uk => {
                    self.seen[u as usize] = epoch;
                    for &o in &self.members[uk as usize] {
                        stack.extend(self.users.of(o));
                    }
                }
            }
        }
        false
    }
}
