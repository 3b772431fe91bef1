//! Integer value-range analysis: an interval `[lo, hi]` that bounds every element of every
//! integer (`iN`, `uiN`, `i1`) tensor value of a module.
//!
//! Owns [`Interval`] and [`Ranges`], a side table indexed by [`ValueId`] (nothing is stored
//! on ops). Used by `narrow-index` to prove that i64 index arithmetic fits in i32.
//!
//! Invariants (soundness): for every integer value `v`, every element `v` can hold at run
//! time lies in `ranges.get(v)`, for every input. Arithmetic is done in `i128` with checked
//! operations; any result that might leave its type (and so wrap) is widened to the whole
//! type range. Anything not understood — function and region arguments, floats converted to
//! ints, ops without a rule — gets the whole type range. Index clamping of `gather` and
//! `dynamic_slice` is *not* used to bound anything: the index operands keep their own
//! ranges. Non-integer values have no interval.
//!
//! Region rules: a `reduce`, `reduce_window` or `scatter` whose body, run on elements of
//! `S = hull(input, init/update)`, provably returns elements of `S` ("closed" body, e.g.
//! max, min, select, overwrite) has results in `S`. A single-input `reduce`/`reduce_window`
//! whose body is one `add` and whose init is exactly 0 sums at most `n` elements (`n` the
//! reduced elements per output), so its results lie in `[n·min(lo,0), n·max(hi,0)]`; the
//! body's values are given that range too (each is a partial sum). Other region ops: the
//! body is analysed with whole-type arguments and the results get their type range.

use crate::ir_util::elem_as_i128;
use neuronc_ir::{Attr, ElemType, Module, OpId, OpKind, RegionId, TypeId, ValueDef, ValueId};

/// A closed interval of integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interval {
    pub lo: i128,
    pub hi: i128,
}

impl Interval {
    pub const fn new(lo: i128, hi: i128) -> Interval {
        Interval { lo, hi }
    }
    pub const fn point(v: i128) -> Interval {
        Interval { lo: v, hi: v }
    }
    /// Every value of an integer (or `i1`) element type; `None` for other types.
    pub fn of_type(e: ElemType) -> Option<Interval> {
        Some(match e {
            ElemType::I1 => Interval::new(0, 1),
            ElemType::Int(b) => {
                let half = 1i128 << (b - 1);
                Interval::new(-half, half - 1)
            }
            ElemType::UInt(b) => Interval::new(0, (1i128 << b) - 1),
            _ => return None,
        })
    }
    /// The smallest interval holding both.
    pub fn hull(self, o: Interval) -> Interval {
        Interval::new(self.lo.min(o.lo), self.hi.max(o.hi))
    }
    /// Whether `o` is a subset of `self`.
    pub fn contains(self, o: Interval) -> bool {
        self.lo <= o.lo && o.hi <= self.hi
    }
    /// Whether every value of the interval is representable in `e`.
    pub fn fits(self, e: ElemType) -> bool {
        Interval::of_type(e).is_some_and(|t| t.contains(self))
    }
    fn from_corners(c: [Option<i128>; 4]) -> Option<Interval> {
        let mut lo = c[0]?;
        let mut hi = lo;
        for x in c {
            let x = x?;
            lo = lo.min(x);
            hi = hi.max(x);
        }
        Some(Interval::new(lo, hi))
    }
    pub fn checked_add(self, o: Interval) -> Option<Interval> {
        Some(Interval::new(
            self.lo.checked_add(o.lo)?,
            self.hi.checked_add(o.hi)?,
        ))
    }
    pub fn checked_sub(self, o: Interval) -> Option<Interval> {
        Some(Interval::new(
            self.lo.checked_sub(o.hi)?,
            self.hi.checked_sub(o.lo)?,
        ))
    }
    pub fn checked_mul(self, o: Interval) -> Option<Interval> {
        let (a, b) = (self, o);
        Interval::from_corners([
            a.lo.checked_mul(b.lo),
            a.lo.checked_mul(b.hi),
            a.hi.checked_mul(b.lo),
            a.hi.checked_mul(b.hi),
        ])
    }
    pub fn negate(self) -> Interval {
        Interval::new(-self.hi, -self.lo)
    }
    pub fn abs(self) -> Interval {
        if self.lo >= 0 {
            self
        } else if self.hi <= 0 {
            self.negate()
        } else {
            Interval::new(0, self.hi.max(-self.lo))
        }
    }
    pub fn max(self, o: Interval) -> Interval {
        Interval::new(self.lo.max(o.lo), self.hi.max(o.hi))
    }
    pub fn min(self, o: Interval) -> Interval {
        Interval::new(self.lo.min(o.lo), self.hi.min(o.hi))
    }
    /// Truncating division with XLA's conventions: `x / 0 = -1` (signed types) and
    /// `MIN / -1 = MIN` (which this interval, being exact, shows as out of type range).
    pub fn div_trunc(self, o: Interval) -> Interval {
        let mut out: Option<Interval> = None;
        let mut join = |i: Interval| out = Some(out.map_or(i, |o: Interval| o.hull(i)));
        if o.contains(Interval::point(0)) {
            join(Interval::point(-1));
        }
        // Truncating division is monotone in each argument on a divisor range of one sign,
        // so the extremes are at the corners.
        for part in [
            Interval::new(o.lo, o.hi.min(-1)),
            Interval::new(o.lo.max(1), o.hi),
        ] {
            if part.lo <= part.hi {
                let (a, b) = (self, part);
                join(Interval::new(
                    (a.lo / b.lo)
                        .min(a.lo / b.hi)
                        .min(a.hi / b.lo)
                        .min(a.hi / b.hi),
                    (a.lo / b.lo)
                        .max(a.lo / b.hi)
                        .max(a.hi / b.lo)
                        .max(a.hi / b.hi),
                ));
            }
        }
        out.unwrap_or(Interval::point(0))
    }
    /// Truncating remainder (sign of the dividend, `|r| < |divisor|`); `x % 0 = x`.
    pub fn rem_trunc(self, o: Interval) -> Interval {
        let mut r = Interval::new(self.lo.min(0), self.hi.max(0));
        let zero = o.contains(Interval::point(0));
        if !zero {
            let m = o.lo.abs().max(o.hi.abs()) - 1;
            r = Interval::new(r.lo.max(-m), r.hi.min(m));
        }
        r
    }
}

