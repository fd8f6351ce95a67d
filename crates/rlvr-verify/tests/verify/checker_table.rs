//! Built-in checkers (issue 25): a table per rule, hostile outputs aimed at each, the laws they
//! keep (proptest), and the validation of the `checker` key.

use std::sync::Arc;

use proptest::prelude::*;
use rlvr_verify::{
    BuiltInChecker, Checker, CheckerOutcome, CheckerScore, ExecutionResult, JobRun, Plan,
    PlanOptions, Profile, ProfileName, Status, TestRun, TestSuite, Tolerance, Verdict, aggregate,
    checker_needed, judge_test, plan,
};
use serde_json::{Value, json};

fn float(epsilon: f64) -> BuiltInChecker {
    BuiltInChecker::Float {
        epsilon: Tolerance::new(epsilon).expect("a tolerance in (0, 1)"),
    }
}

/// Each row: output, expected, accepted.
fn check_table(checker: BuiltInChecker, rows: &[(&[u8], &str, bool)]) {
    for (output, expected, accepted) in rows {
        assert_eq!(
            checker.accepts(output, expected),
            *accepted,
            "{checker}: {:?} for {expected:?}",
            String::from_utf8_lossy(output)
        );
    }
}

#[test]
fn float_table() {
    check_table(
        float(1e-6),
        &[
            (b"0.3333334\n", "0.33333333\n", true),
            (b"0.33333333", "0.33333333\n", true),
            (b"0.334\n", "0.33333333\n", false),
            (b"1e-7\n", "0\n", true),
            (b"0.000002\n", "0\n", false),
            (b"3\n", "3.0000000001\n", true),
            (b"2.9999999\n", "3\n", true),
            // Relative above 1: 1e6 * 1e-6 = 1.
            (b"1000000.5\n", "1000000\n", true),
            (b"1000002\n", "1000000\n", false),
            (b"-1.5 2.5\n", "-1.5000001 2.4999999\n", true),
            (b"1.5\n2.5\n", "1.5 2.5\n", true),
            (b"YES 0.5\n", "YES 0.5000001\n", true),
            (b"yes 0.5\n", "YES 0.5\n", false),
            (b"0.5\n", "0.5 0.5\n", false),
            (b"0.5 0.5 0.5\n", "0.5 0.5\n", false),
            (b"", "0.5\n", false),
            (b"", "", true),
            (b"  \n\t\n", "", true),
            (b"1e0\n", "1\n", true),
            (b"+1.0\n", "1\n", true),
            (b".5\n", "0.5\n", true),
            (b"0x1p-1\n", "0.5\n", false),
        ],
    );
    check_table(
        float(1e-3),
        &[
            (b"0.3334\n", "0.33333333\n", true),
            (b"0.335\n", "0.33333333\n", false),
        ],
    );
}

#[test]
fn tokens_table() {
    check_table(
        BuiltInChecker::Tokens,
        &[
            (b"1 2 3\n", "1 2 3\n", true),
            (b"1\n2\n3", "1 2 3\n", true),
            (b"  1   2\t3 \r\n", "1 2 3", true),
            (b"1 2 3 \n\n\n", "1 2 3", true),
            (b"3 2 1\n", "1 2 3\n", false),
            (b"1 2\n", "1 2 3\n", false),
            (b"1 2 3 4\n", "1 2 3\n", false),
            (b"1.0 2 3\n", "1 2 3\n", false),
            (b"Yes\n", "YES\n", false),
            (b"", "", true),
            (b"\n", "", true),
            (b"x", "", false),
            // NBSP is not a separator: part of the token.
            ("1\u{a0}2".as_bytes(), "1 2", false),
        ],
    );
}

