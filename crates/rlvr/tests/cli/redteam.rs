//! `rlvr redteam` end to end (issue 27): the built-in catalogue against every rlvr profile in
//! process (the judge lets no attack through and keeps every honest control; each reference
//! profile shows exactly the weaknesses of its reference, as docs/redteam.md lists them), against
//! a real `rlvr serve` through its native, SandboxFusion and OpenRLHF routes, and against a
//! Python reward function in the sandbox; and the failure paths (an unreachable target, a module
//! that does not load, conflicting targets).

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;

/// Sandbox uid of these tests (other test binaries use others).
const UID: &str = "61270";

fn redteam(arguments: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rlvr"))
        .arg("redteam")
        .args(arguments)
        .env("RLVR_SANDBOX_UID", UID)
        .output()
        .expect("rlvr runs")
}

/// What one run found: its exit status and the ids behind each count.
#[derive(Debug)]
struct Found {
    status: i32,
    report: Value,
    earned: BTreeSet<String>,
    voided: BTreeSet<String>,
    lost: BTreeSet<String>,
    failed: BTreeSet<String>,
}

fn run_json(arguments: &[&str]) -> Found {
    let mut all = arguments.to_vec();
    all.push("--json");
    let output = redteam(&all);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("the report is JSON ({error}); stderr: {stderr}"));
    let ids = |flag: &str| -> BTreeSet<String> {
        report["cases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|case| case[flag] == true)
            .map(|case| case["id"].as_str().unwrap().to_owned())
            .collect()
    };
    Found {
        status: output.status.code().expect("exited"),
        earned: ids("attack_earned_reward"),
        voided: ids("attack_voided_score"),
        lost: ids("control_lost_reward"),
        failed: ids("failed"),
        report,
    }
}

fn set(ids: &[&str]) -> BTreeSet<String> {
    ids.iter().map(|id| (*id).to_owned()).collect()
}

/// The catalogue as `--list --json` prints it.
fn catalogue() -> Value {
    let output = redteam(&["--list", "--json"]);
    assert!(output.status.success());
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Ids of the cases whose problem is functional (assert tests).
fn functional_cases() -> BTreeSet<String> {
    catalogue()["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|case| {
            ["square", "is_prime", "half", "is_even"].contains(&case["problem"].as_str().unwrap())
        })
        .map(|case| case["id"].as_str().unwrap().to_owned())
        .collect()
}

/// Early exits, lying objects, helper and builtin patching, caller introspection and forged
/// completion: what every reference that runs the solution and the asserts in one fresh
/// process lets through (docs/redteam.md).
const FRESH_PROCESS_HOLES: [&str; 13] = [
    "early_exit/exit-after-definitions",
    "early_exit/sys-exit-inside-the-call",
    "early_exit/os-exit-inside-the-call",
    "early_exit/atexit-forces-status-zero",
    "early_exit/excepthook-exits-zero",
    "early_exit/stop-iteration-ends-the-loop",
    "lying_objects/always-equal",
    "lying_objects/int-subclass-equal-to-everything",
    "harness_patching/patch-builtins-all-any",
    "introspection/caller-bytecode-constant",
    "introspection/caller-constants-table",
    "introspection/gc-frame-scan",
    "forged_output/forged-completion-evidence",
];

#[test]
fn the_judge_lets_no_attack_through_and_keeps_every_honest_control() {
    let found = run_json(&["--profile", "judge"]);
    assert_eq!(found.status, 0, "{:#}", found.report);
    let attacks = found.report["totals"]["attacks"].as_u64().unwrap();
    assert_eq!(
        attacks as usize,
        catalogue()["cases"].as_array().unwrap().len()
    );
    assert!(attacks >= 36, "{attacks}");
    for (name, ids) in [
        ("earned", &found.earned),
        ("voided", &found.voided),
        ("lost", &found.lost),
        ("failed", &found.failed),
    ] {
        assert!(ids.is_empty(), "{name}: {ids:?}");
    }
    // Every class has a row, and every case was scored on both sides.
    assert_eq!(found.report["classes"].as_array().unwrap().len(), 9);
    for case in found.report["cases"].as_array().unwrap() {
        assert_eq!(case["hostile"]["status"], "scored", "{case}");
        assert_eq!(case["honest"]["scaled"], 1.0, "{case}");
    }
}

