//! The runner protocol end to end against a real interpreter. These tests exercise the
//! protocol and the per-test process semantics only; isolation is the sandbox's job and is
//! tested there (production always starts the runner inside the sandbox).

use std::process::Command;

use crate::common::{LIMITS, loaded, start};
use rlvr_runner::{ChildEnding, LoadReport, PipeError, Runner, TestLimits};

#[test]
fn compiles_once_and_runs_each_test_in_a_fresh_child() {
    let (mut child, mut runner) = start();
    let source = "import sys\ncount = globals().get('count', 0) + 1\na, b = map(int, sys.stdin.readline().split())\nprint(a + b, count)";
    let report = runner.load(&[source], "solution.py", &[], None).unwrap();
    assert!(report.ok && report.compile_error.is_none());
    for (input, expected) in [("1 2\n", "3 1\n"), ("40 2\n", "42 1\n")] {
        let test = runner.run_test(input.as_bytes(), None, LIMITS).unwrap();
        assert_eq!(test.outcome, ChildEnding::Exited);
        assert_eq!(test.exit_code, Some(0));
        assert_eq!(
            String::from_utf8_lossy(&test.stdout),
            expected,
            "state must not leak between tests"
        );
    }
    runner.exit().unwrap();
    assert!(child.wait().unwrap().success());
}

#[test]
fn stdin_works_through_every_interface() {
    let source = "import os, sys\nfirst = os.read(0, 3)\nrest = sys.stdin.buffer.read()\nprint(first, rest, open(0).read() == '')";
    let (_child, mut runner) = loaded(source);
    let test = runner.run_test(b"abcdef", None, LIMITS).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&test.stdout),
        "b'abc' b'def' True\n"
    );
}

#[test]
fn an_appended_assert_runs_after_the_program_as_in_one_file() {
    let (_child, mut runner) = loaded("def f(x):\n    return x + 1");
    let passing = runner
        .run_test(b"", Some("assert f(1) == 2"), LIMITS)
        .unwrap();
    assert_eq!(passing.exit_code, Some(0));
    let failing = runner
        .run_test(b"", Some("assert f(1) == 3"), LIMITS)
        .unwrap();
    assert_eq!(failing.exit_code, Some(1));
    assert!(String::from_utf8_lossy(&failing.stderr).contains("AssertionError"));
}

#[test]
fn os_exit_zero_ends_the_program_with_what_it_flushed() {
    let (_child, mut runner) = start();
    runner
        .load(
            &["import os\nprint('4', flush=True)\nos._exit(0)\nprint('5')"],
            "solution.py",
            &[],
            None,
        )
        .unwrap();
    let test = runner.run_test(b"", None, LIMITS).unwrap();
    assert_eq!(test.exit_code, Some(0));
    assert_eq!(test.stdout, b"4\n");
}

#[test]
fn what_del_methods_print_at_shutdown_still_comes_out() {
    // CPython clears `__main__` at shutdown, so an object's `__del__` runs and what it prints
    // is flushed; a forked child that only exited would lose it (issue 22).
    let (_child, mut runner) = start();
    runner
        .load(
            &["class Noisy:\n    def __del__(self):\n        print('bye')\nkeep = Noisy()\nprint('hi')"],
            "solution.py",
            &[],
            None,
        )
        .unwrap();
    let test = runner.run_test(b"", None, LIMITS).unwrap();
    assert_eq!(test.exit_code, Some(0));
    assert_eq!(String::from_utf8_lossy(&test.stdout), "hi\nbye\n");
}

#[test]
fn a_syntax_error_fails_every_test_with_its_message() {
    let (_child, mut runner) = start();
    let report = runner.load(&["x = (\n"], "solution.py", &[], None).unwrap();
    assert_a_syntax_error_fails_the_tests(&mut runner, &report);
}

/// The load reported a SyntaxError, and a test then exits with status 1 and its message.
fn assert_a_syntax_error_fails_the_tests(runner: &mut Runner, report: &LoadReport) {
    assert!(
        report
            .compile_error
            .as_deref()
            .unwrap()
            .contains("SyntaxError")
    );
    let test = runner.run_test(b"", None, LIMITS).unwrap();
    assert_eq!(
        (test.outcome, test.exit_code),
        (ChildEnding::Exited, Some(1))
    );
    assert!(String::from_utf8_lossy(&test.stderr).contains("SyntaxError"));
}

/// A program CPython 3.11 takes several seconds to compile: it parses a long f-string in
/// quadratic time.
fn slow_to_compile() -> String {
    format!("_pad = f\"{}\"\nprint('compiled')", "{0}".repeat(120_000))
}

