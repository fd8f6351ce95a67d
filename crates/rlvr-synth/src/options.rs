//! The generator's settings, with the presets other crates use: [`SynthOptions::small`] for quick
//! test files and [`SynthOptions::like_card`] for a full-size benchmark file.

use crate::SynthError;

/// What to generate. Construct with [`SynthOptions::new`], [`SynthOptions::small`] or
/// [`SynthOptions::like_card`], then adjust the public fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SynthOptions {
    /// Number of generated records. Zero writes an empty file (plus injected lines, if asked).
    pub rows: u64,
    /// Seed of every random choice; the same options give a byte-identical file.
    pub seed: u64,
    /// The average size of one record line in bytes that the generator aims for. Records cannot
    /// be smaller than their prompt plus one short string per test, so a very small value gives
    /// the smallest records the shape allows and a larger average than asked.
    pub average_record_bytes: u64,
    /// Also write, at known lines, records that validation must reject and quirky records it
    /// must accept; [`crate::SynthSummary::injected`] lists them.
    pub inject_faults: bool,
}

impl SynthOptions {
    /// Rows in the released file.
    pub const CARD_ROWS: u64 = 15_001;
    /// Size in bytes of the released file.
    pub const CARD_FILE_BYTES: u64 = 7_936_183_333;
    /// The released file's average record size, rounded: 7,936,183,333 / 15,001.
    pub const CARD_AVERAGE_RECORD_BYTES: u64 =
        (Self::CARD_FILE_BYTES + Self::CARD_ROWS / 2) / Self::CARD_ROWS;
    /// Default average record size: small enough for quick files, large enough for multi-line tests.
    pub const DEFAULT_AVERAGE_RECORD_BYTES: u64 = 20_000;
    /// Average record size of [`SynthOptions::small`].
    pub const SMALL_AVERAGE_RECORD_BYTES: u64 = 12_000;
    /// Largest accepted row count; the generator keeps a plan of about 64 bytes per row in memory.
    pub const MAX_ROWS: u64 = 50_000_000;
    /// Largest accepted average record size (256 MiB).
    pub const MAX_AVERAGE_RECORD_BYTES: u64 = 256 << 20;

    /// `rows` records with the default average size and no injected faults.
    pub fn new(rows: u64, seed: u64) -> Self {
        Self {
            rows,
            seed,
            average_record_bytes: Self::DEFAULT_AVERAGE_RECORD_BYTES,
            inject_faults: false,
        }
    }

    /// A quick file for tests: `rows` records of about 12 KB each (close to the smallest the shape allows).
    pub fn small(rows: u64, seed: u64) -> Self {
        Self {
            average_record_bytes: Self::SMALL_AVERAGE_RECORD_BYTES,
            ..Self::new(rows, seed)
        }
    }

    /// A full-size file like the released one: 15,001 rows, about 7.39 GiB.
    pub fn like_card(seed: u64) -> Self {
        Self {
            rows: Self::CARD_ROWS,
            average_record_bytes: Self::CARD_AVERAGE_RECORD_BYTES,
            ..Self::new(0, seed)
        }
    }

    /// The same options with faults injected.
    pub fn with_faults(self) -> Self {
        Self {
            inject_faults: true,
            ..self
        }
    }

    /// Rejects settings the generator cannot honour, before any work starts.
    pub(crate) fn check(&self) -> Result<(), SynthError> {
        if self.rows > Self::MAX_ROWS {
            return Err(SynthError::TooManyRows {
                rows: self.rows,
                maximum: Self::MAX_ROWS,
            });
        }
        if self.average_record_bytes == 0
            || self.average_record_bytes > Self::MAX_AVERAGE_RECORD_BYTES
        {
            return Err(SynthError::AverageRecordBytes {
                requested: self.average_record_bytes,
                maximum: Self::MAX_AVERAGE_RECORD_BYTES,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_card_average_matches_the_card_file_size() {
        let options = SynthOptions::like_card(0);
        let total = options.rows * options.average_record_bytes;
        assert!(total.abs_diff(SynthOptions::CARD_FILE_BYTES) < SynthOptions::CARD_ROWS);
    }

    #[test]
    fn out_of_range_settings_are_rejected() {
        assert!(
            SynthOptions::new(SynthOptions::MAX_ROWS + 1, 0)
                .check()
                .is_err()
        );
        let zero_bytes = SynthOptions {
            average_record_bytes: 0,
            ..SynthOptions::new(5, 0)
        };
        assert!(zero_bytes.check().is_err());
        assert!(SynthOptions::new(0, 0).check().is_ok());
    }
}
