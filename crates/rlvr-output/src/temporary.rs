//! The temporary an output is written to, in the directory of its final name (so the final
//! `rename` never crosses filesystems): unnamed (`O_TMPFILE`) where the filesystem supports it,
//! else a hidden, registered name.
//!
//! An unnamed temporary has no name to leave behind whatever happens to the process; at commit
//! it is linked under a hidden name (through `/proc/self/fd`, which needs no privilege) and that
//! name is renamed over the output.

use std::fs::File;
use std::os::unix::fs::FileTypeExt;
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
    /// None: the target is a character device or a FIFO (`/dev/null`, a terminal, a pipe),
    /// written in place, since renaming a file over it would destroy the device.
    InPlace,
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

/// Where an output's bytes go and the name it ends up under.
#[derive(Debug)]
pub(crate) struct Destination {
    pub(crate) file: File,
    pub(crate) temporary: Temporary,
    /// The name the temporary is renamed to: the target, or the file a symlink at the target
    /// points to (the link stays a link: `/dev/stdout` redirected to a file must not become a
    /// file in `/dev`).
    pub(crate) target: PathBuf,
}

/// Opens `target` for writing: a temporary beside the file it names, or, for a character
/// device or FIFO, the target itself.
pub(crate) fn create(target: &Path, kind: Kind) -> Result<Destination, OutputError> {
    let unusable = |reason| OutputError::UnusablePath {
        path: target.to_path_buf(),
        reason,
    };
    // Following symlinks; anything that does not exist yet (or cannot be looked at) is a new
    // file, whose creation reports the real error.
    let mut final_target = target.to_path_buf();
    if let Ok(metadata) = std::fs::metadata(target) {
        let file_type = metadata.file_type();
        if file_type.is_dir() {
            return Err(unusable("is a directory; give a file name"));
        }
        if file_type.is_char_device() || file_type.is_fifo() {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(target)
                .map_err(|source| OutputError::create(target, source))?;
            return Ok(Destination {
                file,
                temporary: Temporary::InPlace,
                target: final_target,
            });
        }
        if file_type.is_block_device() || file_type.is_socket() {
            return Err(unusable(
                "is a block device or a socket, which rlvr does not write to",
            ));
        }
        if std::fs::symlink_metadata(target).is_ok_and(|link| link.file_type().is_symlink()) {
            final_target = std::fs::canonicalize(target)
                .map_err(|source| OutputError::create(target, source))?;
        }
    }
    let (file, temporary) = create_temporary(&final_target, kind)?;
    Ok(Destination {
        file,
        temporary,
        target: final_target,
    })
}

/// Creates the temporary for `target`, a file name in an existing directory.
fn create_temporary(target: &Path, kind: Kind) -> Result<(File, Temporary), OutputError> {
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
