//! The minimal root every sandboxed program sees, as a list of operations under a staging
//! directory: a tmpfs with read-only binds of `/usr` (and the top-level library and binary
//! directories where they are not symlinks into it), the interpreter's prefix when it lives
//! outside `/usr`, `/etc/alternatives` (symlinks only), the configuration's extra read-only
//! directories (a toolchain's configuration, the precompiled-header cache), three device nodes,
//! `/dev/fd` links, and empty `/proc` and `/tmp` mount points.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::SandboxError;
use crate::interpreter::Interpreter;
use crate::isolation::{FilesystemPlan, RootOperation};
use crate::sandbox::{ReadOnlyDirectory, WORK_DIRECTORY};

pub(crate) fn c_string(bytes: impl Into<Vec<u8>>) -> Result<CString, SandboxError> {
    CString::new(bytes).map_err(|error| SandboxError::InvalidRequest {
        reason: format!("a string contains a NUL byte at {}", error.nul_position()),
    })
}

pub(crate) fn c_path(path: &Path) -> Result<CString, SandboxError> {
    c_string(path.as_os_str().as_bytes())
}

/// Directories the root already has or will have, which an extra directory may not replace
/// or hide.
const RESERVED: [&str; 10] = [
    "/",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib64",
    "/dev",
    "/proc",
    "/tmp",
    "/etc/alternatives",
];

/// Checks an extra read-only directory: absolute, plain components, a real directory on the
/// host, and nothing the root already provides (or any part of it).
fn check_extra(directory: &ReadOnlyDirectory) -> Result<(), SandboxError> {
    let refuse = |reason: &str| SandboxError::InvalidRequest {
        reason: format!(
            "read-only directory {} -> {}: {reason}",
            directory.host.display(),
            directory.sandbox.display()
        ),
    };
    let plain = |path: &Path| {
        path.is_absolute()
            && path
                .components()
                .skip(1)
                .all(|component| matches!(component, std::path::Component::Normal(_)))
    };
    if !plain(&directory.host) || !plain(&directory.sandbox) {
        return Err(refuse("both paths must be absolute, without '.' or '..'"));
    }
    for reserved in RESERVED {
        if directory.sandbox == Path::new(reserved)
            || (reserved != "/" && directory.sandbox.starts_with(reserved))
        {
            return Err(refuse(&format!("{reserved} belongs to the minimal root")));
        }
    }
    if !fs_err::metadata(&directory.host).is_ok_and(|metadata| metadata.is_dir()) {
        return Err(refuse("not a directory on the host"));
    }
    Ok(())
}

fn root_operations(
    staging: &Path,
    interpreter: &Interpreter,
    extra: &[ReadOnlyDirectory],
) -> Result<Vec<RootOperation>, SandboxError> {
    let inside = |relative: &str| c_path(&staging.join(relative.trim_start_matches('/')));
    let mut operations = vec![
        RootOperation::Directory(inside("usr")?),
        RootOperation::Bind {
            source: c"/usr".to_owned(),
            target: inside("usr")?,
            read_only: true,
        },
    ];
    // Top-level library and binary directories: symlinks into /usr on merged-/usr systems.
    for name in ["bin", "sbin", "lib", "lib32", "lib64", "libx32"] {
        let host = Path::new("/").join(name);
        match fs_err::symlink_metadata(&host) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                let target =
                    fs_err::read_link(&host).map_err(SandboxError::path("read symlink", &host))?;
                operations.push(RootOperation::Symlink {
                    target: c_path(&target)?,
                    link: inside(name)?,
                });
            }
            Ok(metadata) if metadata.is_dir() => {
                operations.push(RootOperation::Directory(inside(name)?));
                operations.push(RootOperation::Bind {
                    source: c_path(&host)?,
                    target: inside(name)?,
                    read_only: true,
                });
            }
            _ => {}
        }
    }
    if interpreter.needs_prefix_mount() {
        let mut partial = PathBuf::new();
        for component in interpreter.sandbox_prefix.components().skip(1) {
            partial.push(component);
            operations.push(RootOperation::Directory(inside(
                &partial.to_string_lossy(),
            )?));
        }
        operations.push(RootOperation::Bind {
            source: c_path(&interpreter.host_prefix)?,
            target: inside(&interpreter.sandbox_prefix.to_string_lossy())?,
            read_only: true,
        });
    }
    // Debian's alternatives: shared libraries such as libblas.so.3 are symlinks through
    // /etc/alternatives (only symlinks live there; nothing else of /etc is visible).
    let alternatives = Path::new("/etc/alternatives");
    if fs_err::symlink_metadata(alternatives).is_ok_and(|metadata| metadata.is_dir()) {
        operations.push(RootOperation::Directory(inside("etc")?));
        operations.push(RootOperation::Directory(inside("etc/alternatives")?));
        operations.push(RootOperation::Bind {
            source: c_path(alternatives)?,
            target: inside("etc/alternatives")?,
            read_only: true,
        });
    }
    // Extra read-only directories, each parent created once (`/etc` may exist already).
    let mut created: Vec<PathBuf> = Vec::new();
    if fs_err::symlink_metadata(alternatives).is_ok_and(|metadata| metadata.is_dir()) {
        created.push(PathBuf::from("/etc"));
    }
    if interpreter.needs_prefix_mount() {
        let mut partial = PathBuf::from("/");
        for component in interpreter.sandbox_prefix.components().skip(1) {
            partial.push(component);
            created.push(partial.clone());
        }
    }
    for directory in extra {
        check_extra(directory)?;
        let mut partial = PathBuf::from("/");
        for component in directory.sandbox.components().skip(1) {
            partial.push(component);
            if !created.contains(&partial) {
                operations.push(RootOperation::Directory(inside(
                    &partial.to_string_lossy(),
                )?));
                created.push(partial.clone());
            }
        }
        operations.push(RootOperation::Bind {
            source: c_path(&directory.host)?,
            target: inside(&directory.sandbox.to_string_lossy())?,
            read_only: true,
        });
    }
    operations.push(RootOperation::Directory(inside("dev")?));
    for device in ["null", "zero", "urandom"] {
        let target = inside(&format!("dev/{device}"))?;
        operations.push(RootOperation::File(target.clone()));
        operations.push(RootOperation::Bind {
            source: c_string(format!("/dev/{device}"))?,
            target,
            read_only: false,
        });
    }
    for (target, link) in [
        ("/proc/self/fd", "dev/fd"),
        ("/proc/self/fd/0", "dev/stdin"),
        ("/proc/self/fd/1", "dev/stdout"),
        ("/proc/self/fd/2", "dev/stderr"),
        // POSIX shared memory and semaphores (`multiprocessing`'s locks) live in the work
        // directory: emptied after each judge test, a fresh tmpfs for each job, counted in
        // its size limit.
        (WORK_DIRECTORY, "dev/shm"),
    ] {
        operations.push(RootOperation::Symlink {
            target: c_string(target)?,
            link: inside(link)?,
        });
    }
    operations.push(RootOperation::Directory(inside("proc")?));
    operations.push(RootOperation::Directory(inside(WORK_DIRECTORY)?));
    Ok(operations)
}

