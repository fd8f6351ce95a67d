//! `rlvr doctor`: the sandbox's mode (root, user namespace, degraded), whom programs and the
//! runner run as, what limits memory and processes, every protection (active or not, and
//! why), the machine's restrictions on user namespaces with remedies, which interpreter runs,
//! whether numpy and pandas import inside the sandbox, each language's toolchain with its
//! version and a hello-world compiled and run inside the sandbox (issue 24; `/run_code`'s
//! TypeScript too, issue 35), the libraries SandboxFusion's image ships used there (issue 35),
//! and a self-test of hostile probes.

use std::io::Write;
use std::time::Duration;

use rlvr_sandbox::{
    CgroupLayout, IdMapping, Network, Protection, ResourceLimits, RunRequest, RunVerdict, Sandbox,
};

use crate::exit::{Error, Status};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, serde::Serialize)]
struct Probe {
    name: &'static str,
    passed: bool,
    detail: String,
}

#[derive(Debug, serde::Serialize)]
struct Report<'sandbox> {
    /// True when every required protection is active and every probe passed.
    ok: bool,
    /// `root`, `user_namespace` or `degraded`.
    mode: &'static str,
    /// Whom programs and the warm runner run as.
    identity: String,
    /// What limits memory and processes.
    limits: String,
    protections: Vec<&'static str>,
    missing_required: Vec<&'static str>,
    unavailable: &'sandbox [rlvr_sandbox::Unavailable],
    restrictions: &'sandbox [rlvr_sandbox::Restriction],
    id_mapping: Option<&'sandbox IdMapping>,
    interpreter: &'sandbox rlvr_sandbox::Interpreter,
    sandbox_python: String,
    packages: Vec<Probe>,
    cgroups: &'sandbox rlvr_sandbox::CgroupLayout,
    toolchains: Vec<ToolchainReport>,
    libraries: Vec<LibraryReport>,
    self_test: Vec<Probe>,
}

/// A library SandboxFusion's image ships (docs/languages.md, "Libraries"): installed or not,
/// and whether a program using it runs inside the sandbox.
#[derive(Debug, serde::Serialize)]
struct LibraryReport {
    language: &'static str,
    name: &'static str,
    package: &'static str,
    path: &'static str,
    available: bool,
    /// Why it is unavailable, or what the sandbox check saw.
    detail: String,
    /// A program using it printed its line inside the sandbox.
    works_in_sandbox: bool,
}

/// Every library, each used by a program in the sandbox (in parallel); one whose package or
/// language is missing is reported as unavailable.
fn library_reports(sandbox: &Sandbox) -> Vec<LibraryReport> {
    let compiler = rlvr_languages::Compiler::shared();
    std::thread::scope(|scope| {
        let checks: Vec<_> = rlvr_languages::LIBRARIES
            .iter()
            .map(|library| {
                scope.spawn(move || {
                    let mut report = LibraryReport {
                        language: library.language.name(),
                        name: library.name,
                        package: library.package,
                        path: library.path,
                        available: false,
                        detail: String::new(),
                        works_in_sandbox: false,
                    };
                    if !std::path::Path::new(library.path).exists() {
                        report.detail = format!(
                            "{} not found (Debian package {}; scripts/setup installs it)",
                            library.path, library.package
                        );
                        return report;
                    }
                    if let Err(unavailable) = compiler.toolchains().get(library.language) {
                        report.detail = unavailable.reason.clone();
                        return report;
                    }
                    report.available = true;
                    (report.works_in_sandbox, report.detail) = match run_probe(
                        sandbox,
                        compiler,
                        library.language.into(),
                        library.probe,
                    ) {
                        Ok(run) => (run.works, format!("a program using it: {}", run.verdict)),
                        Err(detail) => (false, detail),
                    };
                    report
                })
            })
            .collect();
        checks
            .into_iter()
            .filter_map(|check| check.join().ok())
            .collect()
    })
}

