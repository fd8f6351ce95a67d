//! Issue 12: no state of any kind passes from one job to the next on the same runner, nor to a
//! job running at the same time, and no response can reach the runner; issue 15: the same in
//! every sandbox mode. Job 1 (`programs/attacker.py`) tries every channel its author could
//! think of; job 2 prints a fingerprint of everything it can observe (`programs/fingerprint.py`)
//! that must equal the fingerprint a fresh runner's first test prints.
//!
//! Each scenario runs in-process as root, and again as an unprivileged user: the test binary
//! runs itself under `setpriv` (and, for subordinate ids, in a mount namespace with a private
//! `/etc/subuid`; see the `rlvr-test-support` crate), where the same scenario runs as an ignored
//! test that the outer one asserts passed.

use std::sync::Arc;
use std::time::Duration;

use crate::common::score_all;
use rlvr_engine::{Engine, EngineConfig, Job, start_runner};
use rlvr_runner::{JudgeOptions, TestLimits};
use rlvr_sandbox::{Sandbox, SandboxConfig, WORK_DIRECTORY};
use rlvr_test_support::{Caller, Mode};
use rlvr_verify::{PlanOptions, Profile, ProfileName, TestSuite, Verdict};

const FINGERPRINT: &str = include_str!("programs/fingerprint.py");
const ATTACKER: &str = include_str!("programs/attacker.py");
/// Calls that kill the caller (SIGSYS): tampering that must end as the solution's failure.
const TAMPERING: [&str; 3] = [
    "import ctypes, os\nctypes.CDLL(None).ptrace(16, os.getppid() or 1, None, None)\nprint(3)",
    "import ctypes\nctypes.CDLL(None).unshare(0x10000000)\nprint(3)",
    "import ctypes\nctypes.CDLL(None).mount(b'none', b'/tmp', b'tmpfs', 0, None)\nprint(3)",
];
/// The two namespace calls the supervisor's filter lets through: a test child, holding no
/// capability, must be refused both by the kernel (EPERM), so it can neither leave its PID
/// namespace nor make one to hide in.
const PID_NAMESPACE_CALLS: &str = "import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
unshared = libc.unshare(0x20000000)
unshare_errno = ctypes.get_errno()
entered = libc.setns(os.open('/proc/self/ns/pid', os.O_RDONLY), 0x20000000)
print(unshared, unshare_errno, entered, ctypes.get_errno(), os.getpid())";
const LIMITS: TestLimits = TestLimits {
    wall_ms: 20_000,
    cpu_seconds: 20,
    output_bytes: 1 << 20,
    address_space_bytes: 0,
};
/// Root mode's host uids for these tests' programs and runners (see `support`).
const PROGRAM_UID: u32 = 64001;

fn sandbox() -> Sandbox {
    Sandbox::new(SandboxConfig {
        uid: PROGRAM_UID,
        gid: PROGRAM_UID,
        runner_uid: PROGRAM_UID + 500,
        runner_gid: PROGRAM_UID + 500,
        ..SandboxConfig::default()
    })
    .expect("the sandbox starts")
}

/// What `source` prints as the first test of a freshly started runner.
/// What `source` prints in a fresh runner's first test; `judge` runs it as the judge profile's
/// tests run (with the tamper sensor's descriptor open), so the engine's judge jobs compare
/// against the same world.
fn first_output(sandbox: &Sandbox, source: &str, stdin: &[u8], judge: bool) -> String {
    let mut started = start_runner(sandbox, 1 << 30, Duration::from_secs(120)).expect("runner");
    let report = started
        .runner
        .load(&[source], "solution.py", &[], None)
        .expect("load");
    assert!(report.ok, "{report:?}");
    let test = started
        .runner
        .run_judge_test(
            stdin,
            None,
            JudgeOptions {
                sensor: judge,
                live: false,
                fresh_work_directory: judge.then_some(WORK_DIRECTORY),
            },
            LIMITS,
        )
        .expect("the runner answers");
    assert_eq!(
        test.exit_code,
        Some(0),
        "{}",
        String::from_utf8_lossy(&test.stderr)
    );
    String::from_utf8(test.stdout).expect("utf-8")
}

