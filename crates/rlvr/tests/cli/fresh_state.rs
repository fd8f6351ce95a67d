//! Nothing carries over from one job or test to the next (issue 32), through `rlvr verify` and
//! `rlvr serve` with one worker (each test with sandbox uids of its own: tests run at once), so that every job runs in the same sandbox after the one before:
//! a wrong program that scans the memory it inherited finds no other job's source, input or
//! output (the runner's template never holds a job's data: runner/job.py), and the work
//! directory's inode numbers a test sees do not depend on what earlier tests created. Each
//! hostile program comes with its honest control (the same scan finds the job's own input, the
//! same inode reading from a test that creates nothing).

use serde_json::{Value, json};

use crate::support::{Served, fenced, job, results, rlvr, verify_as, write_lines};

/// A marker a job's source, input and output hold, built so that no file of this test holds
/// it whole (the scanning program looks for it with a pattern that does not match itself).
fn marker(kind: &str) -> String {
    format!("rlvr-cross-job-{kind}-{}", "7".repeat(6))
}

/// A job that carries markers in its source, its input and its output.
fn carrier() -> String {
    let code = format!("print({:?})\nprint(input())", marker("source"));
    job(
        "carrier",
        &fenced(&code),
        &json!({"inputs": [format!("{}\n", marker("input"))],
                "outputs": [format!("{}\n{}\n", marker("source"), marker("input"))]}),
    )
}

/// A program that reads every readable mapping of its own memory and prints how many times it
/// found its own input's marker (capped at 1: the control that the scan sees memory) and how
/// many times any other marker: an earlier job's source, input or output.
const SCANNER: &str = r#"import re
own = re.compile(rb"rlvr-cross-job-[s]canner-[0-9]{6}")
other = re.compile(rb"rlvr-cross-job-(?:[s]ource|[i]nput)-[0-9]{6}")
marker = input().strip().encode()
found_own = found_other = 0
with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", 0) as memory:
    for line in maps.read().splitlines():
        fields = line.split()
        if fields[1][0] != "r" or (len(fields) > 5 and fields[5] in ("[vvar]", "[vsyscall]", "[vvar_vclock]")):
            continue
        start, end = (int(part, 16) for part in fields[0].split("-"))
        try:
            memory.seek(start)
            data = memory.read(end - start)
        except (OSError, OverflowError, ValueError):
            continue
        found_own += len(own.findall(data))
        found_other += len(other.findall(data))
print(min(found_own, 1), found_other)
"#;

fn scanner() -> String {
    job(
        "scanner",
        &fenced(SCANNER),
        &json!({"inputs": [format!("{}\n", marker("scanner"))], "outputs": ["1 0\n"]}),
    )
}

/// A test's program: `files N` creates N files in the work directory and prints the inode
/// number of a probe file it creates next, less N: what a fresh sandbox shows, whatever ran
/// before. `unnamed K` tries K unnamed files (`O_TMPFILE`: such an inode is in no directory, so
/// nothing would show the runner that the test used the tmpfs; the sandbox refuses it) and creates
/// nothing else; `temporary` uses `tempfile.TemporaryFile`, as honest programs do.
const INODES: &str = r#"import os, tempfile
kind, number = input().split()
if kind == "files":
    for index in range(int(number)):
        open(f"/tmp/f{index}", "w").close()
    with open("/tmp/probe", "w") as probe:
        pass
    print(os.stat("/tmp/probe").st_ino - int(number))
elif kind == "unnamed":
    refused = 0
    for _ in range(int(number)):
        try:
            os.close(os.open("/tmp", os.O_TMPFILE | os.O_RDWR))
        except OSError:
            refused += 1
    print("refused" if refused == int(number) else "created")
else:
    with tempfile.TemporaryFile() as handle:
        handle.write(b"x")
        handle.seek(0)
        print("ok" if handle.read() == b"x" else "lost")
"#;

/// The inode job's tests and what each prints, `N` standing for a fresh sandbox's number.
const INODE_TESTS: [(&str, &str); 9] = [
    ("files 0", "N"),
    ("files 50", "N"),
    ("files 0", "N"),
    ("unnamed 30", "refused"),
    ("files 0", "N"),
    ("temporary 1", "ok"),
    ("files 0", "N"),
    ("files 7", "N"),
    ("files 0", "N"),
];

