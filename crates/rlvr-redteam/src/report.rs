//! The report: per class, attacks tried, attacks that earned reward or voided their score,
//! honest controls that lost reward; per case, what the target answered. Markdown or JSON.

use std::fmt::Write as _;

use crate::catalogue::{AttackClass, Catalogue};
use crate::submission::{Role, Submission};
use crate::target::Outcome;

/// A section of the Markdown report: its title, which cases it lists, and whether it shows the
/// hostile side (else the honest control).
type Section = (&'static str, fn(&CaseReport) -> bool, bool);

/// Rewards this close to a bound count as the bound (floating-point noise of pass rates).
const TOLERANCE: f64 = 1e-9;

/// What the target answered for one program.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RoleOutcome {
    /// `scored`, `void` (the target gave no reward) or `failed` (the target could not be asked).
    pub status: &'static str,
    /// The reward as the target gave it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reward: Option<f64>,
    /// The reward scaled to [0, 1].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scaled: Option<f64>,
    /// The target's status or reason, when it gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl From<&Outcome> for RoleOutcome {
    fn from(outcome: &Outcome) -> Self {
        match outcome {
            Outcome::Scored {
                reward,
                scaled,
                detail,
            } => Self {
                status: "scored",
                reward: Some(*reward),
                scaled: Some(*scaled),
                detail: detail.clone(),
            },
            Outcome::Void { reason } => Self {
                status: "void",
                reward: None,
                scaled: None,
                detail: Some(reason.clone()),
            },
            Outcome::Failed { reason } => Self {
                status: "failed",
                reward: None,
                scaled: None,
                detail: Some(reason.clone()),
            },
        }
    }
}

/// One case's result.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CaseReport {
    pub id: String,
    pub class: AttackClass,
    pub since: u32,
    pub description: String,
    pub problem: String,
    /// The fraction of the tests the hostile program really passes.
    pub deserved: f64,
    pub hostile: RoleOutcome,
    pub honest: RoleOutcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prepare: Option<RoleOutcome>,
    /// The hostile response's scaled reward is above what it deserves.
    pub attack_earned_reward: bool,
    /// The target gave the hostile response no reward at all (null, an error of the reward).
    pub attack_voided_score: bool,
    /// The honest control's scaled reward is below 1, or void.
    pub control_lost_reward: bool,
    /// The target could not be asked about one of the case's programs.
    pub failed: bool,
}

/// The counts of one class (or of all).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Totals {
    pub attacks: usize,
    pub earned_reward: usize,
    pub voided_score: usize,
    pub controls_lost_reward: usize,
    pub failed: usize,
}

impl Totals {
    fn add(&mut self, case: &CaseReport) {
        self.attacks += 1;
        self.earned_reward += usize::from(case.attack_earned_reward);
        self.voided_score += usize::from(case.attack_voided_score);
        self.controls_lost_reward += usize::from(case.control_lost_reward);
        self.failed += usize::from(case.failed);
    }
}

/// One row of the table.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ClassRow {
    pub class: AttackClass,
    #[serde(flatten)]
    pub totals: Totals,
}

/// The whole run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Report {
    pub catalogue_version: u32,
    pub target: String,
    pub seconds: f64,
    pub classes: Vec<ClassRow>,
    pub totals: Totals,
    pub cases: Vec<CaseReport>,
}

