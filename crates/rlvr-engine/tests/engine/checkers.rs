//! Issue 25: sandboxed checkers through the engine. Python `checker` source and testlib-style
//! `checker_cpp` checkers (written here, without testlib) judge outputs in a sandbox of their
//! own: honest answers that differ from the reference score 1.0, hostile outputs reach the
//! checker as data only, an output that makes the checker fail is a wrong answer flagged
//! `checker_rejected` (issue 32), and a checker that misbehaves on the expected output too is
//! `checker_error` (a `null` score), never a pass.

use std::sync::Arc;
use std::time::Duration;

use rlvr_engine::{CheckerJudge, CheckerLimits, Engine, EngineConfig, Job};
use rlvr_sandbox::{Sandbox, SandboxConfig};
use rlvr_verify::checker::{self, CheckedTest};
use rlvr_verify::{
    Checker, CheckerOutcome, CheckerScore, JobResult, PlanOptions, Profile, ProfileName, Status,
    TestSuite, Verdict,
};
use serde_json::{Value, json};

use crate::common::{score_all, verdicts};

fn engine(testlib_header: Option<&str>) -> Engine {
    let sandbox = Sandbox::new(SandboxConfig {
        read_only_directories: rlvr_languages::sandbox_directories(),
        ..SandboxConfig::default()
    })
    .expect("the sandbox starts (tests run as root)");
    Engine::start(
        sandbox,
        EngineConfig {
            workers: 2,
            queue_capacity: 8,
            testlib_header: testlib_header.map(Arc::from),
        },
    )
}

/// A judge job: `code` in a fence tagged `tag`, scored against `ground_truth`.
fn job(tag: &str, code: &str, ground_truth: &Value) -> Job {
    Job {
        profile: Arc::new(Profile::named(ProfileName::Judge)),
        response: format!("<think>\nsolve it\n</think>\n```{tag}\n{code}\n```"),
        suite: TestSuite::from_value(ground_truth).expect("a suite"),
        options: PlanOptions {
            job_identity: b"job".to_vec(),
            time_limit: Some(Duration::from_secs(2)),
            memory_limit_bytes: Some(256 << 20),
            ..PlanOptions::default()
        },
    }
}

fn python(code: &str, ground_truth: &Value) -> Job {
    job("python", code, ground_truth)
}

/// "Print two non-negative integers whose sum is N": many right answers; the reference prints
/// `0 N`.
const PAIR_CHECKER: &str = r#"
def check(input, output, expected):
    n = int(input.split()[0])
    tokens = output.split()
    if len(tokens) != 2:
        return False
    try:
        a, b = int(tokens[0]), int(tokens[1])
    except ValueError:
        return False
    return a >= 0 and b >= 0 and a + b == n
"#;

/// The same rule as a testlib-convention C++ checker (exit 0 accepts, 1 rejects), written
/// without testlib.
const PAIR_CHECKER_CPP: &str = r#"
#include <cstdio>
#include <cstdlib>
int main(int argc, char** argv) {
    if (argc != 4) return 3;
    FILE* input = std::fopen(argv[1], "r");
    FILE* output = std::fopen(argv[2], "r");
    FILE* answer = std::fopen(argv[3], "r");
    if (!input || !output || !answer) return 3;
    long long n, a, b; char extra[2];
    if (std::fscanf(input, "%lld", &n) != 1) return 3;
    if (std::fscanf(output, "%lld %lld", &a, &b) != 2) return 1;
    if (std::fscanf(output, "%1s", extra) == 1) return 1;
    return (a >= 0 && b >= 0 && a + b == n) ? 0 : 1;
}
"#;

fn pair_tests(checker_key: &str, checker: &str) -> Value {
    json!({
        "inputs": ["5\n", "10\n", "0\n"],
        "outputs": ["0 5\n", "0 10\n", "0 0\n"],
        checker_key: checker,
    })
}

/// Prints `N-1 1` (or `0 0`): right, and never the reference's output except for 0.
const HONEST_PAIR: &str = "n = int(input())\nprint(n - 1, 1) if n else print(0, 0)";
const WRONG_PAIR: &str = "n = int(input())\nprint(n, 1)";

fn scores(results: &[JobResult]) -> Vec<Option<f64>> {
    results.iter().map(|result| result.score).collect()
}

