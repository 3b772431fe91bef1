//! Custom (pretty) op syntaxes, mirroring `crate::parse::syntax` and `crate::parse::pretty`.
//!
//! Invariant: [`Printer::print_pretty`] either writes the op's complete custom form and
//! returns true, or returns false (the caller discards partial output and prints the
//! generic form) — it never writes a form that would parse to different attributes.

use super::attr::{
    push_num, write_attr_entries, write_conv_dims, write_list, write_string, write_symbol,
};
use super::rest::Rest;
use super::Printer;
use crate::attr::{Attr, DenseData, EnumKind};
use crate::module::OpId;
use crate::ops::OpKind;
use crate::parse::syntax::{syntax, Kw, Syntax, Ty, V};
use crate::types::{ElemType, Type};
use std::fmt::Write;

impl<'m> Printer<'m> {
    /// Writes the custom form of `op` (after `%res = `); false if it has none or its
    /// attributes do not fit it.
    pub(crate) fn print_pretty(&mut self, op: OpId, func_body: bool) -> bool {
        let m = self.m;
        let o = m.op(op);
        let kind = o.kind;
        let name = match kind {
            OpKind::FuncReturn if func_body => "return",
            OpKind::Call if func_body => "call",
            _ => kind.name(),
        };
        self.out.push_str(name);
        let mut rest = Rest::new(&o.attrs);
        let form = syntax(kind);
        let ok =
            match form {
                Syntax::Generic => false,
                Syntax::Simple(kws, ty) => self.pp_simple(op, kws, ty, &mut rest),
                Syntax::Constant | Syntax::ChloConstant => self.pp_constant(op, &mut rest),
                Syntax::Iota => take_int(&mut rest, "iota_dimension", ElemType::Int(64))
                    .is_some_and(|d| {
                        self.out.push_str(" dim = ");
                        push_num(&mut self.out, d);
                        self.attr_dict_opt(&rest);
                        self.out.push_str(" : ");
                        self.result_types(op);
                        o.operands.is_empty() && o.results.len() == 1
                    }),
                Syntax::NoOperands => {
                    self.attr_dict_opt(&rest);
                    self.out.push_str(" : ");
                    self.result_types(op);
                    o.operands.is_empty()
                }
                Syntax::Compare => self.pp_compare(op, &mut rest),
                Syntax::Slice => self.pp_slice(op, &mut rest),
                Syntax::GetTupleElement => take_int(&mut rest, "index", ElemType::Int(32))
                    .is_some_and(|i| {
                        self.out.push(' ');
                        self.values(&o.operands);
                        self.out.push('[');
                        push_num(&mut self.out, i);
                        self.out.push(']');
                        self.finish_functional(op, &rest);
                        o.operands.len() == 1
                    }),
                Syntax::Tuple => {
                    self.operands_sp(op);
                    self.attr_dict_opt(&rest);
                    self.out.push_str(" : ");
                    self.result_types(op);
                    o.results.len() == 1
                }
                Syntax::OptimizationBarrier => {
                    self.attr_dict_opt(&rest);
                    if o.operands.is_empty() {
                        self.out.push_str(" ()");
                    } else {
                        self.operands_sp(op);
                        self.out.push_str(" : ");
                        self.types_of(&o.operands);
                    }
                    o.operands.len() == o.results.len()
                }
                Syntax::Select => self.pp_select(op, &rest),
                Syntax::Complex => {
                    self.operands_sp(op);
                    self.attr_dict_opt(&rest);
                    self.out.push_str(" : ");
                    self.same_or_functional(op);
                    o.results.len() == 1
                }
                Syntax::DotGeneral => self.pp_dot_general(op, &mut rest),
                Syntax::Convolution => self.pp_convolution(op, &mut rest),
                Syntax::CustomCall | Syntax::Call => {
                    let sym = if kind == OpKind::Call {
                        match rest.remove("callee") {
                            Some(Attr::Symbol(s)) => Some(s),
                            _ => None,
                        }
                    } else {
                        match rest.remove("call_target_name") {
                            Some(Attr::Str(s)) => Some(s),
                            _ => None,
                        }
                    };
                    sym.is_some_and(|s| {
                        self.out.push(' ');
                        write_symbol(&mut self.out, s);
                        self.out.push('(');
                        self.values(&o.operands);
                        self.out.push(')');
                        self.finish_functional(op, &rest);
                        true
                    })
                }
                Syntax::Composite => match rest.remove("name") {
                    Some(Attr::Str(s)) => {
                        self.out.push(' ');
                        write_string(&mut self.out, s);
                        self.operands_sp(op);
                        self.finish_functional(op, &rest);
                        o.regions.is_empty()
                    }
                    _ => false,
                },
                Syntax::While => self.pp_while(op, &rest),
                Syntax::Reduce => self.pp_reduce(op, &mut rest),
                Syntax::Return => {
                    self.operands_sp(op);
                    self.attr_dict_opt(&rest);
                    if !o.operands.is_empty() {
                        self.out.push_str(" : ");
                        self.types_of(&o.operands);
                    }
                    o.results.is_empty()
                }
                Syntax::TopK => self.pp_top_k(op, &mut rest),
                Syntax::CheckConst => self.pp_check_const(op, &mut rest),
                Syntax::ShardingAnnotation => self.pp_sharding_annotation(op, &mut rest),
                Syntax::CheckClose => {
                    let max = take_int(&mut rest, "max_ulp_difference", ElemType::UInt(64));
                    let min = take_int(&mut rest, "min_ulp_difference", ElemType::UInt(64));
                    max.is_some_and(|mx| {
                        self.operands_sp(op);
                        let _ = write!(self.out, ", max_ulp_difference = {}", mx as u64);
                        if let Some(mn) = min {
                            let _ = write!(self.out, ", min_ulp_difference = {}", mn as u64);
                        }
                        self.out.push_str(" :");
                        self.attr_dict_opt(&rest);
                        self.out.push(' ');
                        self.types_of(&o.operands);
                        o.results.is_empty()
                    })
                }
            };
        ok && (matches!(form, Syntax::While | Syntax::Reduce) || o.regions.is_empty())
    }

