//! Tiling of one kernel's iteration space to the hardware limits, and the op facts the
//! lowering needs (matmul dimensions, root storage of relabelled values).
//!
//! Owns: [`Tiling`] (tiles of at most 128 partitions × `free` elements, grouped into at
//! most `max_records` instruction records), [`MatmulDims`], [`root`] and
//! [`rows_splittable`] (when a reduction may take its rows in pieces) and
//! [`arg_read_bytes`] (the argument bytes a program must read).
//! Invariants: `Tiling::counts` sums to `tiles()`; every count is ≥ 1; tiles never exceed
//! 128 partitions.

use crate::engine::classify::OpWork;
use neuronc_ir::{Attr, Module, OpId, OpKind, ValueDef, ValueId};
use neuronc_passes::neuron::layout::LayoutPlan;
use rustc_hash::{FxHashMap, FxHashSet};

/// Bytes per partition of one streamed tile (8 KiB: at least the 4 KiB per partition at
/// which DMA nearly saturates, `neuron-facts.md` §1.3).
pub const TILE_BYTES_PER_PARTITION: u64 = 8 * 1024;

/// A kernel's tiles and how they are grouped into instruction records.
#[derive(Clone, Debug, PartialEq)]
pub struct Tiling {
    /// Partitions per tile (≤ 128).
    pub parts: u32,
    /// Free elements per tile.
    pub free: u32,
    /// Tiles along the partition dimension and along the free axis.
    pub p_tiles: u64,
    pub f_tiles: u64,
    /// Tiles per record.
    pub counts: Vec<u32>,
}

impl Tiling {
    /// Tiles `elems` elements whose partition dimension has extent `p`; `row` is the
    /// number of free elements that must stay in one tile (a reduced row), `elem_bytes`
    /// the widest element streamed.
    pub fn new(elems: u64, p: u64, row: u64, elem_bytes: u64, max_records: u32) -> Tiling {
        let p = p.max(1);
        let per_part = (elems / p).max(1);
        let budget = (TILE_BYTES_PER_PARTITION / elem_bytes.max(1)).max(1);
        let row = row.clamp(1, per_part);
        let free = if row > 1 {
            row * (budget / row).max(1)
        } else {
            budget
        }
        .min(per_part);
        let p_tiles = p.div_ceil(128);
        let f_tiles = per_part.div_ceil(free);
        let tiles = p_tiles * f_tiles;
        Tiling {
            parts: p.min(128) as u32,
            free: free as u32,
            p_tiles,
            f_tiles,
            counts: split(tiles, max_records),
        }
    }

    pub fn tiles(&self) -> u64 {
        self.p_tiles * self.f_tiles
    }
    pub fn records(&self) -> usize {
        self.counts.len()
    }

    /// Where each record ends, in elements of the `elems`-element space this tiling
    /// covers: exact when the tile grid is one-dimensional (tiles of whole rows of 128
    /// partitions, or free-axis slices of at most 128 partitions), where the first `T`
    /// tiles cover `min(T * parts * free, elems)` elements and only the last tile may be
    /// partial. `None` for a two-dimensional grid or when `elems` does not fit the tiles.
    pub fn record_ends(&self, elems: u64) -> Option<Vec<u64>> {
        let unit = self.parts as u64 * self.free as u64;
        let tiles = self.tiles();
        let one_d = self.p_tiles == 1 || self.f_tiles == 1;
        if !one_d || unit == 0 || tiles * unit < elems || (tiles - 1) * unit >= elems {
            return None;
        }
        let mut t = 0u64;
        Some(
            self.counts
                .iter()
                .map(|&c| {
                    t += c as u64;
                    (t * unit).min(elems)
                })
                .collect(),
        )
    }
}

/// Widths of the ≤512-column moving tiles covering `n` columns.
pub fn n_tiles(n: u64) -> Vec<u32> {
    let n = n.max(1);
    (0..n.div_ceil(512))
        .map(|t| (n - t * 512).min(512) as u32)
        .collect()
}

