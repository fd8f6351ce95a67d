//! The targets `rlvr redteam` measures.

pub mod native;
pub mod openrlhf;
pub mod profile;
pub mod python_function;
pub mod sandbox_fusion;
