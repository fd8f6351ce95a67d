//! The corpus for the differential test against the real verl `prime_code`: at least 200
//! (response, tests) pairs covering right, wrong, crashing, slow, float-formatted and
//! whitespace-varied answers. The committed fixture `fixtures/prime_corpus.snap.jsonl` is an
//! insta snapshot of what this generator builds (insta's metadata beside it in
//! `prime_corpus.snap`; `cargo insta review`, or `INSTA_UPDATE=always`, rewrites it);
//! `fixtures/prime_corpus_scores.jsonl` holds the reference scores from
//! `tests/oracles/prime_reference.py`, for the differential test once execution exists.

use std::fmt::Write as _;

use serde_json::{Value, json};

/// A problem: a solution body template (`{print}` is replaced by the final print statement),
/// and a function from the input number to the expected output.
struct Problem {
    name: &'static str,
    read: &'static str,
    inputs: fn(usize) -> String,
    outputs: fn(usize) -> String,
    value: &'static str,
}

fn problems() -> Vec<Problem> {
    vec![
        Problem {
            name: "sum",
            read: "a, b = map(int, input().split())",
            inputs: |index| format!("{} {}\n", index * 7 + 1, index * 3 + 2),
            outputs: |index| format!("{}\n", index * 10 + 3),
            value: "a + b",
        },
        Problem {
            name: "halve",
            read: "a = int(input())",
            inputs: |index| format!("{}\n", index * 2 + 1),
            outputs: |index| format!("{}\n", (index * 2 + 1) as f64 / 2.0),
            value: "a / 2",
        },
        Problem {
            name: "third",
            read: "a = int(input())",
            inputs: |index| format!("{}\n", index + 1),
            outputs: |index| format!("{:.7}\n", (index + 1) as f64 / 3.0),
            value: "(a) / 3",
        },
        Problem {
            name: "parity",
            read: "a = int(input())",
            inputs: |index| format!("{index}\n"),
            outputs: |index| {
                if index % 2 == 0 {
                    "YES\n".to_owned()
                } else {
                    "NO\n".to_owned()
                }
            },
            value: "'YES' if a % 2 == 0 else 'NO'",
        },
        Problem {
            name: "count-down",
            read: "a = int(input())",
            inputs: |index| format!("{}\n", index % 4 + 1),
            outputs: |index| {
                let count = index % 4 + 1;
                (1..=count)
                    .rev()
                    .map(|value| format!("{value}\n"))
                    .collect()
            },
            value: "'\\n'.join(str(value) for value in range(a, 0, -1))",
        },
    ]
}

/// (variant name, program template). `READ` and `VALUE` are replaced per problem.
const VARIANTS: &[(&str, &str)] = &[
    ("right", "READ\nprint(VALUE)"),
    (
        "right-main",
        "def main():\n    READ\n    print(VALUE)\n\nif __name__ == '__main__':\n    main()",
    ),
    ("wrong-off-by-one", "READ\nprint(str(VALUE) + '0')"),
    ("wrong-empty", "READ"),
    ("crash-before", "READ\n1 / 0\nprint(VALUE)"),
    ("crash-after", "READ\nprint(VALUE)\n1 / 0"),
    (
        "system-exit-after",
        "READ\nprint(VALUE)\nraise SystemExit(1)",
    ),
    (
        "sys-exit-after",
        "import sys\nREAD\nprint(VALUE)\nsys.exit(0)",
    ),
    ("builtin-exit-after", "READ\nprint(VALUE)\nexit()"),
    ("syntax-error", "READ\nprint(VALUE"),
    (
        "trailing-spaces",
        "READ\nprint(str(VALUE).replace('\\n', ' \\n') + '   ')",
    ),
    ("leading-blank-lines", "READ\nprint('\\n\\n' + str(VALUE))"),
    (
        "crlf",
        "import sys\nREAD\nsys.stdout.write(str(VALUE).replace('\\n', '\\r\\n') + '\\r\\n')",
    ),
    ("tabs", "READ\nprint('\\t' + str(VALUE) + '\\t')"),
    (
        "float-six-places",
        "READ\nvalue = VALUE\nprint(f'{value:.6f}' if isinstance(value, float) else value)",
    ),
    (
        "float-nine-places",
        "READ\nvalue = VALUE\nprint(f'{value:.9f}' if isinstance(value, float) else value)",
    ),
    (
        "float-as-float",
        "READ\nvalue = VALUE\nprint(float(value) if isinstance(value, int) else value)",
    ),
    (
        "input-via-stdin-read",
        "import sys\ndata = sys.stdin.read().split()\nprint(len(data) > 0 and 'x' or 'y')",
    ),
    ("no-fence", "READ\nprint(VALUE)"),
    ("py-tag", "READ\nprint(VALUE)"),
    (
        "double-spaced",
        "READ\nprint(' '.join(str(VALUE)).replace('\\n', '  '))",
    ),
    ("slow", "import time\ntime.sleep(0.7)\nREAD\nprint(VALUE)"),
];

fn response(variant: &str, program: &str) -> String {
    match variant {
        "no-fence" => program.to_owned(),
        "py-tag" => format!("<think>reasoning</think>\n```py\n{program}\n```\n"),
        _ => format!("<think>reasoning</think>\nHere it is:\n```python\n{program}\n```\nDone."),
    }
}

/// Builds the corpus: every problem × variant × suite size (3 and 12 tests); the slow
/// variant only with 12 tests on two problems to keep the reference run short.
pub fn corpus() -> Vec<Value> {
    let mut cases = Vec::new();
    for problem in problems() {
        for &(variant, template) in VARIANTS {
            for test_count in [3usize, 12] {
                if variant == "slow"
                    && (test_count == 3 || !matches!(problem.name, "sum" | "parity"))
                {
                    continue;
                }
                let program = template
                    .replace("READ", problem.read)
                    .replace("VALUE", problem.value);
                let inputs: Vec<String> = (0..test_count).map(problem.inputs).collect();
                let outputs: Vec<String> = (0..test_count).map(problem.outputs).collect();
                cases.push(json!({
                    "id": format!("{}/{variant}/{test_count}", problem.name),
                    "response": response(variant, &program),
                    "ground_truth": {"inputs": inputs, "outputs": outputs},
                }));
            }
        }
    }
    cases
}

fn fixture_path(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

#[test]
fn corpus_is_large_and_matches_the_committed_fixture() {
    let cases = corpus();
    assert!(cases.len() >= 200, "only {} cases", cases.len());
    let mut text = String::new();
    for case in &cases {
        writeln!(text, "{case}").expect("writing to a string cannot fail");
    }
    // The fixture stays a plain JSON Lines file that other tests read: a binary snapshot,
    // whose content file is `fixtures/prime_corpus.snap.jsonl`.
    insta::with_settings!({
        snapshot_path => "../fixtures",
        prepend_module_to_snapshot => false,
    }, {
        insta::assert_binary_snapshot!("prime_corpus.jsonl", text.into_bytes());
    });
}

#[test]
fn reference_scores_cover_the_corpus() {
    let scores =
        std::fs::read_to_string(fixture_path("prime_corpus_scores.jsonl")).expect("scores exist");
    let ids: Vec<String> = scores
        .lines()
        .map(|line| {
            serde_json::from_str::<Value>(line).expect("json line")["id"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        })
        .collect();
    let expected: Vec<String> = corpus()
        .iter()
        .map(|case| case["id"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(ids, expected);
}
