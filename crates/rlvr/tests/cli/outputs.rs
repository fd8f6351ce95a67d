//! Issue 13, "nothing lost": every command that writes files refuses an output that is one of
//! its inputs, writes through a temporary that appears only when complete, leaves the previous
//! file untouched on a full disk (a real, small tmpfs) and after a signal at a random moment,
//! and ends quietly by SIGPIPE when its standard output is closed.
//!
//! The full-disk tests mount a tmpfs and so need root, as the sandbox tests do. Sandbox runs in
//! this file use uids 63100..63199.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use rlvr_test_support::http_server::{Response, Server};

use crate::support::stderr;

const SIGHUP: i32 = 1;
const SIGINT: i32 = 2;
const SIGKILL: i32 = 9;
const SIGPIPE: i32 = 13;
const SIGTERM: i32 = 15;

fn rlvr(arguments: &[&str], directory: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rlvr"))
        .args(arguments)
        .current_dir(directory)
        .env("RLVR_SANDBOX_UID", "63100")
        .output()
        .unwrap_or_else(|error| panic!("running rlvr: {error}"))
}

fn assert_success(output: &Output) {
    assert_eq!(output.status.code(), Some(0), "{}", stderr(output));
}

/// `rows` synthetic records of about 3 kB in `directory/name`.
fn synth(directory: &Path, name: &str, rows: u64, seed: u64) -> PathBuf {
    let output = rlvr(
        &[
            "synth",
            name,
            "--rows",
            &rows.to_string(),
            "--seed",
            &seed.to_string(),
            "--avg-record-bytes",
            "3000",
        ],
        directory,
    );
    assert_success(&output);
    directory.join(name)
}

/// Every file under `directory` (recursively, hidden ones included) with its bytes.
fn snapshot(directory: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![directory.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in std::fs::read_dir(&current).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                files.insert(path.strip_prefix(directory).unwrap().join(""), Vec::new());
                pending.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                files.insert(path.strip_prefix(directory).unwrap().to_path_buf(), bytes);
            }
        }
    }
    files
}

