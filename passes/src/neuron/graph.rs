//! Dataflow view of one region for the NeuronCore planning passes.
//!
//! Owns: [`RegionGraph`], a side table over the ops of a single region (normally a function
//! body): the op list in program order, each op's position, for every value the list of
//! its in-region users, and for every op the values its nested regions capture; plus
//! [`OpMap`], the dense op-keyed table it and the planners use, [`Csr`], the compressed
//! list-of-lists the planners index by position (and its counting sort, `Csr::bucketed`), `MaxQueue` (positions popped highest
//! first), and [`TypeFacts`], per-type sizes computed once per plan. Ops nested in regions
//! (reduce bodies, while bodies) are part of their parent op and are not nodes.
//! Invariants: `order` is the region's op order, which is topological (SSA dominance);
//! `pos[op]` is the index of `op` in `order`; users are listed in program order and appear
//! once per use. All tables are dense vectors indexed by arena ids (no hashing).

use neuronc_ir::{Module, OpId, RegionId, ValueDef, ValueId};
use std::sync::OnceLock;

/// A dense map from [`OpId`] to `T`, backed by a vector over the op arena.
#[derive(Clone, Debug)]
pub struct OpMap<T> {
    slots: Vec<Option<T>>,
}

impl<T> Default for OpMap<T> {
    fn default() -> Self {
        OpMap { slots: Vec::new() }
    }
}

