//! `rlvr fetch`: download the dataset file from the Hub with resume and SHA-256 verification.

use std::path::PathBuf;

use indicatif::{ProgressBar, ProgressStyle};
use rlvr_hub::{
    DEFAULT_ENDPOINT, DEFAULT_FILE, DEFAULT_REPO, DownloadError, DownloadOptions, HubFile,
};

use crate::exit::{CHECKSUM_MISMATCH, DOWNLOAD_FAILED, Failure, Status};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Dataset repository on the Hub.
    #[arg(long, default_value = DEFAULT_REPO)]
    repo: String,
    /// File inside the repository.
    #[arg(long, default_value = DEFAULT_FILE)]
    file: String,
    /// Branch, tag or commit.
    #[arg(long, default_value = "main")]
    revision: String,
    /// Hub endpoint; defaults to $HF_ENDPOINT, then https://huggingface.co.
    #[arg(long)]
    endpoint: Option<String>,
    /// Where to write the file; defaults to the file's name in the current directory.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Expected SHA-256 (hex); defaults to the dataset card's checksum for the card's file.
    #[arg(long)]
    sha256: Option<String>,
    /// Skip checksum verification (not recommended).
    #[arg(long, conflicts_with = "sha256")]
    no_verify: bool,
    /// Attempts in total; each retry resumes where the last one stopped.
    #[arg(long, default_value_t = 8)]
    attempts: u32,
}

/// Draws the download as a byte progress bar on stderr (hidden when stderr is not a terminal).
struct Bar(ProgressBar);

impl rlvr_hub::Progress for Bar {
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

pub(crate) fn run(args: Args) -> anyhow::Result<Status> {
    let endpoint = args
        .endpoint
        .or_else(|| {
            std::env::var("HF_ENDPOINT")
                .ok()
                .filter(|value| !value.is_empty())
        })
        .unwrap_or_else(|| DEFAULT_ENDPOINT.to_string());
    let hub_file = HubFile {
        endpoint,
        repository: args.repo,
        file: args.file,
        revision: args.revision,
    };
    let expected_sha256 = match (args.no_verify, args.sha256) {
        (true, _) => None,
        (false, Some(sha256)) => Some(sha256),
        (false, None) => hub_file.card_checksum().map(str::to_string),
    };
    if expected_sha256.is_none() && !args.no_verify {
        tracing::warn!(
            "no checksum known for {}; pass --sha256 to verify the download",
            hub_file.file
        );
    }
    let out = args.out.unwrap_or_else(|| {
        PathBuf::from(hub_file.file.rsplit('/').next().unwrap_or(&hub_file.file))
    });
    let options = DownloadOptions {
        token: std::env::var("HF_TOKEN")
            .ok()
            .filter(|value| !value.is_empty()),
        expected_sha256,
        max_attempts: args.attempts.max(1),
        ..DownloadOptions::default()
    };
    let bar = ProgressBar::new(0).with_style(
        ProgressStyle::with_template("{bytes}/{total_bytes} {wide_bar} {bytes_per_sec} eta {eta}")
            .expect("the progress template is valid"),
    );
    let url = hub_file.resolve_url();
    let mut progress = Bar(bar.clone());
    let result = rlvr_hub::download(&url, &out, &options, &mut progress);
    bar.finish_and_clear();
    match result {
        Ok(summary) => {
            let check = if summary.verified {
                "verified"
            } else {
                "not verified"
            };
            println!(
                "{}: {} bytes, sha256 {} ({check})",
                summary.path.display(),
                summary.bytes,
                summary.sha256
            );
            Ok(Status::Success)
        }
        Err(error @ DownloadError::ChecksumMismatch { .. }) => {
            Err(Failure::new(CHECKSUM_MISMATCH, error.to_string()).into())
        }
        Err(DownloadError::Io(error)) => Err(error.into()),
        Err(error) => Err(Failure::new(DOWNLOAD_FAILED, error.to_string()).into()),
    }
}
