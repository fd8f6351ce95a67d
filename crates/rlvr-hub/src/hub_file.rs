//! Where a file lives on the Hub, and its `resolve` URL.

/// The Hub's public endpoint, used unless `HF_ENDPOINT` or `--endpoint` says otherwise.
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";
/// The dataset repository of code-rlvr-15k.
pub const DEFAULT_REPO: &str = "wflying/code-rlvr-15k";
/// The one data file of that repository.
pub const DEFAULT_FILE: &str = "code-rlvr-15k.jsonl";
/// SHA-256 of the released `code-rlvr-15k.jsonl`, as recorded in the dataset card.
pub const CARD_SHA256: &str = "6624d4cb0a25ea0a96b772bc6a0880c1b245e15a8734bcf113db28a351565103";

/// One file of a dataset repository at a revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubFile {
    /// Base URL without a trailing slash, e.g. `https://huggingface.co`.
    pub endpoint: String,
    /// `owner/name`.
    pub repository: String,
    /// Path of the file inside the repository.
    pub file: String,
    /// Branch, tag or commit.
    pub revision: String,
}

impl HubFile {
    /// The URL the Hub serves the file's bytes from (it may redirect to a CDN).
    pub fn resolve_url(&self) -> String {
        format!(
            "{}/datasets/{}/resolve/{}/{}",
            self.endpoint.trim_end_matches('/'),
            self.repository,
            encode_path(&self.revision),
            self.file
                .split('/')
                .map(encode_path)
                .collect::<Vec<_>>()
                .join("/"),
        )
    }

    /// The checksum the dataset card records, when this is the card's file at any revision.
    pub fn card_checksum(&self) -> Option<&'static str> {
        (self.repository == DEFAULT_REPO && self.file == DEFAULT_FILE).then_some(CARD_SHA256)
    }
}

/// Percent-encodes one path segment (RFC 3986 unreserved characters stay as they are).
fn encode_path(segment: &str) -> String {
    let mut encoded = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                encoded.push(byte as char);
            }
            _ => encoded.push_str(&format!("%{byte:02X}")),
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(endpoint: &str, revision: &str) -> HubFile {
        HubFile {
            endpoint: endpoint.into(),
            repository: DEFAULT_REPO.into(),
            file: DEFAULT_FILE.into(),
            revision: revision.into(),
        }
    }

    #[test]
    fn resolve_url_follows_the_hub_layout() {
        assert_eq!(
            file("https://huggingface.co/", "main").resolve_url(),
            "https://huggingface.co/datasets/wflying/code-rlvr-15k/resolve/main/code-rlvr-15k.jsonl"
        );
    }

    #[test]
    fn revisions_with_slashes_are_encoded() {
        assert!(
            file("http://mirror", "refs/convert/parquet")
                .resolve_url()
                .contains("/resolve/refs%2Fconvert%2Fparquet/")
        );
    }

    #[test]
    fn card_checksum_only_for_the_card_file() {
        assert_eq!(file("x", "main").card_checksum(), Some(CARD_SHA256));
        let mut other = file("x", "main");
        other.file = "other.jsonl".into();
        assert_eq!(other.card_checksum(), None);
    }
}
