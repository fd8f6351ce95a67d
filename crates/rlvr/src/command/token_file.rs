//! `--token-file` of `serve` and `redteam`: the bearer token, read the same way for both.

use crate::exit::Error;

/// The bearer token in `path` (`serve --token-file`, `redteam --token-file`): one word, the
/// file's surrounding whitespace ignored.
pub(crate) fn read_token_file(path: Option<&std::path::Path>) -> Result<Option<String>, Error> {
    let Some(path) = path else { return Ok(None) };
    let text = fs_err::read_to_string(path).map_err(Error::Unreadable)?;
    let token = text.trim().to_owned();
    if token.is_empty() || token.contains(char::is_whitespace) {
        return Err(Error::usage(format!(
            "{}: the token file must hold one token without spaces",
            path.display()
        )));
    }
    Ok(Some(token))
}