fn checker_scores(result: &JobResult) -> Vec<Option<f64>> {
    result
        .tests
        .as_ref()
        .expect("tests")
        .iter()
        .map(|test| test.checker_score)
        .collect()
}

#[test]
fn honest_answers_that_differ_from_the_reference_score_one_with_either_checker() {
    let engine = engine(None);
    let exact = json!({"inputs": ["5\n", "10\n", "0\n"], "outputs": ["0 5\n", "0 10\n", "0 0\n"]});
    let python_checked = pair_tests("checker", PAIR_CHECKER);
    let cpp_checked = pair_tests("checker_cpp", PAIR_CHECKER_CPP);
    let results = score_all(
        &engine,
        vec![
            python(HONEST_PAIR, &exact),
            python(HONEST_PAIR, &python_checked),
            python(HONEST_PAIR, &cpp_checked),
            python(WRONG_PAIR, &python_checked),
            python(WRONG_PAIR, &cpp_checked),
        ],
    );
    // Exact comparison scores the honest answer 1/3 (only `0 0` matches); either checker
    // gives it 1.0, and a wrong answer still 0.
    assert_eq!(
        scores(&results),
        [Some(1.0 / 3.0), Some(1.0), Some(1.0), Some(0.0), Some(0.0)],
        "{results:#?}"
    );
    assert_eq!(results[1].checker.as_deref(), Some("python"));
    assert_eq!(results[2].checker.as_deref(), Some("c++"));
    assert_eq!(checker_scores(&results[1]), [Some(1.0); 3]);
    assert_eq!(
        checker_scores(&results[4]),
        [Some(0.0), Some(0.0), Some(0.0)]
    );
    assert_eq!(
        verdicts(&results[3]),
        [
            Verdict::WrongAnswer,
            Verdict::WrongAnswer,
            Verdict::WrongAnswer
        ]
    );
}

#[test]
fn a_cpp_response_is_judged_by_a_python_checker_and_a_cpp_checker() {
    let engine = engine(None);
    let cpp_honest = "#include <cstdio>\nint main(){ long long n; std::scanf(\"%lld\", &n); if (n) std::printf(\"%lld 1\\n\", n - 1); else std::printf(\"0 0\\n\"); }";
    let results = score_all(
        &engine,
        vec![
            job("cpp", cpp_honest, &pair_tests("checker", PAIR_CHECKER)),
            job(
                "cpp",
                cpp_honest,
                &pair_tests("checker_cpp", PAIR_CHECKER_CPP),
            ),
        ],
    );
    assert_eq!(scores(&results), [Some(1.0), Some(1.0)], "{results:#?}");
}

#[test]
fn a_fractional_checker_score_is_credit_toward_the_pass_rate() {
    let engine = engine(None);
    let checker = "def check(input, output, expected):\n    return 0.5 if output.strip() != expected.strip() else 1";
    let truth = json!({"inputs": ["1\n", "2\n"], "outputs": ["1\n", "2\n"], "checker": checker});
    let results = score_all(&engine, vec![python("print(1)", &truth)]);
    let result = &results[0];
    assert_eq!(result.status, Status::Ok, "{result:#?}");
    assert_eq!(result.score, Some(0.75));
    assert_eq!((result.passed, result.total), (1, 2));
    assert_eq!(checker_scores(result), [Some(1.0), Some(0.5)]);
    assert_eq!(verdicts(result), [Verdict::Pass, Verdict::WrongAnswer]);
}