/// Splits `n` items into at most `max` groups of near-equal size (sizes differ by ≤ 1).
pub fn split(n: u64, max: u32) -> Vec<u32> {
    let n = n.max(1);
    let groups = n.min(max.max(1) as u64);
    (0..groups)
        .map(|c| (((c + 1) * n / groups) - (c * n / groups)) as u32)
        .collect()
}

/// `B` independent `[M, K] × [K, N]` products (batch, lhs free, rhs free, contraction).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatmulDims {
    pub b: u64,
    pub m: u64,
    pub n: u64,
    pub k: u64,
}

/// Whether the kernel's free-axis reductions may take their rows in pieces, accumulating
/// into their results: no op of the kernel needs a whole row reduced before it can read
/// the row. An op may read a reduction's result (directly or through other such ops) only
/// when every operand it reads is no larger than the largest reduction result: then it
/// works on the reduced rows (`log(sum)`, the tail of a log-sum-exp), and the last piece
/// computes it from the complete result. An op that also reads a row (`x - max(x)`), or a
/// reduction of a reduction's result, needs the whole row first.
pub(crate) fn rows_splittable(m: &Module, ops: &[OpId], works: &[OpWork]) -> bool {
    let mut after: FxHashSet<ValueId> = ops
        .iter()
        .zip(works)
        .filter(|(_, w)| matches!(w, OpWork::ReduceFree { .. }))
        .flat_map(|(&o, _)| m.op(o).results.iter().copied())
        .collect();
    let elements = |v: ValueId| m.tensor_type(v).map_or(1, |t| t.num_elements());
    let Some(small) = after.iter().map(|&v| elements(v)).max() else {
        return false;
    };
    for (&o, w) in ops.iter().zip(works) {
        let op = m.op(o);
        if !op.operands.iter().any(|v| after.contains(v)) {
            continue;
        }
        let reduces = matches!(w, OpWork::ReduceFree { .. });
        if reduces || op.operands.iter().any(|&v| elements(v) > small) {
            return false;
        }
        after.extend(op.results.iter().copied());
    }
    true
}

/// Whether an op of `kind` reads only the part of its operand 0 (a table) that it
/// returns: gathers and dynamic slices.
pub(crate) fn reads_rows_of_operand0(kind: OpKind) -> bool {
    matches!(
        kind,
        OpKind::Gather | OpKind::TorchIndexSelect | OpKind::DynamicGather | OpKind::DynamicSlice
    )
}

/// Bytes of each argument in `args` that a program must read from HBM at least once:
/// all of them, unless every use is the table operand of a gather or dynamic slice,
/// which reads only the rows it returns (an embedding lookup of 64 tokens reads 64 rows
/// of a 128,256-row table): then the bytes those ops return, capped at the argument's
/// size. Arguments nothing reads are absent.
pub(crate) fn arg_read_bytes(
    m: &Module,
    body: neuronc_ir::RegionId,
    args: &FxHashSet<ValueId>,
) -> FxHashMap<ValueId, u64> {
    // Per argument: bytes returned by the gathers reading it, and whether any other use
    // reads it whole.
    let mut uses: FxHashMap<ValueId, (u64, bool)> = FxHashMap::default();
    m.walk_region(body, &mut |op| {
        let o = m.op(op);
        let gather = reads_rows_of_operand0(o.kind);
        for (i, v) in o.operands.iter().enumerate() {
            if !args.contains(v) {
                continue;
            }
            let e = uses.entry(*v).or_default();
            match o.results.first() {
                Some(&r) if gather && i == 0 => e.0 += elems_bytes(m, r).1,
                _ => e.1 = true,
            }
        }
    });
    uses.into_iter()
        .map(|(v, (gathered, whole))| {
            let all = elems_bytes(m, v).1;
            (v, if whole { all } else { gathered.min(all) })
        })
        .collect()
}

