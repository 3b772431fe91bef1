//! What layout assignment reads of types and ops, computed once per type and once per op:
//! the inputs of [`super::layout_want::CostModel`].
//!
//! Owns: [`TypeTable`] (per interned type: bytes, rank, shape class, candidate layouts),
//! [`Spec`] (per op: how the result layout turns into operand requirements, borrowing the
//! op's attributes), [`OwnCost`] (the cost of a result layout by itself) and [`DimSet`].
//! Invariants: a type's candidates are never empty; [`Spec::push_targets`] and
//! [`push_kept`] write one target per result layout `None, Some(0), .., Some(rank - 1)`.

use super::graph::value_bytes;
use super::layout::{for_each_reshape_partner, Part};
use neuronc_ir::{Attr, Module, NamedAttrs, Op, OpKind, TypeId, ValueId};
use std::borrow::Cow;

/// Cost, in byte-equivalents, of a cross-partition *sum* relative to transposing the same
/// bytes. Both stream the data once through TensorE (`neuron-facts.md` §1.4: a sum across
/// partitions is a matmul with a ones vector; a transpose is a matmul with the identity),
/// but the sum leaves one PSUM row to evict where the transpose leaves the whole tensor.
const CROSS_PARTITION_SUM_WEIGHT: f64 = 0.5;
/// Cost of a cross-partition max/min/other reduction: GpSimd partition reduce, which has no
/// published cost (§1.5) and runs on 8 cores of 16 partitions each; assumed 1.5x a transpose.
const CROSS_PARTITION_OTHER_WEIGHT: f64 = 1.5;

/// "No op" / "no value" / "no shape class".
pub const NONE: u32 = u32::MAX;

/// The operand layout one result layout asks for: `None` for no preference, else
/// `Some(layout)` (an exact layout, or the kept dimension of a reduce input).
pub type Target = Option<Part>;

/// A set of dimensions (`u8`, as layouts are) that remembers its first element.
#[derive(Clone, Copy, Debug, Default)]
pub struct DimSet {
    bits: [u64; 4],
    first: Option<u8>,
}

impl DimSet {
    fn from_i64(dims: &[i64]) -> DimSet {
        let mut s = DimSet::default();
        for &d in dims {
            s.insert(d as u8);
        }
        s
    }
    pub fn insert(&mut self, d: u8) {
        self.first.get_or_insert(d);
        self.bits[usize::from(d / 64)] |= 1 << (d % 64);
    }
    pub fn contains(&self, d: u8) -> bool {
        self.bits[usize::from(d / 64)] & (1 << (d % 64)) != 0
    }
    pub fn is_empty(&self) -> bool {
        self.first.is_none()
    }
    /// The first dimension inserted.
    pub fn first(&self) -> Option<u8> {
        self.first
    }
}

/// What the cost model and the solver read of a value's type.
#[derive(Clone, Copy, Debug)]
pub struct TypeRow {
    /// Bytes of a tensor of this type (0 for other types, whose edges are free).
    pub bytes: f64,
    /// Rank of a tensor of this type (0 for other types).
    pub rank: usize,
    /// Equal for tensor types of rank above 0 with equal shapes; `NONE` for other types.
    pub shape: u32,
    /// The type's candidate layouts are `cands[cand_start..cand_end]`.
    cand_start: u32,
    cand_end: u32,
}

/// The row of types missing from a [`TypeTable`] (`cands[0]` is `None`), and of the
/// missing first result of an op without results.
pub const MISSING: TypeRow = TypeRow {
    bytes: 0.0,
    rank: 0,
    shape: NONE,
    cand_start: 0,
    cand_end: 1,
};

/// [`TypeRow`]s of every type interned in a module, indexed by type id (types interned
/// after construction, which planning never does, get [`MISSING`]).
pub struct TypeTable {
    rows: Vec<TypeRow>,
    cands: Vec<Part>,
}

impl TypeTable {
    pub fn new(m: &Module) -> Self {
        let mut rows = Vec::with_capacity(m.types.len());
        let mut cands = vec![None];
        let mut classes: rustc_hash::FxHashMap<&[i64], u32> = Default::default();
        for t in 0..m.types.len() as u32 {
            let tensor = m.types.tensor_of(TypeId(t));
            let cand_start = cands.len() as u32;
            cands.extend(candidates(tensor));
            let next = classes.len() as u32;
            rows.push(TypeRow {
                bytes: tensor.map_or(0.0, |t| t.byte_size() as f64),
                rank: tensor.map_or(0, |t| t.rank()),
                shape: match tensor {
                    Some(t) if t.rank() > 0 => *classes.entry(&t.shape).or_insert(next),
                    _ => NONE,
                },
                cand_start,
                cand_end: cands.len() as u32,
            });
        }
        TypeTable { rows, cands }
    }

