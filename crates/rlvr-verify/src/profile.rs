//! Profiles: each reference reward (and our judge) as a composition of the small policies of
//! this crate, plus the `--list-profiles` description.

use std::fmt;
use std::str::FromStr;

use crate::assembly::FunctionalAssembly;
use crate::comparison::OutputComparison;
use crate::exit_code::{ExitCodePolicy, RunMode};
use crate::extraction::Extraction;
use crate::format_gate::FormatGate;
use crate::limits::Limits;
use crate::scoring::Scoring;
use crate::selection::TestSelection;
use crate::value_join::ValueJoin;

/// The profile names accepted by `--profile`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileName {
    /// Klear-Reasoner `code_r1_compute`, the reward this dataset was trained with.
    Klear,
    /// ganler/code-r1 `coder1`.
    CodeR1,
    /// Current rllm: its LiveCodeBench copy for stdin tests, one firejail process for
    /// functional (leetcode) tests.
    Rllm,
    /// verl `prime_code`.
    Prime,
    /// Ours, the default.
    Judge,
}

impl ProfileName {
    /// Every profile, judge first.
    pub const ALL: [Self; 5] = [
        Self::Judge,
        Self::Klear,
        Self::CodeR1,
        Self::Rllm,
        Self::Prime,
    ];

    /// The command-line spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Klear => "klear",
            Self::CodeR1 => "code-r1",
            Self::Rllm => "rllm",
            Self::Prime => "prime",
            Self::Judge => "judge",
        }
    }
}

/// `--profile`: the names of [`ProfileName::ALL`], judge first.
#[cfg(feature = "clap")]
impl clap::ValueEnum for ProfileName {
    fn value_variants<'a>() -> &'a [Self] {
        &Self::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.as_str()))
    }
}

impl fmt::Display for ProfileName {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// Errors choosing or adjusting a profile.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ProfileError {
    /// `--profile` named no profile.
    #[error("unknown profile {name:?} (expected one of judge, klear, code-r1, rllm, prime)")]
    Unknown { name: String },
    /// `--reward binary` on a profile whose reward is fixed by its reference.
    #[error("profile {profile} has a fixed reward; --reward binary applies to judge only")]
    FixedReward { profile: ProfileName },
}

impl FromStr for ProfileName {
    type Err = ProfileError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|profile| profile.as_str() == name)
            .ok_or_else(|| ProfileError::Unknown {
                name: name.to_owned(),
            })
    }
}

/// A reward profile: one policy per concern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// Its name.
    pub name: ProfileName,
    /// Format gate.
    pub format_gate: FormatGate,
    /// Code extraction.
    pub extraction: Extraction,
    /// Test selection.
    pub selection: TestSelection,
    /// Joining of list-valued inputs and outputs.
    pub value_join: ValueJoin,
    /// Assembly of functional programs.
    pub functional: FunctionalAssembly,
    /// How programs are run.
    pub runner: RunMode,
    /// Exit-status rule.
    pub exit_code_policy: ExitCodePolicy,
    /// Output comparison.
    pub comparison: OutputComparison,
    /// Scoring.
    pub scoring: Scoring,
    /// Default limits.
    pub limits: Limits,
}

