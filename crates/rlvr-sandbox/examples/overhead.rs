//! Isolation overhead benchmark: plain `std::process::Command` spawn vs [`Sandbox::run`] of the
//! same program, interleaved sample by sample so machine load affects both equally. Prints one
//! JSON line per program with medians in microseconds.
//!
//! `cargo run --release -p rlvr-sandbox --example overhead -- [SAMPLES]`

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rlvr_sandbox::{
    Program, ResourceLimits, RunRequest, RunVerdict, Sandbox, SandboxConfig, Stdin,
};

fn median(samples: &mut [Duration]) -> f64 {
    samples.sort();
    samples[samples.len() / 2].as_secs_f64() * 1e6
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let samples: usize = std::env::args()
        .nth(1)
        .map_or(Ok(300), |text| text.parse())?;
    let sandbox = Sandbox::new(SandboxConfig::default())?;
    let host_python = sandbox.interpreter().host_executable.clone();
    let sandbox_python = sandbox.python_path().to_path_buf();
    let programs: [(&str, Vec<String>, Vec<String>); 2] = [
        (
            "true",
            vec!["/usr/bin/true".into()],
            vec!["/usr/bin/true".into()],
        ),
        (
            "python -I -S -c pass",
            vec![
                host_python.display().to_string(),
                "-I".into(),
                "-S".into(),
                "-c".into(),
                "pass".into(),
            ],
            vec![
                sandbox_python.display().to_string(),
                "-I".into(),
                "-S".into(),
                "-c".into(),
                "pass".into(),
            ],
        ),
    ];
    for (name, plain_argv, sandbox_argv) in programs {
        let request = RunRequest {
            program: Program::Command { argv: sandbox_argv },
            stdin: Stdin::Empty,
            limits: ResourceLimits::default(),
            files: Vec::new(),
            network: rlvr_sandbox::Network::Isolated,
        };
        let mut plain = Vec::with_capacity(samples);
        let mut sandboxed = Vec::with_capacity(samples);
        for index in 0..samples + 10 {
            let started = Instant::now();
            let output = Command::new(&plain_argv[0])
                .args(&plain_argv[1..])
                .env_clear()
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .output()?;
            let plain_time = started.elapsed();
            assert!(output.status.success());
            let started = Instant::now();
            let outcome = sandbox.run(&request)?;
            let sandbox_time = started.elapsed();
            assert_eq!(
                outcome.verdict,
                RunVerdict::Ok,
                "{}",
                String::from_utf8_lossy(&outcome.stderr)
            );
            if index >= 10 {
                plain.push(plain_time);
                sandboxed.push(sandbox_time);
            }
        }
        let plain_median = median(&mut plain);
        let sandbox_median = median(&mut sandboxed);
        println!(
            "{{\"program\":{name:?},\"samples\":{samples},\"plain_us\":{plain_median:.0},\"sandbox_us\":{sandbox_median:.0},\"overhead_us\":{:.0},\"ratio\":{:.2}}}",
            sandbox_median - plain_median,
            sandbox_median / plain_median
        );
    }
    Ok(())
}
