//! Printer: canonical pretty form and generic form of a [`Module`].
//!
//! Owns: [`print_module`] / [`PrintOptions`], value naming, and module/function/region
//! framing plus the generic op form; `attr` prints attributes and dense payloads,
//! `pretty` the custom op syntaxes (mirroring `crate::parse::syntax`), `sdy` the Shardy
//! meshes (printed after the module header, before the functions, in both forms) and
//! sharding annotations.
//!
//! Invariants: output is deterministic and re-parses (with our parser and with MLIR's)
//! to an equal module; values are numbered per function like MLIR does (an op's region is
//! numbered after the enclosing region's values; sibling regions reuse numbers); an op
//! whose attributes do not fit its pretty syntax is printed in the generic form; a
//! function declaration prints as its signature (argument types, no names, no body).

mod attr;
mod pretty;
mod rest;
mod sdy;

use crate::module::{OpId, RegionId, ValueId};
use crate::types::TypeId;
use crate::Module;

pub(crate) use attr::{write_attr, write_attr_dict};
/// MLIR spellings of scalar attribute values, for other writers of MLIR attribute text
/// (e.g. the HLO emitter's typed-FFI `backend_config`).
pub use attr::{write_float, write_int, write_string};

/// Printer options.
#[derive(Clone, Copy, Debug, Default)]
pub struct PrintOptions {
    /// Print every op in MLIR's generic form.
    pub generic: bool,
    /// Print `loc(...)` debug locations.
    pub debug_locs: bool,
}

/// How a value is spelled.
#[derive(Clone, Copy, Debug, Default)]
enum Name {
    #[default]
    Unnamed,
    Arg(u32),
    Val(u32),
    /// Result `i` of a multi-result op numbered `n`: `%n#i`.
    Multi(u32, u32),
}

/// Printer state for one module.
pub(crate) struct Printer<'m> {
    pub m: &'m Module,
    pub opts: PrintOptions,
    pub out: String,
    names: Vec<Name>,
    indent: usize,
    /// Text of each type printed so far, by type id (types repeat on almost every line).
    type_text: Vec<Option<Box<str>>>,
    /// The function whose value numbering `names` holds.
    numbered: Option<usize>,
}

/// Modules whose function bodies hold fewer top-level ops than this in all print on one
/// thread: below it a helper thread costs more than it saves (starting one and faulting
/// in its fresh allocator heap took longer than the ~0.2 ms it saved on the BERT-base
/// training step, about 5,300 ops, on a loaded 2-core machine).
const PARALLEL_MIN_OPS: usize = 8192;

/// Prints a module as MLIR text.
///
/// Functions are numbered independently (values are per-function, like MLIR), so large
/// modules print on two threads: the text is cut into [`Piece`]s (whole functions, and
/// runs of [`PIECE_OPS`] top-level ops of long bodies), which this thread takes from the
/// front and a helper from the back until they meet, and the texts are joined in piece
/// order: the bytes are the same as printing on one thread, whoever printed which piece.
pub fn print_module(module: &Module, opts: &PrintOptions) -> String {
    if body_ops(module) < PARALLEL_MIN_OPS || module.funcs.len() < 2 {
        let mut p = Printer::new(module, opts, module.ops.len() * 80 + 256);
        p.module_header();
        p.indent = 1;
        p.print_meshes();
        for f in 0..module.funcs.len() {
            p.print_func(f);
        }
        p.out.push_str("}\n");
        return p.out;
    }
    // Room for all the text up front in both buffers (pages are only touched when
    // written): appending the helper's text must not move (copy) this thread's.
    let total: usize = (0..module.funcs.len())
        .map(|f| func_weight(module, f))
        .sum();
    let capacity = total * BYTES_PER_WEIGHT + 4096;
    let mut p = Printer::new(module, opts, capacity);
    p.module_header();
    p.indent = 1;
    p.print_meshes();
    let pieces = pieces(module);
    let queue = PieceQueue(std::sync::Mutex::new(0..pieces.len()));
    let ((), (text, starts)) = crate::par::join(
        || {
            while let Some(i) = queue.front() {
                p.print_piece(&pieces[i]);
            }
        },
        || {
            let mut q = Printer::new(module, opts, capacity);
            q.indent = 1;
            // Where each piece's text starts, in printing (decreasing piece) order.
            let mut starts = Vec::new();
            while let Some(i) = queue.back() {
                starts.push(q.out.len());
                q.print_piece(&pieces[i]);
            }
            (q.out, starts)
        },
    );
    // The helper printed the last pieces last-first (the text of the one printed `w`-th
    // runs from `starts[w]` to the next start): append them first-first.
    for (w, &start) in starts.iter().enumerate().rev() {
        let stop = starts.get(w + 1).copied().unwrap_or(text.len());
        p.out.push_str(&text[start..stop]);
    }
    p.out.push_str("}\n");
    p.out
}

