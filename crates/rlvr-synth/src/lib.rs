//! Deterministic generator of synthetic files in the dataset's exact schema and shape.
//!
//! The same [`SynthOptions`] always produce a byte-identical file: every row draws its random
//! numbers from its own generator, seeded by the file seed and the row index, so rows can be
//! rendered in parallel and still come out the same. The shape follows the dataset card: pair
//! counts 16..1,226 with a median near 102, about 0.3% functional records, about 9.5% of rows
//! repeating an earlier prompt (a few more differing only in whitespace), prompt lengths in code
//! points like the card's, long multi-line test strings sized so the average record is close to
//! [`SynthOptions::average_record_bytes`], the mixed string/list quirk at proportional row
//! positions, and the routing constants. With [`SynthOptions::inject_faults`] it also writes, at
//! known lines, records that validation must reject and quirks it must accept.
//!
//! ```
//! use rlvr_synth::{SynthOptions, write_synthetic};
//! # let directory = tempfile::tempdir().expect("temporary directory");
//! # let path = directory.path().join("sample.jsonl");
//! let summary = write_synthetic(&path, &SynthOptions::small(200, 7))?;
//! assert_eq!(summary.rows, 200);
//! # assert_eq!(std::fs::read_to_string(&path).expect("written").lines().count(), 200);
//! # Ok::<(), rlvr_synth::SynthError>(())
//! ```

#![forbid(unsafe_code)]

mod error;
mod faults;
mod label;
mod options;
mod plan;
mod pool;
mod prompt;
mod random;
mod summary;
mod writer;

pub use error::SynthError;
pub use faults::{ExpectedOutcome, InjectedLine, InjectionKind};
pub use options::SynthOptions;
pub use summary::{ExpectedFigures, ExpectedSpread, SynthSummary};
pub use writer::{faults_sidecar_path, write_synthetic, write_synthetic_to};

#[cfg(test)]
mod tests;
