//! Finding each language's toolchain at run time: the Debian packages `scripts/setup` installs,
//! at fixed paths under `/usr` (the sandbox's minimal root binds `/usr` read-only, so a
//! toolchain elsewhere, such as rustup's under a home directory, would not be there inside).
//! A toolchain that is missing or does not answer `--version` is *unavailable*, with the
//! reason: jobs in that language get `language_unavailable`, never a crash.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use rlvr_language::Language;

/// How long a toolchain may take to print its version.
const VERSION_DEADLINE: Duration = Duration::from_secs(20);

/// One language's toolchain as found on this machine.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Toolchain {
    /// The language.
    pub language: Language,
    /// The compiler or interpreter (the path the sandbox uses: under `/usr`).
    pub executable: PathBuf,
    /// The program that runs the result, when it is not the compiled binary itself (`java`).
    pub runtime: Option<PathBuf>,
    /// What the toolchain says its version is (first line), part of every compile-cache key.
    pub version: String,
    /// The Debian package that provides it (what `scripts/setup` installs).
    pub package: &'static str,
}

/// A toolchain that is not usable here, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ToolchainUnavailable {
    /// The language.
    pub language: Language,
    /// Why (the missing path, or what the version probe said).
    pub reason: String,
    /// The Debian package that would provide it.
    pub package: &'static str,
}

/// Every compiled or interpreted language's toolchain, each probed on its first use (a run
/// that only judges Python never starts a compiler to ask its version) and then remembered.
#[derive(Debug, Clone, Default)]
pub struct Toolchains {
    found: Arc<BTreeMap<Language, OnceLock<Result<Toolchain, ToolchainUnavailable>>>>,
    disabled: Arc<[Language]>,
}

/// Where each toolchain is expected, what it is called, and how to ask its version.
struct Expected {
    language: Language,
    executable: &'static str,
    runtime: Option<&'static str>,
    version_arguments: &'static [&'static str],
    package: &'static str,
}

const EXPECTED: [Expected; 6] = [
    Expected {
        language: Language::Cpp,
        executable: "/usr/bin/g++",
        runtime: None,
        version_arguments: &["--version"],
        package: "g++",
    },
    Expected {
        language: Language::C,
        executable: "/usr/bin/gcc",
        runtime: None,
        version_arguments: &["--version"],
        package: "gcc",
    },
    Expected {
        language: Language::Java,
        executable: "/usr/bin/javac",
        runtime: Some("/usr/bin/java"),
        version_arguments: &["-version"],
        package: "openjdk-17-jdk-headless",
    },
    Expected {
        language: Language::JavaScript,
        executable: "/usr/bin/node",
        runtime: None,
        version_arguments: &["--version"],
        package: "nodejs",
    },
    Expected {
        language: Language::Go,
        executable: "/usr/bin/go",
        runtime: None,
        version_arguments: &["version"],
        package: "golang-go",
    },
    Expected {
        language: Language::Rust,
        executable: "/usr/bin/rustc",
        runtime: None,
        version_arguments: &["--version"],
        package: "rustc-web",
    },
];

