//! Issue 32's differential test: a judge verdict equals a fresh, plain run. Every program of
//! `tests/fixtures/differential/` (honest programs in every language, in the input/output
//! idioms people and models write, and some that are wrong, crash, time out or run out of
//! memory) runs natively, a fresh process per test with the toolchains and flags
//! docs/languages.md names, and through `rlvr verify --profile judge`; every test must get the
//! same verdict, except the known disagreements of [`EXPECTED_DISAGREEMENTS`].

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rlvr_verify::comparison::judge_output_equal;
use serde_json::{Value, json};

use crate::support::{RLVR, python, results, wait_until};

/// The sandbox uid of this test's programs (other tests run sandboxes at the same time).
const UID: &str = "64320";
/// Seconds per test, natively and in the judge: honest programs take a fraction of it, the
/// programs meant to time out take many times more.
const TIME_LIMIT_SECONDS: u64 = 5;
/// Memory per test (MiB), natively and in the judge (the judge's default).
const MEMORY_LIMIT_MEBIBYTES: u64 = 1024;
/// The stack every judge test gets (`RLIMIT_STACK` of the sandbox), in KiB.
const STACK_KIBIBYTES: u64 = 64 * 1024;
/// Programs compiled and run natively at once (the machine has two cores).
const NATIVE_PARALLELISM: usize = 2;

/// Known disagreements between the judge and a plain run, as `(program, test index, why)`:
/// product bugs not fixed yet (none now: the warm JVM's closed streams, its main class and
/// numpy's `MemoryError` were, issue 32). The test fails when a case listed here agrees (so the
/// list cannot outlive a fix) as well as when a case not listed disagrees.
const EXPECTED_DISAGREEMENTS: &[(&str, usize, &str)] = &[];

/// What a language's runtime prints on stderr when it runs out of memory (docs/languages.md,
/// "Memory accounting"; `MemoryError` for Python). C has no runtime to say so.
fn out_of_memory_markers(language: &str) -> &'static [&'static str] {
    match language {
        "python" => &["MemoryError"],
        "cpp" | "cpp20" => &["std::bad_alloc"],
        "java" => &["java.lang.OutOfMemoryError: Java heap space"],
        "javascript" => &["JavaScript heap out of memory"],
        "go" => &["runtime: out of memory", "fatal error: out of memory"],
        "rust" => &["memory allocation of"],
        _ => &[],
    }
}

/// One program of the generator's output.
#[derive(Debug)]
struct Program {
    /// `LANGUAGE/TASK.IDIOM`, the job id.
    name: String,
    /// The judge's language name, also the fence tag.
    language: String,
    task: String,
    source: String,
    /// Java: the class `java` runs.
    main_class: Option<String>,
}

/// A task's tests: inputs and the reference solution's outputs.
#[derive(Debug)]
struct Task {
    inputs: Vec<String>,
    outputs: Vec<String>,
}

/// What a native run of one program on one test gave.
#[derive(Debug, Clone)]
struct NativeRun {
    verdict: &'static str,
    /// Wall-clock milliseconds.
    milliseconds: u128,
    /// Exit status, signal or time, and the first line of stderr: for the table.
    detail: String,
}

fn fixture_directory() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/differential")
}