#[test]
fn lines_any_order_table() {
    check_table(
        BuiltInChecker::LinesAnyOrder,
        &[
            (b"3\n1\n2\n", "1\n2\n3\n", true),
            (b"3\r\n1  \r\n2\t\r\n", "1\n2\n3\n", true),
            (b"1 2\n3 4\n", "3 4\n1 2\n", true),
            (b"3\n1\n2", "1\n2\n3\n\n\n", true),
            (b"3\n1\n2\n\n\n\n", "1\n2\n3", true),
            (b"1\n1\n2\n", "1\n2\n2\n", false),
            (b"1\n2\n", "1\n2\n3\n", false),
            (b"1\n2\n3\n4\n", "1\n2\n3\n", false),
            (b"1  2\n", "1 2\n", false),
            (b" 1\n2\n", "1\n2\n", false),
            (b"2 1\n", "1 2\n", false),
            // A blank line inside the output is a line.
            (b"1\n\n2\n", "1\n2\n", false),
            (b"2\n\n1\n", "1\n\n2\n", true),
            (b"\n1\n2\n", "1\n2\n", false),
            (b"", "", true),
            (b"\n\n", "", true),
            (b"", "1\n", false),
        ],
    );
}

#[test]
fn set_table() {
    check_table(
        BuiltInChecker::Set,
        &[
            (b"3 1 2\n", "1 2 3\n", true),
            (b"1\n2\n3\n", "1 2 3\n", true),
            (b"1 1 2 3 3\n", "1 2 3\n", true),
            (b"1 2\n", "1 2 2\n", true),
            (b"1 2\n", "1 2 3\n", false),
            (b"1 2 3 4\n", "1 2 3\n", false),
            (b"1 2 03\n", "1 2 3\n", false),
            (b"", "", true),
            (b"", "1\n", false),
            (b"1", "", false),
        ],
    );
}

/// Outputs a hostile program would print at each checker.
#[test]
fn hostile_outputs_earn_nothing() {
    let every = [
        float(1e-6),
        BuiltInChecker::Tokens,
        BuiltInChecker::LinesAnyOrder,
        BuiltInChecker::Set,
    ];
    let expected = "0.5 1.5\n";
    let mut invalid_utf8 = b"0.5 \xff\xfe1.5\n".to_vec();
    invalid_utf8.extend_from_slice(&[0x80; 64]);
    let flood_then_answer = {
        let mut text = vec![b' '; 16 << 20];
        text.extend_from_slice(b"0.5 1.5\n");
        text
    };
    let newline_flood_then_answer = {
        let mut text = vec![b'\n'; 16 << 20];
        text.extend_from_slice(b"0.5 1.5\n");
        text
    };
    let huge_number = {
        let mut text = b"0.5 1".to_vec();
        text.extend(std::iter::repeat_n(b'0', 4 << 20));
        text.push(b'\n');
        text
    };
    let many_tokens = b"0.5 ".repeat(4 << 20);
    for (name, output) in [
        ("nan", b"nan nan\n".to_vec()),
        ("NaN", b"NaN 1.5\n".to_vec()),
        ("inf", b"0.5 inf\n".to_vec()),
        ("-inf", b"-inf 1.5\n".to_vec()),
        ("overflow", b"0.5 1e999\n".to_vec()),
        ("invalid utf-8", invalid_utf8.clone()),
        (
            "replacement character",
            "0.5 \u{fffd}\n".as_bytes().to_vec(),
        ),
        ("nul", b"0.5\x001.5\n".to_vec()),
        ("huge number", huge_number),
        ("many tokens", many_tokens),
        ("empty", Vec::new()),
        ("spaces", b"   \n\n  ".to_vec()),
        (
            "newline flood then the answer",
            newline_flood_then_answer.clone(),
        ),
    ] {
        for checker in every {
            // Blank lines before the answer are lines: only lines-any-order refuses them; the
            // others read white space as a separator (testlib's rule).
            let accepted = checker.accepts(&output, expected);
            let allowed =
                name == "newline flood then the answer" && checker != BuiltInChecker::LinesAnyOrder;
            assert_eq!(accepted, allowed, "{checker} accepted {name}");
        }
    }
    // White space between the tokens is not an answer: the tokens still decide.
    for checker in [float(1e-6), BuiltInChecker::Tokens, BuiltInChecker::Set] {
        assert!(checker.accepts(&flood_then_answer, expected), "{checker}");
    }
    assert!(!BuiltInChecker::LinesAnyOrder.accepts(&newline_flood_then_answer, expected));
    // The expected text itself may hold what the output holds: then it is the same bytes.
    assert!(float(1e-6).accepts(b"nan\n", "nan\n"));
    assert!(!float(1e-6).accepts(b"nan\n", "0.5\n"));
}