    /// ` %a, %b` (nothing for no operands).
    fn operands_sp(&mut self, op: OpId) {
        let o = self.m.op(op);
        if !o.operands.is_empty() {
            self.out.push(' ');
            self.values(&o.operands);
        }
    }

    /// ` {attrs}` when non-empty.
    pub(super) fn attr_dict_opt(&mut self, d: &Rest<'_>) {
        if !d.is_empty() {
            self.out.push(' ');
            write_attr_entries(self, d.iter());
        }
    }

    /// ` {attrs} : (types) -> types`.
    fn finish_functional(&mut self, op: OpId, rest: &Rest<'_>) {
        self.attr_dict_opt(rest);
        self.out.push_str(" : ");
        self.functional_type(op);
    }

    /// One type when all operands and the single result agree, else a function type.
    fn same_or_functional(&mut self, op: OpId) {
        let o = self.m.op(op);
        let same = o.results.len() == 1 && {
            let rt = self.m.value_type(o.results[0]);
            o.operands.iter().all(|&v| self.m.value_type(v) == rt)
        };
        let compact = if o.kind == OpKind::Complex {
            self.complex_compact(op)
        } else {
            same
        };
        if compact {
            self.ty_of(o.results[0]);
        } else {
            self.functional_type(op);
        }
    }

    /// `complex` prints one type when both operands are the real type of the result.
    fn complex_compact(&self, op: OpId) -> bool {
        let m = self.m;
        let o = m.op(op);
        let Some(rt) = o.results.first().and_then(|&r| m.tensor_type(r)) else {
            return false;
        };
        let Some(part) = rt.elem.complex_part() else {
            return false;
        };
        o.operands.len() == 2
            && o.operands.iter().all(|&v| {
                m.tensor_type(v)
                    .is_some_and(|t| t.elem == part && t.shape == rt.shape)
            })
    }

