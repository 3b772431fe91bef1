//! Dataflow view of one region for the NeuronCore planning passes.
//!
//! Owns: [`RegionGraph`], a side table over the ops of a single region (normally a function
//! body): the op list in program order, each op's position, and for every value the list
//! of its in-region users; plus [`OpMap`], the dense op-keyed table it and the planners
//! use, and [`TypeFacts`], per-type sizes computed once per plan. Ops nested in regions (reduce bodies, while bodies) are part of their parent op and
//! are not nodes.
//! Invariants: `order` is the region's op order, which is topological (SSA dominance);
//! `pos[op]` is the index of `op` in `order`; users are listed in program order and appear
//! once per use. All tables are dense vectors indexed by arena ids (no hashing).

use neuronc_ir::{Module, OpId, RegionId, ValueDef, ValueId};

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

/// Users and positions of the ops of one region.
pub struct RegionGraph {
    pub region: RegionId,
    /// Ops in program (topological) order, terminator included.
    pub order: Vec<OpId>,
    /// Position of each op of the region in `order`.
    pub pos: OpMap<usize>,
    /// `users[user_start[v]..user_start[v + 1]]`: (user op, operand index) pairs of value
    /// `v` (operand index `usize::MAX` for a capture by a nested region).
    user_start: Vec<u32>,
    users: Vec<(OpId, usize)>,
}

impl RegionGraph {
    pub fn new(m: &Module, region: RegionId) -> Self {
        let order = m.region(region).ops.clone();
        let mut pos = OpMap::with_capacity(m.ops.len());
        for (i, &o) in order.iter().enumerate() {
            pos.insert(o, i);
        }
        // Every use, in program order, as (value, user, operand index).
        let operands: usize = order.iter().map(|&op| m.op(op).operands.len()).sum();
        let mut uses: Vec<(ValueId, OpId, usize)> = Vec::with_capacity(operands);
        for &op in &order {
            for (i, &v) in m.op(op).operands.iter().enumerate() {
                uses.push((v, op, i));
            }
            // Values captured by nested regions count as uses by the parent op.
            if !m.op(op).regions.is_empty() {
                for v in captured_values(m, op) {
                    uses.push((v, op, usize::MAX));
                }
            }
        }
        // Counting sort by value keeps program order within each value's list.
        let mut user_start = vec![0u32; m.values.len() + 1];
        for &(v, ..) in &uses {
            user_start[v.index() + 1] += 1;
        }
        for i in 1..user_start.len() {
            user_start[i] += user_start[i - 1];
        }
        let mut fill = user_start.clone();
        let mut users = vec![(OpId(0), 0); uses.len()];
        for (v, op, i) in uses {
            let slot = &mut fill[v.index()];
            users[*slot as usize] = (op, i);
            *slot += 1;
        }
        RegionGraph {
            region,
            order,
            pos,
            user_start,
            users,
        }
    }

    /// In-region users of `v` (empty if none).
    pub fn users_of(&self, v: ValueId) -> &[(OpId, usize)] {
        match (
            self.user_start.get(v.index()),
            self.user_start.get(v.index() + 1),
        ) {
            (Some(&a), Some(&b)) => &self.users[a as usize..b as usize],
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

/// Whether `v` is defined outside the regions nested in `op`.
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
    pub fn bytes(&self, m: &Module, v: ValueId) -> u64 {
        self.of(m, v).bytes
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

#[cfg(test)]
mod tests {
    use super::*;

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