    /// The row of type `t`.
    pub fn row_of(&self, t: TypeId) -> &TypeRow {
        self.rows.get(t.0 as usize).unwrap_or(&MISSING)
    }

    /// The row of `v`'s type.
    pub fn row(&self, m: &Module, v: ValueId) -> &TypeRow {
        self.row_of(m.value_type(v))
    }

    /// The candidate layouts of `v`, most preferred first (never empty).
    pub fn cands(&self, m: &Module, v: ValueId) -> &[Part] {
        let row = self.row(m, v);
        &self.cands[row.cand_start as usize..row.cand_end as usize]
    }
}

/// Candidate partition dims of a value of type `t`, most preferred first: larger dims
/// first (`[None]` for non-tensors and tensors without a dimension above 1).
fn candidates(t: Option<&neuronc_ir::TensorType>) -> Vec<Part> {
    let Some(t) = t else {
        return vec![None];
    };
    let mut dims: Vec<u8> = (0..t.rank() as u8)
        .filter(|&d| t.shape[d as usize] > 1)
        .collect();
    dims.sort_by_key(|&d| (std::cmp::Reverse(t.shape[d as usize]), d));
    if dims.is_empty() {
        return vec![None];
    }
    dims.into_iter().map(Some).collect()
}

/// Own cost of an op's result layout.
#[derive(Clone, Copy, Debug)]
pub enum OwnCost {
    Zero,
    /// A dot_general whose result dims below `batch` are batch dims.
    Dot {
        batch: usize,
        bytes: f64,
    },
    /// A convolution whose output feature dim is `feature`.
    Conv {
        feature: i64,
        bytes: f64,
    },
}

impl OwnCost {
    #[inline]
    pub fn of(m: &Module, o: &Op) -> OwnCost {
        match o.kind {
            OpKind::DotGeneral | OpKind::Convolution => OwnCost::of_matmul(m, o),
            _ => OwnCost::Zero,
        }
    }

    fn of_matmul(m: &Module, o: &Op) -> OwnCost {
        let Some(&res) = o.results.first() else {
            return OwnCost::Zero;
        };
        let bytes = value_bytes(m, res) as f64;
        match (o.kind, o.attrs.get("dot_dimension_numbers")) {
            (OpKind::DotGeneral, Some(Attr::DotDims(d))) => OwnCost::Dot {
                batch: d.lhs_batching.len(),
                bytes,
            },
            (OpKind::Convolution, _) => match o.attrs.get("dimension_numbers") {
                Some(Attr::ConvDims(cd)) => OwnCost::Conv {
                    feature: cd.output_feature,
                    bytes,
                },
                _ => OwnCost::Zero,
            },
            _ => OwnCost::Zero,
        }
    }

    /// The cost when the result takes layout `r`.
    #[inline(always)]
    pub fn at(self, r: Part) -> f64 {
        match self {
            OwnCost::Zero => 0.0,
            // Result dims: batch dims first; the stationary operand's free axis must
            // become the output partition axis, so a batch dim there needs a relayout.
            OwnCost::Dot { batch, bytes } => match r {
                Some(p) if (p as usize) < batch => bytes,
                _ => 0.0,
            },
            OwnCost::Conv { feature, bytes } => match r {
                Some(p) if p as i64 != feature => bytes,
                _ => 0.0,
            },
        }
    }
}

/// Per-op rule turning the result layout into operand requirements, borrowing the op's
/// attributes and types.
pub enum Spec<'a> {
    Any,
    /// Operands of the result's rank want the result's layout (elementwise, slices, ...).
    SameRank,
    /// `permutation` of a transpose.
    Transpose(Cow<'a, [i64]>),
    Broadcast {
        dims: Cow<'a, [i64]>,
        src: &'a [i64],
        dst: &'a [i64],
    },
    /// Reshape from `src` to `dst` (operand and result shapes).
    Reshape {
        src: &'a [i64],
        dst: &'a [i64],
    },
    /// The first `inputs` operands are reduced along `dims`; a cross-partition reduction
    /// costs `weight` per byte.
    Reduce {
        inputs: usize,
        dims: Cow<'a, [i64]>,
        weight: f64,
    },
    /// Contraction dims of the first operand and of the others.
    Contract(DimSet, DimSet),
}

