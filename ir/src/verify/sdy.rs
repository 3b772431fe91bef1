//! Rules of the Shardy value annotations `sdy.sharding_constraint` and `sdy.reshard`,
//! and of the module's `sdy.mesh` symbols (unique names).
//!
//! Invariants (as Shardy's own verifier states them): the result has the operand's type;
//! the inherent `sharding` attribute is a `#sdy.sharding<...>`; a sharding that names a
//! mesh by symbol (`<@mesh, ...>`) names an `sdy.mesh` of the module; and it lists one
//! dimension sharding (`{...}`) per dimension of the tensor. The payload is otherwise
//! opaque (axis names and sub-axes are a partitioner's business).

use super::cx::OpV;
use crate::attr::Attr;
use crate::parse::sdy::SHARDING_ATTR;
use crate::{Diagnostic, Module, Span};

/// Mesh names are module symbols: unique, and distinct from function names.
pub(super) fn check_meshes(m: &Module, diags: &mut Vec<Diagnostic>) {
    for (i, mesh) in m.meshes.iter().enumerate() {
        let clash = m.meshes[..i].iter().any(|o| o.name == mesh.name)
            || m.funcs.iter().any(|f| f.name == mesh.name);
        if clash {
            let msg = format!("redefinition of symbol '@{}' (sdy.mesh)", mesh.name);
            diags.push(Diagnostic::error(Span::default(), msg));
        }
    }
}

pub(super) fn check(v: &mut OpV) {
    let (Some(t), Some(r)) = (v.operand_ty(0), v.result_ty(0)) else {
        return;
    };
    if t != r {
        let (a, b) = (v.ts(t), v.ts(r));
        v.err(
            "",
            format!("expects the result type to equal the operand type {a}, but got {b}"),
        );
    }
    let Some(rank) = v.operand(0).map(|tt| tt.shape.len()) else {
        return;
    };
    let body = match v.attr("sharding") {
        Some(Attr::Opaque(s)) => s.strip_prefix(SHARDING_ATTR).filter(|b| b.starts_with('<')),
        Some(_) => None,
        None => {
            v.err("", "requires attribute 'sharding'");
            return;
        }
    };
    let Some(body) = body else {
        v.err(
            "",
            "expects 'sharding' to be a #sdy.sharding<...> attribute",
        );
        return;
    };
    if let Some(mesh) = mesh_symbol(body) {
        if !v.m.meshes.iter().any(|m| m.name == mesh) {
            v.err("", format!("sharding refers to unknown mesh '@{mesh}'"));
        }
    }
    if let Some(n) = dim_shardings(body) {
        if n != rank {
            v.err(
                "",
                format!("sharding has {n} dimension shardings but the tensor has rank {rank}"),
            );
        }
    }
}

/// The mesh symbol of `<@name, ...>` (bare names only), if the sharding names one.
fn mesh_symbol(body: &str) -> Option<&str> {
    let rest = body.strip_prefix('<')?.trim_start().strip_prefix('@')?;
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '.'))
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// The number of `{...}` groups in the first top-level `[...]` of the sharding (its
/// dimension shardings), skipping quoted axis names; `None` if there is no such list.
fn dim_shardings(body: &str) -> Option<usize> {
    let (mut in_str, mut escaped) = (false, false);
    let (mut square, mut brace, mut count, mut seen) = (0u32, 0u32, 0usize, false);
    for c in body.chars() {
        if in_str {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '[' => {
                square += 1;
                seen = true;
            }
            ']' => {
                square = square.saturating_sub(1);
                if square == 0 && seen {
                    return Some(count);
                }
            }
            '{' if square == 1 => {
                if brace == 0 {
                    count += 1;
                }
                brace += 1;
            }
            '}' if square == 1 => brace = brace.saturating_sub(1),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_mesh_and_dimension_count() {
        let b = r#"<@mesh, [{"x", ?}, {"y"}p1, {}], replicated={"z"}>"#;
        assert_eq!(mesh_symbol(b), Some("mesh"));
        assert_eq!(dim_shardings(b), Some(3));
        assert_eq!(dim_shardings(r#"<@m, []>"#), Some(0));
        assert_eq!(dim_shardings(r#"<@m, [{"a{"}]>"#), Some(1));
        assert_eq!(mesh_symbol(r#"<mesh<["x"=1]>, [{}]>"#), None);
    }
}