impl<T> OpMap<T> {
    /// An empty map with room for ops `0..capacity`.
    pub fn with_capacity(capacity: usize) -> Self {
        let mut slots = Vec::with_capacity(capacity);
        slots.resize_with(capacity, || None);
        OpMap { slots }
    }
    pub fn get(&self, op: &OpId) -> Option<&T> {
        self.slots.get(op.index()).and_then(Option::as_ref)
    }
    pub fn contains_key(&self, op: &OpId) -> bool {
        self.get(op).is_some()
    }
    pub fn insert(&mut self, op: OpId, value: T) {
        if op.index() >= self.slots.len() {
            self.slots.resize_with(op.index() + 1, || None);
        }
        self.slots[op.index()] = Some(value);
    }
    /// Entries in op-id order.
    pub fn iter(&self) -> impl Iterator<Item = (OpId, &T)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|v| (OpId(i as u32), v)))
    }
    pub fn len(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> std::ops::Index<&OpId> for OpMap<T> {
    type Output = T;
    /// Panics when `op` has no entry (a planner bug, never user input).
    fn index(&self, op: &OpId) -> &T {
        self.get(op).expect("op has an entry in this side table")
    }
}

/// Compressed lists: list `i` is `items[start[i]..start[i + 1]]`. Built one list at a time
/// (push onto [`Csr::items_mut`], then [`Csr::close`]).
#[derive(Clone, Debug)]
pub struct Csr<T = u32> {
    start: Vec<u32>,
    items: Vec<T>,
}

impl<T> Default for Csr<T> {
    fn default() -> Self {
        Csr::with_capacity(0, 0)
    }
}

impl<T> Csr<T> {
    /// No lists yet, with room for `lists` lists of `items` items in all.
    pub fn with_capacity(lists: usize, items: usize) -> Self {
        let mut start = Vec::with_capacity(lists + 1);
        start.push(0);
        Csr {
            start,
            items: Vec::with_capacity(items),
        }
    }
    /// The items of the list being built (and of all closed lists before them).
    pub fn items_mut(&mut self) -> &mut Vec<T> {
        &mut self.items
    }
    /// Ends the list being built: it becomes list `len() - 1`.
    pub fn close(&mut self) {
        self.start.push(self.items.len() as u32);
    }
    /// Number of closed lists.
    pub fn len(&self) -> usize {
        self.start.len() - 1
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// List `i` (panics when `i` is not a closed list: a planner bug, never user input).
    #[inline]
    pub fn of(&self, i: u32) -> &[T] {
        let (a, b) = self.bounds(i);
        &self.items[a..b]
    }
    /// List `i`, mutably.
    pub fn of_mut(&mut self, i: u32) -> &mut [T] {
        let (a, b) = self.bounds(i);
        &mut self.items[a..b]
    }
    #[inline]
    fn bounds(&self, i: u32) -> (usize, usize) {
        // The end first: one bounds check covers both reads.
        let i = i as usize;
        let b = self.start[i + 1];
        (self.start[i] as usize, b as usize)
    }
    /// All lists, in order.
    pub fn lists(&self) -> impl DoubleEndedIterator<Item = &[T]> + ExactSizeIterator + '_ {
        self.start
            .windows(2)
            .map(|w| &self.items[w[0] as usize..w[1] as usize])
    }
    /// The items of all lists, list after list.
    pub fn items(&self) -> &[T] {
        &self.items
    }
}

impl Csr<u32> {
    /// The reverse of adjacency lists over nodes `0..n`: list `j` of the result holds every
    /// `i` whose list holds `j` (once per occurrence), in increasing `i`.
    pub fn transpose(&self, n: usize) -> Csr<u32> {
        let mut start = vec![0u32; n + 1];
        for &j in &self.items {
            start[j as usize] += 1;
        }
        // [`Csr::bucketed`] of the pairs `(j, i)`, with plain index loops: going through
        // its iterator (a reversed `flat_map`) cost several times the placing itself.
        let mut total = 0;
        for c in &mut start {
            total += *c;
            *c = total;
        }
        let mut items = vec![0u32; total as usize];
        for i in (0..self.len()).rev() {
            let (a, b) = self.bounds(i as u32);
            for &j in self.items[a..b].iter().rev() {
                let slot = &mut start[j as usize];
                *slot -= 1;
                items[*slot as usize] = i as u32;
            }
        }
        Csr { start, items }
    }

    /// Counting sort of `(key, item)` pairs into lists by key: list `k` holds the items
    /// with key `k`, in the order `keyed` yields them. `counts[k]` is the number of pairs
    /// with key `k`, with one more entry (0) at the end; `keyed` yields exactly those pairs.
    pub fn bucketed(
        mut counts: Vec<u32>,
        keyed: impl DoubleEndedIterator<Item = (u32, u32)>,
    ) -> Csr<u32> {
        // The counts become running totals; then the pairs, placed last first, count each
        // key's total back down to its first slot.
        let mut total = 0;
        for c in &mut counts {
            total += *c;
            *c = total;
        }
        let mut items = vec![0u32; total as usize];
        for (k, item) in keyed.rev() {
            let slot = &mut counts[k as usize];
            *slot -= 1;
            items[*slot as usize] = item;
        }
        Csr {
            start: counts,
            items,
        }
    }
}

/// Users and positions of the ops of one region.
pub struct RegionGraph {
    pub region: RegionId,
    /// Ops in program (topological) order, terminator included.
    pub order: Vec<OpId>,
    /// Position of each op of the region in `order`.
    pub pos: OpMap<usize>,
    /// List `i`: [`captured_values`] of `order[i]`.
    captured: Csr<ValueId>,
    /// The users of every value, built on the first [`RegionGraph::users_of`]: planning
    /// and outlining never ask, lowering does.
    uses: OnceLock<Uses>,
}

/// `list[start[v]..start[v + 1]]`: (user op, operand index) pairs of value `v` (operand
/// index `usize::MAX` for a capture by a nested region).
struct Uses {
    start: Vec<u32>,
    list: Vec<(OpId, usize)>,
}

impl RegionGraph {
    pub fn new(m: &Module, region: RegionId) -> Self {
        let order = m.region(region).ops.clone();
        let mut pos = OpMap::with_capacity(m.ops.len());
        let mut captured = Csr::with_capacity(order.len(), 0);
        for (i, &op) in order.iter().enumerate() {
            match pos.slots.get_mut(op.index()) {
                Some(slot) => *slot = Some(i),
                None => pos.insert(op, i),
            }
            if !m.op(op).regions.is_empty() {
                captured.items_mut().extend(captured_values(m, op));
            }
            captured.close();
        }
        RegionGraph {
            region,
            order,
            pos,
            captured,
            uses: OnceLock::new(),
        }
    }

    /// Lists the uses of every value (operands, then values captured by nested regions,
    /// which count as uses by the parent op) by a counting sort, which keeps program order
    /// within each value's list.
    fn build_uses(&self, m: &Module) -> Uses {
        let mut start = vec![0u32; m.values.len() + 1];
        let each_use = |f: &mut dyn FnMut(ValueId, (OpId, usize))| {
            for (i, &op) in self.order.iter().enumerate() {
                for (j, &v) in m.op(op).operands.iter().enumerate() {
                    f(v, (op, j));
                }
                for &v in self.captured.of(i as u32) {
                    f(v, (op, usize::MAX));
                }
            }
        };
        each_use(&mut |v, _| start[v.index() + 1] += 1);
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        let mut fill = start.clone();
        let mut list = vec![(OpId(0), 0); *start.last().unwrap_or(&0) as usize];
        each_use(&mut |v, user| {
            let slot = &mut fill[v.index()];
            list[*slot as usize] = user;
            *slot += 1;
        });
        Uses { start, list }
    }

    /// [`captured_values`] of the op at position `i` (empty for ops without regions).
    pub fn captured_by(&self, i: usize) -> &[ValueId] {
        self.captured.of(i as u32)
    }

    /// In-region users of `v` (empty if none). `m` is the module the graph was built on.
    pub fn users_of(&self, m: &Module, v: ValueId) -> &[(OpId, usize)] {
        let uses = self.uses.get_or_init(|| self.build_uses(m));
        match (uses.start.get(v.index()), uses.start.get(v.index() + 1)) {
            (Some(&a), Some(&b)) => &uses.list[a as usize..b as usize],
            _ => &[],
        }
    }

    /// The in-region op defining `v`, if any (region arguments have none).
    pub fn producer(&self, m: &Module, v: ValueId) -> Option<OpId> {
        match m.value(v).def {
            ValueDef::Result(op, _) if self.pos.contains_key(&op) => Some(op),
            _ => None,
        }
    }
}

/// The values `op`'s nested regions read that are defined outside `op` (one entry per
/// use, in walk order): inputs of `op` as much as its operands are.
pub fn captured_values(m: &Module, op: OpId) -> Vec<ValueId> {
    let mut captured = Vec::new();
    for &r in &m.op(op).regions {
        m.walk_region(r, &mut |inner| {
            captured.extend(m.op(inner).operands.iter().copied())
        });
    }
    captured.retain(|&v| defined_outside(m, v, op));
    captured
}

fn defined_outside(m: &Module, v: ValueId, op: OpId) -> bool {
    let mut region = match m.value(v).def {
        ValueDef::Result(def, _) => m.op(def).parent,
        ValueDef::RegionArg(r, _) => Some(r),
    };
    while let Some(r) = region {
        match m.region(r).parent {
            Some(owner) if owner == op => return false,
            Some(owner) => region = m.op(owner).parent,
            None => return true,
        }
    }
    true
}

/// What the planners' inner loops ask of a value's type, computed once per interned type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TypeFact {
    /// [`value_bytes`] of a value of this type.
    pub bytes: u64,
    /// Rank, if a tensor.
    pub rank: Option<usize>,
    /// (element count, element bytes), if a tensor.
    pub tensor: Option<(u64, u64)>,
}