/// The mount point the root is built on: `/run/rlvr-sandbox-root` for root; for anyone else a
/// directory of their own (`$XDG_RUNTIME_DIR/rlvr-sandbox-root`, else
/// `$TMPDIR/rlvr-sandbox-root-<uid>`) that must be a real directory owned by them. It stays
/// empty on the host: the tmpfs is mounted on it inside the sandbox's own mount namespace.
fn staging_directory(root: bool, uid: u32) -> Result<PathBuf, SandboxError> {
    let path = if root {
        PathBuf::from("/run/rlvr-sandbox-root")
    } else {
        match std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
            Some(runtime)
                if fs_err::metadata(&runtime).is_ok_and(|metadata| metadata.uid() == uid) =>
            {
                runtime.join("rlvr-sandbox-root")
            }
            _ => std::env::temp_dir().join(format!("rlvr-sandbox-root-{uid}")),
        }
    };
    match fs_err::create_dir(&path) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(error) => return Err(SandboxError::path("create staging directory", &path)(error)),
    }
    let metadata = fs_err::symlink_metadata(&path)
        .map_err(SandboxError::path("inspect staging directory", &path))?;
    if !metadata.is_dir() || metadata.uid() != uid {
        return Err(SandboxError::path("use staging directory", &path)(
            std::io::Error::other(format!(
                "not a directory owned by uid {uid} (remove it and try again)"
            )),
        ));
    }
    if !root {
        fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o700))
            .map_err(SandboxError::path("restrict staging directory", &path))?;
    }
    Ok(path)
}

/// The complete filesystem plan for a caller with `uid` (root or not).
pub(crate) fn plan(
    interpreter: &Interpreter,
    root: bool,
    uid: u32,
    extra: &[ReadOnlyDirectory],
) -> Result<FilesystemPlan, SandboxError> {
    let staging = staging_directory(root, uid)?;
    Ok(FilesystemPlan {
        staging_root: c_path(&staging)?,
        operations: root_operations(&staging, interpreter, extra)?,
        proc_target: c_path(&staging.join("proc"))?,
        work_target: c_path(&staging.join(WORK_DIRECTORY.trim_start_matches('/')))?,
        etc_directory: c_path(&staging.join("etc"))?,
        hosts_file: c_path(&staging.join("etc/hosts"))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn directory(host: &str, sandbox: &str) -> ReadOnlyDirectory {
        ReadOnlyDirectory {
            host: PathBuf::from(host),
            sandbox: PathBuf::from(sandbox),
        }
    }

    #[test]
    fn extra_directories_may_not_replace_the_root_or_leave_it() {
        let temporary = tempfile::tempdir().expect("temp dir");
        let host = temporary.path().to_str().expect("utf-8");
        assert!(check_extra(&directory(host, "/opt/rlvr-precompiled")).is_ok());
        assert!(check_extra(&directory(host, "/etc/java-17-openjdk")).is_ok());
        for sandbox in [
            "/",
            "/usr",
            "/usr/lib/x",
            "/proc",
            "/tmp",
            "/dev/shm",
            "/etc/alternatives",
            "opt/x",
            "/opt/../usr",
        ] {
            assert!(check_extra(&directory(host, sandbox)).is_err(), "{sandbox}");
        }
        assert!(check_extra(&directory("/nonexistent-rlvr", "/opt/x")).is_err());
        assert!(check_extra(&directory("/etc/hostname", "/opt/x")).is_err());
    }
}
