//! Running the catalogue against a target: the cross-job programs first, then every hostile
//! response and honest control, then the report.

use std::time::Instant;

use crate::catalogue::Catalogue;
use crate::report::Report;
use crate::submission::{Role, Submission};
use crate::target::{Outcome, Target};

/// The submissions of a run, in phases: every `prepare` program, then each case's hostile
/// program and honest control.
pub fn phases(catalogue: &Catalogue) -> Vec<Vec<Submission>> {
    let submission = |index: usize, role: Role| {
        let case = &catalogue.cases[index];
        Submission::new(index, case, role, &catalogue.problems[case.problem])
    };
    let prepares: Vec<Submission> = (0..catalogue.cases.len())
        .filter(|&index| catalogue.cases[index].prepare.is_some())
        .map(|index| submission(index, Role::Prepare))
        .collect();
    let pairs: Vec<Submission> = (0..catalogue.cases.len())
        .flat_map(|index| {
            [
                submission(index, Role::Hostile),
                submission(index, Role::Honest),
            ]
        })
        .collect();
    vec![prepares, pairs]
}

/// Runs every case of `catalogue` against `target`.
pub fn run(catalogue: &Catalogue, target: &dyn Target) -> Report {
    let started = Instant::now();
    let phases = phases(catalogue);
    let mut outcomes = target.score_phases(&phases);
    // A target that answered fewer outcomes than submissions failed the rest.
    for (phase, answered) in phases.iter().zip(outcomes.iter_mut()) {
        while answered.len() < phase.len() {
            answered.push(Outcome::Failed {
                reason: "the target returned no outcome for this response".to_owned(),
            });
        }
    }
    let scored = phases
        .iter()
        .zip(&outcomes)
        .flat_map(|(phase, answered)| phase.iter().zip(answered));
    Report::new(
        catalogue,
        target.describe(),
        scored,
        started.elapsed().as_secs_f64(),
    )
}