/// The inode job's ground truth for a fresh sandbox's number `fresh`.
fn inode_ground_truth(fresh: u64) -> Value {
    let inputs: Vec<String> = INODE_TESTS
        .iter()
        .map(|(input, _)| format!("{input}\n"))
        .collect();
    let outputs: Vec<String> = INODE_TESTS
        .iter()
        .map(|(_, output)| format!("{}\n", output.replace('N', &fresh.to_string())))
        .collect();
    json!({"inputs": inputs, "outputs": outputs})
}

fn verify_one_worker(lines: &[String], uid: &str) -> Vec<Value> {
    let directory = tempfile::tempdir().unwrap();
    let path = write_lines(directory.path(), "jobs.jsonl", lines);
    results(&verify_as(uid, &path, &["--workers", "1", "--details"]))
}

/// What each test of a result printed's verdict was (for failure messages).
fn verdicts(result: &Value) -> Vec<String> {
    result["tests"]
        .as_array()
        .map(|tests| {
            tests
                .iter()
                .map(|test| test["verdict"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn issue_32_no_job_finds_an_earlier_jobs_data_in_its_memory_through_verify() {
    let lines = [carrier(), carrier(), scanner()];
    let scored = verify_one_worker(&lines, "61330");
    for result in &scored {
        assert_eq!(result["score"], 1.0, "{result}");
    }
}

#[test]
fn issue_32_no_job_finds_an_earlier_jobs_data_in_its_memory_through_serve() {
    let mut command = rlvr();
    command
        .args(["serve", "--addr", "127.0.0.1:0", "--workers", "1"])
        .env("RLVR_SANDBOX_UID", "61335");
    let served = Served::start_with(command);
    for line in [carrier(), carrier(), scanner()] {
        let job: Value = serde_json::from_str(&line).unwrap();
        let answer = served.post_ok("/v1/verify", &json!({"jobs": [job]}));
        assert_eq!(answer["results"][0]["score"], 1.0, "{answer}");
    }
}

#[test]
fn issue_32_inode_numbers_do_not_depend_on_what_earlier_tests_created() {
    // Every test prints the inode number of its probe file less the files it created first:
    // what the work directory of a fresh runner shows, whatever earlier tests created.
    let number = fresh_inode_number("61333");
    let ground_truth = inode_ground_truth(number);
    let scored = verify_one_worker(&[job("inodes", &fenced(INODES), &ground_truth)], "61332");
    assert_eq!(
        scored[0]["score"],
        1.0,
        "{:?}: {}",
        verdicts(&scored[0]),
        scored[0]
    );
}

#[test]
fn issue_32_inode_numbers_do_not_depend_on_what_earlier_tests_created_through_serve() {
    let number = fresh_inode_number("61337");
    let mut command = rlvr();
    command
        .args(["serve", "--addr", "127.0.0.1:0", "--workers", "1"])
        .env("RLVR_SANDBOX_UID", "61336");
    let served = Served::start_with(command);
    let ground_truth = inode_ground_truth(number);
    let job: Value = serde_json::from_str(&job("inodes", &fenced(INODES), &ground_truth)).unwrap();
    // Twice: the second job runs in the sandbox the first one used.
    for _ in 0..2 {
        let answer = served.post_ok("/v1/verify", &json!({"jobs": [job], "details": true}));
        assert_eq!(answer["results"][0]["score"], 1.0, "{answer}");
    }
}

/// The inode number the probe of [`INODES`] gets in the first test a fresh runner runs: the
/// one candidate of 1 to 16 that a job of that single test accepts.
fn fresh_inode_number(uid: &str) -> u64 {
    let candidates: Vec<String> = (1..=16)
        .map(|number| {
            job(
                &number.to_string(),
                &fenced(INODES),
                &json!({"inputs": ["files 0\n"], "outputs": [format!("{number}\n")]}),
            )
        })
        .collect();
    let passed: Vec<u64> = verify_one_worker(&candidates, uid)
        .iter()
        .filter(|result| result["score"] == 1.0)
        .map(|result| result["id"].as_str().unwrap().parse().unwrap())
        .collect();
    assert_eq!(passed.len(), 1, "{passed:?}");
    passed[0]
}
