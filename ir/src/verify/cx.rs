//! The per-op checking context shared by every rule family.
//!
//! Owns: [`OpV`], a view of one op plus the diagnostic sink, with helpers that read typed
//! operands, results and attributes and report errors in one uniform format:
//! `'stablehlo.add' op <what was expected>, but <what was found>` anchored at the op's
//! span, with a `constraint Cn of <op>` note when the rule comes from the spec.
//! Invariant: helpers never panic on malformed ops — missing operands, attributes of the
//! wrong kind and out-of-range indices all come back as `None` (after reporting, for the
//! `req_*` helpers), so rule code can bail out with `?` without cascading errors.

use super::Globals;
use crate::attr::Attr;
use crate::module::{Module, Op, OpId, RegionId, ValueId};
use crate::types::{ElemType, TensorType, TypeId};
use crate::Diagnostic;

/// One op under verification.
pub(crate) struct OpV<'a, 'm> {
    pub m: &'m Module,
    pub op: &'m Op,
    pub g: &'a Globals<'m>,
    sink: &'a mut Vec<Diagnostic>,
    /// Number of errors reported for this op.
    pub errors: usize,
}

impl<'a, 'm> OpV<'a, 'm> {
    pub fn new(m: &'m Module, id: OpId, g: &'a Globals<'m>, sink: &'a mut Vec<Diagnostic>) -> Self {
        OpV {
            m,
            op: m.op(id),
            g,
            sink,
            errors: 0,
        }
    }

