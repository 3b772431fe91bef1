//! SSA name scopes: which `%name` denotes which value at the current point.
//!
//! Owns: [`Scopes`] — a hash map for general names plus a direct-indexed table for the
//! numeric names (`%0`, `%17`) that dominate printed MLIR, and an undo log so that leaving
//! a region restores the enclosing bindings in time proportional to what it defined.
//! Invariant: a binding records the region scope serial that defined it, so redefinition
//! within one region is detected while shadowing in a nested region is allowed.

use crate::module::ValueId;
use rustc_hash::FxHashMap;

/// A bound name: first value, number of results, defining scope serial.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Binding {
    pub first: ValueId,
    pub count: u32,
    pub serial: u32,
}

/// Largest numeric name kept in the direct table.
const MAX_NUMERIC: u32 = 1 << 22;

#[derive(Clone, Copy, Debug)]
enum Key<'a> {
    Name(&'a str),
    Num(u32),
}

/// Visible bindings and the undo log.
#[derive(Default)]
pub(crate) struct Scopes<'a> {
    names: FxHashMap<&'a str, Binding>,
    nums: Vec<Option<Binding>>,
    undo: Vec<(Key<'a>, Option<Binding>)>,
}

/// `%123` -> Some(123) (no leading zeros, bounded).
pub(crate) fn numeric(name: &str) -> Option<u32> {
    let d = name.strip_prefix('%')?;
    let b = d.as_bytes();
    if b.is_empty() || b.len() > 7 || (b.len() > 1 && b[0] == b'0') {
        return None;
    }
    let mut v = 0u32;
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as u32;
    }
    (v < MAX_NUMERIC).then_some(v)
}

impl<'a> Scopes<'a> {
    pub fn with_capacity(n: usize) -> Self {
        Scopes {
            names: FxHashMap::with_capacity_and_hasher(n / 4, Default::default()),
            nums: Vec::with_capacity(n),
            undo: Vec::with_capacity(n),
        }
    }

    /// Current undo-log length (a mark to restore to).
    pub fn mark(&self) -> usize {
        self.undo.len()
    }

    /// Binds `name` (with its `%`); returns the binding it shadows or replaces.
    pub fn define(&mut self, name: &'a str, b: Binding) -> Option<Binding> {
        if let Some(n) = numeric(name) {
            return self.define_num(n, b);
        }
        let prev = self.names.insert(name, b);
        self.undo.push((Key::Name(name), prev));
        prev
    }

    /// Binds the numeric name `%n` (`n` from [`numeric`]); as [`Self::define`].
    pub fn define_num(&mut self, n: u32, b: Binding) -> Option<Binding> {
        let i = n as usize;
        if self.nums.len() <= i {
            // Names mostly count up: grow geometrically, not once per name.
            let grown = (2 * self.nums.len()).min(MAX_NUMERIC as usize);
            self.nums.resize((i + 1).max(grown), None);
        }
        let prev = self.nums[i].replace(b);
        self.undo.push((Key::Num(n), prev));
        prev
    }

    /// The binding of `name` (with its `%`, without a `#N` suffix).
    #[inline]
    pub fn get(&self, name: &str) -> Option<Binding> {
        match numeric(name) {
            Some(n) => self.nums.get(n as usize).copied().flatten(),
            None => self.names.get(name).copied(),
        }
    }

    /// The binding of the numeric name `%n` (`n` as [`numeric`] reads it).
    #[inline]
    pub fn get_num(&self, n: u32) -> Option<Binding> {
        self.nums.get(n as usize).copied().flatten()
    }

    /// Undoes every definition made after `mark`.
    pub fn pop_to(&mut self, mark: usize) {
        while self.undo.len() > mark {
            let Some((key, prev)) = self.undo.pop() else {
                break;
            };
            match key {
                Key::Num(n) => self.nums[n as usize] = prev,
                Key::Name(s) => match prev {
                    Some(p) => {
                        self.names.insert(s, p);
                    }
                    None => {
                        self.names.remove(s);
                    }
                },
            }
        }
    }
}
