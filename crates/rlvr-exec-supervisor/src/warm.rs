//! A warm program's tests (the JVM's harness): one process serves test after test through its
//! control and result pipes, and is replaced whenever anything of a test could outlive it.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::fd::{AsFd, OwnedFd};
use std::time::Instant;

use rlvr_exec_supervisor::{RunReport, RunSpec, ending};

use crate::spawn::{
    Isolation, Program, Spawned, high, memory_file, read_memory_file, spawn_isolated,
    startup_failure,
};
use crate::sys;
use crate::watch::{Watched, watch};
use crate::work_directory::WorkDirectory;
use crate::{STDERR_CAP, WORK_DIRECTORY};

/// A warm program's process (the JVM's harness) between tests, with its reused memory files
/// and its pipes.
pub(crate) struct Warm {
    pid: i32,
    pidfd: OwnedFd,
    control: File,
    results: File,
    stdin: File,
    stdout: File,
    stderr: File,
    /// Its thread count once ready: more after a test means something the test started is
    /// still running (a thread the harness cannot see).
    threads: u64,
    /// Its PID namespace (opened as the program uid), to reset its thread ids per test.
    namespace: Option<OwnedFd>,
    /// The first free id in the sandbox's namespace before its first test.
    first_free_id: Option<i32>,
}

impl Warm {
    /// Kills the process and reaps it (a new program was loaded).
    pub(crate) fn end(self) {
        sys::send_signal(self.pid, sys::SIGKILL);
        let _ = sys::wait_for(self.pid, 0);
    }
}

/// How long a warm program may take to become ready (a JVM on a loaded machine).
const WARM_START: std::time::Duration = std::time::Duration::from_secs(60);

/// `read` done as the program uid: `/proc` is mounted `hidepid=2`, so the supervisor (uid 0,
/// without `CAP_SYS_PTRACE`) does not see a program that runs as the second id. The effective
/// ids only, for the time of one read of `/proc`: the real and saved ids stay 0, so no
/// program can signal the supervisor meanwhile, and capabilities come back with uid 0.
fn as_program<T>(isolation: &Isolation, read: impl FnOnce() -> T) -> T {
    if isolation.program_id == 0 || !sys::set_effective_ids(isolation.program_id) {
        return read();
    }
    let value = read();
    if !sys::set_effective_ids(0) {
        // Without its capabilities the supervisor cannot isolate another test: stop.
        std::process::exit(3);
    }
    value
}

/// A field of `/proc/<pid>/status` (`Threads`, `VmHWM`), as a number.
fn status_field(pid: i32, name: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status.lines().find_map(|line| {
                line.strip_prefix(name)
                    .and_then(|rest| rest.strip_prefix(':'))
                    .and_then(|value| value.split_whitespace().next())
                    .and_then(|value| value.parse().ok())
            })
        })
        .unwrap_or(0)
}

/// CPU time of a live process (user + system), in microseconds, from `/proc/<pid>/stat`.
fn process_cpu_us(pid: i32) -> u64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0;
    };
    // Fields after the command name (which may hold spaces): state is field 3.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&index| {
            fields
                .get(index)
                .and_then(|value| value.parse::<u64>().ok())
        })
        .sum();
    // USER_HZ is 100 on Linux.
    ticks * 10_000
}

/// Whether any process of the warm program's PID namespace besides itself exists (a child it
/// started, even exited and not yet reaped).
fn has_children(pid: i32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|task| {
        std::fs::read_to_string(task.path().join("children"))
            .is_ok_and(|children| !children.trim().is_empty())
    })
}

