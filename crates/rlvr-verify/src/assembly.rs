//! Program assembly: the source, stdin and expected output of each test program, per
//! profile. Stdin tests run the code alone with the input on stdin; functional tests append
//! the assert(s) to a prefix and the code.

use sha2::{Digest, Sha256};

use crate::prelude::{judge_prefix, klear_prefix, rllm_prefix};

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
    /// Judge: each test split by the referee (only the solution's calls run after
    /// `prefix + code`; the rest of the test runs in the referee). Forms it cannot split run as
    /// `prefix + code + assert + sentinel print`, one program per assert, passing only when the
    /// sentinel is the last line printed and the program ran to its end.
    JudgeSentinel,
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
            Self::JudgeSentinel => {
                "split by the referee: only the solution's calls run after imports + helpers + \
                 code, the rest in the referee; unsplit forms: code + assert + sentinel print"
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

/// A sentinel the solution cannot guess: derived from the seed, the job and the test.
pub(crate) fn sentinel_token(seed: u64, job_identity: &[u8], test_index: usize) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"rlvr judge sentinel v1\0");
    hasher.update(seed.to_le_bytes());
    hasher.update((test_index as u64).to_le_bytes());
    hasher.update(job_identity);
    let digest = hasher.finalize();
    format!("rlvr-sentinel-{}", hex_prefix(&digest[..12]))
}

fn hex_prefix(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The judge's functional program: the assert runs at module level after the code, then the
/// sentinel is printed on a line of its own (flushed, so buffering cannot reorder it).
pub(crate) fn judge_functional(code: &str, statement: &str, sentinel: &str) -> String {
    format!(
        "{}\n\n{code}\n\n{statement}\nprint(\"\\n{sentinel}\", flush=True)\n",
        judge_prefix()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judge_program_ends_with_the_sentinel_after_the_assert() {
        let program = judge_functional(
            "def f():\n    return 1",
            "assert f() == 1",
            "rlvr-sentinel-ab",
        );
        let assert_at = program.find("assert f() == 1").unwrap();
        let sentinel_at = program.find("rlvr-sentinel-ab").unwrap();
        assert!(assert_at < sentinel_at);
        assert!(program.ends_with("print(\"\\nrlvr-sentinel-ab\", flush=True)\n"));
        assert!(!program.contains("import numpy"));
    }

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

    #[test]
    fn sentinels_differ_per_test_and_job() {
        let first = sentinel_token(1, b"job", 0);
        assert_eq!(first, sentinel_token(1, b"job", 0));
        assert_ne!(first, sentinel_token(1, b"job", 1));
        assert_ne!(first, sentinel_token(1, b"other", 0));
        assert_ne!(first, sentinel_token(2, b"job", 0));
    }
}
