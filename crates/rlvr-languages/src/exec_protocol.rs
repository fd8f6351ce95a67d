//! The exec supervisor's wire format, shared word for word by the supervisor program
//! (`supervisor/main.rs`, which includes this file) and its client in this crate.
//!
//! A frame is a 4-byte little-endian length and a body. A body is a one-byte operation (a
//! request) or status (a reply), then fields: integers little-endian, byte strings and text as
//! a 4-byte length and the bytes, lists as a 4-byte count and the items. Std only: the
//! supervisor is built without crates.

use std::io::{self, Read, Write};

/// Largest frame either side accepts (a program image or a test's output fits well below it).
pub const MAX_FRAME_BYTES: usize = 1 << 30;

/// Requests, the first byte of a request body.
pub mod operation {
    /// Load the job's program: how to start it, once per job.
    pub const LOAD: u8 = 1;
    /// Run one test: fork an isolated child, exec the program, report.
    pub const RUN: u8 = 2;
    /// End the supervisor.
    pub const EXIT: u8 = 3;
}

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

/// Builds one body.
#[derive(Debug, Default)]
pub struct Encoder {
    bytes: Vec<u8>,
}

impl Encoder {
    /// A body that starts with `tag` (an operation or a status).
    pub fn new(tag: u8) -> Self {
        Self { bytes: vec![tag] }
    }

    /// Appends an unsigned integer.
    pub fn unsigned(&mut self, value: u64) -> &mut Self {
        self.bytes.extend_from_slice(&value.to_le_bytes());
        self
    }

    /// Appends a signed integer.
    pub fn signed(&mut self, value: i64) -> &mut Self {
        self.bytes.extend_from_slice(&value.to_le_bytes());
        self
    }

    /// Appends one byte.
    pub fn byte(&mut self, value: u8) -> &mut Self {
        self.bytes.push(value);
        self
    }

    /// Appends a byte string (length first).
    pub fn bytes(&mut self, value: &[u8]) -> &mut Self {
        let length = u32::try_from(value.len()).unwrap_or(u32::MAX);
        self.bytes.extend_from_slice(&length.to_le_bytes());
        self.bytes
            .extend_from_slice(&value[..usize::try_from(length).unwrap_or(0)]);
        self
    }

    /// Appends a list of byte strings (count first).
    pub fn list<T: AsRef<[u8]>>(&mut self, items: &[T]) -> &mut Self {
        let count = u32::try_from(items.len()).unwrap_or(u32::MAX);
        self.bytes.extend_from_slice(&count.to_le_bytes());
        for item in items {
            self.bytes(item.as_ref());
        }
        self
    }

    /// Writes the body as one frame.
    pub fn send(&self, output: &mut impl Write) -> io::Result<()> {
        let length =
            u32::try_from(self.bytes.len()).map_err(|_| io::Error::other("frame too large"))?;
        let mut frame = Vec::with_capacity(4 + self.bytes.len());
        frame.extend_from_slice(&length.to_le_bytes());
        frame.extend_from_slice(&self.bytes);
        output.write_all(&frame)?;
        output.flush()
    }
}

/// Reads one body field by field; every read checks the length left.
#[derive(Debug)]
pub struct Decoder {
    bytes: Vec<u8>,
    position: usize,
}

fn truncated() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, "truncated frame")
}

impl Decoder {
    /// Reads one frame; `Ok(None)` at a clean end of input.
    pub fn receive(input: &mut impl Read) -> io::Result<Option<Self>> {
        let mut length = [0u8; 4];
        match input.read_exact(&mut length) {
            Ok(()) => {}
            Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(error) => return Err(error),
        }
        let length = u32::from_le_bytes(length) as usize;
        if length == 0 || length > MAX_FRAME_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("frame of {length} bytes"),
            ));
        }
        let mut bytes = vec![0u8; length];
        input.read_exact(&mut bytes)?;
        Ok(Some(Self { bytes, position: 0 }))
    }

    /// A decoder over a body already in memory.
    pub fn from_body(bytes: Vec<u8>) -> Self {
        Self { bytes, position: 0 }
    }

    fn take(&mut self, count: usize) -> io::Result<&[u8]> {
        let end = self.position.checked_add(count).ok_or_else(truncated)?;
        let slice = self.bytes.get(self.position..end).ok_or_else(truncated)?;
        self.position = end;
        Ok(slice)
    }

    /// One byte (the tag first, then byte fields).
    pub fn byte(&mut self) -> io::Result<u8> {
        Ok(self.take(1)?[0])
    }

    /// An unsigned integer.
    pub fn unsigned(&mut self) -> io::Result<u64> {
        let mut value = [0u8; 8];
        value.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(value))
    }

    /// A signed integer.
    pub fn signed(&mut self) -> io::Result<i64> {
        let mut value = [0u8; 8];
        value.copy_from_slice(self.take(8)?);
        Ok(i64::from_le_bytes(value))
    }

    fn length(&mut self) -> io::Result<usize> {
        let mut value = [0u8; 4];
        value.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(value) as usize)
    }

    /// A byte string.
    pub fn bytes(&mut self) -> io::Result<Vec<u8>> {
        let length = self.length()?;
        Ok(self.take(length)?.to_vec())
    }

    /// A list of byte strings.
    pub fn list(&mut self) -> io::Result<Vec<Vec<u8>>> {
        let count = self.length()?;
        // Each item takes at least its 4-byte length: a forged count cannot reserve memory.
        let mut items = Vec::with_capacity(count.min((self.bytes.len() - self.position) / 4));
        for _ in 0..count {
            items.push(self.bytes()?);
        }
        Ok(items)
    }
}

