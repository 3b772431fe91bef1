//! `custom_call @ApproxTopK` (jax `lax.approx_max_k` / `approx_min_k`) as HLO that
//! XLA:CPU runs: a `sort` of the inputs along `reduction_dim` by the call's comparator
//! function, then a `slice` of each sorted input to its result's extent.
//!
//! Owns: [`Emitter::approx_top_k`]. The custom call itself is never emitted: XLA:CPU
//! rejects the TPU form (`output_operand_aliases`), and the exact top-k is what XLA:CPU
//! computes for the fallback form (and a valid answer of the approximate one).
//! Invariants: operands are `N` inputs then `N` init values (ignored); the comparator
//! takes `2N` scalars and returns one `pred`.

use super::emit::{inst, Comp, Emitter};
use super::lower::missing;
use super::proto::SliceDimensions;
use super::shape::tuple_shape;
use super::HloError;
use neuronc_ir::{Attr, OpId};

impl Emitter<'_> {
    /// Lowers `@ApproxTopK` (`op`, operand instructions `ops`) to sort + slice.
    pub(super) fn approx_top_k(
        &mut self,
        c: &mut Comp,
        op: OpId,
        ops: Vec<i64>,
    ) -> Result<(), HloError> {
        let o = self.m.op(op);
        let n = o.results.len();
        if n == 0 || ops.len() != 2 * n {
            return Err(HloError::Malformed(format!(
                "@ApproxTopK with {} operands and {n} results",
                ops.len()
            )));
        }
        let dim = [
            o.attrs.get("mhlo.backend_config"),
            o.attrs.get("backend_config"),
        ]
        .into_iter()
        .flatten()
        .find_map(|a| match a {
            Attr::Dict(d) => d.int("reduction_dim"),
            _ => None,
        })
        .ok_or_else(|| missing(o, "reduction_dim"))?;
        let callee = match o.attrs.get("called_computations") {
            Some(Attr::Array(a)) => match a.first() {
                Some(Attr::Symbol(s)) => s.clone(),
                _ => return Err(missing(o, "called_computations")),
            },
            _ => return Err(missing(o, "called_computations")),
        };
        let body = self
            .m
            .func(&callee)
            .ok_or_else(|| HloError::Malformed(format!("unknown comparator @{callee}")))?
            .body;
        let cmp = self.region_comp(body, "approx_topk_comparator", false)?;
        let shapes: Vec<_> = ops[..n].iter().map(|&x| c.shape(x).clone()).collect();
        let rank = shapes[0].dimensions.len() as i64;
        let d = if dim < 0 { dim + rank } else { dim };
        if !(0..rank).contains(&d) {
            return Err(HloError::Malformed(format!(
                "@ApproxTopK reduction_dim {dim} of a rank-{rank} input"
            )));
        }
        let mut srt = inst("sort", tuple_shape(shapes.clone()), ops[..n].to_vec());
        srt.dimensions = vec![d];
        srt.is_stable = true;
        srt.called_computation_ids = vec![cmp];
        let sorted = self.add(c, srt);
        for (i, (&res, full_shape)) in o.results.iter().zip(&shapes).enumerate() {
            let full = self.gte(c, sorted, i)?;
            let out = self.vshape(res)?;
            let mut sl = inst("slice", out.clone(), vec![full]);
            sl.slice_dimensions = full_shape
                .dimensions
                .iter()
                .zip(&out.dimensions)
                .map(|(&size, &want)| SliceDimensions {
                    start: 0,
                    limit: want.min(size),
                    stride: 1,
                })
                .collect();
            let id = self.add(c, sl);
            c.values.insert(res, id);
        }
        Ok(())
    }
}