/// Paths whose presence or bytes differ between two snapshots (for messages: the bytes
/// themselves would flood the output).
fn differing(left: &BTreeMap<PathBuf, Vec<u8>>, right: &BTreeMap<PathBuf, Vec<u8>>) -> Vec<String> {
    left.keys()
        .chain(right.keys())
        .filter(|path| left.get(*path) != right.get(*path))
        .map(|path| path.display().to_string())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

fn names(snapshot: &BTreeMap<PathBuf, Vec<u8>>) -> Vec<String> {
    snapshot
        .keys()
        .map(|path| path.display().to_string())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Input protection

/// The command's exit status is 2, it says why, and the input is byte for byte what it was.
fn assert_refused(output: &Output, input: &Path, before: &[u8]) {
    let message = stderr(output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(message.contains("refusing to write"), "{message}");
    assert_eq!(
        message.matches("rlvr: error:").count(),
        1,
        "one error, once: {message}"
    );
    assert_eq!(std::fs::read(input).unwrap(), before, "the input is intact");
}

#[test]
fn issue_13_split_refuses_an_out_dir_holding_its_input() {
    let directory = tempfile::tempdir().unwrap();
    std::fs::create_dir(directory.path().join("d")).unwrap();
    let input = synth(directory.path(), "d/train.jsonl", 40, 1);
    let before = std::fs::read(&input).unwrap();
    let output = rlvr(
        &["split", "d/train.jsonl", "--out-dir", "d"],
        directory.path(),
    );
    assert_refused(&output, &input, &before);
    assert_eq!(
        names(&snapshot(&directory.path().join("d"))),
        ["train.jsonl"]
    );
}

#[test]
fn issue_13_every_writing_command_refuses_its_input_as_output() {
    let directory = tempfile::tempdir().unwrap();
    let work = directory.path();
    let input = synth(work, "data.jsonl", 40, 2);
    let before = std::fs::read(&input).unwrap();
    std::fs::hard_link(&input, work.join("hard.jsonl")).unwrap();
    std::os::unix::fs::symlink(&input, work.join("link.jsonl")).unwrap();
    for output in ["data.jsonl", "./data.jsonl", "hard.jsonl", "link.jsonl"] {
        for arguments in [
            vec!["dedup", "data.jsonl", output],
            vec![
                "convert",
                "--from",
                "release",
                "--to",
                "upstream",
                "data.jsonl",
                output,
            ],
        ] {
            let run = rlvr(&arguments, work);
            assert_refused(&run, &input, &before);
        }
    }
    // The input given through a symlink, the output the real file.
    let run = rlvr(&["dedup", "link.jsonl", "data.jsonl"], work);
    assert_refused(&run, &input, &before);

    // card: the input is the README the card would write.
    std::fs::create_dir(work.join("card")).unwrap();
    std::fs::copy(&input, work.join("card/README.md")).unwrap();
    let run = rlvr(&["card", "card/README.md", "--out", "card"], work);
    assert_refused(&run, &work.join("card/README.md"), &before);

    // export: the input is a shard --overwrite would replace.
    assert_success(&rlvr(&["export", "parquet", "data.jsonl", "ex"], work));
    let shard = work.join("ex/data/train-00000-of-00001.parquet");
    let shard_bytes = std::fs::read(&shard).unwrap();
    let run = rlvr(
        &[
            "export",
            "parquet",
            "ex/data/train-00000-of-00001.parquet",
            "ex",
            "--overwrite",
        ],
        work,
    );
    assert_refused(&run, &shard, &shard_bytes);

    // import: the output is the Parquet file being read.
    let run = rlvr(
        &[
            "import",
            "parquet",
            "ex",
            "ex/data/train-00000-of-00001.parquet",
        ],
        work,
    );
    assert_refused(&run, &shard, &shard_bytes);
}

#[test]
fn issue_13_verify_refuses_to_write_results_over_its_jobs() {
    let directory = tempfile::tempdir().unwrap();
    let jobs = directory.path().join("jobs.jsonl");
    let line =
        r#"{"id": 1, "response": "x", "ground_truth": {"inputs": ["1\n"], "outputs": ["1\n"]}}"#;
    std::fs::write(&jobs, format!("{line}\n")).unwrap();
    let before = std::fs::read(&jobs).unwrap();
    let output = rlvr(
        &["verify", "jobs.jsonl", "--out", "jobs.jsonl"],
        directory.path(),
    );
    assert_refused(&output, &jobs, &before);
    let dataset = synth(directory.path(), "data.jsonl", 5, 3);
    let dataset_before = std::fs::read(&dataset).unwrap();
    let output = rlvr(
        &[
            "verify",
            "jobs.jsonl",
            "--dataset",
            "data.jsonl",
            "--out",
            "data.jsonl",
        ],
        directory.path(),
    );
    assert_refused(&output, &dataset, &dataset_before);
}

// ---------------------------------------------------------------------------------------------
// A full filesystem

/// A tmpfs of `bytes` mounted on a fresh directory, unmounted on drop.
struct Tmpfs {
    directory: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(bytes: u64) -> Self {
        let directory = tempfile::tempdir().unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes}"), "tmpfs"])
            .arg(directory.path())
            .status()
            .unwrap();
        assert!(status.success(), "mounting a tmpfs needs root");
        Self { directory }
    }

    fn path(&self) -> &Path {
        self.directory.path()
    }

    /// Fills the filesystem until `free` bytes (rounded to pages) are left, with a file named
    /// `filler`.
    fn fill_leaving(&self, free: u64) {
        let path = self.path().join("filler");
        let mut file = std::fs::File::create(&path).unwrap();
        let block = vec![0x5a_u8; 64 << 10];
        let mut written = 0u64;
        loop {
            match file.write(&block) {
                Ok(0) => break,
                Ok(count) => written += count as u64,
                Err(_) => break,
            }
        }
        file.set_len(written.saturating_sub(free)).unwrap();
        file.sync_all().unwrap();
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.directory.path())
            .status();
    }
}

/// Runs `arguments` (from `work`; `{out}` stands for the tmpfs) with its output on a nearly
/// full tmpfs holding the `previous` files, and checks: exit 6, the message names the output
/// (`named`) and the full disk, and the tmpfs holds exactly what it held before.
fn full_disk_case(work: &Path, free: u64, previous: &[&str], arguments: &[&str], named: &str) {
    let tmpfs = Tmpfs::mount(8 << 20);
    for name in previous {
        let path = tmpfs.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, format!("previous {name}\n")).unwrap();
    }
    tmpfs.fill_leaving(free);
    let before = snapshot(tmpfs.path());
    let out = tmpfs.path().display().to_string();
    let arguments: Vec<String> = arguments
        .iter()
        .map(|argument| argument.replace("{out}", &out))
        .collect();
    let arguments: Vec<&str> = arguments.iter().map(String::as_str).collect();
    let output = rlvr(&arguments, work);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(6), "{arguments:?}: {message}");
    assert!(
        message.contains("No space left on device"),
        "{arguments:?}: {message}"
    );
    assert!(
        message.contains(named),
        "{arguments:?} names {named}: {message}"
    );
    assert_eq!(message.matches("rlvr: error:").count(), 1, "{message}");
    let after = snapshot(tmpfs.path());
    assert!(
        after == before,
        "{arguments:?}: the directory is as it was; differs in {:?}",
        differing(&after, &before)
    );
}

