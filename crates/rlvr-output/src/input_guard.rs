//! Refusing, before any work, an output that is one of the command's inputs: writing it would
//! destroy the input while it is being read (`rlvr split d/train.jsonl --out-dir d`,
//! `rlvr verify jobs.jsonl --out jobs.jsonl`).
//!
//! Two paths are the same file when they name the same inode (device and inode number, after
//! following symlinks): the same path, spelled differently or not, a hard link, or a symlink
//! either way. An output that does not exist yet cannot be an input that exists.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::error::OutputError;

/// Device and inode of what `path` names, following symlinks; `None` when it does not exist.
fn identity(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path)
        .ok()
        .map(|metadata| (metadata.dev(), metadata.ino()))
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|metadata| metadata.file_type().is_symlink())
}

/// How `output` is the same file as `input`, for the message.
fn relation(output: &Path, input: &Path) -> &'static str {
    if is_symlink(output) {
        "is a symlink to"
    } else if is_symlink(input) {
        "is where a symlink points, given as"
    } else if std::fs::canonicalize(output).ok() == std::fs::canonicalize(input).ok() {
        "is"
    } else {
        "is a hard link to"
    }
}

/// Fails with [`OutputError::WouldReplaceInput`] if some output is the same file as some input.
/// Inputs that do not exist are skipped (reading them fails later with its own message).
pub fn refuse_overwriting_inputs(inputs: &[&Path], outputs: &[&Path]) -> Result<(), OutputError> {
    for input in inputs {
        let input_identity = identity(input);
        let input_absolute = std::path::absolute(input).ok();
        for output in outputs {
            let same_spelling =
                input_absolute.is_some() && std::path::absolute(output).ok() == input_absolute;
            let same_inode = input_identity.is_some() && identity(output) == input_identity;
            if same_spelling || same_inode {
                return Err(OutputError::WouldReplaceInput {
                    output: output.to_path_buf(),
                    input: input.to_path_buf(),
                    relation: if same_inode {
                        relation(output, input)
                    } else {
                        "is"
                    },
                });
            }
        }
    }
    Ok(())
}
