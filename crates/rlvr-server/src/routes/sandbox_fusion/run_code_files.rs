//! `/run_code`'s `files` in directories and `fetch_files` (issue 35), for Python and Bash: the paths a
//! request may name, and the run that places and fetches them inside the sandbox
//! (`run_code_files.py`), so the server never opens a path the program could have pointed
//! elsewhere.

use rlvr_sandbox::{Program, WorkFile};
use serde_json::{Map, Value};

use crate::error::ApiError;

/// At most this many `files` in one request.
pub(crate) const MAX_FILES: usize = 256;
/// At most this many `fetch_files` in one request.
pub(crate) const MAX_FETCH_FILES: usize = 64;
/// A fetched file larger than this is left out (named in `message`).
pub(crate) const FETCH_FILE_BYTES: usize = 8 << 20;
/// The fetched files of one run together; a file past what is left is left out.
pub(crate) const FETCH_TOTAL_BYTES: usize = 16 << 20;
/// The longest path a request may name, and the longest component.
const MAX_PATH_BYTES: usize = 1024;
const MAX_COMPONENT_BYTES: usize = 255;

/// The script run instead of `main.py` when files go in directories or come back.
const SCRIPT: &str = include_str!("run_code_files.py");
/// The end of its output's trailer (as in the script).
const MAGIC: &[u8] = b"\0rlvr-fetched-files\0";
/// The hex digits of the payload's length before [`MAGIC`].
const LENGTH_DIGITS: usize = 16;