/// A long program compiles given the load's budget: past it, the load reports why
/// and every test times out (a fresh `python FILE` per test would still be compiling); within
/// it, the compiled program runs as usual, and a long program's syntax error keeps its message.
#[test]
fn a_long_program_that_compiles_past_its_budget_times_out_every_test() {
    use std::time::{Duration, Instant};

    let (_child, mut runner) = start();
    let slow = slow_to_compile();
    let started = Instant::now();
    let report = runner
        .load_bounded(
            &[&slow],
            "solution.py",
            &[],
            None,
            Some(Duration::from_millis(300)),
        )
        .unwrap();
    let compile_error = report.compile_error.expect("the budget ran out");
    assert!(
        compile_error.contains("took longer than the test's time limit (300 ms)"),
        "{compile_error}"
    );
    for _ in 0..2 {
        let test = runner.run_test(b"", None, LIMITS).unwrap();
        assert_eq!(test.outcome, ChildEnding::Timeout, "{test:?}");
        assert!(test.stdout.is_empty());
        assert_eq!(test.wall_ms, 300.0);
    }
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );

    let long = format!("# {}\nprint(input())", "x".repeat(70_000));
    let report = runner
        .load_bounded(
            &[&long],
            "solution.py",
            &[],
            None,
            Some(Duration::from_secs(30)),
        )
        .unwrap();
    assert_eq!(report.compile_error, None);
    let test = runner.run_test(b"echo\n", None, LIMITS).unwrap();
    assert_eq!(
        (test.outcome, test.stdout),
        (ChildEnding::Exited, b"echo\n".to_vec())
    );

    let broken = format!("{long}\nx = (\n");
    let report = runner
        .load_bounded(
            &[&broken],
            "solution.py",
            &[],
            None,
            Some(Duration::from_secs(30)),
        )
        .unwrap();
    assert_a_syntax_error_fails_the_tests(&mut runner, &report);
}

/// The CPU time, in clock ticks, process `pid` has used (`/proc/PID/stat`'s utime and stime).
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// A job's first load compiles in the job process while the template watches (docs/runner.md):
/// when the job process dies compiling (killed here from outside, as an out-of-memory kill
/// would), a replacement answers the load with the compiler's death, every test of the job
/// fails with it, and the next job compiles and runs as usual.
#[test]
fn a_job_process_that_dies_compiling_is_replaced_and_the_load_says_so() {
    use std::time::Duration;

    let (child, mut runner) = start();
    let template = child.id();
    let killer = std::thread::spawn(move || {
        // The job process is the template's child; once it has used 30 clock ticks of CPU it is
        // compiling (reading the load's payload takes a fraction of one).
        let mut job = None;
        let found = rlvr_test_support::wait_until(Duration::from_secs(20), || {
            job = std::fs::read_to_string(format!("/proc/{template}/task/{template}/children"))
                .ok()
                .and_then(|children| children.split_whitespace().next()?.parse::<u32>().ok())
                .filter(|&pid| cpu_ticks(pid).is_some_and(|ticks| ticks >= 30));
            job.is_some()
        });
        assert!(found, "no job process compiled");
        let job = job.unwrap();
        let killed = Command::new("kill")
            .args(["-KILL", &job.to_string()])
            .status();
        assert!(killed.unwrap().success());
    });
    let slow = slow_to_compile();
    let report = runner
        .load_bounded(
            &[&slow],
            "solution.py",
            &[],
            None,
            Some(Duration::from_secs(60)),
        )
        .unwrap();
    killer.join().unwrap();
    let compile_error = report.compile_error.expect("the compile did not finish");
    assert!(
        compile_error.contains("the compiler died (signal 9)"),
        "{compile_error}"
    );
    let test = runner.run_test(b"", None, LIMITS).unwrap();
    assert_eq!(
        (test.outcome, test.exit_code),
        (ChildEnding::Exited, Some(1))
    );
    assert!(String::from_utf8_lossy(&test.stderr).contains("the compiler died"));

    // Outside a sandbox the runner cannot vouch for the process table (false), but it still
    // ends the job and resets.
    let work = tempfile::tempdir().unwrap();
    runner.reset(work.path().to_str().unwrap()).unwrap();
    let report = runner
        .load(&["print(input()[::-1])"], "solution.py", &[], None)
        .unwrap();
    assert_eq!(report.compile_error, None);
    let test = runner.run_test(b"abc\n", None, LIMITS).unwrap();
    assert_eq!(test.stdout, b"cba\n");
}

#[test]
fn a_missing_preload_module_is_reported() {
    let (_child, mut runner) = start();
    let report = runner
        .load(
            &["pass"],
            "solution.py",
            &["json", "no_such_module_rlvr"],
            None,
        )
        .unwrap();
    assert!(!report.ok);
    assert_eq!(report.preload_errors.len(), 1);
    assert!(report.preload_errors[0].starts_with("no_such_module_rlvr: ModuleNotFoundError"));
}