/// The real interpreter behind `python()` (a pyenv shim would add its own start-up to every
/// native run), as `scripts/python-path` resolves it.
fn real_python() -> String {
    let output = Command::new(python())
        .args([
            "-c",
            "import os, sys; print(os.path.realpath(sys.executable))",
        ])
        .output()
        .expect("python runs");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

fn generate() -> (BTreeMap<String, Task>, Vec<Program>) {
    let output = Command::new(python())
        .arg(fixture_directory().join("generate.py"))
        .output()
        .expect("python runs");
    assert!(
        output.status.success(),
        "generate.py failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let generated: Value = serde_json::from_slice(&output.stdout).expect("generate.py prints JSON");
    let texts = |value: &Value| -> Vec<String> {
        value
            .as_array()
            .expect("a list")
            .iter()
            .map(|text| text.as_str().expect("a string").to_owned())
            .collect()
    };
    let tasks = generated["tasks"]
        .as_object()
        .expect("tasks")
        .iter()
        .map(|(name, task)| {
            let task = Task {
                inputs: texts(&task["inputs"]),
                outputs: texts(&task["outputs"]),
            };
            assert_eq!(task.inputs.len(), task.outputs.len(), "{name}");
            (name.clone(), task)
        })
        .collect();
    let text = |program: &Value, key: &str| program[key].as_str().map(str::to_owned);
    let programs = generated["programs"]
        .as_array()
        .expect("programs")
        .iter()
        .map(|program| Program {
            name: text(program, "name").expect("name"),
            language: text(program, "language").expect("language"),
            task: text(program, "task").expect("task"),
            source: text(program, "source").expect("source"),
            main_class: text(program, "main_class"),
        })
        .collect();
    (tasks, programs)
}

/// The host paths a language's native run needs, from docs/languages.md (Python: the
/// interpreter the judge runs).
fn toolchain(language: &str, python: &str) -> Vec<String> {
    let paths: &[&str] = match language {
        "python" => return vec![python.to_owned()],
        "cpp" | "cpp20" => &["/usr/bin/g++"],
        "c" => &["/usr/bin/gcc"],
        "java" => &["/usr/bin/javac", "/usr/bin/java"],
        "javascript" => &["/usr/bin/node"],
        "go" => &["/usr/bin/go"],
        "rust" => &["/usr/bin/rustc"],
        other => panic!("generate.py named an unknown language {other}"),
    };
    paths.iter().map(|path| (*path).to_owned()).collect()
}

/// The languages whose toolchain is missing here. With `RLVR_REQUIRE_EVERYTHING=1` (CI) a
/// missing toolchain fails the test; otherwise that language is left out, with a message.
fn unavailable_languages(programs: &[Program], python: &str) -> BTreeSet<String> {
    let mut unavailable = BTreeSet::new();
    for language in programs.iter().map(|program| program.language.as_str()) {
        let missing: Vec<String> = toolchain(language, python)
            .into_iter()
            .filter(|path| !Path::new(path).exists())
            .collect();
        if missing.is_empty() {
            continue;
        }
        assert!(
            !rlvr_test_support::everything_required(),
            "{language}: toolchain missing ({missing:?}) and RLVR_REQUIRE_EVERYTHING=1"
        );
        if unavailable.insert(language.to_owned()) {
            eprintln!("skipped {language}: toolchain missing ({missing:?})");
        }
    }
    unavailable
}

/// A command with the clean environment a judge test gets (`PATH`, `LANG`, `HOME`, `TZ`,
/// `MALLOC_ARENA_MAX`).
fn clean_command(program: &str, directory: &Path) -> Command {
    let mut command = Command::new(program);
    command
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .env("HOME", directory)
        .env("TZ", "UTC")
        .env("MALLOC_ARENA_MAX", "2")
        .current_dir(directory);
    command
}

/// The C++ compile flags of docs/languages.md, after the standard's.
const CPP_FLAGS: [&str; 6] = [
    "-O2",
    "-pipe",
    "-static",
    "-DONLINE_JUDGE",
    "-fmax-errors=20",
    "-ftemplate-backtrace-limit=4",
];

/// Precompiles `bits/stdc++.h` with the C++ flags for both standards into
/// `root/precompiled-std=...`, as the judge precompiles it for its compiles.
fn precompile_header(root: &Path) {
    std::thread::scope(|scope| {
        for standard in ["-std=gnu++17", "-std=gnu++20"] {
            scope.spawn(move || {
                let directory = root.join(format!("precompiled{standard}"));
                std::fs::create_dir_all(directory.join("bits")).unwrap();
                let wrapper = root.join(format!("wrapper{standard}.h"));
                std::fs::write(&wrapper, "#include <bits/stdc++.h>\n").unwrap();
                let output = clean_command("/usr/bin/g++", root)
                    .arg(standard)
                    .args(CPP_FLAGS)
                    .args(["-x", "c++-header"])
                    .arg(&wrapper)
                    .arg("-o")
                    .arg(directory.join("bits/stdc++.h.gch"))
                    .stdin(Stdio::null())
                    .output()
                    .expect("g++ runs");
                assert!(
                    output.status.success(),
                    "precompiling bits/stdc++.h: {output:?}"
                );
            });
        }
    });
}

/// Compiles `program` in `directory` as docs/languages.md says the judge does; the command
/// line of one test run (limits applied by [`run_native`]).
fn compile_native(program: &Program, directory: &Path, python: &str) -> Vec<String> {
    let compile = |arguments: &[&str]| {
        let output = clean_command(arguments[0], directory)
            .args(&arguments[1..])
            .env("CGO_ENABLED", "0")
            .env("GO111MODULE", "off")
            .env("GOCACHE", directory.join("gocache"))
            .stdin(Stdio::null())
            .output()
            .expect("the compiler runs");
        assert!(
            output.status.success(),
            "{}: the native compile failed (a fixture bug): {}{}",
            program.name,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    };
    let write = |name: &str| std::fs::write(directory.join(name), &program.source).unwrap();
    let memory = MEMORY_LIMIT_MEBIBYTES.to_string();
    let owned = |arguments: &[&str]| arguments.iter().map(|text| (*text).to_owned()).collect();
    // The precompiled `bits/stdc++.h` of the standard, as the judge has one (it changes the
    // compile's time, never its result).
    let precompiled = |standard: &str| {
        format!(
            "-I{}",
            directory
                .join(format!("../precompiled{standard}"))
                .display()
        )
    };
    match program.language.as_str() {
        "python" => {
            write("main.py");
            owned(&[python, "main.py"])
        }
        "cpp" | "cpp20" => {
            write("main.cpp");
            let standard = if program.language == "cpp20" {
                "-std=gnu++20"
            } else {
                "-std=gnu++17"
            };
            let include = precompiled(standard);
            let mut arguments = vec!["/usr/bin/g++", &include, standard];
            arguments.extend(CPP_FLAGS);
            arguments.extend(["-o", "main", "main.cpp", "-lm"]);
            compile(&arguments);
            owned(&["./main"])
        }
        "c" => {
            write("main.c");
            compile(&[
                "/usr/bin/gcc",
                "-std=gnu11",
                "-O2",
                "-pipe",
                "-static",
                "-DONLINE_JUDGE",
                "-fmax-errors=20",
                "-o",
                "main",
                "main.c",
                "-lm",
            ]);
            owned(&["./main"])
        }
        "java" => {
            let class = program.main_class.as_deref().expect("a Java main class");
            let file = format!("{class}.java");
            write(&file);
            compile(&[
                "/usr/bin/javac",
                "-J-Xmx768m",
                "-J-XX:TieredStopAtLevel=1",
                "-encoding",
                "UTF-8",
                "-nowarn",
                "-d",
                "classes",
                &file,
            ]);
            // The fresh JVM of `RLVR_JAVA_FRESH_JVM=1`, the judge's own plain run.
            owned(&[
                "/usr/bin/java",
                &format!("-Xmx{memory}m"),
                "-Xms16m",
                "-XX:+UseSerialGC",
                "-XX:-UsePerfData",
                "-XX:CompressedClassSpaceSize=64m",
                "-XX:ReservedCodeCacheSize=64m",
                "-Xss64m",
                "-cp",
                "classes",
                class,
            ])
        }
        "javascript" => {
            write("main.js");
            owned(&[
                "/usr/bin/node",
                &format!("--max-old-space-size={memory}"),
                "--stack-size=30000",
                "--preserve-symlinks-main",
                "main.js",
            ])
        }
        "go" => {
            write("main.go");
            compile(&["/usr/bin/go", "build", "-o", "main", "main.go"]);
            owned(&["./main"])
        }
        "rust" => {
            write("main.rs");
            compile(&[
                "/usr/bin/rustc",
                "--edition",
                "2021",
                "-O",
                "--cfg",
                "ONLINE_JUDGE",
                "-C",
                "target-feature=+crt-static",
                "-C",
                "strip=symbols",
                "-o",
                "main",
                "main.rs",
            ]);
            owned(&["./main"])
        }
        other => panic!("unknown language {other}"),
    }
}

/// The `ulimit` settings of a test in `language` (docs/languages.md, "Memory accounting";
/// the Python runner's `RLIMIT_AS`), in KiB, as a shell prefix.
fn limits(language: &str) -> String {
    let memory = MEMORY_LIMIT_MEBIBYTES * 1024;
    let memory_limit = match language {
        "python" | "cpp" | "cpp20" | "c" | "rust" => format!("ulimit -v {memory}; "),
        "go" => format!("ulimit -d {memory}; "),
        "javascript" => format!("ulimit -d {}; ", memory + 128 * 1024),
        _ => String::new(),
    };
    format!("ulimit -c 0; ulimit -s {STACK_KIBIBYTES}; {memory_limit}")
}

/// Runs the compiled program once on `input` (a file), a fresh process with the judge's
/// limits, and judges it as the judge would judge a plain run: `timeout` past the wall clock,
/// `memory_limit` when its runtime said it ran out of memory, `runtime_error` on any other
/// failure, then the judge's comparison of its stdout with `expected`.
fn run_native(
    program: &Program,
    command_line: &[String],
    directory: &Path,
    input: &Path,
    expected: &str,
) -> NativeRun {
    let stdout_path = directory.join("stdout");
    let stderr_path = directory.join("stderr");
    let mut command = clean_command("/bin/sh", directory);
    command
        .arg("-c")
        .arg(format!("{}exec \"$@\"", limits(&program.language)))
        .arg("sh")
        .args(command_line)
        .stdin(File::open(input).expect("input file"))
        .stdout(File::create(&stdout_path).unwrap())
        .stderr(File::create(&stderr_path).unwrap());
    if program.language == "go" {
        command.env("GOMEMLIMIT", format!("{MEMORY_LIMIT_MEBIBYTES}MiB"));
    }
    let started = Instant::now();
    let mut child = command.spawn().expect("the program starts");
    let mut status = None;
    let limit = Duration::from_secs(TIME_LIMIT_SECONDS);
    wait_until(limit, || {
        status = child.try_wait().expect("wait");
        status.is_some()
    });
    let elapsed = started.elapsed();
    let Some(status) = status else {
        child.kill().expect("kill");
        child.wait().expect("reap");
        return NativeRun {
            verdict: "timeout",
            milliseconds: elapsed.as_millis(),
            detail: format!("killed after {} ms", elapsed.as_millis()),
        };
    };
    let stdout = std::fs::read(&stdout_path).unwrap();
    let stderr = String::from_utf8_lossy(&std::fs::read(&stderr_path).unwrap()).into_owned();
    let first_stderr_line = stderr
        .lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("")
        .chars()
        .take(90)
        .collect::<String>();
    let detail = format!("{status}, {} ms: {first_stderr_line}", elapsed.as_millis());
    let verdict = if !status.success() {
        if out_of_memory_markers(&program.language)
            .iter()
            .any(|marker| stderr.contains(marker))
        {
            "memory_limit"
        } else {
            "runtime_error"
        }
    } else if judge_output_equal(&stdout, expected) {
        "pass"
    } else {
        "wrong_answer"
    };
    NativeRun {
        verdict,
        milliseconds: elapsed.as_millis(),
        detail,
    }
}

/// Compiles and runs every program natively, `NATIVE_PARALLELISM` programs at a time; the
/// native run of each program on each of its task's tests, in test order.
fn run_all_natively(
    programs: &[&Program],
    tasks: &BTreeMap<String, Task>,
    root: &Path,
    python: &str,
) -> BTreeMap<String, Vec<NativeRun>> {
    let inputs = root.join("inputs");
    std::fs::create_dir(&inputs).unwrap();
    let mut input_files: BTreeMap<(String, usize), PathBuf> = BTreeMap::new();
    for (name, task) in tasks {
        for (index, input) in task.inputs.iter().enumerate() {
            let path = inputs.join(format!("{name}-{index}"));
            std::fs::write(&path, input).unwrap();
            input_files.insert((name.clone(), index), path);
        }
    }
    if programs
        .iter()
        .any(|program| family(&program.language) == "cpp")
    {
        precompile_header(root);
    }
    let next = AtomicUsize::new(0);
    let runs = Mutex::new(BTreeMap::new());
    // Seconds spent compiling and running, per language: for the report.
    let seconds: Mutex<BTreeMap<&str, (f64, f64)>> = Mutex::new(BTreeMap::new());
    std::thread::scope(|scope| {
        for _ in 0..NATIVE_PARALLELISM {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::SeqCst);
                    let Some(program) = programs.get(index) else {
                        return;
                    };
                    let directory = root.join(format!("program-{index}"));
                    std::fs::create_dir(&directory).unwrap();
                    let compile_started = Instant::now();
                    let command_line = compile_native(program, &directory, python);
                    let compiled = compile_started.elapsed().as_secs_f64();
                    let task = &tasks[&program.task];
                    let program_runs: Vec<NativeRun> = task
                        .outputs
                        .iter()
                        .enumerate()
                        .map(|(test, expected)| {
                            let input = &input_files[&(program.task.clone(), test)];
                            run_native(program, &command_line, &directory, input, expected)
                        })
                        .collect();
                    let mut spent = seconds.lock().unwrap();
                    let entry = spent.entry(program.language.as_str()).or_default();
                    entry.0 += compiled;
                    entry.1 += compile_started.elapsed().as_secs_f64() - compiled;
                    drop(spent);
                    runs.lock()
                        .unwrap()
                        .insert(program.name.clone(), program_runs);
                }
            });
        }
    });
    for (language, (compiling, running)) in seconds.into_inner().unwrap() {
        eprintln!("native {language}: compiling {compiling:.1} s, running {running:.1} s");
    }
    runs.into_inner().unwrap()
}