/// One language's toolchain: found or not (and why), its version, and whether a hello-world
/// compiles and runs inside the sandbox.
#[derive(Debug, serde::Serialize)]
struct ToolchainReport {
    language: &'static str,
    available: bool,
    version: Option<String>,
    executable: Option<String>,
    package: &'static str,
    flags: String,
    /// Why it is unavailable, or what the sandbox check saw.
    detail: String,
    /// The hello-world compiled and printed its line inside the sandbox.
    works_in_sandbox: bool,
}

/// A hello-world per language: what the doctor compiles and runs.
fn hello_world(language: rlvr_languages::Language) -> &'static str {
    use rlvr_languages::Language;
    match language {
        Language::Cpp => {
            "#include <bits/stdc++.h>\nint main(){ std::cout << \"hello\" << std::endl; }\n"
        }
        Language::C => "#include <stdio.h>\nint main(void){ puts(\"hello\"); return 0; }\n",
        Language::Java => {
            "public class Main { public static void main(String[] a) { System.out.println(\"hello\"); } }\n"
        }
        Language::JavaScript => "console.log('hello');\n",
        Language::Go => "package main\nimport \"fmt\"\nfunc main() { fmt.Println(\"hello\") }\n",
        Language::Rust => "fn main() { println!(\"hello\"); }\n",
        Language::Python => "print('hello')\n",
    }
}

/// Every language's toolchain, each checked in the sandbox (in parallel: a compile each),
/// then `/run_code`'s TypeScript.
fn toolchain_reports(sandbox: &Sandbox) -> Vec<ToolchainReport> {
    let compiler = rlvr_languages::Compiler::shared();
    let toolchains: Vec<_> = compiler.toolchains().all().collect();
    std::thread::scope(|scope| {
        let typescript = scope.spawn(|| typescript_report(sandbox, compiler));
        let checks: Vec<_> = toolchains
            .into_iter()
            .map(|(language, found)| {
                scope.spawn(move || {
                    let flags = rlvr_languages::flags(language.into());
                    match found {
                        Err(unavailable) => ToolchainReport {
                            language: language.name(),
                            available: false,
                            version: None,
                            executable: None,
                            package: unavailable.package,
                            flags,
                            detail: unavailable.reason.clone(),
                            works_in_sandbox: false,
                        },
                        Ok(toolchain) => {
                            let (works, detail) = match run_probe(
                                sandbox,
                                compiler,
                                language.into(),
                                hello_world(language),
                            ) {
                                Ok(run) => (
                                    run.works,
                                    format!(
                                        "hello world: {}{}",
                                        run.verdict,
                                        run.compile_ms.map_or(String::new(), |milliseconds| {
                                            format!(", compiled in {milliseconds} ms")
                                        })
                                    ),
                                ),
                                Err(detail) => (false, detail),
                            };
                            ToolchainReport {
                                language: language.name(),
                                available: true,
                                version: Some(toolchain.version.clone()),
                                executable: Some(toolchain.executable.display().to_string()),
                                package: toolchain.package,
                                flags,
                                detail,
                                works_in_sandbox: works,
                            }
                        }
                    }
                })
            })
            .collect();
        checks
            .into_iter()
            .chain([typescript])
            .filter_map(|check| check.join().ok())
            .collect()
    })
}

