//! A topological order of the kernel graph that the fusion planner keeps up to date while
//! it contracts producers into kernels, so that its cycle check only searches the part of
//! the graph that lies between a producer and the kernel it joins.
//!
//! Owns: [`TopoOrder`]. Nodes are the ops of one region that belong to no kernel yet and
//! the kernels grown so far ([`Node`]); an edge runs from a node to every node that uses
//! one of its results. Each node carries an order key (`u64`); keys are unique.
//! Invariant: for every edge `a -> b` of the current graph, `key(a) < key(b)`. Hence a
//! node whose key is larger than kernel `k`'s cannot reach `k`, and one whose key is
//! smaller than op `p`'s cannot be reached from `p`: the cycle check
//! ([`super::cycle`]) stops at both.
//!
//! Keeping the invariant when an op `p` (with an edge into kernel `k`) is merged into `k`
//! follows the dynamic topological sort of Pearce and Kelly, in whichever direction the
//! cycle check found the smaller set: either `k` keeps its place and the nodes reachable
//! from `p` whose keys are below `k`'s move, in their old relative order, to just after `k`
//! ([`TopoOrder::merge_into`]); or `k` takes `p`'s place, preceded by the nodes that reach
//! `k` whose keys are above `p`'s, in their old relative order
//! ([`TopoOrder::merge_before`]). Either way `p` leaves the order. The order itself is a
//! doubly linked list whose keys grow along it (an order-maintenance list): keys start
//! `GAP` apart, a moved node takes a key between its new neighbours, and when a gap is
//! used up the whole list is renumbered.

/// Spacing of fresh keys.
const GAP: u64 = 1 << 40;

/// Moved sets larger than this are put in order by walking the list instead of sorting.
const WALK_ABOVE: usize = 32;

/// "No neighbour".
const END: u32 = u32::MAX;

/// A node of the contracted graph: an unfused op (by region position) or a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node {
    Op(u32),
    Kernel(u32),
}

/// The order: a linked list over node slots (ops `0..n`, then kernels) with keys.
pub struct TopoOrder {
    n: u32,
    key: Vec<u64>,
    prev: Vec<u32>,
    next: Vec<u32>,
    head: u32,
    /// How many times the keys were spread apart again.
    renumbered: u32,
    /// Per slot: `stamp` marks the members of the set being put in order.
    mark: Vec<u32>,
    stamp: u32,
    /// Scratch: the slots being moved, in list order (kept for its allocation).
    slots: Vec<u32>,
}

impl TopoOrder {
    /// Region positions are a topological order of the uncontracted graph.
    pub fn new(n: usize) -> TopoOrder {
        // Room for a kernel per op too (there are at most as many kernels as ops), so that
        // seeding kernels never grows the tables.
        let slots = 2 * n;
        let n = n as u32;
        let mut key = Vec::with_capacity(slots);
        key.extend((1..=u64::from(n)).map(|i| i * GAP));
        let mut prev = Vec::with_capacity(slots);
        prev.extend((0..n).map(|i| i.checked_sub(1).unwrap_or(END)));
        let mut next = Vec::with_capacity(slots);
        next.extend((0..n).map(|i| if i + 1 < n { i + 1 } else { END }));
        let mut mark = Vec::with_capacity(slots);
        mark.resize(n as usize, 0);
        TopoOrder {
            n,
            key,
            prev,
            next,
            head: if n > 0 { 0 } else { END },
            renumbered: 0,
            mark,
            stamp: 0,
            slots: Vec::new(),
        }
    }

    fn slot(&self, node: Node) -> u32 {
        match node {
            Node::Op(i) => i,
            Node::Kernel(k) => self.n + k,
        }
    }

    pub fn key(&self, node: Node) -> u64 {
        self.key[self.slot(node) as usize]
    }

    /// Op `seed` becomes kernel `k` (the next kernel index), in its place in the order.
    pub fn seed_kernel(&mut self, seed: u32, k: u32) {
        let s = self.n + k;
        debug_assert_eq!(s as usize, self.key.len());
        self.key.push(self.key[seed as usize]);
        self.prev.push(END);
        self.next.push(END);
        self.mark.push(0);
        self.link_after(s, self.prev[seed as usize]);
        self.unlink(seed);
    }

