//! A resumable, verified download: bytes go to `OUT.part`, an interrupted transfer continues
//! with `Range: bytes=N-` (within one call through retries, and across calls from the part file
//! left behind), the SHA-256 is computed while writing, and `OUT` appears only after the
//! checksum matched. A mismatching file is deleted, never renamed into place.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

/// How to download.
#[derive(Debug, Clone)]
pub struct DownloadOptions {
    /// Sent as `Authorization: Bearer TOKEN` (the Hub's `HF_TOKEN`).
    pub token: Option<String>,
    /// Lowercase hex SHA-256 the finished file must have; `None` skips verification.
    pub expected_sha256: Option<String>,
    /// Attempts in total, counting the first; each retry resumes where the last stopped.
    pub max_attempts: u32,
    /// Pause before the first retry; doubles each time, at most 30 s.
    pub retry_delay: Duration,
    /// Longest silence while connecting or waiting for the next bytes.
    pub stall_timeout: Duration,
}

impl Default for DownloadOptions {
    fn default() -> Self {
        Self {
            token: None,
            expected_sha256: None,
            max_attempts: 8,
            retry_delay: Duration::from_secs(1),
            stall_timeout: Duration::from_secs(60),
        }
    }
}

/// Receives progress; the CLI draws a bar with it.
pub trait Progress {
    /// The transfer (re)starts: `total` bytes if the server said, `done` already on disk.
    fn start(&mut self, total: Option<u64>, done: u64);
    /// `bytes` more arrived.
    fn advance(&mut self, bytes: u64);
}

impl Progress for () {
    fn start(&mut self, _total: Option<u64>, _done: u64) {}
    fn advance(&mut self, _bytes: u64) {}
}

/// What a finished download did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownloadSummary {
    /// Final path.
    pub path: PathBuf,
    /// Size in bytes.
    pub bytes: u64,
    /// Lowercase hex SHA-256 of the file.
    pub sha256: String,
    /// Whether `expected_sha256` was checked (and matched).
    pub verified: bool,
    /// Bytes that were already on disk from an earlier, interrupted call.
    pub resumed_from: u64,
    /// Requests made, counting the first.
    pub attempts: u32,
}

/// Why a download failed.
#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    /// The server answered with a status that retrying will not fix (404, 401, ...).
    #[error("{url}: the server answered HTTP {status}")]
    Status { url: String, status: u16 },
    /// Every attempt failed on the network or with a retryable status.
    #[error("{url}: gave up after {attempts} attempts: {last}")]
    AttemptsExhausted {
        url: String,
        attempts: u32,
        last: String,
    },
    /// The server's answer contradicts itself (e.g. a `Content-Range` that is not what we asked).
    #[error("{url}: {reason}")]
    Protocol { url: String, reason: String },
    /// The file on disk could not be read or written.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The finished file's SHA-256 is not the expected one; it was deleted.
    #[error("{path}: checksum mismatch: expected sha256 {expected}, got {actual}; the file was deleted", path = path.display())]
    ChecksumMismatch {
        path: PathBuf,
        expected: String,
        actual: String,
    },
}

/// The outcome of one request.
enum Attempt {
    /// The whole file is on disk.
    Complete,
    /// Try again (resuming): the reason is kept for the final error.
    Retry(String),
}

/// Downloads `url` to `out`, resuming from `out.part` if an earlier call left one.
pub fn download(
    url: &str,
    out: &Path,
    options: &DownloadOptions,
    progress: &mut dyn Progress,
) -> Result<DownloadSummary, DownloadError> {
    let part = part_path(out);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_connect(Some(options.stall_timeout))
        .timeout_recv_response(Some(options.stall_timeout))
        .timeout_recv_body(None)
        .build()
        .into();
    let resumed_from = fs_err::metadata(&part)
        .map(|metadata| metadata.len())
        .unwrap_or(0);
    // The hash of what is on disk, continued as bytes arrive.
    let mut hasher = Sha256::new();
    let mut hashed = hash_prefix(&part, &mut hasher)?;
    let mut attempts = 0;
    let mut delay = options.retry_delay;
    loop {
        attempts += 1;
        match attempt(
            &agent,
            url,
            &part,
            options,
            &mut hasher,
            &mut hashed,
            progress,
        )? {
            Attempt::Complete => break,
            Attempt::Retry(reason) if attempts >= options.max_attempts => {
                return Err(DownloadError::AttemptsExhausted {
                    url: url.into(),
                    attempts,
                    last: reason,
                });
            }
            Attempt::Retry(reason) => {
                tracing::warn!(
                    "{url}: {reason}; retrying in {delay:?} (attempt {attempts} of {})",
                    options.max_attempts
                );
                std::thread::sleep(delay);
                delay = (delay * 2).min(Duration::from_secs(30));
            }
        }
    }
    let sha256 = hex::encode(hasher.finalize());
    if let Some(expected) = &options.expected_sha256
        && !expected.eq_ignore_ascii_case(&sha256)
    {
        fs_err::remove_file(&part)?;
        return Err(DownloadError::ChecksumMismatch {
            path: out.to_path_buf(),
            expected: expected.to_ascii_lowercase(),
            actual: sha256,
        });
    }
    fs_err::File::open(&part)?.sync_all()?;
    fs_err::rename(&part, out)?;
    Ok(DownloadSummary {
        path: out.to_path_buf(),
        bytes: hashed,
        sha256,
        verified: options.expected_sha256.is_some(),
        resumed_from,
        attempts,
    })
}

