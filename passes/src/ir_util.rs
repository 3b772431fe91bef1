//! Small IR queries and edits shared by the passes: use counts, defining ops, purity,
//! constant inspection and creation, op erasure, operand renaming, region cloning (on
//! `neuronc_ir::clone`, re-exported here), and the private
//! functions and `stablehlo.composite` calls that outlining passes create.
//!
//! Invariants: nothing here changes the meaning of a module by itself; edits
//! ([`erase_op`], [`clone_region_into`]) keep the arena consistent (erased ops are detached
//! from their region and keep their ids).

pub use neuronc_ir::clone::{clone_op, ValueMap};
use neuronc_ir::{
    Attr, DenseData, DenseElements, ElemType, Func, Module, NamedAttrs, OpId, OpKind, RegionId,
    Span, TypeId, ValueDef, ValueId,
};
use std::sync::Arc;

/// Human-readable location of an op for traces: its `loc(...)` text when it has one, else
/// its source byte offset, else its arena id.
pub fn op_location(m: &Module, op: OpId) -> String {
    let o = m.op(op);
    let kind = o.kind.name();
    if let Some(text) = o.loc.and_then(|l| m.locs.get(l.index())) {
        return format!("{kind} {text}");
    }
    if o.span != Default::default() {
        return format!("{kind} at byte {}", o.span.start);
    }
    format!("{kind} ({op})")
}

/// The op defining `v`, if `v` is an op result.
pub fn def_op(m: &Module, v: ValueId) -> Option<OpId> {
    match m.value(v).def {
        ValueDef::Result(op, _) => Some(op),
        ValueDef::RegionArg(..) => None,
    }
}

/// Walks the row-major dimension groups of a reshape from shape `from` to shape `to`:
/// consecutive runs of dimensions with equal products, calling `f(from range, to range)`
/// for each in order. Returns false (after calling `f` for the groups before) when the
/// shapes have no such grouping (their products differ).
pub fn for_each_reshape_group(
    from: &[i64],
    to: &[i64],
    mut f: impl FnMut(std::ops::Range<usize>, std::ops::Range<usize>),
) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < from.len() || j < to.len() {
        let (si, sj) = (i, j);
        let (mut pf, mut pt) = (1i128, 1i128);
        if i < from.len() {
            pf *= from[i] as i128;
            i += 1;
        }
        if j < to.len() {
            pt *= to[j] as i128;
            j += 1;
        }
        while pf != pt {
            if pf < pt && i < from.len() {
                pf *= from[i] as i128;
                i += 1;
            } else if pt < pf && j < to.len() {
                pt *= to[j] as i128;
                j += 1;
            } else {
                return false;
            }
        }
        f(si..i, sj..j);
    }
    true
}

/// The op defining `v` if it is of kind `kind`.
pub fn def_of_kind(m: &Module, v: ValueId, kind: OpKind) -> Option<OpId> {
    def_op(m, v).filter(|&op| m.op(op).kind == kind)
}

/// Number of uses of every value by live ops (indexed by [`ValueId`]).
pub fn use_counts(m: &Module) -> Vec<u32> {
    let mut counts = vec![0u32; m.values.len()];
    m.walk_ops(|op| {
        for &v in &m.op(op).operands {
            counts[v.index()] += 1;
        }
    });
    counts
}

/// Whether an op may be removed when its results are unused, and merged with an identical
/// op: no side effects (I/O, collectives, RNG, calls, custom calls), recursively for the ops
/// of its regions.
#[inline]
pub fn is_pure(m: &Module, op: OpId) -> bool {
    let o = m.op(op);
    if o.regions.is_empty() && o.kind != OpKind::Composite {
        return pure_kind(o.kind);
    }
    is_pure_op(m, o)
}

/// [`is_pure`] of an op that may have regions or be a composite.
fn is_pure_op(m: &Module, o: &neuronc_ir::Op) -> bool {
    let kind_ok = match o.kind {
        OpKind::Composite => is_neuronc_composite(o),
        k => pure_kind(k),
    };
    kind_ok
        && o.regions.iter().all(|&r| {
            m.region(r)
                .ops
                .iter()
                .all(|&inner| m.op(inner).kind.is_terminator() || is_pure(m, inner))
        })
}

