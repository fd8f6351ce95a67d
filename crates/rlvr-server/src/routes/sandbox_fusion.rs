//! SandboxFusion-compatible `POST /run_code`: one program, one run, the exact status strings
//! verl reads (`Success` / `Failed` / `SandboxError`, and per command `Finished` / `Error` /
//! `TimeLimitExceeded`). A `null` field takes its default, as an absent one does.
//!
//! Languages (issue 24), by SandboxFusion's names: `python` (`python3`), `cpp`, `c`, `java`,
//! `nodejs`, `go`, `rust`. A compiled language is compiled in the sandbox within
//! `compile_timeout` (through the shared compile cache) and answered with SandboxFusion's
//! `compile_result`; a program that does not compile has no `run_result`, as there.
//!
//! Every run gets a private loopback (`Network::PrivateLoopback`: a fresh network namespace
//! whose `lo` is up, nothing else in it; issue 35).
//!
//! `bash` runs as Python does, one sandboxed process (issue 35). `typescript` (`ts`) is
//! compiled to JavaScript by Debian's `tsc` in the sandbox, then run as `nodejs` (issue 35). Their `files` may be in
//! directories and `fetch_files` come back base64, placed and read inside the sandbox
//! (`run_code_files`, issue 35).

mod run_code_files;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use base64::Engine as _;
use rlvr_languages::exec_protocol::ending;
use rlvr_languages::{
    CompileLimits, CompileReport, CompileStatus, Compiler, Language, LanguageChoice, Once,
    OnceError, OnceLimits, OnceOptions, compile_typescript, run_once_with,
};
use rlvr_sandbox::{Network, ResourceLimits, RunOutcome, RunRequest, RunVerdict, Stdin, WorkFile};
use run_code_files::{Fetched, MAX_FETCH_FILES, MAX_FILES, check_no_overlap, checked_path};
use serde_json::{Value, json};

use super::{json_body, null_as_default, time_limit};
use crate::error::ApiError;
use crate::state::AppState;

/// The Python names this route runs with the sandbox's interpreter.
const PYTHON: [&str; 2] = ["python", "python3"];
/// Bash, run by Debian's `bash` in the sandbox (issue 35; `/run_code` only, not a judge
/// language: docs/languages.md).
const BASH: &str = "bash";
/// Where Debian's bash is (under `/usr`: the sandbox sees it read-only).
const BASH_PATH: &str = "/usr/bin/bash";

/// A language this route runs straight in the sandbox, as one process (no supervisor).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Interpreted {
    Python,
    Bash,
}

impl Interpreted {
    fn of(language: &str) -> Option<Self> {
        if PYTHON.contains(&language) {
            Some(Self::Python)
        } else if language == BASH {
            Some(Self::Bash)
        } else {
            None
        }
    }

    /// The program's file in the work directory.
    fn main_file(self) -> &'static str {
        match self {
            Self::Python => "main.py",
            Self::Bash => "main.sh",
        }
    }

    /// How the program is run (`python`: the sandbox's interpreter).
    fn command(self) -> [&'static str; 3] {
        match self {
            Self::Python => ["python", "-I", "main.py"],
            Self::Bash => [BASH_PATH, "--noprofile", "main.sh"],
        }
    }
}

/// The other languages, by SandboxFusion's names; SandboxFusion's others get a
/// `SandboxError` that says so.
const OTHER_LANGUAGES: [&str; 8] = [
    "cpp",
    "c",
    "java",
    "nodejs",
    "go",
    "rust",
    "typescript",
    "ts",
];
/// SandboxFusion's names of TypeScript: compiled to JavaScript by Debian's `tsc` in the
/// sandbox, then run as a `nodejs` program (`rlvr_languages::compile_typescript`; `/run_code`
/// only, docs/languages.md).
const TYPESCRIPT: [&str; 2] = ["typescript", "ts"];

/// SandboxFusion's default `run_timeout`.
const DEFAULT_RUN_TIMEOUT_SECONDS: f64 = 10.0;
/// SandboxFusion's default `compile_timeout`.
const DEFAULT_COMPILE_TIMEOUT_SECONDS: f64 = 10.0;

