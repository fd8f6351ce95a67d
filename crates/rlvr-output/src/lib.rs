//! Outputs that appear whole or not at all, and never over an input.
//!
//! Every file an `rlvr` command writes goes through [`AtomicFile`]: the bytes go to a temporary
//! in the target's own directory (an unnamed `O_TMPFILE` where the filesystem has them, else a
//! hidden `.NAME.PID.N.rlvr-partial`), which is flushed and fsynced, then linked into place with
//! one `rename` only when the command finished it ([`AtomicFile::commit`], or [`commit_all`]
//! for a set of files that belong together). Until then the previous file, if any, is untouched;
//! a failure (ENOSPC, EIO, ...) drops the temporary, and so do SIGINT, SIGTERM and SIGHUP once
//! [`install_signal_cleanup`] runs. Directories a command creates for its outputs are removed
//! again on failure ([`CreatedDirectories`]).
//!
//! [`refuse_overwriting_inputs`] is called before any work: an output that is, or would
//! replace, one of the command's inputs (the same path, the same inode through a hard link, a
//! symlink to it) is refused.

#![forbid(unsafe_code)]

mod atomic_file;
mod cleanup;
mod directories;
mod error;
mod input_guard;
mod temporary;

pub use atomic_file::{AtomicFile, commit_all, commit_all_replacing, write_atomically};
pub use cleanup::{install_signal_cleanup, terminate_by_signal};
pub use directories::CreatedDirectories;
pub use error::{OutputError, find_output_error};
pub use input_guard::refuse_overwriting_inputs;
