//! What the runner reproduces of the reference rewards' execution (issue 14), against a real
//! interpreter: the in-process harnesses of verl prime_code and rllm's LiveCodeBench copy, run
//! as one batch child per stage, and the end of a fresh `python FILE` process (excepthook,
//! atexit, flags, lost buffers) that Klear and Code-R1 depend on.

use std::process::Child;

use crate::common::{LIMITS, start};
use rlvr_runner::{ChildEnding, ChildReport, Harness, Runner};

/// Loads `source` under `harness` and runs every input in one batch child.
fn batch(harness: Harness, source: &str, inputs: &[&str]) -> Vec<ChildReport> {
    let (child, mut runner) = start();
    let preload: &[&str] = match harness {
        Harness::LiveCodeBench => &["numpy", "pandas"],
        Harness::Prime => &[],
    };
    let report = runner
        .load(&[source], "solution.py", preload, Some(harness))
        .unwrap();
    assert!(report.ok, "{report:?}");
    let inputs: Vec<&[u8]> = inputs.iter().map(|input| input.as_bytes()).collect();
    runner.batch_start(&inputs, LIMITS).unwrap();
    let reports = (0..inputs.len())
        .map(|_| runner.batch_next(3_000).unwrap())
        .collect();
    runner.batch_end().unwrap();
    finish(child, runner);
    reports
}

/// Ends the runner and reaps it (no process outlives a test).
fn finish(mut child: Child, runner: Runner) {
    runner.exit().unwrap();
    child.wait().unwrap();
}

fn printed(report: &ChildReport) -> String {
    String::from_utf8_lossy(&report.stdout).into_owned()
}

fn fresh(source: &str, stdin: &str) -> ChildReport {
    let (child, mut runner) = start();
    runner.load(&[source], "solution.py", &[], None).unwrap();
    let report = runner.run_test(stdin.as_bytes(), None, LIMITS).unwrap();
    finish(child, runner);
    report
}

#[test]
fn issue_14_a_batch_runs_every_test_in_one_process_like_the_references() {
    // Module-level state set by one test is seen by the next, as in prime_code's first pass.
    let source =
        "import sys\nsys.calls = getattr(sys, 'calls', 0) + 1\nprint(int(input()) * 2, sys.calls)";
    let reports = batch(Harness::Prime, source, &["1\n", "2\n", "3\n"]);
    let outputs: Vec<String> = reports.iter().map(printed).collect();
    assert_eq!(outputs, ["2 1\n", "4 2\n", "6 3\n"]);
    assert!(reports.iter().all(|report| report.exit_code == Some(0)));
}

#[test]
fn issue_14_a_test_past_its_time_ends_the_batch() {
    let source = "import time\nn = int(input())\nif n == 2:\n    time.sleep(30)\nprint(n)";
    let (child, mut runner) = start();
    runner
        .load(&[source], "solution.py", &[], Some(Harness::Prime))
        .unwrap();
    runner
        .batch_start(&[b"1\n", b"2\n", b"3\n"], LIMITS)
        .unwrap();
    let first = runner.batch_next(3_000).unwrap();
    assert_eq!(printed(&first), "1\n");
    let second = runner.batch_next(300).unwrap();
    assert_eq!(second.outcome, ChildEnding::Timeout);
    let third = runner.batch_next(3_000).unwrap();
    assert_ne!(third.exit_code, Some(0), "the child is gone: no more tests");
    runner.batch_end().unwrap();
    // The runner is still usable afterwards.
    runner
        .load(
            &["print(input())"],
            "solution.py",
            &[],
            Some(Harness::Prime),
        )
        .unwrap();
    runner.batch_start(&[b"ok\n"], LIMITS).unwrap();
    assert_eq!(printed(&runner.batch_next(3_000).unwrap()), "ok\n");
    runner.batch_end().unwrap();
    finish(child, runner);
}

#[test]
fn issue_14_prime_exit_fails_but_sys_exit_is_swallowed() {
    let reports = batch(Harness::Prime, "print(input())\nexit()", &["a\n"]);
    assert_eq!(
        reports[0].exit_code,
        Some(1),
        "exit is None under prime_code"
    );
    let reports = batch(
        Harness::Prime,
        "import sys\nprint(input())\nsys.exit(3)",
        &["a\n"],
    );
    assert_eq!(
        (reports[0].exit_code, printed(&reports[0])),
        (Some(0), "a\n".into())
    );
    let reports = batch(Harness::Prime, "import os\nprint(os.getcwd())", &[""]);
    assert_eq!(
        reports[0].exit_code,
        Some(1),
        "reliability_guard sets os.getcwd to None"
    );
}

