//! Issue 23: a full disk during dedup, convert, split or export stops the read at once and the
//! command returns the write error naming the output, instead of reading a 7 GiB input to the
//! end first. The disk is made "full" with the file-size limit (`RLIMIT_FSIZE`: a write past it
//! fails with EFBIG, the signal it raises being caught), set only around each command, in the
//! test's own process (nextest, which `scripts/test` runs, gives every test a process of its
//! own; under plain `cargo test` other tests of this binary would share the limit). The input is a named pipe fed
//! by a thread, which counts what the command read before it gave up.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use rlvr_dataset::ReadOptions;
use rlvr_products::{
    ExportOptions, GroupBy, Layout, LineLayout, ProductsError, SplitOptions, convert_file,
    dedup_file, export_parquet, split_file,
};
use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
use serde_json::json;

/// What the pipe offers: far more than any bound below.
const OFFERED_BYTES: u64 = 64 << 20;
/// The first record, bigger than the output's 1 MiB buffer, so its write reaches the disk.
const FIRST_RECORD_BYTES: usize = 2 << 20;

/// Letters that do not compress (xorshift), so that Parquet output reaches the disk at once too.
fn incompressible_text(seed: u64, length: usize) -> String {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..length)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            char::from(b'a' + (state % 26) as u8)
        })
        .collect()
}

fn record(index: u64, prompt_bytes: usize) -> Vec<u8> {
    let tests = json!({"inputs": ["1\n"], "outputs": ["2\n"]});
    let prompt = format!(
        "Problem {index}: {}",
        incompressible_text(index, prompt_bytes)
    );
    let mut line = serde_json::to_vec(&json!({
        "prompt": [{"role": "user", "content": prompt}],
        "label": tests,
        "metadata": {"data_type": "code", "data_source": "coder1_longcot", "ability": "code",
                     "style": "rule", "hash": format!("{index:032x}"), "ground_truth": tests},
    }))
    .expect("a record encodes");
    line.push(b'\n');
    line
}

/// A named pipe at `path` fed with records until the reader goes away (or `OFFERED_BYTES`);
/// the thread returns the bytes the reader took.
fn feed_pipe(path: &Path) -> std::thread::JoinHandle<u64> {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        let mut pipe = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .expect("the pipe opens once the command opens it");
        let mut written = 0u64;
        let mut index = 0u64;
        while written < OFFERED_BYTES {
            let line = record(index, if index == 0 { FIRST_RECORD_BYTES } else { 1000 });
            // EPIPE (SIGPIPE is ignored in Rust programs) once the command closed the pipe.
            if pipe.write_all(&line).is_err() {
                break;
            }
            written += line.len() as u64;
            index += 1;
        }
        written
    })
}

/// The bytes the command took from the pipe at `path`. Opening the read end here first lets the
/// feeder go even when the command failed without opening the pipe (instead of hanging).
fn bytes_taken(path: &Path, feeder: std::thread::JoinHandle<u64>) -> u64 {
    use std::os::unix::fs::OpenOptionsExt;
    let nonblocking = rustix::fs::OFlags::NONBLOCK.bits() as i32;
    let release = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nonblocking)
        .open(path)
        .expect("the pipe opens for reading");
    drop(release);
    feeder.join().expect("the feeder ends")
}

/// Runs `command` with regular files limited to `limit` bytes.
fn with_file_size_limit<T>(limit: u64, command: impl FnOnce() -> T) -> T {
    let before = getrlimit(Resource::Fsize);
    setrlimit(
        Resource::Fsize,
        Rlimit {
            current: Some(limit),
            maximum: before.maximum,
        },
    )
    .expect("lowering the soft limit is allowed");
    let result = command();
    setrlimit(Resource::Fsize, before).expect("the soft limit goes back up to the hard one");
    result
}

fn read_options() -> ReadOptions {
    ReadOptions {
        chunk_bytes: 64 << 10,
        workers: 2,
        sha256: false,
    }
}

