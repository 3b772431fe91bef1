//! Kernel sharing during outlining: a kernel whose function would be identical to one
//! already outlined calls that function instead of getting its own.
//!
//! Owns [`KernelShare`]. The kernels of a model's repeated layers are identical op for op,
//! so most outlined bodies would be copies (the BERT-base training step: 538 kernels, 74
//! distinct bodies); building them only for `duplicate-function-elimination` to delete
//! them again is most of what outlining costs. Before a kernel's body is built, its
//! members are compared, in place, with the bodies of the kernels outlined so far: same
//! number and types of inputs, members equal op by op to the body's ops (kind,
//! attributes, result types, operands as the corresponding argument or earlier result,
//! nested regions), and the same values returned. A match is exactly the function
//! building would produce, so sharing it changes nothing but the work done.
//!
//! Invariants: only functions recorded with [`KernelShare::record`] (kernel bodies this
//! outlining built) are candidates; a kernel reading a value that is neither an input
//! nor made by a member is never shared (it is built as before).

use crate::dedupe_functions::{hash_op, same_op, Slots};
use neuronc_ir::{Module, OpId, ValueId};
use rustc_hash::{FxHashMap, FxHasher};
use std::hash::{Hash, Hasher};

/// The kernel bodies built so far, by structural hash.
pub(super) struct KernelShare {
    slots: Slots,
    /// Structural hash -> indices (into `Module::funcs`) of kernel functions.
    built: FxHashMap<u64, Vec<usize>>,
}

/// A kernel about to be outlined: its inputs (the function's arguments, in order), its
/// members (the body's ops, in order) and its outputs (what the body returns).
pub(super) struct Candidate<'a> {
    pub inputs: &'a [ValueId],
    pub members: &'a [OpId],
    pub outputs: &'a [ValueId],
}

impl KernelShare {
    pub fn new(m: &Module) -> Self {
        KernelShare {
            slots: Slots::new(m.values.len()),
            built: FxHashMap::default(),
        }
    }

    /// The structural hash of `c` (the same for every kernel with an equal body), or
    /// `None` when `c` reads a value that is neither an input nor a member's result.
    pub fn hash(&mut self, m: &Module, c: &Candidate<'_>) -> Option<u64> {
        let slots = &mut self.slots;
        slots.start();
        let mut h = FxHasher::default();
        c.inputs.len().hash(&mut h);
        for &v in c.inputs {
            m.value_type(v).0.hash(&mut h);
            slots.number(v);
        }
        c.members.len().hash(&mut h);
        for &op in c.members {
            hash_op(m, op, slots, &mut h)?;
        }
        for &v in c.outputs {
            slots.get(v)?.hash(&mut h);
        }
        Some(h.finish())
    }

    /// A kernel function built earlier whose body equals what `c` would build.
    pub fn find(&mut self, m: &Module, hash: u64, c: &Candidate<'_>) -> Option<usize> {
        let slots = &mut self.slots;
        self.built
            .get(&hash)?
            .iter()
            .copied()
            .find(|&fi| matches(m, slots, fi, c))
    }

    /// Records the kernel function `fi`, built for a candidate with hash `hash`.
    pub fn record(&mut self, hash: u64, fi: usize) {
        self.built.entry(hash).or_default().push(fi);
    }
}

/// Whether the body of function `fi` is what building `c` would produce.
fn matches(m: &Module, slots: &mut Slots, fi: usize, c: &Candidate<'_>) -> bool {
    let body = m.region(m.funcs[fi].body);
    let Some((&ret, ops)) = body.ops.split_last() else {
        return false;
    };
    if body.args.len() != c.inputs.len() || ops.len() != c.members.len() {
        return false;
    }
    slots.start();
    for (&a, &v) in body.args.iter().zip(c.inputs) {
        if m.value_type(a) != m.value_type(v) {
            return false;
        }
        slots.set(v, a.0);
    }
    if !ops
        .iter()
        .zip(c.members)
        .all(|(&x, &y)| same_op(m, x, y, slots))
    {
        return false;
    }
    let returned = &m.op(ret).operands;
    returned.len() == c.outputs.len()
        && returned
            .iter()
            .zip(c.outputs)
            .all(|(&r, &v)| slots.get(v) == Some(r.0))
}
