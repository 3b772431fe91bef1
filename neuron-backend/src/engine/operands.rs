//! Which operands of a kernel's elementwise ops are scalars to its instructions and
//! which are full tiles, given how the kernel is tiled.
//!
//! Owns [`Span`] (how a kernel's tiles cut its full-size values), [`tile_span`],
//! [`scalar_operand`] (splats, and broadcasts that are a `[P, 1]` vector in every
//! instruction) and [`price_broadcasts`] (the other broadcasts are full tiles an
//! instruction reads).
//!
//! # Why
//! An engine instruction reads each input through an access pattern over its tile: a
//! stride-0 pattern along the free axis replicates a per-partition value (a `[P, 1]`
//! operand: ScalarE's bias, `tensor_scalar`'s operands), but nothing replicates one row
//! across the partitions. So `x - bcast(m)` with `m` varying along the free axis (a
//! softmax row maximum subtracted in a layout with the rows on the free axis, a LayerNorm
//! `gamma` over features with tokens on the partitions) reads two full tiles: VectorE's
//! `tensor_tensor`, about `2N` cycles for `N` free elements instead of `N`, and never
//! ScalarE, which reads one tensor per instruction (`neuron-facts.md` §2.3). The
//! replicated tile itself is made once per distinct source tile (a `K = 1` matmul of a
//! ones row, or the broadcast a kernel hoists), which is not counted here.
//!
//! Invariants: pricing never changes what is computed, only an op's input count and
//! engines; a broadcast is a scalar operand only when every instruction (a tile, or an
//! even piece of at least [`MIN_PIECE`] elements of one) sees one value of it per
//! partition.

use crate::engine::classify::{OpWork, ANY_EW, TWO_INPUT};
use crate::engine::combine::Ctx;
use crate::engine::emit_ops::{kernel_tiling, matmul_of};
use crate::engine::lower::Lowerer;
use neuronc_ir::{OpId, OpKind, ValueDef, ValueId};

/// How a kernel's tiles cut the free elements of each partition of its full-size values
/// (those of `elems` elements, their free dimensions in row-major order): each partition's
/// free elements are runs of `run` (a matmul's moving free size per batch; for a streaming
/// kernel, whose tiles cut each partition's row from its start, any multiple of the row:
/// the value's size), and each run is cut into tiles of `free` elements from its start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub elems: u64,
    pub run: u64,
    pub free: u64,
}

/// Smallest piece of a tile one instruction covers when a `[P, 1]` operand changes within
/// the tile: below it the per-instruction overhead (about 60 cycles, facts §1.5) would
/// cost more than a tenth of the work.
pub const MIN_PIECE: u64 = 512;

impl Span {
    /// Whether a free dimension whose inner free dimensions hold `inner` elements keeps
    /// one index over each instruction: every tile lies inside one block of `inner`
    /// elements, or the tile splits evenly into pieces of `inner >= MIN_PIECE` elements
    /// (one instruction each, the operand a `[P, 1]` vector in each).
    pub fn constant_in_tiles(&self, inner: u64) -> bool {
        let inner = inner.max(1);
        let (run, free) = (self.run.max(1), self.free.max(1));
        inner.is_multiple_of(run)
            || (run.is_multiple_of(inner) && inner.is_multiple_of(free))
            || (inner >= MIN_PIECE && free.is_multiple_of(inner) && run.is_multiple_of(inner))
    }
}

/// How the tiles of the kernel of `ops` cut its full-size values ([`Span`]): a matmul's
/// result per batch (moving-free runs), or a streaming kernel's anchor value per partition.
pub(crate) fn tile_span(lw: &Lowerer, ops: &[OpId], works: &[OpWork]) -> Option<Span> {
    let mm = matmul_of(lw, ops, works);
    let (t, elems) = kernel_tiling(lw, ops, works, mm.as_ref(), false);
    let span = match (&mm, elems) {
        (Some(mm), _) => Span {
            elems: mm.d.b * mm.ms * mm.nm,
            run: mm.nm,
            free: t.free as u64,
        },
        (None, Some(e)) => Span {
            elems: e,
            run: e,
            free: t.free as u64,
        },
        (None, None) => return None,
    };
    Some(span)
}

/// Whether `v` is a scalar operand for an op with result `res`: `Some(true)` for a splat
/// constant, `Some(false)` for a broadcast whose source varies only along the result's
/// partition dimension and dimensions that keep one index per instruction
/// ([`Span::constant_in_tiles`]): a `[P, 1]` operand; `None` otherwise.
pub fn scalar_operand(cx: &Ctx, v: ValueId, res: ValueId) -> Option<bool> {
    let m = cx.m;
    if neuronc_passes::ir_util::splat_ref(m, v).is_some() {
        return Some(true);
    }
    let ValueDef::Result(op, _) = m.value(v).def else {
        return None;
    };
    let o = m.op(op);
    if o.kind != OpKind::BroadcastInDim {
        return None;
    }
    let src = m.tensor_type(*o.operands.first()?)?;
    let dims = o.attrs.i64_array("broadcast_dimensions")?;
    let part = cx.layout.of(res).map(|p| p as i64);
    let constant = tile_constant_dims(cx, res);
    let per_partition = src.shape.iter().zip(&dims).all(|(&extent, &d)| {
        extent <= 1 || Some(d) == part || constant.get(d as usize).copied().unwrap_or(false)
    });
    per_partition.then_some(false)
}