/// SandboxFusion's `RunCodeRequest`.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct RunCodeRequest {
    code: String,
    #[serde(default)]
    stdin: Option<String>,
    language: String,
    /// Seconds (default 10), for the compiled languages.
    #[serde(default)]
    compile_timeout: Option<f64>,
    /// Seconds (default 10).
    #[serde(default)]
    run_timeout: Option<f64>,
    /// Megabytes; -1, 0 or absent: the sandbox's default.
    #[serde(rename = "memory_limit_MB", default)]
    memory_limit_megabytes: Option<i64>,
    /// Path (relative to the work directory, directories allowed) to base64 contents, placed
    /// there before the run (`null` contents: skipped). Python and Bash only.
    #[serde(default, deserialize_with = "null_as_default")]
    files: BTreeMap<String, Option<String>>,
    /// Paths (relative to the work directory) read after the run and answered base64 in the
    /// response's `files` (those that are regular files then). Python and Bash only; ignored
    /// for the other languages.
    #[serde(default, deserialize_with = "null_as_default")]
    fetch_files: Vec<String>,
}

pub(crate) async fn run_code(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    let request: RunCodeRequest = json_body(body)?;
    if OTHER_LANGUAGES.contains(&request.language.as_str()) {
        return run_other_language(state, request).await;
    }
    let Some(interpreted) = Interpreted::of(&request.language) else {
        return Ok(Json(sandbox_error(format!(
            "language {:?} is not supported by rlvr serve (python, cpp, c, java, nodejs, go, \
             rust, bash, typescript)",
            request.language
        ))));
    };
    if interpreted == Interpreted::Bash && !std::path::Path::new(BASH_PATH).exists() {
        return Ok(Json(sandbox_error(format!(
            "{BASH_PATH} not found (Debian package bash)"
        ))));
    }
    let (run, placing) = build_request(&request, interpreted)?;
    let _reservation = super::admit(&state, 1)?;
    let Ok(_permit) = Arc::clone(&state.slots).acquire_owned().await else {
        return Ok(Json(sandbox_error(
            "the server is shutting down".to_owned(),
        )));
    };
    let sandbox = state.sandbox.clone();
    let response = answer(
        &state,
        &request.language,
        move || {
            let mut outcome = sandbox.run(&run)?;
            let fetched = placing.then(|| take_fetched(&mut outcome));
            Ok::<_, rlvr_sandbox::SandboxError>(finished_with(&outcome, fetched.as_ref()))
        },
        Value::clone,
    )
    .await;
    Ok(Json(response))
}

/// The trailer of a run that placed or fetched files taken off its output: what it fetched
/// (`None` when the run ended before it could say, as on a timeout or past the output cap),
/// with the program's own exit status put back in the outcome.
fn take_fetched(outcome: &mut RunOutcome) -> Option<Fetched> {
    let fetched = run_code_files::take_fetched(&mut outcome.stdout)?;
    match i32::try_from(fetched.status) {
        Ok(status) if status < 0 => {
            outcome.exit_code = None;
            outcome.signal = Some(-status);
        }
        Ok(status) => {
            outcome.exit_code = Some(status);
            outcome.signal = None;
        }
        Err(_) => {}
    }
    Some(fetched)
}