/// `/run_code`'s TypeScript (issue 35): `tsc` compiles a hello world in the sandbox, and the
/// JavaScript it gives runs there as a `nodejs` program.
fn typescript_report(sandbox: &Sandbox, compiler: &rlvr_languages::Compiler) -> ToolchainReport {
    let mut report = ToolchainReport {
        language: "typescript",
        available: false,
        version: None,
        executable: Some(format!("{}/bin/tsc", rlvr_languages::TYPESCRIPT_DIRECTORY)),
        package: rlvr_languages::TYPESCRIPT_PACKAGE,
        flags: rlvr_languages::TSC_FLAGS.to_owned(),
        detail: String::new(),
        works_in_sandbox: false,
    };
    match rlvr_languages::typescript_version() {
        Ok(version) => report.version = Some(version),
        Err(reason) => {
            report.detail = reason;
            return report;
        }
    }
    report.available = true;
    let hello = "const greeting: string = 'hello';\nconsole.log(greeting);\n";
    let compiled = rlvr_languages::compile_typescript(
        sandbox,
        compiler.toolchains(),
        hello,
        rlvr_languages::CompileLimits::default(),
    );
    let compiled = match compiled {
        Ok(compiled) => compiled,
        Err(error) => {
            report.available = !matches!(error, rlvr_languages::PrepareError::Unavailable(_));
            report.detail = error.to_string();
            return report;
        }
    };
    let Some(javascript) = compiled.artifact.as_deref() else {
        report.detail = compiled.summary(300);
        return report;
    };
    let javascript = String::from_utf8_lossy(javascript);
    let language = rlvr_languages::Language::JavaScript.into();
    match run_probe(sandbox, compiler, language, &javascript) {
        Ok(run) => {
            report.works_in_sandbox = run.works;
            report.detail = format!(
                "hello world: {}, compiled in {} ms",
                run.verdict,
                compiled.wall.as_millis()
            );
        }
        Err(detail) => report.detail = detail,
    }
    report
}

struct Case {
    name: &'static str,
    source: &'static str,
    limits: ResourceLimits,
    /// The network the case runs with (`/run_code`'s private loopback, or none).
    network: Network,
    expect: fn(&rlvr_sandbox::RunOutcome) -> bool,
}

fn small_limits() -> ResourceLimits {
    ResourceLimits {
        wall: Duration::from_secs(5),
        cpu: Duration::from_secs(5),
        memory_bytes: 128 << 20,
        pids: 32,
        ..ResourceLimits::default()
    }
}

fn ok_printing(outcome: &rlvr_sandbox::RunOutcome, expected: &str) -> bool {
    outcome.verdict == RunVerdict::Ok && String::from_utf8_lossy(&outcome.stdout).trim() == expected
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "network is unreachable",
            source: "import socket\ntry:\n    socket.create_connection(('1.1.1.1', 53), timeout=2)\n    print('connected')\nexcept OSError:\n    print('blocked')",
            limits: small_limits(),
            network: Network::Isolated,
            expect: |outcome| ok_printing(outcome, "blocked"),
        },
        Case {
            name: "/run_code's private loopback reaches itself and nothing else",
            source: "import socket\nserver = socket.create_server(('127.0.0.1', 0))\nclient = socket.create_connection(('localhost', server.getsockname()[1]), timeout=2)\nserver.accept()[0].sendall(b'self')\nreached = client.recv(4) == b'self'\ntry:\n    socket.create_connection(('1.1.1.1', 53), timeout=2)\n    print('connected')\nexcept OSError:\n    print('loopback only' if reached else 'no loopback')",
            limits: small_limits(),
            network: Network::PrivateLoopback,
            expect: |outcome| ok_printing(outcome, "loopback only"),
        },
        Case {
            name: "host files are invisible and the root is read-only",
            source: "import os\nvisible = os.path.exists('/root') or os.path.exists('/home') or os.path.exists('/etc/passwd')\ntry:\n    open('/usr/rlvr-probe', 'w')\n    print('writable')\nexcept OSError:\n    print('hidden' if not visible else 'visible')",
            limits: small_limits(),
            network: Network::Isolated,
            expect: |outcome| ok_printing(outcome, "hidden"),
        },
        Case {
            name: "runs with no capability, no_new_privs and seccomp",
            source: "status = dict(line.split(':\\t', 1) for line in open('/proc/self/status').read().splitlines() if ':\\t' in line)\nzero = all(int(status[key], 16) == 0 for key in ('CapEff', 'CapPrm', 'CapBnd', 'CapAmb'))\nprint(zero and status['Seccomp'].strip() == '2' and status['NoNewPrivs'].strip() == '1')",
            limits: small_limits(),
            network: Network::Isolated,
            expect: |outcome| ok_printing(outcome, "True"),
        },
        Case {
            name: "a hostile system call kills the process (SIGSYS)",
            source: "import ctypes\nctypes.CDLL(None).ptrace(16, 1, None, None)\nprint('survived')",
            limits: small_limits(),
            network: Network::Isolated,
            expect: |outcome| outcome.signal == Some(31) && outcome.stdout.is_empty(),
        },
        Case {
            name: "memory limit is enforced",
            source: "chunks = []\nwhile True:\n    chunks.append(bytearray(16 << 20))",
            limits: small_limits(),
            network: Network::Isolated,
            expect: |outcome| outcome.verdict == RunVerdict::MemoryLimit,
        },
        Case {
            name: "time limit is enforced",
            source: "while True:\n    pass",
            limits: ResourceLimits {
                wall: Duration::from_secs(1),
                cpu: Duration::from_secs(1),
                ..small_limits()
            },
            network: Network::Isolated,
            expect: |outcome| outcome.verdict == RunVerdict::Timeout,
        },
        Case {
            name: "fork bomb is contained",
            source: "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
            limits: ResourceLimits {
                wall: Duration::from_secs(2),
                cpu: Duration::from_secs(2),
                ..small_limits()
            },
            network: Network::Isolated,
            expect: |outcome| outcome.verdict == RunVerdict::Timeout,
        },
    ]
}

