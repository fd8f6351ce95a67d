//! Per-test cost of the runner's test isolation (issue 12): the same warm runner, started as a
//! supervisor (each test in its own PID namespace, the program uid, no capability, a stacked
//! seccomp filter) and as a plain program (none of that: tests are only forked), running the
//! same "read two ints, print their sum" test, in interleaved batches so load affects both
//! alike. Prints the medians per test and the ratio.
//!
//! `cargo run --release -p rlvr-engine --example isolation_cost -- [TESTS_PER_BATCH] [BATCHES]`

use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use rlvr_runner::{Runner, TestLimits};
use rlvr_sandbox::{Program, Sandbox, SandboxConfig, SandboxedProcess, SpawnRequest, StdioSpec};

const SOURCE: &str = "a, b = map(int, input().split())\nprint(a + b)";
const LIMITS: TestLimits = TestLimits {
    wall_ms: 10_000,
    cpu_seconds: 10,
    output_bytes: 1 << 20,
    address_space_bytes: 0,
};

fn start(sandbox: &Sandbox, supervisor: bool) -> Result<(SandboxedProcess, Runner), String> {
    let mut request = SpawnRequest::new(Program::Command {
        argv: rlvr_runner::runner_command(),
    });
    request.limits.memory_bytes = rlvr_engine::runner_memory_bytes(1 << 30);
    request.limits.cpu = Duration::from_secs(3600);
    request.limits.wall = Duration::from_secs(3600);
    request.limits.pids = 256;
    request.stderr = StdioSpec::Null;
    request.supervisor = supervisor;
    let mut process = sandbox.spawn(request).map_err(|error| error.to_string())?;
    let (Some(stdin), Some(stdout)) = (process.stdin.take(), process.stdout.take()) else {
        return Err("no pipes".to_owned());
    };
    let mut runner = Runner::new(OwnedFd::from(stdin), OwnedFd::from(stdout));
    runner
        .load(&[SOURCE], "solution.py", &[], None)
        .map_err(|error| error.to_string())?;
    Ok((process, runner))
}

fn batch(runner: &mut Runner, tests: usize) -> Result<Duration, String> {
    let started = Instant::now();
    for index in 0..tests {
        let report = runner
            .run_test(format!("{index} 1\n").as_bytes(), None, LIMITS)
            .map_err(|error| error.to_string())?;
        if report.stdout != format!("{}\n", index + 1).as_bytes() {
            return Err(format!("wrong output: {report:?}"));
        }
    }
    Ok(started.elapsed() / tests as u32)
}

fn median(samples: &mut [Duration]) -> f64 {
    samples.sort();
    samples[samples.len() / 2].as_secs_f64() * 1e3
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut arguments = std::env::args().skip(1);
    let tests: usize = arguments.next().map_or(Ok(50), |text| text.parse())?;
    let batches: usize = arguments.next().map_or(Ok(10), |text| text.parse())?;
    let sandbox = Sandbox::new(SandboxConfig::default())?;
    let (_isolated_process, mut isolated) = start(&sandbox, true)?;
    let (_plain_process, mut plain) = start(&sandbox, false)?;
    batch(&mut isolated, 5)?; // warm up both
    batch(&mut plain, 5)?;
    let (mut isolated_times, mut plain_times) = (Vec::new(), Vec::new());
    for _ in 0..batches {
        isolated_times.push(batch(&mut isolated, tests)?);
        plain_times.push(batch(&mut plain, tests)?);
    }
    let (isolated_ms, plain_ms) = (median(&mut isolated_times), median(&mut plain_times));
    println!(
        "{{\"mode\":\"{}\",\"tests_per_batch\":{tests},\"batches\":{batches},\"isolated_ms_per_test\":{isolated_ms:.3},\"plain_ms_per_test\":{plain_ms:.3},\"ratio\":{:.3}}}",
        sandbox.mode().as_str(),
        isolated_ms / plain_ms
    );
    Ok(())
}
