//! The exec supervisor: a small warm process inside the sandbox that runs a job's compiled
//! program (or an interpreter such as `node`) once per test, each test in a child isolated the
//! way the Python runner isolates its test children (docs/languages.md, docs/sandbox.md).
//!
//! The sandbox starts it as a supervisor (uid 0 of its own user namespace with a few
//! capabilities). For every test it unshares a fresh PID namespace and forks; the child starts
//! a session of its own, locks SECBIT_NOROOT, takes the program uid where a second id is mapped,
//! empties its capability sets, puts fresh memory files on descriptors 0, 1 and 2, sets its
//! rlimits and execs the program. A fork of this process costs a fraction of a fork of the
//! Python runner (no interpreter heap to copy or fault in), which is what makes a compiled test
//! cheaper than a Python one.
//!
//! Built by `build.rs` with the toolchain's `rustc` alone (std, no crates, statically linked) and
//! embedded in `rlvr-languages`; it speaks `src/exec_protocol.rs`, included below. This file
//! holds the request loop; `sys` the raw calls, `spawn` the isolated child, `fresh_child` a
//! test in a child of its own, `warm` a warm program's tests, `work_directory` its renewal
//! between judge tests.

#![allow(unsafe_code)]

#[path = "../src/exec_protocol.rs"]
#[allow(dead_code)]
mod exec_protocol;

mod fresh_child;
mod spawn;
mod sys;
mod warm;
mod watch;
mod work_directory;

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, RawFd};

use exec_protocol::{Decoder, ProgramSpec, RunSpec, operation};
use fresh_child::run_test;
use spawn::{Program, probe_isolation};
use warm::{Warm, run_warm};
use work_directory::WorkDirectory;

/// The descriptors the supervisor keeps for itself start here (a test's targets stay below).
const HIGH_DESCRIPTOR: RawFd = 100;
/// At most this much of a test's standard error is reported.
const STDERR_CAP: u64 = 64 << 10;
/// Where programs run and what the judge empties after each test.
const WORK_DIRECTORY: &str = "/tmp";
/// Exit status of a child that failed before its program started.
const NOT_STARTED_STATUS: i32 = 127;

fn main() {
    // Without this a test child sharing the supervisor's uid (one mapped id) could open
    // /proc/<pid>/mem of the supervisor, were it visible.
    let _ = sys::set_dumpable(false);
    // Requests on 0 and replies on 1, moved out of the way; 0, 1 and 2 become /dev/null.
    let (Ok(requests), Ok(replies)) = (
        sys::duplicate_at_least(0, HIGH_DESCRIPTOR),
        sys::duplicate_at_least(1, HIGH_DESCRIPTOR),
    ) else {
        std::process::exit(2);
    };
    if let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        for target in 0..3 {
            let _ = sys::duplicate_onto(null.as_raw_fd(), target);
        }
    }
    // SAFETY: descriptors just duplicated, owned here alone.
    let (mut requests, mut replies) =
        unsafe { (File::from_raw_fd(requests), File::from_raw_fd(replies)) };
    let isolation = probe_isolation();
    let mut work = WorkDirectory::probe(isolation.capabilities);
    let mut program: Option<Program> = None;
    let mut warm: Option<Warm> = None;
    loop {
        let mut request = match Decoder::receive(&mut requests) {
            Ok(Some(request)) => request,
            _ => return,
        };
        let reply = match request.byte() {
            Ok(operation::LOAD) => {
                if let Some(previous) = warm.take() {
                    previous.end();
                }
                let loaded = ProgramSpec::decode(&mut request).and_then(Program::load);
                let problem = loaded.as_ref().err().map(ToString::to_string);
                program = loaded.ok();
                exec_protocol::encode_load_reply(problem.as_deref())
            }
            Ok(operation::RUN) => {
                let result = RunSpec::decode(&mut request).and_then(|spec| match &program {
                    Some(program) if program.persistent => {
                        run_warm(&isolation, &mut work, program, &spec, &mut warm)
                    }
                    Some(program) => run_test(&isolation, &mut work, program, &spec),
                    None => Err(io::Error::other("no program is loaded")),
                });
                match result {
                    Ok(report) => report.encode(),
                    // The supervisor itself failed: the client sees the connection end.
                    Err(_) => return,
                }
            }
            _ => return,
        };
        if reply.send(&mut replies).is_err() {
            return;
        }
    }
}