fn package_probe(sandbox: &Sandbox, name: &'static str) -> Probe {
    let mut request = RunRequest::python(format!("import {name}\nprint({name}.__version__)"));
    request.limits = ResourceLimits {
        wall: Duration::from_secs(60),
        cpu: Duration::from_secs(60),
        ..ResourceLimits::default()
    };
    match sandbox.run(&request) {
        Ok(outcome) if outcome.verdict == RunVerdict::Ok => Probe {
            name,
            passed: true,
            detail: format!(
                "version {}",
                String::from_utf8_lossy(&outcome.stdout).trim()
            ),
        },
        Ok(outcome) => Probe {
            name,
            passed: false,
            detail: String::from_utf8_lossy(&outcome.stderr)
                .lines()
                .last()
                .unwrap_or("")
                .to_owned(),
        },
        Err(error) => Probe {
            name,
            passed: false,
            detail: error.to_string(),
        },
    }
}

/// Whom programs and the runner run as, in one sentence.
fn identity(sandbox: &Sandbox) -> String {
    match sandbox.id_mapping() {
        Some(IdMapping::Root { runner, program }) => format!(
            "programs run as host uid {}, the warm runner as host uid {} (root maps both)",
            program.0, runner.0
        ),
        Some(IdMapping::Subordinate { runner, program }) => format!(
            "programs run as host uid {} (a subordinate id, via newuidmap), the warm runner as uid {}",
            program.0, runner.0
        ),
        Some(IdMapping::Single { caller, reason }) => format!(
            "programs and the warm runner both run as uid {}, without capabilities; each test gets its own PID namespace, so it cannot reach the runner ({reason})",
            caller.0
        ),
        None => {
            "no user namespace: programs run as the caller (or one host uid when root)".to_owned()
        }
    }
}

/// What limits memory and processes, in one sentence.
fn limits(sandbox: &Sandbox) -> String {
    match sandbox.cgroup_layout() {
        CgroupLayout::V2 { parent } => format!(
            "cgroup v2 under {} (memory.max, pids.max, cgroup.kill)",
            parent.display()
        ),
        CgroupLayout::V1 { memory, .. } => format!(
            "cgroup v1 under {} (memory and pids controllers)",
            memory.display()
        ),
        CgroupLayout::Unavailable { reason } => format!(
            "rlimits: RLIMIT_AS per process is the memory limit, RLIMIT_NPROC counted in the sandbox's own user namespace the process limit (no cgroup: {reason})"
        ),
    }
}