#[test]
fn the_wall_clock_kills_a_loop_and_the_runner_goes_on() {
    let (_child, mut runner) = start();
    runner
        .load(
            &["import sys\nif sys.stdin.read() == 'spin':\n    while True: pass\nprint('fine')"],
            "solution.py",
            &[],
            None,
        )
        .unwrap();
    let limits = TestLimits {
        wall_ms: 300,
        ..LIMITS
    };
    let spinning = runner.run_test(b"spin", None, limits).unwrap();
    assert_eq!(spinning.outcome, ChildEnding::Timeout);
    assert!(spinning.wall_ms >= 300.0);
    let after = runner.run_test(b"", None, limits).unwrap();
    assert_eq!(after.stdout, b"fine\n");
}

#[test]
fn output_past_the_limit_is_cut_and_marked() {
    let (_child, mut runner) = start();
    runner
        .load(
            &["import sys\nwhile True:\n    sys.stdout.write('x' * 65536)"],
            "solution.py",
            &[],
            None,
        )
        .unwrap();
    let limits = TestLimits {
        output_bytes: 1 << 20,
        ..LIMITS
    };
    let test = runner.run_test(b"", None, limits).unwrap();
    assert!(test.stdout_truncated);
    assert!(test.stdout.len() <= 1 << 20);
    // SIGXFSZ ends a test child, unless it is init of its own PID namespace (the runner gives
    // each test one when it can): then the write fails and Python exits with an error.
    assert!(
        test.signal == Some(25) || test.exit_code == Some(1),
        "{test:?}"
    );
}

#[test]
fn a_fifty_megabyte_stdin_that_is_never_read_does_not_block() {
    let (_child, mut runner) = loaded("print('ignored the input')");
    let input = vec![b'7'; 50 << 20];
    let test = runner.run_test(&input, None, LIMITS).unwrap();
    assert_eq!(test.stdout, b"ignored the input\n");
}

#[test]
fn pre_imported_random_generators_are_reseeded_per_test() {
    let (_child, mut runner) = start();
    runner
        .load(
            &["import random\nprint(random.random())"],
            "solution.py",
            &["random"],
            None,
        )
        .unwrap();
    let first = runner.run_test(b"", None, LIMITS).unwrap();
    let second = runner.run_test(b"", None, LIMITS).unwrap();
    assert_ne!(first.stdout, second.stdout);
}

#[test]
fn atexit_handlers_and_threads_finish_before_the_report() {
    let source = "import atexit, threading, time\natexit.register(lambda: print('atexit'))\ndef late():\n    time.sleep(0.1)\n    print('thread')\nthreading.Thread(target=late).start()";
    let (_child, mut runner) = loaded(source);
    let test = runner.run_test(b"", None, LIMITS).unwrap();
    assert_eq!(test.stdout, b"thread\natexit\n");
}

#[test]
fn a_dead_runner_is_an_error_not_a_hang() {
    let (mut child, mut runner) = loaded("pass");
    child.kill().unwrap();
    child.wait().unwrap();
    let error = runner.run_test(b"", None, LIMITS).unwrap_err();
    assert!(
        matches!(error, PipeError::Closed | PipeError::Io(_)),
        "{error}"
    );
}

#[test]
fn a_stuck_runner_hits_the_deadline() {
    let (mut child, mut runner) = loaded("pass");
    // SIGSTOP: alive but silent. The job process that serves the loaded job is a child of the
    // runner (runner/job.py): stop it too.
    let pid = child.id() as i32;
    for job in children_of(pid) {
        assert_eq!(unsafe_free_kill(job, "STOP"), 0);
    }
    assert_eq!(unsafe_free_kill(pid, "STOP"), 0);
    let limits = TestLimits {
        wall_ms: 10,
        ..LIMITS
    };
    let started = std::time::Instant::now();
    let error = runner.run_test(b"", None, limits).unwrap_err();
    assert!(matches!(error, PipeError::Deadline), "{error}");
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    child.kill().unwrap();
    child.wait().unwrap();
}

/// Sends a signal with the `kill` command, keeping this test crate free of `unsafe`.
/// The processes whose parent is `pid` (`/proc/PID/task/*/children`).
fn children_of(pid: i32) -> Vec<i32> {
    let mut children = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
    {
        let listed = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        children.extend(
            listed
                .split_whitespace()
                .filter_map(|child| child.parse::<i32>().ok()),
        );
    }
    children
}

fn unsafe_free_kill(pid: i32, signal: &str) -> i32 {
    Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .unwrap()
        .code()
        .unwrap_or(-1)
}