    fn pp_simple(&mut self, op: OpId, kws: &[Kw], ty: Ty, rest: &mut Rest<'_>) -> bool {
        let o = self.m.op(op);
        self.operands_sp(op);
        for k in kws {
            if k.v == V::ExpMan {
                let e = take_int(rest, "exponent_bits", ElemType::Int(32));
                let mm = take_int(rest, "mantissa_bits", ElemType::Int(32));
                match (e, mm) {
                    (Some(e), Some(mm)) if e >= 0 && mm >= 0 => {
                        let _ = write!(self.out, ", {} = e{e}m{mm}", k.kw);
                    }
                    _ => return false,
                }
                continue;
            }
            match rest.get(k.attr) {
                None if k.optional => continue,
                None => return false,
                Some(a) => {
                    let mark = self.out.len();
                    if !o.operands.is_empty() {
                        self.out.push(',');
                    }
                    self.out.push(' ');
                    self.out.push_str(k.kw);
                    self.out.push_str(" = ");
                    if !self.kw_value(a, k.v) {
                        self.out.truncate(mark);
                        return false;
                    }
                }
            }
            rest.remove(k.attr);
        }
        match ty {
            Ty::Same => {
                self.attr_dict_opt(rest);
                self.out.push_str(" : ");
                self.same_or_functional(op);
                o.results.len() == 1
            }
            Ty::Functional | Ty::ParenArrow => {
                self.finish_functional(op, rest);
                true
            }
            Ty::Arrow => {
                self.attr_dict_opt(rest);
                self.out.push_str(" : ");
                self.types_of(&o.operands);
                self.out.push_str(" -> ");
                self.result_types(op);
                o.operands.len() == 1
            }
            Ty::PairArrow => {
                self.attr_dict_opt(rest);
                self.out.push_str(" : ");
                self.types_of(&o.operands);
                self.out.push_str(" -> ");
                self.result_types(op);
                o.operands.len() == 2
            }
            Ty::OperandType => {
                self.attr_dict_opt(rest);
                self.out.push_str(" : ");
                let Some(&first) = o.operands.first() else {
                    return false;
                };
                self.ty_of(first);
                let t = self.m.value_type(first);
                o.results.is_empty() && o.operands.iter().all(|&v| self.m.value_type(v) == t)
            }
        }
    }

    /// The keyword form of attribute `a`; false if `a` is not of the form `v` expects.
    fn kw_value(&mut self, a: &Attr, v: V) -> bool {
        match (v, a) {
            (V::Dims, Attr::IntArray(ElemType::Int(64), l)) => write_list(&mut self.out, l),
            (V::I64, Attr::Int(x, ElemType::Int(64))) => push_num(&mut self.out, *x),
            (V::U64, Attr::Int(x, ElemType::UInt(64))) => push_num(&mut self.out, *x as u64),
            (V::U32, Attr::Int(x, ElemType::UInt(32))) => {
                push_num(&mut self.out, (*x as u64) & 0xFFFF_FFFF)
            }
            (V::Bool, Attr::Bool(b)) => self.out.push_str(if *b { "true" } else { "false" }),
            (V::Enum(k), Attr::Enum(e)) if e.kind == k => self.out.push_str(&e.value),
            (V::Str, Attr::Str(s)) => write_string(&mut self.out, s),
            (V::F64, Attr::Float(x, ElemType::F64)) => {
                super::attr::write_float(&mut self.out, *x, ElemType::F64)
            }
            (V::Precision, Attr::Array(items)) => {
                let mut names = Vec::with_capacity(items.len());
                for it in items {
                    match it {
                        Attr::Enum(e) if e.kind == EnumKind::Precision => {
                            names.push(e.value.as_str())
                        }
                        _ => return false,
                    }
                }
                let _ = write!(self.out, "[{}]", names.join(", "));
            }
            _ => return false,
        }
        true
    }

    fn pp_constant(&mut self, op: OpId, rest: &mut Rest<'_>) -> bool {
        let o = self.m.op(op);
        let Some(value @ Attr::Elements(e)) = rest.remove("value") else {
            return false;
        };
        if o.results.len() != 1 || self.m.value_type(o.results[0]) != e.ty || !o.operands.is_empty()
        {
            return false;
        }
        self.attr_dict_opt(rest);
        self.out.push(' ');
        super::write_attr(self, value);
        true
    }

