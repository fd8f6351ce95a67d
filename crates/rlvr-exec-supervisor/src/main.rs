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
//! A workspace binary: `rlvr-languages`'s build script builds it statically (std, rustix and
//! libc; the `exec-supervisor` profile) and embeds it, so it runs inside the sandbox's minimal
//! root whatever the host's libraries. It speaks the protocol of this crate's library
//! (`src/lib.rs`, frames of `rlvr-frame`). This file holds the request loop; `sys` the system
//! calls (the only `unsafe`), `spawn` the isolated child, `fresh_child` a test in a child of
//! its own, `warm` a warm program's tests, `work_directory` its renewal between judge tests.

// `unsafe` is confined to `sys`, and every block there says why it is sound.
#![deny(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

mod fresh_child;
mod spawn;
#[expect(
    unsafe_code,
    reason = "the system calls rustix does not offer, each block with its SAFETY line"
)]
mod sys;
mod warm;
mod watch;
mod work_directory;

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::RawFd;

use fresh_child::run_test;
use rlvr_exec_supervisor::{LoadReply, Request};
use spawn::{Program, probe_isolation};
use warm::{Warm, run_warm};
use work_directory::WorkDirectory;

/// The descriptors the supervisor keeps for itself start here (a test's targets stay below).
const HIGH_DESCRIPTOR: RawFd = 100;
/// At most this much of a test's standard error is reported.
const STDERR_CAP: u64 = 64 << 10;
/// Where programs run and what the judge empties after each test.
const WORK_DIRECTORY: &str = "/tmp";

fn main() {
    // Without this a test child sharing the supervisor's uid (one mapped id) could open
    // /proc/<pid>/mem of the supervisor, were it visible.
    let _ = sys::set_undumpable();
    // Requests on 0 and replies on 1, moved out of the way; 0, 1 and 2 become /dev/null.
    let Ok((requests, replies)) = sys::adopt_standard_descriptors(HIGH_DESCRIPTOR) else {
        std::process::exit(2);
    };
    let (mut requests, mut replies) = (File::from(requests), File::from(replies));
    let isolation = probe_isolation();
    let mut work = WorkDirectory::probe(isolation.capabilities);
    let mut program: Option<Program> = None;
    let mut warm: Option<Warm> = None;
    loop {
        let request = match Request::receive(&mut requests) {
            Ok(Some(request)) => request,
            _ => return,
        };
        let reply = match request {
            Request::Load(spec) => {
                if let Some(previous) = warm.take() {
                    previous.end();
                }
                let loaded = Program::load(spec);
                let problem = loaded.as_ref().err().map(ToString::to_string);
                program = loaded.ok();
                LoadReply { problem }.encode()
            }
            Request::Run(spec) => {
                let result = match &program {
                    Some(program) if program.persistent => {
                        run_warm(&isolation, &mut work, program, &spec, &mut warm)
                    }
                    Some(program) => run_test(&isolation, &mut work, program, &spec),
                    None => Err(io::Error::other("no program is loaded")),
                };
                match result {
                    Ok(report) => report.encode(),
                    // The supervisor itself failed: the client sees the connection end.
                    Err(_) => return,
                }
            }
            Request::Exit => return,
        };
        if replies.write_all(&reply).is_err() {
            return;
        }
    }
}
