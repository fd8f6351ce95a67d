//! CLI tests of the data products (issue 7): export/import round trips, leak-free splits,
//! dedup, convert round trip, exit statuses. Each test works in its own temporary directory on
//! a file made by `rlvr synth` (repeated prompts and list-valued test values included).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::rlvr_in;

fn synth(directory: &Path, rows: &str) -> PathBuf {
    let output = rlvr_in(
        &[
            "synth",
            "source.jsonl",
            "--rows",
            rows,
            "--seed",
            "11",
            "--avg-record-bytes",
            "4000",
        ],
        directory,
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    directory.join("source.jsonl")
}

fn read(path: &Path) -> Vec<u8> {
    fs_err::read(path).unwrap_or_else(|error| panic!("{error}"))
}

fn normalized_prompt(line: &str) -> String {
    let value: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
    let prompt = value["prompt"][0]["content"].as_str().unwrap_or_default();
    let is_space =
        |character: char| character.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&character);
    prompt
        .split(is_space)
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn export_then_import_reproduces_the_source_byte_for_byte() {
    let directory = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    let source = synth(directory.path(), "250");
    for layout in ["hf", "verl"] {
        let out = format!("export-{layout}");
        let export = rlvr_in(
            &[
                "export",
                "parquet",
                "source.jsonl",
                &out,
                "--layout",
                layout,
                "--shard-size",
                "50KB",
                "--row-group-rows",
                "20",
            ],
            directory.path(),
        );
        assert_eq!(
            export.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&export.stderr)
        );
        let shards: Vec<_> = fs_err::read_dir(directory.path().join(&out).join("data"))
            .unwrap_or_else(|error| panic!("{error}"))
            .filter_map(Result::ok)
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            shards.len() > 1,
            "a small --shard-size gives several shards: {shards:?}"
        );
        let count = shards.len();
        assert!(
            shards.iter().all(|name| name.starts_with("train-")
                && name.ends_with(&format!("-of-{count:05}.parquet")))
        );
        let readme = String::from_utf8(read(&directory.path().join(&out).join("README.md")))
            .unwrap_or_default();
        assert!(readme.contains("configs:\n- config_name: default\n"));
        let back = format!("back-{layout}.jsonl");
        let import = rlvr_in(&["import", "parquet", &out, &back], directory.path());
        assert_eq!(
            import.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&import.stderr)
        );
        assert!(
            read(&directory.path().join(&back)) == read(&source),
            "{layout} import differs from the source"
        );
    }
}

#[test]
fn export_refuses_to_mix_with_an_earlier_export() {
    let directory = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    synth(directory.path(), "20");
    assert_eq!(
        rlvr_in(
            &["export", "parquet", "source.jsonl", "out"],
            directory.path()
        )
        .status
        .code(),
        Some(0)
    );
    assert_eq!(
        rlvr_in(
            &["export", "parquet", "source.jsonl", "out"],
            directory.path()
        )
        .status
        .code(),
        Some(2)
    );
    assert_eq!(
        rlvr_in(
            &["export", "parquet", "source.jsonl", "out", "--overwrite"],
            directory.path()
        )
        .status
        .code(),
        Some(0)
    );
}

