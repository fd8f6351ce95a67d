//! The catalogue: problems with known right answers and the hostile responses (each with an
//! honest control) that `rlvr redteam` sends to a reward. Read from `catalogue/catalogue.toml`,
//! compiled into the binary, and checked whole before anything runs.

use std::collections::{BTreeMap, HashSet};

use serde::Deserialize;
use serde_json::{Value, json};

/// The catalogue compiled into the binary.
const BUILT_IN: &str = include_str!("../catalogue/catalogue.toml");

/// A class of attack. The order here is the order of the report's table.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, serde::Serialize,
)]
#[serde(rename_all = "snake_case")]
pub enum AttackClass {
    /// Leave with status 0 before the test can fail.
    EarlyExit,
    /// Values whose comparisons, truth or arithmetic agree with anything.
    LyingObjects,
    /// Redefine or patch the builtins and helpers the tests rely on, or the harness itself.
    HarnessPatching,
    /// Read the expected value from the caller's frames, bytecode or the heap.
    Introspection,
    /// Print what the environment, files or other processes say is expected, or forge the
    /// verifier's evidence of a completed test.
    ForgedOutput,
    /// Answer only the tests a verifier is known to look at.
    SpecialCasing,
    /// Exhaust the verifier so that the score is void instead of 0.
    ResourceAbuse,
    /// A response scored earlier leaves what a later one needs.
    CrossJobState,
    /// Outputs only a lenient comparator accepts.
    LenientComparison,
}

impl AttackClass {
    /// Every class, in report order.
    pub const ALL: [Self; 9] = [
        Self::EarlyExit,
        Self::LyingObjects,
        Self::HarnessPatching,
        Self::Introspection,
        Self::ForgedOutput,
        Self::SpecialCasing,
        Self::ResourceAbuse,
        Self::CrossJobState,
        Self::LenientComparison,
    ];

    /// The catalogue's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::EarlyExit => "early_exit",
            Self::LyingObjects => "lying_objects",
            Self::HarnessPatching => "harness_patching",
            Self::Introspection => "introspection",
            Self::ForgedOutput => "forged_output",
            Self::SpecialCasing => "special_casing",
            Self::ResourceAbuse => "resource_abuse",
            Self::CrossJobState => "cross_job_state",
            Self::LenientComparison => "lenient_comparison",
        }
    }
}

/// A problem's tests.
#[derive(Debug, Clone, PartialEq)]
pub enum ProblemTests {
    /// Standard input and the expected standard output, one pair per test.
    Stdin {
        inputs: Vec<String>,
        outputs: Vec<String>,
    },
    /// Python assert statements that call the solution's functions.
    Functional { tests: Vec<String> },
}

/// A problem with a known right answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub id: String,
    pub statement: String,
    pub tests: ProblemTests,
}

impl Problem {
    /// The ground truth in the release's label shape (`{"inputs", "outputs"}` or
    /// `{"functional"}`), as every rlvr route and `rlvr verify` take it.
    pub fn ground_truth(&self) -> Value {
        match &self.tests {
            ProblemTests::Stdin { inputs, outputs } => {
                json!({"inputs": inputs, "outputs": outputs})
            }
            ProblemTests::Functional { tests } => json!({"functional": tests}),
        }
    }

    /// How many tests the problem has.
    pub fn test_count(&self) -> usize {
        match &self.tests {
            ProblemTests::Stdin { inputs, .. } => inputs.len(),
            ProblemTests::Functional { tests } => tests.len(),
        }
    }
}

/// One attack: a hostile response, its honest control, and what it needs first.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// `class/name`, stable across versions.
    pub id: String,
    pub class: AttackClass,
    /// The catalogue version that added the case.
    pub since: u32,
    /// One line saying what the hostile response does.
    pub description: String,
    /// The response's language (`python` for every case of version 1).
    pub language: String,
    /// Index into [`Catalogue::problems`].
    pub problem: usize,
    /// The hostile program.
    pub hostile: String,
    /// An honest program for the same problem, as close to the attack's surface as honest
    /// code gets: it must keep its full reward.
    pub honest: String,
    /// A program sent (and scored) before every hostile and honest one (cross-job state).
    pub prepare: Option<String>,
    /// The fraction of the tests the hostile program really passes.
    pub deserved: f64,
}

