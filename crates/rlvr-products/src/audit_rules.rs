//! The per-record quality rules of `rlvr audit`: each one names a way a record can give a wrong
//! or meaningless reward. Rules look at one record; the cross-record rule (the same prompt with
//! different tests) is in [`crate::audit`].

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;
use rlvr_dataset::record::{RecordRef, TestsRef};
use rlvr_python_compat::json::ValueRef;

use crate::normalize::decode_lossy;
use rlvr_dataset::answer_variety::{VarietyPhrase, answer_variety};

/// One audit flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Flag {
    /// The prompt has an image placeholder or an external link.
    ExternalReference,
    /// The prompt asks for a language other than Python.
    NonPythonLanguage,
    /// A functional test calls a function the prompt never names.
    FunctionNotInPrompt,
    /// The same (input, output) pair appears twice in one record.
    DuplicateTestPairs,
    /// An expected output is empty or only whitespace.
    EmptyExpectedOutput,
    /// An expected output has CRLF line ends or trailing spaces.
    OutputWhitespace,
    /// A single test value is larger than the limit.
    OversizedTest,
    /// The same (normalised) prompt appears with different tests elsewhere in the file.
    PromptRepeatedWithDifferentTests,
    /// The statement accepts more than one answer (any of several, any order, a tolerance).
    AnswerMayVary,
}

impl Flag {
    /// Every flag, in report order.
    pub const ALL: [Flag; 9] = [
        Self::ExternalReference,
        Self::NonPythonLanguage,
        Self::FunctionNotInPrompt,
        Self::DuplicateTestPairs,
        Self::EmptyExpectedOutput,
        Self::OutputWhitespace,
        Self::OversizedTest,
        Self::PromptRepeatedWithDifferentTests,
        Self::AnswerMayVary,
    ];

    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::ExternalReference => "external_reference",
            Self::NonPythonLanguage => "non_python_language",
            Self::FunctionNotInPrompt => "function_not_in_prompt",
            Self::DuplicateTestPairs => "duplicate_test_pairs",
            Self::EmptyExpectedOutput => "empty_expected_output",
            Self::OutputWhitespace => "output_whitespace",
            Self::OversizedTest => "oversized_test",
            Self::PromptRepeatedWithDifferentTests => "prompt_repeated_with_different_tests",
            Self::AnswerMayVary => "answer_may_vary",
        }
    }

    /// Why it matters for rewards.
    pub fn why(self) -> &'static str {
        match self {
            Self::ExternalReference => {
                "the model cannot see images or follow links, so part of the problem is missing and a zero reward may be the data's fault"
            }
            Self::NonPythonLanguage => {
                "a Python-only harness rewards a solution in the wrong language, or punishes one that followed the prompt"
            }
            Self::FunctionNotInPrompt => {
                "the tests call a function the model was never told to define: every answer fails whatever its quality"
            }
            Self::DuplicateTestPairs => {
                "repeated pairs weigh some cases twice in a fraction-of-tests reward and cost run time"
            }
            Self::EmptyExpectedOutput => {
                "an empty expected output is passed by a program that prints nothing, a reward for doing nothing"
            }
            Self::OutputWhitespace => {
                "CRLF or trailing spaces fail exact comparison unless the verifier normalises whitespace"
            }
            Self::OversizedTest => {
                "very large tests dominate verification time and memory and may hit sandbox limits"
            }
            Self::PromptRepeatedWithDifferentTests => {
                "the same problem rewarded against different tests gives inconsistent rewards and leaks across splits"
            }
            Self::AnswerMayVary => {
                "the statement accepts other answers than the one expected output: exact comparison scores a correct answer 0 unless the ground truth names a checker"
            }
        }
    }
}

