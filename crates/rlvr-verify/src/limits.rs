//! Per-profile execution limits, the defaults the references use; every one can be overridden
//! from the command line.

use std::time::Duration;

/// Resource limits for one job's test programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Limits {
    /// Wall-clock limit for one test program.
    pub time_per_test: Duration,
    /// Address-space limit (`RLIMIT_AS`) in bytes; `None` for the in-process references
    /// that set none.
    pub memory_bytes: Option<u64>,
    /// Largest file the program may write (`RLIMIT_FSIZE`).
    pub file_size_bytes: Option<u64>,
    /// Processes the program may have (`RLIMIT_NPROC`).
    pub processes: Option<u32>,
    /// Open file descriptors (`RLIMIT_NOFILE`).
    pub open_files: Option<u32>,
    /// Captured stdout beyond this many bytes is an `output_limit` verdict.
    pub output_bytes: u64,
    /// Wall clock for the whole job; tests not finished by then get `timeout` verdicts.
    pub job_deadline: Duration,
}

const MEBIBYTE: u64 = 1024 * 1024;

impl Limits {
    /// Klear: firejail `--rlimit-as=1024m --rlimit-nproc=32 --rlimit-nofile=32
    /// --rlimit-fsize=8m --timeout=35s`, reward manager cap 500 s per response.
    pub fn klear() -> Self {
        Self {
            time_per_test: Duration::from_secs(35),
            memory_bytes: Some(1024 * MEBIBYTE),
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
            memory_bytes: Some(4096 * MEBIBYTE),
            file_size_bytes: Some(2 * MEBIBYTE),
            processes: Some(32),
            open_files: Some(32),
            output_bytes: 64 * MEBIBYTE,
            job_deadline: Duration::from_secs(600),
        }
    }

    /// Current rllm (LiveCodeBench grader): 6 s per test, no memory limit; its global join of
    /// `(6 + 1) * n + 5` seconds is applied per job by the plan.
    pub fn rllm() -> Self {
        Self {
            time_per_test: Duration::from_secs(6),
            memory_bytes: None,
            file_size_bytes: None,
            processes: None,
            open_files: None,
            output_bytes: 64 * MEBIBYTE,
            job_deadline: Duration::from_secs(600),
        }
    }

    /// verl prime_code: 10 s per scored test (pass 2), no memory limit, 300 s per response.
    pub fn prime() -> Self {
        Self {
            time_per_test: Duration::from_secs(10),
            memory_bytes: None,
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
            memory_bytes: Some(1024 * MEBIBYTE),
            file_size_bytes: Some(16 * MEBIBYTE),
            processes: Some(64),
            open_files: Some(64),
            output_bytes: 16 * MEBIBYTE,
            job_deadline: Duration::from_secs(600),
        }
    }

    /// One line for `--list-profiles`.
    pub fn describe(&self) -> String {
        let memory = self
            .memory_bytes
            .map_or("no memory limit".to_owned(), |bytes| {
                format!("{} MiB AS", bytes / MEBIBYTE)
            });
        format!(
            "{} s/test, {memory}, job {} s",
            self.time_per_test.as_secs_f64(),
            self.job_deadline.as_secs()
        )
    }
}
