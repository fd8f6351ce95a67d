//! Compiling a source inside the sandbox, once per job: the toolchain runs as a sandboxed
//! program (its own time, CPU, memory, process and output limits; no network; a read-only root
//! with nothing of the host but `/usr`), writes its diagnostics to stderr and the compiled
//! artifact to stdout, which is how the artifact leaves the sandbox. A compile that fails, runs
//! out of time or memory, or produces an artifact over the cap is a [`CompileReport`] with
//! `artifact: None`: the solution's failure, never the worker's.

use std::sync::Arc;
use std::time::Duration;

use rlvr_sandbox::{Program, ResourceLimits, RunRequest, RunVerdict, Sandbox, Stdin, WorkFile};

use crate::precompiled::PrecompiledHeaders;
use crate::toolchain::Toolchain;
use rlvr_language::{Language, LanguageChoice};

/// Limits of one compile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompileLimits {
    /// Wall clock (SandboxFusion's `compile_timeout`).
    pub wall: Duration,
    /// Memory of the compiler's whole process tree (its temporary files included).
    pub memory_bytes: u64,
    /// Largest artifact (the compiled program) accepted.
    pub artifact_bytes: u64,
}

impl Default for CompileLimits {
    fn default() -> Self {
        Self {
            wall: Duration::from_secs(20),
            memory_bytes: 2 << 30,
            artifact_bytes: 64 << 20,
        }
    }
}

/// How much of a compiler's diagnostics a report keeps.
pub const DIAGNOSTICS_BYTES: usize = 16 << 10;

/// How a compile ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompileStatus {
    /// The compiler finished (successfully when the report has an artifact).
    Finished,
    /// It ran past its wall-clock or CPU limit and was killed.
    TimeLimitExceeded,
    /// It ran out of memory.
    MemoryLimitExceeded,
    /// Its output (the artifact or the diagnostics) passed the cap.
    OutputLimitExceeded,
}

/// What compiling one source gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileReport {
    /// The language and variant compiled.
    pub choice: LanguageChoice,
    /// How it ended.
    pub status: CompileStatus,
    /// The compiler's exit status, when it exited.
    pub exit_code: Option<i32>,
    /// Its wall-clock time.
    pub wall: Duration,
    /// The start of its diagnostics (at most [`DIAGNOSTICS_BYTES`], cut at a character).
    pub diagnostics: String,
    /// The compiled program (an executable, or Java's class archive), when it compiled.
    pub artifact: Option<Arc<[u8]>>,
}

impl CompileReport {
    /// Whether it compiled.
    pub fn succeeded(&self) -> bool {
        self.artifact.is_some()
    }

    /// One line for a job's `reason`: the status and the first lines of the diagnostics.
    pub fn summary(&self, bytes: usize) -> String {
        let what = match self.status {
            CompileStatus::Finished => "the code does not compile",
            CompileStatus::TimeLimitExceeded => "compiling took longer than the compile limit",
            CompileStatus::MemoryLimitExceeded => "the compiler ran out of memory",
            CompileStatus::OutputLimitExceeded => {
                "the compiler's output (program or diagnostics) passed its cap"
            }
        };
        let diagnostics = cut(self.diagnostics.trim(), bytes);
        if diagnostics.is_empty() {
            what.to_owned()
        } else {
            format!("{what}: {diagnostics}")
        }
    }
}