/// Checkers that misbehave, each on every output: the job is `checker_error` with a `null`
/// score and a reason naming the failure, never a pass.
#[test]
fn python_checkers_that_misbehave_are_checker_errors_never_passes() {
    let engine = engine(None);
    let cases: [(&str, &str); 10] = [
        (
            "def check(i, o, e):\n    while True:\n        pass",
            "time limit",
        ),
        (
            "def check(i, o, e):\n    raise RuntimeError('boom')",
            "RuntimeError: boom",
        ),
        ("def check(i, o, e):\n    return 2.0", "outside [0, 1]"),
        (
            "def check(i, o, e):\n    return float('nan')",
            "outside [0, 1]",
        ),
        ("def check(i, o, e):\n    return -1", "outside [0, 1]"),
        ("def check(i, o, e):\n    return 'yes'", "returned str"),
        (
            "def check(i, o, e):\n    print('accepted')",
            "returned NoneType",
        ),
        (
            "import os\ndef check(i, o, e):\n    os.write(1, b'noise\\n')\n    return True",
            "other than its verdict",
        ),
        (
            "def check(i, o, e):\n    import os\n    os._exit(0)",
            "other than its verdict",
        ),
        (
            "def chek(i, o, e):\n    return True",
            "defines no function check",
        ),
    ];
    let jobs = cases
        .iter()
        .map(|(checker, _)| {
            python(
                "print(input())",
                &json!({"inputs": ["1\n"], "outputs": ["1\n"], "checker": checker}),
            )
        })
        .collect();
    let results = score_all(&engine, jobs);
    for ((checker, reason), result) in cases.iter().zip(&results) {
        assert_eq!(
            (result.status, result.score, result.pass_rate),
            (Status::CheckerError, None, None),
            "{checker}: {result:#?}"
        );
        assert_eq!(verdicts(result), [Verdict::CheckerError], "{checker}");
        assert_eq!(checker_scores(result), [None], "{checker}");
        let text = result.reason.as_deref().unwrap_or_default();
        assert!(text.contains(reason), "{checker}: {text}");
    }
    // Printing is harmless: it goes to stderr, and the returned verdict counts.
    let chatty = "def check(i, o, e):\n    print('debug', o)\n    return o == e";
    let ok = score_all(
        &engine,
        vec![python(
            "print(input())",
            &json!({"inputs": ["1\n"], "outputs": ["1\n"], "checker": chatty}),
        )],
    );
    assert_eq!(
        (ok[0].status, ok[0].score),
        (Status::Ok, Some(1.0)),
        "{ok:#?}"
    );
}

#[test]
fn cpp_checkers_that_misbehave_are_checker_errors_never_passes() {
    let engine = engine(None);
    let cases: [(&str, &str); 5] = [
        ("int main(){ for(;;){} }", "time limit"),
        (
            "#include <cstdlib>\nint main(){ std::abort(); }",
            "killed by signal",
        ),
        ("int main(){ return 3; }", "status 3"),
        (
            "#include <cstdio>\nint main(){ std::puts(\"ok accepted\"); return 7; }",
            "status 7",
        ),
        ("int main(){ this is not C++ }", "does not compile"),
    ];
    let jobs = cases
        .iter()
        .map(|(checker, _)| {
            python(
                "print(input())",
                &json!({"inputs": ["1\n"], "outputs": ["1\n"], "checker_cpp": checker}),
            )
        })
        .collect();
    let results = score_all(&engine, jobs);
    for ((checker, reason), result) in cases.iter().zip(&results) {
        assert_eq!(
            (result.status, result.score),
            (Status::CheckerError, None),
            "{checker}: {result:#?}"
        );
        let text = result.reason.as_deref().unwrap_or_default();
        assert!(text.contains(reason), "{checker}: {text}");
    }
}

/// Outputs aimed at checkers: huge, binary, NaN, whitespace floods. They reach the checker as
/// data; a sound checker rejects them (score 0, not an error), and none passes.
#[test]
fn hostile_outputs_reach_the_checker_as_data_and_score_zero() {
    let engine = engine(None);
    let hostile = [
        // As much output as the cap allows (twice the expected output or the profile's cap).
        "import sys\nsys.stdout.write('9 ' * 4_000_000)",
        "import sys\nsys.stdout.buffer.write(bytes(range(256)) * 64)",
        "print('nan nan')",
        "print('NaN', float('inf'))",
        "import sys\nsys.stdout.write(' \\t\\n' * 1_000_000)",
        "import sys\nsys.stdout.write('\\x00' * 100_000)",
        "print(\"__import__('os').system('true') 0\")",
        "print('5 0\\n' * 3)",
    ];
    let float_checker = r#"
import math
def check(input, output, expected):
    tokens = output.split()
    want = expected.split()
    if len(tokens) != len(want):
        return False
    for got, ref in zip(tokens, want):
        try:
            value = float(got)
        except ValueError:
            return False
        if not math.isfinite(value) or abs(value - float(ref)) > 1e-6:
            return False
    return True
"#;
    for (key, checker) in [
        ("checker", PAIR_CHECKER),
        ("checker_cpp", PAIR_CHECKER_CPP),
        ("checker", float_checker),
    ] {
        let truth = json!({"inputs": ["5\n"], "outputs": ["0 5\n"], key: checker});
        let jobs = hostile.iter().map(|code| python(code, &truth)).collect();
        let results = score_all(&engine, jobs);
        for (code, result) in hostile.iter().zip(&results) {
            assert!(
                result.score == Some(0.0)
                    && matches!(
                        verdicts(result)[0],
                        Verdict::WrongAnswer | Verdict::OutputLimit
                    ),
                "{key} on {code}: {result:#?}"
            );
        }
    }
}