fn suite_error(ground_truth: Value) -> String {
    TestSuite::from_value(&ground_truth)
        .map(|_| ())
        .expect_err("the ground truth is refused")
        .to_string()
}

#[test]
fn the_checker_key_is_validated_and_names_itself_in_errors() {
    let with = |checker: Value| json!({"inputs": ["1\n"], "outputs": ["1\n"], "checker": checker});
    for (name, parsed) in [
        ("float:1e-6", "float:1e-6"),
        ("float:0.001", "float:1e-3"),
        ("tokens", "tokens"),
        ("lines-any-order", "lines-any-order"),
        ("set", "set"),
    ] {
        let suite = TestSuite::from_value(&with(json!(name))).unwrap();
        assert_eq!(
            suite.checker.map(|checker| checker.to_string()),
            Some(parsed.to_owned())
        );
    }
    let absent =
        TestSuite::from_value(&json!({"inputs": ["1"], "outputs": ["1"], "checker": null}))
            .unwrap();
    assert_eq!(absent.checker, None);
    let listed = "(built-in checkers: float:EPS, tokens, lines-any-order, set)";
    for (value, message) in [
        (json!("floaty"), format!("ground truth key \"checker\" names no built-in checker: \"floaty\" {listed}")),
        (json!("Tokens"), format!("ground truth key \"checker\" names no built-in checker: \"Tokens\" {listed}")),
        (json!(""), format!("ground truth key \"checker\" names no built-in checker: \"\" {listed}")),
        (json!("float"), "ground truth key \"checker\" needs a tolerance in (0, 1), such as \"float:1e-6\"".to_owned()),
        (json!("float:abc"), "ground truth key \"checker\" needs a tolerance in (0, 1) after \"float:\", such as \"float:1e-6\"; found \"abc\"".to_owned()),
        (json!("float:0"), "ground truth key \"checker\" needs a tolerance in (0, 1) after \"float:\", such as \"float:1e-6\"; found \"0\"".to_owned()),
        (json!("float:1"), "ground truth key \"checker\" needs a tolerance in (0, 1) after \"float:\", such as \"float:1e-6\"; found \"1\"".to_owned()),
        (json!("float:NaN"), "ground truth key \"checker\" needs a tolerance in (0, 1) after \"float:\", such as \"float:1e-6\"; found \"NaN\"".to_owned()),
        (json!("float:-1e-6"), "ground truth key \"checker\" needs a tolerance in (0, 1) after \"float:\", such as \"float:1e-6\"; found \"-1e-6\"".to_owned()),
        (json!(3), "ground truth key \"checker\" must be a built-in checker name (float:EPS, tokens, lines-any-order, set) or Python source defining check(input, output, expected), found 3".to_owned()),
        (json!(["set"]), "ground truth key \"checker\" must be a built-in checker name (float:EPS, tokens, lines-any-order, set) or Python source defining check(input, output, expected), found a list of 1 items".to_owned()),
    ] {
        assert_eq!(suite_error(with(value.clone())), message, "{value}");
    }
    // Python source (it spans lines or defines a function) and C++ source are sandboxed
    // checkers, carried as given.
    let source = "def check(input, output, expected):\n    return output == expected\n";
    let python = TestSuite::from_value(&with(json!(source))).unwrap();
    assert_eq!(python.checker, Some(Checker::Python(Arc::from(source))));
    let one_line = TestSuite::from_value(&with(json!("def check(i, o, e): return True"))).unwrap();
    assert_eq!(
        one_line
            .checker
            .map(|checker| checker.to_string())
            .as_deref(),
        Some("python")
    );
    let cpp = TestSuite::from_value(
        &json!({"inputs": ["1"], "outputs": ["1"], "checker_cpp": "int main() {}"}),
    )
    .unwrap();
    assert_eq!(cpp.checker, Some(Checker::Cpp(Arc::from("int main() {}"))));
    assert_eq!(
        cpp.checker.map(|checker| checker.to_string()).as_deref(),
        Some("c++")
    );
    for (value, found) in [(json!(" \n"), "a blank string"), (json!(7), "7")] {
        assert_eq!(
            suite_error(json!({"inputs": ["1"], "outputs": ["1"], "checker_cpp": value})),
            format!(
                "ground truth key \"checker_cpp\" must be the C++ source of a testlib-convention checker, found {found}"
            )
        );
    }
    assert_eq!(
        suite_error(
            json!({"inputs": ["1"], "outputs": ["1"], "checker": "set", "checker_cpp": "x"})
        ),
        "ground truth key \"checker\" and \"checker_cpp\" are both given; give one"
    );
    assert_eq!(
        suite_error(json!({"functional": ["assert f() == 1"], "checker": "tokens"})),
        "ground truth key \"checker\" applies to \"inputs\"/\"outputs\" tests; this ground truth has \"functional\" tests"
    );
    // A JSON-string ground truth is read the same way.
    let text = json!({"inputs": ["1"], "outputs": ["1"], "checker": "nope"}).to_string();
    assert!(suite_error(Value::String(text)).contains("names no built-in checker: \"nope\""));
}

