//! Compiles a source in the sandbox and runs it: `cargo run -p rlvr-languages --example
//! compile_run -- LANGUAGE SOURCE [STDIN [RUNS]]`. Prints the compile report and the report of
//! each run (RUNS tests of one supervisor, 1 by default: what each test of a job sees).

use std::time::{Duration, Instant};

use rlvr_languages::exec_protocol::RunSpec;
use rlvr_languages::{
    CompileLimits, Compiler, Language, ProgramLimits, Supervisor, address_space_limit,
    program_spec, sandbox_directories,
};
use rlvr_sandbox::{ResourceLimits, Sandbox, SandboxConfig};

fn main() {
    let mut arguments = std::env::args().skip(1);
    let choice = Language::from_name(&arguments.next().expect("a language")).expect("known");
    let source = std::fs::read_to_string(arguments.next().expect("a source")).expect("readable");
    let stdin = arguments.next().unwrap_or_default();
    let runs: usize = arguments
        .next()
        .map_or(1, |runs| runs.parse().expect("a number"));
    let sandbox = Sandbox::new(SandboxConfig {
        read_only_directories: sandbox_directories(),
        ..SandboxConfig::default()
    })
    .expect("sandbox");
    let compiler = Compiler::shared();
    for round in 0..2 {
        let started = Instant::now();
        let compiled = compiler
            .compile(&sandbox, choice, &source, CompileLimits::default())
            .expect("compile");
        if let Some(cached) = &compiled {
            let report = &cached.report;
            println!(
                "round {round}: {:?} exit {:?} hit {} in {:?} (compiler {:?}), artifact {:?} bytes\n{}",
                report.status,
                report.exit_code,
                cached.hit,
                started.elapsed(),
                report.wall,
                report.artifact.as_ref().map(|artifact| artifact.len()),
                report.summary(2000)
            );
        }
    }
    let toolchain = compiler
        .toolchains()
        .get(choice.language)
        .expect("toolchain");
    let compiled = compiler
        .compile(&sandbox, choice, &source, CompileLimits::default())
        .expect("compile");
    let artifact = compiled
        .as_ref()
        .and_then(|cached| cached.report.artifact.clone());
    let limits = ProgramLimits {
        memory_bytes: 1 << 30,
    };
    let harness = if choice.language == Language::Java {
        compiler.java_harness(&sandbox).expect("harness")
    } else {
        None
    };
    let Some(program) = program_spec(
        choice.language,
        toolchain,
        artifact.as_deref(),
        &source,
        limits,
        harness.as_deref(),
    ) else {
        println!("nothing to run");
        return;
    };
    let mut supervisor = Supervisor::start(
        &sandbox,
        ResourceLimits {
            memory_bytes: 2 << 30,
            cpu: Duration::from_secs(3600),
            pids: 256,
            ..ResourceLimits::default()
        },
    )
    .expect("supervisor");
    supervisor.load(&program).expect("load");
    let runs_started = Instant::now();
    for run in 0..runs {
        let report = supervisor
            .run(&RunSpec {
                stdin: stdin.clone().into_bytes(),
                wall_ms: 10_000,
                cpu_seconds: 10,
                output_bytes: 1 << 20,
                address_space_bytes: address_space_limit(choice.language, 1 << 30),
                data_bytes: rlvr_languages::data_limit(choice.language, 1 << 30),
                empty_work_directory: true,
                files: Vec::new(),
            })
            .expect("run");
        println!(
            "run {run}: ending {} exit {} signal {} wall {} us cpu {} us\nstdout: {}\nstderr: {}\nmessage: {}",
            report.ending,
            report.exit_code,
            report.signal,
            report.wall_us,
            report.cpu_us,
            String::from_utf8_lossy(&report.stdout),
            String::from_utf8_lossy(&report.stderr),
            String::from_utf8_lossy(&report.message)
        );
    }
    println!("{runs} runs in {:?}", runs_started.elapsed());
    supervisor.finish();
}