impl<'a> Spec<'a> {
    /// The rule of `o` (`elementwise`: whether its kind is).
    #[inline]
    pub fn of(m: &'a Module, o: &'a Op, elementwise: bool) -> Spec<'a> {
        if elementwise {
            return Spec::SameRank;
        }
        match o.kind {
            OpKind::Transpose => Spec::Transpose(i64s(&o.attrs, "permutation")),
            OpKind::BroadcastInDim => match io_shapes(m, o) {
                Some((src, dst)) => Spec::Broadcast {
                    dims: i64s(&o.attrs, "broadcast_dimensions"),
                    src,
                    dst,
                },
                None => Spec::Any,
            },
            OpKind::Reshape => match io_shapes(m, o) {
                Some((src, dst)) => Spec::Reshape { src, dst },
                None => Spec::Any,
            },
            OpKind::Reduce => reduce_spec(m, o),
            OpKind::DotGeneral => match o.attrs.get("dot_dimension_numbers") {
                Some(Attr::DotDims(d)) => Spec::Contract(
                    DimSet::from_i64(&d.lhs_contracting),
                    DimSet::from_i64(&d.rhs_contracting),
                ),
                _ => Spec::Any,
            },
            OpKind::Convolution => match o.attrs.get("dimension_numbers") {
                Some(Attr::ConvDims(cd)) => Spec::Contract(
                    DimSet::from_i64(&[cd.input_feature]),
                    DimSet::from_i64(&[cd.kernel_input_feature]),
                ),
                _ => Spec::Any,
            },
            OpKind::Slice
            | OpKind::Pad
            | OpKind::Reverse
            | OpKind::Concatenate
            | OpKind::DynamicUpdateSlice
            | OpKind::DynamicSlice => Spec::SameRank,
            _ => Spec::Any,
        }
    }

    /// Appends to `out` the targets of a transpose, broadcast or reshape (the same for
    /// each operand) for result layouts `None` and `Some(0..res_rank)`.
    pub fn push_targets(&self, out: &mut Vec<Target>, res_rank: usize) {
        match self {
            Spec::Transpose(perm) => {
                out.push(Some(None));
                out.extend(
                    (0..res_rank).map(|d| Some(perm.get(d as u8 as usize).map(|&p| p as u8))),
                );
            }
            Spec::Broadcast { dims, src, dst } => {
                out.push(None);
                out.extend((0..res_rank).map(|p| {
                    let p = p as u8;
                    match dims.iter().position(|&d| d == i64::from(p)) {
                        Some(j) if src.get(j) == dst.get(usize::from(p)) => Some(Some(j as u8)),
                        // The partition axis is created by the broadcast: replicate.
                        _ => None,
                    }
                }));
            }
            Spec::Reshape { src, dst } => {
                let start = out.len() + 1;
                out.extend((0..=res_rank).map(|_| Some(None)));
                reshape_partners_into(dst, src, &mut out[start..]);
            }
            _ => {}
        }
    }
}

/// Appends to `out` the `keep` targets of a reduce input of rank `rank` reduced along
/// `dims` (its other dims, in order, map onto the result dims).
pub fn push_kept(out: &mut Vec<Target>, dims: &[i64], rank: usize, res_rank: usize) {
    out.push(Some(None));
    let reduced = |d: &u8| dims.iter().any(|&x| x as u8 == *d);
    let mut kept = (0..rank as u8).filter(|d| !reduced(d));
    out.extend((0..res_rank).map(|_| Some(kept.next())));
}

/// For every dim `d` of `from` with a [`super::layout::reshape_partner`] `q` in `to`,
/// sets `out[d]` to `Some(Some(q))` (`out` holds `Some(None)` for every dim of `from`);
/// leaves `out` unchanged when the shapes have no reshape grouping.
fn reshape_partners_into(from: &[i64], to: &[i64], out: &mut [Target]) {
    let mut found = false;
    let complete = for_each_reshape_partner(from, to, |d, q| {
        if let Some(slot) = out.get_mut(d) {
            *slot = Some(Some(q as u8));
            found = true;
        }
    });
    if !complete && found {
        out.iter_mut().for_each(|t| *t = Some(None));
    }
}

/// `attrs.i64_array(name).unwrap_or_default()`, borrowed when the attribute is an
/// `array<i64: ...>`.
fn i64s<'a>(attrs: &'a NamedAttrs, name: &str) -> Cow<'a, [i64]> {
    match attrs.get(name) {
        Some(Attr::IntArray(_, v)) => Cow::Borrowed(v),
        Some(a) => Cow::Owned(a.as_i64_array().unwrap_or_default()),
        None => Cow::Borrowed(&[]),
    }
}

/// Shapes of the first operand and the first result, if both are tensors.
fn io_shapes<'a>(m: &'a Module, o: &Op) -> Option<(&'a [i64], &'a [i64])> {
    let src = m.tensor_type(*o.operands.first()?)?;
    let dst = m.tensor_type(*o.results.first()?)?;
    Some((&src.shape, &dst.shape))
}

fn reduce_spec<'a>(m: &Module, o: &'a Op) -> Spec<'a> {
    let sum_body = o
        .regions
        .first()
        .is_some_and(|&r| m.region(r).ops.iter().any(|&x| m.op(x).kind == OpKind::Add));
    Spec::Reduce {
        inputs: o.operands.len() / 2,
        dims: i64s(&o.attrs, "dimensions"),
        weight: if sum_body {
            CROSS_PARTITION_SUM_WEIGHT
        } else {
            CROSS_PARTITION_OTHER_WEIGHT
        },
    }
}
