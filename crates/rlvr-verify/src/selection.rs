//! Test selection: which of a record's tests a job runs. Klear samples at most 16 with an
//! unseeded `random.sample`; we sample deterministically from a seed and the job's identity so
//! a rerun scores the same tests.

use rand::rngs::ChaCha8Rng;
use rand::{Rng, SeedableRng};
use sha2::{Digest, Sha256};

/// A profile's default test selection, before the job's options apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TestSelection {
    /// Every test (Code-R1, rllm, prime, judge).
    All,
    /// At most `limit` tests sampled deterministically; the ground truth's
    /// `max_test_cases` replaces the limit when present (Klear: 16).
    SampleAtMost { limit: usize },
}

/// The choice made for one job: the indices of the selected tests, ascending.
pub(crate) fn select_tests(
    selection: TestSelection,
    test_count: usize,
    ground_truth_limit: Option<usize>,
    max_tests: Option<usize>,
    all_tests: bool,
    seed: u64,
    job_identity: &[u8],
) -> Vec<usize> {
    let limit = if all_tests {
        None
    } else {
        match selection {
            TestSelection::All => max_tests,
            TestSelection::SampleAtMost { limit } => {
                Some(max_tests.or(ground_truth_limit).unwrap_or(limit))
            }
        }
    };
    match limit {
        Some(limit) if limit < test_count => sample_indices(test_count, limit, seed, job_identity),
        _ => (0..test_count).collect(),
    }
}

/// `amount` distinct indices below `count`, chosen by a partial Fisher–Yates shuffle driven by
/// ChaCha8 seeded with SHA-256 of the seed and the job identity. Written out here (rather
/// than `rand::seq`) so the choice cannot change with a `rand` upgrade.
pub fn sample_indices(count: usize, amount: usize, seed: u64, job_identity: &[u8]) -> Vec<usize> {
    let mut hasher = Sha256::new();
    hasher.update(b"rlvr test selection v1\0");
    hasher.update(seed.to_le_bytes());
    hasher.update(job_identity);
    let mut generator = ChaCha8Rng::from_seed(hasher.finalize().into());
    let mut indices: Vec<usize> = (0..count).collect();
    let amount = amount.min(count);
    for position in 0..amount {
        let remaining = (count - position) as u64;
        // Lemire's multiply-shift maps a 64-bit draw onto 0..remaining.
        let offset = ((u128::from(generator.next_u64()) * u128::from(remaining)) >> 64) as usize;
        indices.swap(position, position + offset);
    }
    let mut chosen = indices[..amount].to_vec();
    chosen.sort_unstable();
    chosen
}

impl TestSelection {
    /// One line for `--list-profiles`.
    pub fn describe(self) -> String {
        match self {
            Self::All => "all tests (--max-tests N: N chosen deterministically)".to_owned(),
            Self::SampleAtMost { limit } => format!(
                "at most {limit} sampled from --seed and the job (gt max_test_cases honoured; --all-tests)"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_and_job_give_the_same_tests() {
        let first = sample_indices(100, 16, 7, b"job-1");
        assert_eq!(first, sample_indices(100, 16, 7, b"job-1"));
        assert_eq!(first.len(), 16);
        assert!(first.windows(2).all(|pair| pair[0] < pair[1]));
        assert_ne!(first, sample_indices(100, 16, 8, b"job-1"));
        assert_ne!(first, sample_indices(100, 16, 7, b"job-2"));
    }

    #[test]
    fn klear_takes_at_most_sixteen_unless_all_tests() {
        let klear = TestSelection::SampleAtMost { limit: 16 };
        assert_eq!(
            select_tests(klear, 100, None, None, false, 0, b"").len(),
            16
        );
        assert_eq!(
            select_tests(klear, 10, None, None, false, 0, b""),
            (0..10).collect::<Vec<_>>()
        );
        assert_eq!(
            select_tests(klear, 100, None, None, true, 0, b"").len(),
            100
        );
        assert_eq!(
            select_tests(klear, 100, Some(4), None, false, 0, b"").len(),
            4
        );
        assert_eq!(
            select_tests(klear, 100, Some(4), Some(20), false, 0, b"").len(),
            20
        );
    }

    #[test]
    fn all_selection_honours_max_tests() {
        assert_eq!(
            select_tests(TestSelection::All, 50, None, None, false, 0, b"").len(),
            50
        );
        assert_eq!(
            select_tests(TestSelection::All, 50, Some(3), None, false, 0, b"").len(),
            50
        );
        assert_eq!(
            select_tests(TestSelection::All, 50, None, Some(5), false, 0, b"").len(),
            5
        );
    }

    /// Which tests a job runs is part of its score, so it must not move when the generator's
    /// crate does (rand_chacha 0.9 to rand 0.10's ChaCha): the choice for one seed and job is
    /// pinned.
    #[test]
    fn the_choice_is_pinned() {
        assert_eq!(
            sample_indices(100, 16, 7, b"job-1"),
            [7, 8, 13, 15, 17, 25, 44, 45, 48, 57, 68, 69, 74, 79, 86, 95]
        );
        assert_eq!(
            sample_indices(1000, 5, 0, b"another job"),
            [64, 220, 753, 874, 905]
        );
    }
}
