//! The attributes of an op that its custom syntax has not printed yet.
//!
//! Owns: [`Rest`], a borrowed view of an op's [`NamedAttrs`] from which the pretty printer
//! takes the attributes it spells as keywords; what is left prints as the trailing
//! `{...}` dictionary. Taking an attribute records its index instead of copying the
//! dictionary (the printer visits every op, so a clone per op would dominate).
//! Invariant: an attribute is handed out at most once; the remaining entries iterate in
//! the dictionary's (sorted) order.

use crate::attr::{Attr, NamedAttrs};
use smallvec::SmallVec;

/// A view of `attrs` minus the entries already taken.
pub(crate) struct Rest<'a> {
    attrs: &'a NamedAttrs,
    /// Indices of the taken entries (an op's syntax takes a handful at most).
    taken: SmallVec<[u16; 8]>,
}

impl<'a> Rest<'a> {
    pub fn new(attrs: &'a NamedAttrs) -> Self {
        Rest {
            attrs,
            taken: SmallVec::new(),
        }
    }

    fn is_taken(&self, i: usize) -> bool {
        self.taken.iter().any(|&t| usize::from(t) == i)
    }

    /// Index of `name` in the dictionary. Ops carry a handful of attributes, so a linear
    /// scan (names of another length are rejected without comparing bytes) beats the
    /// binary search, whose every probe compares bytes.
    fn position(&self, name: &str) -> Option<usize> {
        if self.attrs.len() > 8 {
            return self.attrs.position(name);
        }
        self.attrs.iter().position(|(n, _)| n == name)
    }

    /// The attribute `name` if it is still there.
    pub fn get(&self, name: &str) -> Option<&'a Attr> {
        let i = self.position(name)?;
        (!self.is_taken(i)).then(|| self.attrs.entry(i).1)
    }

    /// Takes attribute `name` (it no longer prints in the trailing dictionary).
    pub fn remove(&mut self, name: &str) -> Option<&'a Attr> {
        let i = self.position(name)?;
        if self.is_taken(i) {
            return None;
        }
        // Beyond u16::MAX entries the attribute is reported absent: the caller then either
        // gives up its custom form (generic form) or leaves it in the trailing dictionary.
        self.taken.push(u16::try_from(i).ok()?);
        Some(self.attrs.entry(i).1)
    }

    pub fn is_empty(&self) -> bool {
        self.attrs.len() == self.taken.len()
    }

    /// The entries not taken, in dictionary order.
    pub fn iter(&self) -> impl Iterator<Item = (&'a str, &'a Attr)> + '_ {
        let attrs = self.attrs;
        (0..attrs.len())
            .filter(|&i| !self.is_taken(i))
            .map(move |i| attrs.entry(i))
    }
}
