//! Exit-code policies and the runner a profile needs: whether a test that printed the right
//! output but ended with a non-zero exit status passes.

/// How the exit status of a test program takes part in its verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitCodePolicy {
    /// Exit status 0 required (Klear, Code-R1, judge): `print(4); raise SystemExit(1)` fails.
    RequireZero,
    /// The references run the code in-process and swallow `SystemExit` (prime, LiveCodeBench):
    /// `print(4); raise SystemExit(1)` passes, `print(4); 1/0` fails. The executor runs these
    /// programs under a harness that turns `SystemExit` into a normal end and any other
    /// exception into exit status 1, so a non-zero status still means a runtime error.
    SystemExitIgnored,
}

/// How the executor runs a test program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunMode {
    /// A fresh interpreter per program: source in a file, stdin from the test (empty when the
    /// test has none; Klear's inheritance of the parent's stdin is not reproduced).
    FreshProcess,
    /// verl prime_code's in-process run: its star-import header and
    /// `sys.setrecursionlimit(6*10**5)`, stdin code wrapped into `def code():` with imports
    /// hoisted, `builtins.exit`/`quit` set to `None` (so `exit()` is a runtime error but
    /// `sys.exit()` is swallowed), stdin mocked, stdout captured in memory.
    PrimeHarness,
    /// rllm's copy of LiveCodeBench's in-process run: a final `if __name__ == "__main__"`
    /// unwrapped, statements wrapped into `wrapped_function()` after rllm's import block, the
    /// module not `__main__`, only `quit` disabled (`exit()` raises `SystemExit`, swallowed),
    /// stdin mocked, only `sys.stdout` captured; all tests in one process.
    LiveCodeBenchHarness,
}

impl RunMode {
    /// One line for `--list-profiles`.
    pub fn describe(self) -> &'static str {
        match self {
            Self::FreshProcess => "fresh process per test",
            Self::PrimeHarness => "in-process harness (prime_code rules), pass 1 in one process",
            Self::LiveCodeBenchHarness => {
                "in-process harness (rllm's LiveCodeBench copy), all tests in one process; functional: one fresh process"
            }
        }
    }
}

impl ExitCodePolicy {
    /// One line for `--list-profiles`.
    pub fn describe(self) -> &'static str {
        match self {
            Self::RequireZero => "exit 0 required",
            Self::SystemExitIgnored => "SystemExit ignored, exceptions fail",
        }
    }
}
