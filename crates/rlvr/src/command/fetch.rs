//! `rlvr fetch`: download the dataset file from the Hub with resume and SHA-256 verification.

use std::path::PathBuf;

use rlvr_hub::{
    DEFAULT_ENDPOINT, DEFAULT_FILE, DEFAULT_REPO, DownloadError, DownloadOptions, HubFile,
};

use crate::exit::{Error, Status};
use crate::progress::DownloadBar;
use crate::stdout::outln;

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
    /// Hub endpoint; defaults to $HF_ENDPOINT, then <https://huggingface.co>.
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

/// Every argument checked before the first byte is requested: a malformed digest, endpoint or
/// output path would otherwise show only after gigabytes were downloaded.
fn check_arguments(args: &Args, endpoint: &str) -> Result<(), Error> {
    let usage = Error::Usage;
    if let Some(digest) = &args.sha256
        && !(digest.len() == 64 && digest.bytes().all(|byte| byte.is_ascii_hexdigit()))
    {
        return Err(usage(format!(
            "--sha256 `{digest}` is not a SHA-256 digest (64 hexadecimal digits)"
        )));
    }
    if !(endpoint.starts_with("https://") || endpoint.starts_with("http://"))
        || endpoint.len() <= "https://".len()
    {
        return Err(usage(format!(
            "the endpoint `{endpoint}` is not an http:// or https:// URL"
        )));
    }
    let parts: Vec<&str> = args.repo.split('/').collect();
    if parts.len() != 2 || parts.iter().any(|part| part.is_empty()) {
        return Err(usage(format!("--repo `{}` is not OWNER/NAME", args.repo)));
    }
    if args.file.is_empty() || args.revision.is_empty() {
        return Err(usage("--file and --revision must not be empty".to_owned()));
    }
    if args.attempts == 0 {
        return Err(usage("--attempts must be at least 1".to_owned()));
    }
    if let Some(out) = &args.out {
        if out.is_dir() {
            return Err(usage(format!(
                "--out `{}` is a directory; give the file's path",
                out.display()
            )));
        }
        let parent = out.parent().filter(|parent| !parent.as_os_str().is_empty());
        if let Some(parent) = parent
            && !parent.is_dir()
        {
            return Err(usage(format!(
                "--out `{}`: the directory `{}` does not exist",
                out.display(),
                parent.display()
            )));
        }
    }
    Ok(())
}

pub(crate) fn run(args: Args) -> Result<Status, Error> {
    let endpoint = args
        .endpoint
        .clone()
        .or_else(|| {
            std::env::var("HF_ENDPOINT")
                .ok()
                .filter(|value| !value.is_empty())
        })
        .unwrap_or_else(|| DEFAULT_ENDPOINT.to_string());
    check_arguments(&args, &endpoint)?;
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
    let out = args.out.clone().unwrap_or_else(|| {
        PathBuf::from(hub_file.file.rsplit('/').next().unwrap_or(&hub_file.file))
    });
    let options = DownloadOptions {
        token: std::env::var("HF_TOKEN")
            .ok()
            .filter(|value| !value.is_empty()),
        expected_sha256,
        max_attempts: args.attempts,
        ..DownloadOptions::default()
    };
    let url = hub_file.resolve_url();
    let mut progress = DownloadBar::new();
    let result = rlvr_hub::download(&url, &out, &options, &mut progress);
    progress.finish();
    match result {
        Ok(summary) => {
            let check = if summary.verified {
                "verified"
            } else {
                "not verified"
            };
            outln!(
                "{}: {} bytes, sha256 {} ({check})",
                summary.path.display(),
                summary.bytes,
                summary.sha256
            )?;
            Ok(Status::Success)
        }
        Err(DownloadError::Io(error)) => Err(Error::DownloadInterrupted { error }),
        Err(error) => Err(Error::Download(error)),
    }
}
