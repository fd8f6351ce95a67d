//! Checkers named by a ground truth (issue 25): how a test's output is judged when the record
//! accepts more than one answer, instead of the profile's comparison (which is unchanged for
//! every record that names none).
//!
//! `"checker": "NAME"` picks a built-in rule, a pure comparison run in the verifier
//! ([`super::rules`]): `float:EPS`, `tokens`, `lines-any-order`, `set`.
//! The sandboxed forms, `"checker"` holding Python source (`def check(input, output,
//! expected)`) and `"checker_cpp"` (a testlib-convention C++ checker), are run by the engine
//! in a sandbox of their own, under their own limits, after the program (docs/profiles.md,
//! "Checkers"): the policy layer only carries their source and judges from the
//! [`crate::CheckerOutcome`] the executor reports.

use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::rules::{float_checker, lines_any_order_checker, set_checker, tokens_checker};
use crate::test_suite::{TestSuiteError, describe};

/// The built-in checkers' names, as error messages list them.
pub const BUILT_IN_CHECKERS: &str = "float:EPS, tokens, lines-any-order, set";

/// The tolerance of `float:EPS`: a number in (0, 1), compared by its bits (so plans that hold
/// it stay `Eq`).
#[derive(Debug, Clone, Copy)]
pub struct Tolerance(f64);

impl Tolerance {
    /// `epsilon` when it is in (0, 1).
    pub fn new(epsilon: f64) -> Option<Self> {
        (epsilon > 0.0 && epsilon < 1.0).then_some(Self(epsilon))
    }

    /// The value.
    pub fn value(self) -> f64 {
        self.0
    }
}

impl PartialEq for Tolerance {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for Tolerance {}

/// A built-in checker: a pure comparison in the verifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuiltInChecker {
    /// `float:EPS`: tokens equal, numbers within `EPS` absolutely or relatively.
    Float {
        /// The tolerance.
        epsilon: Tolerance,
    },
    /// `tokens`: the same whitespace-separated tokens in the same order.
    Tokens,
    /// `lines-any-order`: the same multiset of lines (trailing white space ignored).
    LinesAnyOrder,
    /// `set`: the same set of tokens.
    Set,
}

impl BuiltInChecker {
    /// Whether `output` (what the program printed) is accepted for `expected`.
    pub fn accepts(self, output: &[u8], expected: &str) -> bool {
        let expected = expected.as_bytes();
        match self {
            Self::Float { epsilon } => float_checker(output, expected, epsilon.value()),
            Self::Tokens => tokens_checker(output, expected),
            Self::LinesAnyOrder => lines_any_order_checker(output, expected),
            Self::Set => set_checker(output, expected),
        }
    }

    /// Reads a built-in name; `None` when the name is none of them.
    fn parse(name: &str) -> Option<Result<Self, String>> {
        match name {
            "tokens" => Some(Ok(Self::Tokens)),
            "lines-any-order" => Some(Ok(Self::LinesAnyOrder)),
            "set" => Some(Ok(Self::Set)),
            "float" => Some(Err(
                "needs a tolerance in (0, 1), such as \"float:1e-6\"".to_owned()
            )),
            _ => {
                let tolerance = name.strip_prefix("float:")?;
                Some(
                    match tolerance.parse::<f64>().ok().and_then(Tolerance::new) {
                        Some(epsilon) => Ok(Self::Float { epsilon }),
                        None => Err(format!(
                            "needs a tolerance in (0, 1) after \"float:\", such as \"float:1e-6\"; found {}",
                            shown(tolerance)
                        )),
                    },
                )
            }
        }
    }
}

impl fmt::Display for BuiltInChecker {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Float { epsilon } => write!(formatter, "float:{:e}", epsilon.value()),
            Self::Tokens => formatter.write_str("tokens"),
            Self::LinesAnyOrder => formatter.write_str("lines-any-order"),
            Self::Set => formatter.write_str("set"),
        }
    }
}

/// The checker a ground truth names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checker {
    /// A built-in rule, decided in the verifier.
    BuiltIn(BuiltInChecker),
    /// Python source defining `check(input, output, expected) -> bool | float`, run in the
    /// sandbox.
    Python(Arc<str>),
    /// C++ source of a testlib-convention checker (`checker INPUT OUTPUT ANSWER`, exit 0
    /// accepts), compiled once and run in the sandbox.
    Cpp(Arc<str>),
}

impl Checker {
    /// The built-in rule, when this checker is one (the sandboxed ones run in the engine).
    pub fn built_in(&self) -> Option<BuiltInChecker> {
        match self {
            Self::BuiltIn(rule) => Some(*rule),
            Self::Python(_) | Self::Cpp(_) => None,
        }
    }

    /// Whether the checker runs in the sandbox (Python or C++ source).
    pub fn is_sandboxed(&self) -> bool {
        self.built_in().is_none()
    }

    /// Reads `checker` / `checker_cpp` from a ground truth object (`null` is absent).
    pub(crate) fn from_ground_truth(
        object: &Map<String, Value>,
    ) -> Result<Option<Self>, TestSuiteError> {
        let present = |key: &str| object.get(key).filter(|value| !value.is_null());
        match (present("checker"), present("checker_cpp")) {
            (None, None) => Ok(None),
            (Some(_), Some(_)) => Err(TestSuiteError::Checker {
                key: "checker",
                reason: "and \"checker_cpp\" are both given; give one".to_owned(),
            }),
            (None, Some(Value::String(text))) if !text.trim().is_empty() => {
                Ok(Some(Self::Cpp(Arc::from(text.as_str()))))
            }
            (None, Some(other)) => Err(TestSuiteError::Checker {
                key: "checker_cpp",
                reason: format!(
                    "must be the C++ source of a testlib-convention checker, found {}",
                    if other.as_str().is_some() {
                        "a blank string".to_owned()
                    } else {
                        describe(other)
                    }
                ),
            }),
            (Some(Value::String(text)), None) => {
                if is_python_source(text) {
                    return Ok(Some(Self::Python(Arc::from(text.as_str()))));
                }
                match BuiltInChecker::parse(text) {
                    Some(Ok(rule)) => Ok(Some(Self::BuiltIn(rule))),
                    Some(Err(reason)) => Err(TestSuiteError::Checker {
                        key: "checker",
                        reason,
                    }),
                    None => Err(TestSuiteError::Checker {
                        key: "checker",
                        reason: format!(
                            "names no built-in checker: {} (built-in checkers: {BUILT_IN_CHECKERS})",
                            shown(text)
                        ),
                    }),
                }
            }
            (Some(other), None) => Err(TestSuiteError::Checker {
                key: "checker",
                reason: format!(
                    "must be a built-in checker name ({BUILT_IN_CHECKERS}) or Python source defining check(input, output, expected), found {}",
                    describe(other)
                ),
            }),
        }
    }
}

/// Whether a `checker` string is Python source rather than a built-in name: it spans lines or
/// defines a function (no built-in name holds a newline or `def `).
fn is_python_source(text: &str) -> bool {
    text.contains('\n') || text.contains("def ")
}

/// A name as an error message shows it: quoted, at most 40 characters.
fn shown(text: &str) -> String {
    let head: String = text.chars().take(40).collect();
    let cut = if head.len() < text.len() { "..." } else { "" };
    format!("{head:?}{cut}")
}

impl fmt::Display for Checker {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BuiltIn(rule) => rule.fmt(formatter),
            Self::Python(_) => formatter.write_str("python"),
            Self::Cpp(_) => formatter.write_str("c++"),
        }
    }
}