/// What the supervisor starts for each test ([`operation::LOAD`]).
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

impl ProgramSpec {
    /// The load request for this program.
    pub fn encode(&self) -> Encoder {
        let mut encoder = Encoder::new(operation::LOAD);
        encoder
            .bytes(&self.image)
            .bytes(&self.path)
            .list(&self.arguments)
            .list(&self.environment)
            .list(&self.files)
            .byte(u8::from(self.persistent));
        encoder
    }

    /// Reads a load request's fields (after its tag).
    pub fn decode(decoder: &mut Decoder) -> io::Result<Self> {
        Ok(Self {
            image: decoder.bytes()?,
            path: decoder.bytes()?,
            arguments: decoder.list()?,
            environment: decoder.list()?,
            files: decoder.list()?,
            persistent: decoder.byte()? != 0,
        })
    }
}

/// One test's input and limits ([`operation::RUN`]).
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

impl RunSpec {
    /// The run request for this test.
    pub fn encode(&self) -> Encoder {
        let mut encoder = Encoder::new(operation::RUN);
        encoder
            .bytes(&self.stdin)
            .unsigned(self.wall_ms)
            .unsigned(self.cpu_seconds)
            .unsigned(self.output_bytes)
            .unsigned(self.address_space_bytes)
            .unsigned(self.data_bytes)
            .byte(u8::from(self.empty_work_directory))
            .list(&self.files);
        encoder
    }

    /// Reads a run request's fields (after its tag).
    pub fn decode(decoder: &mut Decoder) -> io::Result<Self> {
        Ok(Self {
            stdin: decoder.bytes()?,
            wall_ms: decoder.unsigned()?,
            cpu_seconds: decoder.unsigned()?,
            output_bytes: decoder.unsigned()?,
            address_space_bytes: decoder.unsigned()?,
            data_bytes: decoder.unsigned()?,
            empty_work_directory: decoder.byte()? != 0,
            files: decoder.list()?,
        })
    }
}

/// How one test went (the reply to [`operation::RUN`]).
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

impl RunReport {
    /// The reply body.
    pub fn encode(&self) -> Encoder {
        let mut encoder = Encoder::new(self.ending);
        encoder
            .signed(self.exit_code)
            .signed(self.signal)
            .unsigned(self.wall_us)
            .unsigned(self.cpu_us)
            .unsigned(self.max_resident_kib)
            .byte(u8::from(self.stdout_truncated))
            .bytes(&self.stdout)
            .bytes(&self.stderr)
            .bytes(&self.message);
        encoder
    }

    /// Reads a reply (its tag is the ending).
    pub fn decode(decoder: &mut Decoder) -> io::Result<Self> {
        let ending = decoder.byte()?;
        if ending > ending::NOT_STARTED {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("unknown ending {ending}"),
            ));
        }
        Ok(Self {
            ending,
            exit_code: decoder.signed()?,
            signal: decoder.signed()?,
            wall_us: decoder.unsigned()?,
            cpu_us: decoder.unsigned()?,
            max_resident_kib: decoder.unsigned()?,
            stdout_truncated: decoder.byte()? != 0,
            stdout: decoder.bytes()?,
            stderr: decoder.bytes()?,
            message: decoder.bytes()?,
        })
    }
}

/// The reply to a load: status 0 with an empty message, or 1 and why it failed.
pub fn encode_load_reply(problem: Option<&str>) -> Encoder {
    let mut encoder = Encoder::new(u8::from(problem.is_some()));
    encoder.bytes(problem.unwrap_or("").as_bytes());
    encoder
}
