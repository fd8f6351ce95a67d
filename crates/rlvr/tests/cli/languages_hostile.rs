//! Issue 24: the hostile suite of the Python sandbox (network, host files, the verifier's
//! environment, fork bombs, memory, output floods, processes left behind, state passed to a
//! later job) written in C++, C, Java, JavaScript, Go and Rust, plus the compiler's own attack
//! surface (`#include "/etc/shadow"`, `#include </dev/stdin>`, an endless include, template
//! explosion, flags smuggled in pragmas, `.incbin`, `include_str!`) and a Java program starting
//! threads past the process limit. Every program is a judge job of one `rlvr verify` run per
//! sandbox mode (root, user namespace, subordinate ids): each must get its verdict, the run must
//! end, and nothing may survive it or reach the host.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::{Caller, RunsRlvr, assert_no_survivors, in_every_mode};
use serde_json::{Value, json};

/// Every language with its fence tag and fixture extension.
const LANGUAGES: [(&str, &str); 6] = [
    ("cpp", "cpp"),
    ("c", "c"),
    ("java", "java"),
    ("javascript", "js"),
    ("go", "go"),
    ("rust", "rs"),
];

/// What a job must end with.
#[derive(Debug, Clone)]
enum Expect {
    /// This verdict on its one test.
    Verdict(&'static str),
    /// One of these verdicts (a runtime's way of failing is its own).
    OneOf(&'static [&'static str]),
}

struct Case {
    id: String,
    tag: &'static str,
    fixture: String,
    stdin: String,
    expected_output: &'static str,
    expect: Expect,
}

fn fixture_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hostile/languages")
        .join(name)
}

fn cases(port: u16, secret: &Path, marker_directory: &Path) -> Vec<Case> {
    let mut cases = Vec::new();
    for (tag, extension) in LANGUAGES {
        let case = |name: &str, stdin: String, output: &'static str, expect: Expect| Case {
            id: format!("{tag}/{name}"),
            tag,
            fixture: format!("{name}.{extension}"),
            stdin,
            expected_output: output,
            expect,
        };
        let memory: Expect = if tag == "c" {
            // malloc returns NULL at the address-space limit: C has no runtime to say so.
            Expect::OneOf(&["memory_limit", "runtime_error"])
        } else {
            Expect::Verdict("memory_limit")
        };
        cases.extend([
            case(
                "network",
                format!("{port}\n"),
                "blocked\n",
                Expect::Verdict("pass"),
            ),
            case(
                "files",
                format!("{}\n", secret.display()),
                "blocked\n",
                Expect::Verdict("pass"),
            ),
            case("secrets", String::new(), "clean\n", Expect::Verdict("pass")),
            case(
                "fork_bomb",
                String::new(),
                "never\n",
                Expect::OneOf(&["timeout", "runtime_error", "memory_limit"]),
            ),
            case("memory", String::new(), "never\n", memory),
            case(
                "output_flood",
                String::new(),
                "never\n",
                Expect::Verdict("output_limit"),
            ),
            case(
                "daemon",
                format!(
                    "{}\n",
                    marker_directory.join(format!("escaped-{tag}")).display()
                ),
                "started\n",
                Expect::Verdict("pass"),
            ),
            case(
                "cross_job_writer",
                String::new(),
                "written\n",
                Expect::Verdict("pass"),
            ),
            case(
                "cross_job_reader",
                String::new(),
                "fresh\n",
                Expect::Verdict("pass"),
            ),
        ]);
    }
    let compiler = |tag: &'static str, fixture: &str, output: &'static str, expect: Expect| Case {
        id: format!("{tag}/{fixture}"),
        tag,
        fixture: fixture.to_owned(),
        stdin: String::new(),
        expected_output: output,
        expect,
    };
    cases.extend([
        compiler(
            "cpp",
            "include_secret.cpp",
            "",
            Expect::Verdict("compile_error"),
        ),
        compiler(
            "cpp",
            "include_stdin.cpp",
            "compiled\n",
            Expect::Verdict("pass"),
        ),
        compiler(
            "cpp",
            "include_urandom.cpp",
            "",
            Expect::Verdict("compile_error"),
        ),
        compiler(
            "cpp",
            "template_explosion.cpp",
            "",
            Expect::Verdict("compile_error"),
        ),
        compiler(
            "cpp",
            "pragma_plugin.cpp",
            "42\n",
            Expect::OneOf(&["pass", "compile_error"]),
        ),
        compiler("c", "incbin_secret.c", "", Expect::Verdict("compile_error")),
        compiler(
            "rust",
            "include_secret.rs",
            "",
            Expect::Verdict("compile_error"),
        ),
        compiler(
            "java",
            "threads.java",
            "never\n",
            Expect::Verdict("runtime_error"),
        ),
    ]);
    cases
}