/// Top-level ops of all function bodies (dead ops left in the arena by passes do not count).
fn body_ops(m: &Module) -> usize {
    m.funcs.iter().map(|f| m.region(f.body).ops.len()).sum()
}

/// Top-level ops per [`Piece`] of a long function body.
const PIECE_OPS: usize = 64;

/// A contiguous part of the printed text: the top-level ops `ops` of function `func`'s
/// body, preceded by the function's opening line when `ops` starts the body and followed
/// by its closing brace when `ops` ends it (a declaration is one piece without ops).
struct Piece {
    func: usize,
    ops: std::ops::Range<usize>,
}

/// The pieces of a module's functions, in text order.
fn pieces(m: &Module) -> Vec<Piece> {
    let mut out = Vec::new();
    for func in 0..m.funcs.len() {
        let n = m.region(m.funcs[func].body).ops.len();
        let mut start = 0;
        loop {
            let end = n.min(start + PIECE_OPS);
            out.push(Piece {
                func,
                ops: start..end,
            });
            if end == n {
                break;
            }
            start = end;
        }
    }
    out
}

/// The indices of the pieces not yet taken, taken from either end.
struct PieceQueue(std::sync::Mutex<std::ops::Range<usize>>);

impl PieceQueue {
    fn take(&self, back: bool) -> Option<usize> {
        let mut left = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if back {
            left.next_back()
        } else {
            left.next()
        }
    }
    fn front(&self) -> Option<usize> {
        self.take(false)
    }
    fn back(&self) -> Option<usize> {
        self.take(true)
    }
}

/// Output bytes reserved per unit of [`func_weight`] (a unit prints as about 20 bytes: a
/// value name and its type, or an op's framing).
const BYTES_PER_WEIGHT: usize = 32;

/// The reservation weight of function `f`, about proportional to its printed size: per
/// top-level op two units of framing plus one per operand and result, two per attribute,
/// and a flat [`REGION_WEIGHT`] per nested region (reducer bodies: a few small ops).
fn func_weight(m: &Module, f: usize) -> usize {
    let ops = &m.region(m.funcs[f].body).ops;
    1 + ops
        .iter()
        .map(|&op| {
            let o = m.op(op);
            2 + o.operands.len()
                + o.results.len()
                + 2 * o.attrs.len()
                + REGION_WEIGHT * o.regions.len()
        })
        .sum::<usize>()
}

/// [`func_weight`] of one nested region.
const REGION_WEIGHT: usize = 12;

impl<'m> Printer<'m> {
    fn new(m: &'m Module, opts: &PrintOptions, capacity: usize) -> Self {
        Printer {
            m,
            opts: *opts,
            out: String::with_capacity(capacity),
            names: vec![Name::Unnamed; m.values.len()],
            indent: 0,
            type_text: Vec::new(),
            numbered: None,
        }
    }

    /// `module @name attributes {...} {` and its newline.
    fn module_header(&mut self) {
        let m = self.m;
        self.out.push_str("module");
        if let Some(n) = &m.name {
            self.out.push(' ');
            attr::write_symbol(&mut self.out, n);
        }
        if !m.attrs.is_empty() {
            self.out.push_str(" attributes ");
            write_attr_dict(self, &m.attrs);
        }
        self.out.push_str(" {\n");
    }

