//! Which pieces of a matmul's stationary operand each record of the matmul waits for.
//!
//! Owns: [`RowOrder`] and [`row_order`].
//! A record of a matmul kernel covers a run of chunks (stationary tile, column group;
//! the group runs fastest, `emit_mm::matmul_record`), and a stationary tile reads only its
//! 128 rows of the stationary operand (all of the contraction). When that operand's
//! rows lead its row-major order and it reaches its storage root through reshapes only,
//! the rows of a record are one row-major range of the root. The producer of the root
//! left it in pieces along the walk of its tiles (`Avail::piece_ends`); a row-major range
//! is one range of that walk too when the root's partition dimension is its leading
//! dimension and spans more than 128 partitions (tiles of whole partition rows, walked
//! in row-major order), or when the partition dimension is another one of at most 128
//! (the walk runs along the free axis, whose order is row-major over the other
//! dimensions, so a range of whole leading-dimension blocks stays one range).
//! Invariant: the pieces a record gets cover every element of the rows it reads; when
//! the piece ends are unknown it gets all of them.

use crate::engine::emit_ops::CHUNK_COLS;
use crate::engine::isa::InstrId;
use crate::engine::kernel_io::reshape_chain;
use crate::engine::lower::Lowerer;
use crate::engine::tiling::{elems_bytes, partition_dim, root};
use neuronc_ir::{Attr, OpId, OpKind, ValueId};
use rustc_hash::FxHashSet;

/// The stationary operand of a one-batch matmul whose records read row ranges of it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RowOrder {
    /// The operand and the values of its reshape chain (any may be the kernel input).
    pub operands: FxHashSet<ValueId>,
    /// Column groups per stationary tile.
    pub groups: u64,
    /// Rows of the operand (the stationary free extent) and elements per row.
    pub rows: u64,
    pub row_elems: u64,
    /// Granularity of the walk in row-major elements: a row-major range is widened to
    /// multiples of it.
    pub align: u64,
}

impl RowOrder {
    /// The pieces (ending at `ends` in the producer's walk) that record `c` (of `counts`
    /// chunks each) reads; all of them when the ends are unknown.
    pub fn share(
        &self,
        counts: &[u32],
        pieces: Vec<InstrId>,
        ends: &[u64],
        c: usize,
    ) -> Vec<InstrId> {
        let elems = self.rows * self.row_elems;
        let known = !pieces.is_empty() && ends.len() == pieces.len() && ends.last() == Some(&elems);
        let Some(&count) = counts.get(c).filter(|_| known) else {
            return pieces;
        };
        let chunk0: u64 = counts[..c].iter().map(|&x| x as u64).sum();
        let groups = self.groups.max(1);
        let (t_lo, t_hi) = (
            chunk0 / groups,
            (chunk0 + count.max(1) as u64 - 1) / groups + 1,
        );
        let (r_lo, r_hi) = ((t_lo * 128).min(self.rows), (t_hi * 128).min(self.rows));
        let align = self.align.max(1);
        let lo = r_lo * self.row_elems / align * align;
        let hi = ((r_hi * self.row_elems).div_ceil(align) * align).min(elems);
        if hi <= lo {
            return pieces;
        }
        // Piece j covers [ends[j - 1], ends[j]).
        let first = ends.partition_point(|&e| e <= lo).min(pieces.len() - 1);
        let last = ends.partition_point(|&e| e < hi).min(pieces.len() - 1);
        pieces[first..=last].to_vec()
    }
}

/// The [`RowOrder`] of matmul `op` (stationary side `lhs_stationary`, `ms` rows × `nm`
/// columns per batch), if its stationary operand qualifies (see the module doc).
pub(crate) fn row_order(
    lw: &Lowerer,
    op: OpId,
    b: u64,
    lhs_stationary: bool,
    ms: u64,
    nm: u64,
) -> Option<RowOrder> {
    let m = lw.m;
    let o = m.op(op);
    if b != 1 || o.kind != OpKind::DotGeneral {
        return None;
    }
    let Some(Attr::DotDims(d)) = o.attrs.get("dot_dimension_numbers") else {
        return None;
    };
    let (v, contracting, batching) = if lhs_stationary {
        (*o.operands.first()?, &d.lhs_contracting, &d.lhs_batching)
    } else {
        (*o.operands.get(1)?, &d.rhs_contracting, &d.rhs_batching)
    };
    let rank = m.tensor_type(v)?.rank();
    // The contracting dimensions trail, in order: the rows lead the row-major order.
    let nc = contracting.len();
    let trailing = contracting
        .iter()
        .enumerate()
        .all(|(i, &x)| x == (rank - nc + i) as i64);
    let chain = reshape_chain(m, v);
    if !batching.is_empty() || !trailing || chain.is_empty() || ms == 0 {
        return None;
    }
    let r = root(m, v);
    let t = m.tensor_type(r)?;
    let elems = elems_bytes(m, r).0;
    if !elems.is_multiple_of(ms) || t.rank() == 0 {
        return None;
    }
    let j = partition_dim(m, &lw.plan.layout, r)?;
    let p = t.shape[j].max(1) as u64;
    let align = match (j, p > 128) {
        (0, true) => 1,
        (0, false) | (_, true) => return None,
        (_, false) => elems / (t.shape[0].max(1) as u64),
    };
    Some(RowOrder {
        operands: chain.into_iter().collect(),
        groups: nm.div_ceil(CHUNK_COLS).max(1),
        rows: ms,
        row_elems: elems / ms,
        align,
    })
}

#[cfg(test)]
mod tests {
    use super::RowOrder;

    /// 1024 rows of 768 (8 stationary tiles, one column group), walked in 8 pieces of
    /// 128 rows: a record of two tiles waits for its two pieces only.
    #[test]
    fn a_record_waits_for_the_pieces_of_its_rows() {
        let ro = RowOrder {
            operands: Default::default(),
            groups: 1,
            rows: 1024,
            row_elems: 768,
            align: 1,
        };
        let pieces: Vec<u32> = (0..8).collect();
        let ends: Vec<u64> = (1..=8).map(|i| i * 128 * 768).collect();
        let counts = [2, 2, 2, 2];
        for c in 0..4 {
            assert_eq!(
                ro.share(&counts, pieces.clone(), &ends, c),
                vec![2 * c as u32, 2 * c as u32 + 1]
            );
        }
        // Two column groups per tile: chunks 0..3 are tiles 0 and 1.
        let ro2 = RowOrder {
            groups: 2,
            ..ro.clone()
        };
        assert_eq!(ro2.share(&[3, 5], pieces.clone(), &ends, 0), vec![0, 1]);
        // Unknown ends: everything.
        assert_eq!(ro.share(&counts, pieces.clone(), &[], 1), pieces);
        // A walk along the free axis in blocks of 8 rows × 768 (align 6144): rows 128..256
        // widen to whole blocks, which the pieces (of 3 blocks each) cover.
        let ro3 = RowOrder {
            align: 8 * 768,
            ..ro
        };
        let ends3: Vec<u64> = vec![3 * 6144, 6 * 6144, 128 * 6144];
        assert_eq!(ro3.share(&[1, 1, 6], vec![7, 8, 9], &ends3, 1), vec![9]);
        assert_eq!(
            ro3.share(&[1, 1, 6], vec![7, 8, 9], &ends3, 0),
            vec![7, 8, 9]
        );
    }
}
