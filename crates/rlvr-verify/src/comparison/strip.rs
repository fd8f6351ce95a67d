//! The exact string comparators: Code-R1/Klear's `strip()==` and SandboxFusion's
//! `rstrip("\n")==`.

use rlvr_python_compat::text::python_strip;

/// `actual.strip() == expected.strip()` with Python's Unicode whitespace, whole strings, no
/// per-line normalisation.
pub fn strip_equal(actual: &str, expected: &str) -> bool {
    python_strip(actual) == python_strip(expected)
}

/// `actual.rstrip("\n") == expected.rstrip("\n")`.
pub fn rstrip_newline_equal(actual: &str, expected: &str) -> bool {
    actual.trim_end_matches('\n') == expected.trim_end_matches('\n')
}