/// `path` is relative to the work directory, inside it, and plain: no leading `/`, no `.`,
/// `..` or empty component, no NUL; a 400 naming `field` and the path otherwise.
pub(crate) fn checked_path(field: &str, path: &str) -> Result<(), ApiError> {
    let refuse = |why: &str| {
        Err(ApiError::bad_request(format!(
            "{field} {path:?}: {why}; a path relative to the work directory \
             (like dir1/dir2/name) is allowed"
        )))
    };
    if path.is_empty() {
        return refuse("an empty path");
    }
    if path.starts_with('/') {
        return refuse("an absolute path");
    }
    if path.contains('\0') {
        return refuse("a NUL byte");
    }
    if path.len() > MAX_PATH_BYTES {
        return refuse(&format!("longer than {MAX_PATH_BYTES} bytes"));
    }
    for component in path.split('/') {
        match component {
            ".." => return refuse("a `..` component"),
            "." | "" => return refuse("a `.` or empty component"),
            _ if component.len() > MAX_COMPONENT_BYTES => {
                return refuse(&format!(
                    "a component longer than {MAX_COMPONENT_BYTES} bytes"
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Refuses `files` where one path is a directory of another (`a` and `a/b`).
pub(crate) fn check_no_overlap<'a>(
    paths: impl Iterator<Item = &'a str> + Clone,
) -> Result<(), ApiError> {
    for path in paths.clone() {
        let mut prefix = path;
        while let Some((parent, _)) = prefix.rsplit_once('/') {
            if paths.clone().any(|other| other == parent) {
                return Err(ApiError::bad_request(format!(
                    "files {parent:?} and {path:?}: one is a directory of the other"
                )));
            }
            prefix = parent;
        }
    }
    Ok(())
}

/// The run that places `files` (path, contents) and fetches `fetch` after the program ends:
/// the script as the sandbox's program, the work files under flat names it moves into place,
/// and the program (`main`: its file name and source) run as `command` (`python`: the
/// sandbox's interpreter).
pub(crate) fn placing_run(
    main: (&str, &str),
    command: &[&str],
    files: Vec<(String, Vec<u8>)>,
    fetch: &[String],
) -> (Program, Vec<WorkFile>) {
    let mut work_files = Vec::with_capacity(files.len() + 1);
    let mut moves = Vec::with_capacity(files.len());
    for (index, (path, contents)) in files.into_iter().enumerate() {
        let flat = format!(".rlvr-work-file-{index}");
        moves.push(Value::from(vec![flat.clone(), path]));
        work_files.push(WorkFile {
            name: flat,
            contents,
        });
    }
    work_files.push(WorkFile {
        name: main.0.to_owned(),
        contents: main.1.as_bytes().to_vec(),
    });
    let plan = serde_json::json!({
        "command": command,
        "files": moves,
        "fetch": fetch,
        "file_bytes": FETCH_FILE_BYTES,
        "total_bytes": FETCH_TOTAL_BYTES,
    });
    let program = Program::Command {
        argv: vec![
            "python".to_owned(),
            "-I".to_owned(),
            "-c".to_owned(),
            SCRIPT.to_owned(),
            plan.to_string(),
        ],
    };
    (program, work_files)
}

/// What the script fetched, and the program's own exit status.
#[derive(Debug, Default)]
pub(crate) struct Fetched {
    /// Path to base64 contents.
    pub(crate) files: Map<String, Value>,
    /// Paths left out for the caps.
    pub(crate) omitted: Vec<String>,
    /// The program's exit status (negative: the killing signal).
    pub(crate) status: i64,
}

/// Takes the script's trailer off the end of `stdout` and reads it; `None` (and `stdout`
/// untouched) when there is none, as when the run was stopped before the script wrote it.
pub(crate) fn take_fetched(stdout: &mut Vec<u8>) -> Option<Fetched> {
    let header = LENGTH_DIGITS + MAGIC.len();
    if stdout.len() < header || !stdout.ends_with(MAGIC) {
        return None;
    }
    let digits_start = stdout.len() - header;
    let digits = std::str::from_utf8(&stdout[digits_start..digits_start + LENGTH_DIGITS]).ok()?;
    let length = usize::from_str_radix(digits, 16).ok()?;
    let payload_start = digits_start.checked_sub(length)?;
    let payload: Value = serde_json::from_slice(&stdout[payload_start..digits_start]).ok()?;
    let fetched = Fetched {
        files: payload.get("files")?.as_object()?.clone(),
        omitted: payload
            .get("omitted")?
            .as_array()?
            .iter()
            .filter_map(|path| path.as_str().map(str::to_owned))
            .collect(),
        status: payload.get("status")?.as_i64()?,
    };
    stdout.truncate(payload_start);
    Some(fetched)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_pass_and_absolute_or_escaping_ones_are_refused() {
        for path in ["a.txt", "dir1/dir2/dir3/secret_flag", ".hidden", "a..b/c"] {
            assert!(checked_path("files", path).is_ok(), "{path}");
        }
        for (path, why) in [
            ("/etc/passwd", "an absolute path"),
            ("../secret", "a `..` component"),
            ("dir/../../x", "a `..` component"),
            ("dir//x", "empty component"),
            ("./x", "a `.` or empty component"),
            ("dir/", "empty component"),
            ("", "an empty path"),
            ("a\0b", "a NUL byte"),
        ] {
            let error = checked_path("files", path).expect_err(path);
            assert!(error.reason.contains(why), "{path}: {}", error.reason);
        }
    }

    #[test]
    fn a_file_cannot_also_be_a_directory() {
        assert!(check_no_overlap(["a/b", "a/c", "ab"].into_iter()).is_ok());
        let error = check_no_overlap(["a", "a/b/c"].into_iter()).expect_err("overlap");
        assert!(
            error.reason.contains("one is a directory of the other"),
            "{}",
            error.reason
        );
    }

    #[test]
    fn the_trailer_is_taken_off_the_output_and_read() {
        let payload = br#"{"status": -9, "files": {"a.txt": "c2VjcmV0"}, "omitted": ["big"]}"#;
        let mut stdout = b"the program's own output\n".to_vec();
        stdout.extend_from_slice(payload);
        stdout.extend_from_slice(format!("{:016x}", payload.len()).as_bytes());
        stdout.extend_from_slice(MAGIC);
        let fetched = take_fetched(&mut stdout).expect("a trailer");
        assert_eq!(stdout, b"the program's own output\n");
        assert_eq!(fetched.status, -9);
        assert_eq!(fetched.files["a.txt"], "c2VjcmV0");
        assert_eq!(fetched.omitted, ["big"]);
    }

    #[test]
    fn output_without_a_whole_trailer_is_left_alone() {
        for mut stdout in [
            b"no trailer".to_vec(),
            MAGIC.to_vec(),
            [b"{}".as_slice(), b"00000000000000ff", MAGIC].concat(),
            [b"not json".as_slice(), b"0000000000000008", MAGIC].concat(),
        ] {
            let before = stdout.clone();
            assert!(take_fetched(&mut stdout).is_none());
            assert_eq!(stdout, before);
        }
    }
}
