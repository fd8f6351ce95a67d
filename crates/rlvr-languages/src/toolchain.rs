//! Finding each language's toolchain at run time: the Debian packages `scripts/setup` installs,
//! at fixed paths under `/usr` (the sandbox's minimal root binds `/usr` read-only, so a
//! toolchain elsewhere, such as rustup's under a home directory, would not be there inside).
//! A toolchain that is missing or does not answer `--version` is *unavailable*, with the
//! reason: jobs in that language get `language_unavailable`, never a crash.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::language::Language;

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
pub struct Unavailable {
    /// The language.
    pub language: Language,
    /// Why (the missing path, or what the version probe said).
    pub reason: String,
    /// The Debian package that would provide it.
    pub package: &'static str,
}

/// Every compiled or interpreted language's toolchain, probed once per process.
#[derive(Debug, Clone, Default)]
pub struct Toolchains {
    found: BTreeMap<Language, Result<Toolchain, Unavailable>>,
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

fn probe(expected: &Expected) -> Result<Toolchain, Unavailable> {
    let unavailable = |reason: String| Unavailable {
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
    /// Probes every toolchain (each `--version` once, in parallel). Languages named in
    /// `$RLVR_DISABLE_LANGUAGES` (comma-separated) are unavailable without a probe: an
    /// operator's switch, and how tests see a machine without a toolchain.
    pub fn discover() -> Self {
        let disabled: Vec<Language> = std::env::var("RLVR_DISABLE_LANGUAGES")
            .unwrap_or_default()
            .split(',')
            .filter_map(|name| Language::from_name(name).map(|choice| choice.language))
            .collect();
        let found = std::thread::scope(|scope| {
            let probes: Vec<_> = EXPECTED
                .iter()
                .map(|expected| {
                    let disabled = disabled.contains(&expected.language);
                    let handle = scope.spawn(move || {
                        if disabled {
                            return Err(Unavailable {
                                language: expected.language,
                                reason: "disabled by RLVR_DISABLE_LANGUAGES".to_owned(),
                                package: expected.package,
                            });
                        }
                        probe(expected)
                    });
                    (expected.language, handle)
                })
                .collect();
            probes
                .into_iter()
                .map(|(language, handle)| {
                    let result = handle.join().unwrap_or_else(|_| {
                        Err(Unavailable {
                            language,
                            reason: "the version probe panicked".to_owned(),
                            package: "",
                        })
                    });
                    (language, result)
                })
                .collect()
        });
        Self { found }
    }

    /// The process's toolchains, probed on first use.
    pub fn shared() -> &'static Toolchains {
        static SHARED: OnceLock<Toolchains> = OnceLock::new();
        SHARED.get_or_init(Self::discover)
    }

    /// The toolchain of `language`, or why it is unavailable (Python is the sandbox's own
    /// interpreter and is never listed here).
    pub fn get(&self, language: Language) -> Result<&Toolchain, &Unavailable> {
        match self.found.get(&language) {
            Some(Ok(toolchain)) => Ok(toolchain),
            Some(Err(unavailable)) => Err(unavailable),
            None => Err(&NOT_PROBED),
        }
    }

    /// Every probed language with its toolchain or the reason it is missing.
    pub fn all(&self) -> impl Iterator<Item = (Language, Result<&Toolchain, &Unavailable>)> {
        self.found
            .iter()
            .map(|(language, found)| (*language, found.as_ref()))
    }

    /// Toolchains as given (tests: a machine without one, a fake version).
    pub fn from_results(results: Vec<Result<Toolchain, Unavailable>>) -> Self {
        Self {
            found: results
                .into_iter()
                .map(|result| {
                    let language = match &result {
                        Ok(toolchain) => toolchain.language,
                        Err(unavailable) => unavailable.language,
                    };
                    (language, result)
                })
                .collect(),
        }
    }
}

static NOT_PROBED: Unavailable = Unavailable {
    language: Language::Python,
    reason: String::new(),
    package: "",
};

#[cfg(test)]
mod tests {
    use super::*;

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
