//! `--testlib-header PATH` (verify, serve, check-checker; issue 25): the user's copy of
//! testlib.h, put in place of a C++ checker's `#include "testlib.h"`. rlvr ships none.

use std::path::Path;
use std::sync::Arc;

use crate::exit::Error;

/// Reads the header at `path` (absent: `None`). A file that cannot be read, is empty, or is
/// not UTF-8 text is a usage error naming it.
pub(crate) fn read_testlib_header(path: Option<&Path>) -> Result<Option<Arc<str>>, Error> {
    let Some(path) = path else {
        return Ok(None);
    };
    let bytes = fs_err::read(path).map_err(Error::Unreadable)?;
    let text = String::from_utf8(bytes).map_err(|error| {
        Error::usage(format!(
            "{}: --testlib-header must be a C++ header in UTF-8; byte offset {} is not",
            path.display(),
            error.utf8_error().valid_up_to()
        ))
    })?;
    if text.trim().is_empty() {
        return Err(Error::usage(format!(
            "{}: --testlib-header is empty",
            path.display()
        )));
    }
    Ok(Some(Arc::from(text)))
}