pub(crate) fn run(args: Args) -> Result<Status, Error> {
    let config = crate::sandbox_setup::sandbox_config(true)?;
    let sandbox = Sandbox::new(config).map_err(Error::Sandbox)?;
    let missing_required: Vec<&'static str> = Protection::missing_required(sandbox.protections())
        .into_iter()
        .map(Protection::as_str)
        .collect();
    let packages = vec![
        package_probe(&sandbox, "numpy"),
        package_probe(&sandbox, "pandas"),
    ];
    let self_test = self_test(&sandbox);
    let self_test_passed = self_test.iter().all(|probe| probe.passed);
    let toolchains = toolchain_reports(&sandbox);
    // A toolchain that is installed but does not work in the sandbox is a problem; one that is
    // not installed is not (its jobs get `language_unavailable`).
    let libraries = library_reports(&sandbox);
    let toolchains_work = toolchains
        .iter()
        .all(|toolchain| !toolchain.available || toolchain.works_in_sandbox)
        && libraries
            .iter()
            .all(|library| !library.available || library.works_in_sandbox);
    let report = Report {
        ok: missing_required.is_empty() && self_test_passed && toolchains_work,
        mode: sandbox.mode().as_str(),
        identity: identity(&sandbox),
        limits: limits(&sandbox),
        restrictions: sandbox.restrictions(),
        id_mapping: sandbox.id_mapping(),
        protections: sandbox
            .protections()
            .iter()
            .map(|protection| protection.as_str())
            .collect(),
        missing_required: missing_required.clone(),
        unavailable: sandbox.unavailable(),
        interpreter: sandbox.interpreter(),
        sandbox_python: sandbox.python_path().display().to_string(),
        packages,
        cgroups: sandbox.cgroup_layout(),
        toolchains,
        libraries,
        self_test,
    };
    let printed = (|| -> std::io::Result<()> {
        let mut stdout = std::io::stdout().lock();
        if args.json {
            serde_json::to_writer_pretty(&mut stdout, &report)?;
            writeln!(stdout)?;
        } else {
            write_text(&report, sandbox.mode(), &mut stdout)?;
        }
        Ok(())
    })();
    printed.map_err(Error::write(crate::stdout::STANDARD_OUTPUT))?;
    if !missing_required.is_empty() {
        return Err(Error::SandboxUnavailable {
            message: "required sandbox protections are unavailable".to_owned(),
            source: None,
        });
    }
    Ok(if self_test_passed && toolchains_work {
        Status::Success
    } else {
        Status::ProblemsFound
    })
}

/// The self-test: each hostile or limit-breaking case run in the sandbox, and what it gave.
fn self_test(sandbox: &Sandbox) -> Vec<Probe> {
    cases()
        .into_iter()
        .map(|case| {
            let mut request = RunRequest::python(case.source);
            request.limits = case.limits;
            request.network = case.network;
            match sandbox.run(&request) {
                Ok(outcome) => Probe {
                    name: case.name,
                    passed: (case.expect)(&outcome),
                    detail: format!(
                        "verdict {}, wall {} ms{}",
                        outcome.verdict.as_str(),
                        outcome.wall.as_millis(),
                        String::from_utf8_lossy(&outcome.stdout)
                            .lines()
                            .next()
                            .map(|line| format!(", printed {line:?}"))
                            .unwrap_or_default()
                    ),
                },
                Err(error) => Probe {
                    name: case.name,
                    passed: false,
                    detail: error.to_string(),
                },
            }
        })
        .collect()
}

