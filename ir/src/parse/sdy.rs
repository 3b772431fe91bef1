//! Shardy (`sdy` dialect) syntax as jax prints it with shardings: module-level meshes
//! (`sdy.mesh @mesh = <["x"=1]> {attrs}?`, and the generic `"sdy.mesh"() <{mesh =
//! #sdy.mesh<...>, sym_name = "mesh"}> : () -> ()`), and the pretty form of the value
//! annotations `sdy.sharding_constraint` / `sdy.reshard` (`%x <@mesh, [...]> {attrs}? :
//! type`).
//!
//! Invariants: the mesh and sharding payloads are kept as their source text (balanced
//! `<...>`), so they print back unchanged; the pretty annotation form stores its payload as
//! the opaque attribute `sharding = #sdy.sharding<...>`, exactly what the generic form
//! holds. Ops of the dialect we do not model get a diagnostic that says so, not a generic
//! parse error: `sdy.manual_computation` (what jax prints for shard_map on a mesh of
//! several devices; on a one-device mesh jax inlines the body) holds a per-device program
//! that a single NeuronCore cannot run as the global one.

use super::lexer::{Tok, Token};
use super::ops::OpBuild;
use super::{PResult, Parser};
use crate::attr::{Attr, NamedAttrs};
use crate::module::Mesh;
use smallvec::smallvec;

/// Prefix of the generic `mesh` attribute of `sdy.mesh`.
pub(crate) const MESH_ATTR: &str = "#sdy.mesh";
/// Prefix of the generic `sharding` attribute of the sharding annotations.
pub(crate) const SHARDING_ATTR: &str = "#sdy.sharding";

impl<'a> Parser<'a> {
    /// A balanced `<...>` at the next token, returned as its source text.
    fn angle_text(&mut self) -> PResult<String> {
        let start = self.peek().start as usize;
        self.skip_angle_body()?;
        Ok(self.src[start..self.pos].to_string())
    }

    /// `sdy.mesh @name = <...> {attrs}? loc?` (the `sdy.mesh` token is next).
    pub fn parse_sdy_mesh(&mut self) -> PResult<()> {
        self.bump();
        let t = self.expect(Tok::At, "mesh name '@...'")?;
        let name = self.symbol_name(t)?;
        self.expect(Tok::Equal, "'=' after the mesh name")?;
        let body = self.angle_text()?;
        let attrs = if self.at(Tok::LBrace) {
            self.parse_attr_dict()?
        } else {
            NamedAttrs::new()
        };
        self.parse_opt_loc()?;
        self.m.meshes.push(Mesh { name, body, attrs });
        Ok(())
    }

    /// `"sdy.mesh"() <{mesh = #sdy.mesh<...>, sym_name = "..."}> {attrs}? : () -> ()`.
    pub fn parse_generic_sdy_mesh(&mut self) -> PResult<()> {
        let kw = self.bump();
        self.expect(Tok::LParen, "'('")?;
        self.expect(Tok::RParen, "')' (a mesh has no operands)")?;
        let mut attrs = NamedAttrs::new();
        if self.eat(Tok::Less) {
            self.parse_attr_dict_into(&mut attrs)?;
            self.expect(Tok::Greater, "'>' after properties")?;
        }
        if self.at(Tok::LBrace) {
            self.parse_attr_dict_into(&mut attrs)?;
        }
        self.expect(Tok::Colon, "':'")?;
        self.parse_function_type()?;
        self.parse_opt_loc()?;
        let name = match attrs.remove("sym_name") {
            Some(Attr::Str(s)) => s,
            _ => return self.err_at(Self::span_of(kw), "sdy.mesh without 'sym_name'"),
        };
        let body = match attrs.remove("mesh") {
            Some(Attr::Opaque(s)) if s.starts_with(MESH_ATTR) => s[MESH_ATTR.len()..].to_string(),
            _ => return self.err_at(Self::span_of(kw), "sdy.mesh needs 'mesh = #sdy.mesh<...>'"),
        };
        self.m.meshes.push(Mesh { name, body, attrs });
        Ok(())
    }

    /// The rest of `sdy.sharding_constraint %x <...> {attrs}? : type` (name consumed).
    pub fn parse_sharding_annotation(&mut self, b: &mut OpBuild, name: Token) -> PResult<()> {
        let o = self.parse_operand()?;
        if !self.at(Tok::Less) {
            let t = self.peek();
            return self.err_expected(t, "a sharding '<@mesh, [...]>'");
        }
        let body = self.angle_text()?;
        b.attrs
            .set("sharding", Attr::Opaque(format!("{SHARDING_ATTR}{body}")));
        self.opt_attr_dict(b)?;
        self.expect(Tok::Colon, "':' and the op's type")?;
        let ty = self.parse_type()?;
        self.set_operands(b, &[o], &[ty], name)?;
        b.result_types = smallvec![ty];
        Ok(())
    }

    /// The diagnostic for an `sdy.*` op we do not model, at its name token.
    pub fn unsupported_sdy_op<T>(&self, name_tok: Token, name: &str) -> PResult<T> {
        let why = if name == "sdy.manual_computation" {
            "'sdy.manual_computation' (jax shard_map over a mesh of several devices) is not \
             supported: its body is a per-device program; trace with a one-device mesh \
             (jax then inlines the shard_map body)"
                .to_string()
        } else {
            format!(
                "unsupported Shardy operation '{name}' (supported: sdy.mesh, \
                 sdy.sharding_constraint, sdy.reshard)"
            )
        };
        self.err_at(Self::span_of(name_tok), why)
    }
}
