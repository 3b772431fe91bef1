//! placeholder crate root; see README.
