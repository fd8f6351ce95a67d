//! Issue 24: judge jobs in C++, C, Java, JavaScript, Go and Rust through the engine: compiled
//! once in the sandbox, run per test by the exec supervisor, judged like Python's tests.

use std::sync::Arc;

use rlvr_engine::{Engine, EngineConfig, Job};
use rlvr_sandbox::{Sandbox, SandboxConfig};
use rlvr_verify::{
    JobResult, Language, LanguageRequest, PlanOptions, Profile, ProfileName, Status, TestSuite,
    Verdict,
};
use serde_json::json;

use crate::common::{score_all, verdicts};

fn engine() -> Engine {
    let sandbox = Sandbox::new(SandboxConfig {
        read_only_directories: rlvr_languages::sandbox_directories(),
        ..SandboxConfig::default()
    })
    .expect("the sandbox starts (tests run as root)");
    Engine::start(
        sandbox,
        EngineConfig {
            workers: 2,
            queue_capacity: 8,
            testlib_header: None,
        },
    )
}

/// A judge job: `code` in a fence tagged `tag`, the sum tests, and the job's language keys.
fn job(tag: &str, code: &str, languages: LanguageRequest, suite: serde_json::Value) -> Job {
    Job {
        profile: Arc::new(Profile::named(ProfileName::Judge)),
        response: format!("<think>\nadd them\n</think>\n```{tag}\n{code}\n```"),
        suite: TestSuite::from_value(&suite).expect("a suite"),
        options: PlanOptions {
            job_identity: b"job".to_vec(),
            time_limit: Some(std::time::Duration::from_secs(2)),
            memory_limit_bytes: Some(256 << 20),
            languages,
            ..PlanOptions::default()
        },
    }
}

fn sums() -> serde_json::Value {
    json!({"inputs": ["1 2\n", "-5 5\n", "1000000000000 1\n"], "outputs": ["3\n", "0\n", "1000000000001\n"]})
}

fn any_language() -> LanguageRequest {
    LanguageRequest::default()
}

const CPP_SUM: &str = "#include <bits/stdc++.h>\nint main(){ long long a, b; std::cin >> a >> b; std::cout << a + b << \"\\n\"; }";

#[test]
fn right_answers_pass_in_every_language() {
    let engine = engine();
    let programs = [
        ("cpp", CPP_SUM),
        (
            "c",
            "#include <stdio.h>\nint main(void){ long long a, b; scanf(\"%lld %lld\", &a, &b); printf(\"%lld\\n\", a + b); return 0; }",
        ),
        (
            "java",
            "import java.util.*;\npublic class Main { public static void main(String[] x) { Scanner s = new Scanner(System.in); long a = s.nextLong(), b = s.nextLong(); System.out.println(a + b); } }",
        ),
        (
            "js",
            "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(BigInt);\nconsole.log((a + b).toString());",
        ),
        (
            "go",
            "package main\nimport \"fmt\"\nfunc main() { var a, b int64; fmt.Scan(&a, &b); fmt.Println(a + b) }",
        ),
        (
            "rust",
            "use std::io::Read;\nfn main() { let mut s = String::new(); std::io::stdin().read_to_string(&mut s).unwrap(); let v: Vec<i64> = s.split_whitespace().map(|w| w.parse().unwrap()).collect(); println!(\"{}\", v[0] + v[1]); }",
        ),
        ("python", "a, b = map(int, input().split())\nprint(a + b)"),
    ];
    let jobs = programs
        .iter()
        .map(|(tag, code)| job(tag, code, any_language(), sums()))
        .collect();
    for ((tag, _), result) in programs.iter().zip(score_all(&engine, jobs)) {
        assert_eq!(
            (result.status, result.score),
            (Status::Ok, Some(1.0)),
            "{tag}: {result:?}"
        );
    }
}