/// A sandboxed checker's outcome decides the verdict: a score of 1 passes, below 1 is a wrong
/// answer with partial credit, a failure (or no outcome at all) is `checker_error`; it is only
/// needed when the program ran to a normal end.
#[test]
fn a_sandboxed_checker_outcome_decides_and_a_failure_is_never_a_pass() {
    let response = "<think>\nx\n</think>\n```python\nprint(3)\n```";
    let truth = json!({"inputs": ["3\n", "4\n"], "outputs": ["3\n", "4\n"], "checker": "def check(i, o, e):\n    return 1\n"});
    let suite = TestSuite::from_value(&truth).unwrap();
    let profile = Profile::named(ProfileName::Judge);
    let Plan::Execute(execution) = plan(&profile, response, &suite, &PlanOptions::default()) else {
        panic!("the response has code");
    };
    let program = &execution.programs[0];
    let scored = |value: f64| ExecutionResult {
        checker: Some(CheckerOutcome::Score(CheckerScore::new(value).unwrap())),
        ..exited(b"3\n")
    };
    assert!(checker_needed(program, &exited(b"3\n")));
    let crashed = ExecutionResult {
        exit_code: Some(1),
        ..exited(b"")
    };
    assert!(!checker_needed(program, &crashed));
    assert_eq!(
        judge_test(&profile, program, &crashed),
        Verdict::RuntimeError
    );
    assert_eq!(judge_test(&profile, program, &scored(1.0)), Verdict::Pass);
    assert_eq!(
        judge_test(&profile, program, &scored(0.5)),
        Verdict::WrongAnswer
    );
    assert_eq!(
        judge_test(&profile, program, &exited(b"3\n")),
        Verdict::CheckerError
    );
    let failed = ExecutionResult {
        checker: Some(CheckerOutcome::Error("crashed".to_owned())),
        ..exited(b"3\n")
    };
    assert_eq!(
        judge_test(&profile, program, &failed),
        Verdict::CheckerError
    );
    for bad in [2.0, -0.1, f64::NAN, f64::INFINITY] {
        assert_eq!(CheckerScore::new(bad), None, "{bad}");
    }
    // Aggregation: partial credit counts toward the rate; one checker failure leaves the job
    // unscored with its tests reported.
    let run = |results: [&ExecutionResult; 2]| JobRun {
        stages: vec![
            results
                .iter()
                .map(|result| TestRun::ran(judge_test(&profile, program, result), result))
                .collect(),
        ],
        deadline_exceeded: false,
    };
    let partial = aggregate(&execution, &run([&scored(1.0), &scored(0.5)]));
    assert_eq!(
        (partial.status, partial.score, partial.passed),
        (Status::Ok, Some(0.75), 1)
    );
    let unscored = aggregate(&execution, &run([&scored(1.0), &failed]));
    assert_eq!(
        (unscored.status, unscored.score, unscored.pass_rate),
        (Status::CheckerError, None, None)
    );
    let tests = unscored.tests.expect("tests are reported");
    assert_eq!(tests[1].verdict, Verdict::CheckerError);
    assert_eq!(
        (tests[0].checker_score, tests[1].checker_score),
        (Some(1.0), None)
    );
}

