//! Directories created for outputs, removed again (when still empty) if the command fails or is
//! stopped by a signal before it kept them.

use std::path::{Path, PathBuf};

use crate::cleanup;
use crate::error::OutputError;

/// The directories one `create` made, deepest last. Dropped without [`CreatedDirectories::keep`],
/// it removes those that are empty; a directory that existed before is never touched.
#[derive(Debug)]
pub struct CreatedDirectories {
    created: Vec<PathBuf>,
}

impl CreatedDirectories {
    /// Creates `path` and any missing parents, remembering which ones did not exist.
    pub fn create(path: impl AsRef<Path>) -> Result<Self, OutputError> {
        let path = path.as_ref();
        let mut missing = Vec::new();
        let mut current = Some(path);
        while let Some(directory) = current {
            if directory.as_os_str().is_empty() {
                break;
            }
            match std::fs::metadata(directory) {
                Ok(metadata) if metadata.is_dir() => break,
                Ok(_) => {
                    return Err(OutputError::UnusablePath {
                        path: directory.to_path_buf(),
                        reason: "exists and is not a directory",
                    });
                }
                Err(_) => missing.push(directory.to_path_buf()),
            }
            current = directory.parent();
        }
        let mut directories = Self {
            created: Vec::new(),
        };
        for directory in missing.into_iter().rev() {
            let mut registry = cleanup::lock();
            registry.add_directory(&directory);
            match std::fs::create_dir(&directory) {
                Ok(()) => directories.created.push(directory),
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                    registry.remove_directory(&directory);
                }
                Err(source) => {
                    registry.remove_directory(&directory);
                    drop(registry);
                    return Err(OutputError::create(directory, source));
                }
            }
        }
        Ok(directories)
    }

    /// Keeps the directories (the outputs in them were committed).
    pub fn keep(mut self) {
        let mut registry = cleanup::lock();
        for directory in self.created.drain(..) {
            registry.remove_directory(&directory);
        }
    }
}

impl Drop for CreatedDirectories {
    fn drop(&mut self) {
        let mut registry = cleanup::lock();
        for directory in self.created.drain(..).rev() {
            let _ = std::fs::remove_dir(&directory);
            registry.remove_directory(&directory);
        }
    }
}