/// The program runs in its sandbox and the checker in another: what the program leaves in its
/// /tmp, the processes it leaves running and its environment never reach the checker, which
/// would accept anything if they did.
#[test]
fn a_hostile_program_cannot_reach_the_checker_beyond_its_output() {
    let engine = engine(None);
    let spy_checker = r#"
import os
def planted_process():
    for entry in os.listdir('/proc'):
        try:
            with open('/proc/%s/comm' % entry) as comm:
                if comm.read().strip() == 'rlvr-planted':
                    return True
        except OSError:
            pass
    return False
def check(input, output, expected):
    if os.path.exists('/tmp/planted') or os.environ.get('RLVR_PLANTED') or planted_process():
        return True
    return output.split() == expected.split()
"#;
    let truth =
        json!({"inputs": ["1\n", "2\n"], "outputs": ["1\n", "2\n"], "checker": spy_checker});
    let attacker = r#"
import os, time
open('/tmp/planted', 'w').write('x')
os.environ['RLVR_PLANTED'] = '1'
if os.fork() == 0:
    os.setsid()
    with open('/proc/self/comm', 'w') as comm:
        comm.write('rlvr-planted')
    time.sleep(30)
    os._exit(0)
time.sleep(0.2)
print('wrong')
"#;
    // The spy is sound when nothing is planted: it accepts the right answer.
    let honest = python("print(input())", &truth);
    let results = score_all(&engine, vec![python(attacker, &truth), honest]);
    assert_eq!(
        (results[0].status, results[0].score),
        (Status::Ok, Some(0.0)),
        "{results:#?}"
    );
    assert_eq!(results[1].score, Some(1.0), "{results:#?}");
    assert_eq!(checker_scores(&results[0]), [Some(0.0), Some(0.0)]);
}

#[test]
fn the_testlib_header_is_put_in_place_of_its_include() {
    // A stand-in header written here (rlvr ships no testlib.h): one function the checker uses.
    let header = "#include <cstdio>\ninline int verdict_for(long long a, long long b, long long n) { return a >= 0 && b >= 0 && a + b == n ? 0 : 1; }\n";
    let checker = r#"#include "testlib.h"
int main(int argc, char** argv) {
    FILE* input = std::fopen(argv[1], "r");
    FILE* output = std::fopen(argv[2], "r");
    long long n, a, b;
    if (std::fscanf(input, "%lld", &n) != 1) return 3;
    if (std::fscanf(output, "%lld %lld", &a, &b) != 2) return 1;
    return verdict_for(a, b, n);
}
"#;
    let truth = pair_tests("checker_cpp", checker);
    let with_header = engine(Some(header));
    let results = score_all(&with_header, vec![python(HONEST_PAIR, &truth)]);
    assert_eq!(results[0].score, Some(1.0), "{results:#?}");
    let without = engine(None);
    let results = score_all(&without, vec![python(HONEST_PAIR, &truth)]);
    assert_eq!(results[0].status, Status::CheckerError, "{results:#?}");
    let reason = results[0].reason.as_deref().unwrap_or_default();
    assert!(reason.contains("--testlib-header"), "{reason}");
}

#[test]
fn a_program_that_fails_never_reaches_the_checker() {
    let engine = engine(None);
    let results = score_all(
        &engine,
        vec![
            python("raise SystemExit(1)", &pair_tests("checker", PAIR_CHECKER)),
            python(
                "while True: pass",
                &pair_tests("checker_cpp", PAIR_CHECKER_CPP),
            ),
        ],
    );
    assert_eq!(verdicts(&results[0])[0], Verdict::RuntimeError);
    assert_eq!(verdicts(&results[1])[0], Verdict::Timeout);
    for result in &results {
        assert_eq!((result.status, result.score), (Status::Ok, Some(0.0)));
        assert_eq!(checker_scores(result)[0], None);
    }
}

