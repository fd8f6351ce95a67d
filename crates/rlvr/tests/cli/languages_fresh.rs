//! Issue 32: every test of a compiled-language job sees what the first test of a fresh
//! supervisor or a fresh JVM sees, through `rlvr verify` and `rlvr serve`. Hostile programs read
//! the counters a test can read (PIDs in the sandbox's namespace, the work directory's inode
//! numbers, the warm JVM's thread ids and names, its locale and time zone, a system property)
//! and move them for the next test; the first test's output comes from `rlvr run`, a fresh
//! process, and every test of the job must print the same. Honest Java that closes its standard
//! streams, exits with `System.exit` or registers a printing shutdown hook scores 1.0 on every
//! test, and the main class is the one with `main`, whatever comments or nested classes say.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::{RunsRlvr, Served, in_every_mode, results, rlvr, write_lines};

fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/fresh_process")
            .join(name),
    )
    .expect("fixture")
}

/// What `source` prints on `stdin` as `rlvr run --lang LANGUAGE` runs it: the first test of a
/// fresh supervisor (and, for Java, of a fresh JVM).
fn fresh_output(directory: &Path, language: &str, file: &str, source: &str, stdin: &str) -> String {
    let program = directory.join(file);
    std::fs::write(&program, source).expect("write");
    let input = directory.join(format!("{file}.in"));
    std::fs::write(&input, stdin).expect("write");
    let output = rlvr()
        .args([
            "run",
            "--json",
            "--time-limit",
            "20",
            "--lang",
            language,
            "--stdin",
        ])
        .arg(&input)
        .arg(&program)
        .output()
        .expect("rlvr runs");
    let json: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "{file}: not JSON ({error}): {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    assert_eq!(json["verdict"], "ok", "{file}: {json}");
    json["stdout"].as_str().expect("stdout").to_owned()
}

/// A job of `source` in a `tag` fence, one test per input, each expecting its output.
fn job(id: &str, tag: &str, source: &str, inputs: &[&str], outputs: &[String]) -> Value {
    json!({
        "id": id,
        "response": format!("<think>\nsolving\n</think>\n```{tag}\n{source}\n```"),
        "ground_truth": {"inputs": inputs, "outputs": outputs},
    })
}

/// The same expected output for every input.
fn every(inputs: &[&str], output: &str) -> Vec<String> {
    inputs.iter().map(|_| output.to_owned()).collect()
}

/// Scores `jobs` with `rlvr verify --details` (10 s a test): the results by id.
fn verify(directory: &Path, jobs: &[Value]) -> Vec<Value> {
    let lines: Vec<String> = jobs.iter().map(Value::to_string).collect();
    let path = write_lines(directory, "jobs.jsonl", &lines);
    let output = rlvr()
        .arg("verify")
        .arg(&path)
        .args(["--details", "--time-limit", "10"])
        .output()
        .expect("rlvr runs");
    results(&output)
}

/// Scores `jobs` through `POST /v1/verify` of `rlvr serve` (10 s a test).
fn serve(jobs: &[Value]) -> Vec<Value> {
    let served = Served::start(&["--workers", "2"]);
    let response = served.post(
        "/v1/verify",
        &json!({"details": true, "time_limit": 10, "jobs": jobs}),
    );
    assert_eq!(response.status, 200, "{}", response.body);
    response.json()["results"]
        .as_array()
        .expect("results")
        .clone()
}

/// Every job scored 1.0 with every test passed.
fn assert_every_test_passes(through: &str, results: &[Value], jobs: &[Value]) {
    assert_eq!(results.len(), jobs.len(), "{through}: {results:?}");
    for (result, job) in results.iter().zip(jobs) {
        assert_eq!(result["id"], job["id"], "{through}");
        let verdicts: Vec<&str> = result["tests"]
            .as_array()
            .map(|tests| {
                tests
                    .iter()
                    .map(|test| test["verdict"].as_str().unwrap_or("none"))
                    .collect()
            })
            .unwrap_or_default();
        assert!(
            result["score"] == 1.0 && verdicts.iter().all(|verdict| *verdict == "pass"),
            "{through}: {} scored {} with {verdicts:?}: {result}",
            job["id"],
            result["score"]
        );
    }
}