/// Whether ops of kind `k` (other than `composite`) are pure by their kind; a table built
/// once, since every pass asks for every op.
#[inline]
pub(crate) fn pure_kind(k: OpKind) -> bool {
    static TABLE: std::sync::OnceLock<Vec<bool>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        OpKind::ALL
            .iter()
            .map(|&k| match k {
                OpKind::Rng
                | OpKind::RngBitGenerator
                | OpKind::Call
                | OpKind::AfterAll
                | OpKind::CreateToken
                | OpKind::OptimizationBarrier => false,
                k => !k.has_side_effect() && !k.is_terminator(),
            })
            .collect()
    });
    table[k as usize]
}

/// A `stablehlo.composite` created by this crate (`neuronc.*`), whose decomposition is
/// known to be pure.
pub fn is_neuronc_composite(o: &neuronc_ir::Op) -> bool {
    o.kind == OpKind::Composite
        && o.attrs
            .str("name")
            .is_some_and(|n| n.starts_with("neuronc."))
}

/// The distinct regions holding `ops` (detached ops are skipped), in id order: the
/// regions a pass that places or removes those ops rebuilds.
pub fn parent_regions(m: &Module, ops: impl IntoIterator<Item = OpId>) -> Vec<RegionId> {
    let mut regions: Vec<RegionId> = ops.into_iter().filter_map(|op| m.op(op).parent).collect();
    regions.sort_unstable();
    regions.dedup();
    regions
}

/// Renames operands through `to` (indexed by value; `u32::MAX`: not renamed) in the ops
/// of `region` and of the regions nested in them.
pub fn rename_operands(m: &mut Module, region: RegionId, to: &[u32]) {
    for i in 0..m.region(region).ops.len() {
        let op = m.region(region).ops[i];
        for v in &mut m.op_mut(op).operands {
            if let Some(&n) = to.get(v.index()).filter(|&&n| n != u32::MAX) {
                *v = ValueId(n);
            }
        }
        for j in 0..m.op(op).regions.len() {
            let r = m.op(op).regions[j];
            rename_operands(m, r, to);
        }
    }
}

/// Detaches `op` from its region. The op stays in the arena.
pub fn erase_op(m: &mut Module, op: OpId) {
    if let Some(r) = m.op(op).parent {
        m.region_mut(r).ops.retain(|&o| o != op);
    }
    m.op_mut(op).parent = None;
}

/// The dense payload of `v` if it is defined by `stablehlo.constant`.
pub fn constant_of(m: &Module, v: ValueId) -> Option<&DenseElements> {
    let op = def_of_kind(m, v, OpKind::Constant)?;
    match m.op(op).attrs.get("value")? {
        Attr::Elements(e) => Some(e),
        _ => None,
    }
}

/// If `v` is a splat — a constant whose elements are all equal, possibly seen through
/// `broadcast_in_dim`/`reshape` — the element type and the one element's bytes.
pub fn splat_of(m: &Module, v: ValueId) -> Option<(ElemType, Vec<u8>)> {
    splat_ref(m, v).map(|(elem, bytes)| (elem, bytes.to_vec()))
}

/// [`splat_of`] without copying: the element bytes are borrowed from the constant.
/// Inlined: rules ask it of operands that are almost never splats, and the walk up the
/// `broadcast_in_dim`/`reshape` chain rejects those in a few instructions.
#[inline]
pub fn splat_ref(m: &Module, v: ValueId) -> Option<(ElemType, &[u8])> {
    let mut v = v;
    loop {
        let ValueDef::Result(op, _) = m.value(v).def else {
            return None;
        };
        let o = m.op(op);
        match o.kind {
            OpKind::BroadcastInDim | OpKind::Reshape => v = o.operands[0],
            OpKind::Constant => return constant_splat(o),
            _ => return None,
        }
    }
}

/// The element type and the one element's bytes of a `stablehlo.constant` whose elements
/// are all equal.
fn constant_splat(o: &neuronc_ir::Op) -> Option<(ElemType, &[u8])> {
    let Some(Attr::Elements(e)) = o.attrs.get("value") else {
        return None;
    };
    if e.len == 0 {
        return None;
    }
    let first = e.element_bytes(0);
    let all_equal = match &e.data {
        DenseData::Splat(_) => true,
        DenseData::Full(bytes) => all_elements_equal(bytes, first.len(), e.len),
    };
    all_equal.then_some((e.elem, first))
}

