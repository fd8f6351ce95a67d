//! The temporary an output is written to, in the directory of its final name (so the final
//! `rename` never crosses filesystems): unnamed (`O_TMPFILE`) where the filesystem supports it,
//! else a hidden, registered name.
//!
//! An unnamed temporary has no name to leave behind whatever happens to the process; at commit
//! it is linked under a hidden name (through `/proc/self/fd`, which needs no privilege) and that
//! name is renamed over the output.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, CWD, Mode, OFlags};

use crate::cleanup;
use crate::error::OutputError;

/// Distinguishes the hidden names one process makes.
static NEXT_NAME: AtomicU64 = AtomicU64::new(0);

/// Where the bytes of an unfinished output are.
#[derive(Debug)]
pub(crate) enum Temporary {
    /// An `O_TMPFILE` in the target's directory, with no name yet.
    Unnamed,
    /// A hidden file in the target's directory, registered for removal on signals.
    Named(PathBuf),
}

/// How a temporary is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `O_TMPFILE` when the filesystem supports it, else named.
    Best,
    /// Always named (tests of the fallback).
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "the fallback is forced only in tests")
    )]
    Named,
}

/// The directory holding `target` (`.` for a bare file name).
pub(crate) fn directory_of(target: &Path) -> &Path {
    match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// A hidden name beside `target`: `.NAME.PID.N.rlvr-partial`.
pub(crate) fn hidden_name(target: &Path) -> Result<PathBuf, OutputError> {
    let name = target
        .file_name()
        .ok_or_else(|| OutputError::UnusablePath {
            path: target.to_path_buf(),
            reason: "has no file name",
        })?;
    let mut hidden = std::ffi::OsString::from(".");
    hidden.push(name);
    hidden.push(format!(
        ".{}.{}.rlvr-partial",
        std::process::id(),
        NEXT_NAME.fetch_add(1, Ordering::Relaxed)
    ));
    Ok(directory_of(target).join(hidden))
}

/// Creates the temporary for `target`.
pub(crate) fn create(target: &Path, kind: Kind) -> Result<(File, Temporary), OutputError> {
    if target.is_dir() {
        return Err(OutputError::UnusablePath {
            path: target.to_path_buf(),
            reason: "is a directory; give a file name",
        });
    }
    let directory = directory_of(target);
    if kind == Kind::Best && Path::new("/proc/self/fd").is_dir() {
        let unnamed = rustix::fs::openat(
            CWD,
            directory,
            OFlags::TMPFILE | OFlags::WRONLY | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o666),
        );
        // Any failure (a filesystem without O_TMPFILE, an old kernel) falls back to a named
        // temporary, whose own error, if it fails too, is the one reported.
        if let Ok(descriptor) = unnamed {
            return Ok((File::from(descriptor), Temporary::Unnamed));
        }
    }
    let path = hidden_name(target)?;
    // Registered before it exists, under the lock: a signal cleanup that already ran holds the
    // lock forever, so no file can be created after it.
    let mut registry = cleanup::lock();
    registry.add_file(&path);
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path);
    match created {
        Ok(file) => Ok((file, Temporary::Named(path))),
        Err(source) => {
            registry.remove_file(&path);
            Err(OutputError::create(target, source))
        }
    }
}

/// Gives an unnamed temporary the hidden name `name` (registered for removal). Called with the
/// registry locked.
pub(crate) fn link_unnamed(
    file: &File,
    name: &Path,
    registry: &mut cleanup::Registry,
) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    registry.add_file(name);
    let source = format!("/proc/self/fd/{}", file.as_raw_fd());
    rustix::fs::linkat(CWD, source.as_str(), CWD, name, AtFlags::SYMLINK_FOLLOW).map_err(|error| {
        registry.remove_file(name);
        std::io::Error::from(error)
    })
}