/// Ranges of every integer value of one module, indexed by [`ValueId`].
#[derive(Clone, Debug, Default)]
pub struct Ranges {
    iv: Vec<Option<Interval>>,
    /// The whole range of each integer tensor type, by [`TypeId`] (`None`: not an
    /// integer tensor type); looked up for every value the analysis sets.
    type_range: Vec<Option<Interval>>,
}

impl Ranges {
    /// Analyses every function body of `m` (forward, one pass: SSA has no cycles outside
    /// regions, and region arguments are bounded by the rules in the module docs).
    pub fn analyze(m: &Module) -> Ranges {
        let mut r = Ranges::unanalyzed(m);
        for f in &m.funcs {
            r.region(m, f.body, None);
        }
        r
    }

    /// Like [`Ranges::analyze`], but only for what the ranges of the values of `roots`
    /// (their operands, results and the values of their regions) depend on: the
    /// function-level ops that define those values (or contain them) and, transitively,
    /// the function-level ops defining the integer values those read. Every value of
    /// those ops gets the interval [`Ranges::analyze`] gives it (an op's intervals depend
    /// only on the intervals of the integer values it reads); other values are left
    /// without one.
    pub fn analyze_for(m: &Module, roots: &[OpId]) -> Ranges {
        let mut r = Ranges::unanalyzed(m);
        for f in &m.funcs {
            for &a in &m.region(f.body).args {
                r.set(m, a, None);
            }
        }
        let mut state = vec![Visit::New; m.ops.len()];
        for &root in roots {
            // The roots' own operands are needed even when the analysis of the root's
            // function-level op reads nothing (no integer value defined).
            let top = function_level(m, root);
            for d in r.reads(m, top) {
                r.demand(m, d, &mut state);
            }
            r.demand(m, top, &mut state);
        }
        r
    }

    fn unanalyzed(m: &Module) -> Ranges {
        let type_range = (0..m.types.len() as u32)
            .map(|i| {
                m.types
                    .tensor_of(TypeId(i))
                    .and_then(|t| Interval::of_type(t.elem))
            })
            .collect();
        Ranges {
            iv: vec![None; m.values.len()],
            type_range,
        }
    }