/// Whether the `len` elements of `w` bytes each at the start of `bytes` are all equal:
/// element `i` equals element `i + 1` for every `i` exactly when the bytes equal
/// themselves shifted by one element, one comparison of the whole payload.
pub(crate) fn all_elements_equal(bytes: &[u8], w: usize, len: u64) -> bool {
    match usize::try_from(len).ok().and_then(|n| n.checked_mul(w)) {
        Some(n) if n >= w && n <= bytes.len() => bytes[w..n] == bytes[..n - w],
        // A payload shorter than its type says (never built by the parser): compare
        // element by element, as `element_bytes` would.
        _ => (1..len).all(|i| {
            let at = i as usize * w;
            bytes[at..at + w] == bytes[..w]
        }),
    }
}

/// `splat_is(&splat_of(m, v), x)` without allocating.
#[inline]
pub fn is_splat_value(m: &Module, v: ValueId, x: f64) -> bool {
    splat_ref(m, v).is_some_and(|(elem, bytes)| splat_bytes_are(elem, bytes, x))
}

/// The numeric value of one element's bytes as `f64` (floats of 16/32/64 bits, ints, i1).
pub fn elem_as_f64(elem: ElemType, bytes: &[u8]) -> Option<f64> {
    Some(match elem {
        ElemType::F32 => f32::from_le_bytes(bytes.try_into().ok()?) as f64,
        ElemType::F64 => f64::from_le_bytes(bytes.try_into().ok()?),
        ElemType::F16 => half::f16::from_le_bytes(bytes.try_into().ok()?).to_f64(),
        ElemType::BF16 => half::bf16::from_le_bytes(bytes.try_into().ok()?).to_f64(),
        ElemType::I1 | ElemType::Int(_) | ElemType::UInt(_) => elem_as_i128(elem, bytes)? as f64,
        _ => return None,
    })
}

/// The value of an integer (or `i1`) element's bytes.
pub fn elem_as_i128(elem: ElemType, bytes: &[u8]) -> Option<i128> {
    let mut buf = [0u8; 16];
    let n = bytes.len().min(8);
    buf[..n].copy_from_slice(&bytes[..n]);
    let raw = u64::from_le_bytes(buf[..8].try_into().ok()?);
    Some(match elem {
        ElemType::I1 => (raw & 1) as i128,
        ElemType::UInt(b) => (raw & mask(b)) as i128,
        ElemType::Int(b) => {
            let shift = 64 - b as u32;
            (((raw << shift) as i64) >> shift) as i128
        }
        _ => return None,
    })
}

