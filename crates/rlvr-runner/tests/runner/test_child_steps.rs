//! The one list of a test child's steps (`rlvr_sandbox::test_child_steps`) and its two
//! followers: the runner's Python (`runner/isolation.py`'s `become_solution`, then
//! `runner/process.py`'s `prepare_test_child`) and the exec supervisor
//! (`rlvr-languages/supervisor/spawn.rs`'s `become_program`). Each follower's steps are read
//! from its source, in the order it performs them, and must be the list's; the runner's
//! Python gets the list itself as a module, checked here by running it.

use rlvr_runner::{ChildEnding, TestLimits};

use crate::common::{LIMITS, loaded};

fn steps() -> Vec<&'static str> {
    rlvr_sandbox::test_child_steps().collect()
}

fn source(path: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// The text of the function that starts with `start` up to the next item at the same level
/// (`end` begins that item's line).
fn function_body<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("no {start:?} in the source"));
    let rest = &text[from + start.len()..];
    &rest[..rest.find(end).unwrap_or(rest.len())]
}

/// The Python constant that names `step` (`new session`: `NEW_SESSION`).
fn constant(step: &str) -> String {
    step.chars()
        .map(|character| {
            if character.is_ascii_alphanumeric() {
                character.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// What each step's code calls, on each side (Python, the supervisor): the test ties a
/// follower's step marks to the code that performs them, so that a step moved without its mark
/// (or a list reordered under its followers) fails.
const STEP_CALLS: &[(&str, &str, &str)] = &[
    ("new session", "os.setsid(", "child::new_session("),
    (
        "lock SECBIT_NOROOT",
        "PR_SET_SECUREBITS",
        "child::lock_no_root(",
    ),
    ("drop privileges", "os.setresuid(", "child::become_id("),
    (
        "clear capabilities",
        "isolation.capset(",
        "child::drop_capabilities(",
    ),
    ("wire descriptors", "os.dup2(", "child::move_descriptor("),
    ("reset signals", "signal.signal(", "child::reset_signals("),
    (
        "set resource limits",
        "resource.setrlimit(",
        "child::limit(",
    ),
];

fn calls(step: &str) -> (&'static str, &'static str) {
    let (_, python, supervisor) = STEP_CALLS
        .iter()
        .find(|(name, _, _)| *name == step)
        .unwrap_or_else(|| panic!("the test knows no step {step:?}: add it to STEP_CALLS"));
    (python, supervisor)
}

/// The steps a Python function marks (`step = NEW_SESSION`), in order, each with the code up to
/// the next mark.
fn python_steps(body: &str) -> Vec<(String, String)> {
    let mut steps: Vec<(String, String)> = Vec::new();
    for line in body.lines() {
        if let Some(name) = line.trim().strip_prefix("step = ") {
            steps.push((name.to_owned(), String::new()));
        } else if let Some((_, code)) = steps.last_mut() {
            code.push_str(line);
            code.push('\n');
        }
    }
    steps
}

#[test]
fn the_runner_gets_the_list_as_a_module() {
    let script = format!(
        "{}\nprint('|'.join(TEST_CHILD_STEPS))",
        rlvr_runner::test_child_steps_source()
    );
    let printed = rlvr_test_support::run_python(&script, &[], "");
    assert_eq!(printed.trim_end(), steps().join("|"));
}

#[test]
fn the_runner_names_the_steps_in_the_list_s_order() {
    let isolation = source("src/runner/isolation.py");
    let unpacked = function_body(&isolation, "\n(", ") = TEST_CHILD_STEPS");
    let names: Vec<String> = unpacked
        .split(',')
        .map(|name| name.trim().to_owned())
        .collect();
    let expected: Vec<String> = steps().into_iter().map(constant).collect();
    assert_eq!(names, expected);
}

#[test]
fn the_runner_s_test_child_performs_the_steps_in_the_list_s_order() {
    let isolation = source("src/runner/isolation.py");
    let process = source("src/runner/process.py");
    let mut performed = python_steps(function_body(&isolation, "def become_solution(", "\ndef "));
    performed.extend(python_steps(function_body(
        &process,
        "def prepare_test_child(",
        "\ndef ",
    )));
    let names: Vec<&str> = performed.iter().map(|(name, _)| name.as_str()).collect();
    let expected: Vec<String> = steps().into_iter().map(constant).collect();
    assert_eq!(names, expected);
    for (step, (_, code)) in steps().into_iter().zip(&performed) {
        let (python, _) = calls(step);
        assert!(code.contains(python), "{step}: no {python} after its mark");
    }
    // Both kinds of child take their steps from there: a test child and a harness's batch child.
    assert!(function_body(&process, "def run_child(", "\ndef ").contains("prepare_test_child("));
    let batch = source("src/runner/batch.py");
    assert!(function_body(&batch, "def batch_child(", "\ndef ").contains("prepare_test_child("));
}

#[test]
fn the_exec_supervisor_performs_the_steps_in_the_list_s_order() {
    let spawn = source("../rlvr-languages/supervisor/spawn.rs");
    // Its names are the list's lines (then the exec's), by the index each failure reports.
    assert!(spawn.contains(r#"include_str!("../../rlvr-sandbox/src/test_child_steps.txt")"#));
    let body = function_body(&spawn, "fn become_program(", "\n}\n");
    let mut reported: Vec<usize> = Vec::new();
    // The code before a step's first failure report performs the step.
    let mut code = body.split("child::fail(report, ");
    let mut before = code.next().unwrap_or_default();
    for piece in code {
        let index: usize = piece[..piece.find(')').unwrap()].parse().unwrap();
        if reported.last() != Some(&index) {
            let (step, supervisor) = match steps().get(index) {
                Some(step) => (*step, calls(step).1),
                None => ("the exec", "child::execute_"),
            };
            assert!(
                before.contains(supervisor),
                "{step}: no {supervisor} before its report"
            );
            reported.push(index);
        }
        before = piece;
    }
    // Every step once, in order, then the exec (the line after the list).
    let expected: Vec<usize> = (0..=steps().len()).collect();
    assert_eq!(reported, expected);
}

#[test]
fn a_step_that_fails_names_itself_and_the_solution_never_runs() {
    let (_child, mut runner) = loaded("print('the solution ran')");
    // A CPU limit Python cannot pass to setrlimit (its hard limit is one second above).
    let limits = TestLimits {
        cpu_seconds: u64::MAX,
        ..LIMITS
    };
    let report = runner.run_test(b"", None, limits).unwrap();
    assert_eq!(report.outcome, ChildEnding::Exited);
    assert_eq!(report.exit_code, Some(125));
    assert_eq!(report.stdout, b"");
    let stderr = String::from_utf8_lossy(&report.stderr);
    assert!(
        stderr.starts_with("rlvr runner: cannot isolate the test: set resource limits failed: "),
        "{stderr}"
    );
    // The same runner, with limits it can set, runs the solution.
    let report = runner.run_test(b"", None, LIMITS).unwrap();
    assert_eq!(report.exit_code, Some(0));
    assert_eq!(report.stdout, b"the solution ran\n");
}