/// Job 1 attacks (then the tampering calls kill their tests) on one runner; the runner must
/// still vouch for itself between jobs, and job 2's fingerprint must be a fresh runner's.
fn scenario_same_runner() {
    let sandbox = sandbox();
    let pristine = first_output(&sandbox, FINGERPRINT, b"", false);
    let mut started = start_runner(&sandbox, 1 << 30, Duration::from_secs(120)).expect("runner");
    let runner = &mut started.runner;
    runner
        .load(&[ATTACKER], "solution.py", &[], None)
        .expect("load");
    for _ in 0..2 {
        let test = runner.run_test(b"1 2\n", None, LIMITS).expect("answer");
        assert_eq!(test.stdout, b"3\n", "{test:?}");
    }
    assert!(
        runner.reset(WORK_DIRECTORY).expect("reset"),
        "the runner was reached by job 1"
    );
    for source in TAMPERING {
        runner
            .load(&[source], "solution.py", &[], None)
            .expect("load");
        let test = runner.run_test(b"", None, LIMITS).expect("answer");
        assert_eq!(test.signal, Some(31), "not killed by SIGSYS: {source}");
        assert!(runner.reset(WORK_DIRECTORY).expect("reset"));
    }
    runner
        .load(&[PID_NAMESPACE_CALLS], "solution.py", &[], None)
        .expect("load");
    let test = runner.run_test(b"", None, LIMITS).expect("answer");
    assert_eq!(
        String::from_utf8_lossy(&test.stdout),
        "-1 1 -1 1 1\n", // EPERM is 1; the child is PID 1 of its own namespace
        "{test:?}"
    );
    assert!(runner.reset(WORK_DIRECTORY).expect("reset"));
    runner
        .load(&[FINGERPRINT], "solution.py", &[], None)
        .expect("load");
    let test = runner.run_test(b"", None, LIMITS).expect("answer");
    let after = String::from_utf8(test.stdout).expect("utf-8");
    let differences = differences(&pristine, &after);
    assert!(
        differences.is_empty(),
        "job 2 saw a world job 1 changed:\n{}",
        differences.join("\n")
    );
}

/// The entries of two fingerprints that differ, as `key: fresh -> after`.
fn differences(fresh: &str, after: &str) -> Vec<String> {
    let parse = |text: &str| -> serde_json::Map<String, serde_json::Value> {
        serde_json::from_str(text)
            .unwrap_or_else(|error| panic!("not a fingerprint ({error}): {text}"))
    };
    let (fresh, after) = (parse(fresh), parse(after));
    let mut keys: Vec<&String> = fresh.keys().chain(after.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|key| fresh.get(*key) != after.get(*key))
        .map(|key| format!("{key}: {:?} -> {:?}", fresh.get(key), after.get(key)))
        .collect()
}

fn job(source: &str, inputs: Vec<String>, outputs: Vec<String>) -> Job {
    Job {
        profile: Arc::new(Profile::named(ProfileName::Judge)),
        response: format!("<think>\nplan\n</think>\n```python\n{source}\n```"),
        suite: TestSuite::from_value(&serde_json::json!({"inputs": inputs, "outputs": outputs}))
            .expect("suite"),
        options: PlanOptions {
            job_identity: b"job".to_vec(),
            ..PlanOptions::default()
        },
    }
}

