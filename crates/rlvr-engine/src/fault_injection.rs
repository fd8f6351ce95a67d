//! Test-only fault injection, on the `fail` crate's fail points and compiled into debug builds
//! only: `RLVR_TEST_FAULT=SITE:MARKER` (several separated by commas) makes the engine fail at
//! `SITE` for every job whose program text contains `MARKER`. The sites are `plan` (panic before
//! planning), `execute` (panic in the worker running the job's tests), `help` (panic in a worker
//! helping another's stage), `runner-load` and `runner-run` (kill the runner just before it
//! loads or runs the program, as a response that crashes the interpreter would).
//!
//! Each site is a fail point of its name. `RLVR_TEST_FAULT` (read on first use) and [`arm`]
//! configure it as `return(MARKERS)`, the site's markers one a line, and the point answers
//! whether the job's text contains one of them.
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

/// The markers armed at each site (by site name), first from `RLVR_TEST_FAULT`, then from
/// [`arm`]: the fail points' configuration is rewritten from this whenever it grows.
#[cfg(debug_assertions)]
fn markers() -> std::sync::MutexGuard<'static, std::collections::BTreeMap<String, Vec<String>>> {
    type Markers = std::sync::Mutex<std::collections::BTreeMap<String, Vec<String>>>;
    static MARKERS: std::sync::OnceLock<Markers> = std::sync::OnceLock::new();
    MARKERS
        .get_or_init(|| {
            let mut markers = std::collections::BTreeMap::new();
            add(
                &mut markers,
                &std::env::var("RLVR_TEST_FAULT").unwrap_or_default(),
            );
            std::sync::Mutex::new(markers)
        })
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Adds the faults of `specification` (`SITE:MARKER,...`) to `markers`, and configures each
/// site's fail point to return its markers.
#[cfg(debug_assertions)]
fn add(markers: &mut std::collections::BTreeMap<String, Vec<String>>, specification: &str) {
    let faults = specification
        .split(',')
        .filter_map(|entry| entry.split_once(':'))
        .filter(|(_, marker)| !marker.is_empty() && !marker.contains('\n'));
    for (site, marker) in faults {
        markers
            .entry(site.to_owned())
            .or_default()
            .push(marker.to_owned());
    }
    for (site, site_markers) in markers.iter() {
        // A `return(...)` action always parses: its argument runs to the last parenthesis.
        fail::cfg(
            site.as_str(),
            &format!("return({})", site_markers.join("\n")),
        )
        .expect("a return action parses");
    }
}

/// Adds faults (`SITE:MARKER,...`, as in `RLVR_TEST_FAULT`) for the rest of the process: how
/// in-process tests arm them without touching the environment. Debug builds only.
#[cfg(debug_assertions)]
pub fn arm(specification: &str) {
    add(&mut markers(), specification);
}

/// Whether a fault is asked for at `site` for a job whose text `contains` its marker.
#[cfg(debug_assertions)]
pub(crate) fn armed(site: Site, contains: impl Fn(&str) -> bool) -> bool {
    // `RLVR_TEST_FAULT` configures the fail points on first use.
    drop(markers());
    fail::fail_point!(site.name(), |site_markers: Option<String>| {
        site_markers.is_some_and(|site_markers| site_markers.lines().any(&contains))
    });
    false
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

#[cfg(all(test, debug_assertions))]
mod tests {
    use super::*;

    #[test]
    fn an_armed_site_fails_only_jobs_holding_one_of_its_markers() {
        // Markers no other test of this process uses: the fail points are process-wide.
        arm("help:marker-help-one,help:marker-help-two,plan:,nonsense");
        assert!(armed(Site::Help, |marker| "x marker-help-one y".contains(marker)));
        assert!(armed(Site::Help, |marker| "marker-help-two".contains(marker)));
        assert!(!armed(Site::Help, |marker| "an honest job".contains(marker)));
        assert!(!armed(Site::RunnerRun, |marker| "marker-help-one".contains(marker)));
        // `plan:` has no marker, and `nonsense` no site: neither arms anything.
        assert!(!armed(Site::Plan, |_| true));
    }

    #[test]
    #[should_panic(expected = "fault injected at Execute")]
    fn an_armed_panic_site_panics() {
        arm("execute:marker-execute-panics");
        panic_if_armed(Site::Execute, |marker| {
            "print('marker-execute-panics')".contains(marker)
        });
    }
}
