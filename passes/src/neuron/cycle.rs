//! The fusion planner's multi-output cycle check: may op `p` join kernel `k` although
//! some of its users stay outside `k`?
//!
//! Owns: [`Reach`], one bounded bidirectional search over the contracted graph (unfused
//! ops and the kernels grown so far, [`Node`]), and its [`Outcome`]. Joining creates a
//! cycle iff a path `p -> x -> ... -> k` runs through some node `x` outside `k`. Two
//! searches look for one, taking turns node by node, in the order [`TopoOrder`] keeps:
//! forward from the users of `p` through nodes ordered before `k` (later nodes cannot
//! reach `k`), and backward from the producers of `k`'s members through nodes ordered after
//! `p` (earlier nodes cannot be reached from `p`). A cycle shows as the forward search
//! reaching `k`, the backward search reaching `p`, or the two meeting at a node. Without
//! one, the search that runs out first has found exactly the nodes that must move for the
//! order to stay topological once `p` joins `k` ([`TopoOrder::merge_into`] /
//! [`TopoOrder::merge_before`]), and its cost is at most about twice that set's size.
//! The answer is exact either way, so it does not depend on which search finishes first.
//! On graphs with many long-range edges the moving set can be most of the graph at every
//! check, so the searches give up past a limit of reached nodes, or at once for a producer
//! with more users than that ([`Outcome::GaveUp`]; the planner then keeps the producer
//! out, which is always safe).
//! Invariant: the graph is acyclic and `topo` orders it, so each search stays inside the
//! part of the order between `p` and `k`.

use super::graph::Csr;
use super::planner::OpState;
use super::topo::{Node, TopoOrder};

/// "No kernel".
const NONE: u32 = u32::MAX;

/// How a cycle check ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Joining would create a cycle.
    Cycle,
    /// No cycle; the forward search finished: its nodes move after `k`.
    After,
    /// No cycle; the backward search finished: its nodes (then `k`) move to `p`'s place.
    Before,
    /// The searches reached more than `limit` nodes without an answer.
    GaveUp,
}

/// One cycle check of op `p` against kernel `k`: the graph it walks (read-only) and the
/// scratch it marks. `OpState::seen` / `seen_kernel` stamps equal to `epoch` mark nodes the forward
/// search reached, `epoch + 1` those the backward search reached; `fwd` / `bwd` collect the
/// nodes each search reached inside its bound, and double as their work lists.
pub struct Reach<'p> {
    pub users: &'p Csr,
    pub producers: &'p Csr,
    /// Per op: its kernel and its search stamp.
    pub ops: &'p mut [OpState],
    /// Members of each frozen kernel.
    pub members: &'p Csr,
    /// Members of `k` (it is still growing, so they are not in `members` yet).
    pub current: &'p [u32],
    pub topo: &'p TopoOrder,
    pub seen_kernel: &'p mut [u32],
    pub fwd: &'p mut Vec<Node>,
    pub bwd: &'p mut Vec<Node>,
    pub p: u32,
    pub k: u32,
    pub epoch: u32,
    /// Most nodes both searches together may reach ([`Outcome::GaveUp`] beyond).
    pub limit: usize,
}

