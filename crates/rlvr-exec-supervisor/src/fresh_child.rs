//! One test in a child of its own: memory files for its streams, the wall clock and the
//! output cap watched through a pidfd, the report, and everything it left reaped.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};

use rlvr_exec_supervisor::{RunReport, RunSpec, ending};

use crate::spawn::{
    Isolation, Program, Spawned, high, memory_file, read_memory_file, spawn_isolated,
    startup_failure,
};
use crate::sys;
use crate::watch::{Watched, watch};
use crate::work_directory::WorkDirectory;
use crate::{STDERR_CAP, WORK_DIRECTORY};

/// Reaps every exited child; when tests share this PID namespace, kills what is left first.
fn reap_everything(nested: bool) {
    if !nested && sys::process_id() == 1 {
        sys::send_signal(-1, sys::SIGKILL);
    }
    loop {
        match sys::wait_for(-1, if nested { sys::WNOHANG } else { 0 }) {
            Ok(Some(_)) => continue,
            _ => return,
        }
    }
}

/// Runs one test of a program that is not warm, in a fresh isolated child.
pub(crate) fn run_test(
    isolation: &Isolation,
    work: &mut WorkDirectory,
    program: &Program,
    spec: &RunSpec,
) -> io::Result<RunReport> {
    let stdin = File::from(memory_file(c"stdin", &spec.stdin, false)?);
    let mut stdout = File::from(memory_file(c"stdout", b"", false)?);
    let mut stderr = File::from(memory_file(c"stderr", b"", false)?);
    let streams = [stdin.as_fd(), stdout.as_fd(), stderr.as_fd()];
    // The test's own files (a checker's input, output and answer) follow the load's.
    let test_files = spec
        .files
        .iter()
        .map(|contents| memory_file(c"file", contents, true))
        .collect::<io::Result<Vec<_>>>()?;
    let extra: Vec<BorrowedFd<'_>> = test_files.iter().map(AsFd::as_fd).collect();
    let nested = isolation.pid_namespace.is_some();
    let Spawned {
        pid: child,
        started,
        failures,
    } = spawn_isolated(isolation, program, streams, &extra, spec)?;
    drop(extra);
    drop(test_files);
    let pidfd = high(sys::pidfd_open(child)?)?;
    let deadline = started + std::time::Duration::from_millis(spec.wall_ms.max(1));
    let watched = watch(deadline, &stdout, spec.output_bytes, |milliseconds| {
        sys::wait_readable(pidfd.as_fd(), milliseconds)
    })?;
    let timed_out = watched == Watched::TimedOut;
    let output_capped = watched == Watched::OutputCapped;
    if timed_out || output_capped {
        // The child is init of its PID namespace: killing it kills everything it started.
        sys::send_signal(child, sys::SIGKILL);
    }
    let (_, waited) =
        sys::wait_for(child, 0)?.ok_or_else(|| io::Error::other("the test child vanished"))?;
    let status = waited.status;
    let wall = started.elapsed();
    reap_everything(nested);
    let mut report = RunReport {
        wall_us: u64::try_from(wall.as_micros()).unwrap_or(u64::MAX),
        cpu_us: waited.cpu_us,
        max_resident_kib: waited.max_resident_kib,
        ..RunReport::default()
    };
    let exited = status & 0x7f == 0;
    let signal = status & 0x7f;
    if let Some(message) = startup_failure(failures)? {
        report.ending = ending::NOT_STARTED;
        report.message = message;
    } else if exited {
        report.ending = ending::EXITED;
        report.exit_code = i64::from((status >> 8) & 0xff);
    } else {
        report.ending = ending::SIGNALED;
        report.signal = i64::from(signal);
    }
    // As init of its PID namespace the child does not die of the kernel's SIGXCPU: CPU time
    // at the limit ends it with the hard limit's SIGKILL, a timeout as much as the wall clock.
    let cpu_exceeded = spec.cpu_seconds > 0
        && report.cpu_us >= spec.cpu_seconds * 1_000_000
        && (signal == sys::SIGKILL || signal == sys::SIGXCPU);
    if timed_out || (report.ending == ending::SIGNALED && cpu_exceeded && !output_capped) {
        report.ending = ending::TIMED_OUT;
    }
    let cap = if spec.output_bytes > 0 {
        spec.output_bytes
    } else {
        u64::MAX
    };
    (report.stdout, report.stdout_truncated) = read_memory_file(&mut stdout, cap)?;
    report.stderr = read_memory_file(&mut stderr, STDERR_CAP)?.0;
    if spec.empty_work_directory
        && work.touched()
        && let Err(error) = work.renew()
    {
        report.message = format!("cannot empty {WORK_DIRECTORY}: {error}").into_bytes();
    }
    Ok(report)
}