/// Starts the warm program and waits for its `R`: `Ok(Err(report))` when it ended or failed
/// before being ready (that report is the test's).
fn start_warm(
    isolation: &Isolation,
    program: &Program,
    spec: &RunSpec,
) -> io::Result<Result<Warm, RunReport>> {
    let stdin = File::from(memory_file(c"stdin", b"", false)?);
    let stdout = File::from(memory_file(c"stdout", b"", false)?);
    let stderr = File::from(memory_file(c"stderr", b"", false)?);
    let (control_read, control_write) = sys::pipe()?;
    let (control_read, control) = (high(control_read)?, File::from(high(control_write)?));
    let (results_read, results_write) = sys::pipe()?;
    let (results, results_write) = (File::from(high(results_read)?), high(results_write)?);
    // The program opens its pipes by path (`/proc/self/fd/5`), which checks the pipe's own
    // mode: let the program uid open them (only its processes can name them).
    for fd in [&control_read, &results_write] {
        sys::open_to_everyone(fd.as_fd())?;
    }
    // No CPU limit on the process: each test's time is its wall clock (docs/languages.md).
    let limits = RunSpec {
        cpu_seconds: 0,
        ..spec.clone()
    };
    let Spawned {
        pid,
        started,
        failures,
    } = spawn_isolated(
        isolation,
        program,
        [stdin.as_fd(), stdout.as_fd(), stderr.as_fd()],
        &[control_read.as_fd(), results_write.as_fd()],
        &limits,
    )?;
    drop((control_read, results_write));
    let pidfd = high(sys::pidfd_open(pid)?)?;
    let mut warm = Warm {
        pid,
        pidfd,
        control,
        results,
        stdin,
        stdout,
        stderr,
        threads: 0,
        namespace: None,
        first_free_id: None,
    };
    if let Some(message) = startup_failure(failures)? {
        let _ = sys::wait_for(pid, 0);
        return Ok(Err(RunReport {
            ending: ending::NOT_STARTED,
            message,
            ..RunReport::default()
        }));
    }
    let left = (started + WARM_START).saturating_duration_since(Instant::now());
    let timeout = i32::try_from(left.as_millis().max(1)).unwrap_or(i32::MAX);
    if sys::wait_readable(warm.results.as_fd(), timeout)? {
        let mut ready = [0u8; 1];
        if warm.results.read(&mut ready)? == 1 && ready[0] == b'R' {
            warm.threads = as_program(isolation, || status_field(pid, "Threads"));
            warm.namespace = as_program(isolation, || {
                File::open(format!("/proc/{pid}/ns/pid"))
                    .ok()
                    .and_then(|file| high(OwnedFd::from(file)).ok())
            });
            return Ok(Ok(warm));
        }
    }
    // It ended, or never became ready: what it printed is the test's failure.
    sys::send_signal(pid, sys::SIGKILL);
    finish_warm(warm, started, spec, false, false).map(Err)
}

/// Reaps a warm program that ended (or is being killed) and reports it as the test's end.
fn finish_warm(
    mut warm: Warm,
    started: Instant,
    spec: &RunSpec,
    timed_out: bool,
    output_capped: bool,
) -> io::Result<RunReport> {
    let (_, waited) =
        sys::wait_for(warm.pid, 0)?.ok_or_else(|| io::Error::other("the warm program vanished"))?;
    let status = waited.status;
    let mut report = RunReport {
        wall_us: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
        max_resident_kib: waited.max_resident_kib,
        ..RunReport::default()
    };
    if timed_out {
        report.ending = ending::TIMED_OUT;
        report.signal = i64::from(sys::SIGKILL);
    } else if status & 0x7f == 0 {
        report.ending = ending::EXITED;
        report.exit_code = i64::from((status >> 8) & 0xff);
    } else {
        report.ending = ending::SIGNALED;
        report.signal = i64::from(status & 0x7f);
    }
    let cap = if spec.output_bytes > 0 {
        spec.output_bytes
    } else {
        u64::MAX
    };
    (report.stdout, report.stdout_truncated) = read_memory_file(&mut warm.stdout, cap)?;
    report.stdout_truncated |= output_capped;
    report.stderr = read_memory_file(&mut warm.stderr, STDERR_CAP)?.0;
    Ok(report)
}

