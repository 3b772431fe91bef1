//! On-chip memory planning: allocation of SBUF address ranges (per partition; next-fit or
//! oldest-tenant-first, [`Placement`]) and round-robin PSUM bank assignment, with the
//! write-after-read dependencies that address reuse implies.
//!
//! Owns: [`SbufAllocator`], [`Placement`] and [`PsumBanks`].
//! Invariants: live SBUF ranges never overlap and lie in `[0, capacity)`; a range handed
//! out again carries the instructions that last touched it (`Grant::war`), which the
//! caller must make the new writer wait for, so the schedule can never overlap two
//! tensors sharing an address; `peak` is the highest number of bytes per partition live
//! at once.

use crate::engine::isa::InstrId;
use std::collections::BTreeMap;

/// A free or recently freed address range `[start, end)` in bytes per partition.
#[derive(Clone, Debug)]
struct Range {
    start: u64,
    end: u64,
}

/// The result of a successful allocation.
#[derive(Clone, Debug, PartialEq)]
pub struct Grant {
    pub offset: u64,
    /// Instructions that last used (part of) this range before; the first writer of the
    /// new tenant must depend on them.
    pub war: Vec<InstrId>,
}

/// How [`SbufAllocator::alloc`] picks among the free places that fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Next fit: the search starts where the previous allocation ended (wrapping), so
    /// SBUF is reused like a ring and recently freed ranges come last.
    NextFit,
    /// Oldest tenant first: the place whose previous tenants' newest accessor is oldest
    /// (never used space first; ties: the lowest address), so a new tensor waits for the
    /// work that is likely done rather than for the kernels just lowered, and the WAR
    /// dependency rarely serialises a kernel behind its independent neighbours. "Age" is
    /// the accessor's instruction id, which follows the lowering order.
    OldestFirst,
}

/// Allocator over the bytes of one SBUF partition (every tensor occupies the same range in
/// each partition it uses, `neuron-facts.md` §1.3), placing by its [`Placement`].
/// Tombstones (freed ranges with their last accessors) are kept disjoint: a newer one
/// supersedes the overlapped parts of older ones, which is sound because the newer
/// tenant's writers already waited for the older accessors.
#[derive(Clone, Debug)]
pub struct SbufAllocator {
    capacity: u64,
    placement: Placement,
    free: Vec<Range>,
    /// start → tombstone, disjoint; every tombstone lies inside a free range.
    tombstones: BTreeMap<u64, Tomb>,
    /// Where the next [`Placement::NextFit`] search starts.
    cursor: u64,
    used: u64,
    peak: u64,
}

/// A freed range `[start, end)` (keyed by start) and the instructions that used it last.
#[derive(Clone, Debug)]
struct Tomb {
    end: u64,
    accessors: Vec<InstrId>,
    /// 1 + the newest (highest) id among `accessors`; 0 when there are none.
    age: u64,
}

impl Tomb {
    fn new(end: u64, accessors: Vec<InstrId>) -> Self {
        let age = accessors
            .iter()
            .map(|&a| u64::from(a) + 1)
            .max()
            .unwrap_or(0);
        Tomb {
            end,
            accessors,
            age,
        }
    }
}

/// Allocation granularity in bytes per partition (keeps addresses aligned to 64 B).
pub const ALIGN: u64 = 64;

fn align(n: u64) -> u64 {
    n.div_ceil(ALIGN).max(1) * ALIGN
}

impl SbufAllocator {
    /// A [`Placement::NextFit`] allocator.
    pub fn new(capacity: u64) -> Self {
        Self::with_placement(capacity, Placement::NextFit)
    }

    pub fn with_placement(capacity: u64, placement: Placement) -> Self {
        SbufAllocator {
            capacity,
            placement,
            free: vec![Range {
                start: 0,
                end: capacity,
            }],
            tombstones: BTreeMap::new(),
            cursor: 0,
            used: 0,
            peak: 0,
        }
    }