/// The first `bytes` of `text`, cut at a character boundary.
pub(crate) fn cut(text: &str, bytes: usize) -> &str {
    if text.len() <= bytes {
        return text;
    }
    let mut end = bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Where a precompiled `bits/stdc++.h` is seen inside the sandbox.
pub const PRECOMPILED_IN_SANDBOX: &str = "/opt/rlvr-precompiled";

/// The source file name and the shell command that compiles it in `/tmp`, writing the
/// artifact to stdout (fd 3 is the real stdout; the compiler's own stdout goes to stderr).
/// Every flag is fixed here: nothing from the source or the request reaches the command line.
pub(crate) fn command(
    choice: LanguageChoice,
    toolchain: &Toolchain,
    precompiled: Option<&str>,
    java_main: &str,
) -> (String, String) {
    let compiler = toolchain.executable.display();
    match choice.language {
        Language::Cpp => {
            let include = precompiled
                .map(|directory| format!(" -I{PRECOMPILED_IN_SANDBOX}/{directory}"))
                .unwrap_or_default();
            (
                "main.cpp".to_owned(),
                format!(
                    "{compiler} {} {CPP_FLAGS}{include} -o main main.cpp -lm && cat main >&3",
                    choice.cpp_standard.flag()
                ),
            )
        }
        Language::C => (
            "main.c".to_owned(),
            format!("{compiler} {C_FLAGS} -o main main.c -lm && cat main >&3"),
        ),
        Language::Go => (
            "main.go".to_owned(),
            format!(
                "CGO_ENABLED=0 GO111MODULE=off GOCACHE=/tmp/.cache/go GOPATH=/tmp/go \
                 {compiler} build -o main main.go && cat main >&3"
            ),
        ),
        Language::Rust => (
            "main.rs".to_owned(),
            format!("{compiler} {RUST_FLAGS} -o main main.rs && cat main >&3"),
        ),
        Language::Java => (
            format!("{java_main}.java"),
            format!(
                "mkdir classes && {compiler} {JAVAC_FLAGS} -d classes {java_main}.java && \
                 tar -cf - -C classes . >&3"
            ),
        ),
        // Interpreted: nothing to compile (`compile` never gets here).
        Language::Python | Language::JavaScript => (String::new(), "true".to_owned()),
    }
}

/// g++ flags besides the standard: Codeforces' and SandboxFusion's `-O2`, a static binary (no
/// dynamic loading per test: about 1 ms less per test, measured), `ONLINE_JUDGE` defined as
/// judges define it, and bounded diagnostics.
pub const CPP_FLAGS: &str = "-O2 -pipe -static -DONLINE_JUDGE -fmax-errors=20 \
     -ftemplate-backtrace-limit=4 -fdiagnostics-color=never";
/// gcc flags (GNU C11).
pub const C_FLAGS: &str = "-std=gnu11 -O2 -pipe -static -DONLINE_JUDGE -fmax-errors=20 \
     -fdiagnostics-color=never";
/// rustc flags: Codeforces' edition 2021, optimised, `ONLINE_JUDGE`, statically linked.
pub const RUST_FLAGS: &str = "--edition 2021 -O --cfg ONLINE_JUDGE -C debuginfo=0 \
     -C strip=symbols -C target-feature=+crt-static --color never";
/// javac flags: UTF-8 sources, no warnings for deprecated APIs (judges show none), a bounded
/// compiler heap, and the libraries SandboxFusion's image ships on the class path
/// (`java::LIBRARY_JARS`; a jar that is not installed is skipped by javac).
pub const JAVAC_FLAGS: &str = "-J-Xmx768m -J-XX:+UseSerialGC -J-XX:CompressedClassSpaceSize=64m \
     -J-XX:ReservedCodeCacheSize=64m -J-XX:TieredStopAtLevel=1 -encoding UTF-8 -nowarn \
     -cp /usr/share/java/javatuples.jar";

/// The flags of `choice`, part of its cache key (and of `rlvr doctor`'s report).
pub fn flags(choice: LanguageChoice) -> String {
    match choice.language {
        Language::Cpp => format!("{} {CPP_FLAGS}", choice.cpp_standard.flag()),
        Language::C => C_FLAGS.to_owned(),
        Language::Rust => RUST_FLAGS.to_owned(),
        Language::Java => JAVAC_FLAGS.to_owned(),
        Language::Go => "build (CGO_ENABLED=0)".to_owned(),
        Language::Python | Language::JavaScript => String::new(),
    }
}

/// Compiles `source` in a fresh sandboxed process and reports. `Err` only when the sandbox
/// itself failed (report it as `sandbox_error`, never as the solution's failure).
pub(crate) fn compile_in_sandbox(
    sandbox: &Sandbox,
    choice: LanguageChoice,
    toolchain: &Toolchain,
    source: &str,
    limits: CompileLimits,
    precompiled: Option<&PrecompiledHeaders>,
) -> Result<CompileReport, rlvr_sandbox::SandboxError> {
    let precompiled_directory = match (choice.language, precompiled) {
        (Language::Cpp, Some(headers)) => headers.ensure(toolchain, choice.cpp_standard),
        _ => None,
    };
    let java_main = crate::java::source_file_class(source);
    let (file_name, compile) = command(
        choice,
        toolchain,
        precompiled_directory.as_deref(),
        &java_main,
    );
    compile_with(sandbox, choice, (&file_name, source), &compile, limits)
}

/// Runs `compile` (a shell command in `/tmp`, where `file` is, whose artifact goes to
/// descriptor 3 and anything else to stderr) in a fresh sandboxed process and reports, the
/// artifact standing for a `choice` program. `Err` only when the sandbox itself failed.
pub(crate) fn compile_with(
    sandbox: &Sandbox,
    choice: LanguageChoice,
    (file_name, source): (&str, &str),
    compile: &str,
    limits: CompileLimits,
) -> Result<CompileReport, rlvr_sandbox::SandboxError> {
    // TZ: without /etc/localtime the JVM (javac, jar) searches /usr/share/zoneinfo for the
    // local zone, about 8 s of CPU here.
    let script = format!("cd /tmp && export TZ=UTC && exec 3>&1 1>&2 && {compile}");
    let request = RunRequest {
        program: Program::Command {
            argv: vec!["/bin/sh".to_owned(), "-c".to_owned(), script],
        },
        stdin: Stdin::Empty,
        limits: ResourceLimits {
            wall: limits.wall,
            cpu: limits.wall,
            memory_bytes: limits.memory_bytes,
            output_bytes: limits.artifact_bytes,
            pids: 128,
            tmpfs_bytes: limits.artifact_bytes.saturating_mul(4).max(256 << 20),
        },
        files: vec![WorkFile {
            name: file_name.to_owned(),
            contents: source.as_bytes().to_vec(),
        }],
        network: rlvr_sandbox::Network::Isolated,
    };
    let outcome = sandbox.run(&request)?;
    let status = match outcome.verdict {
        RunVerdict::Timeout => CompileStatus::TimeLimitExceeded,
        RunVerdict::MemoryLimit => CompileStatus::MemoryLimitExceeded,
        RunVerdict::OutputLimit => CompileStatus::OutputLimitExceeded,
        RunVerdict::Ok | RunVerdict::RuntimeError => CompileStatus::Finished,
    };
    let mut compiled = outcome.verdict == RunVerdict::Ok && !outcome.stdout.is_empty();
    let mut diagnostics = String::from_utf8_lossy(&outcome.stderr).into_owned();
    let mut artifact = outcome.stdout;
    if compiled && choice.language == Language::Java {
        // javac's classes come out as a tar stream; the JVM takes a jar (the JDK's `jar`
        // tool spends seconds of CPU per run in the sandbox, so the jar is built here).
        match crate::java::jar_from_tar(&artifact) {
            Ok(jar) => artifact = jar,
            Err(error) => {
                compiled = false;
                diagnostics.push_str(&format!("the compiled classes are unreadable: {error}\n"));
            }
        }
    }
    Ok(CompileReport {
        choice,
        status,
        exit_code: outcome.exit_code,
        wall: outcome.wall,
        diagnostics: cut(&diagnostics, DIAGNOSTICS_BYTES).to_owned(),
        artifact: compiled.then(|| Arc::from(artifact)),
    })
}
