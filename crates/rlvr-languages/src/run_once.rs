//! One program, once: compile (through the cache), start a supervisor, run one test, stop.
//! What `rlvr run --lang L` and `rlvr serve`'s `/run_code` do for every language but Python.

use std::sync::Arc;
use std::time::Duration;

use rlvr_sandbox::{Network, ResourceLimits, RunVerdict, Sandbox};

use crate::exec_protocol::{RunReport, RunSpec, ending};
use crate::program::{
    ProgramLimits, address_space_limit, data_limit, program_spec, reports_out_of_memory,
};
use crate::{CompileLimits, CompileReport, Compiler, LanguageChoice, PrepareError, Supervisor};

/// Limits of one program run once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OnceLimits {
    /// Wall-clock (and CPU) limit of the run.
    pub wall: Duration,
    /// Memory of the run.
    pub memory_bytes: u64,
    /// Cap of standard output.
    pub output_bytes: u64,
    /// Limits of the compile.
    pub compile: CompileLimits,
}

/// How the run went, in the terms of [`rlvr_sandbox::RunVerdict`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OnceRun {
    /// The verdict (as `rlvr run` reports a Python program's).
    pub verdict: RunVerdict,
    /// What the supervisor reported.
    pub report: RunReport,
}

/// What running a program once gave.
#[derive(Debug, Clone)]
pub struct Once {
    /// The compile, for a compiled language.
    pub compile: Option<Arc<CompileReport>>,
    /// The run; `None` when the program did not compile.
    pub run: Option<OnceRun>,
}

/// Why a run failed for reasons of its own, not the program's.
#[derive(Debug, thiserror::Error)]
pub enum OnceError {
    /// The toolchain is missing, or the sandbox failed compiling.
    #[error(transparent)]
    Prepare(#[from] PrepareError),
    /// The supervisor could not start or stopped.
    #[error(transparent)]
    Supervisor(#[from] crate::SupervisorError),
}

/// How a program is run once, besides its limits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OnceOptions {
    /// Java with assertions enabled (`java -ea`), as SandboxFusion runs every Java program
    /// (`/run_code`); the judge runs Java as competitive judges do, without (docs/languages.md).
    pub java_assertions: bool,
    /// The network the program sees: `/run_code` gives it a private loopback, as
    /// SandboxFusion lets a program talk to a server of its own on 127.0.0.1 (docs/sandbox.md).
    pub network: Network,
}

/// Compiles and runs `source` once with `stdin`, as the judge runs it.
pub fn run_once(
    sandbox: &Sandbox,
    compiler: &Compiler,
    choice: LanguageChoice,
    source: &str,
    stdin: &[u8],
    limits: OnceLimits,
) -> Result<Once, OnceError> {
    run_once_with(
        sandbox,
        compiler,
        choice,
        source,
        stdin,
        limits,
        OnceOptions::default(),
    )
}

/// Compiles and runs `source` once with `stdin`, with `options`.
pub fn run_once_with(
    sandbox: &Sandbox,
    compiler: &Compiler,
    choice: LanguageChoice,
    source: &str,
    stdin: &[u8],
    limits: OnceLimits,
    options: OnceOptions,
) -> Result<Once, OnceError> {
    let compiled = compiler.compile(sandbox, choice, source, limits.compile)?;
    let compile = compiled.map(|cached| cached.report);
    if compile.as_ref().is_some_and(|report| !report.succeeded()) {
        return Ok(Once { compile, run: None });
    }
    let toolchain = compiler
        .toolchains()
        .get(choice.language)
        .map_err(|unavailable| PrepareError::Unavailable(unavailable.clone()))?;
    let artifact = compile.as_ref().and_then(|report| report.artifact.clone());
    let harness = if choice.language == crate::Language::Java {
        compiler.java_harness(sandbox)?
    } else {
        None
    };
    let mut program = program_spec(
        choice.language,
        toolchain,
        artifact.as_deref(),
        source,
        ProgramLimits {
            memory_bytes: limits.memory_bytes,
        },
        harness.as_deref(),
    )
    .ok_or_else(|| {
        crate::SupervisorError::Load(format!("no way to run a {} program", choice.language))
    })?;
    if options.java_assertions && choice.language == crate::Language::Java {
        // Right after `java`: assertions on in every class but the JDK's, as `java -ea`.
        program.arguments.insert(1, b"-ea".to_vec());
    }
    let mut supervisor = Supervisor::start_with_network(
        sandbox,
        ResourceLimits {
            wall: limits.wall + Duration::from_secs(10),
            cpu: Duration::from_secs(24 * 3600),
            memory_bytes: crate::program::sandbox_memory_bytes(
                choice.language,
                limits.memory_bytes,
            ),
            pids: 256,
            ..ResourceLimits::default()
        },
        options.network,
    )?;
    supervisor.load(&program)?;
    let kills_before = supervisor.process().usage().out_of_memory_kills;
    let report = supervisor.run(&RunSpec {
        stdin: stdin.to_vec(),
        wall_ms: u64::try_from(limits.wall.as_millis())
            .unwrap_or(u64::MAX)
            .max(1),
        cpu_seconds: limits.wall.as_secs() + 1,
        output_bytes: limits.output_bytes,
        address_space_bytes: address_space_limit(choice.language, limits.memory_bytes),
        data_bytes: data_limit(choice.language, limits.memory_bytes),
        empty_work_directory: false,
        files: Vec::new(),
    })?;
    let out_of_memory = supervisor.process().usage().out_of_memory_kills > kills_before;
    supervisor.finish();
    let verdict = classify(choice, &report, out_of_memory);
    Ok(Once {
        compile,
        run: Some(OnceRun { verdict, report }),
    })
}

/// The verdict of a report, ordered as the sandbox orders Python's: output limit, timeout,
/// memory, exit status.
pub fn classify(choice: LanguageChoice, report: &RunReport, out_of_memory: bool) -> RunVerdict {
    let failed = report.ending != ending::EXITED || report.exit_code != 0;
    if report.stdout_truncated {
        RunVerdict::OutputLimit
    } else if report.ending == ending::TIMED_OUT {
        RunVerdict::Timeout
    } else if failed
        && (out_of_memory
            || reports_out_of_memory(choice.language, &report.stdout, &report.stderr)
            || String::from_utf8_lossy(&report.message).contains("Cannot allocate memory"))
    {
        RunVerdict::MemoryLimit
    } else if failed {
        RunVerdict::RuntimeError
    } else {
        RunVerdict::Ok
    }
}
