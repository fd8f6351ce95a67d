//! The work directory between judge tests: each test finds it as a fresh tmpfs would be,
//! inode numbers included (docs/sandbox.md, "Fresh numbers per test").
//!
//! A tmpfs numbers its inodes per superblock, so emptying the directory leaves the counter
//! where the test left it; mounting a fresh tmpfs resets it but costs about 0.4 ms (the unmount
//! waits for RCU), too much for every test. So after each renewal the directory's access and
//! modification times are set to 0 (explicitly: the program uid does not own the directory and
//! cannot do the same) and its change time is remembered. A test that creates, removes or lists
//! anything, or changes the directory's mode, attributes or times, changes one of the three (the
//! change time cannot be set at all), and only then is a fresh tmpfs mounted: a test that
//! touches nothing costs one `stat`.

use std::ffi::{CStr, CString};
use std::io;
use std::os::unix::fs::MetadataExt;

use crate::WORK_DIRECTORY;
use crate::sys;

/// The work directory of a judge job, as the last renewal left it.
pub(crate) struct WorkDirectory {
    path: CString,
    /// Its mode at start-up (restored when it is only emptied).
    mode: u32,
    /// The options of a fresh tmpfs like the sandbox's (size, inode count, mode, owner), when
    /// the supervisor may mount one.
    mount_options: Option<CString>,
    /// Its change time, seconds and nanoseconds, right after the last renewal; `None` when the
    /// times could not be reset (then every test renews it).
    change_time: Option<(i64, i64)>,
}

impl WorkDirectory {
    /// Probes the work directory at start-up; `can_mount` when the supervisor holds the
    /// capabilities of its namespaces.
    pub(crate) fn probe(can_mount: bool) -> Self {
        let mode = work_directory_mode();
        let mut work = Self {
            path: CString::new(WORK_DIRECTORY).unwrap_or_default(),
            mode,
            mount_options: if can_mount {
                tmpfs_options(WORK_DIRECTORY, mode)
            } else {
                None
            },
            change_time: None,
        };
        work.settle();
        work
    }

    /// Whether anything happened to the directory since the last renewal (one `stat`).
    pub(crate) fn touched(&self) -> bool {
        let Some(recorded) = self.change_time else {
            return true;
        };
        std::fs::metadata(WORK_DIRECTORY).map_or(true, |metadata| {
            metadata.mtime() != 0
                || metadata.mtime_nsec() != 0
                || metadata.atime() != 0
                || metadata.atime_nsec() != 0
                || (metadata.ctime(), metadata.ctime_nsec()) != recorded
        })
    }

    /// Gives the next test a work directory as a fresh tmpfs: a new one mounted where the
    /// supervisor may, else the old one emptied (its inode numbers then run on). Every process
    /// that could write there is dead by now.
    pub(crate) fn renew(&mut self) -> io::Result<()> {
        let result = match &self.mount_options {
            Some(options) => mount_fresh(&self.path, options),
            None => empty_work_directory(self.mode),
        };
        self.settle();
        result
    }

    /// Zeroes the directory's times and remembers its change time: what it holds now is what
    /// the next test may find.
    pub(crate) fn settle(&mut self) {
        self.change_time = sys::zero_times(&self.path)
            .and_then(|()| std::fs::metadata(WORK_DIRECTORY))
            .ok()
            .map(|metadata| (metadata.ctime(), metadata.ctime_nsec()));
    }
}

/// Detaches the work directory's tmpfs and mounts a fresh one, from outside it.
fn mount_fresh(path: &CStr, options: &CStr) -> io::Result<()> {
    std::env::set_current_dir("/")?;
    let result = sys::detach(path).and_then(|()| sys::mount_tmpfs(path, options));
    std::env::set_current_dir(WORK_DIRECTORY)?;
    result
}

/// The options of a tmpfs like the one on `path`: its size and inode count from mountinfo (the
/// last mount there is the visible one), its mode and owner from the directory (mountinfo
/// shows the owner as the host's ids).
fn tmpfs_options(path: &str, mode: u32) -> Option<CString> {
    let metadata = std::fs::metadata(path).ok()?;
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let super_options = mountinfo.lines().rev().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let separator = fields.iter().position(|field| *field == "-")?;
        (fields.get(4) == Some(&path) && fields.get(separator + 1) == Some(&"tmpfs"))
            .then(|| fields.get(separator + 3).copied())
            .flatten()
    })?;
    let mut options: Vec<String> = super_options
        .split(',')
        .filter(|option| matches!(option.split('=').next(), Some("size" | "nr_inodes")))
        .map(str::to_owned)
        .collect();
    options.push(format!("mode={mode:o}"));
    options.push(format!("uid={}", metadata.uid()));
    options.push(format!("gid={}", metadata.gid()));
    CString::new(options.join(",")).ok()
}

/// Removes everything under the work directory, walking down and back up through `..` with
/// the current directory (no path grows with the depth, no descriptor per level: a test may
/// leave a tree deeper than PATH_MAX), then gives the directory back its mode and no extended
/// attributes. Every process that could write there is dead by now.
fn empty_work_directory(mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let work = std::path::Path::new(WORK_DIRECTORY);
    std::fs::set_permissions(work, std::fs::Permissions::from_mode(mode))?;
    std::env::set_current_dir(work)?;
    // The names of the directories walked into, from the work directory down.
    let mut path = Vec::new();
    let result = (|| -> io::Result<()> {
        loop {
            let mut subdirectory = None;
            for entry in std::fs::read_dir(".")? {
                let entry = entry?;
                if entry.file_type()?.is_dir() {
                    subdirectory = Some(entry.file_name());
                    break;
                }
                std::fs::remove_file(entry.file_name())?;
            }
            match subdirectory {
                Some(name) => {
                    std::fs::set_permissions(&name, std::fs::Permissions::from_mode(0o700))?;
                    std::env::set_current_dir(&name)?;
                    path.push(name);
                }
                None => match path.pop() {
                    None => return Ok(()),
                    Some(name) => {
                        std::env::set_current_dir("..")?;
                        std::fs::remove_dir(name)?;
                    }
                },
            }
        }
    })();
    std::env::set_current_dir(work)?;
    result?;
    let path = CString::new(WORK_DIRECTORY).map_err(io::Error::other)?;
    for name in sys::list_extended_attributes(&path)?.split(|&byte| byte == 0) {
        if !name.is_empty() {
            let name = CString::new(name).map_err(io::Error::other)?;
            sys::remove_extended_attribute(&path, &name)?;
        }
    }
    Ok(())
}

/// The work directory's mode when the supervisor started (restored after each judge test).
fn work_directory_mode() -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(WORK_DIRECTORY)
        .map_or(0o700, |metadata| metadata.permissions().mode() & 0o7777)
}