/// The same through the engine, end to end: on one worker, job 1 attacks, the tampering jobs
/// score 0 (never null), job 2's fingerprint passes against a fresh runner's; on two workers,
/// fingerprints taken while an attacker runs next to them pass too.
fn scenario_engine() {
    let sandbox = sandbox();
    let pristine = first_output(&sandbox, FINGERPRINT, b"", true);
    let fingerprint = || job(FINGERPRINT, vec![String::new()], vec![pristine.clone()]);
    let sums = || {
        (
            vec!["1 2\n".to_owned(), "5 5\n".to_owned()],
            vec!["3\n".to_owned(), "10\n".to_owned()],
        )
    };
    let engine = Engine::start(
        sandbox.clone(),
        EngineConfig {
            workers: 1,
            queue_capacity: 8,
            testlib_header: None,
        },
    );
    let mut jobs = vec![job(ATTACKER, sums().0, sums().1)];
    for source in TAMPERING {
        jobs.push(job(source, vec![String::new()], vec!["3\n".to_owned()]));
    }
    jobs.push(fingerprint());
    let results = score_all(&engine, jobs);
    engine.shutdown();
    assert_eq!(results[0].score, Some(1.0), "{:?}", results[0]);
    for (index, result) in results[1..=TAMPERING.len()].iter().enumerate() {
        assert_eq!(result.score, Some(0.0), "tampering job {index}: {result:?}");
        let verdicts: Vec<Verdict> = result
            .tests
            .iter()
            .flatten()
            .map(|test| test.verdict)
            .collect();
        assert!(!verdicts.contains(&Verdict::SandboxError), "{result:?}");
    }
    let last = results.last().expect("fingerprint result");
    assert_eq!(
        last.score,
        Some(1.0),
        "job 2 saw a world job 1 changed: {last:?}"
    );

    let engine = Engine::start(
        sandbox,
        EngineConfig {
            workers: 2,
            queue_capacity: 8,
            testlib_header: None,
        },
    );
    let slow_attacker = format!("import time\n{ATTACKER}\ntime.sleep(1)");
    let mut jobs = vec![job(&slow_attacker, sums().0, sums().1)];
    jobs.extend((0..4).map(|_| fingerprint()));
    let results = score_all(&engine, jobs);
    engine.shutdown();
    assert_eq!(results[0].score, Some(1.0), "{:?}", results[0]);
    for result in &results[1..] {
        assert_eq!(
            result.score,
            Some(1.0),
            "a concurrent attacker changed a fingerprint: {result:?}"
        );
    }
}

/// The children of process `parent`, with their command lines.
fn children_of(parent: i32) -> Vec<(i32, String)> {
    let parent = parent.to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(pid) = name.parse::<i32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let its_parent = stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().nth(1));
        if its_parent == Some(parent.as_str()) {
            let command = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            found.push((pid, String::from_utf8_lossy(&command).into_owned()));
        }
    }
    found
}

/// Our own children whose command line is the warm runner's (the sandbox makes each runner a
/// direct child of the process that spawned it).
fn runner_children() -> Vec<i32> {
    children_of(std::process::id() as i32)
        .into_iter()
        .filter(|(_, command)| command.contains("rlvr warm runner"))
        .map(|(pid, _)| pid)
        .collect()
}