/// Runs every program through `rlvr verify --profile judge --details` in one batch; each
/// program's per-test verdicts, in test order.
fn run_all_in_the_judge(
    programs: &[&Program],
    tasks: &BTreeMap<String, Task>,
    root: &Path,
) -> BTreeMap<String, Vec<String>> {
    let mut lines = String::new();
    for program in programs {
        let task = &tasks[&program.task];
        let response = format!(
            "<think>\nsolve it\n</think>\n```{}\n{}```\n",
            program.language, program.source
        );
        let job = json!({
            "id": program.name,
            "response": response,
            "ground_truth": {"inputs": task.inputs, "outputs": task.outputs},
        });
        lines.push_str(&job.to_string());
        lines.push('\n');
    }
    let jobs = root.join("jobs.jsonl");
    std::fs::write(&jobs, lines).unwrap();
    let output = Command::new(RLVR)
        .arg("verify")
        .arg(&jobs)
        .args([
            "--profile",
            "judge",
            "--details",
            "--all-tests",
            "--workers",
            "2",
        ])
        .args(["--time-limit", &TIME_LIMIT_SECONDS.to_string()])
        .args(["--memory-limit", &MEMORY_LIMIT_MEBIBYTES.to_string()])
        .env("RLVR_SANDBOX_UID", UID)
        .stdin(Stdio::null())
        .output()
        .expect("rlvr runs");
    assert!(
        output.status.success(),
        "rlvr verify failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    results(&output)
        .into_iter()
        .map(|result| {
            let name = result["id"].as_str().expect("an id").to_owned();
            assert_eq!(result["status"], "ok", "{name}: {result}");
            let verdicts = result["tests"]
                .as_array()
                .unwrap_or_else(|| panic!("{name}: no tests in {result}"))
                .iter()
                .map(|test| test["verdict"].as_str().expect("a verdict").to_owned())
                .collect();
            (name, verdicts)
        })
        .collect()
}

/// The language a program is written in, C++17 and C++20 together.
fn family(language: &str) -> &str {
    if language == "cpp20" { "cpp" } else { language }
}

/// One test's two verdicts.
#[derive(Debug, Clone)]
struct Outcome {
    program: String,
    test: usize,
    input_bytes: usize,
    native: NativeRun,
    judge: String,
}

/// The outcomes against the list of known disagreements.
#[derive(Debug, Default)]
struct Comparison {
    /// Disagreements nobody listed: the failures this test exists for.
    unexpected: Vec<Outcome>,
    /// Listed disagreements that still disagree.
    known: Vec<Outcome>,
    /// Listed cases that agree now, or that did not run at all: the list must shrink.
    stale: Vec<(String, usize)>,
    tests: usize,
}

fn compare(outcomes: Vec<Outcome>, expected: &BTreeSet<(String, usize)>) -> Comparison {
    let mut comparison = Comparison {
        tests: outcomes.len(),
        ..Comparison::default()
    };
    let mut disagreeing_listed = BTreeSet::new();
    for outcome in outcomes {
        let key = (outcome.program.clone(), outcome.test);
        let listed = expected.contains(&key);
        if outcome.native.verdict == outcome.judge {
            continue;
        }
        if listed {
            disagreeing_listed.insert(key);
            comparison.known.push(outcome);
        } else {
            comparison.unexpected.push(outcome);
        }
    }
    comparison.stale = expected
        .iter()
        .filter(|case| !disagreeing_listed.contains(*case))
        .cloned()
        .collect();
    comparison
}

impl Comparison {
    /// Why the test fails, if it does.
    fn failure(&self) -> Option<String> {
        (!self.unexpected.is_empty() || !self.stale.is_empty()).then(|| {
            format!(
                "{} of {} tests: the judge disagrees with a plain run:\n{}\n\
                 listed in EXPECTED_DISAGREEMENTS but agreeing now or not run (remove them): \
                 {:?}",
                self.unexpected.len(),
                self.tests,
                table(&self.unexpected),
                self.stale
            )
        })
    }
}

fn table(rows: &[Outcome]) -> String {
    let mut text = format!(
        "{:<52} {:>4} {:>9}  {:<14} {:<14} native run\n",
        "program", "test", "input", "native", "judge"
    );
    for row in rows {
        text.push_str(&format!(
            "{:<52} {:>4} {:>9}  {:<14} {:<14} {}\n",
            row.program,
            row.test,
            row.input_bytes,
            row.native.verdict,
            row.judge,
            row.native.detail
        ));
    }
    text
}

/// The list of known disagreements cannot rot: a listed case that agrees, or that does not
/// run, fails the comparison as an unlisted disagreement does (no programs run here).
#[test]
fn issue_32_differential_plain_stale_or_missing_expectations_fail() {
    let outcome = |program: &str, test: usize, native: &'static str, judge: &str| Outcome {
        program: program.to_owned(),
        test,
        input_bytes: 4,
        native: NativeRun {
            verdict: native,
            milliseconds: 1,
            detail: String::new(),
        },
        judge: judge.to_owned(),
    };
    let listed = |cases: &[(&str, usize)]| -> BTreeSet<(String, usize)> {
        cases
            .iter()
            .map(|(program, test)| ((*program).to_owned(), *test))
            .collect()
    };
    let outcomes = vec![
        outcome("java/a", 0, "pass", "pass"),
        outcome("java/a", 1, "pass", "wrong_answer"),
    ];
    // The disagreement listed: no failure, and it is reported as known.
    let comparison = compare(outcomes.clone(), &listed(&[("java/a", 1)]));
    assert!(comparison.failure().is_none(), "{comparison:?}");
    assert_eq!(comparison.known.len(), 1);
    // Not listed: fails, naming it.
    let failure = compare(outcomes.clone(), &listed(&[])).failure().unwrap();
    assert!(
        failure.contains("1 of 2 tests") && failure.contains("java/a"),
        "{failure}"
    );
    // A listed case that agrees, and one that never ran: both fail.
    let comparison = compare(
        outcomes,
        &listed(&[("java/a", 0), ("java/a", 1), ("java/gone", 3)]),
    );
    assert!(comparison.unexpected.is_empty());
    assert_eq!(
        comparison.stale,
        vec![("java/a".to_owned(), 0), ("java/gone".to_owned(), 3)]
    );
    assert!(comparison.failure().is_some());
}

