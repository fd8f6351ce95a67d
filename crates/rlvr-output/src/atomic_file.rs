//! [`AtomicFile`]: an output written to a temporary beside it and moved into place whole.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::cleanup;
use crate::error::OutputError;
use crate::temporary::{self, Kind, Temporary};

/// Buffer between the caller's writes and the temporary.
const BUFFER_BYTES: usize = 1 << 20;

/// An output file being written. Nothing appears under its name until [`AtomicFile::commit`]
/// (or [`commit_all`]); dropping it uncommitted (an error, a panic) removes the temporary and
/// leaves a previous file at that name untouched.
///
/// Write errors come back as `std::io::Error`s that carry an [`OutputError::Write`] naming the
/// output (see [`crate::find_output_error`]).
#[derive(Debug)]
pub struct AtomicFile {
    target: PathBuf,
    writer: Option<BufWriter<File>>,
    temporary: Temporary,
    written: u64,
}

impl AtomicFile {
    /// Starts writing `target`; it must name a file in an existing directory.
    pub fn create(target: impl AsRef<Path>) -> Result<Self, OutputError> {
        Self::create_with(target.as_ref(), Kind::Best)
    }

    pub(crate) fn create_with(target: &Path, kind: Kind) -> Result<Self, OutputError> {
        let destination = temporary::create(target, kind)?;
        Ok(Self {
            target: destination.target,
            writer: Some(BufWriter::with_capacity(BUFFER_BYTES, destination.file)),
            temporary: destination.temporary,
            written: 0,
        })
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.target
    }

    /// Changes the final path before the commit (export names shards `-of-N` only once it
    /// knows N). The new path must be in the same directory.
    pub fn set_path(&mut self, target: impl Into<PathBuf>) -> Result<(), OutputError> {
        let target = target.into();
        if matches!(self.temporary, Temporary::InPlace) {
            return Err(OutputError::UnusablePath {
                path: self.target.clone(),
                reason: "is a device or a pipe, written in place under its own name",
            });
        }
        if temporary::directory_of(&target) != temporary::directory_of(&self.target)
            || target.file_name().is_none()
        {
            return Err(OutputError::UnusablePath {
                path: target,
                reason: "is not a file in the directory the output was started in",
            });
        }
        self.target = target;
        Ok(())
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.written
    }

    /// An [`OutputError::Write`] for this output.
    pub fn error(&self, source: std::io::Error) -> OutputError {
        OutputError::from_io(&self.target, source)
    }

    /// Flushes, fsyncs and moves the file into place, replacing what was there.
    pub fn commit(self) -> Result<(), OutputError> {
        commit_all(vec![self])
    }

    /// Flushes the buffer and fsyncs the temporary (the slow part of a commit, done before the
    /// lock is taken). Errors such as ENOSPC often surface only here.
    fn sync(&mut self) -> Result<(), OutputError> {
        let writer = self.writer.as_mut().ok_or_else(|| {
            self_error(&self.target, "the output was already committed or failed")
        })?;
        writer
            .flush()
            .map_err(|source| OutputError::from_io(&self.target, source))?;
        if matches!(self.temporary, Temporary::InPlace) {
            return Ok(()); // a device or a pipe: nothing to make durable
        }
        writer
            .get_ref()
            .sync_all()
            .map_err(|source| OutputError::write(&self.target, source))
    }

    /// Moves the synced temporary into place. Called with the registry locked.
    fn rename_into_place(&mut self, registry: &mut cleanup::Registry) -> Result<(), OutputError> {
        let Some(writer) = self.writer.take() else {
            return Err(self_error(&self.target, "the output was already committed"));
        };
        let (file, _) = writer.into_parts();
        let named = match &self.temporary {
            Temporary::InPlace => return Ok(()),
            Temporary::Named(path) => path.clone(),
            Temporary::Unnamed => {
                let name = temporary::hidden_name(&self.target)?;
                temporary::link_unnamed(&file, &name, registry)
                    .map_err(|source| self.error(source))?;
                name
            }
        };
        drop(file);
        let renamed = std::fs::rename(&named, &self.target);
        registry.remove_file(&named);
        // Whatever happened, nothing is left to remove on drop.
        self.temporary = Temporary::Unnamed;
        if let Err(source) = renamed {
            let _ = std::fs::remove_file(&named);
            return Err(self.error(source));
        }
        Ok(())
    }
}