fn mask(bits: u8) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Whether the splat `(elem, bytes)` is exactly the number `x` (floats: same bits as the
/// value converted to the type, so `-0.0` and `+0.0` differ).
pub fn splat_is(splat: &Option<(ElemType, Vec<u8>)>, x: f64) -> bool {
    splat
        .as_ref()
        .is_some_and(|(elem, bytes)| splat_bytes_are(*elem, bytes, x))
}

/// Whether one element's bytes `bytes` of type `elem` are exactly the number `x` (the
/// test of [`splat_is`]).
fn splat_bytes_are(elem: ElemType, bytes: &[u8], x: f64) -> bool {
    if elem.is_float() {
        return match elem {
            ElemType::F32 => bytes == (x as f32).to_le_bytes(),
            ElemType::F64 => bytes == x.to_le_bytes(),
            ElemType::F16 => bytes == half::f16::from_f64(x).to_le_bytes(),
            ElemType::BF16 => bytes == half::bf16::from_f64(x).to_le_bytes(),
            _ => encode_scalar(elem, x).is_some_and(|b| b == bytes),
        };
    }
    if elem.is_integer() || elem.is_bool() {
        return elem_as_i128(elem, bytes).is_some_and(|v| v as f64 == x);
    }
    false
}

/// Little-endian bytes of `x` in element type `elem` (ints must be exact).
pub fn encode_scalar(elem: ElemType, x: f64) -> Option<Vec<u8>> {
    Some(match elem {
        ElemType::F32 => (x as f32).to_le_bytes().to_vec(),
        ElemType::F64 => x.to_le_bytes().to_vec(),
        ElemType::F16 => half::f16::from_f64(x).to_le_bytes().to_vec(),
        ElemType::BF16 => half::bf16::from_f64(x).to_le_bytes().to_vec(),
        ElemType::I1 => vec![u8::from(x != 0.0)],
        ElemType::Int(_) | ElemType::UInt(_) => {
            if x.fract() != 0.0 {
                return None;
            }
            let w = elem.byte_width();
            (x as i64).to_le_bytes()[..w].to_vec()
        }
        _ => return None,
    })
}

/// Creates (detached) a `stablehlo.constant` of type `ty` whose elements all equal `bytes`.
pub fn make_splat_constant(m: &mut Module, ty: TypeId, bytes: Vec<u8>) -> Option<OpId> {
    m.create_splat_constant(ty, bytes)
}

/// Creates (detached) a `stablehlo.constant` with the given payload.
pub fn make_constant(m: &mut Module, ty: TypeId, dense: DenseElements) -> OpId {
    let mut attrs = NamedAttrs::new();
    attrs.set("value", Attr::Elements(Arc::new(dense)));
    m.create_op(OpKind::Constant, Vec::new(), &[ty], attrs)
}

/// The function a symbol reference names: `a` for `@a`, `a` and `@a::@b` (a nested
/// reference keeps its root alive and follows its root's renames).
pub fn symbol_root(s: &str) -> &str {
    s.split("::").next().unwrap_or(s).trim_start_matches('@')
}

/// A [`ValueMap`] over a fixed range of value ids, backed by a vector; [`DenseValueMap::clear`]
/// empties it in constant time (entries are stamped with a generation).
#[derive(Clone, Debug, Default)]
pub struct DenseValueMap {
    to: Vec<(u32, ValueId)>,
    generation: u32,
}

impl DenseValueMap {
    /// A map able to hold keys `0..len` (later keys are ignored by `record`).
    pub fn new(len: usize) -> Self {
        DenseValueMap {
            to: vec![(0, ValueId(0)); len],
            generation: 1,
        }
    }
    /// Removes every entry.
    pub fn clear(&mut self) {
        self.generation += 1;
    }
    /// The value `v` maps to, or `None` when it has no entry (unlike
    /// [`ValueMap::lookup`], which answers `v` itself).
    pub fn get(&self, v: ValueId) -> Option<ValueId> {
        match self.to.get(v.index()) {
            Some(&(g, to)) if g == self.generation => Some(to),
            _ => None,
        }
    }
}

impl ValueMap for DenseValueMap {
    fn lookup(&self, v: ValueId) -> ValueId {
        self.get(v).unwrap_or(v)
    }
    fn record(&mut self, from: ValueId, to: ValueId) {
        if let Some(slot) = self.to.get_mut(from.index()) {
            *slot = (self.generation, to);
        }
    }
}

/// Deep-copies the ops of region `src` (except its terminator) to the end of region `dst`,
/// mapping values through `map` (which must already map `src`'s arguments). Returns the
/// terminator's operands, mapped. Nested regions are cloned recursively.
pub fn clone_region_into(
    m: &mut Module,
    src: RegionId,
    dst: RegionId,
    map: &mut impl ValueMap,
) -> Vec<ValueId> {
    let ops = m.region(src).ops.clone();
    let mut ret = Vec::new();
    for op in ops {
        if m.op(op).kind.is_terminator() {
            ret = m.op(op).operands.iter().map(|&v| map.lookup(v)).collect();
            continue;
        }
        let new = clone_op(m, op, map);
        m.append_op(dst, new);
    }
    ret
}

/// Whether two attribute lists are identical, comparing floats by bit pattern (so `0.0`
/// and `-0.0` differ, and equal NaNs are equal).
pub fn attrs_identical(a: &NamedAttrs, b: &NamedAttrs) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b.iter())
            .all(|((na, va), (nb, vb))| na == nb && attr_identical(va, vb))
}