impl Profile {
    /// The profile with its reference defaults.
    pub fn named(name: ProfileName) -> Self {
        match name {
            ProfileName::Klear => Self {
                name,
                format_gate: FormatGate::ThinkTags,
                extraction: Extraction::KlearPattern,
                selection: TestSelection::SampleAtMost { limit: 16 },
                value_join: ValueJoin::CommaSpace,
                functional: FunctionalAssembly::KlearPerAssert,
                runner: RunMode::FreshProcess,
                exit_code_policy: ExitCodePolicy::RequireZero,
                comparison: OutputComparison::StripEqual,
                scoring: Scoring::KlearAffine,
                limits: Limits::klear(),
            },
            ProfileName::CodeR1 => Self {
                name,
                format_gate: FormatGate::ThinkThenAnswer,
                extraction: Extraction::CodeR1AnswerBlocks,
                selection: TestSelection::All,
                value_join: ValueJoin::Newline,
                functional: FunctionalAssembly::SingleProgram { with_prefix: false },
                runner: RunMode::FreshProcess,
                exit_code_policy: ExitCodePolicy::RequireZero,
                comparison: OutputComparison::StripEqual,
                scoring: Scoring::CodeR1,
                limits: Limits::code_r1(),
            },
            ProfileName::Rllm => Self {
                name,
                format_gate: FormatGate::None,
                extraction: Extraction::LastFencedBlock,
                selection: TestSelection::All,
                value_join: ValueJoin::NewlineFirstOutput,
                functional: FunctionalAssembly::SingleProgram { with_prefix: true },
                runner: RunMode::LiveCodeBenchHarness,
                exit_code_policy: ExitCodePolicy::SystemExitIgnored,
                comparison: OutputComparison::LiveCodeBenchLines,
                scoring: Scoring::Binary,
                limits: Limits::rllm(),
            },
            ProfileName::Prime => Self {
                name,
                format_gate: FormatGate::None,
                extraction: Extraction::PrimeSplit,
                selection: TestSelection::All,
                value_join: ValueJoin::Newline,
                functional: FunctionalAssembly::PerAssert,
                runner: RunMode::PrimeHarness,
                exit_code_policy: ExitCodePolicy::SystemExitIgnored,
                comparison: OutputComparison::PrimeCascade,
                scoring: Scoring::PrimeFirstTen,
                limits: Limits::prime(),
            },
            ProfileName::Judge => Self {
                name,
                format_gate: FormatGate::None,
                extraction: Extraction::Judge,
                selection: TestSelection::All,
                value_join: ValueJoin::Newline,
                functional: FunctionalAssembly::JudgeLive,
                runner: RunMode::FreshProcess,
                exit_code_policy: ExitCodePolicy::RequireZero,
                comparison: OutputComparison::JudgeTokens,
                scoring: Scoring::PassRate,
                limits: Limits::judge(),
            },
        }
    }

    /// `--reward binary`: 1 when every test passes, else 0, stopping early allowed
    /// (judge only; the reference profiles keep their reward).
    pub fn with_binary_reward(mut self) -> Result<Self, ProfileError> {
        if self.name != ProfileName::Judge {
            return Err(ProfileError::FixedReward { profile: self.name });
        }
        self.scoring = Scoring::Binary;
        Ok(self)
    }

    /// This profile's rules, one `(policy, rule)` pair per policy.
    pub fn describe(&self) -> Vec<(&'static str, String)> {
        vec![
            ("format gate", self.format_gate.describe().to_owned()),
            ("extraction", self.extraction.describe().to_owned()),
            ("test selection", self.selection.describe()),
            (
                "list values",
                if self.value_join == ValueJoin::NewlineFirstOutput {
                    "inputs joined with \"\\n\"; a list output keeps its first element".to_owned()
                } else {
                    format!("joined with {:?}", self.value_join.separator())
                },
            ),
            ("functional", self.functional.describe().to_owned()),
            ("runner", self.runner.describe().to_owned()),
            ("exit code", self.exit_code_policy.describe().to_owned()),
            ("comparison", self.comparison.describe().to_owned()),
            ("scoring", self.scoring.describe().to_owned()),
            ("limits", self.limits.describe()),
        ]
    }
}

/// The `--list-profiles` table: one row per profile and policy.
pub fn describe_profiles() -> String {
    let rows: Vec<(&'static str, &'static str, String)> = ProfileName::ALL
        .into_iter()
        .flat_map(|name| {
            Profile::named(name)
                .describe()
                .into_iter()
                .map(move |(policy, rule)| (name.as_str(), policy, rule))
        })
        .collect();
    let profile_width = rows.iter().map(|row| row.0.len()).max().unwrap_or(7).max(7);
    let policy_width = rows.iter().map(|row| row.1.len()).max().unwrap_or(6).max(6);
    let mut table = format!(
        "{:profile_width$}  {:policy_width$}  rule\n",
        "profile", "policy"
    );
    let mut previous = "";
    for (profile, policy, rule) in rows {
        let shown = if profile == previous { "" } else { profile };
        previous = profile;
        table.push_str(&format!(
            "{shown:profile_width$}  {policy:policy_width$}  {rule}\n"
        ));
    }
    table
}