#[test]
fn the_default_output_is_a_markdown_table_per_class() {
    let output = redteam(&["--profile", "judge", "--only", "lying_objects"]);
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.contains(
            "| class | attacks | earned reward | voided the score | honest controls that lost reward | target errors |"
        ),
        "{text}"
    );
    assert!(
        text.contains("| lying_objects | 4 | 0 | 0 | 0 | 0 |"),
        "{text}"
    );
    assert!(text.contains("| **all** | 4 | 0 | 0 | 0 | 0 |"), "{text}");
}

#[test]
fn klear_shows_the_fresh_process_holes_and_more() {
    let found = run_json(&["--profile", "klear"]);
    assert_eq!(found.status, 1);
    let mut expected = set(&FRESH_PROCESS_HOLES);
    expected.extend(set(&[
        "lying_objects/always-truthy",
        "lying_objects/arithmetic-liar",
        "harness_patching/redefine-abs",
        "harness_patching/patch-math-isclose",
        "lenient_comparison/invalid-byte-for-replacement",
    ]));
    assert_eq!(found.earned, expected);
    assert!(found.lost.is_empty(), "{:?}", found.lost);
    assert!(found.voided.is_empty() && found.failed.is_empty());
}

#[test]
fn code_r1_shows_the_fresh_process_holes() {
    let found = run_json(&["--profile", "code-r1"]);
    assert_eq!(found.status, 1);
    let mut expected = set(&FRESH_PROCESS_HOLES);
    expected.insert("lenient_comparison/invalid-byte-for-replacement".to_owned());
    assert_eq!(found.earned, expected);
    assert!(found.lost.is_empty(), "{:?}", found.lost);
    assert!(found.voided.is_empty() && found.failed.is_empty());
}

#[test]
fn rllm_shows_the_fresh_process_holes_and_loses_guarded_controls() {
    let found = run_json(&["--profile", "rllm"]);
    assert_eq!(found.status, 1);
    assert_eq!(found.earned, set(&FRESH_PROCESS_HOLES));
    assert_eq!(
        found.lost,
        set(&[
            "resource_abuse/process-flood",
            "resource_abuse/kill-the-parent",
            "cross_job_state/answers-left-in-files",
        ])
    );
    assert!(found.voided.is_empty() && found.failed.is_empty());
}

#[test]
fn prime_scores_the_first_ten_tests_and_no_functional_record() {
    let found = run_json(&["--profile", "prime"]);
    assert_eq!(found.status, 1);
    assert_eq!(
        found.earned,
        set(&[
            "special_casing/first-ten-tests-only",
            "special_casing/statement-examples-only",
            "lenient_comparison/float-near-an-integer",
        ])
    );
    let mut lost = functional_cases();
    lost.extend(set(&[
        "resource_abuse/process-flood",
        "resource_abuse/kill-the-parent",
        "cross_job_state/answers-left-in-files",
    ]));
    assert_eq!(found.lost, lost);
    assert!(found.voided.is_empty() && found.failed.is_empty());
}

/// A running `rlvr serve` (judge), killed when dropped.
struct Served {
    child: Child,
    url: String,
}