/// Whether two dense payloads hold the same type and element bytes (without copying).
pub fn dense_identical(x: &DenseElements, y: &DenseElements) -> bool {
    if x.ty != y.ty || x.len != y.len {
        return false;
    }
    match (&x.data, &y.data) {
        (DenseData::Full(a), DenseData::Full(b)) => a == b,
        (DenseData::Splat(a), DenseData::Splat(b)) => a == b,
        _ => (0..x.len).all(|i| x.element_bytes(i) == y.element_bytes(i)),
    }
}

fn attr_identical(a: &Attr, b: &Attr) -> bool {
    match (a, b) {
        (Attr::Float(x, tx), Attr::Float(y, ty)) => x.to_bits() == y.to_bits() && tx == ty,
        (Attr::FloatArray(tx, xs), Attr::FloatArray(ty, ys)) => {
            tx == ty
                && xs.len() == ys.len()
                && xs.iter().zip(ys).all(|(x, y)| x.to_bits() == y.to_bits())
        }
        (Attr::Array(xs), Attr::Array(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| attr_identical(x, y))
        }
        (Attr::Dict(x), Attr::Dict(y)) => attrs_identical(x, y),
        (Attr::Elements(x), Attr::Elements(y)) => Arc::ptr_eq(x, y) || dense_identical(x, y),
        _ => a == b,
    }
}

/// Appends a private function `name` whose body is `body` (arguments and return already
/// in place) and whose results have `result_types`.
pub fn add_private_func(m: &mut Module, name: String, body: RegionId, result_types: Vec<TypeId>) {
    let args = m.region(body).args.len();
    let results = result_types.len();
    m.funcs.push(Func {
        name,
        visibility: Some("private".into()),
        body,
        result_types,
        arg_attrs: empty_attrs(args),
        result_attrs: empty_attrs(results),
        attrs: NamedAttrs::new(),
        loc: None,
        span: Span::default(),
    });
}

/// `n` empty attribute lists (built directly: `vec![NamedAttrs::new(); n]` clones one).
fn empty_attrs(n: usize) -> Vec<NamedAttrs> {
    let mut v = Vec::with_capacity(n);
    v.resize_with(n, NamedAttrs::new);
    v
}

/// A detached `stablehlo.composite` named `name` whose decomposition is `callee`, with
/// `attributes` as its `composite_attributes` (left out when empty).
pub fn make_composite(
    m: &mut Module,
    name: &str,
    callee: impl Into<String>,
    attributes: NamedAttrs,
    operands: Vec<ValueId>,
    result_types: &[TypeId],
) -> OpId {
    // Set in name order, so that each lands at the end of the sorted list.
    let mut attrs = NamedAttrs::with_capacity(3);
    if !attributes.is_empty() {
        attrs.set("composite_attributes", Attr::Dict(attributes));
    }
    attrs.set("decomposition", Attr::Symbol(callee.into()));
    attrs.set("name", Attr::Str(name.into()));
    m.create_op(OpKind::Composite, operands, result_types, attrs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_value_map_clears_in_constant_time() {
        let mut map = DenseValueMap::new(4);
        map.record(ValueId(2), ValueId(9));
        map.record(ValueId(7), ValueId(8)); // out of range: ignored
        assert_eq!(map.lookup(ValueId(2)), ValueId(9));
        assert_eq!(map.lookup(ValueId(1)), ValueId(1));
        assert_eq!(map.lookup(ValueId(7)), ValueId(7));
        map.clear();
        assert_eq!(map.lookup(ValueId(2)), ValueId(2));
        map.record(ValueId(3), ValueId(0));
        assert_eq!(map.lookup(ValueId(3)), ValueId(0));
    }

    #[test]
    fn all_elements_equal_compares_whole_elements() {
        // Three 2-byte elements.
        assert!(all_elements_equal(&[1, 2, 1, 2, 1, 2], 2, 3));
        assert!(!all_elements_equal(&[1, 2, 1, 2, 1, 3], 2, 3));
        // Equal bytes shifted by less than an element are not equal elements.
        assert!(!all_elements_equal(&[1, 1, 1, 2], 2, 2));
        assert!(all_elements_equal(&[7, 7, 7], 1, 3));
        assert!(all_elements_equal(&[5, 6, 7, 8], 4, 1));
        // Only the first `len` elements count.
        assert!(all_elements_equal(&[1, 1, 9], 1, 2));
        // Zero-width elements are all equal.
        assert!(all_elements_equal(&[], 0, 5));
    }
}