#[test]
fn issue_32_differential_plain_every_verdict_equals_a_fresh_plain_run() {
    let started = Instant::now();
    let python = real_python();
    let (tasks, all_programs) = generate();
    let unavailable = unavailable_languages(&all_programs, &python);
    let programs: Vec<&Program> = all_programs
        .iter()
        .filter(|program| !unavailable.contains(&program.language))
        .collect();
    let root = tempfile::tempdir().expect("temp dir");

    let native = run_all_natively(&programs, &tasks, root.path(), &python);
    let native_seconds = started.elapsed().as_secs_f64();
    let judge = run_all_in_the_judge(&programs, &tasks, root.path());
    eprintln!(
        "{} programs: native runs {native_seconds:.1} s, judge {:.1} s",
        programs.len(),
        started.elapsed().as_secs_f64() - native_seconds
    );

    let mut outcomes = Vec::new();
    for program in &programs {
        let task = &tasks[&program.task];
        let judged = judge
            .get(&program.name)
            .unwrap_or_else(|| panic!("{}: no result from rlvr verify", program.name));
        assert_eq!(
            judged.len(),
            task.inputs.len(),
            "{}: {judged:?}",
            program.name
        );
        for (test, (run, verdict)) in native[&program.name].iter().zip(judged).enumerate() {
            outcomes.push(Outcome {
                program: program.name.clone(),
                test,
                input_bytes: task.inputs[test].len(),
                native: run.clone(),
                judge: verdict.clone(),
            });
        }
    }
    // Cases of a language left out here (its toolchain is missing) are not expected to run.
    let expected: BTreeSet<(String, usize)> = EXPECTED_DISAGREEMENTS
        .iter()
        .filter(|(program, _, _)| {
            !unavailable.contains(program.split('/').next().unwrap_or_default())
        })
        .map(|(program, test, _)| ((*program).to_owned(), *test))
        .collect();
    // How far the slowest plain pass is from the time limit (for a loaded machine).
    if let Some(slowest) = outcomes
        .iter()
        .filter(|outcome| outcome.native.verdict == "pass")
        .max_by_key(|outcome| outcome.native.milliseconds)
    {
        eprintln!(
            "slowest plain pass: {} test {}, {} ms of {TIME_LIMIT_SECONDS} s",
            slowest.program, slowest.test, slowest.native.milliseconds
        );
    }
    let comparison = compare(outcomes, &expected);
    if !comparison.known.is_empty() {
        eprintln!(
            "known disagreements (EXPECTED_DISAGREEMENTS):\n{}",
            table(&comparison.known)
        );
    }

    // The programs vary, so that agreeing means something: every verdict a plain run can
    // give appears, and every language (C++17 and C++20 together) has passes and failures.
    let mut seen_verdicts = BTreeSet::new();
    let mut verdicts_by_language: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for program in &programs {
        for run in &native[&program.name] {
            seen_verdicts.insert(run.verdict);
            verdicts_by_language
                .entry(family(&program.language))
                .or_default()
                .insert(run.verdict);
        }
    }
    let every_verdict = [
        "pass",
        "wrong_answer",
        "runtime_error",
        "timeout",
        "memory_limit",
    ];
    assert!(
        every_verdict
            .iter()
            .all(|verdict| seen_verdicts.contains(verdict)),
        "native verdicts {seen_verdicts:?}, expected each of {every_verdict:?}\n{}",
        comparison.failure().unwrap_or_default()
    );
    for (language, verdicts) in &verdicts_by_language {
        assert!(
            verdicts.contains("pass") && verdicts.len() >= 2,
            "{language}: native verdicts {verdicts:?}"
        );
    }
    if let Some(failure) = comparison.failure() {
        panic!("{} programs: {failure}", programs.len());
    }
}
