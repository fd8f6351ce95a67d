//! Issue 13, "nothing hung" and exit statuses: every command on an empty file, a file of blank
//! lines and a file without a final newline ends promptly with the expected status; bad input
//! shows in the exit status; each error is printed once, naming file, line, byte offset and
//! field; arguments are checked before any work. Sandbox runs here use uids 63100..63199.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use rlvr_test_support::http_server::{Response, Server};

use crate::support::stderr;

/// Far above what any of these commands needs on these inputs, even on a loaded machine.
const PROMPTLY: Duration = Duration::from_secs(60);

/// Runs rlvr from `directory`, killing it (and failing) if it has not ended within [`PROMPTLY`].
fn rlvr(arguments: &[&str], directory: &Path) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rlvr"))
        .args(arguments)
        .current_dir(directory)
        .env("RLVR_SANDBOX_UID", "63110")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("running rlvr: {error}"));
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if started.elapsed() > PROMPTLY {
            let _ = child.kill();
            let _ = child.wait();
            panic!("rlvr {arguments:?} did not end within {PROMPTLY:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn listing(directory: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(directory)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn synth(directory: &Path, name: &str, rows: u64) {
    let output = rlvr(
        &[
            "synth",
            name,
            "--rows",
            &rows.to_string(),
            "--avg-record-bytes",
            "2000",
        ],
        directory,
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

/// Every command that reads a dataset file, given the file as `IN`.
fn dataset_commands() -> Vec<Vec<&'static str>> {
    vec![
        vec!["validate", "IN"],
        vec!["stats", "IN"],
        vec!["stats", "IN", "--json"],
        vec!["show", "IN", "0"],
        vec!["audit", "IN"],
        vec!["dedup", "IN", "out.jsonl"],
        vec!["split", "IN", "--out-dir", "split"],
        vec![
            "convert",
            "--from",
            "release",
            "--to",
            "upstream",
            "IN",
            "out.jsonl",
        ],
        vec!["export", "parquet", "IN", "export"],
        vec!["card", "IN", "--out", "card"],
    ]
}

fn with_input<'a>(command: &[&'a str], input: &'a str) -> Vec<&'a str> {
    command
        .iter()
        .map(|argument| if *argument == "IN" { input } else { argument })
        .collect()
}

#[test]
fn issue_13_empty_and_blank_files_end_promptly_with_no_records() {
    let directory = tempfile::tempdir().unwrap();
    let work = directory.path();
    std::fs::write(work.join("empty.jsonl"), b"").unwrap();
    std::fs::write(work.join("blank.jsonl"), b"\n  \n\t\n\r\n").unwrap();
    for input in ["empty.jsonl", "blank.jsonl"] {
        for command in dataset_commands() {
            let before = listing(work);
            let arguments = with_input(&command, input);
            let output = rlvr(&arguments, work);
            let message = stderr(&output);
            assert_eq!(output.status.code(), Some(2), "{arguments:?}: {message}");
            let expected = if arguments[0] == "show" {
                "out of range"
            } else {
                "contains no records"
            };
            assert!(message.contains(expected), "{arguments:?}: {message}");
            assert_eq!(message.matches("rlvr: error:").count(), 1, "{message}");
            assert_eq!(listing(work), before, "{arguments:?} wrote nothing");
        }
    }
}

#[test]
fn issue_13_a_missing_final_newline_changes_nothing() {
    let directory = tempfile::tempdir().unwrap();
    let work = directory.path();
    synth(work, "with.jsonl", 12);
    let mut bytes = std::fs::read(work.join("with.jsonl")).unwrap();
    assert_eq!(bytes.pop(), Some(b'\n'));
    std::fs::write(work.join("without.jsonl"), &bytes).unwrap();
    for command in dataset_commands() {
        let mut results = Vec::new();
        for input in ["with.jsonl", "without.jsonl"] {
            let arguments = with_input(&command, input);
            let output = rlvr(&arguments, work);
            let written = std::fs::read(work.join("out.jsonl")).ok();
            let _ = std::fs::remove_file(work.join("out.jsonl"));
            let _ = std::fs::remove_dir_all(work.join("split"));
            let _ = std::fs::remove_dir_all(work.join("export"));
            let _ = std::fs::remove_dir_all(work.join("card"));
            results.push((output.status.code(), written, stderr(&output)));
        }
        assert_eq!(results[0].0, results[1].0, "{command:?}: {results:?}");
        assert!(
            matches!(results[0].0, Some(0 | 1)),
            "{command:?}: {results:?}"
        );
        assert_eq!(
            results[0].1, results[1].1,
            "{command:?}: the same output file"
        );
    }
}

#[test]
fn issue_13_card_on_an_empty_file_does_not_spin() {
    let directory = tempfile::tempdir().unwrap();
    std::fs::write(directory.path().join("empty.jsonl"), b"").unwrap();
    let output = rlvr(&["card", "empty.jsonl", "--out", "card"], directory.path());
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(!directory.path().join("card").exists());
}

#[test]
fn issue_13_dedup_reports_a_malformed_line_in_its_exit_status() {
    let directory = tempfile::tempdir().unwrap();
    let work = directory.path();
    synth(work, "data.jsonl", 6);
    let mut bytes = std::fs::read(work.join("data.jsonl")).unwrap();
    let offset = bytes.len();
    bytes.extend_from_slice(b"{\"prompt\": 5, \"label\": {}, \"metadata\": {}}\n");
    bytes.extend_from_slice(b"{\"broken\": \n");
    std::fs::write(work.join("data.jsonl"), &bytes).unwrap();
    for command in [
        vec!["dedup", "data.jsonl", "out.jsonl"],
        vec!["split", "data.jsonl", "--out-dir", "split"],
        vec!["audit", "data.jsonl"],
        vec![
            "convert",
            "--from",
            "release",
            "--to",
            "upstream",
            "data.jsonl",
            "up.jsonl",
        ],
        vec!["export", "parquet", "data.jsonl", "export"],
        vec!["stats", "data.jsonl"],
    ] {
        let output = rlvr(&command, work);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{command:?}: {message}");
        // Each bad line once, with file, line, row, byte offset and (for a non-record) field.
        let record_line =
            format!("data.jsonl:7: row 6, byte offset {offset}: invalid record: field `prompt`");
        assert_eq!(
            message.matches(&record_line).count(),
            1,
            "{command:?}: {message}"
        );
        assert_eq!(
            message.matches("data.jsonl:8: row 7").count(),
            1,
            "{command:?}: {message}"
        );
        assert!(!message.contains("rlvr: error:"), "{command:?}: {message}");
    }
}

#[test]
fn issue_13_an_error_is_printed_once() {
    let directory = tempfile::tempdir().unwrap();
    let work = directory.path();
    for command in dataset_commands() {
        let arguments = with_input(&command, "missing.jsonl");
        let output = rlvr(&arguments, work);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{arguments:?}: {message}");
        assert_eq!(message.lines().count(), 1, "{arguments:?}: {message}");
        assert_eq!(
            message.matches("No such file or directory").count(),
            1,
            "{arguments:?}: {message}"
        );
        assert!(
            message.contains("missing.jsonl"),
            "{arguments:?}: {message}"
        );
    }
    let output = rlvr(&["import", "parquet", "missing", "out.jsonl"], work);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert_eq!(
        message.matches("No such file or directory").count(),
        1,
        "{message}"
    );
}

#[test]
fn issue_13_products_check_their_options_before_writing() {
    let directory = tempfile::tempdir().unwrap();
    let work = directory.path();
    synth(work, "data.jsonl", 4);
    for (arguments, complaint) in [
        (
            vec![
                "export",
                "parquet",
                "data.jsonl",
                "out",
                "--zstd-level",
                "99",
            ],
            "--zstd-level",
        ),
        (
            vec!["export", "parquet", "data.jsonl", "out", "--split", "a/b"],
            "--split",
        ),
        (
            vec![
                "export",
                "parquet",
                "data.jsonl",
                "out",
                "--row-group-rows",
                "0",
            ],
            "--row-group-rows",
        ),
        (
            vec![
                "split",
                "data.jsonl",
                "--out-dir",
                "out",
                "--val-fraction",
                "1.5",
            ],
            "--val-fraction",
        ),
    ] {
        let output = rlvr(&arguments, work);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{arguments:?}: {message}");
        assert!(message.contains(complaint), "{arguments:?}: {message}");
        assert!(!work.join("out").exists(), "{arguments:?} created nothing");
    }
}

#[test]
fn issue_13_import_of_an_empty_parquet_file_ends_promptly() {
    let directory = tempfile::tempdir().unwrap();
    std::fs::write(directory.path().join("empty.parquet"), b"").unwrap();
    let output = rlvr(
        &["import", "parquet", "empty.parquet", "out.jsonl"],
        directory.path(),
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(!directory.path().join("out.jsonl").exists());
}

#[test]
fn issue_13_fetch_checks_every_argument_before_downloading() {
    let directory = tempfile::tempdir().unwrap();
    // A server that counts connections and answers none of them usefully.
    let server = Server::start(|_| Response::not_found());
    let endpoint = server.url();
    std::fs::create_dir(directory.path().join("a-directory")).unwrap();
    for (arguments, complaint) in [
        (vec!["--sha256", "XYZ"], "--sha256 `XYZ`"),
        (vec!["--sha256", &"a".repeat(63)], "64 hexadecimal digits"),
        (vec!["--repo", "no-slash"], "--repo"),
        (vec!["--out", "a-directory"], "is a directory"),
        (vec!["--out", "missing/data.jsonl"], "does not exist"),
        (vec!["--attempts", "0"], "--attempts"),
        (vec!["--endpoint", "ftp://host"], "not an http"),
    ] {
        let mut all = vec!["fetch"];
        if !arguments.contains(&"--endpoint") {
            all.extend(["--endpoint", &endpoint]);
        }
        all.extend(&arguments);
        let output = rlvr(&all, directory.path());
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{arguments:?}: {message}");
        assert!(message.contains(complaint), "{arguments:?}: {message}");
    }
    assert_eq!(server.connections(), 0, "nothing was requested");
    assert_eq!(listing(directory.path()), ["a-directory"]);
}

#[test]
fn issue_13_verify_exits_1_when_every_job_was_invalid() {
    let directory = tempfile::tempdir().unwrap();
    let jobs = (0..3)
        .map(|index| format!("{{\"id\": {index}, \"response\": \"no tests given\"}}"))
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(directory.path().join("jobs.jsonl"), jobs).unwrap();
    let output = rlvr(
        &["verify", "jobs.jsonl", "--out", "results.jsonl"],
        directory.path(),
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let results = std::fs::read_to_string(directory.path().join("results.jsonl")).unwrap();
    assert_eq!(
        results.lines().count(),
        3,
        "one result per job, no final newline needed"
    );
    assert!(results.lines().all(|line| line.contains("\"invalid_job\"")));
}

#[test]
fn issue_13_verify_checks_its_limits_before_starting() {
    let directory = tempfile::tempdir().unwrap();
    std::fs::write(directory.path().join("jobs.jsonl"), b"").unwrap();
    for arguments in [
        ["--time-limit", "0"],
        ["--time-limit", "NaN"],
        ["--memory-limit", "0"],
        ["--max-tests", "0"],
        ["--workers", "0"],
        ["--workers", "18446744073709551615"],
        ["--workers", "1025"],
    ] {
        let mut all = vec!["verify", "jobs.jsonl"];
        all.extend(arguments);
        let output = rlvr(&all, directory.path());
        assert_eq!(
            output.status.code(),
            Some(2),
            "{arguments:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(arguments[0]),
            "{}",
            stderr(&output)
        );
    }
}

#[test]
fn issue_23_workers_are_bounded_alike_in_verify_serve_and_redteam() {
    let directory = tempfile::tempdir().unwrap();
    std::fs::write(directory.path().join("jobs.jsonl"), b"").unwrap();
    for command in [
        &["verify", "jobs.jsonl"][..],
        &["serve", "--addr", "127.0.0.1:0"],
        &["redteam", "--profile", "judge"],
    ] {
        for workers in ["0", "1025", "99999999999999999999"] {
            let mut all = command.to_vec();
            all.extend(["--workers", workers]);
            let output = rlvr(&all, directory.path());
            let message = stderr(&output);
            assert_eq!(output.status.code(), Some(2), "{all:?}: {message}");
            assert!(
                message.contains("--workers") && message.contains("between 1 and 1024")
                    || message.contains("not a whole number"),
                "{all:?}: {message}"
            );
            assert!(!message.contains("panicked"), "{all:?}: {message}");
        }
    }
}

#[test]
fn issue_23_convert_names_the_input_it_refuses() {
    let directory = tempfile::tempdir().unwrap();
    std::fs::create_dir(directory.path().join("empty")).unwrap();
    std::fs::write(directory.path().join("export.parquet"), b"PAR1").unwrap();
    for (input, from, says) in [
        (
            "empty",
            "upstream",
            "`empty` is a directory without .parquet files",
        ),
        (
            "missing.parquet",
            "upstream",
            "`missing.parquet`: No such file",
        ),
        ("missing.jsonl", "release", "`missing.jsonl`: No such file"),
        ("export.parquet", "release", "`export.parquet` is Parquet"),
    ] {
        let output = rlvr(
            &[
                "convert",
                "--from",
                from,
                "--to",
                "release",
                input,
                "out.jsonl",
            ],
            directory.path(),
        );
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{input}: {message}");
        assert!(message.contains(says), "{input}: {message}");
        assert!(!directory.path().join("out.jsonl").exists());
    }
}

#[test]
fn run_refuses_time_limits_it_cannot_hold_without_panicking() {
    let directory = tempfile::tempdir().unwrap();
    std::fs::write(directory.path().join("program.py"), "print(1)\n").unwrap();
    for limit in ["1e300", "-1", "0", "inf", "NaN", "3601"] {
        let argument = format!("--time-limit={limit}");
        let output = rlvr(&["run", "program.py", &argument], directory.path());
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{limit}: {message}");
        assert!(message.contains("--time-limit"), "{limit}: {message}");
        assert!(!message.contains("panicked"), "{limit}: {message}");
    }
}

#[test]
fn issue_13_verify_on_empty_and_blank_job_files_writes_no_results() {
    let directory = tempfile::tempdir().unwrap();
    std::fs::write(directory.path().join("empty.jsonl"), b"").unwrap();
    std::fs::write(directory.path().join("blank.jsonl"), b"\n \n").unwrap();
    for input in ["empty.jsonl", "blank.jsonl"] {
        let output = rlvr(&["verify", input], directory.path());
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert!(output.stdout.is_empty());
    }
}