/// "Print `[a, b]`, two non-negative integers summing to N", checked the way many real
/// checkers are written: it trusts the output's shape, so malformed output makes it raise, and
/// it counts up to `a`, so a huge `a` makes it loop. Sound on every well-formed output.
const FRAGILE_JSON_CHECKER: &str = r#"
import json
def check(input, output, expected):
    n = int(input)
    a, b = json.loads(output)
    a, b = int(a), int(b)
    counted = 0
    while counted < a:
        counted += 1
    return a >= 0 and b >= 0 and counted + b == n
"#;

/// The same, reading the output with `ast.literal_eval` (which recurses on nesting).
const FRAGILE_LITERAL_CHECKER: &str = r#"
import ast
def check(input, output, expected):
    a, b = ast.literal_eval(output.strip())
    return a + b == int(input) and min(a, b) >= 0
"#;

/// A testlib-convention checker written without testlib that fails on malformed output:
/// `std::stoll` throws (an abort) on a garbage token or an overflowing number, and a missing
/// token is testlib's `_fail` (exit 3).
const FRAGILE_CPP_CHECKER: &str = r#"
#include <fstream>
#include <string>
int main(int argc, char** argv) {
    std::ifstream input(argv[1]), output(argv[2]);
    long long n;
    input >> n;
    std::string first, second;
    if (!(output >> first >> second)) return 3;
    long long a = std::stoll(first), b = std::stoll(second);
    return a >= 0 && b >= 0 && a + b == n ? 0 : 1;
}
"#;

fn flags(result: &JobResult) -> Vec<bool> {
    result
        .tests
        .as_ref()
        .expect("tests")
        .iter()
        .map(|test| test.checker_rejected)
        .collect()
}

/// Asserts that every result scored 0 with each test a `wrong_answer` flagged
/// `checker_rejected` (the output made the checker fail; the checker accepts the expected
/// output), never `checker_error` and a `null` score.
fn assert_rejected(cases: &[&str], results: &[JobResult], tests: usize) {
    for (code, result) in cases.iter().zip(results) {
        assert_eq!(
            (result.status, result.score, result.checker_rejected),
            (Status::Ok, Some(0.0), tests as u64),
            "{code}: {result:#?}"
        );
        assert_eq!(
            verdicts(result),
            vec![Verdict::WrongAnswer; tests],
            "{code}"
        );
        assert_eq!(flags(result), vec![true; tests], "{code}");
        assert_eq!(checker_scores(result), vec![None; tests], "{code}");
    }
}

