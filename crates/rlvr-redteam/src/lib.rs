//! `rlvr redteam`: a versioned catalogue of hostile responses, each with an honest control,
//! against problems whose right answers are known, run against a code reward (an rlvr profile
//! in process, a running `rlvr serve`, a SandboxFusion `/run_code` endpoint scored the way
//! verl scores it, an OpenRLHF `/get_reward` endpoint, or a Python `compute_score` run in the
//! sandbox) to count, per class of attack, the attacks that earned reward and the honest
//! controls that lost it.

#![forbid(unsafe_code)]

mod catalogue;
mod http;
mod report;
mod run;
mod submission;
mod target;
mod targets;

pub use catalogue::{
    AttackClass, Case, Catalogue, CatalogueError, Problem, ProblemTests, response,
};
pub use report::{CaseReport, ClassRow, Report, RoleOutcome, Totals};
pub use run::{phases, run};
pub use submission::{Role, Submission};
pub use target::{Outcome, ScoreRange, Target};
pub use targets::native::NativeTarget;
pub use targets::openrlhf::OpenRlhfTarget;
pub use targets::profile::ProfileTarget;
pub use targets::python_function::{PYTHON_PATH_IN_SANDBOX, PythonFunctionTarget};
pub use targets::sandbox_fusion::SandboxFusionTarget;