#[test]
fn the_prime_harness_swallows_system_exit_but_not_exit() {
    let (_child, mut runner) = start();
    let harness = Some(rlvr_runner::Harness::Prime);
    runner
        .load(
            &["a, b = map(int, input().split())\nprint(a + b)\nraise SystemExit(1)"],
            "solution.py",
            &[],
            harness,
        )
        .unwrap();
    let swallowed = runner.run_test(b"2 3\n", None, LIMITS).unwrap();
    assert_eq!(
        (swallowed.exit_code, swallowed.stdout.as_slice()),
        (Some(0), &b"5\n"[..])
    );
    runner
        .load(&["print(4)\nexit()"], "solution.py", &[], harness)
        .unwrap();
    let exit_is_none = runner.run_test(b"", None, LIMITS).unwrap();
    assert_eq!(
        exit_is_none.exit_code,
        Some(1),
        "exit is None under prime's reliability guard"
    );
    runner
        .load(
            &["from sys import stdin\nprint(stdin.readline().strip() or 'EMPTY')"],
            "solution.py",
            &[],
            harness,
        )
        .unwrap();
    let alias = runner.run_test(b"hi\n", None, LIMITS).unwrap();
    assert_eq!(
        alias.stdout, b"hi\n",
        "a module-level alias holds the stdin object whose readline prime_code patches (checked against the real function)"
    );
}

#[test]
fn the_live_code_bench_harness_unwraps_the_main_guard() {
    let (_child, mut runner) = start();
    let source = "import sys\ndef main():\n    print(sys.stdin.readline().strip()[::-1])\nif __name__ == '__main__':\n    main()";
    runner
        .load(
            &[source],
            "solution.py",
            &[],
            Some(rlvr_runner::Harness::LiveCodeBench),
        )
        .unwrap();
    let test = runner.run_test(b"abc\n", None, LIMITS).unwrap();
    assert_eq!(
        (test.exit_code, test.stdout.as_slice()),
        (Some(0), &b"cba\n"[..])
    );
}

/// A test child starts with the modules a fresh `python FILE` has: not `threading` nor `random`,
/// also after the runner reset for another job. Besides fidelity this keeps their after-fork
/// hooks out of every child: `threading`'s alone wrote about 120 pages per child
/// (BENCHMARKS.md, "What reward integrity costs the judge").
#[test]
fn test_children_start_without_threading_or_random() {
    let (_child, mut runner) = start();
    let work = tempfile::tempdir().unwrap();
    let source = "import sys\nprint('threading' in sys.modules, 'random' in sys.modules)";
    for _ in 0..2 {
        runner.load(&[source], "solution.py", &[], None).unwrap();
        let test = runner.run_test(b"", None, LIMITS).unwrap();
        assert_eq!(String::from_utf8_lossy(&test.stdout), "False False\n");
        // Outside a sandbox the runner cannot vouch for the process table (false), but it
        // still does the whole reset.
        runner.reset(work.path().to_str().unwrap()).unwrap();
    }
}

/// With `fresh_work_directory` the runner empties the directory after the test, whatever the
/// test left: a tree deeper than Python's recursion limit and than PATH_MAX, directories
/// without permissions, a symbolic link to a directory outside (removed, not followed), the
/// directory's own mode and extended attributes.
#[test]
fn the_work_directory_is_emptied_after_a_test_whatever_it_left() {
    let (_child, mut runner) = start();
    // On a tmpfs where there is one: 3,000 nested directories on a busy disk take seconds.
    let work = tempfile::tempdir_in("/dev/shm").unwrap_or_else(|_| tempfile::tempdir().unwrap());
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("kept"), b"").unwrap();
    let source = "import os, sys\n\
                  work, outside = sys.stdin.read().split()\n\
                  print(sorted(os.listdir(work)))\n\
                  os.chdir(work)\n\
                  for _ in range(3000):\n    os.mkdir('d'); os.chdir('d'); open('f', 'w').close()\n\
                  os.chdir(work)\n\
                  os.mkdir('locked'); open('locked/x', 'w').close(); os.chmod('locked', 0)\n\
                  os.symlink(outside, 'link')\n\
                  os.chmod(work, 0o755)\n\
                  os.setxattr(work, 'user.left', b'1')";
    runner.load(&[source], "solution.py", &[], None).unwrap();
    let stdin = format!("{} {}", work.path().display(), outside.path().display());
    let judge = rlvr_runner::JudgeOptions {
        sensor: false,
        live: false,
        fresh_work_directory: Some(work.path().to_str().unwrap()),
    };
    for _ in 0..2 {
        let test = runner
            .run_judge_test(stdin.as_bytes(), None, judge, LIMITS)
            .unwrap();
        assert_eq!(test.exit_code, Some(0), "{test:?}");
        assert_eq!(String::from_utf8_lossy(&test.stdout), "[]\n");
    }
    assert_eq!(std::fs::read_dir(work.path()).unwrap().count(), 0);
    assert!(outside.path().join("kept").exists());
}