fn self_error(path: &Path, reason: &str) -> OutputError {
    OutputError::write(path, std::io::Error::other(reason.to_owned()))
}

impl Write for AtomicFile {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        match self.writer.as_mut() {
            Some(writer) => {
                let written = writer
                    .write(bytes)
                    .map_err(|source| OutputError::write(&self.target, source).into_io())?;
                self.written += written as u64;
                Ok(written)
            }
            None => Err(self_error(&self.target, "the output was already committed").into_io()),
        }
    }

    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match self.writer.as_mut() {
            Some(writer) => {
                writer
                    .write_all(bytes)
                    .map_err(|source| OutputError::write(&self.target, source).into_io())?;
                self.written += bytes.len() as u64;
                Ok(())
            }
            None => Err(self_error(&self.target, "the output was already committed").into_io()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.writer.as_mut() {
            Some(writer) => writer
                .flush()
                .map_err(|source| OutputError::write(&self.target, source).into_io()),
            None => Ok(()),
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // Discard the buffer rather than flushing it into a file that is being thrown away.
        if let Some(writer) = self.writer.take() {
            drop(writer.into_parts());
        }
        if let Temporary::Named(path) = &self.temporary {
            let mut registry = cleanup::lock();
            let _ = std::fs::remove_file(path);
            registry.remove_file(path);
        }
    }
}

/// Commits several outputs that belong together: all are synced first, then renamed one after
/// the other while signals wait, so an interrupt leaves either all of them or none. If one
/// rename fails, those after it are dropped (their temporaries removed); those before it stay.
pub fn commit_all(files: Vec<AtomicFile>) -> Result<(), OutputError> {
    commit_all_replacing(files, &[])
}

/// [`commit_all`], then, still while signals wait, removes the `obsolete` files a previous run
/// left that the new set does not replace (an export's old shards when it has fewer now).
pub fn commit_all_replacing(
    files: Vec<AtomicFile>,
    obsolete: &[PathBuf],
) -> Result<(), OutputError> {
    let mut files = files;
    for file in &mut files {
        file.sync()?;
    }
    {
        let mut registry = cleanup::lock();
        for file in &mut files {
            file.rename_into_place(&mut registry)?;
        }
        for path in obsolete {
            if files.iter().all(|file| file.target != *path) {
                match std::fs::remove_file(path) {
                    Ok(()) => {}
                    Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                    Err(source) => return Err(OutputError::write(path, source)),
                }
            }
        }
    }
    let mut directories: Vec<&Path> = files
        .iter()
        .filter(|file| !matches!(file.temporary, Temporary::InPlace))
        .map(|file| temporary::directory_of(&file.target))
        .collect();
    directories.sort();
    directories.dedup();
    for directory in directories {
        sync_directory(directory);
    }
    Ok(())
}

/// Makes a rename durable. A filesystem that cannot fsync a directory (EINVAL) is not an error:
/// the file is in place either way.
fn sync_directory(directory: &Path) {
    if let Err(error) = File::open(directory).and_then(|handle| handle.sync_all()) {
        tracing::debug!("fsync of `{}`: {error}", directory.display());
    }
}

/// Writes `bytes` to `target` atomically.
pub fn write_atomically(target: impl AsRef<Path>, bytes: &[u8]) -> Result<(), OutputError> {
    let mut file = AtomicFile::create(target)?;
    file.write_all(bytes).map_err(|source| file.error(source))?;
    file.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(directory: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(directory)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_named_temporary_is_hidden_and_removed_on_drop() {
        let directory = tempfile::tempdir().unwrap();
        let target = directory.path().join("out.jsonl");
        std::fs::write(&target, b"previous\n").unwrap();
        let mut file = AtomicFile::create_with(&target, Kind::Named).unwrap();
        file.write_all(b"new\n").unwrap();
        let listed = names(directory.path());
        assert_eq!(listed.len(), 2, "{listed:?}");
        assert!(
            listed[0].starts_with(".out.jsonl.") && listed[0].ends_with(".rlvr-partial"),
            "{listed:?}"
        );
        drop(file);
        assert_eq!(names(directory.path()), vec!["out.jsonl"]);
        assert_eq!(std::fs::read(&target).unwrap(), b"previous\n");
    }

    #[test]
    fn a_named_temporary_is_renamed_on_commit() {
        let directory = tempfile::tempdir().unwrap();
        let target = directory.path().join("out.jsonl");
        let mut file = AtomicFile::create_with(&target, Kind::Named).unwrap();
        file.write_all(b"new\n").unwrap();
        file.commit().unwrap();
        assert_eq!(names(directory.path()), vec!["out.jsonl"]);
        assert_eq!(std::fs::read(&target).unwrap(), b"new\n");
        assert!(cleanup::lock().is_empty());
    }

    fn is_symlink(path: &Path) -> bool {
        std::fs::symlink_metadata(path).is_ok_and(|metadata| metadata.file_type().is_symlink())
    }

    /// Renaming over a device destroys it (as root, `rlvr synth ... /dev/null` left a regular
    /// file there): a device is written in place, through a link too, and stays a device.
    #[test]
    fn a_link_to_a_device_is_written_through_and_both_stay() {
        use std::os::unix::fs::FileTypeExt;
        let directory = tempfile::tempdir().unwrap();
        let link = directory.path().join("out.jsonl");
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        let mut file = AtomicFile::create(&link).unwrap();
        file.write_all(b"discarded\n").unwrap();
        file.commit().unwrap();
        assert!(is_symlink(&link));
        assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("/dev/null"));
        let device = std::fs::metadata("/dev/null").unwrap().file_type();
        assert!(device.is_char_device());
        assert_eq!(names(directory.path()), vec!["out.jsonl"]);
    }

    #[test]
    fn a_fifo_is_written_in_place_and_stays_a_fifo() {
        use std::os::unix::fs::FileTypeExt;
        let directory = tempfile::tempdir().unwrap();
        let fifo = directory.path().join("pipe");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        let mut file = AtomicFile::create(&fifo).unwrap();
        file.write_all(b"through the pipe\n").unwrap();
        file.commit().unwrap();
        assert_eq!(reader.join().unwrap(), b"through the pipe\n");
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );
        assert_eq!(names(directory.path()), vec!["pipe"]);
        assert!(cleanup::lock().is_empty());
    }

    #[test]
    fn an_output_in_place_cannot_be_renamed() {
        let mut file = AtomicFile::create("/dev/null").unwrap();
        let error = file.set_path("/dev/null-of-2").unwrap_err();
        assert!(error.to_string().contains("written in place"), "{error}");
    }

    /// A link to a file stays a link: the file it names gets the new contents.
    #[test]
    fn a_link_to_a_file_stays_a_link() {
        let directory = tempfile::tempdir().unwrap();
        let real = directory.path().join("real.jsonl");
        let link = directory.path().join("link.jsonl");
        std::fs::write(&real, b"previous\n").unwrap();
        std::os::unix::fs::symlink("real.jsonl", &link).unwrap();
        write_atomically(&link, b"new\n").unwrap();
        assert!(is_symlink(&link));
        assert_eq!(std::fs::read(&real).unwrap(), b"new\n");
        assert_eq!(names(directory.path()), vec!["link.jsonl", "real.jsonl"]);
    }

    #[test]
    fn a_block_device_is_refused() {
        let Some(block) = std::fs::read_dir("/dev").unwrap().flatten().find(|entry| {
            use std::os::unix::fs::FileTypeExt;
            entry.file_type().is_ok_and(|kind| kind.is_block_device())
        }) else {
            panic!("this machine has no block device in /dev to test with");
        };
        let error = AtomicFile::create(block.path()).unwrap_err();
        assert!(error.to_string().contains("block device"), "{error}");
    }
}
