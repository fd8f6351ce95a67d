//! Issue 34: `rlvr serve --dataset FILE` holds the dataset, and `/v1/verify` jobs name a row by
//! `"index"` or `"hash"` instead of carrying its tests, with an error naming what is wrong for
//! an unknown row, an ambiguous hash, a job naming a row of no dataset, or a bad `--dataset`.

use std::process::Command;

use serde_json::{Value, json};

use crate::support::{Served, fenced};

/// Three rows (the second with a lone surrogate in its prompt, as the release has), two sharing
/// a hash, one blank line: rows are numbered like `rlvr verify --dataset` numbers them.
fn dataset(directory: &std::path::Path) -> std::path::PathBuf {
    let row = |hash: &str, factor: u32| {
        json!({
            "prompt": [{"role": "user", "content": format!("Print n times {factor}.")}],
            "label": {"inputs": ["2\n", "5\n"], "outputs": [format!("{}\n", 2 * factor), format!("{}\n", 5 * factor)]},
            "metadata": {"data_type": "code", "data_source": "coder1_longcot", "ability": "code", "style": "rule", "hash": hash, "ground_truth": {"inputs": ["2\n", "5\n"], "outputs": [format!("{}\n", 2 * factor), format!("{}\n", 5 * factor)]}},
        })
        .to_string()
    };
    let second = row("tripling", 3).replace("Print n", "Print \\ud800 n");
    let lines = [
        row("doubling", 2),
        String::new(),
        second,
        row("shared", 4),
        row("shared", 4),
    ];
    let path = directory.join("data.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

fn times(factor: u32) -> String {
    fenced(&format!("print(int(input()) * {factor})"))
}

fn results(served: &Served, jobs: Value) -> Vec<Value> {
    let answer = served.post_ok("/v1/verify", &json!({ "jobs": jobs }));
    answer["results"].as_array().unwrap().clone()
}

fn reason(result: &Value) -> &str {
    assert_eq!(result["status"], "invalid_job", "{result}");
    assert!(result["score"].is_null(), "{result}");
    result["reason"].as_str().unwrap()
}

#[test]
fn serve_with_a_dataset_scores_jobs_that_name_their_row_by_index_or_hash() {
    let directory = tempfile::tempdir().unwrap();
    let path = dataset(directory.path());
    let served = Served::start_logged(&["--workers", "2", "--dataset", path.to_str().unwrap()]);
    let answers = results(
        &served,
        json!([
            {"id": "by-index", "response": times(2), "index": 0},
            {"id": "by-hash", "response": times(3), "hash": "tripling"},
            {"id": "wrong-by-hash", "response": times(2), "hash": "tripling"},
            {"id": "inline", "response": times(5), "ground_truth": {"inputs": ["1\n"], "outputs": ["5\n"]}},
            {"id": "past-the-end", "response": times(2), "index": 4},
            {"id": "unknown-hash", "response": times(2), "hash": "nowhere"},
            {"id": "shared-hash", "response": times(4), "hash": "shared"},
            {"id": "both", "response": times(2), "hash": "doubling", "index": 0},
            {"id": "not-a-string", "response": times(2), "hash": 7},
            {"id": "negative", "response": times(2), "index": -1},
        ]),
    );
    let ids: Vec<&Value> = answers.iter().map(|result| &result["id"]).collect();
    assert_eq!(ids[0], "by-index", "results in job order");
    assert_eq!(answers[0]["score"], 1.0, "{}", answers[0]);
    assert_eq!(answers[1]["score"], 1.0, "{}", answers[1]);
    assert_eq!(
        answers[2]["score"], 0.0,
        "the row's tests, not any others: {}",
        answers[2]
    );
    assert_eq!(
        answers[3]["score"], 1.0,
        "inline jobs still work: {}",
        answers[3]
    );
    let past = reason(&answers[4]);
    assert!(
        past.contains("`index` 4 is past the end of") && past.contains("(4 rows)"),
        "{past}"
    );
    let unknown = reason(&answers[5]);
    assert!(
        unknown.contains("`hash` \"nowhere\" is not the `metadata.hash` of any row of"),
        "{unknown}"
    );
    let shared = reason(&answers[6]);
    assert!(
        shared.contains("several rows")
            && shared.contains("[2, 3]")
            && shared.contains("by `index`"),
        "{shared}"
    );
    assert!(
        reason(&answers[7]).contains("give one of `ground_truth`, `index` or `hash`"),
        "{}",
        answers[7]
    );
    assert!(
        reason(&answers[8]).contains("`hash` must be a string, found"),
        "{}",
        answers[8]
    );
    assert!(
        reason(&answers[9]).contains("`index` must be a non-negative integer"),
        "{}",
        answers[9]
    );
    assert!(
        served
            .log()
            .contains("data.jsonl: 4 rows, 4 with a metadata.hash"),
        "{}",
        served.log()
    );
}

#[test]
fn serve_without_a_dataset_says_a_named_row_needs_one() {
    let served = Served::start(&["--workers", "1"]);
    let answers = results(
        &served,
        json!([
            {"id": 0, "response": times(2), "index": 0},
            {"id": 1, "response": times(2), "hash": "doubling"},
        ]),
    );
    for (result, key) in answers.iter().zip(["index", "hash"]) {
        let text = reason(result);
        assert!(
            text.contains(&format!(
                "`{key}` needs a dataset: start rlvr serve with --dataset FILE"
            )),
            "{text}"
        );
    }
}

#[test]
fn serve_refuses_a_dataset_it_cannot_read() {
    let directory = tempfile::tempdir().unwrap();
    let empty = directory.path().join("empty.jsonl");
    std::fs::write(&empty, "\n\n").unwrap();
    let broken = directory.path().join("broken.jsonl");
    std::fs::write(&broken, "{\"label\": {}}\nnot json\n").unwrap();
    let missing = directory.path().join("missing.jsonl");
    for (path, expected) in [
        (&empty, "no rows".to_owned()),
        (&broken, "broken.jsonl row 1 (line 2".to_owned()),
        (&missing, "missing.jsonl".to_owned()),
        (
            &directory.path().to_path_buf(),
            "holds no .parquet file".to_owned(),
        ),
    ] {
        let refused = Command::new(env!("CARGO_BIN_EXE_rlvr"))
            .args([
                "serve",
                "--addr",
                "127.0.0.1:0",
                "--workers",
                "1",
                "--dataset",
            ])
            .arg(path)
            .output()
            .expect("rlvr serve runs");
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{stderr}");
        assert!(refused.stdout.is_empty(), "nothing was bound: {stderr}");
        assert!(
            stderr.contains("--dataset: ") && stderr.contains(&expected),
            "{expected}: {stderr}"
        );
    }
}

#[test]
fn serve_holds_an_exported_parquet_directory_as_its_dataset() {
    let directory = tempfile::tempdir().unwrap();
    let path = dataset(directory.path());
    let exported = directory.path().join("hf");
    let export = Command::new(env!("CARGO_BIN_EXE_rlvr"))
        .args(["export", "parquet"])
        .arg(&path)
        .arg(&exported)
        .output()
        .expect("rlvr export runs");
    assert!(
        export.status.success(),
        "{}",
        String::from_utf8_lossy(&export.stderr)
    );
    let served = Served::start_logged(&["--workers", "1", "--dataset", exported.to_str().unwrap()]);
    let answers = results(
        &served,
        json!([
            {"id": 0, "response": times(3), "hash": "tripling"},
            {"id": 1, "response": times(2), "index": 0},
            {"id": 2, "response": times(2), "index": 1},
        ]),
    );
    let scores: Vec<&Value> = answers.iter().map(|result| &result["score"]).collect();
    assert_eq!(scores, [1.0, 1.0, 0.0], "{answers:?}");
    assert!(
        served.log().contains(": 4 rows, 4 with a metadata.hash"),
        "{}",
        served.log()
    );
    let leftovers = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|entry| {
            entry.file_name().to_string_lossy()
                == format!("rlvr-serve-dataset-{}.jsonl", served.id())
        })
        .count();
    assert_eq!(leftovers, 0, "the restored JSONL is unlinked once indexed");
}
