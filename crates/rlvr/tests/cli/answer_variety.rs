//! Issue 25 end to end: `rlvr audit`, `rlvr card` and `rlvr verify --dataset` find the
//! statements that accept more than one answer; built-in checkers judge honest answers that
//! differ from the reference (real programs in the real sandbox) and refuse hostile outputs;
//! `rlvr check-checker` probes them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::{fenced, rlvr_in};

/// A release record with `statement` as its prompt.
fn record(statement: &str, ground_truth: &Value) -> String {
    json!({
        "prompt": [{"role": "user", "content": statement}],
        "label": ground_truth,
        "metadata": {
            "data_type": "code", "data_source": "coder1_longcot", "ability": "code",
            "style": "rule", "hash": format!("{:x}", statement.len()), "ground_truth": ground_truth
        }
    })
    .to_string()
}

fn sum_truth() -> Value {
    json!({"inputs": ["1 2\n", "3 4\n"], "outputs": ["3\n", "7\n"]})
}

const STATEMENTS: [&str; 4] = [
    "Print a + b.",
    "Print a permutation of 1..n. If there are multiple answers, print any of them.",
    "Print the area. Your answer will be considered correct if its absolute or relative error does not exceed $10^{-6}$.",
    "You can output YES and NO in any case. If there are multiple test cases, print each answer on its own line.",
];