    /// Op `p`, whose successors ordered before kernel `k` are exactly `moved` (from the
    /// cycle check, which found no path back to `k`), is merged into `k`: `p` leaves the
    /// order and `moved` goes, in its old order, right after `k`.
    pub fn merge_into(&mut self, p: u32, k: u32, moved: &[Node]) {
        if moved.is_empty() {
            self.unlink(p);
            return;
        }
        let mut slots = std::mem::take(&mut self.slots);
        self.in_list_order(moved, p, true, &mut slots);
        self.unlink(p);
        for &s in &slots {
            self.unlink(s);
        }
        self.splice_after(self.n + k, &slots);
        self.slots = slots;
    }

    /// Op `p`, whose place in the order is taken by kernel `k`: `moved` are exactly the
    /// predecessors of `k` ordered after `p` (from the cycle check, which found no path
    /// from `p` to them). They go, in their old order and followed by `k`, where `p` was.
    pub fn merge_before(&mut self, p: u32, k: u32, moved: &[Node]) {
        let mut slots = std::mem::take(&mut self.slots);
        self.in_list_order(moved, self.n + k, false, &mut slots);
        slots.push(self.n + k);
        let at = self.prev[p as usize];
        self.unlink(p);
        for &s in &slots {
            self.unlink(s);
        }
        self.splice_after(at, &slots);
        self.slots = slots;
    }

    /// Links the unlinked slots of `chain`, in order, right after `at` (`END`: at the head)
    /// and gives them keys spread between those of their new neighbours; when there is no
    /// room between those, renumbers the whole list.
    fn splice_after(&mut self, at: u32, chain: &[u32]) {
        let after = if at == END {
            self.head
        } else {
            self.next[at as usize]
        };
        let mut prev = at;
        for &s in chain {
            self.prev[s as usize] = prev;
            if prev == END {
                self.head = s;
            } else {
                self.next[prev as usize] = s;
            }
            prev = s;
        }
        if prev != END {
            self.next[prev as usize] = after;
        }
        if after != END {
            self.prev[after as usize] = prev;
        }
        let need = chain.len() as u64 + 1;
        let start = if at == END { 0 } else { self.key[at as usize] };
        let end = self.key_or_max(after);
        if end - start < need {
            self.renumber(GAP.max(need));
            return;
        }
        let step = (end - start) / need;
        let mut key = start;
        for &s in chain {
            key += step;
            self.key[s as usize] = key;
        }
    }

    /// Puts the slots of `nodes` into `out` in list order. They all lie between op `p` and
    /// a kernel; `from` is one of those two ends (`forward`: `p`, the walk follows `next`;
    /// else the kernel's slot, the walk follows `prev`). Few nodes are sorted by key, more
    /// are collected by walking the list from `from` (no longer than the cycle check that
    /// found them was wide).
    fn in_list_order(&mut self, nodes: &[Node], from: u32, forward: bool, out: &mut Vec<u32>) {
        out.clear();
        if nodes.len() <= WALK_ABOVE {
            out.extend(nodes.iter().map(|&node| self.slot(node)));
            out.sort_unstable_by_key(|&s| self.key[s as usize]);
            return;
        }
        self.stamp += 1;
        for &node in nodes {
            let s = self.slot(node) as usize;
            self.mark[s] = self.stamp;
        }
        let step = |t: &Self, s: u32| {
            if forward {
                t.next[s as usize]
            } else {
                t.prev[s as usize]
            }
        };
        let mut s = step(self, from);
        while out.len() < nodes.len() && s != END {
            if self.mark[s as usize] == self.stamp {
                out.push(s);
            }
            s = step(self, s);
        }
        if !forward {
            out.reverse();
        }
    }

    fn key_or_max(&self, slot: u32) -> u64 {
        if slot == END {
            u64::MAX
        } else {
            self.key[slot as usize]
        }
    }

