//! Shardy (`sdy`) printing: module-level meshes and the pretty form of the sharding
//! annotations, mirroring `crate::parse::sdy`.
//!
//! Invariant: a mesh prints as `sdy.mesh @name = <...> {attrs}?` with its stored body
//! text; an annotation prints in pretty form only when its `sharding` attribute is an
//! opaque `#sdy.sharding<...>` and it has one operand and one result of the same type
//! (otherwise the caller falls back to the generic form).

use super::attr::{write_attr_dict, write_symbol};
use super::rest::Rest;
use super::Printer;
use crate::attr::Attr;
use crate::module::OpId;
use crate::parse::sdy::SHARDING_ATTR;

impl<'m> Printer<'m> {
    /// One line per mesh, at the current indentation.
    pub(crate) fn print_meshes(&mut self) {
        for mesh in &self.m.meshes {
            self.pad();
            self.out.push_str("sdy.mesh ");
            write_symbol(&mut self.out, &mesh.name);
            self.out.push_str(" = ");
            self.out.push_str(&mesh.body);
            if !mesh.attrs.is_empty() {
                self.out.push(' ');
                write_attr_dict(self, &mesh.attrs);
            }
            self.out.push('\n');
        }
    }

    /// ` %x <@mesh, [...]> {attrs}? : type` (after the op name); false if it does not fit.
    pub(crate) fn pp_sharding_annotation(&mut self, op: OpId, rest: &mut Rest<'_>) -> bool {
        let m = self.m;
        let o = m.op(op);
        let body = match rest.remove("sharding") {
            Some(Attr::Opaque(s)) => s.strip_prefix(SHARDING_ATTR),
            _ => None,
        };
        let Some(body) = body.filter(|b| b.starts_with('<')) else {
            return false;
        };
        let [x] = o.operands[..] else { return false };
        let [r] = o.results[..] else { return false };
        if m.value_type(x) != m.value_type(r) {
            return false;
        }
        self.out.push(' ');
        self.value(x);
        self.out.push(' ');
        self.out.push_str(body);
        self.attr_dict_opt(rest);
        self.out.push_str(" : ");
        self.ty_of(r);
        true
    }
}