    fn print_func(&mut self, fi: usize) {
        let n = self.m.region(self.m.funcs[fi].body).ops.len();
        self.print_piece(&Piece {
            func: fi,
            ops: 0..n,
        });
    }

    /// Prints one [`Piece`], numbering its function's values first unless this printer
    /// holds that function's numbering already.
    fn print_piece(&mut self, piece: &Piece) {
        let m = self.m;
        let f = &m.funcs[piece.func];
        if self.numbered != Some(piece.func) {
            let (mut nv, mut na) = (0, 0);
            self.number_region(f.body, &mut nv, &mut na);
            self.numbered = Some(piece.func);
        }
        let declaration = m.is_declaration(f);
        if piece.ops.start == 0 {
            self.func_open(piece.func, declaration);
        }
        let ops = &m.region(f.body).ops;
        if !declaration {
            self.indent += 1;
            for &op in &ops[piece.ops.clone()] {
                self.print_op(op, true);
            }
            self.indent -= 1;
        }
        if piece.ops.end == ops.len() {
            if !declaration {
                self.pad();
                self.out.push('}');
            }
            if let Some(l) = f.loc.filter(|_| self.opts.debug_locs) {
                self.out.push(' ');
                self.out.push_str(&m.locs[l.index()]);
            }
            self.out.push('\n');
        }
    }

