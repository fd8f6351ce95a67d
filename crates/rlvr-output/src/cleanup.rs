//! What must go when the process is stopped by a signal: named temporaries and directories
//! created for outputs that were not finished.
//!
//! One process-wide registry, behind one lock. The lock is also held while outputs are moved
//! into place ([`crate::commit_all`]), so a signal handled in the middle of a commit waits for
//! it: a set of files (split's three, card's README and charts) is renamed entirely or not at
//! all. The handler takes the lock, removes what is registered, and never releases it: a thread
//! still working cannot register (so cannot create) a new temporary after the cleanup. Then the
//! process dies by the same signal, with its default action, so the parent sees what happened
//! (a shell reports 130 for SIGINT, 143 for SIGTERM).
//!
//! Unnamed `O_TMPFILE` temporaries need no entry: the kernel frees them when the process dies,
//! even by SIGKILL.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// Paths to remove if the process is stopped before they are finished.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    files: Vec<PathBuf>,
    directories: Vec<PathBuf>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    files: Vec::new(),
    directories: Vec::new(),
});

/// The registry, locked. A panic elsewhere while it was held leaves it usable.
pub(crate) fn lock() -> MutexGuard<'static, Registry> {
    REGISTRY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Registry {
    pub(crate) fn add_file(&mut self, path: &Path) {
        self.files.push(path.to_path_buf());
    }

    pub(crate) fn remove_file(&mut self, path: &Path) {
        self.files.retain(|registered| registered != path);
    }

    pub(crate) fn add_directory(&mut self, path: &Path) {
        self.directories.push(path.to_path_buf());
    }

    pub(crate) fn remove_directory(&mut self, path: &Path) {
        self.directories.retain(|registered| registered != path);
    }

    /// Nothing registered.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.files.is_empty() && self.directories.is_empty()
    }

    /// Removes every registered file, then every registered directory that is empty (deepest
    /// first), ignoring errors: this runs on the way out.
    fn remove_everything(&mut self) {
        for file in self.files.drain(..) {
            let _ = std::fs::remove_file(file);
        }
        for directory in self.directories.drain(..).rev() {
            let _ = std::fs::remove_dir(directory);
        }
    }
}

/// Starts a thread that, on SIGINT, SIGTERM or SIGHUP, removes unfinished outputs and then
/// lets the signal end the process ([`terminate_by_signal`]). Commands that handle these
/// signals themselves (`verify`, `serve`) do not call it.
pub fn install_signal_cleanup() -> std::io::Result<()> {
    let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("rlvr-signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                terminate_by_signal(signal);
            }
        })?;
    Ok(())
}

/// Removes unfinished outputs and ends the process with `signal`'s default action (for
/// SIGPIPE, SIGINT, SIGTERM, SIGHUP: death by that signal). Waits for a commit in progress.
pub fn terminate_by_signal(signal: i32) -> ! {
    let mut registry = lock();
    registry.remove_everything();
    // Never released: nothing may register a new temporary after the cleanup.
    std::mem::forget(registry);
    let _ = signal_hook::low_level::emulate_default_handler(signal);
    // Only reached if the signal's default action is not to terminate.
    std::process::exit(128 + signal);
}