/// [`TypeFact`]s of every type interned in a module, indexed by [`TypeId`] (types interned
/// after construction have no entry).
///
/// [`TypeId`]: neuronc_ir::TypeId
pub struct TypeFacts {
    facts: Vec<TypeFact>,
}

impl TypeFacts {
    pub fn new(m: &Module) -> Self {
        let facts = (0..m.types.len() as u32)
            .map(|i| {
                let t = neuronc_ir::TypeId(i);
                let tensor = m.types.tensor_of(t);
                TypeFact {
                    bytes: type_bytes(m, t),
                    rank: tensor.map(|t| t.rank()),
                    tensor: tensor.map(|t| (t.num_elements(), t.elem.byte_width() as u64)),
                }
            })
            .collect();
        TypeFacts { facts }
    }

    /// The facts of `v`'s type.
    #[inline]
    pub fn of(&self, m: &Module, v: ValueId) -> TypeFact {
        let t = m.value_type(v);
        match self.facts.get(t.0 as usize) {
            Some(&f) => f,
            None => TypeFact {
                bytes: type_bytes(m, t),
                rank: m.types.tensor_of(t).map(|t| t.rank()),
                tensor: m
                    .types
                    .tensor_of(t)
                    .map(|t| (t.num_elements(), t.elem.byte_width() as u64)),
            },
        }
    }