/// A runner that dies in the middle of a job (killed from outside here: a response cannot
/// reach it) is replaced; the test it was running runs again and the job scores as if nothing
/// happened, never `null`.
fn scenario_runner_restart() {
    let engine = Engine::start(
        sandbox(),
        EngineConfig {
            workers: 1,
            queue_capacity: 8,
            testlib_header: None,
        },
    );
    let inputs: Vec<String> = (0..6).map(|index| format!("{index} {index}\n")).collect();
    let outputs: Vec<String> = (0..6).map(|index| format!("{}\n", 2 * index)).collect();
    let slow = "import time\ntime.sleep(0.4)\na, b = map(int, input().split())\nprint(a + b)";
    let killer = std::thread::spawn(|| {
        // A few tests into the job: the runner has forked a second test's child.
        let mut tests_seen = std::collections::BTreeSet::new();
        let mid_job = rlvr_test_support::wait_until(Duration::from_secs(60), || {
            for runner in runner_children() {
                tests_seen.extend(children_of(runner).into_iter().map(|(pid, _)| pid));
            }
            tests_seen.len() >= 2
        });
        assert!(mid_job, "no runner ran two tests: {tests_seen:?}");
        let killed = runner_children();
        for pid in &killed {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
        killed
    });
    let results = score_all(&engine, vec![job(slow, inputs, outputs)]);
    let killed = killer.join().expect("killer thread");
    // The job needed a new runner after the kill: it is the one kept for the next job.
    let replacements = runner_children();
    engine.shutdown();
    assert!(!killed.is_empty());
    assert!(
        !replacements.is_empty() && replacements.iter().all(|pid| !killed.contains(pid)),
        "no replacement runner: killed {killed:?}, now {replacements:?}"
    );
    assert_eq!(results[0].score, Some(1.0), "{:?}", results[0]);
}

/// The test binary's name for test `name` of this module (`cross_job::NAME`).
fn this_module_test(name: &str) -> String {
    let module = module_path!()
        .split_once("::")
        .map_or("", |(_, module)| module);
    format!("{module}::{name}")
}

/// Runs `inner` (an ignored test of this binary) again as `mode`'s unprivileged caller and
/// asserts it passed; skipped with a message when the mode cannot run here.
fn rerun_unprivileged(mode: Mode, uid: u32, inner: &str) {
    let Some(caller) = Caller::new(mode, uid) else {
        return;
    };
    let executable = std::env::current_exe().expect("test binary");
    let output = caller
        .program(
            executable.to_str().expect("utf-8 path"),
            &[
                "--exact",
                &this_module_test(inner),
                "--ignored",
                "--nocapture",
            ],
        )
        .output()
        .expect("run the test binary unprivileged");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{mode:?}: {text}");
    assert!(
        text.contains("1 passed"),
        "{mode:?}: the inner test did not run: {text}"
    );
}

#[test]
fn issue_12_nothing_passes_from_job_to_job_on_one_runner_as_root() {
    if Caller::new(Mode::Root, PROGRAM_UID).is_some() {
        scenario_same_runner();
    }
}

#[test]
fn issue_12_nothing_passes_between_jobs_through_the_engine_as_root() {
    if Caller::new(Mode::Root, PROGRAM_UID).is_some() {
        scenario_engine();
    }
}

#[test]
fn issue_12_a_dead_runner_is_replaced_as_root() {
    if Caller::new(Mode::Root, PROGRAM_UID).is_some() {
        scenario_runner_restart();
    }
}

#[test]
fn issue_15_nothing_passes_from_job_to_job_in_a_user_namespace() {
    rerun_unprivileged(Mode::UserNamespace, 64101, "unprivileged_same_runner");
    rerun_unprivileged(Mode::UserNamespace, 64102, "unprivileged_engine");
    rerun_unprivileged(Mode::UserNamespace, 64103, "unprivileged_runner_restart");
}

#[test]
fn issue_15_nothing_passes_from_job_to_job_with_subordinate_ids() {
    rerun_unprivileged(Mode::SubordinateIds, 64201, "unprivileged_same_runner");
    rerun_unprivileged(Mode::SubordinateIds, 64202, "unprivileged_engine");
    rerun_unprivileged(Mode::SubordinateIds, 64203, "unprivileged_runner_restart");
}

#[test]
#[ignore = "run by the issue_15 tests as an unprivileged user"]
fn unprivileged_runner_restart() {
    scenario_runner_restart();
}

#[test]
#[ignore = "run by the issue_15 tests as an unprivileged user"]
fn unprivileged_same_runner() {
    scenario_same_runner();
}

#[test]
#[ignore = "run by the issue_15 tests as an unprivileged user"]
fn unprivileged_engine() {
    scenario_engine();
}