/// The read stopped early: the first record, the reader's buffer pool and the pipe's buffer,
/// a few MiB, not the 64 MiB offered.
fn assert_read_stopped_early(command: &str, taken: u64) {
    assert!(
        taken < 8 << 20,
        "{command} read {taken} of {OFFERED_BYTES} bytes after the write failed"
    );
}

/// The command's error is the write error (EFBIG, "File too large") naming the output.
fn assert_write_error(
    command: &str,
    result: Result<impl std::fmt::Debug, ProductsError>,
    output: &Path,
) {
    let error = result.expect_err(command);
    let message = format!("{error}");
    assert!(
        matches!(error, ProductsError::Output(_)),
        "{command}: {error:?}"
    );
    assert!(
        message.contains(&output.display().to_string()),
        "{command}: {message}"
    );
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&error);
    let mut efbig = false;
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            efbig |= io.kind() == std::io::ErrorKind::FileTooLarge;
        }
        source = cause.source();
    }
    assert!(efbig, "{command}: no EFBIG in {error:?}");
}

#[test]
fn a_full_disk_stops_the_read_and_the_command_returns_the_write_error() {
    // A write past the limit raises SIGXFSZ, which would end the process: catch it.
    signal_hook::flag::register(
        signal_hook::consts::SIGXFSZ,
        Arc::new(AtomicBool::new(false)),
    )
    .expect("SIGXFSZ handler");
    let directory = tempfile::tempdir().expect("tempdir");
    let path = |name: &str| -> PathBuf { directory.path().join(name) };

    let (input, output) = (path("dedup-in.jsonl"), path("dedup-out.jsonl"));
    let feeder = feed_pipe(&input);
    let result = with_file_size_limit(0, || {
        dedup_file(&input, &output, GroupBy::default(), &read_options())
    });
    assert_write_error("dedup", result, &output);
    assert_read_stopped_early("dedup", bytes_taken(&input, feeder));
    assert!(!output.exists(), "no partial output");

    let (input, output) = (path("convert-in.jsonl"), path("convert-out.jsonl"));
    let feeder = feed_pipe(&input);
    let result = with_file_size_limit(0, || {
        convert_file(
            &input,
            &output,
            LineLayout::Release,
            LineLayout::Upstream,
            &read_options(),
        )
    });
    assert_write_error("convert", result, &output);
    assert_read_stopped_early("convert", bytes_taken(&input, feeder));

    let (input, out_dir) = (path("export-in.jsonl"), path("export"));
    let feeder = feed_pipe(&input);
    let options = ExportOptions {
        layout: Layout::Hf,
        read: read_options(),
        row_group_rows: 64,
        ..ExportOptions::default()
    };
    let result = with_file_size_limit(0, || export_parquet(&input, &out_dir, &options));
    let error = result.expect_err("export");
    // The shard writer's error names the shard being written under `out_dir`.
    assert!(
        format!("{error}").contains(&out_dir.join("data").display().to_string()),
        "export: {error}"
    );
    assert_read_stopped_early("export", bytes_taken(&input, feeder));

    // Split reads its input twice, so from a regular file; its second pass writes.
    let input = path("split-in.jsonl");
    let mut file = std::fs::File::create(&input).expect("create");
    for index in 0..2000 {
        let size = if index == 0 { FIRST_RECORD_BYTES } else { 1000 };
        file.write_all(&record(index, size)).expect("write");
    }
    drop(file);
    let out_dir = path("split");
    let options = SplitOptions {
        validation_fraction: 0.1,
        test_fraction: 0.1,
        seed: 1,
        group_by: GroupBy::default(),
        read: read_options(),
    };
    let result = with_file_size_limit(0, || split_file(&input, &out_dir, &options));
    let error = result.expect_err("split");
    assert!(
        matches!(error, ProductsError::Output(_)),
        "split: {error:?}"
    );
}
