//! Dataflow view of one region for the NeuronCore planning passes.
//!
//! Owns: [`RegionGraph`], a side table over the ops of a single region (normally a function
//! body): the op list in program order, each op's position, and for every value defined in
//! the region the list of its in-region users. Ops nested in regions (reduce bodies, while
//! bodies) are part of their parent op and are not nodes.
//! Invariants: `order` is the region's op order, which is topological (SSA dominance);
//! `pos[op]` is the index of `op` in `order`; users are listed in program order and appear
//! once per use.

use neuronc_ir::{Module, OpId, RegionId, ValueDef, ValueId};
use rustc_hash::FxHashMap;

/// Users and positions of the ops of one region.
pub struct RegionGraph {
    pub region: RegionId,
    /// Ops in program (topological) order, terminator included.
    pub order: Vec<OpId>,
    /// Position of each op of the region in `order`.
    pub pos: FxHashMap<OpId, usize>,
    /// For each value used in the region: (user op, operand index) pairs.
    pub users: FxHashMap<ValueId, Vec<(OpId, usize)>>,
}

impl RegionGraph {
    pub fn new(m: &Module, region: RegionId) -> Self {
        let order = m.region(region).ops.clone();
        let pos = order.iter().enumerate().map(|(i, &o)| (o, i)).collect();
        let mut users: FxHashMap<ValueId, Vec<(OpId, usize)>> = FxHashMap::default();
        for &op in &order {
            for (i, &v) in m.op(op).operands.iter().enumerate() {
                users.entry(v).or_default().push((op, i));
            }
            // Values captured by nested regions count as uses by the parent op.
            for &r in &m.op(op).regions {
                let mut captured = Vec::new();
                m.walk_region(r, &mut |inner| {
                    captured.extend(m.op(inner).operands.iter().copied())
                });
                for v in captured {
                    if defined_outside(m, v, op) {
                        users.entry(v).or_default().push((op, usize::MAX));
                    }
                }
            }
        }
        RegionGraph {
            region,
            order,
            pos,
            users,
        }
    }

    /// In-region users of `v` (empty if none).
    pub fn users_of(&self, v: ValueId) -> &[(OpId, usize)] {
        self.users.get(&v).map_or(&[], Vec::as_slice)
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

/// Bytes of a value's tensor data (0 for tokens; tuples sum their elements).
pub fn value_bytes(m: &Module, v: ValueId) -> u64 {
    type_bytes(m, m.value_type(v))
}

fn type_bytes(m: &Module, t: neuronc_ir::TypeId) -> u64 {
    match m.ty(t) {
        neuronc_ir::Type::Tensor(t) => t.byte_size(),
        neuronc_ir::Type::Tuple(items) => items.iter().map(|&i| type_bytes(m, i)).sum(),
        neuronc_ir::Type::Token => 0,
    }
}
