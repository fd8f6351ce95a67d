//! Emptying the work directory after a judge test, and its mode to restore.

use std::ffi::CString;
use std::io;

use crate::WORK_DIRECTORY;
use crate::sys;

/// Removes everything under the work directory, walking down and back up through `..` with
/// the current directory (no path grows with the depth, no descriptor per level: a test may
/// leave a tree deeper than PATH_MAX), then gives the directory back its mode and no extended
/// attributes. Every process that could write there is dead by now.
pub(crate) fn empty_work_directory(mode: u32) -> io::Result<()> {
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
pub(crate) fn work_directory_mode() -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(WORK_DIRECTORY)
        .map_or(0o700, |metadata| metadata.permissions().mode() & 0o7777)
}