    /// Analyses the function-level op `top` after the function-level ops it depends on
    /// (depth first, with an explicit stack: dependency chains can be long).
    fn demand(&mut self, m: &Module, top: OpId, state: &mut [Visit]) {
        if state[top.index()] != Visit::New {
            return;
        }
        state[top.index()] = Visit::Pending;
        let mut stack = vec![(top, self.dependencies(m, top))];
        while let Some((op, deps)) = stack.last_mut() {
            if let Some(d) = deps.pop() {
                if state[d.index()] == Visit::New {
                    state[d.index()] = Visit::Pending;
                    let dd = self.dependencies(m, d);
                    stack.push((d, dd));
                }
                continue;
            }
            let op = *op;
            stack.pop();
            self.op(m, op);
            state[op.index()] = Visit::Done;
        }
    }

    /// [`Ranges::reads`] of the function-level op `top`, or nothing when `top` defines no
    /// integer value (its analysis reads nothing then).
    fn dependencies(&self, m: &Module, top: OpId) -> Vec<OpId> {
        if !self.defines_int(m, top) {
            return Vec::new();
        }
        self.reads(m, top)
    }

    /// The other function-level ops defining integer values that `top` (or an op of its
    /// regions) reads.
    fn reads(&self, m: &Module, top: OpId) -> Vec<OpId> {
        let mut out = Vec::new();
        let mut visit = |op: OpId| {
            for &v in &m.op(op).operands {
                if self.type_range(m, v).is_none() {
                    continue;
                }
                let def = match m.value(v).def {
                    ValueDef::Result(d, _) => Some(d),
                    ValueDef::RegionArg(r, _) => m.region(r).parent,
                };
                if let Some(t) = def.map(|d| function_level(m, d)).filter(|&t| t != top) {
                    out.push(t);
                }
            }
        };
        visit(top);
        for &r in &m.op(top).regions {
            m.walk_region(r, &mut visit);
        }
        out
    }

    /// The interval of `v` (`None` for non-integer values and for values created after
    /// the analysis ran).
    pub fn get(&self, v: ValueId) -> Option<Interval> {
        self.iv.get(v.index()).copied().flatten()
    }

    /// The whole range of `v`'s type, if it is an integer tensor.
    fn type_range(&self, m: &Module, v: ValueId) -> Option<Interval> {
        self.type_range
            .get(m.value_type(v).0 as usize)
            .copied()
            .flatten()
    }

    /// Whether `op` or an op of its regions defines an integer value (result or region
    /// argument): only those values get intervals.
    fn defines_int(&self, m: &Module, op: OpId) -> bool {
        let o = m.op(op);
        o.results.iter().any(|&r| self.type_range(m, r).is_some())
            || o.regions.iter().any(|&region| {
                let r = m.region(region);
                r.args.iter().any(|&a| self.type_range(m, a).is_some())
                    || r.ops.iter().any(|&inner| self.defines_int(m, inner))
            })
    }

    fn set(&mut self, m: &Module, v: ValueId, iv: Option<Interval>) {
        let ty = self.type_range(m, v);
        let bounded = match (iv, ty) {
            (Some(i), Some(t)) if t.contains(i) => Some(i),
            (_, t) => t,
        };
        if let Some(slot) = self.iv.get_mut(v.index()) {
            *slot = bounded;
        }
    }

    /// Analyses `region` with its arguments bounded by `args` (`None`: type ranges);
    /// returns the intervals of the terminator's operands.
    fn region(
        &mut self,
        m: &Module,
        region: RegionId,
        args: Option<&[Option<Interval>]>,
    ) -> Vec<Option<Interval>> {
        let r = m.region(region);
        for (i, &a) in r.args.iter().enumerate() {
            let iv = args.and_then(|a| a.get(i).copied().flatten());
            self.set(m, a, iv);
        }
        let mut ret = Vec::new();
        for &op in &r.ops {
            let o = m.op(op);
            if o.kind.is_terminator() {
                ret = o.operands.iter().map(|&v| self.get(v)).collect();
            } else {
                self.op(m, op);
            }
        }
        ret
    }