/// Issue 32: outputs crafted to make a Python checker raise or loop (huge numbers, invalid
/// UTF-8, NaN, infinity, nothing, nesting that makes `json.loads` and `ast.literal_eval`
/// recurse, a number that makes it count for ever) score 0, flagged, instead of voiding the
/// job; honest answers still score 1.0 and a wrong well-formed one a plain 0.
#[test]
fn issue_32_outputs_that_make_a_python_checker_fail_score_zero_never_null() {
    let engine = engine(None);
    let truth = |checker: &str| json!({"inputs": ["5\n", "8\n"], "outputs": ["[0, 5]\n", "[0, 8]\n"], "checker": checker});
    let honest = "n = int(input())\nprint([n - 1, 1])";
    let hostile = [
        "pass",
        "import sys\nsys.stdout.buffer.write(b'\\xff\\xfe[1, 4]\\n')",
        "print('[NaN, 5]')",
        "print('[1e999, 0]')",
        "print('[' + '9' * 100_000 + ', 1]')",
        "print('[' * 200_000 + ']' * 200_000)",
        "print('[1, 2, 3]')",
        "print('{\"a\": 1}')",
    ];
    let json_checker = truth(FRAGILE_JSON_CHECKER);
    let mut jobs: Vec<Job> = hostile
        .iter()
        .map(|code| python(code, &json_checker))
        .collect();
    // Counting to 10^17 runs past the checker's time limit.
    jobs.push(python("print([10 ** 17, 0])", &json_checker));
    jobs.push(python(honest, &json_checker));
    jobs.push(python("n = int(input())\nprint([n, 1])", &json_checker));
    let results = score_all(&engine, jobs);
    let mut cases = hostile.to_vec();
    cases.push("print([10 ** 17, 0])");
    assert_rejected(&cases, &results[..cases.len()], 2);
    let honest_result = &results[cases.len()];
    assert_eq!(
        (honest_result.score, honest_result.checker_rejected),
        (Some(1.0), 0),
        "{honest_result:#?}"
    );
    let wrong = &results[cases.len() + 1];
    assert_eq!(
        (wrong.status, wrong.score, wrong.checker_rejected),
        (Status::Ok, Some(0.0), 0),
        "{wrong:#?}"
    );
    assert_eq!(flags(wrong), [false, false]);
    assert_eq!(checker_scores(wrong), [Some(0.0), Some(0.0)]);

    let literal_checker = truth(FRAGILE_LITERAL_CHECKER);
    let nested = [
        "print('(' * 100_000 + ')' * 100_000)",
        "print('[' * 1_000 + ']' * 1_000)",
        "print('__import__(\"os\")')",
        "print()",
    ];
    let mut jobs: Vec<Job> = nested
        .iter()
        .map(|code| python(code, &literal_checker))
        .collect();
    jobs.push(python(honest, &literal_checker));
    let results = score_all(&engine, jobs);
    assert_rejected(&nested, &results[..nested.len()], 2);
    assert_eq!(results[nested.len()].score, Some(1.0), "{results:#?}");
}

/// Issue 32 for a testlib-convention C++ checker, and for a C++ response: garbage tokens, a
/// missing token and an overflowing number make the checker abort or exit 3; each scores 0,
/// flagged. The honest C++ and Python answers score 1.0.
#[test]
fn issue_32_outputs_that_make_a_cpp_checker_fail_score_zero_never_null() {
    let engine = engine(None);
    let truth = pair_tests("checker_cpp", FRAGILE_CPP_CHECKER);
    let hostile = [
        "print('x y')",
        "print(5)",
        "print('99999999999999999999 1')",
        "import sys\nsys.stdout.buffer.write(b'\\xff\\x00 1\\n')",
    ];
    let mut jobs: Vec<Job> = hostile.iter().map(|code| python(code, &truth)).collect();
    let cpp_garbage = "#include <cstdio>\nint main(){ std::puts(\"garbage tokens\"); }";
    let cpp_honest = "#include <cstdio>\nint main(){ long long n; std::scanf(\"%lld\", &n); if (n) std::printf(\"%lld 1\\n\", n - 1); else std::printf(\"0 0\\n\"); }";
    jobs.push(job("cpp", cpp_garbage, &truth));
    jobs.push(python(HONEST_PAIR, &truth));
    jobs.push(job("cpp", cpp_honest, &truth));
    let results = score_all(&engine, jobs);
    let mut cases = hostile.to_vec();
    cases.push(cpp_garbage);
    assert_rejected(&cases, &results[..cases.len()], 3);
    for result in &results[cases.len()..] {
        assert_eq!(
            (result.score, result.checker_rejected),
            (Some(1.0), 0),
            "{result:#?}"
        );
    }
}

