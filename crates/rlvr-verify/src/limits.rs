//! Per-profile execution limits, the defaults the references use; every one can be overridden
//! from the command line or a request, through the validators here, so an override is either a
//! usable value or a clear error naming the field (never a panic when it is used).
//!
//! Every profile has a memory limit, including those whose reference sets none (rllm, prime):
//! without one a single job may take gigabytes and starve the machine's other workers.

use std::time::Duration;

/// Resource limits for one job's test programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Limits {
    /// Wall-clock limit for one test program.
    pub time_per_test: Duration,
    /// Address-space limit (`RLIMIT_AS`) in bytes; the sandbox's memory cgroup is sized from it.
    pub memory_bytes: u64,
    /// Largest file the program may write (`RLIMIT_FSIZE`).
    pub file_size_bytes: Option<u64>,
    /// Processes the program may have (`RLIMIT_NPROC`).
    pub processes: Option<u32>,
    /// Open file descriptors (`RLIMIT_NOFILE`).
    pub open_files: Option<u32>,
    /// Captured stdout beyond this many bytes is an `output_limit` verdict, unless the test's
    /// expected output is larger: see [`Limits::output_cap`].
    pub output_bytes: u64,
    /// Wall clock for the whole job; tests not finished by then get `timeout` verdicts.
    pub job_deadline: Duration,
}

const MEBIBYTE: u64 = 1024 * 1024;

/// Largest per-test time limit a request, the command line or a ground truth may ask for.
pub const MAX_TIME_LIMIT: Duration = Duration::from_secs(3600);
/// Largest memory limit (in MB) a request or the command line may ask for: 1 TiB.
pub const MAX_MEMORY_MEGABYTES: u64 = 1 << 20;
/// Longest job deadline any computation may produce (rllm's grows with the test count).
pub const MAX_JOB_DEADLINE: Duration = Duration::from_secs(7 * 24 * 3600);

/// A time or memory value that cannot be used; names the field it came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    /// Not a positive, finite number of seconds up to an hour.
    #[error("{field} must be a number of seconds in (0, 3600], found {found}")]
    TimeLimit { field: String, found: String },
    /// Not a whole number of megabytes from 1 to 1 TiB.
    #[error(
        "{field} must be a whole number of megabytes in [1, {MAX_MEMORY_MEGABYTES}], found {found}"
    )]
    MemoryLimit { field: String, found: String },
}

/// Validates a per-test time limit given in seconds (`--time-limit`, `time_limit`,
/// `max_execution_time`, `run_timeout`).
pub fn time_limit_from_seconds(field: &str, seconds: f64) -> Result<Duration, LimitError> {
    let invalid = || LimitError::TimeLimit {
        field: field.to_owned(),
        // `1e300` rather than its 301 digits.
        found: if seconds.abs() < 1e15 {
            seconds.to_string()
        } else {
            format!("{seconds:e}")
        },
    };
    seconds_in_range(seconds).ok_or_else(invalid)
}

/// `seconds` as a time limit when it is in (0, 3600] and not below a nanosecond.
pub(crate) fn seconds_in_range(seconds: f64) -> Option<Duration> {
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= MAX_TIME_LIMIT.as_secs_f64()) {
        return None;
    }
    Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|limit| !limit.is_zero())
}

/// Validates a memory limit given in megabytes (`--memory-limit`, `memory_limit`) and returns
/// it in bytes.
pub fn memory_limit_from_megabytes(field: &str, megabytes: u64) -> Result<u64, LimitError> {
    if megabytes == 0 || megabytes > MAX_MEMORY_MEGABYTES {
        return Err(LimitError::MemoryLimit {
            field: field.to_owned(),
            found: megabytes.to_string(),
        });
    }
    Ok(megabytes * MEBIBYTE)
}

impl Limits {
    /// Klear: firejail `--rlimit-as=1024m --rlimit-nproc=32 --rlimit-nofile=32
    /// --rlimit-fsize=8m --timeout=35s`, reward manager cap 500 s per response.
    pub fn klear() -> Self {
        Self {
            time_per_test: Duration::from_secs(35),
            memory_bytes: 1024 * MEBIBYTE,
            file_size_bytes: Some(8 * MEBIBYTE),
            processes: Some(32),
            open_files: Some(32),
            output_bytes: 64 * MEBIBYTE,
            job_deadline: Duration::from_secs(500),
        }
    }

    /// Code-R1: firejail `--rlimit-as=4096m --rlimit-fsize=2m --timeout=30s`, nproc/nofile 32.
    pub fn code_r1() -> Self {
        Self {
            time_per_test: Duration::from_secs(30),
            memory_bytes: 4096 * MEBIBYTE,
            file_size_bytes: Some(2 * MEBIBYTE),
            processes: Some(32),
            open_files: Some(32),
            output_bytes: 64 * MEBIBYTE,
            job_deadline: Duration::from_secs(600),
        }
    }

    /// Current rllm (LiveCodeBench grader): 6 s per test; its global join of `(6 + 1) * n + 5`
    /// seconds is applied per job by the plan. The reference sets no memory limit; we set
    /// Klear's 1 GiB (the reward this dataset was trained with).
    pub fn rllm() -> Self {
        Self {
            time_per_test: Duration::from_secs(6),
            memory_bytes: 1024 * MEBIBYTE,
            file_size_bytes: None,
            processes: None,
            open_files: None,
            output_bytes: 64 * MEBIBYTE,
            job_deadline: Duration::from_secs(600),
        }
    }