#[test]
fn cpp_failures_get_the_python_verdicts() {
    let engine = engine();
    let cases: [(&str, Verdict); 6] = [
        (
            "#include <cstdio>\nint main(){ puts(\"42\"); }",
            Verdict::WrongAnswer,
        ),
        (
            "int main(){ volatile int *p = nullptr; return *p; }",
            Verdict::RuntimeError,
        ),
        ("int main(){ return 3; }", Verdict::RuntimeError),
        ("int main(){ for(;;){} }", Verdict::Timeout),
        (
            "#include <vector>\n#include <cstdio>\nint main(){ std::vector<char> v(1ull << 31, 1); printf(\"%d\\n\", v[12345]); }",
            Verdict::MemoryLimit,
        ),
        (
            "#include <cstdio>\nint main(){ static char line[1 << 16]; for(;;) fwrite(line, 1, sizeof line, stdout); }",
            Verdict::OutputLimit,
        ),
    ];
    let jobs = cases
        .iter()
        .map(|(code, _)| {
            job(
                "cpp",
                code,
                any_language(),
                json!({"inputs": ["1 2\n"], "outputs": ["3\n"]}),
            )
        })
        .collect();
    for ((code, expected), result) in cases.iter().zip(score_all(&engine, jobs)) {
        assert_eq!(result.status, Status::Ok, "{code}: {result:?}");
        assert_eq!(verdicts(&result), vec![*expected], "{code}: {result:?}");
    }
}

#[test]
fn a_program_that_does_not_compile_is_a_compile_error_with_the_message() {
    let engine = engine();
    let results = score_all(
        &engine,
        vec![job(
            "cpp",
            "int main(){ this is not cpp }",
            any_language(),
            sums(),
        )],
    );
    let result: &JobResult = &results[0];
    assert_eq!((result.status, result.score), (Status::Ok, Some(0.0)));
    assert_eq!(verdicts(result), vec![Verdict::CompileError; 3]);
    let reason = result.reason.as_deref().unwrap_or("");
    assert!(
        reason.starts_with("the code does not compile") && reason.contains("error"),
        "{reason}"
    );
}

#[test]
fn the_job_language_picks_the_block_and_pinned_languages_exclude_others() {
    let engine = engine();
    let response_code = format!("{CPP_SUM}\n```\n```python\nprint('wrong')");
    let requested = LanguageRequest {
        requested: Language::from_name("cpp"),
        allowed: None,
    };
    let python_only = LanguageRequest {
        requested: None,
        allowed: Some(vec![Language::Python]),
    };
    let results = score_all(
        &engine,
        vec![
            job("cpp", &response_code, requested, sums()),
            job("cpp", &response_code, python_only, sums()),
            job("cpp", &response_code, any_language(), sums()),
        ],
    );
    // Asked for C++: the C++ block, which is right.
    assert_eq!(results[0].score, Some(1.0), "{:?}", results[0]);
    // Python only: the python block, which prints the wrong answer.
    assert_eq!(results[1].score, Some(0.0), "{:?}", results[1]);
    // Any language: the last block wins (python).
    assert_eq!(results[2].score, Some(0.0), "{:?}", results[2]);
}

#[test]
fn functional_tests_need_a_python_solution() {
    let engine = engine();
    let functional = json!({"functional": ["assert f(1) == 2"]});
    let results = score_all(
        &engine,
        vec![
            job("cpp", CPP_SUM, any_language(), functional.clone()),
            job(
                "cpp",
                CPP_SUM,
                LanguageRequest {
                    requested: Language::from_name("cpp"),
                    allowed: None,
                },
                functional,
            ),
        ],
    );
    assert_eq!(
        (results[0].status, results[0].score),
        (Status::Ok, Some(0.0))
    );
    assert!(
        results[0]
            .reason
            .as_deref()
            .unwrap_or("")
            .contains("Python solutions only")
    );
    assert_eq!(
        (results[1].status, results[1].score),
        (Status::InvalidJob, None)
    );
}

