//! The warm Python runner over its protocol, with the real sandbox: loads, tests, resets,
//! the live child of judge functional tests, the references' process semantics. One test
//! binary, a module per concern, and a shared [`common`] module.

mod common;

mod live_child;
mod protocol;
mod reference_semantics;
mod test_child_steps;