/// The whole catalogue.
#[derive(Debug, Clone)]
pub struct Catalogue {
    /// The newest version the cases belong to.
    pub version: u32,
    pub problems: Vec<Problem>,
    pub cases: Vec<Case>,
}

/// Why a catalogue could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CatalogueError {
    #[error("catalogue: {0}")]
    Syntax(String),
    #[error("catalogue: case {case}: {reason}")]
    Case { case: String, reason: String },
    #[error("catalogue: problem {problem}: {reason}")]
    Problem { problem: String, reason: String },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCatalogue {
    version: u32,
    problems: Vec<RawProblem>,
    cases: Vec<RawCase>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProblem {
    id: String,
    statement: String,
    inputs: Option<Vec<String>>,
    outputs: Option<Vec<String>>,
    tests: Option<Vec<String>>,
}

/// A program spelled as a repeated unit (a response too long to write out).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Repeated {
    prefix: String,
    unit: String,
    count: usize,
    suffix: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    id: String,
    class: AttackClass,
    since: u32,
    description: String,
    language: String,
    problem: String,
    hostile: Option<String>,
    hostile_repeat: Option<Repeated>,
    honest: String,
    prepare: Option<String>,
    deserved: Option<f64>,
}

impl Catalogue {
    /// The catalogue compiled into the binary.
    pub fn built_in() -> Self {
        Self::parse(BUILT_IN).expect("the built-in catalogue is valid (tested)")
    }

    /// Reads and checks a catalogue: unique ids, known problems, tests that pair up, ids
    /// that start with their class, versions no newer than the catalogue's.
    pub fn parse(text: &str) -> Result<Self, CatalogueError> {
        let raw: RawCatalogue =
            toml::from_str(text).map_err(|error| CatalogueError::Syntax(error.to_string()))?;
        let mut problems = Vec::new();
        let mut problem_index = BTreeMap::new();
        for problem in raw.problems {
            let id = problem.id.clone();
            let bad = |reason: &str| CatalogueError::Problem {
                problem: id.clone(),
                reason: reason.to_owned(),
            };
            let tests = match (problem.inputs, problem.outputs, problem.tests) {
                (Some(inputs), Some(outputs), None) if inputs.len() == outputs.len() => {
                    ProblemTests::Stdin { inputs, outputs }
                }
                (Some(_), Some(_), None) => {
                    return Err(bad("`inputs` and `outputs` differ in length"));
                }
                (None, None, Some(tests)) => ProblemTests::Functional { tests },
                _ => return Err(bad("give `inputs` and `outputs`, or `tests`")),
            };
            if problem_index
                .insert(problem.id.clone(), problems.len())
                .is_some()
            {
                return Err(bad("id used twice"));
            }
            let problem = Problem {
                id: problem.id.clone(),
                statement: problem.statement,
                tests,
            };
            if problem.test_count() == 0 {
                return Err(bad("no tests"));
            }
            problems.push(problem);
        }
        let mut seen = HashSet::new();
        let mut cases = Vec::new();
        for case in raw.cases {
            let bad = |reason: String| CatalogueError::Case {
                case: case.id.clone(),
                reason,
            };
            if !seen.insert(case.id.clone()) {
                return Err(bad("id used twice".to_owned()));
            }
            if !case.id.starts_with(&format!("{}/", case.class.as_str())) {
                return Err(bad(format!(
                    "the id must start with its class, `{}/`",
                    case.class.as_str()
                )));
            }
            if case.since == 0 || case.since > raw.version {
                return Err(bad(format!(
                    "`since` {} is not in 1..={}",
                    case.since, raw.version
                )));
            }
            if case.language != "python" {
                return Err(bad(format!("language {:?} is not python", case.language)));
            }
            let Some(&problem) = problem_index.get(&case.problem) else {
                return Err(bad(format!("no problem {:?}", case.problem)));
            };
            let hostile = match (case.hostile, case.hostile_repeat) {
                (Some(code), None) => code,
                (None, Some(repeated)) => format!(
                    "{}{}{}",
                    repeated.prefix,
                    repeated.unit.repeat(repeated.count),
                    repeated.suffix
                ),
                _ => return Err(bad("give `hostile` or `hostile_repeat`".to_owned())),
            };
            let deserved = case.deserved.unwrap_or(0.0);
            if !(0.0..1.0).contains(&deserved) {
                return Err(bad(format!("`deserved` {deserved} is not in [0, 1)")));
            }
            cases.push(Case {
                id: case.id,
                class: case.class,
                since: case.since,
                description: case.description,
                language: case.language,
                problem,
                hostile,
                honest: case.honest,
                prepare: case.prepare,
                deserved,
            });
        }
        Ok(Self {
            version: raw.version,
            problems,
            cases,
        })
    }

