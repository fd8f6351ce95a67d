//! The exec supervisor's protocol, spoken by the supervisor program (`src/main.rs`) and its
//! client (`rlvr_languages::Supervisor`): requests on the supervisor's stdin, replies on its
//! stdout, each one frame in the format of `rlvr-frame` (a length, a JSON header, the payloads
//! it names; docs/runner.md, "The frame format").
//!
//! | request header | payloads | reply header | payloads |
//! |---|---|---|---|
//! | `{"op": "load", image, path, arguments, environment, files, persistent}` | the image, the path, each argument, each variable, each file | `{"problem"}` (null once loaded) | none |
//! | `{"op": "run", stdin, wall_ms, cpu_s, output_bytes, address_space_bytes, data_bytes, empty_work_directory, files}` | standard input, each file | `{"ending", "exit_code", "signal", "wall_us", "cpu_us", "max_resident_kib", "stdout_truncated", "stdout", "stderr", "message"}` | standard output, standard error, the message |
//! | `{"op": "exit"}` | none | none: the supervisor exits | |
//!
//! A header names each payload by its length (a list of lengths for a list of byte strings).
//! Byte strings (arguments, the environment, a path) cross as payloads, not JSON text: they
//! need not be UTF-8.

#![forbid(unsafe_code)]

use std::io::{self, Read};

use serde::{Deserialize, Serialize};

/// Largest header either side accepts (headers hold lengths and limits only).
pub const MAX_HEADER_BYTES: usize = 1 << 20;
/// Largest sum of one frame's payloads either side accepts (a program image or a test's
/// output fits well below it).
pub const MAX_PAYLOAD_BYTES: usize = 1 << 30;

/// How a test ended, in a run reply.
pub mod ending {
    /// The program exited (with the reply's exit code).
    pub const EXITED: u8 = 0;
    /// A signal ended it.
    pub const SIGNALED: u8 = 1;
    /// It ran past its wall-clock limit and was killed.
    pub const TIMED_OUT: u8 = 2;
    /// The program never started: the isolation or the exec failed (the reply's message says
    /// which step; the solution never ran).
    pub const NOT_STARTED: u8 = 3;
}

fn invalid(message: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.into())
}

/// The next header from `input`, parsed: `Ok(None)` at a clean end of input.
fn receive_header<T: serde::de::DeserializeOwned>(input: &mut impl Read) -> io::Result<Option<T>> {
    let Some(header) = rlvr_frame::read_header(input, MAX_HEADER_BYTES)? else {
        return Ok(None);
    };
    Ok(Some(rlvr_frame::parse(&header)?))
}

/// The payloads of lengths `lengths`, refused before any is read when together they pass
/// [`MAX_PAYLOAD_BYTES`].
fn receive_payloads(input: &mut impl Read, lengths: &[usize]) -> io::Result<Vec<Vec<u8>>> {
    lengths
        .iter()
        .try_fold(0usize, |sum, &length| sum.checked_add(length))
        .filter(|&total| total <= MAX_PAYLOAD_BYTES)
        .ok_or_else(|| invalid("payloads over the limit"))?;
    lengths
        .iter()
        .map(|&length| rlvr_frame::read_payload(input, length).map_err(io::Error::from))
        .collect()
}

fn lengths(items: &[Vec<u8>]) -> Vec<usize> {
    items.iter().map(Vec::len).collect()
}

/// A request's header: the operation, its limits, and the length of each payload.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
enum RequestHeader {
    Load {
        image: usize,
        path: usize,
        arguments: Vec<usize>,
        environment: Vec<usize>,
        files: Vec<usize>,
        persistent: bool,
    },
    Run {
        stdin: usize,
        wall_ms: u64,
        cpu_s: u64,
        output_bytes: u64,
        address_space_bytes: u64,
        data_bytes: u64,
        empty_work_directory: bool,
        files: Vec<usize>,
    },
    Exit,
}

/// A request, as the supervisor reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Load the job's program: how to start it, once per job.
    Load(ProgramSpec),
    /// Run one test: fork an isolated child, exec the program, report.
    Run(RunSpec),
    /// End the supervisor.
    Exit,
}