/// How many processes, files or threads each test leaves to signal the next.
const SIGNALS: [&str; 5] = ["0", "9", "3", "17", "0"];

const SUM_C: &str = "#include <stdio.h>\nint main(void){ long long a, b; scanf(\"%lld %lld\", &a, &b); printf(\"%lld\\n\", a + b); return 0; }\n";
const SUM_JAVA: &str = "import java.util.*;\npublic class Sum { public static void main(String[] x) { Scanner s = new Scanner(System.in); System.out.println(s.nextLong() + s.nextLong()); } }\n";
const SUMS_IN: [&str; 3] = ["1 2\n", "20 22\n", "-5 5\n"];
const SUMS_OUT: [&str; 3] = ["3\n", "42\n", "0\n"];

/// The counter jobs (PIDs, inode numbers; C and JavaScript) with their fresh outputs, and an
/// honest control.
fn compiled_counter_jobs(directory: &Path) -> Vec<Value> {
    let mut jobs = Vec::new();
    for (id, language, file) in [
        ("pid", "c", "pid_counter.c"),
        ("inode", "c", "inode_counter.c"),
        ("javascript counters", "javascript", "counters.js"),
    ] {
        let source = fixture(file);
        let fresh = fresh_output(directory, language, file, &source, "0\n");
        assert!(!fresh.contains("no fresh"), "{file}: {fresh}");
        jobs.push(job(
            id,
            language,
            &source,
            &SIGNALS,
            &every(&SIGNALS, &fresh),
        ));
    }
    let sums = SUMS_OUT.map(str::to_owned);
    jobs.push(job("honest c", "c", SUM_C, &SUMS_IN, &sums));
    jobs
}

#[test]
fn issue_32_languages_compiled_tests_see_fresh_pid_and_inode_numbers() {
    let directory = tempfile::tempdir().expect("temp dir");
    let jobs = compiled_counter_jobs(directory.path());
    assert_every_test_passes("verify", &verify(directory.path(), &jobs), &jobs);
    assert_every_test_passes("serve", &serve(&jobs), &jobs);
}

in_every_mode!(
    issue_32_languages_fresh_numbers_in_every_sandbox_mode,
    61760,
    |caller| {
        let jobs = compiled_counter_jobs(caller.directory.path());
        let lines: Vec<String> = jobs.iter().map(Value::to_string).collect();
        let path = write_lines(caller.directory.path(), "jobs.jsonl", &lines);
        let output = caller
            .rlvr(&[
                "verify",
                path.to_str().expect("utf-8"),
                "--details",
                "--time-limit",
                "10",
            ])
            .output()
            .expect("rlvr runs");
        assert_every_test_passes(
            &format!("verify in {:?} mode", caller.mode),
            &results(&output),
            &jobs,
        );
    }
);

/// The Java jobs: the warm JVM's counters and global state, with their fresh outputs, and the
/// honest programs.
fn java_state_jobs(directory: &Path) -> Vec<Value> {
    let counters = fixture("Counters.java");
    let fresh = fresh_output(directory, "java", "Counters.java", &counters, "0\n");
    let property = fixture("Property.java");
    let hook = fixture("ShutdownHook.java");
    let hook_inputs = ["1", "41", "7"];
    let hook_outputs: Vec<String> = [1, 41, 7]
        .iter()
        .map(|a| format!("main {a}\nhook {}\n", a + 1))
        .collect();
    let sums = SUMS_OUT.map(str::to_owned);
    vec![
        job(
            "java counters",
            "java",
            &counters,
            &SIGNALS,
            &every(&SIGNALS, &fresh),
        ),
        job(
            "java property",
            "java",
            &property,
            &SIGNALS,
            &every(&SIGNALS, "first\n"),
        ),
        job(
            "java shutdown hook",
            "java",
            &hook,
            &hook_inputs,
            &hook_outputs,
        ),
        job(
            "java closes its streams",
            "java",
            &fixture("CloseStreams.java"),
            &SUMS_IN,
            &sums,
        ),
        job(
            "java exits",
            "java",
            &fixture("Exits.java"),
            &SUMS_IN,
            &sums,
        ),
        job("honest java", "java", SUM_JAVA, &SUMS_IN, &sums),
    ]
}

