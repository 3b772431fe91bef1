//! Kernel sharing during outlining: a kernel whose function would be identical to one
//! outlined before it calls that function instead of getting its own.
//!
//! Owns [`share_plan`]. The kernels of a model's repeated layers are identical op for op,
//! so most outlined bodies would be copies (the BERT-base training step: 538 kernels, 74
//! distinct bodies); building them only for `duplicate-function-elimination` to delete
//! them again is most of what outlining costs. Before anything is built, every kernel is
//! compared, in place, with the earlier kernels: same number and types of inputs, members
//! equal op by op (kind, attributes, result types, operands as the corresponding input or
//! earlier result, nested regions), and the same values returned. Two kernels equal in
//! that sense build equal functions (a body is an argument per input, a copy of each
//! member, a return of the outputs), so a kernel calling the function of the first kernel
//! equal to it changes nothing but the work done.
//!
//! Candidates are grouped by a cheap key (counts of inputs, members and outputs, kinds of
//! the first and last member), and each is compared, in order, only with the earlier
//! candidates of its group that build a function of their own ("heads"): the first
//! earlier kernel equal to a kernel is always a head (were it equal to an earlier one,
//! that one would be equal to this kernel and come first), so this finds the same
//! function as comparing with every earlier kernel, and a kernel calling an existing
//! function costs one comparison that succeeds. Comparisons that fail mostly fail at the
//! first members. A group that has gathered many heads is also indexed by a structural
//! hash of the kernels ([`kernel_hash`], which equal kernels share), so that thousands of
//! kernels of one shape differing only in a constant do not compare with each other.
//!
//! Invariants: a kernel reading a value that is neither an input nor made by a member is
//! never shared and never shared with (the comparison maps only inputs and member
//! results, so such a read never matches); a kernel's inputs are distinct values (as the
//! plan makes them), so the comparison is an equivalence; the answer for kernel `i` is an earlier
//! kernel `j < i` whose own answer is "build". The comparison only reads the module.

use crate::dedupe_functions::{hash_op, same_op, Slots};
use neuronc_ir::{Module, OpId, ValueId};
use rustc_hash::{FxHashMap, FxHasher};
use std::hash::{Hash, Hasher};

/// A kernel about to be outlined: its inputs (the function's arguments, in order), its
/// members (the body's ops, in order) and its outputs (what the body returns).
pub(super) struct Candidate<'a> {
    pub inputs: &'a [ValueId],
    pub members: &'a [OpId],
    pub outputs: &'a [ValueId],
}