/// The run of a Python or Bash request, and whether it places or fetches files through
/// `run_code_files` (a file in a directory, or `fetch_files`); 400 for a path outside the
/// work directory or past the caps.
fn build_request(
    request: &RunCodeRequest,
    interpreted: Interpreted,
) -> Result<(RunRequest, bool), ApiError> {
    let wall = time_limit(
        "run_timeout",
        Some(request.run_timeout.unwrap_or(DEFAULT_RUN_TIMEOUT_SECONDS)),
    )?
    .unwrap_or(Duration::from_secs(10));
    let mut limits = ResourceLimits {
        wall,
        cpu: wall,
        ..ResourceLimits::default()
    };
    if let Some(megabytes) = request.memory_limit_megabytes
        && megabytes > 0
    {
        let megabytes = u64::try_from(megabytes).unwrap_or(u64::MAX);
        limits.memory_bytes = megabytes.min(64 << 10) << 20;
    }
    let files = decoded_files(request, interpreted.main_file())?;
    if request.fetch_files.len() > MAX_FETCH_FILES {
        return Err(ApiError::bad_request(format!(
            "fetch_files: {} paths, at most {MAX_FETCH_FILES}",
            request.fetch_files.len()
        )));
    }
    for path in &request.fetch_files {
        checked_path("fetch_files", path)?;
    }
    let placing =
        !request.fetch_files.is_empty() || files.iter().any(|(path, _)| path.contains('/'));
    let mut run = RunRequest::python(request.code.clone());
    if placing {
        let (program, work_files) = run_code_files::placing_run(
            (interpreted.main_file(), &request.code),
            &interpreted.command(),
            files,
            &request.fetch_files,
        );
        run.program = program;
        run.files = work_files;
    } else {
        run.files = files
            .into_iter()
            .map(|(name, contents)| WorkFile { name, contents })
            .collect();
        if interpreted == Interpreted::Bash {
            run.program = rlvr_sandbox::Program::Command {
                argv: interpreted.command().map(str::to_owned).to_vec(),
            };
            run.files.push(WorkFile {
                name: interpreted.main_file().to_owned(),
                contents: request.code.as_bytes().to_vec(),
            });
        }
    }
    run.stdin = match &request.stdin {
        Some(text) if !text.is_empty() => Stdin::Bytes(text.clone().into_bytes()),
        _ => Stdin::Empty,
    };
    run.limits = limits;
    // A network namespace of this run's own with `lo` up: a program may serve and call
    // itself on 127.0.0.1 as under SandboxFusion, and nothing it leaves listening outlives
    // the run (docs/sandbox.md, "Loopback for `/run_code`").
    run.network = Network::PrivateLoopback;
    Ok((run, placing))
}

/// The request's `files` with contents, decoded, each path checked (relative, inside the
/// work directory, not the program's own `main_file`, no file also a directory of another),
/// at most [`MAX_FILES`].
fn decoded_files(
    request: &RunCodeRequest,
    main_file: &str,
) -> Result<Vec<(String, Vec<u8>)>, ApiError> {
    let named: Vec<(&String, &String)> = request
        .files
        .iter()
        .filter_map(|(name, contents)| Some((name, contents.as_ref()?)))
        .collect();
    if named.len() > MAX_FILES {
        return Err(ApiError::bad_request(format!(
            "files: {} files, at most {MAX_FILES}",
            named.len()
        )));
    }
    let mut files = Vec::with_capacity(named.len());
    for (name, contents) in named {
        checked_path("files", name)?;
        if name == main_file {
            return Err(ApiError::bad_request(format!(
                "files {name:?}: the program's own file; name it otherwise"
            )));
        }
        let contents = base64::engine::general_purpose::STANDARD
            .decode(contents)
            .map_err(|error| {
                ApiError::bad_request(format!("file {name:?}: not base64: {error}"))
            })?;
        files.push((name.clone(), contents));
    }
    check_no_overlap(files.iter().map(|(name, _)| name.as_str()))?;
    Ok(files)
}

/// A finished run, as SandboxFusion reports it.
struct FinishedRun<'a> {
    verdict: RunVerdict,
    /// The exit status, or the killing signal as its negated number (subprocess convention).
    return_code: Option<i64>,
    seconds: f64,
    stdout: &'a [u8],
    stderr: &'a [u8],
}

/// SandboxFusion's rule: a timeout or a non-zero return code is `Failed`, else `Success`.
fn run_response(run: &FinishedRun<'_>, compile_result: Value) -> Value {
    run_response_with_files(run, compile_result, None)
}