    fn op(&mut self, m: &Module, op: OpId) {
        let o = m.op(op);
        if !self.defines_int(m, op) {
            // Non-integer values have no interval: nothing to compute (their slots are
            // `None` from the start, and `set` would keep them so).
            return;
        }
        if o.results.len() == 1 && o.regions.is_empty() {
            let iv = self.transfer(m, op);
            self.set(m, o.results[0], iv);
            return;
        }
        let results: Vec<Option<Interval>> = match o.kind {
            OpKind::Reduce | OpKind::ReduceWindow => self.reduce(m, op),
            OpKind::Scatter => self.scatter(m, op),
            OpKind::Sort => {
                self.regions_whole(m, op);
                o.operands.iter().map(|&v| self.get(v)).collect()
            }
            _ if !o.regions.is_empty() => {
                self.regions_whole(m, op);
                vec![None; o.results.len()]
            }
            _ => vec![None; o.results.len()],
        };
        for (i, &r) in o.results.iter().enumerate() {
            self.set(m, r, results.get(i).copied().flatten());
        }
    }

    /// Analyses every region of `op` with whole-type arguments.
    fn regions_whole(&mut self, m: &Module, op: OpId) {
        for &r in &m.op(op).regions {
            self.region(m, r, None);
        }
    }

    /// The result interval of a single-result op without regions.
    fn transfer(&self, m: &Module, op: OpId) -> Option<Interval> {
        let o = m.op(op);
        let a = |i: usize| o.operands.get(i).and_then(|&v| self.get(v));
        use OpKind::*;
        match o.kind {
            Constant => constant_range(m, op),
            Iota => {
                let t = m.tensor_type(o.results[0])?;
                let d = usize::try_from(o.attrs.int("iota_dimension")?).ok()?;
                let n = *t.shape.get(d)?;
                Some(Interval::new(0, (n as i128 - 1).max(0)))
            }
            Convert => a(0),
            Add => a(0)?.checked_add(a(1)?),
            Subtract => a(0)?.checked_sub(a(1)?),
            Multiply => a(0)?.checked_mul(a(1)?),
            Negate => Some(a(0)?.negate()),
            // Bitwise not of a signed value is -x - 1 (other types fall back to their range).
            Not => Some(a(0)?.negate().checked_sub(Interval::point(1))?),
            Abs => Some(a(0)?.abs()),
            Divide if !elem(m, o.results[0])?.is_unsigned() => Some(a(0)?.div_trunc(a(1)?)),
            Remainder if !elem(m, o.results[0])?.is_unsigned() => Some(a(0)?.rem_trunc(a(1)?)),
            Maximum => Some(a(0)?.max(a(1)?)),
            Minimum => Some(a(0)?.min(a(1)?)),
            Clamp => Some(a(1)?.max(a(0)?).min(a(2)?)),
            Select => Some(a(1)?.hull(a(2)?)),
            Sign => {
                let x = a(0)?;
                Some(Interval::new(x.lo.signum(), x.hi.signum()))
            }
            And => {
                let (x, y) = (a(0)?, a(1)?);
                match (x.lo >= 0, y.lo >= 0) {
                    (true, true) => Some(Interval::new(0, x.hi.min(y.hi))),
                    (true, false) => Some(Interval::new(0, x.hi)),
                    (false, true) => Some(Interval::new(0, y.hi)),
                    (false, false) => None,
                }
            }
            Or | Xor => {
                let (x, y) = (a(0)?, a(1)?);
                if x.lo < 0 || y.lo < 0 {
                    return None;
                }
                let bits = 128 - x.hi.max(y.hi).leading_zeros();
                Some(Interval::new(0, (1i128 << bits) - 1))
            }
            BroadcastInDim | Broadcast | Reshape | Transpose | Slice | Reverse | DynamicSlice
            | Gather | TorchIndexSelect => a(0),
            Pad | DynamicUpdateSlice => Some(a(0)?.hull(a(1)?)),
            Concatenate => {
                let mut it = o.operands.iter().map(|&v| self.get(v));
                let first = it.next()??;
                it.try_fold(first, |acc, x| Some(acc.hull(x?)))
            }
            _ => None,
        }
    }