fn exited(stdout: &[u8]) -> ExecutionResult {
    ExecutionResult {
        exit_code: Some(0),
        stdout: stdout.to_vec(),
        ..ExecutionResult::default()
    }
}

/// A checker replaces the comparison of every profile; without one the comparison is the
/// profile's own, unchanged.
#[test]
fn a_checker_replaces_the_profile_comparison_only_when_named() {
    let response = "<think>\nx\n</think>\n<answer>\n```python\nprint(3)\n```\n</answer>";
    for name in ProfileName::ALL {
        let profile = Profile::named(name);
        for (checker, output, expected_verdict) in [
            (Some("lines-any-order"), &b"3\n1\n2\n"[..], Verdict::Pass),
            (None, b"3\n1\n2\n", Verdict::WrongAnswer),
            (Some("lines-any-order"), b"3\n1\n", Verdict::WrongAnswer),
        ] {
            let mut truth = json!({"inputs": ["3\n"], "outputs": ["1\n2\n3\n"]});
            if let Some(checker) = checker {
                truth["checker"] = json!(checker);
            }
            let suite = TestSuite::from_value(&truth).unwrap();
            let Plan::Execute(execution) =
                plan(&profile, response, &suite, &PlanOptions::default())
            else {
                panic!("{name:?}: the response has code");
            };
            let program = &execution.programs[0];
            assert_eq!(
                program.checker,
                checker.map(|_| Checker::BuiltIn(BuiltInChecker::LinesAnyOrder))
            );
            assert_eq!(
                judge_test(&profile, program, &exited(output)),
                expected_verdict,
                "{name:?} {checker:?} {output:?}"
            );
        }
    }
}

proptest! {
    /// Every checker accepts the expected output itself, and the same text reformatted in the
    /// ways its rule allows.
    #[test]
    fn issue_25_checkers_accept_the_expected_output(
        lines in prop::collection::vec(prop::collection::vec("[a-z0-9.\\-]{1,6}", 1..4), 0..6),
        spaces in "[ \t]{1,3}",
    ) {
        let expected: String = lines.iter().map(|tokens| tokens.join(" ") + "\n").collect();
        for checker in [float(1e-6), BuiltInChecker::Tokens, BuiltInChecker::LinesAnyOrder, BuiltInChecker::Set] {
            prop_assert!(checker.accepts(expected.as_bytes(), &expected), "{checker}");
        }
        let respaced: String = lines.iter().map(|tokens| tokens.join(&spaces) + &spaces + "\r\n").collect();
        for checker in [float(1e-6), BuiltInChecker::Tokens, BuiltInChecker::Set] {
            prop_assert!(checker.accepts(respaced.as_bytes(), &expected), "{checker}");
        }
        let reversed: String = lines.iter().rev().map(|tokens| tokens.join(" ") + "  \n").collect();
        prop_assert!(BuiltInChecker::LinesAnyOrder.accepts(reversed.as_bytes(), &expected));
        let shuffled: Vec<&str> = lines.iter().rev().flatten().map(String::as_str).collect();
        prop_assert!(BuiltInChecker::Set.accepts(shuffled.join("\n").as_bytes(), &expected));
    }

    /// `set` and `lines-any-order` are symmetric; a token appended that the expected output
    /// lacks is refused by every checker.
    #[test]
    fn issue_25_checker_laws(
        left in prop::collection::vec("[a-c]{1,2}", 0..6),
        right in prop::collection::vec("[a-c]{1,2}", 0..6),
    ) {
        let (left_text, right_text) = (left.join("\n"), right.join("\n"));
        for checker in [BuiltInChecker::Set, BuiltInChecker::LinesAnyOrder, BuiltInChecker::Tokens] {
            prop_assert_eq!(
                checker.accepts(left_text.as_bytes(), &right_text),
                checker.accepts(right_text.as_bytes(), &left_text),
                "{}", checker
            );
        }
        let garbage = format!("{left_text}\nzz");
        for checker in [float(1e-6), BuiltInChecker::Tokens, BuiltInChecker::LinesAnyOrder, BuiltInChecker::Set] {
            prop_assert!(!checker.accepts(garbage.as_bytes(), &left_text), "{}", checker);
        }
    }

    /// `float:EPS` accepts a number exactly when it is within the documented bound.
    #[test]
    fn issue_25_float_bound(expected in -1e9f64..1e9, offset in -1e-3f64..1e-3) {
        let actual = expected + offset * expected.abs().max(1.0);
        let accepted = float(1e-6).accepts(format!("{actual:e}").as_bytes(), &format!("{expected:e}"));
        let bound = 1e-6 * expected.abs().max(1.0);
        let difference = (actual - expected).abs();
        if difference <= bound * (1.0 - 1e-9) {
            prop_assert!(accepted);
        }
        if difference >= bound * (1.0 + 1e-9) {
            prop_assert!(!accepted);
        }
    }
}

