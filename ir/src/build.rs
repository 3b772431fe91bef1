//! [`OpSeq`]: builds a straight-line sequence of new ops that will replace one op (an
//! expansion, as in batch-norm decomposition), so that passes and the interpreter's
//! rewrites share one way of creating the common shapes of such sequences.
//!
//! Invariants: every op is created detached (no parent region; the caller places the
//! sequence, e.g. where the replaced op was), in the order [`OpSeq::finish`] returns it,
//! with the location and span given to [`OpSeq::new`]; ops nested in a created op's
//! regions are placed there and are not part of the sequence.

use crate::{Attr, ElemType, LocId, Module, NamedAttrs, OpId, OpKind, Span, TypeId, ValueId};

/// Creates ops in order, detached, all with one location.
pub struct OpSeq<'a> {
    /// The module the ops are created in (types can be interned through it meanwhile).
    pub m: &'a mut Module,
    ops: Vec<OpId>,
    loc: Option<LocId>,
    span: Span,
}

impl<'a> OpSeq<'a> {
    /// An empty sequence whose ops get location `loc` and source span `span`.
    pub fn new(m: &'a mut Module, loc: Option<LocId>, span: Span) -> Self {
        OpSeq {
            m,
            ops: Vec::new(),
            loc,
            span,
        }
    }

    /// Appends detached op `op` to the sequence; returns its first result.
    pub fn push(&mut self, op: OpId) -> ValueId {
        let o = self.m.op_mut(op);
        o.loc = self.loc;
        o.span = self.span;
        self.ops.push(op);
        o.results[0]
    }

    /// A new attribute-free op of one result of type `ty`.
    pub fn op(&mut self, kind: OpKind, operands: Vec<ValueId>, ty: TypeId) -> ValueId {
        let op = self.m.create_op(kind, operands, &[ty], NamedAttrs::new());
        self.push(op)
    }

    /// A splat constant of tensor type `ty` whose elements are `bytes` (one element,
    /// little-endian). Panics if `ty` is not a tensor type: callers build it as one.
    pub fn splat(&mut self, ty: TypeId, bytes: Vec<u8>) -> ValueId {
        let op = self
            .m
            .create_splat_constant(ty, bytes)
            .expect("splat constants are built with tensor types");
        self.push(op)
    }

    /// `broadcast_in_dim` of `v` to type `ty`, operand dimension `i` becoming `dims[i]`.
    pub fn broadcast_in_dim(&mut self, v: ValueId, ty: TypeId, dims: Vec<i64>) -> ValueId {
        let mut attrs = NamedAttrs::with_capacity(1);
        attrs.set(
            "broadcast_dimensions",
            Attr::IntArray(ElemType::Int(64), dims),
        );
        let op = self
            .m
            .create_op(OpKind::BroadcastInDim, vec![v], &[ty], attrs);
        self.push(op)
    }

    /// A `reduce` summing `x` over dimensions `dims` from the initial value `zero` (of
    /// scalar type `scalar`), with result type `ty`.
    pub fn reduce_sum(
        &mut self,
        x: ValueId,
        zero: ValueId,
        dims: Vec<i64>,
        ty: TypeId,
        scalar: TypeId,
    ) -> ValueId {
        let mut attrs = NamedAttrs::with_capacity(1);
        attrs.set("dimensions", Attr::IntArray(ElemType::Int(64), dims));
        let red = self
            .m
            .create_op(OpKind::Reduce, vec![x, zero], &[ty], attrs);
        binary_body(self.m, red, scalar, OpKind::Add);
        self.push(red)
    }

    /// The ops created, in order.
    pub fn finish(self) -> Vec<OpId> {
        self.ops
    }
}

/// Gives `op` (a `reduce` or `reduce_window` without a region yet) a body region applying
/// the binary op `kind` to its two arguments of type `scalar` and returning the result.
pub fn binary_body(m: &mut Module, op: OpId, scalar: TypeId, kind: OpKind) {
    let body = m.add_op_region(op);
    let a = m.add_region_arg(body, scalar);
    let b = m.add_region_arg(body, scalar);
    let bin = m.create_op(kind, vec![a, b], &[scalar], NamedAttrs::new());
    m.append_op(body, bin);
    let v = m.op(bin).results[0];
    let ret = m.create_op(OpKind::Return, vec![v], &[], NamedAttrs::new());
    m.append_op(body, ret);
}
