//! XLA bounded dynamism in the form traced programs hold it, lowered at parse time to
//! static ops.
//!
//! torch_xla prints `masked_scatter` (LLaVA, PaliGemma, BLIP-2 merge image features
//! into the prompt with it) as a `scatter` whose indices and updates pass through
//! `stablehlo.set_dimension_size %x, %n, dim = d`: a value of type
//! `tensor<?x3xi32, #stablehlo.bounds<48, ?>>` holds 48 rows of which only the first `n`
//! exist. The scatter applies the first `n` updates; the padding rows are real indices
//! (of the unmasked positions), so they must not be applied.
//!
//! Lowering: the scatter's index rows at or past `n` along the dynamic dimension are
//! replaced by an index that is out of bounds for every operand dimension
//! (`select(iota < n, indices, max_extent)`); a scatter skips an update whose window does
//! not fit in the operand (XLA's semantics, which our interpreter and the HLO we emit
//! follow). Each `set_dimension_size` result is then replaced by its operand, whose static
//! type is the bound.
//!
//! Invariants: after [`Parser::lower_bounded_dynamism`] the module holds no
//! `set_dimension_size` op; every other use of a bounded value (any op but a scatter's
//! indices or updates, a dynamic index vector or update window dimension, scatter operands
//! that disagree on their size) and every bounded type outside those ops' signatures is an
//! error at its source position. A module without bounded types costs one emptiness check.

use super::{PResult, Parser};
use crate::attr::{Attr, EnumAttr, EnumKind, NamedAttrs, ScatterDims};
use crate::build::OpSeq;
use crate::module::{OpId, Span, ValueId};
use crate::ops::OpKind;
use crate::types::{ElemType, Type};
use rustc_hash::FxHashMap;

/// One `set_dimension_size`: its operand, runtime size and dynamic dimension.
#[derive(Clone, Copy)]
struct DimSize {
    op: OpId,
    source: ValueId,
    size: ValueId,
    dim: usize,
}