    /// The function's signature line, ending with ` {` and a newline for a definition.
    fn func_open(&mut self, fi: usize, declaration: bool) {
        let m = self.m;
        let f = &m.funcs[fi];
        self.pad();
        self.out.push_str("func.func ");
        if let Some(v) = &f.visibility {
            self.out.push_str(v);
            self.out.push(' ');
        }
        attr::write_symbol(&mut self.out, &f.name);
        self.out.push('(');
        let args = &m.region(f.body).args;
        for (i, &a) in args.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            if !declaration {
                self.value(a);
                self.out.push_str(": ");
            }
            self.ty_of(a);
            if let Some(d) = f.arg_attrs.get(i).filter(|d| !d.is_empty()) {
                self.out.push(' ');
                write_attr_dict(self, d);
            }
        }
        self.out.push(')');
        self.func_results(fi);
        if !f.attrs.is_empty() {
            self.out.push_str(" attributes ");
            write_attr_dict(self, &f.attrs);
        }
        if !declaration {
            self.out.push_str(" {\n");
        }
    }

    /// ` -> type` or ` -> (types with attributes)` (nothing without results).
    fn func_results(&mut self, fi: usize) {
        let f = &self.m.funcs[fi];
        if f.result_types.is_empty() {
            return;
        }
        let has_res_attrs = f.result_attrs.iter().any(|d| !d.is_empty());
        self.out.push_str(" -> ");
        let paren = f.result_types.len() != 1 || has_res_attrs;
        if paren {
            self.out.push('(');
        }
        for (i, &t) in f.result_types.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.ty(t);
            if let Some(d) = f.result_attrs.get(i).filter(|d| !d.is_empty()) {
                self.out.push(' ');
                write_attr_dict(self, d);
            }
        }
        if paren {
            self.out.push(')');
        }
    }

    /// MLIR-style numbering: this region's args and results first, then nested regions
    /// (each starting from the same counters, restored afterwards).
    fn number_region(&mut self, r: RegionId, nv: &mut u32, na: &mut u32) {
        let m = self.m;
        let reg = m.region(r);
        for &a in &reg.args {
            self.names[a.index()] = Name::Arg(*na);
            *na += 1;
        }
        for &op in &reg.ops {
            let res = &m.op(op).results;
            match res.len() {
                0 => {}
                1 => self.names[res[0].index()] = Name::Val(*nv),
                _ => {
                    for (i, &v) in res.iter().enumerate() {
                        self.names[v.index()] = Name::Multi(*nv, i as u32);
                    }
                }
            }
            if !res.is_empty() {
                *nv += 1;
            }
        }
        for &op in &reg.ops {
            for &sub in &m.op(op).regions {
                let (sv, sa) = (*nv, *na);
                self.number_region(sub, nv, na);
                (*nv, *na) = (sv, sa);
            }
        }
    }

    /// Two spaces per indentation level.
    pub(crate) fn pad(&mut self) {
        const SPACES: &str = "                                ";
        let mut n = 2 * self.indent;
        while n > 0 {
            let k = n.min(SPACES.len());
            self.out.push_str(&SPACES[..k]);
            n -= k;
        }
    }

    /// Writes a value use (`%3`, `%arg0`, `%5#1`).
    /// Writes the name of `v` (`%arg3`, `%12`, `%12#1`): the printer's most frequent
    /// output, so integers go through `itoa` rather than `fmt`.
    pub(crate) fn value(&mut self, v: ValueId) {
        match self.names.get(v.index()).copied().unwrap_or_default() {
            Name::Arg(n) => {
                self.out.push_str("%arg");
                attr::push_num(&mut self.out, n);
            }
            Name::Val(n) => {
                self.out.push('%');
                attr::push_num(&mut self.out, n);
            }
            name => self.rare_value(v, name),
        }
    }

    /// [`Printer::value`] of a result of a multi-result op or an unnamed value (out of
    /// line: the common names keep the frequent path short).
    #[inline(never)]
    fn rare_value(&mut self, v: ValueId, name: Name) {
        self.out.push('%');
        match name {
            Name::Multi(n, i) => {
                attr::push_num(&mut self.out, n);
                self.out.push('#');
                attr::push_num(&mut self.out, i);
            }
            _ => {
                self.out.push_str("unnamed");
                attr::push_num(&mut self.out, v.0);
            }
        }
    }

    pub(crate) fn values(&mut self, vs: &[ValueId]) {
        for (i, &v) in vs.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.value(v);
        }
    }

    pub(crate) fn ty_of(&mut self, v: ValueId) {
        self.ty(self.m.value_type(v));
    }

    /// Writes type `t` (its text is built once per type id).
    pub(crate) fn ty(&mut self, t: TypeId) {
        match self.type_text.get(t.0 as usize) {
            Some(Some(text)) => self.out.push_str(text),
            _ => self.first_ty(t),
        }
    }

    /// [`Printer::ty`] of a type not printed before: builds and keeps its text. Out of
    /// line, so that the frequent path stays a lookup and a copy.
    #[cold]
    #[inline(never)]
    fn first_ty(&mut self, t: TypeId) {
        let i = t.0 as usize;
        if i >= self.type_text.len() {
            self.type_text.resize(i + 1, None);
        }
        let mut s = String::new();
        self.m.types.write(t, &mut s);
        self.out.push_str(&s);
        self.type_text[i] = Some(s.into_boxed_str());
    }

    /// `t1, t2` of the given values.
    pub(crate) fn types_of(&mut self, vs: &[ValueId]) {
        for (i, &v) in vs.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.ty_of(v);
        }
    }

    /// `(operand types) -> result type(s)`.
    pub(crate) fn functional_type(&mut self, op: OpId) {
        let o = self.m.op(op);
        self.out.push('(');
        self.types_of(&o.operands);
        self.out.push_str(") -> ");
        self.result_types(op);
    }

    /// A single result type, or a parenthesized list.
    pub(crate) fn result_types(&mut self, op: OpId) {
        let o = self.m.op(op);
        if o.results.len() == 1 {
            self.ty_of(o.results[0]);
        } else {
            self.out.push('(');
            self.types_of(&o.results);
            self.out.push(')');
        }
    }

    /// Prints the ops of a region body (each on its own line, indented one level more).
    pub(crate) fn print_region_ops(&mut self, r: RegionId, func_body: bool) {
        self.indent += 1;
        for &op in &self.m.region(r).ops {
            self.print_op(op, func_body);
        }
        self.indent -= 1;
    }

    fn print_op(&mut self, op: OpId, func_body: bool) {
        let o = self.m.op(op);
        self.pad();
        if !o.results.is_empty() {
            self.value_def(o.results[0]);
            if o.results.len() > 1 {
                self.out.push(':');
                attr::push_num(&mut self.out, o.results.len());
            }
            self.out.push_str(" = ");
        }
        let mark = self.out.len();
        if self.opts.generic || !self.print_pretty(op, func_body) {
            self.out.truncate(mark);
            self.print_generic(op);
        }
        if let Some(l) = o.loc.filter(|_| self.opts.debug_locs) {
            self.out.push(' ');
            self.out.push_str(&self.m.locs[l.index()]);
        }
        self.out.push('\n');
    }

    /// Gives `dst` values the names of `src` values (shared iteration-argument names).
    pub(crate) fn alias_args(&mut self, dst: &[ValueId], src: &[ValueId]) {
        for (d, s) in dst.iter().zip(src) {
            self.names[d.index()] = self.names[s.index()];
        }
    }

    /// The defining name of a result group (`%3` for `%3#0`).
    fn value_def(&mut self, v: ValueId) {
        match self.names[v.index()] {
            Name::Val(n) | Name::Multi(n, _) => {
                self.out.push('%');
                attr::push_num(&mut self.out, n);
            }
            _ => {
                self.out.push_str("%unnamed");
                attr::push_num(&mut self.out, v.0);
            }
        }
    }

    /// `"name"(operands) ({regions}) {attrs} : (types) -> types`.
    fn print_generic(&mut self, op: OpId) {
        let o = self.m.op(op);
        self.out.push('"');
        self.out.push_str(o.kind.name());
        self.out.push_str("\"(");
        self.values(&o.operands);
        self.out.push(')');
        if !o.regions.is_empty() {
            self.out.push_str(" (");
            for (i, &r) in o.regions.iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                self.region_block(r, true);
            }
            self.out.push(')');
        }
        if !o.attrs.is_empty() {
            self.out.push(' ');
            write_attr_dict(self, &o.attrs);
        }
        self.out.push_str(" : ");
        self.functional_type(op);
    }

    /// `{ ^bb0(args): ops }` (the block header only when `header` and there are args).
    pub(crate) fn region_block(&mut self, r: RegionId, header: bool) {
        self.out.push_str("{\n");
        let args = &self.m.region(r).args;
        if header && !args.is_empty() {
            self.pad();
            self.out.push_str("^bb0(");
            for (i, &a) in args.iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                self.value(a);
                self.out.push_str(": ");
                self.ty_of(a);
            }
            self.out.push_str("):\n");
        }
        self.print_region_ops(r, false);
        self.pad();
        self.out.push('}');
    }
}