impl Request {
    /// The request as one frame.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Self::Load(program) => program.encode(),
            Self::Run(test) => test.encode(),
            Self::Exit => rlvr_frame::encode(&RequestHeader::Exit, &[]),
        }
    }

    /// Reads one request; `Ok(None)` at a clean end of input.
    pub fn receive(input: &mut impl Read) -> io::Result<Option<Self>> {
        let Some(header) = receive_header::<RequestHeader>(input)? else {
            return Ok(None);
        };
        Ok(Some(match header {
            RequestHeader::Load {
                image,
                path,
                arguments,
                environment,
                files,
                persistent,
            } => {
                let all: Vec<usize> = [image, path]
                    .into_iter()
                    .chain(arguments.iter().copied())
                    .chain(environment.iter().copied())
                    .chain(files.iter().copied())
                    .collect();
                let mut payloads = receive_payloads(input, &all)?.into_iter();
                let mut take = |count: usize| payloads.by_ref().take(count).collect::<Vec<_>>();
                let image = take(1).pop().unwrap_or_default();
                let path = take(1).pop().unwrap_or_default();
                Self::Load(ProgramSpec {
                    image,
                    path,
                    arguments: take(arguments.len()),
                    environment: take(environment.len()),
                    files: take(files.len()),
                    persistent,
                })
            }
            RequestHeader::Run {
                stdin,
                wall_ms,
                cpu_s,
                output_bytes,
                address_space_bytes,
                data_bytes,
                empty_work_directory,
                files,
            } => {
                let all: Vec<usize> = std::iter::once(stdin).chain(files).collect();
                let mut payloads = receive_payloads(input, &all)?.into_iter();
                let stdin = payloads.next().unwrap_or_default();
                Self::Run(RunSpec {
                    stdin,
                    wall_ms,
                    cpu_seconds: cpu_s,
                    output_bytes,
                    address_space_bytes,
                    data_bytes,
                    empty_work_directory,
                    files: payloads.collect(),
                })
            }
            RequestHeader::Exit => Self::Exit,
        }))
    }
}

impl ProgramSpec {
    /// The load request for this program, as one frame.
    pub fn encode(&self) -> Vec<u8> {
        let header = RequestHeader::Load {
            image: self.image.len(),
            path: self.path.len(),
            arguments: lengths(&self.arguments),
            environment: lengths(&self.environment),
            files: lengths(&self.files),
            persistent: self.persistent,
        };
        let payloads: Vec<&[u8]> = [&self.image[..], &self.path[..]]
            .into_iter()
            .chain(self.arguments.iter().map(Vec::as_slice))
            .chain(self.environment.iter().map(Vec::as_slice))
            .chain(self.files.iter().map(Vec::as_slice))
            .collect();
        rlvr_frame::encode(&header, &payloads)
    }
}

impl RunSpec {
    /// The run request for this test, as one frame.
    pub fn encode(&self) -> Vec<u8> {
        let header = RequestHeader::Run {
            stdin: self.stdin.len(),
            wall_ms: self.wall_ms,
            cpu_s: self.cpu_seconds,
            output_bytes: self.output_bytes,
            address_space_bytes: self.address_space_bytes,
            data_bytes: self.data_bytes,
            empty_work_directory: self.empty_work_directory,
            files: lengths(&self.files),
        };
        let payloads: Vec<&[u8]> = std::iter::once(&self.stdin[..])
            .chain(self.files.iter().map(Vec::as_slice))
            .collect();
        rlvr_frame::encode(&header, &payloads)
    }
}

/// The reply to a load: `problem` is why it failed, `None` once the program is loaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadReply {
    pub problem: Option<String>,
}

impl LoadReply {
    /// The reply as one frame.
    pub fn encode(&self) -> Vec<u8> {
        rlvr_frame::encode(self, &[])
    }

    /// Reads one reply; `Ok(None)` at a clean end of input.
    pub fn receive(input: &mut impl Read) -> io::Result<Option<Self>> {
        receive_header(input)
    }
}

/// A run reply's header: the report's numbers and the length of each payload.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunReportHeader {
    ending: u8,
    exit_code: i64,
    signal: i64,
    wall_us: u64,
    cpu_us: u64,
    max_resident_kib: u64,
    stdout_truncated: bool,
    stdout: usize,
    stderr: usize,
    message: usize,
}