/// Where the bytes go until they are verified.
pub fn part_path(out: &Path) -> PathBuf {
    let mut name = out.file_name().unwrap_or_default().to_os_string();
    name.push(".part");
    out.with_file_name(name)
}

/// Hashes the part file already on disk; returns its length.
fn hash_prefix(part: &Path, hasher: &mut Sha256) -> Result<u64, DownloadError> {
    let mut file = match fs_err::File::open(part) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(error) => return Err(error.into()),
    };
    let mut buffer = vec![0; 1 << 20];
    let mut total = 0;
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            return Ok(total);
        }
        hasher.update(&buffer[..read]);
        total += read as u64;
    }
}

/// One request: asks for the bytes after `hashed`, appends them to `part`.
fn attempt(
    agent: &ureq::Agent,
    url: &str,
    part: &Path,
    options: &DownloadOptions,
    hasher: &mut Sha256,
    hashed: &mut u64,
    progress: &mut dyn Progress,
) -> Result<Attempt, DownloadError> {
    let mut request = agent.get(url);
    if let Some(token) = &options.token {
        request = request.header("Authorization", &format!("Bearer {token}"));
    }
    if *hashed > 0 {
        request = request.header("Range", &format!("bytes={}-", *hashed));
    }
    let mut response = match request.call() {
        Ok(response) => response,
        Err(error) => return Ok(Attempt::Retry(error.to_string())),
    };
    let status = response.status().as_u16();
    let length = response
        .headers()
        .get("content-length")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    let start = match status {
        // The part file already holds everything.
        416 if *hashed > 0 => return Ok(Attempt::Complete),
        206 => {
            let range = response
                .headers()
                .get("content-range")
                .and_then(|value| value.to_str().ok());
            let first = range.and_then(content_range_start);
            if first != Some(*hashed) {
                return Err(DownloadError::Protocol {
                    url: url.into(),
                    reason: format!(
                        "asked for bytes from {} but got Content-Range {range:?}",
                        *hashed
                    ),
                });
            }
            *hashed
        }
        200 => 0,
        408 | 429 | 500..=599 => return Ok(Attempt::Retry(format!("HTTP {status}"))),
        _ => {
            return Err(DownloadError::Status {
                url: url.into(),
                status,
            });
        }
    };
    let mut file = if start == 0 {
        // A server that ignores Range sends everything again: start over.
        *hasher = Sha256::new();
        *hashed = 0;
        fs_err::File::create(part)?
    } else {
        fs_err::OpenOptions::new().append(true).open(part)?
    };
    let total = length.map(|length| length + start);
    progress.start(total, start);
    let mut body = response.body_mut().as_reader();
    let mut buffer = vec![0; 1 << 20];
    loop {
        match body.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => {
                file.write_all(&buffer[..read])?;
                hasher.update(&buffer[..read]);
                *hashed += read as u64;
                progress.advance(read as u64);
            }
            Err(error) => {
                file.flush()?;
                return Ok(Attempt::Retry(format!(
                    "connection lost after {} bytes: {error}",
                    *hashed
                )));
            }
        }
    }
    file.flush()?;
    match total {
        Some(total) if *hashed < total => Ok(Attempt::Retry(format!(
            "connection closed at {} of {total} bytes",
            *hashed
        ))),
        _ => Ok(Attempt::Complete),
    }
}

/// The first byte position of `Content-Range: bytes FIRST-LAST/TOTAL`.
fn content_range_start(value: &str) -> Option<u64> {
    value
        .strip_prefix("bytes ")?
        .split('-')
        .next()?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_range_start_parses_the_first_position() {
        assert_eq!(content_range_start("bytes 100-199/200"), Some(100));
        assert_eq!(content_range_start("bytes */200"), None);
        assert_eq!(content_range_start("items 1-2/3"), None);
    }

    #[test]
    fn part_path_appends_a_suffix() {
        assert_eq!(
            part_path(Path::new("/a/b.jsonl")),
            PathBuf::from("/a/b.jsonl.part")
        );
    }
}
