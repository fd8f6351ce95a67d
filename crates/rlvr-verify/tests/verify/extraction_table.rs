//! Every row of the extraction table (measured on each reference's code), for every profile's
//! extraction, plus the judge column (our decision, documented in docs/profiles.md).

use rlvr_verify::Extraction;

/// What a profile extracts from a row's response.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// No code (the profile's no-code reward).
    Nothing,
    /// Exactly this code.
    Code(&'static str),
}

struct Row {
    shape: &'static str,
    response: &'static str,
    klear: Expect,
    code_r1: Expect,
    rllm: Expect,
    prime: Expect,
    judge: Expect,
}

fn rows() -> Vec<Row> {
    use Expect::{Code, Nothing};
    vec![
        Row {
            shape: "block in think + 2 blocks after </think>",
            response: "<think>\n```python\nA\n```\n</think>\n<answer>\n```python\nB\n```\n```python\nC\n```\n</answer>",
            klear: Code("C"),
            code_r1: Code("B\nC"),
            rllm: Code("C"),
            prime: Code("\nC\n"),
            judge: Code("C"),
        },
        Row {
            shape: "block in think + 2 blocks after </think>, no answer tags (Code-R1 joins all)",
            response: "<think>\n```python\nA\n```\n</think>\n```python\nB\n```\n```python\nC\n```",
            klear: Code("C"),
            code_r1: Code("A\nB\nC"),
            rllm: Code("C"),
            prime: Code("\nC\n"),
            judge: Code("C"),
        },
        Row {
            shape: "closer indented",
            response: "<think>t</think>\n```python\nprint(1)\n    ```\n",
            klear: Nothing,
            code_r1: Nothing,
            rllm: Code("print(1)"),
            prime: Code("\nprint(1)\n    "),
            judge: Code("print(1)"),
        },
        Row {
            shape: "```py tag",
            response: "<think>t</think>\n```py\nprint(1)\n```\n",
            klear: Nothing,
            code_r1: Code("print(1)"),
            rllm: Code("print(1)"),
            // The table says "whole response": with no ```python the split keeps the
            // whole text, and `.split("```")[0]` then cuts it at the first fence.
            prime: Code("<think>t</think>\n"),
            judge: Code("print(1)"),
        },
        Row {
            shape: "bare ``` fence",
            response: "<think>t</think>\n```\nprint(1)\n```\n",
            klear: Nothing,
            code_r1: Code("print(1)"),
            rllm: Code("print(1)"),
            // The table says "whole response": with no ```python the split keeps the
            // whole text, and `.split("```")[0]` then cuts it at the first fence.
            prime: Code("<think>t</think>\n"),
            judge: Code("print(1)"),
        },
        Row {
            shape: "```Python tag",
            response: "<think>t</think>\n```Python\nprint(1)\n```\n",
            klear: Nothing,
            code_r1: Code("print(1)"),
            rllm: Code("print(1)"),
            // The table says "whole response": with no ```python the split keeps the
            // whole text, and `.split("```")[0]` then cuts it at the first fence.
            prime: Code("<think>t</think>\n"),
            judge: Code("print(1)"),
        },
        Row {
            shape: "no closing fence",
            response: "<think>t</think>\n```python\nprint(1)\n",
            klear: Nothing,
            code_r1: Nothing,
            rllm: Nothing,
            prime: Code("\nprint(1)\n"),
            judge: Nothing,
        },
        Row {
            shape: "only block inside <think>",
            response: "<think>\n```python\nprint(1)\n```\n</think>\nThe answer is above.",
            klear: Nothing,
            code_r1: Code("print(1)"),
            rllm: Code("print(1)"),
            prime: Code("\nprint(1)\n"),
            judge: Nothing,
        },
        Row {
            shape: "CRLF line endings",
            response: "<think>t</think>\r\n```python\r\nprint(1)\r\n```\r\n",
            klear: Nothing,
            code_r1: Nothing,
            rllm: Nothing,
            prime: Code("\r\nprint(1)\r\n"),
            judge: Code("print(1)"),
        },
        Row {
            shape: "```python + trailing space",
            response: "<think>t</think>\n```python \nprint(1)\n```\n",
            klear: Nothing,
            code_r1: Nothing,
            rllm: Nothing,
            prime: Code(" \nprint(1)\n"),
            judge: Code("print(1)"),
        },
    ]
}

fn check(extraction: Extraction, column: &str, row: &Row, expected: Expect) {
    let actual = extraction.extract(row.response);
    match expected {
        Expect::Nothing => assert_eq!(actual, None, "{column} on {:?}", row.shape),
        Expect::Code(code) => {
            assert_eq!(actual.as_deref(), Some(code), "{column} on {:?}", row.shape)
        }
    }
}

#[test]
fn every_row_for_every_profile() {
    for row in rows() {
        check(Extraction::KlearPattern, "klear", &row, row.klear);
        check(Extraction::CodeR1AnswerBlocks, "code-r1", &row, row.code_r1);
        check(Extraction::LastFencedBlock, "rllm", &row, row.rllm);
        check(Extraction::PrimeSplit, "prime", &row, row.prime);
        check(Extraction::Judge, "judge", &row, row.judge);
    }
}

/// Each `(response, code)` pair: what `extraction` takes from the response.
fn extracts(extraction: Extraction, cases: &[(&str, Option<&str>)]) {
    for (response, code) in cases {
        assert_eq!(
            extraction.extract(response).as_deref(),
            *code,
            "{extraction:?} on {response:?}"
        );
    }
}

#[test]
fn klear_takes_the_last_python_block_after_the_first_think_close() {
    extracts(
        Extraction::KlearPattern,
        &[
            (
                "<think>a</think>\n```python\nA\n```\nmid</think>\n```python\nB\n```\n",
                Some("B"),
            ),
            // The last opener without any closer after it backtracks to an earlier block.
            (
                "<think>a</think>\n```python\nA\n```\n```python\nB\n",
                Some("A"),
            ),
            // An empty body is no code; whitespace is code.
            ("</think>```python\n\n```", None),
        ],
    );
}

#[test]
fn live_code_bench_takes_lines_between_the_last_two_fence_lines() {
    extracts(
        Extraction::LiveCodeBenchFenceLines,
        &[
            (
                "x\n```python\nA\n```\ntext\n```python\nB\nC\n```\n",
                Some("B\nC"),
            ),
            ("```python\nA", None),
            ("```python\nA\n    ```", Some("A")),
        ],
    );
}

#[test]
fn judge_skips_other_languages_and_dedents_indented_blocks() {
    extracts(
        Extraction::Judge,
        &[
            (
                "</think>\n```python\nprint(1)\n```\nOutput:\n```text\n1\n```\n",
                Some("print(1)"),
            ),
            (
                "1. Code:\n   ```python3\n   def f():\n       return 1\n   ```\n",
                Some("def f():\n    return 1"),
            ),
            ("````python\nx = '```'\n````\n", Some("x = '```'")),
            ("no code at all", None),
            ("</think>\n```python\n\n```", None),
        ],
    );
}