#[cfg(test)]
mod tests {
    use super::{pieces, PIECE_OPS};
    use crate::parse_module;

    #[test]
    fn pieces_cover_every_body_in_order_in_runs_of_piece_ops() {
        let ops = |n: usize| -> String {
            (0..n)
                .map(|i| format!("%{i} = stablehlo.negate %arg0 : tensor<f32>\n"))
                .collect()
        };
        let text = format!(
            "func.func @a(%arg0: tensor<f32>) -> tensor<f32> {{\n{}return %arg0 : tensor<f32>\n}}\n\
             func.func private @d(tensor<f32>) -> tensor<f32>\n\
             func.func @b(%arg0: tensor<f32>) -> tensor<f32> {{\nreturn %arg0 : tensor<f32>\n}}\n",
            ops(2 * PIECE_OPS)
        );
        let m = parse_module(&text).unwrap();
        // @a: 2 * PIECE_OPS + 1 ops (the return too) in three runs; @d: a declaration,
        // one piece without ops; @b: one op.
        let got: Vec<(usize, usize, usize)> = pieces(&m)
            .iter()
            .map(|p| (p.func, p.ops.start, p.ops.end))
            .collect();
        let n = PIECE_OPS;
        assert_eq!(
            got,
            [
                (0, 0, n),
                (0, n, 2 * n),
                (0, 2 * n, 2 * n + 1),
                (1, 0, 0),
                (2, 0, 1)
            ]
        );
    }
}