impl Reach<'_> {
    /// Runs both searches (clearing `fwd` and `bwd` first).
    pub fn run(&mut self) -> Outcome {
        self.fwd.clear();
        self.bwd.clear();
        // A producer read by more ops than the limit (a value shared across a whole model)
        // would fill the forward search with its users alone, at every kernel reading it.
        if self.users.of(self.p).len() > self.limit {
            return Outcome::GaveUp;
        }
        let bounds = (
            self.topo.key(Node::Kernel(self.k)),
            self.topo.key(Node::Op(self.p)),
        );
        let (users, producers) = (self.users, self.producers);
        for &u in users.of(self.p) {
            if self.ops[u as usize].kernel != self.k {
                // Nothing is marked backward yet, so this cannot report a cycle.
                self.visit(u, true, bounds);
            }
        }
        if self.fwd.is_empty() {
            return Outcome::After;
        }
        for &o in self.current {
            for &x in producers.of(o) {
                if x != self.p && self.visit(x, false, bounds) {
                    return Outcome::Cycle;
                }
            }
        }
        let (mut f, mut b) = (0, 0);
        loop {
            if self.fwd.len() + self.bwd.len() > self.limit {
                return Outcome::GaveUp;
            }
            let Some(&node) = self.fwd.get(f) else {
                return Outcome::After;
            };
            f += 1;
            if self.expand(node, true, bounds) {
                return Outcome::Cycle;
            }
            let Some(&node) = self.bwd.get(b) else {
                return Outcome::Before;
            };
            b += 1;
            if self.expand(node, false, bounds) {
                return Outcome::Cycle;
            }
        }
    }

    /// Visits the neighbours of `node` (users forward, producers backward; a kernel's are
    /// those of all its members). True when that reveals a cycle.
    fn expand(&mut self, node: Node, forward: bool, bounds: (u64, u64)) -> bool {
        let adjacency = if forward { self.users } else { self.producers };
        match node {
            Node::Op(o) => adjacency
                .of(o)
                .iter()
                .any(|&u| self.visit(u, forward, bounds)),
            Node::Kernel(uk) => {
                let members = self.members;
                members.of(uk).iter().any(|&o| {
                    adjacency
                        .of(o)
                        .iter()
                        .any(|&u| self.visit(u, forward, bounds))
                })
            }
        }
    }

    /// Marks the node of op `u` (the op, or the kernel owning it) for one search and queues
    /// it when it is new and inside that search's bound. True when this reveals a cycle:
    /// forward reaching `k`, backward reaching `p`, or either reaching a node the other
    /// search marked. `bounds` are the order keys of `k` and `p`.
    #[inline(always)]
    fn visit(&mut self, u: u32, forward: bool, bounds: (u64, u64)) -> bool {
        let (mine, theirs) = if forward {
            (self.epoch, self.epoch + 1)
        } else {
            (self.epoch + 1, self.epoch)
        };
        let op = &mut self.ops[u as usize];
        let node = match op.kernel {
            NONE => {
                if !forward && u == self.p {
                    return true;
                }
                let stamp = &mut op.seen;
                if *stamp == mine {
                    return false;
                }
                if *stamp == theirs {
                    return true;
                }
                *stamp = mine;
                Node::Op(u)
            }
            // Backward, a member of `k` is an edge inside `k`.
            uk if uk == self.k => return forward,
            uk => {
                let stamp = &mut self.seen_kernel[uk as usize];
                if *stamp == mine {
                    return false;
                }
                if *stamp == theirs {
                    return true;
                }
                *stamp = mine;
                Node::Kernel(uk)
            }
        };
        let key = self.topo.key(node);
        if forward {
            if key < bounds.0 {
                self.fwd.push(node);
            }
        } else if key > bounds.1 {
            self.bwd.push(node);
        }
        false
    }
}

/// Whether some user of `p` outside kernel `k` reaches `k`, by a plain search without the
/// topological bound (`pk_epoch`: `p`, `k` and a fresh search stamp). The debug
/// cross-check of [`Reach`].
#[cfg(debug_assertions)]
pub fn reaches_unbounded(
    users: &Csr,
    members: &Csr,
    ops: &mut [OpState],
    pk_epoch: (u32, u32, u32),
) -> bool {
    let (p, k, epoch) = pk_epoch;
    let outside = |&u: &u32| ops[u as usize].kernel != k;
    let mut stack: Vec<u32> = users.of(p).iter().copied().filter(outside).collect();
    while let Some(u) = stack.pop() {
        match ops[u as usize].kernel {
            uk if uk == k => return true,
            _ if ops[u as usize].seen == epoch => {}
            NONE => {
                ops[u as usize].seen = epoch;
                stack.extend(users.of(u));
            }
            uk => {
                ops[u as usize].seen = epoch;
                for &o in members.of(uk) {
                    stack.extend(users.of(o));
                }
            }
        }
    }
    false
}