#[test]
fn issue_14_rllm_exit_is_swallowed_and_quit_fails() {
    let reports = batch(Harness::LiveCodeBench, "print(input())\nexit()", &["a\n"]);
    assert_eq!(
        (reports[0].exit_code, printed(&reports[0])),
        (Some(0), "a\n".into())
    );
    let reports = batch(Harness::LiveCodeBench, "print(input())\nquit()", &["a\n"]);
    assert_eq!(reports[0].exit_code, Some(1));
}

#[test]
fn issue_14_rllm_stdin_interfaces_behave_as_patched_upstream() {
    // `from sys import *` binds the process's stdin object, whose read methods are patched:
    // readline returns the next line WITHOUT its newline.
    let reports = batch(
        Harness::LiveCodeBench,
        "from sys import *\nfirst = stdin.readline()\nprint(repr(first))",
        &["12\n34\n"],
    );
    assert_eq!(printed(&reports[0]), "'12'\n");
    let reports = batch(
        Harness::LiveCodeBench,
        "print(open(0).read().split())",
        &["1 2\n"],
    );
    assert_eq!(printed(&reports[0]), "['1', '2']\n");
    let reports = batch(
        Harness::LiveCodeBench,
        "import sys\nprint(sys.stdin.buffer.read())",
        &["1 2\n"],
    );
    assert_eq!(reports[0].exit_code, Some(1), "a StringIO has no buffer");
}

#[test]
fn issue_14_rllm_captures_only_sys_stdout_and_runs_outside_main() {
    let reports = batch(
        Harness::LiveCodeBench,
        "import os\nos.write(1, b'lost ')\nprint(__name__)",
        &[""],
    );
    assert_eq!(printed(&reports[0]), "tmp_sol\n");
    // A guard that is not the last statement is not unwrapped: its body never runs.
    let reports = batch(
        Harness::LiveCodeBench,
        "if __name__ == '__main__':\n    print('main')\nprint('end')",
        &[""],
    );
    assert_eq!(printed(&reports[0]), "end\n");
    // rllm's import block: `time` is the function, numpy is np, no recursion limit raised.
    let reports = batch(
        Harness::LiveCodeBench,
        "import sys\nprint(callable(time), np.int64(2) + 1, sys.getrecursionlimit())",
        &[""],
    );
    assert_eq!(printed(&reports[0]), "True 3 1000\n");
    // Nothing but imports leaves an empty function: a compile error upstream, a failure here.
    let reports = batch(Harness::LiveCodeBench, "import math", &[""]);
    assert_eq!(reports[0].exit_code, Some(1));
}

#[test]
fn issue_14_an_excepthook_runs_for_an_uncaught_exception() {
    let report = fresh(
        "import os, sys\nsys.excepthook = lambda *arguments: os._exit(0)\nraise ValueError('x')",
        "",
    );
    assert_eq!(
        report.exit_code,
        Some(0),
        "a fresh python exits 0 through the hook"
    );
    let report = fresh(
        "import sys\nsys.excepthook = lambda kind, value, tb: print('hook', kind.__name__, file=sys.stderr)\n1/0",
        "",
    );
    assert_eq!(report.exit_code, Some(1));
    assert_eq!(
        String::from_utf8_lossy(&report.stderr),
        "hook ZeroDivisionError\n"
    );
}

#[test]
fn issue_14_atexit_runs_after_the_hook_in_reverse_order() {
    let report = fresh(
        "import atexit, sys\natexit.register(print, 'first')\natexit.register(print, 'second')\nsys.excepthook = lambda *a: print('hook')\nraise KeyError",
        "",
    );
    assert_eq!(printed(&report), "hook\nsecond\nfirst\n");
    assert_eq!(report.exit_code, Some(1));
}

#[test]
fn issue_14_flags_and_buffers_are_those_of_a_fresh_process() {
    let report = fresh(
        "import os, sys\nprint(sys.flags.isolated, sys.flags.no_site, sys.flags.ignore_environment, sys.flags.safe_path, 'PYTHONUNBUFFERED' in os.environ)\nprint(repr(sys.flags).startswith('sys.flags(debug=0, inspect=0'))",
        "",
    );
    assert_eq!(printed(&report), "0 0 0 False False\nTrue\n");
    // Block-buffered stdout is lost when the program leaves with os._exit.
    let report = fresh("import os\nprint('answer')\nos._exit(0)", "");
    assert_eq!(
        (report.exit_code, printed(&report)),
        (Some(0), String::new())
    );
}