/// For each dimension of `res`, whether every tile of the kernel sees one index of it
/// (a free dimension outside the tiles' span, [`Span::constant_in_tiles`]); all `false`
/// when `res` is not a full-size value of the kernel or has no partition dimension.
fn tile_constant_dims(cx: &Ctx, res: ValueId) -> Vec<bool> {
    let Some(t) = cx.m.tensor_type(res) else {
        return Vec::new();
    };
    let shape: Vec<u64> = t.shape.iter().map(|&x| x.max(0) as u64).collect();
    let mut out = vec![false; shape.len()];
    let (Some(span), Some(part)) = (cx.span, cx.layout.of(res)) else {
        return out;
    };
    if shape.iter().product::<u64>() != span.elems {
        return out;
    }
    let mut inner = 1u64;
    for d in (0..shape.len()).rev() {
        if d == part as usize {
            continue;
        }
        out[d] = span.constant_in_tiles(inner);
        inner = inner.saturating_mul(shape[d]);
    }
    out
}

/// The kernel's works with every elementwise op's broadcast operands that are not scalar
/// operands counted as tensor inputs (and such an op off ScalarE).
pub fn price_broadcasts(cx: &Ctx, ops: &[OpId], works: &[OpWork]) -> Vec<OpWork> {
    ops.iter()
        .zip(works)
        .map(|(&op, w)| match *w {
            OpWork::Elementwise {
                name,
                inputs,
                engines,
            } => {
                let extra = full_broadcasts(cx, op);
                if extra == 0 {
                    return w.clone();
                }
                let engines = if engines == ANY_EW {
                    TWO_INPUT
                } else {
                    engines
                };
                OpWork::Elementwise {
                    name,
                    inputs: inputs.saturating_add(extra),
                    engines,
                }
            }
            _ => w.clone(),
        })
        .collect()
}

/// Distinct operands of `op` (of two or more) that are broadcasts of a smaller value
/// varying inside the kernel's tiles along the free axis.
fn full_broadcasts(cx: &Ctx, op: OpId) -> u8 {
    let o = cx.m.op(op);
    let Some(&res) = o.results.first() else {
        return 0;
    };
    let full = cx.m.tensor_type(res).map_or(1, |t| t.num_elements());
    if o.operands.len() < 2 || full <= 1 {
        return 0;
    }
    let mut seen: Vec<ValueId> = Vec::new();
    for &v in &o.operands {
        if seen.contains(&v) {
            continue;
        }
        let ValueDef::Result(b, _) = cx.m.value(v).def else {
            continue;
        };
        let bo = cx.m.op(b);
        let smaller = bo
            .operands
            .first()
            .and_then(|&x| cx.m.tensor_type(x))
            .is_some_and(|t| t.num_elements() < full);
        if bo.kind == OpKind::BroadcastInDim && smaller && scalar_operand(cx, v, res).is_none() {
            seen.push(v);
        }
    }
    seen.len() as u8
}

#[cfg(test)]
mod tests {
    use super::Span;

    #[test]
    fn a_dimension_is_constant_when_each_tile_lies_in_one_of_its_blocks() {
        // Matmul result [batch 96, keys 128 (partitions), queries 512]: tiles of 512
        // queries within one batch; the batch (inner 512) is constant, the queries are not.
        let mm = Span {
            elems: 96 * 128 * 512,
            run: 512,
            free: 512,
        };
        assert!(mm.constant_in_tiles(512));
        assert!(mm.constant_in_tiles(12 * 512));
        assert!(!mm.constant_in_tiles(1));
        assert!(!mm.constant_in_tiles(256));
        // Moving free 1536 in tiles of 512: a dimension with 1024 inner elements has
        // blocks [0, 1024), [1024, 1536) per run: the tile [1024, 1536) is in one block,
        // but 768 is not a multiple of the tile.
        let wide = Span {
            elems: 4 * 128 * 1536,
            run: 1536,
            free: 512,
        };
        assert!(!wide.constant_in_tiles(768));
        assert!(wide.constant_in_tiles(1536));
        // Streaming kernel, rows of 2048 per tile: inner 6144 holds whole tiles; a tile
        // is two pieces of 1024 or four of 512 (one instruction each), but not eight of
        // 256, and 3072 does not divide it.
        let st = Span {
            elems: 128 * 24576,
            run: 128 * 24576,
            free: 2048,
        };
        assert!(st.constant_in_tiles(6144));
        assert!(st.constant_in_tiles(1024));
        assert!(st.constant_in_tiles(512));
        assert!(!st.constant_in_tiles(256));
        assert!(!st.constant_in_tiles(3072));
    }
}
