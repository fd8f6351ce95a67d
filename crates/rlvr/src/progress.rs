//! Progress bars on stderr (hidden when stderr is not a terminal): bytes for `fetch`, jobs for
//! `verify`.

use std::io::Read;
use std::path::Path;

use indicatif::{ProgressBar, ProgressStyle};

/// A byte progress bar for a download; [`rlvr_hub::download`] drives it.
pub(crate) struct DownloadBar(ProgressBar);

impl DownloadBar {
    pub(crate) fn new() -> Self {
        Self(
            ProgressBar::new(0).with_style(
                ProgressStyle::with_template(
                    "{bytes}/{total_bytes} {wide_bar} {bytes_per_sec} eta {eta}",
                )
                .expect("the progress template is valid"),
            ),
        )
    }

    /// Removes the bar from the terminal.
    pub(crate) fn finish(&self) {
        self.0.finish_and_clear();
    }
}

impl rlvr_hub::Progress for DownloadBar {
    fn start(&mut self, total: Option<u64>, done: u64) {
        if let Some(total) = total {
            self.0.set_length(total);
        }
        self.0.set_position(done);
    }

    fn advance(&mut self, bytes: u64) {
        self.0.inc(bytes);
    }
}

/// A bar counting result lines against the job file's line count (no length for stdin).
pub(crate) fn jobs_bar(jobs: &Path) -> ProgressBar {
    let total = if jobs.as_os_str() == "-" {
        None
    } else {
        count_lines(jobs).ok()
    };
    let bar = match total {
        Some(total) => ProgressBar::new(total),
        None => ProgressBar::no_length(),
    };
    bar.set_style(
        ProgressStyle::with_template("{pos}/{len} jobs {wide_bar} {per_sec} eta {eta}")
            .expect("the progress template is valid"),
    );
    bar
}

/// Counts newlines without holding the file in memory.
fn count_lines(path: &Path) -> std::io::Result<u64> {
    let mut file = fs_err::File::open(path)?;
    let mut buffer = vec![0; 1 << 20];
    let mut lines = 0;
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            return Ok(lines);
        }
        lines += memchr::memchr_iter(b'\n', &buffer[..read]).count() as u64;
    }
}