#[test]
fn each_judge_test_finds_an_empty_work_directory() {
    let engine = engine();
    // Writes a file, and reports whether the previous test's file was there.
    let code = "#include <bits/stdc++.h>\nint main(){ bool seen = std::ifstream(\"/tmp/left\").good(); std::ofstream(\"/tmp/left\") << 1; long long a, b; std::cin >> a >> b; std::cout << (seen ? -1 : a + b) << \"\\n\"; }";
    let results = score_all(&engine, vec![job("cpp", code, any_language(), sums())]);
    assert_eq!(results[0].score, Some(1.0), "{:?}", results[0]);
}

/// The warm JVM behaves like a fresh `java Main` per test: static state starts over, an
/// uncaught exception is status 1, `System.exit` ends the test with its status (and a new JVM
/// serves the next), output through `FileDescriptor.out` counts, a thread left running does
/// not reach the next test, and a big-stack thread recurses deeply.
#[test]
fn java_tests_each_see_a_fresh_program_in_the_warm_jvm() {
    let engine = engine();
    let three = json!({"inputs": ["1\n", "2\n", "3\n"], "outputs": ["1\n", "2\n", "3\n"]});
    let cases: [(&str, Vec<Verdict>); 6] = [
        (
            // A counter that survives between tests would print 1, 2, 3 plus the earlier ones.
            "import java.util.*;\npublic class Main { static int calls = 0; public static void main(String[] a) { calls++; int n = new Scanner(System.in).nextInt(); System.out.println(calls == 1 ? n : -n); } }",
            vec![Verdict::Pass; 3],
        ),
        (
            "import java.util.*;\npublic class Main { public static void main(String[] a) { int n = new Scanner(System.in).nextInt(); if (n == 2) throw new IllegalStateException(\"two\"); System.out.println(n); } }",
            vec![Verdict::Pass, Verdict::RuntimeError, Verdict::Pass],
        ),
        (
            "import java.util.*;\npublic class Main { public static void main(String[] a) { int n = new Scanner(System.in).nextInt(); System.out.println(n); System.out.flush(); if (n == 1) System.exit(3); if (n == 2) System.exit(0); } }",
            vec![Verdict::RuntimeError, Verdict::Pass, Verdict::Pass],
        ),
        (
            "import java.io.*;\npublic class Main { public static void main(String[] a) throws IOException { int n = new BufferedReader(new InputStreamReader(new FileInputStream(FileDescriptor.in))).read() - '0'; PrintWriter out = new PrintWriter(new FileOutputStream(FileDescriptor.out)); out.println(n); out.flush(); } }",
            vec![Verdict::Pass; 3],
        ),
        (
            // A daemon thread that would print into the next test's output (100 ms into it) if the JVM
            // were kept: each test waits 600 ms before it prints.
            "import java.util.*;\npublic class Main { public static void main(String[] a) throws Exception { int n = new Scanner(System.in).nextInt(); Thread t = new Thread(() -> { try { Thread.sleep(700); } catch (Exception e) {} System.out.println(99); System.out.flush(); }); t.setDaemon(true); t.start(); Thread.sleep(600); System.out.println(n); } }",
            vec![Verdict::Pass; 3],
        ),
        (
            "import java.util.*;\npublic class Main { static int depth(int n) { return n == 0 ? 0 : 1 + depth(n - 1); } public static void main(String[] a) throws Exception { int n = new Scanner(System.in).nextInt(); int[] r = new int[1]; Thread t = new Thread(null, () -> r[0] = depth(1_000_000), \"deep\", 1L << 28); t.start(); t.join(); System.out.println(r[0] == 1_000_000 ? n : -1); } }",
            vec![Verdict::Pass; 3],
        ),
    ];
    let jobs = cases
        .iter()
        .map(|(code, _)| job("java", code, any_language(), three.clone()))
        .collect();
    for ((code, expected), result) in cases.iter().zip(score_all(&engine, jobs)) {
        assert_eq!(&verdicts(&result), expected, "{code}: {result:?}");
    }
}