    pub fn capacity(&self) -> u64 {
        self.capacity
    }
    /// Bytes per partition live now.
    pub fn used(&self) -> u64 {
        self.used
    }
    /// Highest `used` seen.
    pub fn peak(&self) -> u64 {
        self.peak
    }
    /// Largest single free range.
    pub fn largest_free(&self) -> u64 {
        self.free.iter().map(|r| r.end - r.start).max().unwrap_or(0)
    }

    /// Allocates `bytes` per partition where the [`Placement`] says. `None` when no free
    /// range is large enough.
    pub fn alloc(&mut self, bytes: u64) -> Option<Grant> {
        let size = align(bytes);
        let (i, start) = match self.placement {
            Placement::NextFit => self.next_fit(size)?,
            Placement::OldestFirst => self.oldest_fit(size)?,
        };
        if start > self.free[i].start {
            // Split: keep the part before the placement free.
            let before = Range {
                start: self.free[i].start,
                end: start,
            };
            self.free[i].start = start;
            self.free.insert(i, before);
            return self.finish_alloc(i + 1, start, size);
        }
        self.finish_alloc(i, start, size)
    }

    /// The free range and start of the first place for `size` bytes at or after the
    /// cursor, else the first from address 0.
    fn next_fit(&self, size: u64) -> Option<(usize, u64)> {
        let fits = |r: &Range, from: u64| r.end.saturating_sub(r.start.max(from)) >= size;
        let cur = self.cursor;
        let i = self
            .free
            .iter()
            .position(|r| r.end > cur && fits(r, cur))
            .or_else(|| self.free.iter().position(|r| fits(r, 0)))?;
        let r = &self.free[i];
        let start = if r.start < cur && fits(r, cur) {
            cur
        } else {
            r.start
        };
        Some((i, start))
    }

    /// The free range and start of the placement of `size` bytes with the smallest age
    /// (the newest accessor among the tombstones it overlaps), then the lowest start.
    /// Candidates: each fitting free range's ends and the starts that put the placement
    /// right after or right before one of its tombstones (an optimum is always among them:
    /// sliding a placement until it touches a tombstone boundary or a range end never
    /// overlaps a newer tombstone than it already does).
    fn oldest_fit(&self, size: u64) -> Option<(usize, u64)> {
        let mut best: Option<(u64, u64, usize)> = None;
        for (i, r) in self.free.iter().enumerate() {
            if r.end - r.start < size {
                continue;
            }
            let mut cands = vec![r.start, r.end - size];
            for (&ts, t) in self.tombstones.range(r.start..r.end) {
                if t.end + size <= r.end {
                    cands.push(t.end);
                }
                if ts >= r.start + size {
                    cands.push(ts - size);
                }
            }
            for c in cands {
                let key = (self.age(c, c + size), c);
                if best.is_none_or(|(a, s, _)| key < (a, s)) {
                    best = Some((key.0, key.1, i));
                }
            }
        }
        best.map(|(_, start, i)| (i, start))
    }

    /// The newest accessor age among the tombstones overlapping `[a, b)` (0 for none).
    fn age(&self, a: u64, b: u64) -> u64 {
        let mut age = 0;
        for (_, t) in self.tombstones.range(..b).rev() {
            if t.end <= a {
                break;
            }
            age = age.max(t.age);
        }
        age
    }

    fn finish_alloc(&mut self, i: usize, start: u64, size: u64) -> Option<Grant> {
        self.free[i].start += size;
        if self.free[i].start == self.free[i].end {
            self.free.remove(i);
        }
        self.used += size;
        self.peak = self.peak.max(self.used);
        self.cursor = (start + size) % self.capacity.max(1);
        let war = self.take_tombstones(start, start + size);
        Some(Grant { offset: start, war })
    }

