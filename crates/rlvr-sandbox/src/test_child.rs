//! The steps of a test child: what a warm process that runs many tests in one sandbox does in
//! each child it forks for a test, between the fork and the program. Two such processes exist,
//! the Python runner (`rlvr-runner`: `runner/isolation.py`, then `runner/process.py`) and the
//! exec supervisor (`rlvr-languages`: `supervisor/spawn.rs`), and both follow this one list.
//!
//! The list is data, `test_child_steps.txt`, one step a line, because neither follower can
//! call Rust: the supervisor is built by `rustc` alone (it includes the file and reports a
//! failed step by its line), and the runner's Python receives it as the module
//! `rlvr_runner.test_child_steps`. `crates/rlvr-runner/tests/runner/test_child_steps.rs` checks
//! that each follower performs exactly these steps in this order. Where the sandbox's own
//! sequence ([`crate::Step`]) performs the same operation, the step has the sandbox's name.
//!
//! Without capabilities to drop (the runner was not started as a supervisor), the steps between
//! the session and the descriptors are skipped; the order of the others holds.

/// The steps, one a line, in the order a test child performs them.
pub const TEST_CHILD_STEPS: &str = include_str!("test_child_steps.txt");

/// The steps in order ([`TEST_CHILD_STEPS`]).
pub fn test_child_steps() -> impl Iterator<Item = &'static str> {
    TEST_CHILD_STEPS.lines()
}

#[cfg(test)]
mod tests {
    use super::test_child_steps;
    use crate::Step;

    #[test]
    fn a_step_the_sandbox_also_performs_has_the_sandbox_s_name() {
        let steps: Vec<&str> = test_child_steps().collect();
        for shared in [
            Step::NewSession,
            Step::DropPrivileges,
            Step::ClearCapabilities,
            Step::WireDescriptors,
            Step::ResourceLimits,
        ] {
            assert!(steps.contains(&shared.name()), "{}", shared.name());
        }
    }

    #[test]
    fn the_steps_are_distinct_plain_names() {
        let steps: Vec<&str> = test_child_steps().collect();
        assert!(!steps.is_empty());
        for (index, step) in steps.iter().enumerate() {
            assert!(!steps[..index].contains(step), "{step} twice");
            // Plain names: the runner's Python gets them as string literals.
            assert!(
                step.chars()
                    .all(|character| character.is_ascii_alphanumeric()
                        || character == ' '
                        || character == '_'),
                "{step:?}"
            );
        }
    }
}