/// [`run_response`] with the files fetched back (SandboxFusion's `files`: path to base64) and
/// what was left out for the caps in `message`.
fn run_response_with_files(
    run: &FinishedRun<'_>,
    compile_result: Value,
    fetched: Option<&Option<Fetched>>,
) -> Value {
    let timed_out = run.verdict == RunVerdict::Timeout;
    let succeeded = !timed_out && run.verdict == RunVerdict::Ok && run.return_code == Some(0);
    let mut message: Vec<String> = match run.verdict {
        RunVerdict::MemoryLimit => vec!["memory limit exceeded".to_owned()],
        RunVerdict::OutputLimit => vec!["output limit exceeded".to_owned()],
        _ => Vec::new(),
    };
    let files = match fetched {
        Some(Some(fetched)) => {
            if !fetched.omitted.is_empty() {
                message.push(format!(
                    "fetch_files left out (over {} MiB each, {} MiB in all): {}",
                    run_code_files::FETCH_FILE_BYTES >> 20,
                    run_code_files::FETCH_TOTAL_BYTES >> 20,
                    fetched.omitted.join(", ")
                ));
            }
            Value::Object(fetched.files.clone())
        }
        Some(None) => {
            message.push("the run ended before its files could be fetched".to_owned());
            json!({})
        }
        None => json!({}),
    };
    let message = message.join("; ");
    json!({
        "status": if succeeded { "Success" } else { "Failed" },
        "message": message,
        "compile_result": compile_result,
        "run_result": {
            "status": if timed_out { "TimeLimitExceeded" } else { "Finished" },
            "execution_time": run.seconds,
            "return_code": if timed_out { Value::Null } else { json!(run.return_code) },
            "stdout": String::from_utf8_lossy(run.stdout),
            "stderr": String::from_utf8_lossy(run.stderr),
        },
        "executor_pod_name": null,
        "files": files,
    })
}

/// Runs `work` (one sandboxed run) off the async threads and answers with `finish` of its
/// result, or with a sandbox failure when it failed or did not complete.
async fn answer<T, E>(
    state: &AppState,
    language: &str,
    work: impl FnOnce() -> Result<T, E> + Send + 'static,
    finish: fn(&T) -> Value,
) -> Value
where
    T: Send + 'static,
    E: std::fmt::Display + Send + 'static,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(Ok(result)) => finish(&result),
        Ok(Err(error)) => failed(state, language, error.to_string()),
        Err(error) => failed(
            state,
            language,
            format!("the run did not complete: {error}"),
        ),
    }
}

/// A Python run's answer, with what it fetched when it placed or fetched files.
fn finished_with(outcome: &RunOutcome, fetched: Option<&Option<Fetched>>) -> Value {
    let return_code = outcome.exit_code.or(outcome.signal.map(|signal| -signal));
    let run = FinishedRun {
        verdict: outcome.verdict,
        return_code: return_code.map(i64::from),
        seconds: outcome.wall.as_secs_f64(),
        stdout: &outcome.stdout,
        stderr: &outcome.stderr,
    };
    run_response_with_files(&run, Value::Null, fetched)
}

/// The sandbox failed (not the program): counted, logged for the operator (the client sees
/// only `SandboxError`, which verl scores -1) and answered.
fn failed(state: &AppState, language: &str, message: String) -> Value {
    state.metrics.sandbox_errors.inc();
    tracing::warn!("/run_code ({language}): the sandbox failed: {message}");
    sandbox_error(message)
}

fn sandbox_error(message: String) -> Value {
    json!({
        "status": "SandboxError",
        "message": message,
        "compile_result": null,
        "run_result": null,
        "executor_pod_name": null,
        "files": {},
    })
}