impl RunReport {
    /// The reply as one frame.
    pub fn encode(&self) -> Vec<u8> {
        let header = RunReportHeader {
            ending: self.ending,
            exit_code: self.exit_code,
            signal: self.signal,
            wall_us: self.wall_us,
            cpu_us: self.cpu_us,
            max_resident_kib: self.max_resident_kib,
            stdout_truncated: self.stdout_truncated,
            stdout: self.stdout.len(),
            stderr: self.stderr.len(),
            message: self.message.len(),
        };
        rlvr_frame::encode(&header, &[&self.stdout, &self.stderr, &self.message])
    }

    /// Reads one reply; `Ok(None)` at a clean end of input.
    pub fn receive(input: &mut impl Read) -> io::Result<Option<Self>> {
        let Some(header) = receive_header::<RunReportHeader>(input)? else {
            return Ok(None);
        };
        if header.ending > ending::NOT_STARTED {
            return Err(invalid(format!("unknown ending {}", header.ending)));
        }
        let [stdout, stderr, message] =
            receive_payloads(input, &[header.stdout, header.stderr, header.message])?
                .try_into()
                .map_err(|_| invalid("three payloads"))?;
        Ok(Some(Self {
            ending: header.ending,
            exit_code: header.exit_code,
            signal: header.signal,
            wall_us: header.wall_us,
            cpu_us: header.cpu_us,
            max_resident_kib: header.max_resident_kib,
            stdout_truncated: header.stdout_truncated,
            stdout,
            stderr,
            message,
        }))
    }
}

/// What the supervisor starts for each test ([`Request::Load`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProgramSpec {
    /// The executable image (a compiled program), exec'd from a sealed memory file; empty when
    /// `path` names an executable inside the sandbox instead (an interpreter).
    pub image: Vec<u8>,
    /// The executable's path inside the sandbox, used when `image` is empty.
    pub path: Vec<u8>,
    /// The argument vector, `argv[0]` first.
    pub arguments: Vec<Vec<u8>>,
    /// The environment, `NAME=value` each.
    pub environment: Vec<Vec<u8>>,
    /// Files the program gets as descriptors 3, 4, ... (sealed memory files: a script, an
    /// archive of classes); `/proc/self/fd/3` names the first.
    pub files: Vec<Vec<u8>>,
    /// A warm program (the JVM's harness): started once and kept for every test, which it
    /// runs on request (docs/languages.md, "Java: one warm JVM per job"). After the files it
    /// gets a control pipe (it reads one byte per test) and a result pipe (it writes `R` once
    /// ready, then per test a little-endian `i32` exit status and one byte, non-zero when
    /// something the test started is still running).
    pub persistent: bool,
}

/// One test's input and limits ([`Request::Run`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunSpec {
    /// Standard input.
    pub stdin: Vec<u8>,
    /// Wall-clock limit in milliseconds.
    pub wall_ms: u64,
    /// CPU limit in whole seconds (`RLIMIT_CPU`; the hard limit one second above kills).
    pub cpu_seconds: u64,
    /// Cap of standard output (`RLIMIT_FSIZE` on the memory file): reaching it truncates.
    pub output_bytes: u64,
    /// Address-space limit of the program (`RLIMIT_AS`), 0 for none.
    pub address_space_bytes: u64,
    /// Limit of its committed private memory (`RLIMIT_DATA`: writable private mappings, which a
    /// runtime's reserved but unused address space is not), 0 for none.
    pub data_bytes: u64,
    /// Empty the work directory after the test (the judge: each test finds it empty).
    pub empty_work_directory: bool,
    /// Files this test's program gets as descriptors after the load's files (memory files:
    /// a checker's input, output and answer, named `/proc/self/fd/N`); not for warm programs.
    pub files: Vec<Vec<u8>>,
}