    /// The op's full name, e.g. `stablehlo.add`.
    pub fn name(&self) -> &'static str {
        self.op.kind.name()
    }

    /// Reports a broken rule; `c` is the spec constraint label (`"C2"`) or `""`.
    pub fn err(&mut self, c: &str, msg: impl AsRef<str>) {
        let name = self.name();
        let mut d = Diagnostic::error(self.op.span, format!("'{name}' op {}", msg.as_ref()));
        if !c.is_empty() {
            d = d.with_note(format!("constraint {c} of {name}"));
        }
        self.sink.push(d);
        self.errors += 1;
    }

    /// MLIR spelling of a type.
    pub fn ts(&self, t: TypeId) -> String {
        self.m.types.display(t)
    }
    /// MLIR spelling of a value's type.
    pub fn vs(&self, v: ValueId) -> String {
        self.ts(self.m.value_type(v))
    }
    pub fn operand_ty(&self, i: usize) -> Option<TypeId> {
        self.op.operands.get(i).map(|&v| self.m.value_type(v))
    }
    pub fn result_ty(&self, i: usize) -> Option<TypeId> {
        self.op.results.get(i).map(|&v| self.m.value_type(v))
    }
    pub fn tensor(&self, t: TypeId) -> Option<&'m TensorType> {
        self.m.types.tensor_of(t)
    }

    /// Operand `i` as a tensor, reporting (once) when it is a token or tuple.
    pub fn operand(&mut self, i: usize) -> Option<&'m TensorType> {
        let v = *self.op.operands.get(i)?;
        self.tensor_value(v, "operand", i)
    }
    /// Result `i` as a tensor, reporting when it is a token or tuple.
    pub fn result(&mut self, i: usize) -> Option<&'m TensorType> {
        let v = *self.op.results.get(i)?;
        self.tensor_value(v, "result", i)
    }
    fn tensor_value(&mut self, v: ValueId, what: &str, i: usize) -> Option<&'m TensorType> {
        let m = self.m;
        match m.types.tensor_of(m.value_type(v)) {
            Some(t) => Some(t),
            None => {
                let s = self.vs(v);
                self.err(
                    "",
                    format!("expects {what} #{i} to be a tensor, but it has type {s}"),
                );
                None
            }
        }
    }
    /// All operands as tensors (reports each non-tensor).
    pub fn operands(&mut self) -> Option<Vec<&'m TensorType>> {
        self.tensors_of(0..self.op.operands.len(), true)
    }
    pub fn results(&mut self) -> Option<Vec<&'m TensorType>> {
        self.tensors_of(0..self.op.results.len(), false)
    }
    pub fn tensors_of(
        &mut self,
        range: std::ops::Range<usize>,
        operands: bool,
    ) -> Option<Vec<&'m TensorType>> {
        let mut out = Vec::with_capacity(range.len());
        let mut ok = true;
        for i in range {
            let t = if operands {
                self.operand(i)
            } else {
                self.result(i)
            };
            match t {
                Some(t) => out.push(t),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    pub fn attr(&self, name: &str) -> Option<&'m Attr> {
        self.op.attrs.get(name)
    }
    /// An integer-list attribute; `None` (reported) if missing or of the wrong kind.
    pub fn req_i64s(&mut self, name: &str) -> Option<Vec<i64>> {
        match self.attr(name) {
            None => {
                self.err("", format!("requires attribute '{name}'"));
                None
            }
            Some(a) => self.as_i64s(name, a),
        }
    }
    /// An optional integer-list attribute: `Some(None)` when absent, `None` when malformed.
    pub fn opt_i64s(&mut self, name: &str) -> Option<Option<Vec<i64>>> {
        match self.attr(name) {
            None => Some(None),
            Some(a) => self.as_i64s(name, a).map(Some),
        }
    }
    fn as_i64s(&mut self, name: &str, a: &Attr) -> Option<Vec<i64>> {
        let v = a.as_i64_array();
        if v.is_none() {
            self.err(
                "",
                format!("expects attribute '{name}' to be an array of integers"),
            );
        }
        v
    }
    /// An integer attribute; `None` (reported) if missing or not an integer.
    pub fn req_int(&mut self, name: &str) -> Option<i64> {
        match self.attr(name) {
            Some(Attr::Int(v, _)) => Some(*v),
            Some(_) => {
                self.err("", format!("expects attribute '{name}' to be an integer"));
                None
            }
            None => {
                self.err("", format!("requires attribute '{name}'"));
                None
            }
        }
    }
    /// An optional integer attribute with a default.
    pub fn int_or(&mut self, name: &str, default: i64) -> Option<i64> {
        match self.attr(name) {
            None => Some(default),
            Some(_) => self.req_int(name),
        }
    }
    /// An optional bool attribute (`false` when absent).
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.attr(name), Some(Attr::Bool(true)) | Some(Attr::Unit))
    }

    /// A 2-D integer dense attribute: (rows, cols, row-major values); `Some(None)` if absent.
    pub fn opt_matrix(&mut self, name: &str) -> Option<Option<(usize, usize, Vec<i64>)>> {
        let Some(a) = self.attr(name) else {
            return Some(None);
        };
        if let Attr::Elements(e) = a {
            if let (Some(t), Some(vals)) = (self.m.types.tensor_of(e.ty), a.as_i64_array()) {
                let dims: Vec<usize> = t.shape.iter().map(|&d| d as usize).collect();
                match dims.as_slice() {
                    [r, c] => return Some(Some((*r, *c, vals))),
                    [] | [_] if vals.is_empty() => return Some(Some((0, 0, vals))),
                    _ => {}
                }
            }
        }
        self.err(
            "",
            format!("expects attribute '{name}' to be a 2-D integer elements attribute"),
        );
        None
    }

    /// Checks that `region` has the given argument types and returns the terminator's
    /// operand types, or reports against constraint `c`.
    pub fn region_arg_types(&self, r: RegionId) -> Vec<TypeId> {
        self.m
            .region(r)
            .args
            .iter()
            .map(|&v| self.m.value_type(v))
            .collect()
    }
    /// The operand types of the region's terminator (empty if the region has none).
    pub fn region_ret_types(&self, r: RegionId) -> Vec<TypeId> {
        let region = self.m.region(r);
        match region.ops.last() {
            Some(&t) if self.m.op(t).kind.is_terminator() => self
                .m
                .op(t)
                .operands
                .iter()
                .map(|&v| self.m.value_type(v))
                .collect(),
            _ => Vec::new(),
        }
    }
    /// Spelling of a list of types: `(tensor<f32>, tensor<i32>)`.
    pub fn tys(&self, ts: &[TypeId]) -> String {
        let parts: Vec<String> = ts.iter().map(|&t| self.ts(t)).collect();
        format!("({})", parts.join(", "))
    }
    /// Compares result `i` with the expected tensor type, reporting against constraint `c`.
    pub fn expect_result(
        &mut self,
        i: usize,
        elem: ElemType,
        shape: &[i64],
        c: &str,
        why: &str,
    ) -> Option<()> {
        let r = self.result(i)?;
        if r.elem != elem || r.shape[..] != shape[..] {
            let want = tensor_str(&TensorType::new(elem, shape));
            let got = tensor_str(r);
            let which = if self.op.results.len() > 1 {
                format!("result #{i}")
            } else {
                "result".into()
            };
            self.err(
                c,
                format!("expects {which} type {want} ({why}), but got {got}"),
            );
            return None;
        }
        Some(())
    }
    /// Reports a [`ShapeError`] from shape inference.
    pub fn shape_err(&mut self, e: super::shape::ShapeError) {
        self.err(e.constraint, e.message);
    }
}