/// `/run_code` for a language other than Python: compile (unless cached) then one run, both in
/// the sandbox, answered in SandboxFusion's shapes.
async fn run_other_language(
    state: Arc<AppState>,
    request: RunCodeRequest,
) -> Result<Json<Value>, ApiError> {
    let typescript = TYPESCRIPT.contains(&request.language.as_str());
    let choice = if typescript {
        LanguageChoice::from(Language::JavaScript)
    } else {
        Language::from_name(&request.language).ok_or_else(|| {
            ApiError::bad_request(format!("unknown language {:?}", request.language))
        })?
    };
    if request.files.values().any(Option::is_some) {
        return Ok(Json(sandbox_error(format!(
            "files are supported for python only, not {}",
            request.language
        ))));
    }
    let (run, _) = build_request(&request, Interpreted::Python)?;
    let compile_wall = time_limit(
        "compile_timeout",
        Some(
            request
                .compile_timeout
                .unwrap_or(DEFAULT_COMPILE_TIMEOUT_SECONDS),
        ),
    )?
    .unwrap_or(Duration::from_secs(10));
    let limits = OnceLimits {
        wall: run.limits.wall,
        memory_bytes: run.limits.memory_bytes,
        output_bytes: run.limits.output_bytes,
        compile: CompileLimits {
            wall: compile_wall,
            ..CompileLimits::default()
        },
    };
    let stdin = match &run.stdin {
        Stdin::Bytes(bytes) => bytes.clone(),
        _ => Vec::new(),
    };
    let _reservation = super::admit(&state, 1)?;
    let Ok(_permit) = Arc::clone(&state.slots).acquire_owned().await else {
        return Ok(Json(sandbox_error(
            "the server is shutting down".to_owned(),
        )));
    };
    let sandbox = state.sandbox.clone();
    let code = request.code;
    // Java with assertions on, as SandboxFusion runs it (`java -ea`): MultiPL-E's Java
    // problems check every answer with `assert`. A private loopback, as for Python.
    let options = OnceOptions {
        java_assertions: true,
        network: Network::PrivateLoopback,
    };
    let run = move || {
        let compiler = Compiler::shared();
        if !typescript {
            return run_once_with(&sandbox, compiler, choice, &code, &stdin, limits, options);
        }
        // TypeScript: compiled to a Node.js program here, answered as SandboxFusion answers
        // it (no `compile_result` once it compiled), then run as one.
        let compiled = compile_typescript(&sandbox, compiler.toolchains(), &code, limits.compile)
            .map_err(OnceError::from)?;
        let Some(javascript) = compiled.artifact.as_deref() else {
            return Ok(Once {
                compile: Some(Arc::new(compiled)),
                run: None,
            });
        };
        let javascript = String::from_utf8_lossy(javascript);
        let once = run_once_with(
            &sandbox,
            compiler,
            choice,
            &javascript,
            &stdin,
            limits,
            options,
        )?;
        Ok(Once {
            compile: None,
            ..once
        })
    };
    let response = answer(&state, &request.language, run, finished_once).await;
    Ok(Json(response))
}

/// SandboxFusion's `compile_result`: `TimeLimitExceeded` (no return code) when the compile ran
/// out of time, else `Finished` with the compiler's status (`-9` when it was killed for memory
/// or output, with the reason appended to its stderr).
fn compile_result(report: &CompileReport) -> Value {
    let timed_out = report.status == CompileStatus::TimeLimitExceeded;
    let mut stderr = report.diagnostics.clone();
    let return_code = match report.status {
        CompileStatus::Finished => report.exit_code.map_or(-1, i64::from),
        CompileStatus::TimeLimitExceeded => 0,
        CompileStatus::MemoryLimitExceeded | CompileStatus::OutputLimitExceeded => {
            stderr.push_str(&report.summary(0));
            stderr.push('\n');
            -9
        }
    };
    json!({
        "status": if timed_out { "TimeLimitExceeded" } else { "Finished" },
        "execution_time": report.wall.as_secs_f64(),
        "return_code": if timed_out { Value::Null } else { json!(return_code) },
        "stdout": "",
        "stderr": stderr,
    })
}

fn finished_once(once: &Once) -> Value {
    let compile = once.compile.as_deref();
    let compiled = compile.is_none_or(CompileReport::succeeded);
    let compile_json = compile.map_or(Value::Null, compile_result);
    // A program that did not compile has no run (`run_once` stops there).
    let Some(run) = once.run.as_ref().filter(|_| compiled) else {
        return json!({
            "status": "Failed",
            "message": "",
            "compile_result": compile_json,
            "run_result": null,
            "executor_pod_name": null,
            "files": {},
        });
    };
    let report = &run.report;
    let signaled = report.ending != ending::EXITED;
    let return_code = if signaled {
        -report.signal.max(1)
    } else {
        report.exit_code
    };
    let finished = FinishedRun {
        verdict: run.verdict,
        return_code: Some(return_code),
        seconds: report.wall_us as f64 / 1e6,
        stdout: &report.stdout,
        stderr: &report.stderr,
    };
    run_response(&finished, compile_json)
}