/// How one test went (the reply to [`Request::Run`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunReport {
    /// One of [`ending`].
    pub ending: u8,
    /// Exit status when it exited.
    pub exit_code: i64,
    /// Signal number when a signal ended it.
    pub signal: i64,
    /// Wall-clock time in microseconds.
    pub wall_us: u64,
    /// CPU time of the test's processes in microseconds.
    pub cpu_us: u64,
    /// Largest resident set of one of its processes, in KiB.
    pub max_resident_kib: u64,
    /// Standard output reached its cap.
    pub stdout_truncated: bool,
    /// What the program wrote to standard output (at most the cap).
    pub stdout: Vec<u8>,
    /// The end of what it wrote to standard error (bounded).
    pub stderr: Vec<u8>,
    /// Why the program did not start, for [`ending::NOT_STARTED`]; a problem emptying the work
    /// directory otherwise.
    pub message: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program() -> ProgramSpec {
        ProgramSpec {
            image: b"\x7fELF image".to_vec(),
            path: Vec::new(),
            arguments: vec![b"program".to_vec(), b"\xff not utf-8".to_vec()],
            environment: vec![b"PATH=/usr/bin".to_vec()],
            files: vec![b"one".to_vec(), Vec::new()],
            persistent: true,
        }
    }

    #[test]
    fn every_request_reads_back_as_it_was_sent() {
        let test = RunSpec {
            stdin: b"1 2\n".to_vec(),
            wall_ms: 2000,
            cpu_seconds: 2,
            output_bytes: 1 << 20,
            address_space_bytes: 0,
            data_bytes: 3 << 30,
            empty_work_directory: true,
            files: vec![b"input".to_vec()],
        };
        let requests = [Request::Load(program()), Request::Run(test), Request::Exit];
        let stream: Vec<u8> = requests.iter().flat_map(Request::encode).collect();
        let mut input = &stream[..];
        for request in requests {
            assert_eq!(
                Request::receive(&mut input).expect("a request"),
                Some(request)
            );
        }
        assert_eq!(Request::receive(&mut input).expect("clean end"), None);
    }

    #[test]
    fn every_reply_reads_back_as_it_was_sent() {
        let report = RunReport {
            ending: ending::SIGNALED,
            exit_code: 0,
            signal: 9,
            wall_us: 1500,
            cpu_us: 900,
            max_resident_kib: 2048,
            stdout_truncated: true,
            stdout: b"3\n".to_vec(),
            stderr: b"warning".to_vec(),
            message: Vec::new(),
        };
        let mut stream = report.encode();
        let refused = LoadReply {
            problem: Some("a NUL byte in a string".to_owned()),
        };
        stream.extend(refused.encode());
        let mut input = &stream[..];
        assert_eq!(
            RunReport::receive(&mut input).expect("a report"),
            Some(report)
        );
        assert_eq!(
            LoadReply::receive(&mut input).expect("a reply"),
            Some(refused)
        );
    }

    #[test]
    fn a_frame_the_supervisor_did_not_send_is_refused() {
        // An unknown ending, a payload the stream does not hold, payloads over the limit and a
        // header that is not a request are each an error, never a report.
        let mut unknown = RunReport::default().encode();
        let header_end = 4 + u32::from_le_bytes(unknown[..4].try_into().expect("4")) as usize;
        let header = String::from_utf8(unknown[4..header_end].to_vec()).expect("json");
        unknown = rlvr_frame::encode_raw(
            header.replace("\"ending\":0", "\"ending\":7").as_bytes(),
            &[],
        );
        let cut = RunReport {
            stdout: b"output".to_vec(),
            ..RunReport::default()
        }
        .encode();
        let oversized = rlvr_frame::encode(
            &serde_json::json!({"op": "run", "stdin": MAX_PAYLOAD_BYTES, "wall_ms": 1, "cpu_s": 0,
                "output_bytes": 0, "address_space_bytes": 0, "data_bytes": 0,
                "empty_work_directory": false, "files": [1]}),
            &[],
        );
        assert!(RunReport::receive(&mut &unknown[..]).is_err());
        assert!(RunReport::receive(&mut &cut[..cut.len() - 1]).is_err());
        assert!(Request::receive(&mut &oversized[..]).is_err());
        let unknown_operation = rlvr_frame::encode(&serde_json::json!({"op": "format"}), &[]);
        assert!(Request::receive(&mut &unknown_operation[..]).is_err());
    }
}
