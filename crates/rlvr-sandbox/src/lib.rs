//! Run one untrusted program isolated: new namespaces, a minimal read-only root, cgroup limits,
//! rlimits, an unprivileged user, seccomp installed last, and nothing left running afterwards.
//!
//! ```
//! use rlvr_sandbox::{RunRequest, Sandbox, SandboxConfig, Stdin, RunVerdict};
//! let sandbox = Sandbox::new(SandboxConfig::default())?;
//! let request = RunRequest {
//!     stdin: Stdin::Bytes(b"hello\n".to_vec()),
//!     ..RunRequest::python("print(input())")
//! };
//! let outcome = sandbox.run(&request)?;
//! assert_eq!(outcome.verdict, RunVerdict::Ok);
//! assert_eq!(outcome.stdout, b"hello\n");
//! # Ok::<(), rlvr_sandbox::SandboxError>(())
//! ```
//!
//! * [`Sandbox::new`] once per process: resolves the interpreter, creates the shared empty
//!   network namespace, probes cgroups, compiles the seccomp filter, prepares the root plan.
//! * [`Sandbox::run`] from any thread: one program, limits, captured output, a [`RunVerdict`].
//! * [`Sandbox::spawn`] from any thread: a long-lived sandboxed process with pipes and extra
//!   descriptors (the warm runner), waited for with a deadline, killed as a whole tree.
//!
//! See `docs/sandbox.md` for the isolation order and what each step defends against.

// `unsafe` is confined to `sys`, and every block there says why it is sound.
#![deny(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

mod cgroup;
mod error;
mod interpreter;
mod isolation;
mod minimal_root;
mod outcome;
mod process;
mod request;
mod restrictions;
mod run;
mod sandbox;
mod seccomp;
mod spawn;
#[expect(
    unsafe_code,
    reason = "the raw system calls, each wrapper with its SAFETY line"
)]
mod sys;
mod test_child;
mod user_namespace;
pub mod wait;

pub use cgroup::CgroupLayout;
pub use error::SandboxError;
pub use interpreter::{Interpreter, SANDBOX_PYTHON_PREFIX};
pub use isolation::Step;
pub use outcome::{Protection, RunOutcome, RunVerdict, SandboxMode};
pub use process::{ExitInfo, ResourceUsage, SandboxedProcess};
pub use request::{
    Network, Program, ResourceLimits, RunRequest, SpawnRequest, Stdin, StdioSpec, WorkFile,
};
pub use restrictions::Restriction;
pub use run::names_a_memory_error;
pub use sandbox::{ReadOnlyDirectory, Sandbox, SandboxConfig, Unavailable, WORK_DIRECTORY};
pub use test_child::{TEST_CHILD_STEPS, test_child_steps};
pub use user_namespace::IdMapping;