impl Parser<'_> {
    /// Lowers every `set_dimension_size` (see the module doc) or reports why it cannot.
    pub(crate) fn lower_bounded_dynamism(&mut self) -> PResult<()> {
        if self.dimension_sizes.is_empty() && self.bounded_types.is_empty() {
            return Ok(());
        }
        let mut sizes = FxHashMap::default();
        for i in 0..self.dimension_sizes.len() {
            let d = self.dimension_size(self.dimension_sizes[i])?;
            sizes.insert(self.m.op(d.op).results[0], d);
        }
        let scatters = self.dynamic_users(&sizes)?;
        self.check_bounded_types(&scatters)?;
        for &s in &scatters {
            self.mask_scatter(s, &sizes)?;
        }
        for d in sizes.values() {
            let result = self.m.op(d.op).results[0];
            self.m.replace_all_uses(result, d.source);
            if let Some(r) = self.m.op(d.op).parent {
                self.m.region_mut(r).ops.retain(|&o| o != d.op);
            }
            self.m.op_mut(d.op).parent = None;
        }
        Ok(())
    }

    /// Checks one `set_dimension_size` op: an integer scalar size, a dimension in range, a
    /// result bounded by the operand's extent and dynamic in that dimension only.
    fn dimension_size(&self, op: OpId) -> PResult<DimSize> {
        let o = self.m.op(op);
        let span = o.span;
        let bad = |msg: &str| self.err_at(span, format!("set_dimension_size {msg}"));
        let (&[source, size], &[result]) = (&o.operands[..], &o.results[..]) else {
            return bad("expects two operands and one result");
        };
        let (Some(src), Some(n)) = (self.m.tensor_type(source), self.m.tensor_type(size)) else {
            return bad("expects tensor operands");
        };
        if n.rank() != 0 || !n.elem.is_integer() {
            return bad("expects a scalar integer size");
        }
        let dim = o
            .attrs
            .int("dimension")
            .and_then(|d| usize::try_from(d).ok());
        let Some(dim) = dim.filter(|&d| d < src.rank()) else {
            return bad(&format!("expects a dimension in [0, {})", src.rank()));
        };
        if self.m.value_type(result) != self.m.value_type(source) {
            return bad("expects the result's bounds to be the operand's static shape");
        }
        let masks: Vec<u64> = self.bounded_in(span).map(|(_, m)| m).collect();
        if masks.len() > 1 {
            return bad("of a value that is already bounded (dynamic) is unsupported");
        }
        if masks != [1u64 << dim] {
            return bad(&format!(
                "expects a result type dynamic ('?' with #stablehlo.bounds) in dimension {dim} only"
            ));
        }
        Ok(DimSize {
            op,
            source,
            size,
            dim,
        })
    }

    /// The bounded types read inside `span`, with their masks.
    fn bounded_in(&self, span: Span) -> impl Iterator<Item = (Span, u64)> + '_ {
        self.bounded_types
            .iter()
            .copied()
            .filter(move |(s, _)| s.start >= span.start && s.end <= span.end)
    }

    /// The scatters using a bounded value as indices or updates, in program order; any
    /// other use is an error at the user.
    fn dynamic_users(&self, sizes: &FxHashMap<ValueId, DimSize>) -> PResult<Vec<OpId>> {
        let mut users = Vec::new();
        let mut bad = None;
        self.m.walk_ops(|op| {
            let o = self.m.op(op);
            let inputs = o.operands.len() / 2;
            for (i, v) in o.operands.iter().enumerate() {
                if !sizes.contains_key(v) {
                    continue;
                }
                if o.kind == OpKind::Scatter && i >= inputs {
                    if users.last() != Some(&op) {
                        users.push(op);
                    }
                } else if bad.is_none() {
                    bad = Some((o.span, o.kind, i));
                }
            }
        });
        match bad {
            Some((span, kind, i)) => self.err_at(
                span,
                format!(
                    "'{}' operand {i} is a bounded dynamic value (set_dimension_size): only a \
                     scatter's indices and updates may be dynamic (static shapes otherwise)",
                    kind.name()
                ),
            ),
            None => Ok(users),
        }
    }

    /// Every bounded type must be a `set_dimension_size` result or an operand type in the
    /// signature of a scatter that uses one.
    fn check_bounded_types(&self, scatters: &[OpId]) -> PResult<()> {
        let allowed: Vec<Span> = self
            .dimension_sizes
            .iter()
            .chain(scatters)
            .map(|&op| self.m.op(op).span)
            .collect();
        for &(s, _) in &self.bounded_types {
            if !allowed.iter().any(|a| s.start >= a.start && s.end <= a.end) {
                return self.err_at(
                    s,
                    "bounded dynamic type outside set_dimension_size and the scatter it \
                     feeds: only torch_xla's masked_scatter form of bounded dynamism is \
                     supported (static shapes otherwise)",
                );
            }
        }
        Ok(())
    }

    /// Masks the index rows of `scatter` past its dynamic operands' size (module doc).
    fn mask_scatter(&mut self, scatter: OpId, sizes: &FxHashMap<ValueId, DimSize>) -> PResult<()> {
        let o = self.m.op(scatter);
        let span = o.span;
        let Some(Attr::ScatterDims(sd)) = o.attrs.get("scatter_dimension_numbers") else {
            return self.err_at(span, "scatter requires 'scatter_dimension_numbers'");
        };
        let sd = sd.clone();
        let operands = o.operands.clone();
        let n_in = operands.len() / 2;
        let indices = operands[n_in];
        let (batch, size) = self.scatter_position(span, &operands[n_in..], &sd, sizes)?;
        let Some(idx) = self.m.tensor_type(indices).cloned() else {
            return self.err_at(span, "scatter indices must be a tensor");
        };
        let ivd = usize::try_from(sd.index_vector_dim).unwrap_or(usize::MAX);
        let idx_dim = if batch < ivd { batch } else { batch + 1 };
        let Some(sentinel) = self.out_of_bounds_index(operands[0], idx.elem, &sd) else {
            return self.err_at(
                span,
                "cannot mask this dynamic scatter: no index component maps to an operand \
                 dimension, or the index type cannot hold one past the operand's extent",
            );
        };
        let mut seq = OpSeq::new(&mut self.m, None, span);
        let idx_ty = seq.m.value_type(indices);
        let scalar = seq.m.types.tensor(idx.elem, &[]);
        let pred_ty = seq.m.types.tensor(ElemType::I1, &idx.shape);
        let n = match seq.m.tensor_type(size) {
            Some(t) if t.elem == idx.elem => size,
            _ => seq.op(OpKind::Convert, vec![size], scalar),
        };
        let n = seq.broadcast_in_dim(n, idx_ty, Vec::new());
        let mut attrs = NamedAttrs::with_capacity(1);
        attrs.set(
            "iota_dimension",
            Attr::Int(idx_dim as i64, ElemType::Int(64)),
        );
        let iota = seq.m.create_op(OpKind::Iota, Vec::new(), &[idx_ty], attrs);
        let iota = seq.push(iota);
        let mut attrs = NamedAttrs::with_capacity(1);
        let lt = EnumAttr {
            kind: EnumKind::ComparisonDirection,
            value: "LT".into(),
        };
        attrs.set("comparison_direction", Attr::Enum(lt));
        let keep = seq
            .m
            .create_op(OpKind::Compare, vec![iota, n], &[pred_ty], attrs);
        let keep = seq.push(keep);
        let far = seq.splat(idx_ty, sentinel);
        let masked = seq.op(OpKind::Select, vec![keep, indices, far], idx_ty);
        let ops = seq.finish();
        self.m.op_mut(scatter).operands[n_in] = masked;
        let Some(region) = self.m.op(scatter).parent else {
            return self.err_at(span, "scatter outside a region");
        };
        let at = self.m.region(region).ops.iter().position(|&x| x == scatter);
        let at = at.unwrap_or(0);
        for (k, op) in ops.into_iter().enumerate() {
            self.m.insert_op(region, at + k, op);
        }
        Ok(())
    }

    /// The scatter position (index among the scatter dimensions) and size value shared by
    /// the dynamic ones of `operands` (indices then updates).
    fn scatter_position(
        &self,
        span: Span,
        operands: &[ValueId],
        sd: &ScatterDims,
        sizes: &FxHashMap<ValueId, DimSize>,
    ) -> PResult<(usize, ValueId)> {
        let mut found: Option<(usize, ValueId)> = None;
        for (i, v) in operands.iter().enumerate() {
            let Some(d) = sizes.get(v) else { continue };
            let dim = d.dim as i64;
            let pos = if i == 0 {
                if dim == sd.index_vector_dim {
                    return self.err_at(span, "scatter's index vector dimension is dynamic");
                }
                d.dim - usize::from(sd.index_vector_dim < dim)
            } else {
                if sd.update_window_dims.contains(&dim) {
                    return self.err_at(span, "a scatter update window dimension is dynamic");
                }
                d.dim - sd.update_window_dims.iter().filter(|&&w| w < dim).count()
            };
            match found {
                Some(f) if f != (pos, d.size) => {
                    return self.err_at(
                        span,
                        "the dynamic operands of this scatter disagree on the dynamic \
                         dimension or its size",
                    )
                }
                _ => found = Some((pos, d.size)),
            }
        }
        match found {
            Some(f) => Ok(f),
            None => self.err_at(span, "scatter without a dynamic operand"),
        }
    }

    /// Little-endian bytes of an index value (of type `elem`) at or past the extent of every
    /// operand dimension an index component maps to.
    fn out_of_bounds_index(
        &self,
        input: ValueId,
        elem: ElemType,
        sd: &ScatterDims,
    ) -> Option<Vec<u8>> {
        let Type::Tensor(t) = self.m.ty(self.m.value_type(input)) else {
            return None;
        };
        let far = sd
            .scatter_dims_to_operand_dims
            .iter()
            .filter_map(|&d| t.shape.get(usize::try_from(d).ok()?))
            .copied()
            .max()?;
        let bits = elem.bits();
        let max = match elem {
            ElemType::Int(_) => (1i128 << (bits - 1)) - 1,
            ElemType::UInt(_) => (1i128 << bits) - 1,
            _ => return None,
        };
        ((far as i128) <= max).then(|| far.to_le_bytes()[..elem.byte_width()].to_vec())
    }
}