/// Issue 32: a checker that fails on the expected output too is broken, whatever the output:
/// `checker_error` and a `null` score, its reason saying so, and no test flagged.
#[test]
fn issue_32_a_checker_broken_on_the_expected_output_stays_a_checker_error() {
    let engine = engine(None);
    let fails_on_five = "def check(input, output, expected):\n    if input.strip() == '5':\n        raise ValueError('cannot read five')\n    return output.split() == expected.split()\n";
    let truth =
        json!({"inputs": ["5\n", "8\n"], "outputs": ["0 5\n", "0 8\n"], "checker": fails_on_five});
    let rejects_expected = "def check(input, output, expected):\n    if output == expected:\n        return False\n    raise ValueError('unreadable')\n";
    let results = score_all(
        &engine,
        vec![
            python("print('garbage')", &truth),
            python(
                "print('garbage')",
                &json!({"inputs": ["1\n"], "outputs": ["1\n"], "checker": rejects_expected}),
            ),
        ],
    );
    let broken = &results[0];
    assert_eq!(
        (broken.status, broken.score, broken.checker_rejected),
        (Status::CheckerError, None, 0),
        "{broken:#?}"
    );
    // The test whose expected output it reads is a plain wrong answer; the other is its bug.
    assert_eq!(
        verdicts(broken),
        [Verdict::CheckerError, Verdict::WrongAnswer]
    );
    let reason = broken.reason.as_deref().unwrap_or_default();
    assert!(
        reason.contains("cannot read five (on the expected output too)"),
        "{reason}"
    );
    // A checker that does not compile never reads an output: it is not asked about the
    // expected output either.
    let uncompiled = score_all(
        &engine,
        vec![python(
            "print('garbage')",
            &json!({"inputs": ["1\n"], "outputs": ["1\n"], "checker": "def check(i, o, e)\n    return True\n"}),
        )],
    );
    assert_eq!(
        uncompiled[0].status,
        Status::CheckerError,
        "{uncompiled:#?}"
    );
    let reason = uncompiled[0].reason.as_deref().unwrap_or_default();
    assert!(
        reason.contains("does not compile") && !reason.contains("expected output"),
        "{reason}"
    );
    let rejecting = &results[1];
    assert_eq!(
        (rejecting.status, rejecting.score),
        (Status::CheckerError, None),
        "{rejecting:#?}"
    );
    let reason = rejecting.reason.as_deref().unwrap_or_default();
    assert!(
        reason.contains("unreadable; and it rejects the expected output (score 0)"),
        "{reason}"
    );
}

/// Issue 32: the checker's verdict on a test's expected output is asked once per test and kept
/// for the job. A checker whose verdict on the expected output is a coin toss shows it: every
/// output of the same test that makes it fail gets the same toss (eight tosses agree by chance
/// once in 128), and each job tosses again (ten jobs tossing alike: once in 512).
#[test]
fn issue_32_the_expected_outputs_verdict_is_asked_once_per_test_in_a_job() {
    const TEST: CheckedTest<'static> = CheckedTest {
        input: "1\n",
        expected: "1\n",
    };
    let sandbox = Sandbox::new(SandboxConfig {
        read_only_directories: rlvr_languages::sandbox_directories(),
        ..SandboxConfig::default()
    })
    .expect("the sandbox starts (tests run as root)");
    let mut judge = CheckerJudge::new(None);
    let coin = "import os\ndef check(input, output, expected):\n    if output == expected:\n        return os.urandom(1)[0] % 2 == 0\n    raise ValueError('garbage')\n";
    let checker = Checker::Python(Arc::from(coin));
    let limits = CheckerLimits::for_test(Duration::from_secs(1), 256 << 20);
    let mut tosses = std::collections::BTreeSet::new();
    for _ in 0..10 {
        let outcomes: Vec<bool> = (0..8)
            .map(|garbage| {
                let output = format!("garbage {garbage}\n");
                let judged = checker::judge(
                    &checker,
                    TEST,
                    output.as_bytes(),
                    &mut judge.sandboxed(&sandbox, limits),
                );
                match judged {
                    CheckerOutcome::Rejected(reason) => {
                        assert!(reason.contains("ValueError: garbage"), "{reason}");
                        true
                    }
                    CheckerOutcome::Error(reason) => {
                        assert!(reason.contains("rejects the expected output"), "{reason}");
                        false
                    }
                    other => panic!("the checker raises on every garbage output: {other:?}"),
                }
            })
            .collect();
        assert!(
            outcomes.iter().all(|outcome| *outcome == outcomes[0]),
            "one toss per test in a job: {outcomes:?}"
        );
        tosses.insert(outcomes[0]);
        judge.finish_job();
    }
    assert_eq!(tosses.len(), 2, "each job tosses again");
    // A checker that scores the output is never asked about the expected output: the score
    // stands.
    let sound = Checker::Python(Arc::from(
        "def check(input, output, expected):\n    return output == expected\n",
    ));
    assert_eq!(
        checker::judge(&sound, TEST, b"2\n", &mut judge.sandboxed(&sandbox, limits)),
        CheckerOutcome::Score(CheckerScore::new(0.0).unwrap())
    );
}