/// Issue 32: a checker that failed on the output but accepts the expected output (the engine's
/// attribution, `CheckerOutcome::Rejected`) makes the test a wrong answer with no credit,
/// flagged `checker_rejected` per test and counted per job; the job keeps its score.
#[test]
fn issue_32_a_checker_rejected_output_is_a_wrong_answer_never_an_unscored_job() {
    let response = "<think>\nx\n</think>\n```python\nprint(3)\n```";
    let truth = json!({"inputs": ["3\n", "4\n"], "outputs": ["3\n", "4\n"], "checker": "def check(i, o, e):\n    return 1\n"});
    let suite = TestSuite::from_value(&truth).unwrap();
    let profile = Profile::named(ProfileName::Judge);
    let Plan::Execute(execution) = plan(&profile, response, &suite, &PlanOptions::default()) else {
        panic!("the response has code");
    };
    let program = &execution.programs[0];
    let accepted = ExecutionResult {
        checker: Some(CheckerOutcome::Score(CheckerScore::new(1.0).unwrap())),
        ..exited(b"3\n")
    };
    let rejected = ExecutionResult {
        checker: Some(CheckerOutcome::Rejected(
            "the checker failed (exit status 1): RecursionError".to_owned(),
        )),
        ..exited(b"[[[[[[[[\n")
    };
    assert_eq!(
        judge_test(&profile, program, &rejected),
        Verdict::WrongAnswer
    );
    let run = JobRun {
        stages: vec![
            [&accepted, &rejected]
                .iter()
                .map(|result| TestRun::ran(judge_test(&profile, program, result), result))
                .collect(),
        ],
        deadline_exceeded: false,
    };
    let result = aggregate(&execution, &run);
    assert_eq!(
        (result.status, result.score, result.passed, result.total),
        (Status::Ok, Some(0.5), 1, 2)
    );
    assert_eq!(result.checker_rejected, 1);
    let tests = result.tests.as_ref().expect("tests are reported");
    assert_eq!(
        tests
            .iter()
            .map(|test| (test.verdict, test.checker_score, test.checker_rejected))
            .collect::<Vec<_>>(),
        [
            (Verdict::Pass, Some(1.0), false),
            (Verdict::WrongAnswer, None, true)
        ]
    );
    // In JSON the flag and the count appear only where they hold.
    let line = serde_json::to_value(&result).unwrap();
    assert_eq!(line["checker_rejected"], 1, "{line}");
    assert_eq!(line["tests"][1]["checker_rejected"], true, "{line}");
    assert!(line["tests"][0].get("checker_rejected").is_none(), "{line}");
    let clean = aggregate(
        &execution,
        &JobRun {
            stages: vec![vec![
                TestRun::ran(Verdict::Pass, &accepted),
                TestRun::ran(Verdict::Pass, &accepted),
            ]],
            deadline_exceeded: false,
        },
    );
    let line = serde_json::to_value(&clean).unwrap();
    assert!(line.get("checker_rejected").is_none(), "{line}");
}
