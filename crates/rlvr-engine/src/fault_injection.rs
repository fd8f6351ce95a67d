//! Test-only fault injection, compiled into debug builds only: `RLVR_TEST_FAULT=SITE:MARKER`
//! (several separated by commas) makes the engine fail at `SITE` for every job whose program
//! text contains `MARKER`. The sites are `plan` (panic before planning), `execute` (panic in
//! the worker running the job's tests), `help` (panic in a worker helping another's stage),
//! `runner-load` and `runner-run` (kill the runner just before it loads or runs the program,
//! as a response that crashes the interpreter would).
//!
//! This is how the tests prove that no panic and no runner death can take a worker down or
//! void a job's result. Release builds compile every check to nothing, so no response can
//! reach it in production.

/// Where a fault can be injected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Site {
    Plan,
    Execute,
    Help,
    RunnerLoad,
    RunnerRun,
}

#[cfg(debug_assertions)]
impl Site {
    fn name(self) -> &'static str {
        match self {
            Self::Plan => "plan",
            Self::Execute => "execute",
            Self::Help => "help",
            Self::RunnerLoad => "runner-load",
            Self::RunnerRun => "runner-run",
        }
    }
}

/// Faults asked for: `(site name, marker)`, first from `RLVR_TEST_FAULT`, then from [`arm`].
#[cfg(debug_assertions)]
fn faults() -> std::sync::MutexGuard<'static, Vec<(String, String)>> {
    static FAULTS: std::sync::OnceLock<std::sync::Mutex<Vec<(String, String)>>> =
        std::sync::OnceLock::new();
    FAULTS
        .get_or_init(|| {
            let from_environment = std::env::var("RLVR_TEST_FAULT").unwrap_or_default();
            std::sync::Mutex::new(parse(&from_environment))
        })
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(debug_assertions)]
fn parse(specification: &str) -> Vec<(String, String)> {
    specification
        .split(',')
        .filter_map(|entry| entry.split_once(':'))
        .filter(|(_, marker)| !marker.is_empty())
        .map(|(site, marker)| (site.to_owned(), marker.to_owned()))
        .collect()
}

/// Adds faults (`SITE:MARKER,...`, as in `RLVR_TEST_FAULT`) for the rest of the process: how
/// in-process tests arm them without touching the environment. Debug builds only.
#[cfg(debug_assertions)]
pub fn arm(specification: &str) {
    faults().extend(parse(specification));
}

/// Whether a fault is asked for at `site` for a job whose text `contains` its marker.
#[cfg(debug_assertions)]
pub(crate) fn armed(site: Site, contains: impl Fn(&str) -> bool) -> bool {
    faults()
        .iter()
        .any(|(name, marker)| name == site.name() && contains(marker))
}

/// Release builds: never.
#[cfg(not(debug_assertions))]
pub(crate) fn armed(_site: Site, _contains: impl Fn(&str) -> bool) -> bool {
    false
}

/// Panics when a fault is asked for at `site` for a job whose text `contains` its marker.
pub(crate) fn panic_if_armed(site: Site, contains: impl Fn(&str) -> bool) {
    if armed(site, contains) {
        panic!("fault injected at {site:?} (RLVR_TEST_FAULT)");
    }
}