    /// Removes `s` from the list.
    fn unlink(&mut self, s: u32) {
        let (p, n) = (self.prev[s as usize], self.next[s as usize]);
        if p == END {
            self.head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n != END {
            self.prev[n as usize] = p;
        }
    }

    /// Inserts `s` right after `at` (`END`: at the head).
    fn link_after(&mut self, s: u32, at: u32) {
        let n = if at == END {
            self.head
        } else {
            self.next[at as usize]
        };
        self.prev[s as usize] = at;
        self.next[s as usize] = n;
        if at == END {
            self.head = s;
        } else {
            self.next[at as usize] = s;
        }
        if n != END {
            self.prev[n as usize] = s;
        }
    }

    /// Spreads all keys `spacing` apart again, in list order.
    fn renumber(&mut self, spacing: u64) {
        self.renumbered += 1;
        let (mut s, mut key) = (self.head, spacing);
        while s != END {
            self.key[s as usize] = key;
            key += spacing;
            s = self.next[s as usize];
        }
    }

    /// The nodes in order (tests).
    #[cfg(test)]
    fn in_order(&self) -> Vec<Node> {
        let mut out = Vec::new();
        let mut s = self.head;
        while s != END {
            out.push(if s < self.n {
                Node::Op(s)
            } else {
                Node::Kernel(s - self.n)
            });
            s = self.next[s as usize];
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys_in_order(t: &TopoOrder, nodes: &[Node]) -> bool {
        nodes.windows(2).all(|w| t.key(w[0]) < t.key(w[1]))
    }

    #[test]
    fn moved_nodes_land_just_after_the_kernel_in_their_old_order() {
        let mut t = TopoOrder::new(6);
        t.seed_kernel(5, 0);
        // Op 1 joins kernel 0; ops 2 and 4 are its successors below the kernel.
        let moved = [Node::Op(4), Node::Op(2)];
        t.merge_into(1, 0, &moved);
        assert!(keys_in_order(
            &t,
            &[
                Node::Op(0),
                Node::Op(3),
                Node::Kernel(0),
                Node::Op(2),
                Node::Op(4)
            ]
        ));
    }

    #[test]
    fn merging_before_moves_the_kernel_and_its_predecessors_to_the_op() {
        // Op 1 joins kernel 0 (seeded at op 4); op 3, between them, feeds the kernel.
        let mut t = TopoOrder::new(6);
        t.seed_kernel(4, 0);
        t.merge_before(1, 0, &[Node::Op(3)]);
        let order = t.in_order();
        assert_eq!(
            order,
            [
                Node::Op(0),
                Node::Op(3),
                Node::Kernel(0),
                Node::Op(2),
                Node::Op(5)
            ]
        );
        assert!(keys_in_order(&t, &order));
    }

    #[test]
    fn merging_before_at_the_head_and_many_nodes() {
        // p is the first op; more predecessors than the sorting threshold, found by
        // walking back from the kernel.
        let n = WALK_ABOVE as u32 * 3;
        let mut t = TopoOrder::new(n as usize + 2);
        t.seed_kernel(n + 1, 0);
        let moved: Vec<Node> = (1..=n).filter(|i| i % 3 != 0).map(Node::Op).collect();
        t.merge_before(0, 0, &moved);
        let order = t.in_order();
        let mut expect: Vec<Node> = (1..=n).filter(|i| i % 3 != 0).map(Node::Op).collect();
        expect.push(Node::Kernel(0));
        expect.extend((1..=n).filter(|i| i % 3 == 0).map(Node::Op));
        assert_eq!(order, expect);
        assert!(keys_in_order(&t, &order));
    }

    #[test]
    fn exhausted_gaps_are_renumbered_without_reordering() {
        // Each round merges an even op and moves the next odd op just after the kernel,
        // ahead of the ones moved before: the gap after the kernel halves every time and
        // runs out after log2(GAP) rounds.
        let rounds = GAP.trailing_zeros() + 4;
        let (seed, last) = (2 * rounds + 1, 2 * rounds + 2);
        let mut t = TopoOrder::new(last as usize + 1);
        t.seed_kernel(seed, 0);
        for j in 0..rounds {
            t.merge_into(2 * j, 0, &[Node::Op(2 * j + 1)]);
        }
        let mut expect = vec![Node::Op(2 * rounds), Node::Kernel(0)];
        expect.extend((0..rounds).rev().map(|j| Node::Op(2 * j + 1)));
        expect.push(Node::Op(last));
        let order = t.in_order();
        assert_eq!(order, expect);
        assert!(keys_in_order(&t, &order));
        assert!(t.renumbered > 0);
    }

    #[test]
    fn large_moved_sets_keep_their_order() {
        // More nodes than the sorting threshold: they are collected by walking the list.
        let n = WALK_ABOVE as u32 * 3;
        let mut t = TopoOrder::new(n as usize + 2);
        t.seed_kernel(n + 1, 0);
        let moved: Vec<Node> = (1..=n).rev().filter(|i| i % 3 != 0).map(Node::Op).collect();
        t.merge_into(0, 0, &moved);
        let order = t.in_order();
        let mut expect: Vec<Node> = (1..=n).filter(|i| i % 3 == 0).map(Node::Op).collect();
        expect.push(Node::Kernel(0));
        expect.extend((1..=n).filter(|i| i % 3 != 0).map(Node::Op));
        assert_eq!(order, expect);
        assert!(keys_in_order(&t, &order));
    }
}