/// The report as text, for a person.
fn write_text(
    report: &Report<'_>,
    mode: rlvr_sandbox::SandboxMode,
    stdout: &mut impl Write,
) -> std::io::Result<()> {
    let mode = match mode {
        rlvr_sandbox::SandboxMode::Root => "root",
        rlvr_sandbox::SandboxMode::UserNamespace => "user namespace (no root needed)",
        rlvr_sandbox::SandboxMode::Degraded => "degraded (some required protections are missing)",
    };
    writeln!(stdout, "mode: {mode}")?;
    writeln!(stdout, "identity: {}", report.identity)?;
    writeln!(stdout, "limits: {}", report.limits)?;
    if report.restrictions.is_empty() {
        writeln!(stdout, "user namespace restrictions: none")?;
    }
    for restriction in report.restrictions {
        writeln!(
            stdout,
            "user namespace restriction: {} = {}: {}; remedy: {}",
            restriction.setting, restriction.value, restriction.reason, restriction.remedy
        )?;
    }
    let interpreter = report.interpreter;
    writeln!(
        stdout,
        "interpreter: {} ({})",
        interpreter.host_executable.display(),
        interpreter.version
    )?;
    writeln!(stdout, "  inside the sandbox: {}", report.sandbox_python)?;
    writeln!(
        stdout,
        "cgroups: {}",
        serde_json::to_string(report.cgroups)?
    )?;
    writeln!(stdout, "active protections:")?;
    for protection in &report.protections {
        writeln!(stdout, "  + {protection}")?;
    }
    for entry in report.unavailable {
        writeln!(
            stdout,
            "  - {} unavailable: {}",
            entry.protection.as_str(),
            entry.reason
        )?;
    }
    writeln!(stdout, "packages inside the sandbox:")?;
    for probe in &report.packages {
        let mark = if probe.passed { "ok  " } else { "FAIL" };
        writeln!(stdout, "  {mark} import {}: {}", probe.name, probe.detail)?;
    }
    writeln!(stdout, "languages (issue 24):")?;
    for toolchain in &report.toolchains {
        let mark = match (toolchain.available, toolchain.works_in_sandbox) {
            (true, true) => "ok  ",
            (true, false) => "FAIL",
            (false, _) => "--  ",
        };
        let version = toolchain.version.as_deref().unwrap_or("unavailable");
        writeln!(
            stdout,
            "  {mark} {}: {version} ({}): {}",
            toolchain.language, toolchain.package, toolchain.detail
        )?;
    }
    writeln!(stdout, "libraries (SandboxFusion's):")?;
    for library in &report.libraries {
        let mark = match (library.available, library.works_in_sandbox) {
            (true, true) => "ok  ",
            (true, false) => "FAIL",
            (false, _) => "--  ",
        };
        writeln!(
            stdout,
            "  {mark} {} {} ({}, {}): {}",
            library.language, library.name, library.package, library.path, library.detail
        )?;
    }
    writeln!(stdout, "self-test:")?;
    for probe in &report.self_test {
        let mark = if probe.passed { "pass" } else { "FAIL" };
        writeln!(stdout, "  {mark} {}: {}", probe.name, probe.detail)?;
    }
    if !report.missing_required.is_empty() {
        writeln!(
            stdout,
            "missing required protections: {} (rlvr run refuses without --allow-degraded)",
            report.missing_required.join(", ")
        )?;
    }
    Ok(())
}

/// What a probe program gave in the sandbox: whether it printed `hello`, its verdict, and how
/// long its compile took (compiled languages).
struct ProbeRun {
    works: bool,
    verdict: &'static str,
    compile_ms: Option<u128>,
}

/// Compiles and runs a probe program once in the sandbox, with the doctor's limits; the
/// compiler's summary or the error when it did not run.
fn run_probe(
    sandbox: &Sandbox,
    compiler: &rlvr_languages::Compiler,
    choice: rlvr_languages::LanguageChoice,
    source: &str,
) -> Result<ProbeRun, String> {
    let limits = rlvr_languages::OnceLimits {
        wall: Duration::from_secs(10),
        memory_bytes: 512 << 20,
        output_bytes: 1 << 20,
        compile: rlvr_languages::CompileLimits::default(),
    };
    let once = rlvr_languages::run_once(sandbox, compiler, choice, source, b"", limits)
        .map_err(|error| error.to_string())?;
    match &once.run {
        Some(run) => Ok(ProbeRun {
            works: run.verdict == RunVerdict::Ok && run.report.stdout == b"hello\n",
            verdict: run.verdict.as_str(),
            compile_ms: once.compile.as_ref().map(|report| report.wall.as_millis()),
        }),
        None => Err(once
            .compile
            .as_ref()
            .map_or(String::new(), |report| report.summary(300))),
    }
}