fn jobs_file(caller: &Caller, name: &str, cases: &[&Case]) -> PathBuf {
    let mut lines = String::new();
    for case in cases {
        let source = std::fs::read_to_string(fixture_path(&case.fixture)).expect("fixture");
        let job = json!({
            "id": case.id,
            "response": format!("<think>\nhostile\n</think>\n```{}\n{source}\n```", case.tag),
            "ground_truth": {"inputs": [case.stdin], "outputs": [case.expected_output]},
        });
        lines.push_str(&job.to_string());
        lines.push('\n');
    }
    caller.write(name, lines.as_bytes())
}

/// Scores `cases` with `rlvr verify` as `caller`, each test limited to `seconds` and 256 MB;
/// the results by id, and what verify printed on stderr.
fn verify_cases(
    caller: &Caller,
    name: &str,
    cases: &[&Case],
    seconds: &str,
) -> (BTreeMap<String, Value>, String) {
    let jobs = jobs_file(caller, name, cases);
    let started = Instant::now();
    let output = caller
        .rlvr(&[
            "verify",
            jobs.to_str().expect("utf-8"),
            "--details",
            "--time-limit",
            seconds,
            "--memory-limit",
            "256",
        ])
        .env("RLVR_TEST_SECRET", "verifier-environment-secret")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("rlvr verify runs");
    let elapsed = started.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    // Compiles (20 s each at most, the endless include among them) and tests, on two workers:
    // far less than this when nothing hangs.
    assert!(
        elapsed < Duration::from_secs(600),
        "took {elapsed:?}\n{stderr}"
    );
    let results = stdout
        .lines()
        .map(|line| {
            let value: Value = serde_json::from_str(line).expect("a result line");
            (value["id"].as_str().unwrap_or("").to_owned(), value)
        })
        .collect();
    (results, stderr)
}

in_every_mode!(
    issue_24_hostile_programs_in_every_language,
    61700,
    |caller| {
        let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
        listener.set_nonblocking(true).expect("nonblocking");
        let port = listener.local_addr().expect("address").port();
        let secret = caller.write("secret", b"host-secret-contents\n");
        let markers = caller.directory.path().to_path_buf();
        let cases = cases(port, &secret, &markers);
        // The memory bombs get a generous clock: they must end by their memory limit (in
        // 0.2 s when the machine is idle), and a loaded machine must not turn that into a
        // timeout. Every other case keeps a 3 s limit, so the endless ones end soon.
        let (memory, others): (Vec<&Case>, Vec<&Case>) = cases
            .iter()
            .partition(|case| case.fixture.starts_with("memory."));
        let (mut results, mut stderr) = verify_cases(caller, "jobs.jsonl", &others, "3");
        let (memory_results, memory_stderr) =
            verify_cases(caller, "memory-jobs.jsonl", &memory, "30");
        results.extend(memory_results);
        stderr.push_str(&memory_stderr);
        let mut failures = Vec::new();
        for case in &cases {
            let result = &results[&case.id];
            let verdict = result["tests"][0]["verdict"].as_str().unwrap_or("none");
            let ok = match &case.expect {
                Expect::Verdict(expected) => verdict == *expected,
                Expect::OneOf(allowed) => allowed.contains(&verdict),
            };
            if !ok || result["status"] != "ok" {
                failures.push(format!("{}: {:?} but got {result}", case.id, case.expect));
            }
        }
        assert!(
            failures.is_empty(),
            "{:?} mode:\n{}\nstderr: {stderr}",
            caller.mode,
            failures.join("\n")
        );
        // The compiler never showed the host's files, only that they are not there.
        for id in [
            "cpp/include_secret.cpp",
            "c/incbin_secret.c",
            "rust/include_secret.rs",
        ] {
            let reason = results[id]["reason"].as_str().unwrap_or("");
            assert!(
                !reason.contains("root:") && !reason.contains("host-secret"),
                "{id}: {reason}"
            );
            assert!(
                reason.contains("No such file")
                    || reason.contains("not found")
                    || reason.contains("couldn't read"),
                "{id}: {reason}"
            );
        }
        // Nothing connected to the host's listener.
        assert!(
            listener.accept().is_err(),
            "a program reached the host's listener"
        );
        // The daemons would write after 2 s: once no process of the sandbox's uids is left,
        // nothing can write a marker later, so their absence now is final.
        assert_no_survivors(&caller.sandbox_uids());
        for (tag, _) in LANGUAGES {
            let marker = markers.join(format!("escaped-{tag}"));
            assert!(
                !marker.exists(),
                "{tag}: a daemon wrote {}",
                marker.display()
            );
        }
        for path in ["/usr/rlvr-escape", "/rlvr-escape", "/usr/rlvr-dump"] {
            assert!(!Path::new(path).exists(), "{path} was written on the host");
        }
        assert_no_survivors(&caller.sandbox_uids());
    }
);