    fn pp_compare(&mut self, op: OpId, rest: &mut Rest<'_>) -> bool {
        let Some(Attr::Enum(d)) = rest.remove("comparison_direction") else {
            return false;
        };
        if d.kind != EnumKind::ComparisonDirection {
            return false;
        }
        self.out.push(' ');
        self.out.push_str(&d.value);
        self.out.push_str(", ");
        self.values(&self.m.op(op).operands);
        match rest.remove("compare_type") {
            Some(Attr::Enum(t)) if t.kind == EnumKind::ComparisonType => {
                self.out.push_str(", ");
                self.out.push_str(&t.value);
            }
            Some(_) => return false,
            None => {}
        }
        self.finish_functional(op, rest);
        true
    }

    fn pp_slice(&mut self, op: OpId, rest: &mut Rest<'_>) -> bool {
        fn get<'a>(r: &mut Rest<'a>, n: &str) -> Option<&'a Vec<i64>> {
            match r.remove(n) {
                Some(Attr::IntArray(ElemType::Int(64), v)) => Some(v),
                _ => None,
            }
        }
        let (Some(s), Some(l), Some(st)) = (
            get(rest, "start_indices"),
            get(rest, "limit_indices"),
            get(rest, "strides"),
        ) else {
            return false;
        };
        if s.len() != l.len() || s.len() != st.len() {
            return false;
        }
        self.operands_sp(op);
        self.out.push_str(" [");
        for i in 0..s.len() {
            if i > 0 {
                self.out.push_str(", ");
            }
            push_num(&mut self.out, s[i]);
            self.out.push(':');
            push_num(&mut self.out, l[i]);
            if st[i] != 1 {
                self.out.push(':');
                push_num(&mut self.out, st[i]);
            }
        }
        self.out.push(']');
        self.finish_functional(op, rest);
        true
    }

    fn pp_select(&mut self, op: OpId, rest: &Rest<'_>) -> bool {
        let m = self.m;
        let o = m.op(op);
        if o.operands.len() != 3 || o.results.len() != 1 {
            return false;
        }
        self.operands_sp(op);
        self.attr_dict_opt(rest);
        self.out.push_str(" : ");
        let rt = m.value_type(o.results[0]);
        if m.value_type(o.operands[1]) == rt && m.value_type(o.operands[2]) == rt {
            self.ty_of(o.operands[0]);
            self.out.push_str(", ");
            self.ty_of(o.results[0]);
        } else {
            self.functional_type(op);
        }
        true
    }

    fn pp_dot_general(&mut self, op: OpId, rest: &mut Rest<'_>) -> bool {
        let Some(Attr::DotDims(d)) = rest.remove("dot_dimension_numbers") else {
            return false;
        };
        self.operands_sp(op);
        if !d.lhs_batching.is_empty() || !d.rhs_batching.is_empty() {
            self.out.push_str(", batching_dims = ");
            write_list(&mut self.out, &d.lhs_batching);
            self.out.push_str(" x ");
            write_list(&mut self.out, &d.rhs_batching);
        }
        self.out.push_str(", contracting_dims = ");
        write_list(&mut self.out, &d.lhs_contracting);
        self.out.push_str(" x ");
        write_list(&mut self.out, &d.rhs_contracting);
        if let Some(p) = rest.remove("precision_config") {
            self.out.push_str(", precision = ");
            if !self.kw_value(p, V::Precision) {
                return false;
            }
        }
        if let Some(a) = rest.remove("algorithm") {
            match a {
                Attr::Opaque(s) if s.starts_with("#stablehlo.dot_algorithm<") => {
                    let _ = write!(
                        self.out,
                        ", algorithm = {}",
                        &s["#stablehlo.dot_algorithm".len()..]
                    );
                }
                _ => return false,
            }
        }
        self.finish_functional(op, rest);
        true
    }

    fn pp_convolution(&mut self, op: OpId, rest: &mut Rest<'_>) -> bool {
        let Some(Attr::ConvDims(d)) = rest.remove("dimension_numbers") else {
            return false;
        };
        self.out.push('(');
        self.values(&self.m.op(op).operands);
        self.out.push_str(") dim_numbers = ");
        if !write_conv_dims(&mut self.out, d) {
            return false;
        }
        self.out.push_str(", window = {");
        let mut first = true;
        let items = [
            ("stride", "window_strides"),
            ("pad", "padding"),
            ("lhs_dilate", "lhs_dilation"),
            ("rhs_dilate", "rhs_dilation"),
            ("reverse", "window_reversal"),
        ];
        for (kw, attr) in items {
            let Some(a) = rest.remove(attr) else { continue };
            if !first {
                self.out.push_str(", ");
            }
            first = false;
            let _ = write!(self.out, "{kw} = ");
            let ok = match (kw, &a) {
                ("pad", Attr::Elements(e)) => self.window_pad(e),
                ("reverse", Attr::BoolArray(v)) => {
                    let s: Vec<&str> = v
                        .iter()
                        .map(|b| if *b { "true" } else { "false" })
                        .collect();
                    let _ = write!(self.out, "[{}]", s.join(", "));
                    true
                }
                (_, Attr::IntArray(ElemType::Int(64), v)) if kw != "pad" && kw != "reverse" => {
                    write_list(&mut self.out, v);
                    true
                }
                _ => false,
            };
            if !ok {
                return false;
            }
        }
        self.out.push('}');
        self.finish_functional(op, rest);
        true
    }

    /// `[[lo, hi], ...]` from an `Nx2` i64 dense attribute.
    fn window_pad(&mut self, e: &crate::attr::DenseElements) -> bool {
        let shape_ok = self
            .m
            .types
            .tensor_of(e.ty)
            .is_some_and(|t| t.shape.len() == 2 && t.shape[1] == 2);
        if e.elem != ElemType::Int(64) || !shape_ok {
            return false;
        }
        let bytes = match &e.data {
            DenseData::Splat(b) => b.repeat(e.len as usize),
            DenseData::Full(b) => b.to_vec(),
        };
        let vals: Vec<i64> = bytes
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect();
        self.out.push('[');
        for (i, pair) in vals.chunks(2).enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            write_list(&mut self.out, pair);
        }
        self.out.push(']');
        true
    }

    fn pp_while(&mut self, op: OpId, rest: &Rest<'_>) -> bool {
        let m = self.m;
        let o = m.op(op);
        if o.regions.len() != 2 {
            return false;
        }
        let (c, b) = (o.regions[0], o.regions[1]);
        let cargs = &m.region(c).args;
        let bargs = &m.region(b).args;
        // Both regions share the printed iteration-argument names.
        let n = o.operands.len();
        if cargs.len() != n || bargs.len() != n || o.results.len() != n {
            return false;
        }
        for i in 0..n {
            let t = m.value_type(o.operands[i]);
            if m.value_type(cargs[i]) != t
                || m.value_type(bargs[i]) != t
                || m.value_type(o.results[i]) != t
            {
                return false;
            }
        }
        self.out.push('(');
        for (i, (&a, &v)) in cargs.iter().zip(&o.operands).enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.value(a);
            self.out.push_str(" = ");
            self.value(v);
        }
        self.out.push(')');
        if n > 0 {
            self.out.push_str(" : ");
            self.types_of(&o.operands);
        }
        if !rest.is_empty() {
            self.out.push_str(" attributes ");
            write_attr_entries(self, rest.iter());
        }
        self.out.push('\n');
        self.pad();
        self.out.push_str("cond ");
        self.region_block(c, false);
        self.out.push_str(" do ");
        // The body's block arguments print under the cond region's names.
        self.alias_args(bargs, cargs);
        self.region_block(b, false);
        true
    }

    fn pp_reduce(&mut self, op: OpId, rest: &mut Rest<'_>) -> bool {
        let m = self.m;
        let o = m.op(op);
        let Some(Attr::IntArray(ElemType::Int(64), dims)) = rest.remove("dimensions") else {
            return false;
        };
        if o.operands.len() & 1 == 1 || o.operands.is_empty() || o.regions.len() != 1 {
            return false;
        }
        let n = o.operands.len() / 2;
        let r = o.regions[0];
        let args = &m.region(r).args;
        if args.len() != 2 * n {
            return false;
        }
        self.out.push('(');
        for i in 0..n {
            if i > 0 {
                self.out.push_str(", (");
            }
            self.value(o.operands[i]);
            self.out.push_str(" init: ");
            self.value(o.operands[i + n]);
            self.out.push(')');
        }
        let applies = self.compact_reducer(op);
        if let Some(k) = applies {
            let _ = write!(self.out, " applies {}", k.name());
        }
        self.out.push_str(" across dimensions = ");
        write_list(&mut self.out, dims);
        self.finish_functional(op, rest);
        if applies.is_none() {
            self.out.push('\n');
            self.pad();
            self.out.push_str(" reducer");
            for i in 0..n {
                self.out.push('(');
                for (j, &a) in [args[i], args[i + n]].iter().enumerate() {
                    if j > 0 {
                        self.out.push_str(", ");
                    }
                    self.value(a);
                    self.out.push_str(": ");
                    self.ty_of(a);
                }
                self.out.push_str(") ");
            }
            self.out.push(' ');
            self.region_block(r, false);
        }
        true
    }

    /// The inner op kind if the reducer is `return k(arg0, arg1)` over scalar tensors of
    /// the first input's element type (MLIR's compact-print conditions).
    fn compact_reducer(&self, op: OpId) -> Option<OpKind> {
        let m = self.m;
        let o = m.op(op);
        let r = m.region(o.regions[0]);
        if r.ops.len() != 2 || r.args.len() != 2 {
            return None;
        }
        let inner = m.op(r.ops[0]);
        let ret = m.op(r.ops[1]);
        let k = inner.kind;
        let elem = m.tensor_type(o.operands[0])?.elem;
        let st = Type::Tensor(crate::types::TensorType::new(elem, &[]));
        let ok = k.dialect() == "stablehlo"
            && k.is_commutative()
            && inner.regions.is_empty()
            && inner.attrs.is_empty()
            && inner.operands == r.args
            && inner.results.len() == 1
            && inner
                .operands
                .iter()
                .chain(&inner.results)
                .all(|&v| *m.ty(m.value_type(v)) == st)
            && ret.kind == OpKind::Return
            && ret.operands == inner.results
            && ret.attrs.is_empty();
        ok.then_some(k)
    }

    fn pp_top_k(&mut self, op: OpId, rest: &mut Rest<'_>) -> bool {
        let o = self.m.op(op);
        let Some(k) = take_int(rest, "k", ElemType::Int(64)) else {
            return false;
        };
        if o.operands.len() != 1 || o.results.len() != 2 {
            return false;
        }
        self.out.push('(');
        self.value(o.operands[0]);
        let _ = write!(self.out, ", k = {k}");
        match rest.remove("is_stable") {
            Some(Attr::Bool(b)) => {
                let _ = write!(self.out, ", is_stable = {b}");
            }
            Some(_) => return false,
            None => {}
        }
        self.out.push(')');
        self.attr_dict_opt(rest);
        self.out.push_str(" : ");
        self.ty_of(o.operands[0]);
        self.out.push_str(" -> ");
        self.result_types(op);
        true
    }

    fn pp_check_const(&mut self, op: OpId, rest: &mut Rest<'_>) -> bool {
        let o = self.m.op(op);
        let Some(value @ Attr::Elements(e)) = rest.remove("value") else {
            return false;
        };
        if o.operands.len() != 1 || self.m.value_type(o.operands[0]) != e.ty {
            return false;
        }
        self.operands_sp(op);
        self.out.push_str(", ");
        super::write_attr(self, value);
        if o.kind == OpKind::CheckExpectAlmostEqConst {
            match rest.remove("tolerance") {
                Some(Attr::Float(t, ElemType::F64)) => {
                    self.out.push_str(", tolerance = ");
                    super::attr::write_float(&mut self.out, *t, ElemType::F64);
                }
                Some(_) => return false,
                None => {}
            }
        }
        self.attr_dict_opt(rest);
        true
    }
}

/// Removes and returns integer attribute `name` if it has type `t`.
fn take_int(rest: &mut Rest<'_>, name: &str, t: ElemType) -> Option<i64> {
    match rest.get(name) {
        Some(Attr::Int(v, ty)) if *ty == t => {
            let v = *v;
            rest.remove(name);
            Some(v)
        }
        _ => None,
    }
}