/// What the harness's reply byte says about the test that just ran.
mod reply_flags {
    /// Something the test started is still running.
    pub(super) const LEFTOVER: u8 = 1;
    /// The test changed JDK-global state a later test could see (a system property, a
    /// closed standard descriptor): the process is replaced.
    pub(super) const TAINTED: u8 = 2;
    /// The test did something a fresh process would finish only at its exit (a shutdown
    /// hook): its verdict must be a fresh process's, so it runs again as a process's last.
    pub(super) const RUN_AGAIN_LAST: u8 = 4;
}

/// The control bytes: run one test, or run one test and end the process as a fresh one ends.
const RUN: u8 = b'r';
const RUN_LAST: u8 = b'l';

/// One test of a warm program, then the work directory as a fresh tmpfs for the next (a
/// process that may hold anything of the old one, its working directory at least, is
/// replaced with it).
pub(crate) fn run_warm(
    isolation: &Isolation,
    work: &mut WorkDirectory,
    program: &Program,
    spec: &RunSpec,
    slot: &mut Option<Warm>,
) -> io::Result<RunReport> {
    let mut report = run_warm_test(isolation, work, program, spec, slot)?;
    if spec.empty_work_directory && work.touched() {
        if let Some(warm) = slot.take() {
            warm.end();
        }
        if let Err(error) = work.renew() {
            report.message = format!("cannot renew {WORK_DIRECTORY}: {error}").into_bytes();
        }
    }
    Ok(report)
}

/// A process kept from the last test, unless it ended since (a thread of its last test
/// called `System.exit` after the answer), else a new one ready for a test.
fn ready_process(
    isolation: &Isolation,
    work: &mut WorkDirectory,
    program: &Program,
    spec: &RunSpec,
    slot: &mut Option<Warm>,
) -> io::Result<Result<Warm, RunReport>> {
    let kept = slot.take().and_then(|warm| {
        if sys::wait_readable(warm.pidfd.as_fd(), 0).unwrap_or(true) {
            warm.end();
            None
        } else {
            Some(warm)
        }
    });
    if let Some(warm) = kept {
        return Ok(Ok(warm));
    }
    let started = start_warm(isolation, program, spec)?;
    // Only the harness ran so far: whatever its start did to the work directory is the same
    // for every process, and no test's.
    work.settle();
    Ok(started)
}

fn run_warm_test(
    isolation: &Isolation,
    work: &mut WorkDirectory,
    program: &Program,
    spec: &RunSpec,
    slot: &mut Option<Warm>,
) -> io::Result<RunReport> {
    let warm = match ready_process(isolation, work, program, spec, slot)? {
        Ok(warm) => warm,
        Err(report) => return Ok(report),
    };
    match run_in(isolation, warm, spec, RUN)? {
        Ran::Kept(report, warm) => {
            *slot = Some(warm);
            Ok(report)
        }
        Ran::Ended(report) => Ok(report),
        Ran::AgainLast(warm) => {
            // What this test did shows only at a fresh process's exit: it runs again in a
            // new process, as that process's last test, and that run is its verdict.
            warm.end();
            let warm = match start_warm(isolation, program, spec)? {
                Ok(warm) => warm,
                Err(report) => return Ok(report),
            };
            work.settle();
            match run_in(isolation, warm, spec, RUN_LAST)? {
                Ran::Kept(report, warm) => {
                    // The harness answered instead of ending: it is not kept all the same.
                    warm.end();
                    Ok(report)
                }
                Ran::Ended(report) => Ok(report),
                Ran::AgainLast(warm) => {
                    warm.end();
                    Err(io::Error::other(
                        "the harness did not end after its last test",
                    ))
                }
            }
        }
    }
}

/// How one test in a warm process went.
enum Ran {
    /// It answered and the process may serve the next test.
    Kept(RunReport, Warm),
    /// The process ended (its end is the test's) or was replaced.
    Ended(RunReport),
    /// It must run again as a fresh process's last test.
    AgainLast(Warm),
}

