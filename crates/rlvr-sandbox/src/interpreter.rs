//! Finding the real Python interpreter (never the pyenv shim) and where it appears in the sandbox.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::SandboxError;

/// Where an interpreter prefix outside `/usr` is mounted inside the sandbox (read-only).
pub const SANDBOX_PYTHON_PREFIX: &str = "/opt/rlvr-python";

/// The interpreter that runs sandboxed programs.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Interpreter {
    /// The real executable on the host (symlinks and shims resolved).
    pub host_executable: PathBuf,
    /// Its installation prefix on the host (`sys.base_prefix`, resolved).
    pub host_prefix: PathBuf,
    /// The executable's path inside the sandbox.
    pub sandbox_executable: PathBuf,
    /// The prefix's path inside the sandbox.
    pub sandbox_prefix: PathBuf,
    /// `sys.version` (first line).
    pub version: String,
}

impl Interpreter {
    /// Whether the prefix needs its own bind mount (it is not under `/usr`).
    pub(crate) fn needs_prefix_mount(&self) -> bool {
        !self.host_prefix.starts_with("/usr")
    }

    /// Resolves `explicit`, else `$RLVR_PYTHON`, else `python3` on PATH, by asking the
    /// interpreter itself for its real executable and prefix (this runs it once, unsandboxed,
    /// with a fixed script: the user's code never runs here).
    pub fn resolve(explicit: Option<&Path>) -> Result<Interpreter, SandboxError> {
        let command = match explicit {
            Some(path) => path.to_path_buf(),
            None => match std::env::var_os("RLVR_PYTHON") {
                Some(value) if !value.is_empty() => PathBuf::from(value),
                _ => PathBuf::from("python3"),
            },
        };
        let failure = |reason: String| SandboxError::Interpreter {
            command: command.display().to_string(),
            reason,
        };
        let script = "import os, sys\n\
                      print(os.path.realpath(sys.executable))\n\
                      print(os.path.realpath(sys.base_prefix))\n\
                      print(sys.version.splitlines()[0])";
        let output = Command::new(&command)
            .args(["-I", "-S", "-c", script])
            .output()
            .map_err(|error| failure(error.to_string()))?;
        if !output.status.success() {
            return Err(failure(format!(
                "exited with {}: {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            )));
        }
        let text = String::from_utf8_lossy(&output.stdout);
        let mut lines = text.lines();
        let (Some(executable), Some(prefix), Some(version)) =
            (lines.next(), lines.next(), lines.next())
        else {
            return Err(failure(format!("unexpected answer {text:?}")));
        };
        let host_executable = PathBuf::from(executable);
        let host_prefix = PathBuf::from(prefix);
        let mut interpreter = Interpreter {
            sandbox_executable: host_executable.clone(),
            sandbox_prefix: host_prefix.clone(),
            host_executable,
            host_prefix,
            version: version.to_owned(),
        };
        if interpreter.needs_prefix_mount() {
            let relative = interpreter
                .host_executable
                .strip_prefix(&interpreter.host_prefix)
                .map_err(|_| {
                    failure(format!(
                        "executable {} is outside its prefix {}",
                        interpreter.host_executable.display(),
                        interpreter.host_prefix.display()
                    ))
                })?;
            interpreter.sandbox_prefix = PathBuf::from(SANDBOX_PYTHON_PREFIX);
            interpreter.sandbox_executable = Path::new(SANDBOX_PYTHON_PREFIX).join(relative);
        }
        Ok(interpreter)
    }
}