    /// verl prime_code: 10 s per scored test (pass 2), 300 s per response. The reference sets
    /// no memory limit; we set Klear's 1 GiB.
    pub fn prime() -> Self {
        Self {
            time_per_test: Duration::from_secs(10),
            memory_bytes: 1024 * MEBIBYTE,
            file_size_bytes: None,
            processes: None,
            open_files: None,
            output_bytes: 64 * MEBIBYTE,
            job_deadline: Duration::from_secs(300),
        }
    }

    /// Ours: 10 s per test, 1 GiB address space, bounded output and files.
    pub fn judge() -> Self {
        Self {
            time_per_test: Duration::from_secs(10),
            memory_bytes: 1024 * MEBIBYTE,
            file_size_bytes: Some(16 * MEBIBYTE),
            processes: Some(64),
            open_files: Some(64),
            output_bytes: 16 * MEBIBYTE,
            job_deadline: Duration::from_secs(600),
        }
    }

    /// The stdout cap of a test whose expected output is `expected_bytes` long: the profile's
    /// cap or twice the expected output, whichever is larger, so a correct 50 MB answer is
    /// never cut at 16 MiB while a runaway printer is still stopped.
    pub fn output_cap(&self, expected_bytes: Option<usize>) -> u64 {
        let expected = expected_bytes.map_or(0, |bytes| u64::try_from(bytes).unwrap_or(u64::MAX));
        self.output_bytes.max(expected.saturating_mul(2))
    }

    /// One line for `--list-profiles`.
    pub fn describe(&self) -> String {
        format!(
            "{} s/test, {} MiB AS, output max({} MiB, 2 x expected), job {} s",
            self.time_per_test.as_secs_f64(),
            self.memory_bytes / MEBIBYTE,
            self.output_bytes / MEBIBYTE,
            self.job_deadline.as_secs()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn every_profile_has_a_memory_limit() {
        for limits in [
            Limits::klear(),
            Limits::code_r1(),
            Limits::rllm(),
            Limits::prime(),
            Limits::judge(),
        ] {
            assert!(limits.memory_bytes >= 1024 * MEBIBYTE, "{limits:?}");
            assert!(limits.describe().contains("MiB AS"));
        }
    }

    /// Issue 13: a correct 50 MB answer is not cut by the judge's 16 MiB cap.
    #[test]
    fn issue_13_output_cap_grows_with_the_expected_output() {
        let judge = Limits::judge();
        assert_eq!(judge.output_cap(None), 16 * MEBIBYTE);
        assert_eq!(judge.output_cap(Some(10)), 16 * MEBIBYTE);
        assert_eq!(judge.output_cap(Some(50_000_000)), 100_000_000);
        assert_eq!(judge.output_cap(Some(usize::MAX)), u64::MAX);
    }

    #[test]
    fn issue_12_limit_errors_name_the_field() {
        assert_eq!(
            time_limit_from_seconds("time_limit", f64::NAN)
                .unwrap_err()
                .to_string(),
            "time_limit must be a number of seconds in (0, 3600], found NaN"
        );
        assert_eq!(
            time_limit_from_seconds("--time-limit", -1.0)
                .unwrap_err()
                .to_string(),
            "--time-limit must be a number of seconds in (0, 3600], found -1"
        );
        assert!(
            time_limit_from_seconds("t", 1e300)
                .unwrap_err()
                .to_string()
                .ends_with("found 1e300")
        );
        assert_eq!(
            time_limit_from_seconds("x", 2.5).unwrap(),
            Duration::from_millis(2500)
        );
        assert_eq!(
            memory_limit_from_megabytes("memory_limit", u64::MAX)
                .unwrap_err()
                .to_string(),
            format!(
                "memory_limit must be a whole number of megabytes in [1, 1048576], found {}",
                u64::MAX
            )
        );
        assert_eq!(memory_limit_from_megabytes("m", 256).unwrap(), 256 << 20);
    }

    proptest! {
        #[test]
        fn issue_12_time_limits_are_usable_or_refused(seconds in any::<f64>()) {
            match time_limit_from_seconds("t", seconds) {
                Ok(limit) => {
                    prop_assert!(seconds > 0.0 && seconds <= 3600.0);
                    prop_assert!(!limit.is_zero());
                    prop_assert!(limit <= MAX_TIME_LIMIT);
                }
                Err(error) => {
                    // Below a nanosecond the duration would be zero: refused too.
                    prop_assert!(!(1e-9..=3600.0).contains(&seconds));
                    prop_assert!(error.to_string().starts_with("t must be"));
                }
            }
        }

        #[test]
        fn issue_12_memory_limits_never_overflow(megabytes in any::<u64>()) {
            match memory_limit_from_megabytes("m", megabytes) {
                Ok(bytes) => prop_assert_eq!(bytes / MEBIBYTE, megabytes),
                Err(_) => prop_assert!(megabytes == 0 || megabytes > MAX_MEMORY_MEGABYTES),
            }
        }

        #[test]
        fn output_cap_is_never_below_the_profile_cap_or_twice_the_expected(expected in any::<usize>()) {
            let cap = Limits::judge().output_cap(Some(expected));
            prop_assert!(cap >= 16 * MEBIBYTE);
            prop_assert!(cap >= (expected as u64).saturating_mul(2));
        }
    }
}