fn prod(shape: &[i64], dims: &[i64]) -> u64 {
    dims.iter()
        .filter_map(|&d| shape.get(d as usize))
        .map(|&x| x.max(0) as u64)
        .product()
}

/// Matmul dimensions of a dot_general, dot or convolution (convolution as implicit GEMM:
/// K = input features × kernel window, M = output features, N = batch × output pixels).
pub fn matmul_dims(m: &Module, op: neuronc_ir::OpId) -> Option<MatmulDims> {
    let o = m.op(op);
    let lhs = m.tensor_type(*o.operands.first()?)?;
    let rhs = m.tensor_type(*o.operands.get(1)?)?;
    let out = m.tensor_type(*o.results.first()?)?;
    let total = |s: &[i64]| s.iter().map(|&x| x.max(0) as u64).product::<u64>();
    match (o.kind, o.attrs.get("dot_dimension_numbers")) {
        (OpKind::DotGeneral, Some(Attr::DotDims(d))) => {
            let b = prod(&lhs.shape, &d.lhs_batching);
            let k = prod(&lhs.shape, &d.lhs_contracting);
            let m_ = total(&lhs.shape) / (b * k).max(1);
            let n = total(&rhs.shape) / (b * k).max(1);
            Some(MatmulDims { b, m: m_, n, k })
        }
        (OpKind::Dot, _) | (OpKind::DotGeneral, _) => {
            let k = lhs.shape.last().map_or(1, |&x| x.max(1) as u64);
            Some(MatmulDims {
                b: 1,
                m: total(&lhs.shape) / k,
                n: total(&rhs.shape) / k,
                k,
            })
        }
        (OpKind::Convolution, _) => {
            let Some(Attr::ConvDims(cd)) = o.attrs.get("dimension_numbers") else {
                return None;
            };
            let cout = rhs
                .shape
                .get(cd.kernel_output_feature as usize)
                .map_or(1, |&x| x.max(1) as u64);
            let k = total(&rhs.shape) / cout;
            Some(MatmulDims {
                b: 1,
                m: cout,
                n: total(&out.shape) / cout,
                k,
            })
        }
        _ => None,
    }
}

/// The value whose storage `v` shares: follows reshape, transpose and get_tuple_element
/// (relabelings that move no data; a partition change is a separate relayout).
pub fn root(m: &Module, mut v: ValueId) -> ValueId {
    for _ in 0..1024 {
        let ValueDef::Result(op, _) = m.value(v).def else {
            return v;
        };
        let o = m.op(op);
        match o.kind {
            OpKind::Reshape | OpKind::Transpose | OpKind::GetTupleElement
                if !o.operands.is_empty() =>
            {
                v = o.operands[0];
            }
            _ => return v,
        }
    }
    v
}

/// Element count and bytes of a value (0 for tokens).
pub fn elems_bytes(m: &Module, v: ValueId) -> (u64, u64) {
    match m.tensor_type(v) {
        Some(t) => (t.num_elements(), t.byte_size()),
        None => (0, neuronc_passes::neuron::graph::value_bytes(m, v)),
    }
}

/// Extent of the partition dimension the layout gives `v` (1 for scalars / no layout).
pub fn partition_extent(m: &Module, layout: &LayoutPlan, v: ValueId) -> u64 {
    let Some(t) = m.tensor_type(v) else { return 1 };
    partition_dim(m, layout, v)
        .and_then(|d| t.shape.get(d))
        .map_or(1, |&x| x.max(1) as u64)
}

/// The dimension of `v` on partitions: the layout's choice, else the largest dimension
/// (`None` for scalars and tokens).
pub fn partition_dim(m: &Module, layout: &LayoutPlan, v: ValueId) -> Option<usize> {
    let t = m.tensor_type(v)?;
    layout
        .of(v)
        .map(|d| d as usize)
        .or_else(|| (0..t.rank()).max_by_key(|&i| (t.shape[i], std::cmp::Reverse(i))))
}

