//! What a user reads, pinned whole with insta snapshots (`snapshots/`): the validation report,
//! the summary table and the audit of a faulty file, the result lines and summary of a small
//! verify run, the answer to each common mistake, and `rlvr doctor`. A change to any of them
//! shows as a diff to review (`cargo insta review`), not as a silent drift.

use std::path::Path;

use serde_json::json;

use crate::support::{SUM, fenced, job, rlvr_in, write_lines};

/// `rlvr ARGUMENTS` in `directory`, as a user sees it: the command, its exit status, stdout and
/// stderr.
fn transcript(arguments: &[&str], directory: &Path) -> String {
    let output = rlvr_in(arguments, directory);
    let mut text = format!(
        "$ rlvr {}\nexit {}\n",
        arguments.join(" "),
        output
            .status
            .code()
            .map_or("by a signal".to_owned(), |code| code.to_string())
    );
    for (name, bytes) in [("stdout", &output.stdout), ("stderr", &output.stderr)] {
        if !bytes.is_empty() {
            text.push_str(&format!("--- {name}\n{}", String::from_utf8_lossy(bytes)));
        }
    }
    text
}

/// A seeded synthetic file with every kind of fault `validate` knows, as `data.jsonl`.
fn faulty_file() -> tempfile::TempDir {
    let directory = tempfile::tempdir().expect("a temporary directory");
    let synth = rlvr_in(
        &[
            "synth",
            "--rows",
            "40",
            "--seed",
            "7",
            "--avg-record-bytes",
            "2000",
            "--inject-faults",
            "data.jsonl",
        ],
        directory.path(),
    );
    assert!(synth.status.success(), "{synth:?}");
    directory
}

#[test]
fn validate_reports_each_fault_with_its_row_line_and_offset() {
    let directory = faulty_file();
    insta::assert_snapshot!(transcript(&["validate", "data.jsonl"], directory.path()));
}

#[test]
fn audit_flags_the_records_whose_rewards_suffer() {
    let directory = faulty_file();
    insta::assert_snapshot!(transcript(&["audit", "data.jsonl"], directory.path()));
}

/// `verify`'s result lines and its summary on stderr, for a right answer, a wrong one, one that
/// fails to compile, one with no code and a job that is not valid; the elapsed time and the
/// rate (the only figures that differ from run to run) are left out of the snapshot.
#[test]
fn verify_prints_a_result_per_job_and_a_summary() {
    let directory = tempfile::tempdir().expect("a temporary directory");
    let truth = json!({"inputs": ["1 2\n", "3 4\n"], "outputs": ["3\n", "7\n"]});
    let lines = [
        job("right", &fenced(SUM), &truth),
        job("wrong", &fenced("print(0)"), &truth),
        job("syntax", &fenced("def broken(:"), &truth),
        job("no-code", "I would rather not.", &truth),
        json!({"id": "no-truth", "response": fenced(SUM)}).to_string(),
    ];
    write_lines(directory.path(), "jobs.jsonl", &lines);
    let arguments = ["verify", "jobs.jsonl", "--workers", "1"];
    let text = transcript(&arguments, directory.path());
    let redacted: Vec<String> = text
        .lines()
        .map(|line| match line.split_once(" tests in ") {
            Some((kept, _)) if line.starts_with("rlvr verify:") => {
                format!("{kept} tests in [elapsed]")
            }
            _ => line.to_owned(),
        })
        .collect();
    insta::assert_snapshot!(redacted.join("\n"));
}

#[test]
fn stats_prints_the_cards_table_and_names_the_lines_left_out() {
    let directory = faulty_file();
    insta::assert_snapshot!(transcript(&["stats", "data.jsonl"], directory.path()));
}

#[test]
fn common_mistakes_get_an_answer_naming_what_is_wrong() {
    let directory = faulty_file();
    std::fs::create_dir(directory.path().join("folder")).expect("a directory");
    std::fs::write(directory.path().join("empty.jsonl"), "").expect("an empty file");
    let mistakes: [&[&str]; 11] = [
        &["validate", "missing.jsonl"],
        &["validate", "folder"],
        &["stats", "empty.jsonl"],
        &["dedup", "data.jsonl", "data.jsonl"],
        &["export", "parquet", "data.jsonl", "data.jsonl"],
        &["split", "data.jsonl", "--out-dir", "data.jsonl"],
        &["show", "data.jsonl", "999"],
        &[
            "convert",
            "--from",
            "upstream",
            "--to",
            "release",
            "folder",
            "out.jsonl",
        ],
        &["verify", "--workers", "0", "data.jsonl"],
        &["import", "parquet", "data.jsonl", "out.jsonl"],
        &[
            "synth",
            "--rows",
            "5",
            "--avg-record-bytes",
            "0",
            "out.jsonl",
        ],
    ];
    let transcripts: Vec<String> = mistakes
        .iter()
        .map(|arguments| transcript(arguments, directory.path()))
        .collect();
    insta::assert_snapshot!(transcripts.join("\n"));
    // Nothing was lost or left behind: the input is whole and no output appeared.
    let listing = || {
        let mut names: Vec<String> = std::fs::read_dir(directory.path())
            .expect("the directory lists")
            .map(|entry| {
                entry
                    .expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        listing(),
        [
            "data.jsonl",
            "data.jsonl.faults.json",
            "empty.jsonl",
            "folder"
        ]
    );
}

/// `rlvr doctor` as an operator reads it on a machine of CI's kind (root, cgroup v1 with the
/// memory and pids controllers, every toolchain): the mode, the active and unavailable
/// protections, the packages, the languages and the self-test, pinned whole. What differs from
/// run to run or from one Debian point release to the next is redacted: milliseconds, cgroup
/// paths, the interpreter's build, toolchain and package versions.
#[test]
fn doctor_reports_the_mode_protections_languages_and_self_test() {
    let directory = tempfile::tempdir().expect("a temporary directory");
    let output = crate::support::rlvr()
        .arg("doctor")
        .current_dir(directory.path())
        .env("RLVR_SANDBOX_UID", "64330")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("rlvr doctor runs");
    let text = String::from_utf8_lossy(&output.stdout);
    if !text.starts_with("mode: root") {
        rlvr_test_support::cannot_run_here(
            "the doctor snapshot is of a root machine with cgroups, as CI's; this one differs",
        );
        return;
    }
    let replacements = [
        (r"\d+ ms", "[ms]"),
        (r#"/sys/fs/cgroup/[^\s,)"]*"#, "[cgroup]"),
        (r"uid \d+", "uid [id]"),
        (
            r"(interpreter: )\S+ \(.*\)",
            "${1}[interpreter] ([version])",
        ),
        (r"(inside the sandbox: )\S+", "${1}[interpreter]"),
        (r"(version )[0-9][^\s]*", "${1}[version]"),
        (
            r"(  ok   \w+: ).*( \([\w+.-]+\): hello world)",
            "${1}[version]${2}",
        ),
    ];
    let mut redacted = format!("exit {}\n{text}", output.status.code().unwrap_or(-1));
    for (pattern, replacement) in replacements {
        redacted = regex::Regex::new(pattern)
            .expect("a valid pattern")
            .replace_all(&redacted, replacement)
            .into_owned();
    }
    insta::assert_snapshot!(redacted);
}