/// For each candidate, the earlier candidate (by index) whose function it calls, or `None`
/// when it gets a function of its own.
pub(super) fn share_plan(m: &Module, candidates: &[Candidate<'_>]) -> Vec<Option<usize>> {
    let mut slots = Slots::new(m.values.len());
    let mut groups: FxHashMap<Key, Group> = FxHashMap::default();
    let mut shares = Vec::with_capacity(candidates.len());
    for (i, c) in candidates.iter().enumerate() {
        let group = groups.entry(key(m, c)).or_default();
        let hash = group
            .by_hash
            .is_some()
            .then(|| kernel_hash(m, &mut slots, c));
        let heads = match (&group.by_hash, hash) {
            (Some(by_hash), Some(h)) => h.and_then(|h| by_hash.get(&h)).map_or(&[][..], |v| v),
            _ => &group.heads[..],
        };
        let first = heads
            .iter()
            .copied()
            .find(|&j| same_kernel(m, &mut slots, &candidates[j], c));
        if first.is_none() {
            group.add_head(m, &mut slots, candidates, i, hash.flatten());
        }
        shares.push(first);
    }
    shares
}

/// Groups with this many heads are searched by structural hash from then on.
const HASHED_FROM: usize = 8;

/// The heads of one [`Key`], ascending; once there are [`HASHED_FROM`] of them, also by
/// structural hash ([`kernel_hash`]), so that many kernels of one shape that differ only
/// in an attribute (a constant's value) cost one comparison each, not one per head.
/// Heads without a hash (reading a value they do not define) never match and are left
/// out of `by_hash`.
#[derive(Default)]
struct Group {
    heads: Vec<usize>,
    by_hash: Option<FxHashMap<u64, Vec<usize>>>,
}

impl Group {
    /// Adds head `i` (`hash`: its hash, when the group already hashes).
    fn add_head(
        &mut self,
        m: &Module,
        slots: &mut Slots,
        candidates: &[Candidate<'_>],
        i: usize,
        hash: Option<u64>,
    ) {
        self.heads.push(i);
        if let Some(by_hash) = &mut self.by_hash {
            if let Some(h) = hash {
                by_hash.entry(h).or_default().push(i);
            }
        } else if self.heads.len() == HASHED_FROM {
            let mut by_hash: FxHashMap<u64, Vec<usize>> = FxHashMap::default();
            for &j in &self.heads {
                if let Some(h) = kernel_hash(m, slots, &candidates[j]) {
                    by_hash.entry(h).or_default().push(j);
                }
            }
            self.by_hash = Some(by_hash);
        }
    }
}

/// A hash of what [`same_kernel`] compares (input types, members with their operands as
/// positions and their attributes, outputs): equal for kernels that build equal
/// functions; `None` when a member reads a value that is neither an input nor a member
/// result.
fn kernel_hash(m: &Module, slots: &mut Slots, c: &Candidate<'_>) -> Option<u64> {
    let mut h = FxHasher::default();
    slots.start();
    for &x in c.inputs {
        m.value_type(x).0.hash(&mut h);
        slots.number(x);
    }
    for &op in c.members {
        hash_op(m, op, slots, &mut h)?;
    }
    for &o in c.outputs {
        slots.get(o)?.hash(&mut h);
    }
    Some(h.finish())
}

/// Counts of inputs, members and outputs, and the kinds of the first and last members:
/// equal for kernels that build equal functions.
type Key = (u32, u32, u32, u32, u32);

fn key(m: &Module, c: &Candidate<'_>) -> Key {
    let kind = |o: Option<&OpId>| o.map_or(u32::MAX, |&o| m.op(o).kind as u32);
    (
        c.inputs.len() as u32,
        c.members.len() as u32,
        c.outputs.len() as u32,
        kind(c.members.first()),
        kind(c.members.last()),
    )
}

/// Whether candidate `b` builds the same function as candidate `a`: `slots` maps `b`'s
/// inputs and member results to the corresponding values of `a`.
fn same_kernel(m: &Module, slots: &mut Slots, a: &Candidate<'_>, b: &Candidate<'_>) -> bool {
    if a.inputs.len() != b.inputs.len()
        || a.members.len() != b.members.len()
        || a.outputs.len() != b.outputs.len()
    {
        return false;
    }
    slots.start();
    for (&x, &y) in a.inputs.iter().zip(b.inputs) {
        if m.value_type(x) != m.value_type(y) {
            return false;
        }
        slots.set(y, x.0);
    }
    a.members
        .iter()
        .zip(b.members)
        .all(|(&x, &y)| same_op(m, x, y, slots))
        && a.outputs
            .iter()
            .zip(b.outputs)
            .all(|(&x, &y)| slots.get(y) == Some(x.0))
}

#[cfg(test)]
mod tests {
    use super::{share_plan, Candidate};
    use neuronc_ir::{parse_module, OpId, ValueId};

    fn kernel<'a>(
        inputs: &'a [ValueId],
        members: &'a [OpId],
        outputs: &'a [ValueId],
    ) -> Candidate<'a> {
        Candidate {
            inputs,
            members,
            outputs,
        }
    }

    #[test]
    fn equal_kernels_share_the_first_and_open_kernels_never_share() {
        let m = parse_module(
            "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
               %0 = stablehlo.exponential %a : tensor<4xf32>
               %1 = stablehlo.add %0, %b : tensor<4xf32>
               %2 = stablehlo.exponential %b : tensor<4xf32>
               %3 = stablehlo.add %2, %a : tensor<4xf32>
               %4 = stablehlo.exponential %b : tensor<4xf32>
               %5 = stablehlo.multiply %4, %a : tensor<4xf32>
               return %1 : tensor<4xf32>
             }",
        )
        .unwrap();
        let body = m.region(m.funcs[0].body);
        let (a, b) = (body.args[0], body.args[1]);
        let ops = &body.ops;
        let out = |i: usize| [m.op(ops[i]).results[0]];
        let (o1, o3, o5) = (out(1), out(3), out(5));
        let (ab, ba) = ([a, b], [b, a]);
        let candidates = [
            // exp(in0) + in1
            kernel(&ab, &ops[0..2], &o1),
            // exp(in0) + in1 again, on other values: calls kernel 0's function.
            kernel(&ba, &ops[2..4], &o3),
            // exp(in0) * in1: another body.
            kernel(&ba, &ops[4..6], &o5),
            // Reads %b without it being an input: never shared, never shared with.
            kernel(&ab[..1], &ops[0..2], &o1),
            kernel(&ab[..1], &ops[0..2], &o1),
            // exp(in1) + in0: the inputs in the other order make another body.
            kernel(&ab, &ops[2..4], &o3),
            // Equal to kernel 1, whose class kernel 0 heads.
            kernel(&ba, &ops[2..4], &o3),
            // Equal to kernel 5, the second kernel of its shape (inputs, ops, outputs,
            // first and last kind) that builds a function.
            kernel(&ab, &ops[2..4], &o3),
        ];
        let expected = [None, Some(0), None, None, None, None, Some(0), Some(5)];
        assert_eq!(share_plan(&m, &candidates), expected);
    }

    #[test]
    fn many_heads_of_one_shape_are_found_by_hash() {
        // Twelve kernels `in0 * constant` differing only in the constant (more heads of one
        // key than `HASHED_FROM`), then copies of the 2nd and the 11th: each shares with
        // the first kernel equal to it, as comparing with every earlier kernel would.
        let mut text = String::from("func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n");
        let consts = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 1, 10];
        for (i, c) in consts.iter().enumerate() {
            text += &format!(
                "%c{i} = stablehlo.constant dense<{c}.0> : tensor<4xf32>\n\
                 %m{i} = stablehlo.multiply %a, %c{i} : tensor<4xf32>\n"
            );
        }
        text += "return %m0 : tensor<4xf32>\n}";
        let m = parse_module(&text).unwrap();
        let body = m.region(m.funcs[0].body);
        let a = [body.args[0]];
        let ops = &body.ops;
        let outs: Vec<[ValueId; 1]> = (0..consts.len())
            .map(|i| [m.op(ops[2 * i + 1]).results[0]])
            .collect();
        let candidates: Vec<Candidate<'_>> = (0..consts.len())
            .map(|i| kernel(&a, &ops[2 * i..2 * i + 2], &outs[i]))
            .collect();
        let mut expected = vec![None; 12];
        expected.extend([Some(1), Some(10)]);
        assert_eq!(share_plan(&m, &candidates), expected);
    }
}