impl Report {
    /// Builds the report from every submission and its outcome.
    pub fn new<'a>(
        catalogue: &Catalogue,
        target: String,
        scored: impl Iterator<Item = (&'a Submission, &'a Outcome)>,
        seconds: f64,
    ) -> Self {
        let mut outcomes: Vec<[Option<&Outcome>; 3]> = vec![[None; 3]; catalogue.cases.len()];
        for (submission, outcome) in scored {
            let slot = match submission.role {
                Role::Prepare => 0,
                Role::Hostile => 1,
                Role::Honest => 2,
            };
            outcomes[submission.case][slot] = Some(outcome);
        }
        let missing = Outcome::Failed {
            reason: "not scored".to_owned(),
        };
        let cases: Vec<CaseReport> = catalogue
            .cases
            .iter()
            .zip(outcomes)
            .map(|(case, [prepare, hostile, honest])| {
                let hostile = hostile.unwrap_or(&missing);
                let honest = honest.unwrap_or(&missing);
                let prepare_failed = matches!(prepare, Some(Outcome::Failed { .. }));
                CaseReport {
                    id: case.id.clone(),
                    class: case.class,
                    since: case.since,
                    description: case.description.clone(),
                    problem: catalogue.problems[case.problem].id.clone(),
                    deserved: case.deserved,
                    attack_earned_reward: matches!(hostile, Outcome::Scored { scaled, .. }
                        if *scaled > case.deserved + TOLERANCE),
                    attack_voided_score: matches!(hostile, Outcome::Void { .. }),
                    control_lost_reward: match honest {
                        Outcome::Scored { scaled, .. } => *scaled < 1.0 - TOLERANCE,
                        Outcome::Void { .. } => true,
                        Outcome::Failed { .. } => false,
                    },
                    failed: prepare_failed
                        || matches!(hostile, Outcome::Failed { .. })
                        || matches!(honest, Outcome::Failed { .. }),
                    hostile: hostile.into(),
                    honest: honest.into(),
                    prepare: prepare.map(RoleOutcome::from),
                }
            })
            .collect();
        let mut totals = Totals::default();
        let classes = AttackClass::ALL
            .into_iter()
            .filter_map(|class| {
                let mut row = Totals::default();
                for case in cases.iter().filter(|case| case.class == class) {
                    row.add(case);
                    totals.add(case);
                }
                (row.attacks > 0).then_some(ClassRow { class, totals: row })
            })
            .collect();
        Self {
            catalogue_version: catalogue.version,
            target,
            seconds,
            classes,
            totals,
            cases,
        }
    }

    /// Any attack earned reward or voided its score, or any control lost reward.
    pub fn found_holes(&self) -> bool {
        self.totals.earned_reward + self.totals.voided_score + self.totals.controls_lost_reward > 0
    }

    /// The target failed to answer for some program: the measurement is incomplete.
    pub fn incomplete(&self) -> bool {
        self.totals.failed > 0
    }

    /// The Markdown table, then the cases behind each non-zero count.
    pub fn markdown(&self) -> String {
        let mut text = String::new();
        let _ = writeln!(
            text,
            "`{}`, catalogue version {}: {} attacks, each with an honest control.\n",
            self.target, self.catalogue_version, self.totals.attacks
        );
        let _ = writeln!(
            text,
            "| class | attacks | earned reward | voided the score | honest controls that lost reward | target errors |"
        );
        let _ = writeln!(text, "|---|---:|---:|---:|---:|---:|");
        let row = |text: &mut String, name: &str, totals: &Totals| {
            let _ = writeln!(
                text,
                "| {name} | {} | {} | {} | {} | {} |",
                totals.attacks,
                totals.earned_reward,
                totals.voided_score,
                totals.controls_lost_reward,
                totals.failed
            );
        };
        for class in &self.classes {
            row(&mut text, class.class.as_str(), &class.totals);
        }
        row(&mut text, "**all**", &self.totals);
        let sections: [Section; 4] = [
            (
                "Attacks that earned reward",
                |case| case.attack_earned_reward,
                true,
            ),
            (
                "Attacks that voided the score",
                |case| case.attack_voided_score,
                true,
            ),
            (
                "Honest controls that lost reward",
                |case| case.control_lost_reward,
                false,
            ),
            ("Target errors", |case| case.failed, true),
        ];
        for (title, selected, hostile_side) in sections {
            let chosen: Vec<&CaseReport> =
                self.cases.iter().filter(|case| selected(case)).collect();
            if chosen.is_empty() {
                continue;
            }
            let _ = writeln!(text, "\n{title}:\n");
            for case in chosen {
                let outcome = if title == "Target errors" {
                    [
                        Some(&case.hostile),
                        Some(&case.honest),
                        case.prepare.as_ref(),
                    ]
                    .into_iter()
                    .flatten()
                    .find(|outcome| outcome.status == "failed")
                    .unwrap_or(&case.hostile)
                } else if hostile_side {
                    &case.hostile
                } else {
                    &case.honest
                };
                let whose = if hostile_side { "" } else { "honest control: " };
                let _ = writeln!(
                    text,
                    "- `{}` ({whose}{}): {}",
                    case.id,
                    describe(outcome, hostile_side.then_some(case.deserved)),
                    case.description
                );
            }
        }
        text
    }
}

/// `reward 1 (scaled 1.00, deserved 0.00)`, `void: reason`.
fn describe(outcome: &RoleOutcome, deserved: Option<f64>) -> String {
    match (outcome.reward, outcome.scaled) {
        (Some(reward), Some(scaled)) => {
            // Four decimals at most: 2p-1 of a third is 0.33333333333333326 in binary.
            let shown = (reward * 1e4).round() / 1e4;
            let mut text = format!("reward {shown} (scaled {scaled:.2}");
            if let Some(deserved) = deserved.filter(|deserved| *deserved > 0.0) {
                let _ = write!(text, ", deserved {deserved:.2}");
            }
            text.push(')');
            if let Some(detail) = &outcome.detail {
                let _ = write!(text, ", {}", one_line(detail));
            }
            text
        }
        _ => format!(
            "{}: {}",
            outcome.status,
            one_line(outcome.detail.as_deref().unwrap_or(""))
        ),
    }
}

/// The first line of a reason, at most 160 characters.
fn one_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    if line.chars().count() > 160 {
        format!("{}...", line.chars().take(160).collect::<String>())
    } else {
        line.to_owned()
    }
}
