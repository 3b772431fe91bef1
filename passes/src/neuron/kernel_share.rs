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
//! The comparison only reads the module, before outlining mutates it (moving an op into
//! a kernel body rewrites its operands), so it runs on two threads: structural hashes
//! group candidates, full comparisons confirm them. The first earlier kernel equal to a
//! kernel is never itself shared (a kernel equal to it would be equal to this one and
//! come first), so each kernel's answer is independent of the others' and of the threads.
//!
//! Invariants: a kernel reading a value that is neither an input nor made by a member is
//! never shared and never shared with (it is built as before); the answer for kernel `i`
//! is an earlier kernel `j < i` whose own answer is "build".

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

/// Candidates with fewer member ops than this in all are compared on one thread: below
/// it a helper thread costs more than it saves (see `PARALLEL_MIN_OPS` in
/// [`super`]). The BERT-base training step has about 8,600, BERT-large about 16,900.
const PARALLEL_MIN_MEMBERS: usize = 12288;

/// For each candidate, the earlier candidate (by index) whose function it calls, or `None`
/// when it gets a function of its own.
pub(super) fn share_plan(m: &Module, candidates: &[Candidate<'_>]) -> Vec<Option<usize>> {
    let n = candidates.len();
    // Work is about proportional to member ops: the candidates before `split` hold about
    // half of them (all candidates when there are too few to be worth a second thread).
    let total: usize = candidates.iter().map(|c| c.members.len()).sum();
    let split = if total >= PARALLEL_MIN_MEMBERS {
        let mut acc = 0;
        candidates
            .iter()
            .position(|c| {
                acc += c.members.len();
                2 * acc >= total
            })
            .map_or(n, |i| i + 1)
    } else {
        n
    };
    share_plan_split(m, candidates, split)
}

/// [`share_plan`] with candidates `split..` examined on a helper thread.
fn share_plan_split(m: &Module, candidates: &[Candidate<'_>], split: usize) -> Vec<Option<usize>> {
    let n = candidates.len();
    let hashes = each(m, n, split, |slots, i| hash(m, slots, &candidates[i]));
    // Hash -> the candidates with that hash, ascending.
    let mut classes: FxHashMap<u64, Vec<usize>> = FxHashMap::default();
    for (i, h) in hashes.iter().enumerate() {
        if let Some(h) = h {
            classes.entry(*h).or_default().push(i);
        }
    }
    each(m, n, split, |slots, i| {
        let class = classes.get(&hashes[i]?)?;
        let c = &candidates[i];
        class
            .iter()
            .take_while(|&&j| j < i)
            .copied()
            .find(|&j| same_kernel(m, slots, &candidates[j], c))
    })
}

/// `f` of every index `0..n`, in order: indices `0..split` on this thread, the rest (if
/// any) on a helper thread, each with its own [`Slots`].
fn each<T: Send>(
    m: &Module,
    n: usize,
    split: usize,
    f: impl Fn(&mut Slots, usize) -> Option<T> + Sync,
) -> Vec<Option<T>> {
    let run = |range: std::ops::Range<usize>| -> Vec<Option<T>> {
        let mut slots = Slots::new(m.values.len());
        range.map(|i| f(&mut slots, i)).collect()
    };
    if split >= n {
        return run(0..n);
    }
    let (mut left, right) = neuronc_ir::par::join(|| run(0..split), || run(split..n));
    left.extend(right);
    left
}

/// The structural hash of `c` (the same for every kernel with an equal body), or `None`
/// when `c` reads a value that is neither an input nor a member's result.
fn hash(m: &Module, slots: &mut Slots, c: &Candidate<'_>) -> Option<u64> {
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
    use super::{share_plan, share_plan_split, Candidate};
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
        ];
        let expected = [None, Some(0), None, None, None, None, Some(0)];
        assert_eq!(share_plan(&m, &candidates), expected);
        // Split between two threads at every point, the answer is the same.
        for split in 0..candidates.len() {
            assert_eq!(share_plan_split(&m, &candidates, split), expected);
        }
    }
}
