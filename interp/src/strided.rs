//! Strided copies: the kernel behind transpose, broadcast, slice and reverse.
//!
//! Owns: [`strided_copy`], which materialises `src[base + sum(idx[d] * strides[d])]` for
//! every row-major index `idx` of a shape. Rows whose source stride is 1 are block copies,
//! stride 0 rows are fills, and transposing copies (the source's contiguous dim is not the
//! last one) go tile by tile so reads and writes both stay in cache.
//! Invariant: the whole index box is bounds-checked once, before any element is read; the
//! result is the same element sequence whichever path produces it.

/// Tile edge of the transposing copy (a 32×32 tile of 8-byte elements is 8 KiB per side).
const TILE: usize = 8;

/// Smallest dims for which the tiled path pays off.
const MIN_TILED: usize = 8;

/// The lowest and highest linear source offsets reached by the index box.
fn extent(shape: &[usize], strides: &[isize], base: isize) -> (isize, isize) {
    let (mut lo, mut hi) = (base, base);
    for (&n, &s) in shape.iter().zip(strides) {
        let reach = (n as isize - 1) * s;
        if reach < 0 {
            lo += reach;
        } else {
            hi += reach;
        }
    }
    (lo, hi)
}

/// Copies `src[base + sum(idx[d] * strides[d])]` for every index of `shape` (row-major);
/// `None` if an index falls outside `src`.
pub(crate) fn strided_copy<T: Copy + Default>(
    src: &[T],
    shape: &[usize],
    strides: &[isize],
    base: isize,
) -> Option<Vec<T>> {
    let n: usize = shape.iter().product();
    if n == 0 {
        return Some(Vec::new());
    }
    let (lo, hi) = extent(shape, strides, base);
    if lo < 0 || hi as usize >= src.len() {
        return None;
    }
    let rank = shape.len();
    if rank == 0 {
        return Some(vec![src[base as usize]]);
    }
    let last = rank - 1;
    if strides[last] != 1 && shape[last] >= MIN_TILED {
        let unit = (0..last).rev().find(|&d| strides[d] == 1);
        if let Some(j) = unit.filter(|&j| shape[j] >= MIN_TILED) {
            return Some(tiled(src, shape, strides, base, j));
        }
    }
    Some(rows(src, shape, strides, base))
}

/// Row-by-row copy (the last dim innermost).
fn rows<T: Copy>(src: &[T], shape: &[usize], strides: &[isize], base: isize) -> Vec<T> {
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n);
    let last = shape.len() - 1;
    let (ln, ls) = (shape[last], strides[last]);
    for_each_outer(&shape[..last], &strides[..last], base, |off| {
        let off = off as usize;
        match ls {
            1 => out.extend_from_slice(&src[off..off + ln]),
            0 => out.resize(out.len() + ln, src[off]),
            _ => {
                let mut o = off as isize;
                for _ in 0..ln {
                    out.push(src[o as usize]);
                    o += ls;
                }
            }
        }
    });
    out
}

/// Calls `f(base + sum(idx[d] * strides[d]))` for every index of `shape`, row-major.
pub(crate) fn for_each_outer(
    shape: &[usize],
    strides: &[isize],
    base: isize,
    mut f: impl FnMut(isize),
) {
    if shape.contains(&0) {
        return;
    }
    let rank = shape.len();
    let mut idx = vec![0usize; rank];
    let mut off = base;
    loop {
        f(off);
        let mut d = rank;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            idx[d] += 1;
            off += strides[d];
            if idx[d] < shape[d] {
                break;
            }
            off -= strides[d] * shape[d] as isize;
            idx[d] = 0;
        }
    }
}

/// Transposing copy: dim `j` (< last) has source stride 1, the last dim does not. For each
/// index of the other dims, the (j, last) plane is copied in `TILE`×`TILE` tiles.
fn tiled<T: Copy + Default>(
    src: &[T],
    shape: &[usize],
    strides: &[isize],
    base: isize,
    j: usize,
) -> Vec<T> {
    let n: usize = shape.iter().product();
    let mut out = vec![T::default(); n];
    let last = shape.len() - 1;
    let (nj, nl, sl) = (shape[j], shape[last], strides[last]);
    // Output strides, and the outer dims (all but j and last) with both strides.
    let mut ostr = vec![1usize; shape.len()];
    for d in (0..last).rev() {
        ostr[d] = ostr[d + 1] * shape[d + 1];
    }
    let outer: Vec<usize> = (0..last).filter(|&d| d != j).collect();
    let oshape: Vec<usize> = outer.iter().map(|&d| shape[d]).collect();
    // Linear output offsets fit in isize (n elements are allocated).
    let combined: Vec<isize> = outer.iter().map(|&d| ostr[d] as isize).collect();
    let sstr: Vec<isize> = outer.iter().map(|&d| strides[d]).collect();
    let mut dst_offs = Vec::new();
    for_each_outer(&oshape, &combined, 0, |o| dst_offs.push(o as usize));
    let mut k = 0;
    let oj = ostr[j];
    for_each_outer(&oshape, &sstr, base, |soff| {
        let doff = dst_offs[k];
        k += 1;
        for jb in (0..nj).step_by(TILE) {
            let je = (jb + TILE).min(nj);
            for lb in (0..nl).step_by(TILE) {
                let le = (lb + TILE).min(nl);
                for jj in jb..je {
                    let drow = &mut out[doff + jj * oj + lb..doff + jj * oj + le];
                    let mut s = soff + jj as isize + lb as isize * sl;
                    for d in drow {
                        *d = src[s as usize];
                        s += sl;
                    }
                }
            }
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition, one index at a time.
    fn reference(src: &[u32], shape: &[usize], strides: &[isize], base: isize) -> Vec<u32> {
        let n: usize = shape.iter().product();
        (0..n)
            .map(|mut i| {
                let mut off = base;
                for d in (0..shape.len()).rev() {
                    off += (i % shape[d]) as isize * strides[d];
                    i /= shape[d];
                }
                src[off as usize]
            })
            .collect()
    }

    #[test]
    fn tiled_transposes_match_the_definition() {
        let src: Vec<u32> = (0..3 * 37 * 41).collect();
        // [3, 37, 41] -> permutation [0, 2, 1] and [2, 0, 1] and [1, 2, 0].
        let cases: [(&[usize], &[isize]); 3] = [
            (&[3, 41, 37], &[37 * 41, 1, 41]),
            (&[41, 3, 37], &[1, 37 * 41, 41]),
            (&[37, 41, 3], &[41, 1, 37 * 41]),
        ];
        for (shape, st) in cases {
            let got = strided_copy(&src, shape, st, 0).unwrap();
            assert_eq!(got, reference(&src, shape, st, 0), "{shape:?}");
        }
    }

    #[test]
    fn broadcast_reverse_and_bounds() {
        let src: Vec<u32> = (0..12).collect();
        let (shape, st) = ([2, 10], [6, 0]);
        assert_eq!(
            strided_copy(&src, &shape, &st, 1).unwrap(),
            reference(&src, &shape, &st, 1)
        );
        let (shape, st) = ([3, 4], [-4, -1]);
        assert_eq!(
            strided_copy(&src, &shape, &st, 11).unwrap(),
            reference(&src, &shape, &st, 11)
        );
        assert!(strided_copy(&src, &[3, 4], &[4, 1], 1).is_none());
        assert!(strided_copy(&src, &[3, 4], &[-4, 1], 4).is_none());
    }
}
