//! Issue 24 through the binary: `rlvr run --lang L` in every language, a compile error, a
//! missing toolchain (`language_unavailable`, never a crash or a silent 0) in `rlvr run` and
//! `rlvr verify`, `--languages`, and `rlvr doctor` listing every toolchain with its version.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::support::rlvr;

fn write(directory: &Path, name: &str, contents: &str) -> PathBuf {
    let path = directory.join(name);
    std::fs::write(&path, contents).expect("write");
    path
}

fn json_of(output: &Output) -> Value {
    serde_json::from_str(String::from_utf8_lossy(&output.stdout).trim()).unwrap_or_else(|error| {
        panic!(
            "not JSON ({error}): {:?} {:?}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

const SUMS: [(&str, &str, &str); 7] = [
    (
        "cpp",
        "sum.cpp",
        "#include <bits/stdc++.h>\nint main(){ long long a, b; std::cin >> a >> b; std::cout << a + b << '\\n'; }\n",
    ),
    (
        "c",
        "sum.c",
        "#include <stdio.h>\nint main(void){ long long a, b; scanf(\"%lld %lld\", &a, &b); printf(\"%lld\\n\", a + b); return 0; }\n",
    ),
    (
        "java",
        "Sum.java",
        "import java.util.*;\npublic class Sum { public static void main(String[] x) { Scanner s = new Scanner(System.in); System.out.println(s.nextLong() + s.nextLong()); } }\n",
    ),
    (
        "javascript",
        "sum.js",
        "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\nconsole.log(a + b);\n",
    ),
    (
        "go",
        "sum.go",
        "package main\nimport \"fmt\"\nfunc main() { var a, b int64; fmt.Scan(&a, &b); fmt.Println(a + b) }\n",
    ),
    (
        "rust",
        "sum.rs",
        "use std::io::Read;\nfn main() { let mut s = String::new(); std::io::stdin().read_to_string(&mut s).unwrap(); let v: Vec<i64> = s.split_whitespace().map(|w| w.parse().unwrap()).collect(); println!(\"{}\", v[0] + v[1]); }\n",
    ),
    (
        "cpp20",
        "sum20.cpp",
        "#include <bits/stdc++.h>\nint main(){ long long a, b; std::cin >> a >> b; auto sum = [](std::integral auto x, std::integral auto y) { return x + y; }; std::cout << sum(a, b) << '\\n'; }\n",
    ),
];

#[test]
fn issue_24_rlvr_run_runs_every_language() {
    let directory = tempfile::tempdir().expect("temp dir");
    let stdin = write(directory.path(), "stdin", "20 22\n");
    for (language, name, source) in SUMS {
        let program = write(directory.path(), name, source);
        let output = rlvr()
            .args(["run", "--json", "--lang", language, "--stdin"])
            .arg(&stdin)
            .arg(&program)
            .output()
            .expect("rlvr runs");
        let json = json_of(&output);
        assert_eq!(json["verdict"], "ok", "{language}: {json}");
        assert_eq!(json["stdout"], "42\n", "{language}: {json}");
        assert_eq!(output.status.code(), Some(0), "{language}");
        let compiled = !matches!(language, "javascript");
        assert_eq!(json["compile"].is_object(), compiled, "{language}: {json}");
    }
}

#[test]
fn issue_24_cpp20_is_selectable_and_cpp17_is_the_default() {
    let directory = tempfile::tempdir().expect("temp dir");
    // A concept: C++20 only.
    let program = write(
        directory.path(),
        "concept.cpp",
        "#include <concepts>\n#include <cstdio>\ntemplate <std::integral T> T twice(T x) { return 2 * x; }\nint main(){ printf(\"%d\\n\", twice(21)); }\n",
    );
    let run = |language: &str| {
        json_of(
            &rlvr()
                .args(["run", "--json", "--lang", language])
                .arg(&program)
                .output()
                .expect("rlvr runs"),
        )
    };
    assert_eq!(run("cpp20")["stdout"], "42\n");
    assert_eq!(run("cpp")["verdict"], "compile_error");
}

#[test]
fn issue_24_a_compile_error_shows_the_compiler_message_and_exits_1() {
    let directory = tempfile::tempdir().expect("temp dir");
    let program = write(
        directory.path(),
        "broken.cpp",
        "int main() { return missing_name; }\n",
    );
    let output = rlvr()
        .args(["run", "--json", "--lang", "cpp"])
        .arg(&program)
        .output()
        .expect("rlvr runs");
    let json = json_of(&output);
    assert_eq!(json["verdict"], "compile_error", "{json}");
    assert!(
        json["compile"]["diagnostics"]
            .as_str()
            .unwrap_or("")
            .contains("missing_name"),
        "{json}"
    );
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn issue_24_a_missing_toolchain_is_language_unavailable() {
    let directory = tempfile::tempdir().expect("temp dir");
    let program = write(directory.path(), "main.go", SUMS[4].2);
    let output = rlvr()
        .args(["run", "--json", "--lang", "go"])
        .arg(&program)
        .env("RLVR_DISABLE_LANGUAGES", "go")
        .output()
        .expect("rlvr runs");
    let json = json_of(&output);
    assert_eq!(json["verdict"], "language_unavailable", "{json}");
    assert_eq!(output.status.code(), Some(3));

    let response = format!("```go\n{}\n```", SUMS[4].2);
    let jobs = write(
        directory.path(),
        "jobs.jsonl",
        &format!(
            "{}\n{}\n",
            json!({"id": "go", "response": response, "ground_truth": {"inputs": ["1 2\n"], "outputs": ["3\n"]}}),
            json!({"id": "py", "response": "```python\nprint(sum(map(int, input().split())))\n```", "ground_truth": {"inputs": ["1 2\n"], "outputs": ["3\n"]}}),
        ),
    );
    let output = rlvr()
        .arg("verify")
        .arg(&jobs)
        .env("RLVR_DISABLE_LANGUAGES", "go")
        .output()
        .expect("rlvr runs");
    let results: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("a result line"))
        .collect();
    assert_eq!(results[0]["status"], "language_unavailable", "{results:?}");
    assert_eq!(results[0]["score"], Value::Null);
    assert!(
        results[0]["reason"]
            .as_str()
            .unwrap_or("")
            .contains("RLVR_DISABLE_LANGUAGES")
    );
    assert_eq!(results[1]["score"], 1.0, "{results:?}");
}

#[test]
fn issue_24_verify_languages_pins_what_the_judge_accepts() {
    let directory = tempfile::tempdir().expect("temp dir");
    let response = format!(
        "```python\nprint(sum(map(int, input().split())))\n```\n```cpp\n{}\n```",
        SUMS[0].2
    );
    let line = json!({"id": 1, "response": response, "ground_truth": {"inputs": ["1 2\n"], "outputs": ["3\n"]}});
    let jobs = write(directory.path(), "jobs.jsonl", &format!("{line}\n"));
    for (languages, expected) in [("python", 1.0), ("cpp", 1.0)] {
        let output = rlvr()
            .arg("verify")
            .arg(&jobs)
            .args(["--languages", languages, "--details"])
            .output()
            .expect("rlvr runs");
        let result: Value =
            serde_json::from_str(String::from_utf8_lossy(&output.stdout).trim()).expect("json");
        assert_eq!(result["score"], expected, "{languages}: {result}");
    }
    let output = rlvr()
        .arg("verify")
        .arg(&jobs)
        .args(["--languages", "java"])
        .output()
        .expect("rlvr runs");
    let result: Value =
        serde_json::from_str(String::from_utf8_lossy(&output.stdout).trim()).expect("json");
    assert_eq!(result["status"], "no_code", "{result}");
    let refused = rlvr()
        .arg("verify")
        .arg(&jobs)
        .args(["--languages", "cobol"])
        .output()
        .expect("rlvr runs");
    assert_eq!(refused.status.code(), Some(2));
}

#[test]
fn issue_24_doctor_lists_every_toolchain_with_its_version() {
    let output = rlvr()
        .args(["doctor", "--json"])
        .output()
        .expect("rlvr runs");
    let json = json_of(&output);
    let toolchains = json["toolchains"].as_array().expect("a list");
    let languages: Vec<&str> = toolchains
        .iter()
        .filter_map(|toolchain| toolchain["language"].as_str())
        .collect();
    // TypeScript last: `/run_code`'s only (issue 35), compiled by `tsc`, run as JavaScript.
    assert_eq!(
        languages,
        ["cpp", "c", "java", "javascript", "go", "rust", "typescript"],
        "{json}"
    );
    for toolchain in toolchains {
        // scripts/setup installs every toolchain: on a machine it set up, each must work.
        assert_eq!(toolchain["available"], true, "{toolchain}");
        assert_eq!(toolchain["works_in_sandbox"], true, "{toolchain}");
        assert!(
            !toolchain["version"].as_str().unwrap_or("").is_empty(),
            "{toolchain}"
        );
    }
}