    /// `reduce` / `reduce_window`: closed bodies, or a zero-initialised sum.
    fn reduce(&mut self, m: &Module, op: OpId) -> Vec<Option<Interval>> {
        let o = m.op(op);
        let n = o.operands.len() / 2;
        let hulls: Vec<Option<Interval>> = (0..n)
            .map(|i| Some(self.get(o.operands[i])?.hull(self.get(o.operands[n + i])?)))
            .collect();
        if let Some(out) = self.closed_body(m, op, &hulls, &hulls) {
            return out;
        }
        if let Some(sum) = self.zero_init_sum(m, op) {
            let args = [Some(sum), Some(sum)];
            let body = o.regions[0];
            self.region(m, body, Some(&args));
            // Every value the body computes is a partial sum of the reduction.
            for &inner in &m.region(body).ops {
                for &r in &m.op(inner).results {
                    self.set(m, r, Some(sum));
                }
            }
            return vec![Some(sum)];
        }
        self.regions_whole(m, op);
        vec![None; o.results.len()]
    }

    /// `scatter` whose update body is closed over `hull(input, update)` (overwrite, max, min).
    fn scatter(&mut self, m: &Module, op: OpId) -> Vec<Option<Interval>> {
        let o = m.op(op);
        let n = (o.operands.len().saturating_sub(1)) / 2;
        let hulls: Vec<Option<Interval>> = (0..n)
            .map(|i| {
                Some(
                    self.get(o.operands[i])?
                        .hull(self.get(o.operands[n + 1 + i])?),
                )
            })
            .collect();
        if let Some(out) = self.closed_body(m, op, &hulls, &hulls) {
            return out;
        }
        self.regions_whole(m, op);
        vec![None; o.results.len()]
    }

    /// Analyses the single body of `op` with arguments `(lhs..., rhs...)` bounded by
    /// `lhs`/`rhs`; if every integer result it returns stays within `lhs`, returns `lhs`
    /// as the op's result intervals.
    fn closed_body(
        &mut self,
        m: &Module,
        op: OpId,
        lhs: &[Option<Interval>],
        rhs: &[Option<Interval>],
    ) -> Option<Vec<Option<Interval>>> {
        let o = m.op(op);
        if o.regions.len() != 1 || o.results.len() != lhs.len() {
            return None;
        }
        let args: Vec<Option<Interval>> = lhs.iter().chain(rhs).copied().collect();
        let ret = self.region(m, o.regions[0], Some(&args));
        let closed = ret.len() == lhs.len()
            && lhs.iter().zip(&ret).enumerate().all(|(i, (s, r))| {
                let is_int = elem(m, o.results[i]).is_some_and(|e| Interval::of_type(e).is_some());
                !is_int || matches!((s, r), (Some(s), Some(r)) if s.contains(*r))
            });
        closed.then(|| lhs.to_vec())
    }

    /// For a single-input reduction whose body is `return add(a, b)` and whose init is the
    /// constant 0: the range of any sum of at most `n` input elements.
    fn zero_init_sum(&self, m: &Module, op: OpId) -> Option<Interval> {
        let o = m.op(op);
        if o.operands.len() != 2 || o.regions.len() != 1 {
            return None;
        }
        if self.get(o.operands[1])? != Interval::point(0) || !is_add_body(m, o.regions[0]) {
            return None;
        }
        let shape = &m.tensor_type(o.operands[0])?.shape;
        let n: i128 = if o.kind == OpKind::Reduce {
            let dims = o.attrs.i64_array("dimensions")?;
            dims.iter()
                .map(|&d| shape.get(usize::try_from(d).ok()?).map(|&s| s as i128))
                .product::<Option<i128>>()?
        } else {
            let w = o.attrs.i64_array("window_dimensions")?;
            w.iter().map(|&s| s as i128).product()
        };
        let x = self.get(o.operands[0])?;
        let lo = n.checked_mul(x.lo.min(0))?;
        let hi = n.checked_mul(x.hi.max(0))?;
        Some(Interval::new(lo, hi))
    }
}

/// Progress of [`Ranges::analyze_for`] on a function-level op.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Visit {
    New,
    Pending,
    Done,
}

/// The op of a function body that is `op` or contains it.
fn function_level(m: &Module, mut op: OpId) -> OpId {
    while let Some(owner) = m.op(op).parent.and_then(|r| m.region(r).parent) {
        op = owner;
    }
    op
}