/// SBUF bytes per partition to hold all of `v` with its layout.
pub fn resident_bytes_pp(m: &Module, layout: &LayoutPlan, v: ValueId) -> u64 {
    let (elems, bytes) = elems_bytes(m, v);
    if elems == 0 {
        return bytes.div_ceil(128).max(1);
    }
    let p = partition_extent(m, layout, v);
    let eb = (bytes / elems).max(1);
    p.div_ceil(128) * (elems / p).max(1) * eb
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gathered_tables_count_only_the_rows_read() {
        // %t (1000 x 16 f32 = 64,000 B) is only gathered: 4 rows x 16 x 4 B = 256 B. %w
        // (same size) is gathered and also multiplied whole: all 64,000 B.
        let m = neuronc_ir::parse_module(
            r#"
func.func @main(%t: tensor<1000x16xf32>, %w: tensor<1000x16xf32>, %i: tensor<4xi32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<1000x16xf32>) {
  %a = "stablehlo.gather"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 16>}> : (tensor<1000x16xf32>, tensor<4xi32>) -> tensor<4x16xf32>
  %b = "stablehlo.gather"(%w, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 16>}> : (tensor<1000x16xf32>, tensor<4xi32>) -> tensor<4x16xf32>
  %c = stablehlo.multiply %w, %w : tensor<1000x16xf32>
  return %a, %b, %c : tensor<4x16xf32>, tensor<4x16xf32>, tensor<1000x16xf32>
}"#,
        )
        .expect("parse");
        let body = m.entry().expect("entry").body;
        let args: FxHashSet<ValueId> = m.region(body).args.iter().copied().collect();
        let bytes = arg_read_bytes(&m, body, &args);
        let a = &m.region(body).args;
        assert_eq!(bytes.get(&a[0]), Some(&256));
        assert_eq!(bytes.get(&a[1]), Some(&64_000));
        assert_eq!(bytes.get(&a[2]), Some(&16)); // 4 x i32, read whole
    }

    #[test]
    fn split_is_balanced() {
        assert_eq!(split(10, 4), vec![2, 3, 2, 3]);
        assert_eq!(split(3, 16), vec![1, 1, 1]);
        assert_eq!(split(0, 16), vec![1]);
    }

    #[test]
    fn tiling_limits() {
        // [256, 4096] f32: 2 partition tiles × 2 free tiles of 2048 (8 KiB / 4 B).
        let t = Tiling::new(256 * 4096, 256, 1, 4, 64);
        assert_eq!((t.parts, t.free, t.p_tiles, t.f_tiles), (128, 2048, 2, 2));
        assert_eq!(t.counts, vec![1, 1, 1, 1]);
        // Rows of 3000 stay whole.
        let t = Tiling::new(64 * 3000, 64, 3000, 4, 64);
        assert_eq!((t.parts, t.free, t.f_tiles), (64, 3000, 1));
    }

    #[test]
    fn record_ends_follow_the_partial_last_tile() {
        // [300, 768] f32, rows on partitions: tiles of 128, 128 and 44 rows of 768, one
        // record each.
        let t = Tiling::new(300 * 768, 300, 1, 4, 16);
        assert_eq!((t.parts, t.free, t.p_tiles, t.f_tiles), (128, 768, 3, 1));
        assert_eq!(
            t.record_ends(300 * 768),
            Some(vec![128 * 768, 256 * 768, 300 * 768])
        );
        // [64, 5000] f32: free-axis slices of 2048, 2048 and 904 in two records (2 + 1).
        let t = Tiling::new(64 * 5000, 64, 1, 4, 2);
        assert_eq!((t.free, t.f_tiles, t.counts.clone()), (2048, 3, vec![1, 2]));
        assert_eq!(t.record_ends(64 * 5000), Some(vec![64 * 2048, 64 * 5000]));
        // A two-dimensional grid, or a space the tiles do not fit: unknown.
        assert_eq!(
            Tiling::new(256 * 4096, 256, 1, 4, 64).record_ends(256 * 4096),
            None
        );
        assert_eq!(t.record_ends(64 * 3000), None);
    }
}