#[test]
fn split_never_puts_one_prompt_group_in_two_splits() {
    let directory = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    let source = synth(directory.path(), "400");
    let source_text = String::from_utf8(read(&source)).unwrap_or_default();
    let distinct: HashSet<String> = source_text.lines().map(normalized_prompt).collect();
    assert!(
        distinct.len() < 400,
        "the synthetic file must repeat prompts for this test to mean anything"
    );
    let output = rlvr_in(
        &[
            "split",
            "source.jsonl",
            "--out-dir",
            "splits",
            "--val-fraction",
            "0.1",
            "--test-fraction",
            "0.2",
            "--seed",
            "5",
        ],
        directory.path(),
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut seen: Vec<HashSet<String>> = Vec::new();
    let mut total = 0;
    for name in ["train", "validation", "test"] {
        let text = String::from_utf8(read(
            &directory
                .path()
                .join("splits")
                .join(format!("{name}.jsonl")),
        ))
        .unwrap_or_default();
        total += text.lines().count();
        seen.push(text.lines().map(normalized_prompt).collect());
    }
    assert_eq!(total, 400);
    for (left, right) in [(0, 1), (0, 2), (1, 2)] {
        assert!(
            seen[left].is_disjoint(&seen[right]),
            "splits {left} and {right} share a prompt group"
        );
    }
    let again = rlvr_in(
        &[
            "split",
            "source.jsonl",
            "--out-dir",
            "again",
            "--val-fraction",
            "0.1",
            "--test-fraction",
            "0.2",
            "--seed",
            "5",
        ],
        directory.path(),
    );
    assert!(again.status.success());
    for name in ["train", "validation", "test"] {
        let file = format!("{name}.jsonl");
        assert!(
            read(&directory.path().join("splits").join(&file))
                == read(&directory.path().join("again").join(&file))
        );
    }
}

#[test]
fn dedup_keeps_first_occurrences_in_order() {
    let directory = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    let source = synth(directory.path(), "300");
    let output = rlvr_in(
        &["dedup", "source.jsonl", "deduped.jsonl", "--by", "exact"],
        directory.path(),
    );
    assert_eq!(output.status.code(), Some(0));
    let source_text = String::from_utf8(read(&source)).unwrap_or_default();
    let mut seen = HashSet::new();
    let expected: Vec<&str> = source_text
        .lines()
        .filter(|line| {
            let value: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
            seen.insert(
                value["prompt"][0]["content"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect();
    let deduped =
        String::from_utf8(read(&directory.path().join("deduped.jsonl"))).unwrap_or_default();
    assert!(expected.len() < 300);
    assert_eq!(deduped.lines().collect::<Vec<_>>(), expected);
}

#[test]
fn convert_round_trips_through_the_upstream_layout() {
    let directory = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    let source = synth(directory.path(), "120");
    let to_upstream = rlvr_in(
        &[
            "convert",
            "--from",
            "release",
            "--to",
            "upstream",
            "source.jsonl",
            "upstream.jsonl",
        ],
        directory.path(),
    );
    assert_eq!(to_upstream.status.code(), Some(0));
    let upstream =
        String::from_utf8(read(&directory.path().join("upstream.jsonl"))).unwrap_or_default();
    let first: serde_json::Value =
        serde_json::from_str(upstream.lines().next().unwrap_or_default()).unwrap_or_default();
    assert!(
        first["reward_model"]["ground_truth"].is_string(),
        "upstream keeps the tests as a JSON string"
    );
    let back = rlvr_in(
        &[
            "convert",
            "--from",
            "upstream",
            "--to",
            "release",
            "upstream.jsonl",
            "back.jsonl",
        ],
        directory.path(),
    );
    assert_eq!(back.status.code(), Some(0));
    assert!(read(&directory.path().join("back.jsonl")) == read(&source));
}

#[test]
fn unreadable_input_is_a_usage_error() {
    let directory = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    for arguments in [
        vec!["export", "parquet", "missing.jsonl", "out"],
        vec!["split", "missing.jsonl", "--out-dir", "out"],
        vec!["dedup", "missing.jsonl", "out.jsonl"],
        vec!["audit", "missing.jsonl"],
        vec!["import", "parquet", "missing", "out.jsonl"],
    ] {
        assert_eq!(
            rlvr_in(&arguments, directory.path()).status.code(),
            Some(2),
            "{arguments:?}"
        );
    }
}

#[test]
fn audit_and_card_report_on_a_synthetic_file() {
    let directory = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    synth(directory.path(), "150");
    let audit = rlvr_in(&["audit", "source.jsonl", "--json"], directory.path());
    let report: serde_json::Value = serde_json::from_slice(&audit.stdout).unwrap_or_default();
    assert_eq!(report["rows"], 150);
    assert_eq!(report["flags"].as_array().map(Vec::len), Some(9));
    let card = rlvr_in(&["card", "source.jsonl", "--out", "card"], directory.path());
    assert_eq!(
        card.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&card.stderr)
    );
    let readme = String::from_utf8(read(&directory.path().join("card").join("README.md")))
        .unwrap_or_default();
    for chart in [
        "prompt-length",
        "tests-per-record",
        "test-kinds",
        "duplicate-groups",
    ] {
        assert!(readme.contains(&format!("charts/{chart}.svg")));
        assert!(
            read(
                &directory
                    .path()
                    .join("card")
                    .join("charts")
                    .join(format!("{chart}.svg"))
            )
            .starts_with(b"<svg")
        );
    }
}

/// Issue 13: `export` exited 1 ("label differs from metadata.ground_truth") on a file that
/// validate and stats accept, when only the key order of `label` differs. One equality function
/// serves all three now.
#[test]
fn issue_13_export_accepts_labels_that_differ_only_in_key_order() {
    let directory = tempfile::tempdir().unwrap();
    let source = synth(directory.path(), "30");
    let reorder = "import json, sys\n\
        for line in open(sys.argv[1]):\n\
        \x20   record = json.loads(line)\n\
        \x20   record['label'] = dict(reversed(list(record['label'].items())))\n\
        \x20   print(json.dumps(record))\n";
    let reordered = Command::new(std::env::var("RLVR_PYTHON").unwrap_or_else(|_| "python3".into()))
        .args(["-c", reorder])
        .arg(&source)
        .output()
        .unwrap();
    assert!(
        reordered.status.success(),
        "{}",
        String::from_utf8_lossy(&reordered.stderr)
    );
    let original = String::from_utf8(read(&source)).unwrap();
    let changed = String::from_utf8(reordered.stdout).unwrap();
    assert_ne!(original, changed, "the label keys were reordered");
    fs_err::write(directory.path().join("reordered.jsonl"), &changed).unwrap();
    for command in [
        &["validate", "reordered.jsonl"][..],
        &["stats", "reordered.jsonl", "--no-hash"],
    ] {
        let output = rlvr_in(command, directory.path());
        assert_eq!(
            output.status.code(),
            Some(0),
            "{command:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let output = rlvr_in(
        &["export", "parquet", "reordered.jsonl", "out"],
        directory.path(),
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("label differs"), "{stderr}");
}