/// One test of a warm program: refill its memory files, ask it to run (`control`), and wait
/// for its answer, its end, the wall clock or the output cap. The process is not kept when
/// the test timed out, filled its output, ended the process (`System.exit`, or the end of a
/// last test), or left a thread, a process or JDK-global state behind.
fn run_in(isolation: &Isolation, mut warm: Warm, spec: &RunSpec, control: u8) -> io::Result<Ran> {
    use std::io::Write;
    use std::os::unix::fs::FileExt;
    // The memory files are shared with the program (one open file each): resetting the
    // offset here resets its offset.
    warm.stdin.set_len(0)?;
    warm.stdin.write_all_at(&spec.stdin, 0)?;
    warm.stdin.seek(SeekFrom::Start(0))?;
    for file in [&mut warm.stdout, &mut warm.stderr] {
        file.set_len(0)?;
        file.seek(SeekFrom::Start(0))?;
    }
    let cpu_before = as_program(isolation, || process_cpu_us(warm.pid));
    // The test's threads get the same thread ids whatever earlier tests started.
    isolation.reset_thread_ids(warm.namespace.as_ref(), &mut warm.first_free_id);
    let started = Instant::now();
    if warm.control.write_all(&[control]).is_err() {
        // It ended just now: its end is this test's.
        sys::send_signal(warm.pid, sys::SIGKILL);
        return finish_warm(warm, started, spec, false, false).map(Ran::Ended);
    }
    let deadline = started + std::time::Duration::from_millis(spec.wall_ms.max(1));
    let mut answer = None;
    let watched = watch(deadline, &warm.stdout, spec.output_bytes, |milliseconds| {
        if sys::wait_readable(warm.results.as_fd(), milliseconds)? {
            let mut reply = [0u8; 5];
            // Ended mid-answer, it has none: its exit status is the test's.
            answer = (&warm.results).read_exact(&mut reply).ok().map(|()| reply);
            return Ok(true);
        }
        sys::wait_readable(warm.pidfd.as_fd(), 0)
    })?;
    let timed_out = watched == Watched::TimedOut;
    let output_capped = watched == Watched::OutputCapped;
    let Some(reply) = answer else {
        sys::send_signal(warm.pid, sys::SIGKILL);
        return finish_warm(warm, started, spec, timed_out, output_capped).map(Ran::Ended);
    };
    let wall = started.elapsed();
    let status = i32::from_le_bytes([reply[0], reply[1], reply[2], reply[3]]);
    let flags = reply[4];
    if flags & reply_flags::RUN_AGAIN_LAST != 0 && control == RUN {
        return Ok(Ran::AgainLast(warm));
    }
    let (children, threads, cpu, resident) = as_program(isolation, || {
        (
            has_children(warm.pid),
            status_field(warm.pid, "Threads"),
            process_cpu_us(warm.pid),
            status_field(warm.pid, "VmHWM"),
        )
    });
    // What the harness says, and what the kernel says (a thread the harness cannot see, a
    // process): either way the process is replaced. A `/proc` that cannot be read (0 threads)
    // replaces it too.
    let replace = flags & (reply_flags::LEFTOVER | reply_flags::TAINTED) != 0
        || control == RUN_LAST
        || children
        || threads == 0
        || threads > warm.threads + LEFTOVER_THREADS;
    let mut report = RunReport {
        ending: ending::EXITED,
        exit_code: i64::from(status & 0xff),
        wall_us: u64::try_from(wall.as_micros()).unwrap_or(u64::MAX),
        cpu_us: cpu.saturating_sub(cpu_before),
        max_resident_kib: resident,
        ..RunReport::default()
    };
    let cap = if spec.output_bytes > 0 {
        spec.output_bytes
    } else {
        u64::MAX
    };
    (report.stdout, report.stdout_truncated) = read_memory_file(&mut warm.stdout, cap)?;
    report.stderr = read_memory_file(&mut warm.stderr, STDERR_CAP)?.0;
    if replace {
        // Nothing of this test may run on into the next: a new process for it.
        warm.end();
        return Ok(Ran::Ended(report));
    }
    Ok(Ran::Kept(report, warm))
}

/// Threads a warm JVM may add by itself between tests (its JIT compiler threads come and go).
const LEFTOVER_THREADS: u64 = 8;