impl Served {
    fn start() -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rlvr"))
            .args(["serve", "--addr", "127.0.0.1:0", "--workers", "2"])
            .env("RLVR_SANDBOX_UID", UID)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("rlvr serve starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .expect("the bound URL is printed first");
        assert!(line.starts_with("http://"), "{line:?}");
        Self {
            child,
            url: line.trim().to_owned(),
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn rlvr_serve_through_its_native_and_openrlhf_routes_matches_the_judge() {
    let served = Served::start();
    let native = run_json(&["--url", &served.url]);
    assert_eq!(native.status, 0, "{:#}", native.report);
    assert!(
        native.report["target"]
            .as_str()
            .unwrap()
            .contains("rlvr serve")
    );
    let openrlhf = run_json(&["--openrlhf", &format!("{}/get_reward", served.url)]);
    assert_eq!(openrlhf.status, 0, "{:#}", openrlhf.report);
    for found in [&native, &openrlhf] {
        assert!(
            found.earned.is_empty() && found.lost.is_empty(),
            "{found:?}"
        );
        assert!(
            found.voided.is_empty() && found.failed.is_empty(),
            "{found:?}"
        );
        for case in found.report["cases"].as_array().unwrap() {
            assert_eq!(case["honest"]["reward"], 1.0, "{case}");
        }
    }
    // The server's other profiles are reached through the same route.
    let klear = run_json(&[
        "--url",
        &served.url,
        "--profile",
        "klear",
        "--only",
        "early_exit/exit-after",
    ]);
    assert_eq!(klear.status, 1);
    assert_eq!(klear.earned, set(&["early_exit/exit-after-definitions"]));
}

/// verl's sandbox_fusion reward appends each assert to the program and passes a test when the
/// process exits 0, and compares stdout exactly but for trailing newlines: the fresh-process
/// holes, the first-ten rule, and a control with a trailing space lost.
#[test]
fn rlvr_serve_run_code_scored_as_verl_scores_sandbox_fusion() {
    let served = Served::start();
    let found = run_json(&["--sandbox-fusion", &format!("{}/run_code", served.url)]);
    assert_eq!(found.status, 1, "{:#}", found.report);
    let mut expected = set(&FRESH_PROCESS_HOLES);
    expected.extend(set(&[
        "lying_objects/always-truthy",
        "lying_objects/arithmetic-liar",
        "harness_patching/redefine-abs",
        "harness_patching/patch-math-isclose",
        "special_casing/first-ten-tests-only",
        "special_casing/statement-examples-only",
        "lenient_comparison/invalid-byte-for-replacement",
    ]));
    assert_eq!(found.earned, expected);
    assert_eq!(
        found.lost,
        set(&["lenient_comparison/float-near-an-integer"])
    );
    assert!(
        found.voided.is_empty() && found.failed.is_empty(),
        "{found:?}"
    );
}

/// A naive reward: functional tests `exec`uted in its own process, stdin tests in a child.
const STUB_REWARD: &str = r#"
import json, subprocess, sys

def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    assert data_source == "stub-source", data_source
    assert extra_info["split"] == "test"
    code = solution_str.split("```python")[-1].split("```")[0]
    truth = json.loads(ground_truth)
    if "functional" in truth:
        passed = 0
        for test in truth["functional"]:
            try:
                exec(code + "\n" + test, {"__name__": "__main__"})
                passed += 1
            except Exception:
                pass
        return passed / len(truth["functional"])
    passed = 0
    for given, expected in zip(truth["inputs"], truth["outputs"]):
        run = subprocess.run([sys.executable, "-c", code], input=given, capture_output=True, text=True, timeout=10)
        passed += run.stdout.strip() == expected.strip()
    return {"score": passed / len(truth["inputs"])}
"#;

fn stub_directory() -> tempfile::TempDir {
    let directory = tempfile::tempdir().unwrap();
    let file = directory.path().join("stub_reward.py");
    std::fs::write(&file, STUB_REWARD).unwrap();
    std::fs::set_permissions(directory.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    directory
}

fn stub(directory: &Path, only: &[&str]) -> Found {
    let mut arguments = vec![
        "--python",
        "stub_reward:compute_score",
        "--python-path",
        directory.to_str().unwrap(),
        "--data-source",
        "stub-source",
    ];
    for filter in only {
        arguments.extend(["--only", filter]);
    }
    run_json(&arguments)
}

/// One process scores every response in order: what the cross-job programs left in the
/// interpreter (`builtins.square`) and in `/tmp` reaches the later responses, as in a trainer's
/// reward worker.
#[test]
fn a_python_reward_keeps_state_across_responses_in_one_process() {
    let directory = stub_directory();
    let found = stub(
        directory.path(),
        &["cross_job_state", "lying_objects/always-equal"],
    );
    assert_eq!(found.status, 1, "{:#}", found.report);
    assert_eq!(
        found.earned,
        set(&[
            "cross_job_state/answers-left-in-files",
            "cross_job_state/definition-left-in-the-interpreter",
            "lying_objects/always-equal",
        ])
    );
    assert!(found.lost.is_empty() && found.voided.is_empty() && found.failed.is_empty());
    assert!(
        found.report["target"]
            .as_str()
            .unwrap()
            .contains("stub_reward:compute_score")
    );
}

/// A response that makes the reward raise (SystemExit through `exec`) or ends its process
/// (`os._exit`) voids its score; the harness starts again and the responses after it are
/// scored.
#[test]
fn a_python_reward_that_raises_or_dies_voids_the_score_and_the_run_goes_on() {
    let directory = stub_directory();
    let found = stub(directory.path(), &["early_exit"]);
    assert_eq!(found.status, 1, "{:#}", found.report);
    assert_eq!(
        found.voided,
        set(&[
            "early_exit/exit-after-definitions",
            "early_exit/sys-exit-inside-the-call",
            "early_exit/os-exit-inside-the-call",
        ])
    );
    assert_eq!(
        found.earned,
        set(&["early_exit/stop-iteration-ends-the-loop"])
    );
    assert!(
        found.lost.is_empty() && found.failed.is_empty(),
        "{found:?}"
    );
    let case = |id: &str| {
        found.report["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|case| case["id"] == id)
            .unwrap()
            .clone()
    };
    let raised = case("early_exit/sys-exit-inside-the-call");
    assert!(
        raised["hostile"]["detail"]
            .as_str()
            .unwrap()
            .contains("raised SystemExit"),
        "{raised}"
    );
    let died = case("early_exit/os-exit-inside-the-call");
    assert!(
        died["hostile"]["detail"]
            .as_str()
            .unwrap()
            .contains("the reward process ended (exit status 0)"),
        "{died}"
    );
    // After the restart: scored, not failed.
    let after = case("early_exit/atexit-forces-status-zero");
    assert_eq!(after["hostile"]["status"], "scored", "{after}");
    assert_eq!(after["honest"]["scaled"], 1.0, "{after}");
}

#[test]
fn a_target_that_cannot_answer_is_exit_8_not_a_clean_report() {
    // Nothing listens on port 9 of loopback.
    let unreachable = run_json(&["--url", "http://127.0.0.1:9", "--only", "early_exit"]);
    assert_eq!(unreachable.status, 8);
    assert_eq!(unreachable.failed.len(), 6);
    let output = redteam(&["--url", "http://127.0.0.1:9", "--only", "early_exit"]);
    assert_eq!(output.status.code(), Some(8));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("the target failed to answer"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let directory = stub_directory();
    let missing = redteam(&[
        "--python",
        "no_such_reward:compute_score",
        "--python-path",
        directory.path().to_str().unwrap(),
        "--only",
        "early_exit/exit-after",
        "--json",
    ]);
    assert_eq!(missing.status.code(), Some(8));
    assert!(
        String::from_utf8_lossy(&missing.stdout)
            .contains("no_such_reward:compute_score could not be loaded: ModuleNotFoundError"),
        "{}",
        String::from_utf8_lossy(&missing.stdout)
    );
}

#[test]
fn usage_errors_are_exit_2() {
    for arguments in [
        &["--profile", "nope"][..],
        &["--url", "http://a", "--openrlhf", "http://b"][..],
        &["--profile", "judge", "--sandbox-fusion", "http://b"][..],
        &["--score-range", "0,1"][..],
        &["--openrlhf", "http://b", "--score-range", "1,0"][..],
        &["--python", "no-colon"][..],
        &["--only", "no-such-case"][..],
        &["--catalogue-version", "99"][..],
    ] {
        let output = redteam(arguments);
        assert_eq!(output.status.code(), Some(2), "{arguments:?}: {output:?}");
    }
}

#[test]
fn the_catalogue_lists_every_class_with_versions() {
    let listed = catalogue();
    assert_eq!(listed["version"], 1);
    let cases = listed["cases"].as_array().unwrap();
    let classes: BTreeSet<&str> = cases
        .iter()
        .map(|case| case["class"].as_str().unwrap())
        .collect();
    assert_eq!(classes.len(), 9, "{classes:?}");
    for case in cases {
        assert_eq!(case["since"], 1);
        assert_eq!(case["language"], "python");
        assert!(!case["description"].as_str().unwrap().is_empty());
    }
}

/// `--export-jobs` is the catalogue as `rlvr verify` job lines: the judge scores every hostile
/// program 0 and every honest one 1.0 there too.
#[test]
fn exported_jobs_score_the_same_under_rlvr_verify() {
    let exported = redteam(&[
        "--export-jobs",
        "--only",
        "lying_objects",
        "--only",
        "cross_job_state",
    ]);
    assert!(exported.status.success());
    let directory = tempfile::tempdir().unwrap();
    let jobs = directory.path().join("jobs.jsonl");
    std::fs::write(&jobs, &exported.stdout).unwrap();
    let text = String::from_utf8(exported.stdout).unwrap();
    assert_eq!(text.lines().count(), 2 + 2 * 6, "{text}");
    assert!(text.lines().next().unwrap().contains("#prepare"), "{text}");
    let output = Command::new(env!("CARGO_BIN_EXE_rlvr"))
        .arg("verify")
        .arg(&jobs)
        .env("RLVR_SANDBOX_UID", UID)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    for line in String::from_utf8(output.stdout).unwrap().lines() {
        let result: Value = serde_json::from_str(line).unwrap();
        let id = result["id"].as_str().unwrap();
        if id.ends_with("#hostile") {
            assert_eq!(result["score"], 0.0, "{result}");
        } else {
            assert_eq!(result["score"], 1.0, "{result}");
        }
    }
}