    /// Frees `[offset, offset + bytes)`; `accessors` are the instructions that used it last.
    pub fn free(&mut self, offset: u64, bytes: u64, accessors: Vec<InstrId>) {
        let size = align(bytes);
        let r = Range {
            start: offset,
            end: offset + size,
        };
        self.used -= size;
        if !accessors.is_empty() {
            self.carve(r.start, r.end);
            self.tombstones.insert(r.start, Tomb::new(r.end, accessors));
        }
        let pos = self.free.partition_point(|f| f.start < r.start);
        self.free.insert(pos, r);
        // Merge with neighbours.
        if pos + 1 < self.free.len() && self.free[pos].end == self.free[pos + 1].start {
            self.free[pos].end = self.free[pos + 1].end;
            self.free.remove(pos + 1);
        }
        if pos > 0 && self.free[pos - 1].end == self.free[pos].start {
            self.free[pos - 1].end = self.free[pos].end;
            self.free.remove(pos);
        }
    }

    /// Collects the accessors of the tombstones overlapping `[a, b)` and removes those
    /// parts (the new tenant's writers now stand for them).
    fn take_tombstones(&mut self, a: u64, b: u64) -> Vec<InstrId> {
        let mut war = Vec::new();
        for (_, t) in self.overlapping(a, b) {
            war.extend_from_slice(&t.accessors);
        }
        self.carve(a, b);
        war.sort_unstable();
        war.dedup();
        war
    }

    /// Tombstones overlapping `[a, b)` (disjoint, so a reverse scan from `b` suffices).
    fn overlapping(&self, a: u64, b: u64) -> Vec<(u64, Tomb)> {
        let mut out = Vec::new();
        for (&s, t) in self.tombstones.range(..b).rev() {
            if t.end <= a {
                break;
            }
            out.push((s, t.clone()));
        }
        out
    }

    /// Removes `[a, b)` from the tombstones, keeping the parts outside it.
    fn carve(&mut self, a: u64, b: u64) {
        for (s, t) in self.overlapping(a, b) {
            self.tombstones.remove(&s);
            if s < a {
                self.tombstones.insert(s, Tomb::new(a, t.accessors.clone()));
            }
            if t.end > b {
                self.tombstones.insert(b, Tomb::new(t.end, t.accessors));
            }
        }
    }
}

/// PSUM banks handed out round-robin; each remembers the instructions that last read it.
#[derive(Clone, Debug)]
pub struct PsumBanks {
    next: u8,
    banks: u8,
    last_readers: Vec<Vec<InstrId>>,
}

impl PsumBanks {
    pub fn new(banks: u8) -> Self {
        PsumBanks {
            next: 0,
            banks,
            last_readers: vec![Vec::new(); banks as usize],
        }
    }

    /// Takes the next `n` banks (n ≤ banks); returns them with the WAR dependencies.
    pub fn take(&mut self, n: u8) -> (Vec<u8>, Vec<InstrId>) {
        let n = n.clamp(1, self.banks);
        let mut ids = Vec::with_capacity(n as usize);
        let mut war = Vec::new();
        for _ in 0..n {
            let b = self.next;
            self.next = (self.next + 1) % self.banks;
            war.append(&mut self.last_readers[b as usize]);
            ids.push(b);
        }
        war.sort_unstable();
        war.dedup();
        (ids, war)
    }