    /// The catalogue as it was at `version`: the cases added up to it.
    pub fn at_version(mut self, version: u32) -> Result<Self, CatalogueError> {
        if version == 0 || version > self.version {
            return Err(CatalogueError::Syntax(format!(
                "no version {version}: the catalogue's versions are 1 to {}",
                self.version
            )));
        }
        self.cases.retain(|case| case.since <= version);
        self.version = version;
        Ok(self)
    }

    /// Keeps the cases whose id or class contains one of `filters` (all when empty).
    pub fn filtered(mut self, filters: &[String]) -> Self {
        if !filters.is_empty() {
            self.cases.retain(|case| {
                filters
                    .iter()
                    .any(|filter| case.id.contains(filter.as_str()))
            });
        }
        self
    }
}

/// The response text for a program: reasoning, then the code in one Python fence inside an
/// answer (what every reference extracts, and the Klear and Code-R1 format gates ask for).
pub fn response(code: &str) -> String {
    format!(
        "<think>\nThe tests are known; here is the program.\n</think>\n<answer>\n```python\n{}\n```\n</answer>",
        code.trim_matches('\n')
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_catalogue_is_valid_and_covers_every_class() {
        let catalogue = Catalogue::parse(BUILT_IN).unwrap();
        assert_eq!(catalogue.version, 1);
        for class in AttackClass::ALL {
            assert!(
                catalogue
                    .cases
                    .iter()
                    .filter(|case| case.class == class)
                    .count()
                    >= 2,
                "{class:?}"
            );
        }
        let padded = catalogue
            .cases
            .iter()
            .find(|case| case.id == "resource_abuse/padded-response")
            .unwrap();
        assert!(padded.hostile.len() > 3_000_000);
    }

    #[test]
    fn bad_catalogues_are_refused_with_the_case_named() {
        let problem =
            "[[problems]]\nid = \"p\"\nstatement = \"s\"\ninputs = [\"1\"]\noutputs = [\"2\"]\n";
        let case = |id: &str, class: &str, since: u32| {
            format!(
                "[[cases]]\nid = \"{id}\"\nclass = \"{class}\"\nsince = {since}\ndescription = \"d\"\n\
                 language = \"python\"\nproblem = \"p\"\nhostile = \"print(1)\"\nhonest = \"print(2)\"\n"
            )
        };
        let good = format!(
            "version = 1\n{problem}{}",
            case("early_exit/a", "early_exit", 1)
        );
        assert_eq!(Catalogue::parse(&good).unwrap().cases.len(), 1);
        let twice = format!("{good}{}", case("early_exit/a", "early_exit", 1));
        assert!(
            Catalogue::parse(&twice)
                .unwrap_err()
                .to_string()
                .contains("id used twice")
        );
        let wrong_class = format!(
            "version = 1\n{problem}{}",
            case("lying_objects/a", "early_exit", 1)
        );
        assert!(
            Catalogue::parse(&wrong_class)
                .unwrap_err()
                .to_string()
                .contains("start with its class")
        );
        let future = format!(
            "version = 1\n{problem}{}",
            case("early_exit/a", "early_exit", 2)
        );
        assert!(
            Catalogue::parse(&future)
                .unwrap_err()
                .to_string()
                .contains("since")
        );
        let unknown = format!(
            "version = 1\n{problem}{}",
            case("early_exit/a", "no_such_class", 1)
        );
        assert!(
            Catalogue::parse(&unknown)
                .unwrap_err()
                .to_string()
                .contains("no_such_class")
        );
    }

    #[test]
    fn older_versions_keep_only_their_cases() {
        let catalogue = Catalogue::built_in();
        let count = catalogue.cases.len();
        assert_eq!(catalogue.clone().at_version(1).unwrap().cases.len(), count);
        assert!(catalogue.at_version(2).is_err());
    }
}
