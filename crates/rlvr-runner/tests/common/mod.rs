//! What the runner's integration tests share: a runner started on a real interpreter, and the
//! limits its tests run under.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::process::{Child, Command, Stdio};

use command_fds::{CommandFdExt, FdMapping};
use rlvr_runner::{Runner, TestLimits};
use serde_json::Value;

/// The interpreter the tests run: `RLVR_PYTHON`, else `python3` from the path.
pub fn python() -> String {
    std::env::var("RLVR_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// A runner on a fresh interpreter (no sandbox: isolation is tested in the sandbox's crate);
/// the child is returned so that it lives as long as the test needs it.
pub fn start() -> (Child, Runner) {
    let mut child = Command::new(python())
        .args(rlvr_runner::interpreter_arguments())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("python starts");
    let requests = OwnedFd::from(child.stdin.take().unwrap());
    let responses = OwnedFd::from(child.stdout.take().unwrap());
    (child, Runner::new(requests, responses))
}

pub const LIMITS: TestLimits = TestLimits {
    wall_ms: 5_000,
    cpu_seconds: 5,
    output_bytes: 1 << 20,
    address_space_bytes: 0,
};

/// The referee's end of the live pipes a live test's child talks on (runner/live.py): the test
/// plays the referee, message by message.
pub struct LiveEnd {
    to_child: File,
    from_child: File,
}

impl LiveEnd {
    /// Sends one message to the child.
    pub fn send(&mut self, message: &Value) {
        let body = serde_json::to_vec(message).unwrap();
        let mut framed = (body.len() as u32).to_le_bytes().to_vec();
        framed.extend_from_slice(&body);
        self.to_child.write_all(&framed).unwrap();
    }

    /// Sends raw bytes, framed or not.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.to_child.write_all(bytes).unwrap();
    }

    /// The child's next message.
    pub fn receive(&mut self) -> Value {
        let mut length = [0u8; 4];
        self.from_child.read_exact(&mut length).unwrap();
        let mut body = vec![0u8; u32::from_le_bytes(length) as usize];
        self.from_child.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    /// A request whose answer is read back (`id` added).
    pub fn ask(&mut self, mut message: Value, id: u64) -> Value {
        message["id"] = id.into();
        self.send(&message);
        let reply = self.receive();
        assert_eq!(reply["id"], id, "{reply}");
        reply
    }
}

/// A runner given the live pipes (descriptors 3 and 4, as the engine passes them), and the
/// test's end of them.
pub fn start_live() -> (Child, Runner, LiveEnd) {
    let (child_reads, to_child) = std::io::pipe().unwrap();
    let (from_child, child_writes) = std::io::pipe().unwrap();
    let mut command = Command::new(python());
    command
        .args(rlvr_runner::interpreter_arguments())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .fd_mappings(vec![
            FdMapping {
                parent_fd: OwnedFd::from(child_reads),
                child_fd: 3,
            },
            FdMapping {
                parent_fd: OwnedFd::from(child_writes),
                child_fd: 4,
            },
        ])
        .unwrap();
    let mut child = command.spawn().expect("python starts");
    let requests = OwnedFd::from(child.stdin.take().unwrap());
    let responses = OwnedFd::from(child.stdout.take().unwrap());
    let live = LiveEnd {
        to_child: File::from(OwnedFd::from(to_child)),
        from_child: File::from(OwnedFd::from(from_child)),
    };
    (child, Runner::new(requests, responses), live)
}