    /// Records the instructions that read (evicted) bank `b`.
    pub fn set_readers(&mut self, b: u8, readers: Vec<InstrId>) {
        self.last_readers[b as usize] = readers;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_fit_reuses_freed_range_last_with_war() {
        for placement in [Placement::NextFit, Placement::OldestFirst] {
            untouched_then_freed(placement);
        }
    }

    fn untouched_then_freed(placement: Placement) {
        let mut a = SbufAllocator::with_placement(512, placement);
        let x = a.alloc(100).unwrap();
        let y = a.alloc(200).unwrap();
        assert_eq!((x.offset, y.offset), (0, 128));
        a.free(x.offset, 100, vec![7]);
        // The untouched tail [384, 512) is used before the freed range.
        let z = a.alloc(128).unwrap();
        assert_eq!((z.offset, z.war.clone()), (384, vec![]));
        // Wrapping around reaches the freed range, which carries its last accessor.
        let w = a.alloc(64).unwrap();
        assert_eq!((w.offset, w.war), (0, vec![7]));
        assert_eq!(a.peak(), 64 + 256 + 128);
        assert!(a.alloc(2048).is_none());
    }

    #[test]
    fn oldest_first_reuses_the_range_whose_accessors_are_oldest() {
        // Three 128-byte tenants; the second freed (last used by 5), then the first (9).
        let three_freed = |placement| {
            let mut a = SbufAllocator::with_placement(384, placement);
            let x = a.alloc(128).unwrap();
            let y = a.alloc(128).unwrap();
            let _z = a.alloc(128).unwrap();
            a.free(y.offset, 128, vec![5]);
            a.free(x.offset, 128, vec![9]);
            a
        };
        let mut a = three_freed(Placement::OldestFirst);
        // Free: [0, 256), [0, 128) last used by 9 and [128, 256) by 5. The new tenant
        // takes [128, 256) and waits for 5 only; the lower address would wait for 9.
        let w = a.alloc(100).unwrap();
        assert_eq!((w.offset, w.war), (128, vec![5]));
        // A placement straddling both waits for both: the only one left for 128 bytes
        // is [0, 128), which waits for 9.
        let v = a.alloc(128).unwrap();
        assert_eq!((v.offset, v.war), (0, vec![9]));
        // Next fit, same frees: the cursor wrapped to 0, so it takes [0, 128) and waits
        // for the newer 9.
        let mut a = three_freed(Placement::NextFit);
        let w = a.alloc(100).unwrap();
        assert_eq!((w.offset, w.war), (0, vec![9]));
    }

    #[test]
    fn oldest_first_avoids_a_newer_tombstone_inside_a_free_range() {
        let mut a = SbufAllocator::with_placement(512, Placement::OldestFirst);
        let x = a.alloc(128).unwrap();
        let y = a.alloc(128).unwrap();
        let z = a.alloc(256).unwrap();
        a.free(x.offset, 128, vec![1]);
        a.free(y.offset, 128, vec![20]);
        a.free(z.offset, 256, vec![3]);
        // One free range [0, 512) with tombstones answering 1, 20, 3. For 256 bytes:
        // [0, 256) waits for 20, [128, 384) for 20, [256, 512) for 3 only.
        let w = a.alloc(256).unwrap();
        assert_eq!((w.offset, w.war), (256, vec![3]));
        // For 64 bytes: [0, 64) inside the oldest tombstone (1).
        let u = a.alloc(64).unwrap();
        assert_eq!((u.offset, u.war), (0, vec![1]));
    }

    #[test]
    fn tombstones_are_superseded() {
        let mut a = SbufAllocator::new(256);
        let x = a.alloc(256).unwrap();
        a.free(x.offset, 256, vec![1]);
        let y = a.alloc(128).unwrap();
        assert_eq!(y.war, vec![1]);
        a.free(y.offset, 128, vec![2]);
        // [0,128) now answers 2 (which waited for 1); [128,256) still answers 1.
        let z = a.alloc(256).unwrap();
        assert_eq!(z.war, vec![1, 2]);
    }

    #[test]
    fn free_merges_neighbours() {
        let mut a = SbufAllocator::new(256);
        let x = a.alloc(64).unwrap();
        let y = a.alloc(64).unwrap();
        a.free(y.offset, 64, vec![]);
        a.free(x.offset, 64, vec![]);
        assert_eq!(a.largest_free(), 256);
        assert_eq!(a.used(), 0);
    }

    #[test]
    fn psum_round_robin_war() {
        let mut p = PsumBanks::new(8);
        let (b, w) = p.take(3);
        assert_eq!((b, w), (vec![0, 1, 2], vec![]));
        p.set_readers(0, vec![4]);
        let (b, _) = p.take(5);
        assert_eq!(b, vec![3, 4, 5, 6, 7]);
        let (b, w) = p.take(1);
        assert_eq!((b, w), (vec![0], vec![4]));
    }
}