/// MLIR spelling of a tensor type that may not be interned.
pub(crate) fn tensor_str(t: &TensorType) -> String {
    let mut s = String::from("tensor<");
    for d in t.shape.iter() {
        s.push_str(&d.to_string());
        s.push('x');
    }
    s.push_str(&t.elem.to_string());
    s.push('>');
    s
}

/// The value text of `key = value` inside an opaque attribute's source text
/// (`#stablehlo.dot_algorithm<lhs_component_count = 1, ...>`), up to the next `,` or `>`.
pub(crate) fn opaque_field<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    let mut rest = text;
    while let Some(i) = rest.find(key) {
        let before_ok = i == 0
            || !rest.as_bytes()[i - 1].is_ascii_alphanumeric() && rest.as_bytes()[i - 1] != b'_';
        let after = rest[i + key.len()..].trim_start();
        if before_ok {
            if let Some(v) = after.strip_prefix('=') {
                let v = v.trim_start();
                let end = v.find([',', '>']).unwrap_or(v.len());
                return Some(v[..end].trim());
            }
        }
        rest = &rest[i + key.len()..];
    }
    None
}

/// `[2, 3]` spelling of a shape.
pub(crate) fn shape_str(s: &[i64]) -> String {
    let parts: Vec<String> = s.iter().map(|d| d.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

/// Element-type classes used by per-op operand constraints.
#[derive(Clone, Copy)]
pub(crate) struct Classes {
    pub bool_: bool,
    pub int: bool,
    pub float: bool,
    pub complex: bool,
}

impl Classes {
    pub const ANY: Classes = Classes::new(true, true, true, true);
    pub const NUM: Classes = Classes::new(false, true, true, true);
    pub const FC: Classes = Classes::new(false, false, true, true);
    pub const F: Classes = Classes::new(false, false, true, false);
    pub const I: Classes = Classes::new(false, true, false, false);
    pub const BI: Classes = Classes::new(true, true, false, false);

    pub const fn new(bool_: bool, int: bool, float: bool, complex: bool) -> Self {
        Classes {
            bool_,
            int,
            float,
            complex,
        }
    }
    pub fn accepts(self, e: ElemType) -> bool {
        (self.bool_ && e.is_bool())
            || (self.int && e.is_integer())
            || (self.float && e.is_float())
            || (self.complex && e.is_complex())
    }
    /// Human description, e.g. `integer or floating-point`.
    pub fn describe(self) -> String {
        let mut parts = Vec::new();
        if self.bool_ {
            parts.push("boolean");
        }
        if self.int {
            parts.push("integer");
        }
        if self.float {
            parts.push("floating-point");
        }
        if self.complex {
            parts.push("complex");
        }
        parts.join(" or ")
    }
}

/// `is_promotable(from, to)`: same class and at least as wide (StableHLO reduction bodies).
pub(crate) fn is_promotable(from: ElemType, to: ElemType) -> bool {
    if from == to {
        return true;
    }
    let same_class = (from.is_bool() && to.is_bool())
        || (from.is_signed_int() && to.is_signed_int())
        || (from.is_unsigned() && to.is_unsigned())
        || (from.is_float() && to.is_float())
        || (from.is_complex() && to.is_complex());
    same_class && from.bits() <= to.bits()
}