fn dataset(directory: &Path) -> PathBuf {
    let mut lines: Vec<String> = STATEMENTS
        .iter()
        .map(|statement| record(statement, &sum_truth()))
        .collect();
    lines[1] = record(
        STATEMENTS[1],
        &json!({"inputs": ["3\n"], "outputs": ["1 2 3\n"], "checker": "set"}),
    );
    let path = directory.join("data.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

#[test]
fn issue_25_audit_reports_the_phrase_and_epsilon_per_record() {
    let directory = tempfile::tempdir().unwrap();
    dataset(directory.path());
    let output = rlvr_in(&["audit", "data.jsonl", "--json"], directory.path());
    assert_eq!(output.status.code(), Some(1), "flagged rows exit 1");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let flag = report["flags"]
        .as_array()
        .unwrap()
        .iter()
        .find(|flag| flag["flag"] == "answer_may_vary")
        .unwrap()
        .clone();
    assert_eq!(flag["rows"], json!([1, 2]));
    assert_eq!(
        report["answer_may_vary"],
        json!([
            {"row": 1, "phrases": [{"kind": "any_answer", "phrase": "If there are multiple answers, print any of them"}], "checker": "set"},
            {"row": 2, "phrases": [{"kind": "tolerance", "phrase": "absolute or relative error does not exceed 10^{-6}", "epsilon": 1e-6}]}
        ])
    );
    assert_eq!(
        report["answer_may_vary_kinds"],
        json!({"any_answer": 1, "any_order": 0, "tolerance": 1})
    );

    let text = rlvr_in(&["audit", "data.jsonl"], directory.path());
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(
        stdout.contains("answer_may_vary by kind: any_answer 1, any_order 0, tolerance 1"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "row 2: tolerance: \"absolute or relative error does not exceed 10^{-6}\" (epsilon 1e-6)"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("[checker: set]"), "{stdout}");
}

#[test]
fn issue_25_card_charts_the_count() {
    let directory = tempfile::tempdir().unwrap();
    dataset(directory.path());
    let output = rlvr_in(&["card", "data.jsonl", "--out", "card"], directory.path());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.code().is_some_and(|code| code <= 1),
        "{stderr}"
    );
    let readme = std::fs::read_to_string(directory.path().join("card/README.md")).unwrap();
    assert!(readme.contains("charts/answer-may-vary.svg"), "{readme}");
    assert!(
        readme
            .contains("2 of 4 records (50.0%) have a statement that accepts more than one answer"),
        "{readme}"
    );
    assert!(readme.contains("| `tolerance` | 1 |"), "{readme}");
    let chart =
        std::fs::read_to_string(directory.path().join("card/charts/answer-may-vary.svg")).unwrap();
    assert!(chart.starts_with("<svg"));
    for label in ["any answer", "any order", "tolerance", "any kind"] {
        assert!(chart.contains(label), "{label} missing from the chart");
    }
}

/// Runs `rlvr verify` on job lines (written to a file in `directory`) and returns the result
/// lines and stderr.
fn verify(
    directory: &Path,
    jobs: &[Value],
    arguments: &[&str],
) -> (Vec<Value>, String, Option<i32>) {
    let path = directory.join("jobs.jsonl");
    let text: Vec<String> = jobs.iter().map(Value::to_string).collect();
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_rlvr"))
        .arg("verify")
        .arg(&path)
        .args(arguments)
        .current_dir(directory)
        .stdin(Stdio::null())
        .output()
        .expect("rlvr runs");
    let results = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("every result line is JSON"))
        .collect();
    (
        results,
        String::from_utf8_lossy(&output.stderr).into_owned(),
        output.status.code(),
    )
}

fn job(id: &str, code: &str, truth: Value) -> Value {
    json!({"id": id, "response": fenced(code), "ground_truth": truth})
}

fn with_checker(mut truth: Value, checker: &str) -> Value {
    truth["checker"] = json!(checker);
    truth
}

/// Honest answers that differ from the reference output: 0 under exact comparison, 1.0 once
/// the ground truth names the checker the statement calls for; wrong answers stay 0.
#[test]
fn issue_25_honest_answers_that_differ_from_the_reference_now_score_one() {
    let directory = tempfile::tempdir().unwrap();
    let permutation = json!({"inputs": ["3\n", "4\n"], "outputs": ["1\n2\n3\n", "1\n2\n3\n4\n"]});
    let reversed = "n = int(input())\nprint(*range(n, 0, -1), sep='\\n')";
    let missing_one = "n = int(input())\nprint(*range(n, 1, -1), sep='\\n')";
    let third = json!({"inputs": [""], "outputs": ["0.33333333\n"]});
    let set = json!({"inputs": [""], "outputs": ["1 2 3\n"]});
    let row = json!({"inputs": [""], "outputs": ["1 2 3\n"]});
    let cases = [
        // (id, code, ground truth, score)
        ("order/exact", reversed, permutation.clone(), 0.0),
        (
            "order/checker",
            reversed,
            with_checker(permutation.clone(), "lines-any-order"),
            1.0,
        ),
        (
            "order/wrong",
            missing_one,
            with_checker(permutation, "lines-any-order"),
            0.0,
        ),
        ("float/exact", "print(0.3334)", third.clone(), 0.0),
        (
            "float/checker",
            "print(0.3334)",
            with_checker(third.clone(), "float:1e-4"),
            1.0,
        ),
        (
            "float/wrong",
            "print(0.334)",
            with_checker(third.clone(), "float:1e-4"),
            0.0,
        ),
        (
            "float/word",
            "print('one third')",
            with_checker(third.clone(), "float:1e-4"),
            0.0,
        ),
        ("set/exact", "print(3, 1, 2, 1)", set.clone(), 0.0),
        (
            "set/checker",
            "print(3, 1, 2, 1)",
            with_checker(set.clone(), "set"),
            1.0,
        ),
        (
            "set/wrong",
            "print(3, 1, 2, 4)",
            with_checker(set, "set"),
            0.0,
        ),
        (
            "tokens/exact",
            "print(1, 2, 3, sep='\\n')",
            row.clone(),
            0.0,
        ),
        (
            "tokens/checker",
            "print(1, 2, 3, sep='\\n')",
            with_checker(row.clone(), "tokens"),
            1.0,
        ),
        (
            "tokens/wrong",
            "print(1, 3, 2, sep='\\n')",
            with_checker(row, "tokens"),
            0.0,
        ),
    ];
    let jobs: Vec<Value> = cases
        .iter()
        .map(|(id, code, truth, _)| job(id, code, truth.clone()))
        .collect();
    let (results, stderr, code) = verify(directory.path(), &jobs, &["--details"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(results.len(), cases.len(), "{stderr}");
    for ((id, _, truth, score), result) in cases.iter().zip(&results) {
        assert_eq!(result["id"], *id);
        assert_eq!(result["status"], "ok", "{id}: {result}");
        assert_eq!(result["score"], *score, "{id}: {result}");
        let named = truth.get("checker");
        assert_eq!(
            result.get("checker"),
            named,
            "{id}: the result names its checker"
        );
        for test in result["tests"].as_array().unwrap() {
            match named {
                Some(_) => assert_eq!(
                    test["checker_score"],
                    if test["verdict"] == "pass" { 1.0 } else { 0.0 },
                    "{id}: {test}"
                ),
                None => assert!(test.get("checker_score").is_none(), "{id}: {test}"),
            }
        }
    }
    // A reference profile keeps its own comparison unless the record names a checker:
    // Code-R1's strip-equality refuses 0.3333334 for 0.33333333; float:1e-6 accepts it.
    let answer = "<think>\nx\n</think>\n<answer>\n```python\nprint(0.3333334)\n```\n</answer>";
    let jobs = [
        json!({"id": "code-r1/exact", "response": answer, "ground_truth": third.clone()}),
        json!({"id": "code-r1/checker", "response": answer, "ground_truth": with_checker(third, "float:1e-6")}),
    ];
    let (results, stderr, _) = verify(directory.path(), &jobs, &["--profile", "code-r1"]);
    let scores: Vec<&Value> = results.iter().map(|result| &result["score"]).collect();
    assert_eq!(scores, [&json!(0.1), &json!(1.1)], "{stderr}");
}

/// Outputs a policy would aim at the checkers: none earns anything, and none voids a score.
#[test]
fn issue_25_hostile_outputs_aimed_at_checkers_score_zero() {
    let directory = tempfile::tempdir().unwrap();
    let two = json!({"inputs": [""], "outputs": ["0.5 1.5\n"]});
    let lines = json!({"inputs": [""], "outputs": ["1.5\n0.5\n"]});
    let cases = [
        (
            "huge",
            "import sys\nsys.stdout.write('0.5 ' * (5 << 20))",
            "float:1e-6",
            two.clone(),
            "output_limit",
        ),
        (
            "large",
            "import sys\nsys.stdout.write('0.5 ' * (3 << 20))",
            "set",
            two.clone(),
            "wrong_answer",
        ),
        (
            "binary",
            "import sys\nsys.stdout.buffer.write(b'\\xff\\xfe0.5 1.5\\n\\x00')",
            "tokens",
            two.clone(),
            "wrong_answer",
        ),
        (
            "invalid utf-8 token",
            "import sys\nsys.stdout.buffer.write(b'0.5 1.5\\xff\\n')",
            "float:1e-6",
            two.clone(),
            "wrong_answer",
        ),
        (
            "nan",
            "print('nan nan')",
            "float:1e-6",
            two.clone(),
            "wrong_answer",
        ),
        (
            "inf",
            "print('0.5 inf')",
            "float:1e-6",
            two.clone(),
            "wrong_answer",
        ),
        (
            "overflow",
            "print('0.5 1e999')",
            "float:1e-6",
            two.clone(),
            "wrong_answer",
        ),
        (
            "space flood",
            "print(' ' * 10**7)",
            "set",
            two.clone(),
            "wrong_answer",
        ),
        (
            "newline flood",
            "print('\\n' * 10**6 + '0.5\\n1.5')",
            "lines-any-order",
            lines.clone(),
            "wrong_answer",
        ),
        (
            "answer then junk",
            "print('0.5 1.5 junk')",
            "set",
            two.clone(),
            "wrong_answer",
        ),
        (
            "every token twice",
            "print('0.5 1.5 0.5 1.5')",
            "tokens",
            two.clone(),
            "wrong_answer",
        ),
        ("empty", "pass", "lines-any-order", lines, "wrong_answer"),
        (
            "crash after the answer",
            "print('0.5 1.5')\nraise SystemExit(3)",
            "float:1e-6",
            two,
            "runtime_error",
        ),
    ];
    let jobs: Vec<Value> = cases
        .iter()
        .map(|(id, code, checker, truth, _)| job(id, code, with_checker(truth.clone(), checker)))
        .collect();
    let (results, stderr, code) = verify(directory.path(), &jobs, &["--details"]);
    assert_eq!(code, Some(0), "{stderr}");
    for ((id, _, checker, _, verdict), result) in cases.iter().zip(&results) {
        assert_eq!(result["status"], "ok", "{id}: {result}");
        assert_eq!(result["score"], 0.0, "{id}: {result}");
        assert_eq!(result["checker"], *checker, "{id}");
        let test = &result["tests"][0];
        assert_eq!(test["verdict"], *verdict, "{id}: {result}");
        // The checker read the output only when the program ended normally within its limits.
        let read = *verdict == "wrong_answer";
        assert_eq!(test.get("checker_score").is_some(), read, "{id}: {test}");
    }
}

#[test]
fn issue_25_a_checker_rlvr_cannot_run_makes_the_job_invalid_naming_the_key() {
    let directory = tempfile::tempdir().unwrap();
    let io = json!({"inputs": ["1\n"], "outputs": ["1\n"]});
    let listed = "(built-in checkers: float:EPS, tokens, lines-any-order, set)";
    let cases = [
        (with_checker(io.clone(), "exact"), format!("ground truth key \"checker\" names no built-in checker: \"exact\" {listed}")),
        (with_checker(io.clone(), "float:2"), "ground truth key \"checker\" needs a tolerance in (0, 1) after \"float:\", such as \"float:1e-6\"; found \"2\"".to_owned()),
        ({let mut truth = with_checker(io.clone(), "def check(input, output, expected):\n    return True\n"); truth["checker_cpp"] = json!("int main() {}"); truth}, "ground truth key \"checker\" and \"checker_cpp\" are both given; give one".to_owned()),
        ({let mut truth = io.clone(); truth["checker_cpp"] = json!(""); truth}, "ground truth key \"checker_cpp\" must be the C++ source of a testlib-convention checker, found a blank string".to_owned()),
        (json!({"functional": ["assert f() == 1"], "checker": "tokens"}), "ground truth key \"checker\" applies to \"inputs\"/\"outputs\" tests; this ground truth has \"functional\" tests".to_owned()),
    ];
    let mut jobs: Vec<Value> = cases
        .iter()
        .enumerate()
        .map(|(index, (truth, _))| job(&index.to_string(), "print(1)", truth.clone()))
        .collect();
    jobs.push(job("fine", "print(1)", with_checker(io, "tokens")));
    let (results, stderr, code) = verify(directory.path(), &jobs, &[]);
    assert_eq!(code, Some(1), "invalid jobs exit 1: {stderr}");
    for (index, (_, reason)) in cases.iter().enumerate() {
        let result = &results[index];
        assert_eq!(result["status"], "invalid_job", "{result}");
        assert_eq!(result["score"], Value::Null);
        assert_eq!(result["reason"], format!("line {}: {reason}", index + 1));
    }
    assert_eq!(results[cases.len()]["score"], 1.0, "the run goes on");
}

#[test]
fn issue_25_verify_dataset_marks_answers_that_may_vary_and_counts_them() {
    let directory = tempfile::tempdir().unwrap();
    let data = dataset(directory.path());
    let sum = "a, b = map(int, input().split())\nprint(a + b)";
    let jobs: Vec<Value> = (0..4)
        .map(|index| json!({"id": index, "response": fenced(sum), "index": index}))
        .collect();
    let (results, stderr, code) = verify(
        directory.path(),
        &jobs,
        &["--dataset", data.to_str().unwrap()],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let marks: Vec<&Value> = results
        .iter()
        .map(|result| &result["answer_may_vary"])
        .collect();
    assert_eq!(
        marks,
        [&json!(false), &json!(true), &json!(true), &json!(false)]
    );
    assert_eq!(
        results[2]["answer_may_vary_phrases"],
        json!([{"kind": "tolerance", "phrase": "absolute or relative error does not exceed 10^{-6}", "epsilon": 1e-6}])
    );
    assert!(results[0].get("answer_may_vary_phrases").is_none());
    assert_eq!(results[1]["checker"], "set");
    assert!(
        stderr.contains("answer may vary (the statement accepts more than one answer): 2 of 4 dataset jobs (1 judged by a checker)"),
        "{stderr}"
    );
    // A ground truth given inline has no statement: no mark, no count.
    let inline = [json!({"id": "x", "response": fenced(sum), "ground_truth": sum_truth()})];
    let (results, stderr, _) = verify(directory.path(), &inline, &[]);
    assert!(
        results[0].get("answer_may_vary").is_none(),
        "{}",
        results[0]
    );
    assert!(!stderr.contains("answer may vary"), "{stderr}");
}

#[test]
fn issue_25_check_checker_probes_every_checker() {
    let directory = tempfile::tempdir().unwrap();
    let sound = [
        record("Print it.", &json!({"inputs": ["1\n", "2\n"], "outputs": ["0.5 1.5\n", "\n"], "checker": "float:1e-6"})),
        record("Print it.", &sum_truth()),
        json!({"id": 1, "response": "", "ground_truth": {"inputs": ["1"], "outputs": ["b\na\n"], "checker": "lines-any-order"}}).to_string(),
        json!({"reward_model": {"ground_truth": json!({"inputs": ["1"], "outputs": ["x y"], "checker": "set"}).to_string()}}).to_string(),
        json!({"id": 2, "response": "", "ground_truth": {"inputs": ["1"], "outputs": ["x y"], "checker": "tokens"}}).to_string(),
    ];
    std::fs::write(
        directory.path().join("sound.jsonl"),
        sound.join("\n") + "\n",
    )
    .unwrap();
    let output = rlvr_in(&["check-checker", "sound.jsonl"], directory.path());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.starts_with("5 rows, 4 with a checker (float:1e-6 1, lines-any-order 1, set 1, tokens 1); 5 tests probed (1 with a blank expected output"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "0 accept garbage, 0 reject their expected output, 0 fail (checker_error), 0 unusable"
        ),
        "{stdout}"
    );

    let mut problems = sound.to_vec();
    problems.push(record(
        "Print it.",
        &json!({"inputs": ["1"], "outputs": ["1"], "checker": "exact"}),
    ));
    problems.push("{not json".to_owned());
    std::fs::write(
        directory.path().join("problems.jsonl"),
        problems.join("\n") + "\n",
    )
    .unwrap();
    let output = rlvr_in(
        &["check-checker", "problems.jsonl", "--json"],
        directory.path(),
    );
    assert_eq!(output.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["unusable"], 1);
    assert_eq!(report["problems"][0]["row"], 5);
    assert_eq!(report["problems"][0]["line"], 6);
    assert!(
        report["problems"][0]["unusable"]
            .as_str()
            .unwrap()
            .starts_with("field `metadata.ground_truth`: ground truth key \"checker\" names no built-in checker: \"exact\""),
        "{report}"
    );
    let bad = report["bad_lines"][0].as_str().unwrap();
    assert!(
        bad.contains("problems.jsonl:7: row 6, byte offset "),
        "{bad}"
    );

    for (file, text) in [("empty.jsonl", "\n\n"), ("missing.jsonl", "")] {
        if !text.is_empty() {
            std::fs::write(directory.path().join(file), text).unwrap();
        }
        let output = rlvr_in(&["check-checker", file], directory.path());
        assert_eq!(output.status.code(), Some(2), "{file}");
    }
}