static EXTERNAL_REFERENCE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(https?://|www\.|<image>|\[image\]|<img\b|!\[[^\]]*\]\(|\.(png|jpe?g|gif|svg|bmp)\b)",
    )
    .ok()
});
static OTHER_LANGUAGE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(C\+\+|\bJava\b|\bJavaScript\b|\bRust\b|\bGolang\b|\bKotlin\b|\bHaskell\b|\bRuby\b|\bPHP\b|\bSwift\b|\bScala\b|C#|\bPascal\b|\bPerl\b)").ok()
});
static PYTHON: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"(?i)\bpython").ok());
static ASSERT_CALL: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\bassert\s+(?:not\s+)?\(?\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(").ok());

/// Calls inside assertions that are Python built-ins, not the function under test.
const BUILTINS: &[&str] = &[
    "abs",
    "all",
    "any",
    "bool",
    "dict",
    "float",
    "frozenset",
    "int",
    "isinstance",
    "len",
    "list",
    "math",
    "max",
    "min",
    "repr",
    "round",
    "set",
    "sorted",
    "str",
    "sum",
    "tuple",
    "type",
    "abs_tol",
    "isclose",
];

fn matches(regex: &LazyLock<Option<Regex>>, text: &str) -> bool {
    regex.as_ref().is_some_and(|regex| regex.is_match(text))
}

/// The function a functional test calls first, unless it is a built-in.
pub fn called_function(test: &str) -> Option<String> {
    let regex = ASSERT_CALL.as_ref()?;
    let name = regex.captures(test)?.get(1)?.as_str();
    (!BUILTINS.contains(&name)).then(|| name.to_owned())
}

fn has_trailing_space(text: &str) -> bool {
    text.split('\n')
        .any(|line| line.ends_with(' ') || line.ends_with('\t'))
}

fn text_of<'a>(value: &ValueRef<'a>) -> Option<std::borrow::Cow<'a, str>> {
    value.as_json_str().map(|string| decode_lossy(string).0)
}

/// What the per-record rules found in one record.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecordFindings {
    /// The flags raised.
    pub flags: Vec<Flag>,
    /// For [`Flag::AnswerMayVary`]: the phrases that raised it.
    pub variety: Vec<VarietyPhrase>,
}

/// The per-record flags of one record; `oversized_bytes` is the limit for one test value.
pub fn record_flags(record: &RecordRef<'_, '_>, oversized_bytes: usize) -> RecordFindings {
    let mut flags = Vec::new();
    let (prompt, _) = decode_lossy(record.prompt_content);
    let variety = answer_variety(&prompt);
    if !variety.is_empty() {
        flags.push(Flag::AnswerMayVary);
    }
    if matches(&EXTERNAL_REFERENCE, &prompt) {
        flags.push(Flag::ExternalReference);
    }
    if matches(&OTHER_LANGUAGE, &prompt) && !matches(&PYTHON, &prompt) {
        flags.push(Flag::NonPythonLanguage);
    }
    match record.ground_truth {
        TestsRef::Functional { tests } => {
            let missing = tests
                .iter()
                .filter_map(text_of)
                .filter_map(|test| called_function(&test))
                .any(|name| !prompt.contains(&name));
            if missing {
                flags.push(Flag::FunctionNotInPrompt);
            }
            if tests.iter().any(|test| test.raw().len() > oversized_bytes) {
                flags.push(Flag::OversizedTest);
            }
        }
        TestsRef::InputOutput { inputs, outputs } => {
            let mut seen = HashSet::with_capacity(inputs.len());
            if inputs
                .iter()
                .zip(outputs)
                .any(|(input, output)| !seen.insert((input.raw(), output.raw())))
            {
                flags.push(Flag::DuplicateTestPairs);
            }
            let texts: Vec<_> = outputs.iter().filter_map(text_of).collect();
            if texts.iter().any(|text| text.trim().is_empty()) {
                flags.push(Flag::EmptyExpectedOutput);
            }
            if texts
                .iter()
                .any(|text| text.contains("\r\n") || has_trailing_space(text))
            {
                flags.push(Flag::OutputWhitespace);
            }
            if inputs
                .iter()
                .chain(outputs)
                .any(|value| value.raw().len() > oversized_bytes)
            {
                flags.push(Flag::OversizedTest);
            }
        }
    }
    RecordFindings { flags, variety }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn called_functions_skip_builtins() {
        assert_eq!(
            called_function("assert valid_mersenne(2) == True"),
            Some("valid_mersenne".to_owned())
        );
        assert_eq!(
            called_function("assert not is_prime(4)"),
            Some("is_prime".to_owned())
        );
        assert_eq!(called_function("assert math.isclose(area(2), 12.5)"), None);
        assert_eq!(called_function("assert len(x) == 2"), None);
    }

    #[test]
    fn languages_and_links_are_found() {
        assert!(matches(&OTHER_LANGUAGE, "Write it in C++."));
        assert!(!matches(&OTHER_LANGUAGE, "Write it in JavaScriptish"));
        assert!(matches(&EXTERNAL_REFERENCE, "see https://example.com"));
        assert!(matches(&EXTERNAL_REFERENCE, "![figure](a.png)"));
        assert!(has_trailing_space("1 \n2"));
        assert!(!has_trailing_space("1\n2\n"));
    }
}