/// Runs `executable arguments...` with an empty environment and returns the first non-empty
/// line of its output (stdout, else stderr), within [`VERSION_DEADLINE`].
fn first_version_line(executable: &Path, arguments: &[&str]) -> Result<String, String> {
    let mut child = Command::new(executable)
        .args(arguments)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", "/nonexistent")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| format!("{} does not start: {error}", executable.display()))?;
    let deadline = Instant::now() + VERSION_DEADLINE;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{} did not print its version within {} s",
                    executable.display(),
                    VERSION_DEADLINE.as_secs()
                ));
            }
            Err(error) => return Err(format!("{}: {error}", executable.display())),
        }
    }
    let output = child
        .wait_with_output()
        .map_err(|error| format!("{}: {error}", executable.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} {} exited with {}",
            executable.display(),
            arguments.join(" "),
            output.status
        ));
    }
    [&output.stdout, &output.stderr]
        .into_iter()
        .flat_map(|bytes| {
            String::from_utf8_lossy(bytes)
                .lines()
                .map(str::trim)
                .filter(|line| !line.is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .next()
        .ok_or_else(|| format!("{} printed no version", executable.display()))
}

fn probe(expected: &Expected) -> Result<Toolchain, ToolchainUnavailable> {
    let unavailable = |reason: String| ToolchainUnavailable {
        language: expected.language,
        reason,
        package: expected.package,
    };
    let executable = PathBuf::from(expected.executable);
    for path in std::iter::once(expected.executable).chain(expected.runtime) {
        if !Path::new(path).exists() {
            return Err(unavailable(format!(
                "{path} not found (Debian package {}; scripts/setup installs it)",
                expected.package
            )));
        }
    }
    let version =
        first_version_line(&executable, expected.version_arguments).map_err(unavailable)?;
    Ok(Toolchain {
        language: expected.language,
        executable,
        runtime: expected.runtime.map(PathBuf::from),
        version,
        package: expected.package,
    })
}

impl Toolchains {
    /// This machine's toolchains, none probed yet. Languages named in
    /// `$RLVR_DISABLE_LANGUAGES` (comma-separated) are unavailable without a probe: an
    /// operator's switch, and how tests see a machine without a toolchain.
    pub fn discover() -> Self {
        let disabled: Vec<Language> = std::env::var("RLVR_DISABLE_LANGUAGES")
            .unwrap_or_default()
            .split(',')
            .filter_map(|name| Language::from_name(name).map(|choice| choice.language))
            .collect();
        Self {
            found: Arc::new(
                EXPECTED
                    .iter()
                    .map(|expected| (expected.language, OnceLock::new()))
                    .collect(),
            ),
            disabled: disabled.into(),
        }
    }

    /// The process's toolchains.
    pub fn shared() -> &'static Toolchains {
        static SHARED: OnceLock<Toolchains> = OnceLock::new();
        SHARED.get_or_init(Self::discover)
    }

    /// The toolchain of `language` (probed now if this is its first use), or why it is
    /// unavailable (Python is the sandbox's own interpreter and is never listed here).
    pub fn get(&self, language: Language) -> Result<&Toolchain, &ToolchainUnavailable> {
        match self.found.get(&language) {
            Some(found) => found.get_or_init(|| self.probe_language(language)).as_ref(),
            None => Err(&NOT_PROBED),
        }
    }

    fn probe_language(&self, language: Language) -> Result<Toolchain, ToolchainUnavailable> {
        let Some(expected) = EXPECTED
            .iter()
            .find(|expected| expected.language == language)
        else {
            return Err(NOT_PROBED.clone());
        };
        if self.disabled.contains(&language) {
            return Err(ToolchainUnavailable {
                language,
                reason: "disabled by RLVR_DISABLE_LANGUAGES".to_owned(),
                package: expected.package,
            });
        }
        probe(expected)
    }

    /// Every language with its toolchain or the reason it is missing; the ones not used yet
    /// are probed now, in parallel.
    pub fn all(
        &self,
    ) -> impl Iterator<Item = (Language, Result<&Toolchain, &ToolchainUnavailable>)> {
        std::thread::scope(|scope| {
            for language in self.found.keys() {
                scope.spawn(move || {
                    let _ = self.get(*language);
                });
            }
        });
        self.found
            .keys()
            .map(|language| (*language, self.get(*language)))
    }

    /// Toolchains as given (tests: a machine without one, a fake version).
    pub fn from_results(results: Vec<Result<Toolchain, ToolchainUnavailable>>) -> Self {
        Self {
            found: Arc::new(
                results
                    .into_iter()
                    .map(|result| {
                        let language = match &result {
                            Ok(toolchain) => toolchain.language,
                            Err(unavailable) => unavailable.language,
                        };
                        (language, OnceLock::from(result))
                    })
                    .collect(),
            ),
            disabled: Arc::from([]),
        }
    }
}

static NOT_PROBED: ToolchainUnavailable = ToolchainUnavailable {
    language: Language::Python,
    reason: String::new(),
    package: "",
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_probed_before_a_language_is_used() {
        let toolchains = Toolchains::discover();
        assert_eq!(toolchains.found.len(), EXPECTED.len());
        assert!(toolchains.found.values().all(|found| found.get().is_none()));
        let _ = toolchains.get(Language::C);
        let probed: Vec<Language> = toolchains
            .found
            .iter()
            .filter(|(_, found)| found.get().is_some())
            .map(|(language, _)| *language)
            .collect();
        assert_eq!(probed, [Language::C]);
    }

    #[test]
    fn a_missing_executable_is_unavailable_with_its_package() {
        let expected = Expected {
            language: Language::Go,
            executable: "/usr/bin/rlvr-no-such-compiler",
            runtime: None,
            version_arguments: &["version"],
            package: "golang-go",
        };
        let unavailable = probe(&expected).expect_err("missing");
        assert!(
            unavailable
                .reason
                .contains("/usr/bin/rlvr-no-such-compiler not found"),
            "{}",
            unavailable.reason
        );
        assert_eq!(unavailable.package, "golang-go");
    }

    #[test]
    fn a_version_probe_that_fails_is_unavailable() {
        let expected = Expected {
            language: Language::C,
            executable: "/usr/bin/false",
            runtime: None,
            version_arguments: &[],
            package: "coreutils",
        };
        let unavailable = probe(&expected).expect_err("fails");
        assert!(
            unavailable.reason.contains("exited with"),
            "{}",
            unavailable.reason
        );
    }
}