#[test]
fn issue_32_languages_the_warm_jvm_gives_every_test_a_fresh_jvm_state() {
    let directory = tempfile::tempdir().expect("temp dir");
    let jobs = java_state_jobs(directory.path());
    assert_every_test_passes("verify", &verify(directory.path(), &jobs), &jobs);
    assert_every_test_passes("serve", &serve(&jobs), &jobs);
}

/// A shutdown hook that halts with status 3 after the right answer: a fresh JVM exits 3, so
/// every test is a runtime error (a warm JVM that kept the hook for its own end would pass it).
#[test]
fn issue_32_languages_a_shutdown_hook_decides_the_exit_status_as_in_a_fresh_jvm() {
    let directory = tempfile::tempdir().expect("temp dir");
    let inputs = ["", "", ""];
    let jobs = [job(
        "java hook halts",
        "java",
        &fixture("HookHalts.java"),
        &inputs,
        &every(&inputs, "42\n"),
    )];
    for (through, results) in [
        ("verify", verify(directory.path(), &jobs)),
        ("serve", serve(&jobs)),
    ] {
        let verdicts: Vec<&str> = results[0]["tests"]
            .as_array()
            .map(|tests| {
                tests
                    .iter()
                    .map(|test| test["verdict"].as_str().unwrap_or("none"))
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(verdicts, ["runtime_error"; 3], "{through}: {}", results[0]);
        assert_eq!(results[0]["score"], 0.0, "{through}: {}", results[0]);
    }
}

/// Sources whose first words "public ... class" are not the main class, each printing its
/// a+b from the class that has `public static void main(String[])`.
const MAIN_CLASSES: [(&str, &str); 5] = [
    (
        "a comment names another class",
        "// public class Foo { }\n/* public class Bar */\nimport java.util.*;\npublic class Solution {\n  public static void main(String[] x) { Scanner s = new Scanner(System.in); System.out.println(s.nextLong() + s.nextLong()); }\n}\n",
    ),
    (
        "a nested public class comes first",
        "import java.util.*;\nclass Main {\n  public static class Helper { static long add(long a, long b) { return a + b; } }\n  public static void main(String[] x) { Scanner s = new Scanner(System.in); System.out.println(Helper.add(s.nextLong(), s.nextLong())); }\n}\n",
    ),
    (
        "two classes have main",
        "import java.util.*;\nclass Decoy { public static void main(String[] x) { System.out.println(\"decoy\"); } }\npublic class Answer {\n  public static void main(String[] x) { Scanner s = new Scanner(System.in); System.out.println(s.nextLong() + s.nextLong()); }\n}\n",
    ),
    (
        "no public class",
        "import java.util.*;\nclass Helper { static long add(long a, long b) { return a + b; } }\nclass Program {\n  public static void main(String[] x) { Scanner s = new Scanner(System.in); System.out.println(Helper.add(s.nextLong(), s.nextLong())); }\n}\n",
    ),
    (
        "a string names another class",
        "import java.util.*;\nclass Main {\n  static String text = \"public class Fake {\";\n  public static void main(String[] x) { Scanner s = new Scanner(System.in); System.out.println(s.nextLong() + s.nextLong()); }\n}\n",
    ),
];

#[test]
fn issue_32_languages_the_java_main_class_is_the_one_with_main() {
    let directory = tempfile::tempdir().expect("temp dir");
    let sums = SUMS_OUT.map(str::to_owned);
    let jobs: Vec<Value> = MAIN_CLASSES
        .iter()
        .map(|(id, source)| job(id, "java", source, &SUMS_IN, &sums))
        .collect();
    assert_every_test_passes("verify", &verify(directory.path(), &jobs), &jobs);
    assert_every_test_passes("serve", &serve(&jobs), &jobs);
}