/// A work directory with a 0.6 MB source file and its hf export.
fn full_disk_work() -> tempfile::TempDir {
    let directory = tempfile::tempdir().unwrap();
    synth(directory.path(), "source.jsonl", 200, 5);
    assert_success(&rlvr(
        &["export", "parquet", "source.jsonl", "export"],
        directory.path(),
    ));
    directory
}

#[test]
fn issue_13_full_disk_dedup_convert_import_leave_the_previous_file() {
    let work = full_disk_work();
    let convert = "convert --from release --to upstream source.jsonl {out}/out.jsonl";
    for command in [
        "dedup source.jsonl {out}/out.jsonl",
        convert,
        "import parquet export {out}/out.jsonl",
    ] {
        let arguments: Vec<&str> = command.split(' ').collect();
        full_disk_case(
            work.path(),
            16 << 10,
            &["out.jsonl"],
            &arguments,
            "out.jsonl",
        );
    }
}

#[test]
fn issue_13_full_disk_split_synth_leave_the_previous_files() {
    let work = full_disk_work();
    full_disk_case(
        work.path(),
        16 << 10,
        &["train.jsonl", "validation.jsonl", "test.jsonl"],
        &["split", "source.jsonl", "--out-dir", "{out}"],
        "train.jsonl",
    );
    full_disk_case(
        work.path(),
        16 << 10,
        &["synthetic.jsonl"],
        &[
            "synth",
            "{out}/synthetic.jsonl",
            "--rows",
            "100",
            "--inject-faults",
        ],
        "synthetic.jsonl",
    );
}

#[test]
fn issue_13_full_disk_export_and_card_leave_no_directory_and_no_partial_file() {
    let work = full_disk_work();
    // Into a directory that does not exist yet: it must not be left behind.
    let export = ["export", "parquet", "source.jsonl", "{out}/new-export"];
    full_disk_case(work.path(), 8 << 10, &[], &export, "new-export");
    // Over an earlier export: its shards and README stay as they were.
    full_disk_case(
        work.path(),
        8 << 10,
        &[
            "old/README.md",
            "old/data/train-00000-of-00002.parquet",
            "old/data/train-00001-of-00002.parquet",
        ],
        &[
            "export",
            "parquet",
            "source.jsonl",
            "{out}/old",
            "--overwrite",
        ],
        "old",
    );
    let card = ["card", "source.jsonl", "--out", "{out}/card"];
    full_disk_case(work.path(), 4 << 10, &["card/README.md"], &card, "card");
}

