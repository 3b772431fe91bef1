//! Printer: canonical pretty form and generic form of a [`Module`].
//!
//! (Being written.) Public API: [`print_module`], [`PrintOptions`].
use crate::Module;

/// Printer options.
#[derive(Clone, Copy, Debug, Default)]
pub struct PrintOptions {
    /// Print every op in MLIR's generic form.
    pub generic: bool,
    /// Print `loc(...)` debug locations.
    pub debug_locs: bool,
}

/// Prints a module as MLIR text.
pub fn print_module(module: &Module, opts: &PrintOptions) -> String {
    let _ = (module, opts);
    String::new()
}
