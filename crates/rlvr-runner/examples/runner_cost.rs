//! What the runner costs on its own (issue 33), without a sandbox: its start-up (from spawning
//! the interpreter to the answer to its first `load`, which includes forking the job process),
//! the template's anonymous memory then (every job process and test child is forked from it),
//! and the round trip of one test of W1's "read two ints, print their sum" program. Prints one
//! JSON object of medians. Built once per version of the embedded Python, two builds can be run
//! in turn so that the machine's load affects both alike.
//!
//! `RLVR_PYTHON=$(scripts/python-path) cargo run --release -p rlvr-runner --example runner_cost -- [STARTS] [TESTS]`

use std::os::fd::OwnedFd;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rlvr_runner::{Runner, TestLimits};

const SOURCE: &str = "a, b = map(int, input().split())\nprint(a + b)";
const LIMITS: TestLimits = TestLimits {
    wall_ms: 10_000,
    cpu_seconds: 10,
    output_bytes: 1 << 20,
    address_space_bytes: 0,
};

fn start() -> Result<(Child, Runner), Box<dyn std::error::Error>> {
    let python = std::env::var("RLVR_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let mut child = Command::new(python)
        .args(rlvr_runner::interpreter_arguments())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("no pipes".into());
    };
    Ok((
        child,
        Runner::new(OwnedFd::from(stdin), OwnedFd::from(stdout)),
    ))
}

/// The anonymous memory of a process, in KiB (`RssAnon` in its status).
fn anonymous_kib(pid: u32) -> Result<u64, Box<dyn std::error::Error>> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let line = status
        .lines()
        .find_map(|line| line.strip_prefix("RssAnon:"))
        .ok_or("no RssAnon")?;
    Ok(line.trim().trim_end_matches("kB").trim().parse()?)
}

fn median(samples: &mut [Duration]) -> f64 {
    samples.sort();
    samples[samples.len() / 2].as_secs_f64() * 1e3
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut arguments = std::env::args().skip(1);
    let starts: usize = arguments.next().map_or(Ok(30), |text| text.parse())?;
    let tests: usize = arguments.next().map_or(Ok(500), |text| text.parse())?;
    let mut start_times = Vec::new();
    let mut memory = Vec::new();
    for _ in 0..starts {
        let started = Instant::now();
        let (mut child, mut runner) = start()?;
        let report = runner.load(&["pass"], "solution.py", &[], None)?;
        start_times.push(started.elapsed());
        if !report.ok {
            return Err(format!("load failed: {report:?}").into());
        }
        memory.push(anonymous_kib(child.id())?);
        runner.exit()?;
        child.wait()?;
    }
    let (mut child, mut runner) = start()?;
    runner.load(&[SOURCE], "solution.py", &[], None)?;
    let mut test_times = Vec::new();
    for index in 0..tests {
        let started = Instant::now();
        let report = runner.run_test(format!("{index} 1\n").as_bytes(), None, LIMITS)?;
        test_times.push(started.elapsed());
        if report.stdout != format!("{}\n", index + 1).as_bytes() {
            return Err(format!("wrong output: {report:?}").into());
        }
    }
    runner.exit()?;
    child.wait()?;
    memory.sort_unstable();
    println!(
        "{{\"starts\":{starts},\"start_ms\":{:.2},\"template_anonymous_kib\":{},\"tests\":{tests},\"test_ms\":{:.3}}}",
        median(&mut start_times),
        memory[memory.len() / 2],
        median(&mut test_times),
    );
    Ok(())
}
