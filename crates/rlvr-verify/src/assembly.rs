//! Program assembly: the source, stdin and expected output of each test program, per
//! profile. Stdin tests run the code alone with the input on stdin; functional tests append
//! the assert(s) to a prefix and the code.

use crate::prelude::{klear_prefix, rllm_prefix};

/// How functional tests become programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FunctionalAssembly {
    /// Klear: `prefix + "\n\n" + code + "\n\n" + assert`, one program per assert; a single
    /// string is one program. Pass = exit 0, so `exit()` in the code passes (reference hole).
    KlearPerAssert,
    /// Code-R1 / rllm leetcode: one program `code + "\n" + tests` (a list is joined with
    /// `"\n"`; the references raise `TypeError` on a list), `with_prefix` puts rllm's import
    /// block and helpers first, as rllm's firejail runner does.
    SingleProgram { with_prefix: bool },
    /// prime: each assert is a test run in-process after the code (`code + "\n" + assert`).
    PerAssert,
    /// Judge: each test's code runs whole in the referee; the solution (after `prefix + code`
    /// in a child of its own) answers the test's calls one at a time (issue 22).
    JudgeLive,
}

impl FunctionalAssembly {
    /// One line for `--list-profiles`.
    pub fn describe(self) -> &'static str {
        match self {
            Self::KlearPerAssert => {
                "import block (numpy, pandas) + helpers + code + assert, one program per assert"
            }
            Self::SingleProgram { with_prefix: false } => {
                "code + \"\\n\" + all asserts, one program"
            }
            Self::SingleProgram { with_prefix: true } => {
                "import block (numpy, pandas) + helpers + code + all asserts, one fresh process, exit 0"
            }
            Self::PerAssert => "code + assert, one in-process run per assert",
            Self::JudgeLive => {
                "the test runs whole in the referee; imports + helpers + code run in a child of \
                 their own that answers the test's calls one at a time, as data or handles"
            }
        }
    }
}

/// Klear's functional program.
pub(crate) fn klear_functional(code: &str, statements: &str) -> String {
    format!("{}\n\n{code}\n\n{statements}", klear_prefix())
}

/// Code-R1's (and rllm's leetcode) single functional program.
pub(crate) fn single_functional(code: &str, statements: &str, with_prefix: bool) -> String {
    if with_prefix {
        format!("{}{code}\n{statements}", rllm_prefix())
    } else {
        format!("{code}\n{statements}")
    }
}

/// prime's per-assert program.
pub(crate) fn plain_functional(code: &str, statement: &str) -> String {
    format!("{code}\n{statement}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn klear_program_is_prefix_code_assert() {
        let program = klear_functional("CODE", "assert X");
        assert!(program.contains("import numpy as np\nimport pandas as pd\n"));
        assert!(program.ends_with("\n\nCODE\n\nassert X"));
    }

    #[test]
    fn rllm_program_is_imports_helpers_code_then_tests() {
        let program = single_functional("CODE", "assert X", true);
        assert!(program.starts_with("from itertools import accumulate"));
        assert!(program.contains("def is_same_tree(p: Optional[TreeNode]"));
        assert!(program.ends_with("\nCODE\nassert X"));
        assert_eq!(
            single_functional("CODE", "assert X", false),
            "CODE\nassert X"
        );
    }
}