#[test]
fn issue_13_full_disk_verify_leaves_the_previous_results() {
    let work = tempfile::tempdir().unwrap();
    // Invalid jobs run nothing in the sandbox but each still gets a result line.
    let lines: Vec<String> = (0..600)
        .map(|index| format!(r#"{{"id": {index}, "response": "no ground truth here"}}"#))
        .collect();
    std::fs::write(work.path().join("jobs.jsonl"), lines.join("\n") + "\n").unwrap();
    full_disk_case(
        work.path(),
        8 << 10,
        &["results.jsonl"],
        &["verify", "jobs.jsonl", "--out", "{out}/results.jsonl"],
        "results.jsonl",
    );
}

// ---------------------------------------------------------------------------------------------
// Signals at random moments

/// xorshift64*, seeded from the clock; the seed is printed in failures.
struct Random(u64);

impl Random {
    fn from_clock() -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        Self(nanos | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, limit: u64) -> u64 {
        self.next() % limit.max(1)
    }
}

/// One writing command: its arguments (from the work directory) and the output directory it
/// writes into.
struct KillCase {
    name: &'static str,
    arguments: Vec<String>,
}

fn run_to_completion(work: &Path, case: &KillCase) -> Duration {
    let started = Instant::now();
    let arguments: Vec<&str> = case.arguments.iter().map(String::as_str).collect();
    assert_success(&rlvr(&arguments, work));
    started.elapsed()
}

/// Starts the command, sends `signal` after `delay`, and returns how it ended.
fn kill_after(
    work: &Path,
    case: &KillCase,
    signal: i32,
    delay: Duration,
) -> std::process::ExitStatus {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rlvr"))
        .args(&case.arguments)
        .current_dir(work)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(delay);
    let _ = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status();
    child.wait().unwrap()
}

#[test]
fn issue_13_a_signal_at_any_moment_leaves_old_or_new_outputs_and_no_temporary() {
    let mut random = Random::from_clock();
    let seed = random.0;
    let directory = tempfile::tempdir().unwrap();
    let work = directory.path();
    synth(work, "source.jsonl", 600, 7);
    assert_success(&rlvr(
        &["export", "parquet", "source.jsonl", "export"],
        work,
    ));
    std::fs::create_dir(work.join("out")).unwrap();
    let text = |items: &[&str]| items.iter().map(|item| (*item).to_owned()).collect();
    let cases = [
        KillCase {
            name: "synth",
            arguments: text(&[
                "synth",
                "out/synthetic.jsonl",
                "--rows",
                "600",
                "--inject-faults",
            ]),
        },
        KillCase {
            name: "dedup",
            arguments: text(&["dedup", "source.jsonl", "out/dedup.jsonl"]),
        },
        KillCase {
            name: "convert",
            arguments: text(&[
                "convert",
                "--from",
                "release",
                "--to",
                "upstream",
                "source.jsonl",
                "out/upstream.jsonl",
            ]),
        },
        KillCase {
            name: "split",
            arguments: text(&["split", "source.jsonl", "--out-dir", "out/split"]),
        },
        KillCase {
            name: "export",
            arguments: text(&[
                "export",
                "parquet",
                "source.jsonl",
                "out/export",
                "--overwrite",
                "--shard-size",
                "300KB",
            ]),
        },
        KillCase {
            name: "import",
            arguments: text(&["import", "parquet", "export", "out/import.jsonl"]),
        },
        KillCase {
            name: "card",
            arguments: text(&["card", "source.jsonl", "--out", "out/card"]),
        },
    ];
    let signals = [SIGINT, SIGTERM, SIGHUP, SIGKILL];
    for case in &cases {
        // What a finished run leaves, and how long it takes.
        std::fs::remove_dir_all(work.join("out")).unwrap();
        std::fs::create_dir(work.join("out")).unwrap();
        let duration = run_to_completion(work, case);
        let finished = snapshot(&work.join("out"));
        // An earlier state to compare against: marker contents in every output file.
        for attempt in 0..4 {
            let out = work.join("out");
            std::fs::remove_dir_all(&out).unwrap();
            std::fs::create_dir(&out).unwrap();
            for (path, bytes) in &finished {
                let target = out.join(path);
                if bytes.is_empty() && path.to_string_lossy().ends_with('/') {
                    std::fs::create_dir_all(&target).unwrap();
                } else {
                    if let Some(parent) = target.parent() {
                        std::fs::create_dir_all(parent).unwrap();
                    }
                    std::fs::write(&target, format!("old {}\n", path.display())).unwrap();
                }
            }
            let old = snapshot(&out);
            let signal = signals[(attempt + random.below(4) as usize) % signals.len()];
            let delay_micros = random.below(duration.as_micros() as u64 * 12 / 10 + 1);
            let status = kill_after(work, case, signal, Duration::from_micros(delay_micros));
            let now = snapshot(&out);
            let context = format!(
                "{} killed by {signal} after {delay_micros} us (seed {seed}): {status:?}\nnow: {:?}",
                case.name,
                names(&now)
            );
            assert_eq!(names(&now), names(&old), "no file added or lost: {context}");
            if status.success() {
                assert!(
                    now == finished,
                    "finished before the signal: {context}; differs in {:?}",
                    differing(&now, &finished)
                );
                continue;
            }
            assert_eq!(
                status.signal(),
                Some(signal),
                "died by the signal: {context}"
            );
            // Each file is whole: the old one or the new one.
            for (path, bytes) in &now {
                assert!(
                    old.get(path) == Some(bytes) || finished.get(path) == Some(bytes),
                    "{} is neither old nor new: {context}",
                    path.display()
                );
            }
            if signal != SIGKILL {
                // Caught signals wait for a commit in progress: all old or all new.
                assert!(
                    now == old || now == finished,
                    "a set is all old or all new: {context}"
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// A closed standard output

#[test]
fn issue_13_a_closed_stdout_ends_quietly_by_sigpipe() {
    let directory = tempfile::tempdir().unwrap();
    let work = directory.path();
    synth(work, "data.jsonl", 60, 9);
    for arguments in [
        vec!["stats", "data.jsonl"],
        vec!["validate", "data.jsonl", "--json"],
        vec!["show", "data.jsonl", "3"],
        vec!["audit", "data.jsonl", "--json"],
        vec!["dedup", "data.jsonl", "deduplicated.jsonl", "--json"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rlvr"))
            .args(&arguments)
            .current_dir(work)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the reading end before the command prints anything.
        drop(child.stdout.take());
        let output = child.wait_with_output().unwrap();
        assert_eq!(
            output.status.signal(),
            Some(SIGPIPE),
            "{arguments:?}: {:?} {}",
            output.status,
            stderr(&output)
        );
        assert!(
            output.stderr.is_empty(),
            "{arguments:?}: {}",
            stderr(&output)
        );
    }
}

/// An output that is a device or a pipe is written in place: renaming a finished file over
/// it would destroy it (as root, `rlvr synth ... /dev/null` once left a regular file there).
/// The command's stdout as the output prints the records; a link to `/dev/null` stays one.
#[test]
fn outputs_to_devices_and_pipes_are_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let directory = tempfile::tempdir().unwrap();
    let work = directory.path();
    synth(work, "data.jsonl", 4, 2);
    // The command's own stdout, a pipe here, as `/dev/stdout` is; a link in the work directory
    // rather than `/dev/stdout` itself, so that a regression cannot replace the machine's.
    std::os::unix::fs::symlink("/proc/self/fd/1", work.join("stdout.jsonl")).unwrap();
    for (arguments, expected) in [
        (vec!["synth", "stdout.jsonl", "--rows", "3"], 3),
        (vec!["dedup", "data.jsonl", "stdout.jsonl"], 4),
    ] {
        let output = rlvr(&arguments, work);
        assert_success(&output);
        // Records, whatever summary the command prints to stdout after them.
        let records = output.stdout.split(|byte| *byte == b'\n');
        let count = records
            .filter(|line| line.starts_with(b"{\"prompt\""))
            .count();
        assert_eq!(count, expected, "{arguments:?}: {}", stderr(&output));
    }
    std::os::unix::fs::symlink("/dev/null", work.join("sink.jsonl")).unwrap();
    assert_success(&rlvr(&["synth", "sink.jsonl", "--rows", "2"], work));
    let device = std::fs::metadata("/dev/null").unwrap().file_type();
    assert!(device.is_char_device());
    for (link, target) in [
        ("sink.jsonl", "/dev/null"),
        ("stdout.jsonl", "/proc/self/fd/1"),
    ] {
        assert_eq!(
            std::fs::read_link(work.join(link)).unwrap(),
            Path::new(target)
        );
    }
    let mut listed: Vec<String> = std::fs::read_dir(work)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    listed.sort();
    assert_eq!(listed, vec!["data.jsonl", "sink.jsonl", "stdout.jsonl"]);
}

/// `verify --out` keeps its documented contract under signals: Ctrl-C or SIGTERM moves the
/// results finished so far into place, whole lines in job order (exit 130), and leaves no
/// temporary. (Not SIGKILL: the sandbox's cgroups of a killed verify are not this test's to
/// clean up.)
#[test]
fn issue_13_verify_killed_at_any_moment_leaves_the_old_results_or_whole_lines() {
    let mut random = Random::from_clock();
    let seed = random.0;
    let directory = tempfile::tempdir().unwrap();
    let work = directory.path();
    let jobs: Vec<String> = (0..24)
        .map(|index| {
            format!(
                r#"{{"id": {index}, "response": "```python\nprint(int(input()) + 1)\n```", "ground_truth": {{"inputs": ["1\n"], "outputs": ["2\n"]}}}}"#
            )
        })
        .collect();
    std::fs::write(work.join("jobs.jsonl"), jobs.join("\n") + "\n").unwrap();
    std::fs::create_dir(work.join("out")).unwrap();
    let case = KillCase {
        name: "verify",
        arguments: [
            "verify",
            "jobs.jsonl",
            "--workers",
            "1",
            "--out",
            "out/results.jsonl",
        ]
        .map(String::from)
        .to_vec(),
    };
    let duration = run_to_completion(work, &case);
    for attempt in 0..6 {
        std::fs::write(work.join("out/results.jsonl"), b"old\n").unwrap();
        let signal = [SIGINT, SIGTERM][attempt % 2];
        let delay_micros = random.below(duration.as_micros() as u64 + 1);
        let status = Command::new(env!("CARGO_BIN_EXE_rlvr"))
            .args(&case.arguments)
            .current_dir(work)
            .env("RLVR_SANDBOX_UID", "63101")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map(|mut child| {
                std::thread::sleep(Duration::from_micros(delay_micros));
                let _ = Command::new("kill")
                    .args([&format!("-{signal}"), &child.id().to_string()])
                    .status();
                child.wait().unwrap()
            })
            .unwrap();
        let context = format!("signal {signal} after {delay_micros} us (seed {seed}): {status:?}");
        assert_eq!(
            names(&snapshot(&work.join("out"))),
            ["results.jsonl"],
            "{context}"
        );
        let results = std::fs::read_to_string(work.join("out/results.jsonl")).unwrap();
        if results == "old\n" {
            assert!(
                !status.success(),
                "a finished run writes its results: {context}"
            );
            continue;
        }
        // Whole result lines, the first jobs in order.
        for (index, line) in results.lines().enumerate() {
            let value: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|error| panic!("{error}: {line:?}: {context}"));
            assert_eq!(value["id"], index, "{context}");
        }
        assert!(results.is_empty() || results.ends_with('\n'), "{context}");
        match status.code() {
            Some(0) => assert_eq!(results.lines().count(), jobs.len(), "{context}"),
            Some(130) => {}
            other => panic!("unexpected status {other:?}: {context}"),
        }
    }
}

/// A download that fills the disk: exit 6 naming the file, nothing under the final name.
#[test]
fn issue_13_full_disk_fetch_keeps_only_its_resumable_part() {
    // A megabyte at every path: more than the disk has left.
    let body = vec![b'x'; 1 << 20];
    let server = Server::start(move |_| Response::ok(body.clone()));
    let endpoint = server.url();
    let tmpfs = Tmpfs::mount(4 << 20);
    tmpfs.fill_leaving(64 << 10);
    let target = tmpfs.path().join("data.jsonl");
    let output = Command::new(env!("CARGO_BIN_EXE_rlvr"))
        .args([
            "fetch",
            "--repo",
            "owner/name",
            "--file",
            "data.jsonl",
            "--no-verify",
            "--attempts",
            "1",
        ])
        .arg("--out")
        .arg(&target)
        .env("HF_ENDPOINT", &endpoint)
        .output()
        .unwrap();
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(6), "{message}");
    assert!(message.contains("No space left on device"), "{message}");
    assert!(message.contains("data.jsonl.part"), "{message}");
    assert!(!target.exists());
}
