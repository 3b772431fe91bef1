//! `strip-sharding`: replaces the Shardy sharding annotations (`sdy.sharding_constraint`,
//! `sdy.reshard`) by their operand.
//!
//! A sharding only instructs an SPMD partitioner how to split a program over a device
//! mesh; frameworks partition before the Neuron compiler sees the graph, so for one
//! NeuronCore the annotations are value identities that back ends need not know about.
//! `compile` runs this pass first; `opt` keeps the annotations (they are part of the
//! program for other consumers).
//!
//! Invariants: every use of an annotation's result (in any region, including function
//! returns) is redirected to the annotation's ultimate non-annotation source, chains of
//! annotations included; the annotation ops leave their regions; module meshes and
//! `sdy.sharding` argument/result attributes are left as they are (inert metadata). With
//! exhausted fuel an annotation stays, and so does every use of it.

use crate::context::{Changed, PassContext};
use crate::error::PassError;
use crate::pass::Pass;
use neuronc_ir::{Module, OpId, ValueId};
use rustc_hash::FxHashMap;

/// The `strip-sharding` pass.
pub struct StripSharding;

impl Pass for StripSharding {
    fn name(&self) -> &'static str {
        "strip-sharding"
    }
    fn run(&self, module: &mut Module, ctx: &mut PassContext) -> Result<Changed, PassError> {
        Ok(Changed::from_bool(strip(module, ctx) > 0))
    }
}

/// Strips the annotations; returns how many were removed.
fn strip(m: &mut Module, ctx: &mut PassContext) -> usize {
    let mut stripped: Vec<OpId> = Vec::new();
    let mut source: FxHashMap<ValueId, ValueId> = FxHashMap::default();
    let mut live = Vec::new();
    m.walk_ops(|op| live.push(op));
    for &op in &live {
        let o = m.op(op);
        let ([x], [r]) = (&o.operands[..], &o.results[..]) else {
            continue;
        };
        if !o.kind.is_sharding_annotation() || m.value_type(*x) != m.value_type(*r) {
            continue;
        }
        let (x, r) = (*x, *r);
        if ctx.try_rewrite("strip-sharding", m, op) {
            // Operands are defined before their users, so `x` is already resolved.
            let root = source.get(&x).copied().unwrap_or(x);
            source.insert(r, root);
            stripped.push(op);
        }
    }
    if stripped.is_empty() {
        return 0;
    }
    for &op in &live {
        for v in &mut m.op_mut(op).operands {
            if let Some(&s) = source.get(v) {
                *v = s;
            }
        }
    }
    for &op in &stripped {
        if let Some(r) = m.op(op).parent {
            m.region_mut(r).ops.retain(|&o| o != op);
        }
        m.op_mut(op).parent = None;
    }
    stripped.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use neuronc_ir::{parse_module, print_module, verify_module, PrintOptions};

    const SRC: &str = r#"module @m {
  sdy.mesh @mesh = <["x"=1]>
  func.func public @main(%arg0: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}, {}]> : tensor<2x4xf32>
    %1 = sdy.reshard %0 <@mesh, [{}, {"x"}]> : tensor<2x4xf32>
    %2 = stablehlo.negate %1 : tensor<2x4xf32>
    return %1, %2 : tensor<2x4xf32>, tensor<2x4xf32>
  }
}
"#;

    #[test]
    fn chains_resolve_to_the_source_and_meshes_stay() {
        let mut m = parse_module(SRC).unwrap();
        let mut ctx = PassContext::new();
        let changed = StripSharding.run(&mut m, &mut ctx).unwrap();
        assert!(matches!(changed, Changed::Yes));
        verify_module(&m).unwrap();
        let text = print_module(&m, &PrintOptions::default());
        assert!(!text.contains("sdy.sharding_constraint") && !text.contains("sdy.reshard"));
        assert!(text.contains("stablehlo.negate %arg0"), "{text}");
        assert!(text.contains("return %arg0, %0"), "{text}");
        assert!(text.contains(r#"sdy.mesh @mesh = <["x"=1]>"#), "{text}");
    }

    #[test]
    fn no_fuel_changes_nothing() {
        let mut m = parse_module(SRC).unwrap();
        let before = print_module(&m, &PrintOptions::default());
        let mut ctx = PassContext::new().with_fuel(0);
        StripSharding.run(&mut m, &mut ctx).unwrap();
        assert_eq!(print_module(&m, &PrintOptions::default()), before);
    }
}