    /// [`value_bytes`] of `v`.
    #[inline]
    pub fn bytes(&self, m: &Module, v: ValueId) -> u64 {
        let t = m.value_type(v);
        match self.facts.get(t.0 as usize) {
            Some(f) => f.bytes,
            None => type_bytes(m, t),
        }
    }
}

/// Bytes of a value's tensor data (tuples sum their elements; 0 for tokens and other
/// types that hold no data of their own).
pub fn value_bytes(m: &Module, v: ValueId) -> u64 {
    type_bytes(m, m.value_type(v))
}

fn type_bytes(m: &Module, t: neuronc_ir::TypeId) -> u64 {
    match m.ty(t) {
        neuronc_ir::Type::Tensor(t) => t.byte_size(),
        neuronc_ir::Type::Tuple(items) | neuronc_ir::Type::Future(items) => {
            items.iter().map(|&i| type_bytes(m, i)).sum()
        }
        _ => 0,
    }
}

/// Distinct positions waiting their turn, highest first (as a max-heap would pop them):
/// kept ascending and popped from the end. The planner's producers usually precede their
/// consumer closely, so they are inserted near the end.
#[derive(Default)]
pub(super) struct MaxQueue {
    items: Vec<u32>,
}

impl MaxQueue {
    /// Longest queue searched linearly from the end (longer ones: binary search).
    const SCAN: usize = 32;

    #[inline]
    pub(super) fn push(&mut self, i: u32) {
        let items = &mut self.items;
        if items.len() > Self::SCAN {
            items.insert(items.partition_point(|&x| x < i), i);
            return;
        }
        items.push(i);
        // (On a slice, not through the Vec: its length and buffer stay in registers.)
        let items = items.as_mut_slice();
        let mut j = items.len() - 1;
        while j > 0 && items[j - 1] > i {
            items[j] = items[j - 1];
            j -= 1;
        }
        items[j] = i;
    }

    /// The highest queued position, removed.
    pub(super) fn pop(&mut self) -> Option<u32> {
        self.items.pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose_lists_the_sources_of_each_target() {
        // 0 -> {1, 2}, 1 -> {2, 2}, 2 -> {}, over 3 nodes.
        let mut c = Csr::with_capacity(3, 4);
        c.items_mut().extend([1, 2]);
        c.close();
        c.items_mut().extend([2, 2]);
        c.close();
        c.close();
        let t = c.transpose(3);
        assert_eq!(t.len(), 3);
        assert_eq!(t.of(0), &[] as &[u32]);
        assert_eq!(t.of(1), &[0]);
        assert_eq!(t.of(2), &[0, 1, 1]);
    }

    #[test]
    fn max_queue_pops_highest_first() {
        // More items than the linear-scan limit, pushed in a scrambled order.
        let n = 3 * MaxQueue::SCAN as u32;
        let mut q = MaxQueue::default();
        for i in 0..n {
            q.push((i * 37) % n);
        }
        let popped: Vec<u32> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(popped, (0..n).rev().collect::<Vec<_>>());
        q.push(5);
        q.push(9);
        q.push(1);
        assert_eq!(
            (q.pop(), q.pop(), q.pop(), q.pop()),
            (Some(9), Some(5), Some(1), None)
        );
    }

    #[test]
    fn op_map_is_a_map() {
        let mut m: OpMap<usize> = OpMap::with_capacity(2);
        m.insert(OpId(5), 7);
        m.insert(OpId(1), 3);
        m.insert(OpId(1), 4);
        assert_eq!(m.get(&OpId(1)), Some(&4));
        assert_eq!(m[&OpId(5)], 7);
        assert!(!m.contains_key(&OpId(0)) && !m.contains_key(&OpId(99)));
        let entries: Vec<(OpId, usize)> = m.iter().map(|(k, &v)| (k, v)).collect();
        assert_eq!(entries, [(OpId(1), 4), (OpId(5), 7)]);
        assert_eq!(m.len(), 2);
    }
}
