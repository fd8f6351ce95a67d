//! The warm runner must give the same verdicts as one fresh sandboxed `python` per test, the way
//! the references run their tests (issue 6). The same corpus goes through the engine and through
//! `Sandbox::run` program by program; every verdict must agree.

use std::sync::Arc;
use std::time::Duration;

use crate::common::score_all;
use rlvr_engine::{Engine, EngineConfig, Job};
use rlvr_sandbox::{Program, RunRequest, Sandbox, SandboxConfig, Stdin};
use rlvr_verify::{
    ExecutionResult, Plan, PlanOptions, Profile, ProfileName, TestSuite, Verdict, judge_test, plan,
};

fn fenced(code: &str) -> String {
    format!("<think>\nplan\n</think>\n```python\n{code}\n```")
}

/// Programs that exercise every path where a forked child could differ from a fresh process.
fn stdin_programs() -> Vec<&'static str> {
    vec![
        "a, b = map(int, input().split())\nprint(a + b)",
        "a, b = map(int, input().split())\nprint(a - b)",
        "import sys\ndata = sys.stdin.buffer.read().split()\nprint(int(data[0]) + int(data[1]))",
        "import os\nparts = os.read(0, 100).split()\nprint(int(parts[0]) + int(parts[1]))",
        "print(sum(map(int, open(0).read().split())))",
        "a, b = map(int, input().split())\nprint(a + b)\nexit()",
        "a, b = map(int, input().split())\nprint(a + b)\nraise SystemExit(3)",
        "import sys\na, b = map(int, input().split())\nprint(a + b)\nsys.stdout.flush()\nimport os\nos._exit(0)",
        "a, b = map(int, input().split())\nprint(a + b)\n1 / 0",
        "import atexit\na, b = map(int, input().split())\natexit.register(print, a + b)",
        "import threading\na, b = map(int, input().split())\nthreading.Thread(target=lambda: print(a + b)).start()",
        "import random\na, b = map(int, input().split())\nprint(a + b if random.random() < 2 else 0)",
        "x = (",
        "while True:\n    pass",
        "import sys\nsys.stdout.write('x' * (1 << 22))",
        "counter = globals().setdefault('counter', [0])\ncounter[0] += 1\na, b = map(int, input().split())\nprint(a + b if counter[0] == 1 else -1)",
        "a, b = map(int, input().split())\nprint(f'{a + b}  ')",
    ]
}

fn functional_solutions() -> Vec<&'static str> {
    vec![
        "def add(a, b):\n    return a + b",
        "def add(a, b):\n    return a - b",
        "def add(a, b):\n    return a + b\nexit()",
        "import numpy as np\ndef add(a, b):\n    return int(np.add(a, b))",
        "def add(a, b):\n    raise RuntimeError('no')",
    ]
}

fn sandbox() -> Sandbox {
    Sandbox::new(SandboxConfig::default()).expect("the sandbox starts (tests run as root)")
}

/// Every test of the plan run as its own fresh sandboxed `python` process, with the plan's
/// time limit (at most 3 s). A fresh process pays the interpreter's start and the import of
/// numpy and pandas inside that limit, which a loaded machine can push past 3 s: a test that
/// timed out fresh but not warm is run fresh again with 60 s before its verdict counts.
fn fresh_verdicts(
    sandbox: &Sandbox,
    profile: &Profile,
    plan: &rlvr_verify::ExecutionPlan,
    warm: &[Verdict],
) -> Vec<Verdict> {
    let limit = plan.limits.time_per_test.min(Duration::from_secs(3));
    plan.programs
        .iter()
        .zip(warm)
        .map(|(program, warm)| {
            let verdict = fresh_verdict(sandbox, profile, plan, program, limit);
            if verdict == Verdict::Timeout && *warm != Verdict::Timeout {
                return fresh_verdict(sandbox, profile, plan, program, Duration::from_secs(60));
            }
            verdict
        })
        .collect()
}

fn fresh_verdict(
    sandbox: &Sandbox,
    profile: &Profile,
    plan: &rlvr_verify::ExecutionPlan,
    program: &rlvr_verify::TestProgram,
    limit: Duration,
) -> Verdict {
    let mut request = RunRequest::python(program.source.to_string());
    request.program = Program::Python {
        source: program.source.to_string(),
    };
    request.stdin = Stdin::Bytes(program.stdin.clone().unwrap_or_default().into_bytes());
    request.limits.wall = limit;
    request.limits.cpu = request.limits.wall;
    request.limits.output_bytes = plan.limits.output_bytes;
    let outcome = sandbox.run(&request).expect("the sandbox runs the program");
    let result = ExecutionResult {
        exit_code: outcome.exit_code,
        signal: outcome.signal,
        timed_out: outcome.verdict == rlvr_sandbox::RunVerdict::Timeout,
        memory_exceeded: outcome.verdict == rlvr_sandbox::RunVerdict::MemoryLimit,
        output_exceeded: outcome.verdict == rlvr_sandbox::RunVerdict::OutputLimit,
        stdout: outcome.stdout,
        ..ExecutionResult::default()
    };
    judge_test(profile, program, &result)
}

#[test]
fn the_warm_runner_gives_the_verdicts_of_a_fresh_process_per_test() {
    let sandbox = sandbox();
    let engine = Engine::start(
        sandbox.clone(),
        EngineConfig {
            workers: 2,
            queue_capacity: 8,
            testlib_header: None,
        },
    );
    let io_suite = TestSuite::from_value(&serde_json::json!({
        "inputs": ["1 2\n", "40 2\n", "-5 5\n"],
        "outputs": ["3\n", "42\n", "0\n"],
    }))
    .unwrap();
    let functional_suite = TestSuite::from_value(&serde_json::json!({
        "functional": ["assert add(1, 2) == 3", "assert add(2, 2) == 4", "assert add(0, 0) == 1"],
    }))
    .unwrap();
    let mut cases = Vec::new();
    for profile in [ProfileName::Judge, ProfileName::Klear] {
        for program in stdin_programs() {
            cases.push((profile, fenced(program), io_suite.clone()));
        }
    }
    // The judge's functional tests are not a program run by a fresh process (the test's code
    // runs in the referee: crates/rlvr/tests/reward_integrity_*.rs); Klear's are.
    for solution in functional_solutions() {
        cases.push((
            ProfileName::Klear,
            fenced(solution),
            functional_suite.clone(),
        ));
    }
    let options = PlanOptions {
        job_identity: b"equivalence".to_vec(),
        all_tests: true,
        time_limit: Some(Duration::from_secs(3)),
        ..PlanOptions::default()
    };
    let jobs = cases
        .iter()
        .map(|(profile, response, suite)| Job {
            profile: Arc::new(Profile::named(*profile)),
            response: response.clone(),
            suite: suite.clone(),
            options: options.clone(),
        })
        .collect();
    let mut compared = 0;
    for ((profile_name, response, suite), result) in cases.iter().zip(score_all(&engine, jobs)) {
        let profile = Profile::named(*profile_name);
        let Plan::Execute(execution) = plan(&profile, response, suite, &options) else {
            panic!("every case runs: {response}");
        };
        let warm: Vec<Verdict> = result
            .tests
            .expect("the engine keeps per-test verdicts")
            .iter()
            .map(|test| test.verdict)
            .collect();
        let fresh = fresh_verdicts(&sandbox, &profile, &execution, &warm);
        assert_eq!(warm, fresh, "{profile_name:?} {response}");
        compared += warm.len();
    }
    assert!(compared >= 90, "compared {compared} verdicts");
    engine.shutdown();
}
