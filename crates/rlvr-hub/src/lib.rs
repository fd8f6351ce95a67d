//! Download a dataset file from the Hugging Face Hub: resolve URLs (honouring `HF_ENDPOINT` and
//! `HF_TOKEN`), resume partial downloads with HTTP `Range`, verify SHA-256, and move the file into
//! place atomically only after it verified.

#![forbid(unsafe_code)]

mod download;
mod hub_file;

pub use download::{DownloadError, DownloadOptions, DownloadSummary, Progress, download};
pub use hub_file::{CARD_SHA256, DEFAULT_ENDPOINT, DEFAULT_FILE, DEFAULT_REPO, HubFile};