/// Whether `region` is exactly `%s = add %arg0, %arg1; return %s`.
fn is_add_body(m: &Module, region: RegionId) -> bool {
    let r = m.region(region);
    let [add, ret] = r.ops[..] else {
        return false;
    };
    let (a, t) = (m.op(add), m.op(ret));
    let mut ops = a.operands.clone();
    ops.sort();
    let mut args = r.args.clone();
    args.sort();
    a.kind == OpKind::Add && ops == args && t.operands == a.results
}

/// The element type of a tensor value.
pub fn elem(m: &Module, v: ValueId) -> Option<ElemType> {
    m.tensor_type(v).map(|t| t.elem)
}

/// The smallest and largest element of an integer constant.
fn constant_range(m: &Module, op: OpId) -> Option<Interval> {
    let Attr::Elements(e) = m.op(op).attrs.get("value")? else {
        return None;
    };
    if !e.elem.is_integer() {
        return None;
    }
    let count = if e.is_splat() { 1 } else { e.len };
    let mut out: Option<Interval> = None;
    for i in 0..count {
        let v = elem_as_i128(e.elem, e.element_bytes(i))?;
        out = Some(out.map_or(Interval::point(v), |o| o.hull(Interval::point(v))));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_arithmetic_matches_hand_results() {
        let a = Interval::new(-3, 7);
        let b = Interval::new(2, 5);
        assert_eq!(a.checked_add(b), Some(Interval::new(-1, 12)));
        assert_eq!(a.checked_sub(b), Some(Interval::new(-8, 5)));
        assert_eq!(a.checked_mul(b), Some(Interval::new(-15, 35)));
        assert_eq!(a.abs(), Interval::new(0, 7));
        // -3/2 = -1 (truncation), 7/2 = 3.
        assert_eq!(a.div_trunc(b), Interval::new(-1, 3));
        // Divisor may be 0: x / 0 = -1 joins the quotients of the nonzero parts.
        assert_eq!(
            Interval::new(10, 20).div_trunc(Interval::new(0, 2)),
            Interval::new(-1, 20)
        );
        // MIN / -1 leaves i32: the interval shows it.
        let min = Interval::point(i32::MIN as i128);
        assert!(!min.div_trunc(Interval::point(-1)).fits(ElemType::Int(32)));
        assert_eq!(a.rem_trunc(b), Interval::new(-3, 4));
        assert_eq!(
            Interval::new(5, 9).rem_trunc(Interval::new(0, 3)),
            Interval::new(0, 9)
        );
        let huge = Interval::of_type(ElemType::UInt(64)).unwrap();
        assert_eq!(huge.checked_mul(huge), None);
    }

    /// Every fixture module (chunks split at `// -----`): the demand-driven analysis of
    /// each function-level op gives every value of that op the interval of the whole-
    /// module analysis (the oracle).
    #[test]
    fn demand_driven_analysis_matches_the_whole_module_analysis() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
        let mut files = Vec::new();
        let mut dirs = vec![root];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "mlir") {
                    files.push(p);
                }
            }
        }
        assert!(files.len() > 50, "fixtures not found");
        let mut checked = 0;
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for chunk in text.split("// -----") {
                let Ok(m) = neuronc_ir::parse::parse_module(chunk) else {
                    continue;
                };
                let full = Ranges::analyze(&m);
                let mut tops = Vec::new();
                for func in &m.funcs {
                    tops.extend(m.region(func.body).ops.iter().copied());
                }
                // A few roots at a time keeps the test fast on the large models.
                for root in tops.iter().step_by(7) {
                    let part = Ranges::analyze_for(&m, &[*root]);
                    let mut values = m.op(*root).results.clone();
                    values.extend(m.op(*root).operands.iter().copied());
                    for &r in &m.op(*root).regions {
                        m.walk_region(r, &mut |op| values.extend(&m.op(op).results));
                    }
                    for v in values {
                        assert_eq!(part.get(v), full.get(v), "{}: {v}", f.display());
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 1000);
    }

    #[test]
    fn type_ranges() {
        assert_eq!(
            Interval::of_type(ElemType::Int(32)),
            Some(Interval::new(-(1 << 31), (1 << 31) - 1))
        );
        assert_eq!(
            Interval::of_type(ElemType::UInt(8)),
            Some(Interval::new(0, 255))
        );
        assert_eq!(Interval::of_type(ElemType::F32), None);
    }
}
