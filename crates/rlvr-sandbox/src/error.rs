//! Errors: only a sandbox that cannot be set up is an error; a failing program is a verdict.

use std::path::PathBuf;

use crate::isolation::Step;
use crate::outcome::Protection;

/// The sandbox could not be created or could not start a program.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// No usable Python interpreter was found.
    #[error("cannot resolve the python interpreter from {command}: {reason}")]
    Interpreter {
        /// What was tried (`RLVR_PYTHON`, `python3`, a path).
        command: String,
        /// Why it failed.
        reason: String,
    },
    /// Protections required for full isolation are unavailable and degraded mode was not allowed.
    #[error("the sandbox cannot provide {}: {reason} (rerun with --allow-degraded to run without them)", names(.missing))]
    MissingProtections {
        /// The protections that are missing.
        missing: Vec<Protection>,
        /// Why (first reason found per subsystem).
        reason: String,
    },
    /// A host-side system call failed while preparing or supervising a run.
    #[error("sandbox {action} failed: {error}")]
    System {
        /// What we were doing.
        action: &'static str,
        /// The underlying error (in the message, not the chain).
        error: std::io::Error,
    },
    /// A file or directory operation failed (cgroups, staging directory, stdin file).
    #[error("sandbox {action} failed for {}: {error}", .path.display())]
    Path {
        /// What we were doing.
        action: &'static str,
        /// The path concerned.
        path: PathBuf,
        /// The underlying error (in the message, not the chain).
        error: std::io::Error,
    },
    /// One step of the isolation sequence failed in the child.
    #[error("sandbox step '{}' failed in the child: {}", .step.name(), std::io::Error::from_raw_os_error(*.errno))]
    ChildStep {
        /// The step that failed.
        step: Step,
        /// Its errno.
        errno: i32,
    },
    /// The request itself is invalid (bad file name, too many descriptors, NUL in an argument).
    #[error("invalid sandbox request: {reason}")]
    InvalidRequest {
        /// What is wrong.
        reason: String,
    },
}

fn names(protections: &[Protection]) -> String {
    protections
        .iter()
        .map(|protection| protection.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

impl SandboxError {
    pub(crate) fn system(action: &'static str) -> impl FnOnce(std::io::Error) -> SandboxError {
        move |error| SandboxError::System { action, error }
    }

    pub(crate) fn path(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> SandboxError {
        let path = path.into();
        move |error| SandboxError::Path {
            action,
            path,
            error,
        }
    }
}
