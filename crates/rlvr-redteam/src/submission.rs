//! One response sent to the target: a case's hostile program, its honest control, or the
//! program a cross-job case sends first.

use serde_json::Value;

use crate::catalogue::{Case, Problem, response};

/// Which of a case's programs a submission carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Sent and scored before every other submission (cross-job state).
    Prepare,
    /// The attack.
    Hostile,
    /// The honest control.
    Honest,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Prepare => "prepare",
            Self::Hostile => "hostile",
            Self::Honest => "honest",
        }
    }
}

/// A response and the problem it answers.
#[derive(Debug, Clone)]
pub struct Submission {
    /// `case-id#role`, unique in a run.
    pub id: String,
    /// Index of the case in the catalogue.
    pub case: usize,
    pub role: Role,
    /// The whole response text (reasoning and a fenced program).
    pub response: String,
    /// The problem's statement (the prompt, for targets that take one).
    pub statement: String,
    /// The problem.
    pub problem: Problem,
}

impl Submission {
    pub fn new(case_index: usize, case: &Case, role: Role, problem: &Problem) -> Self {
        let code = match role {
            Role::Prepare => case.prepare.as_deref().unwrap_or_default(),
            Role::Hostile => &case.hostile,
            Role::Honest => &case.honest,
        };
        Self {
            id: format!("{}#{}", case.id, role.as_str()),
            case: case_index,
            role,
            response: response(code),
            statement: problem.statement.clone(),
            problem: problem.clone(),
        }
    }

    /// The release's label for the problem (what rlvr's routes take).
    pub fn ground_truth(&self) -> Value {
        self.problem.ground_truth()
    }
}
