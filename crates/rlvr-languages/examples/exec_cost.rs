//! Per-test cost of the exec supervisor: `cargo run --release -p rlvr-languages --example
//! exec_cost -- BINARY [TESTS]` runs a host-built binary TESTS times with "3 4" as input.

use std::time::Instant;

use rlvr_languages::Supervisor;
use rlvr_languages::exec_protocol::{ProgramSpec, RunSpec};
use rlvr_sandbox::{ResourceLimits, Sandbox, SandboxConfig};

fn main() {
    let mut arguments = std::env::args().skip(1);
    let binary = arguments.next().expect("a binary");
    let tests: usize = arguments
        .next()
        .map_or(1000, |count| count.parse().expect("a count"));
    let sandbox = Sandbox::new(SandboxConfig::default()).expect("sandbox");
    let limits = ResourceLimits {
        memory_bytes: 2 << 30,
        cpu: std::time::Duration::from_secs(3600),
        pids: 256,
        ..ResourceLimits::default()
    };
    let started = Instant::now();
    let mut supervisor = Supervisor::start(&sandbox, limits).expect("start");
    supervisor
        .load(&ProgramSpec {
            image: std::fs::read(&binary).expect("binary"),
            arguments: vec![b"./main".to_vec()],
            environment: vec![b"PATH=/usr/bin:/bin".to_vec()],
            ..ProgramSpec::default()
        })
        .expect("load");
    println!("start + load: {:?}", started.elapsed());
    let test = RunSpec {
        stdin: b"3 4\n".to_vec(),
        wall_ms: 10_000,
        cpu_seconds: 10,
        output_bytes: 1 << 20,
        address_space_bytes: 1 << 30,
        data_bytes: 0,
        empty_work_directory: true,
        files: Vec::new(),
    };
    let report = supervisor.run(&test).expect("run");
    println!("{report:?}");
    let started = Instant::now();
    for _ in 0..tests {
        let report = supervisor.run(&test).expect("run");
        assert_eq!(report.stdout, b"7\n", "{report:?}");
    }
    let elapsed = started.elapsed();
    println!(
        "{tests} tests: {:.3} ms per test",
        elapsed.as_secs_f64() * 1000.0 / tests as f64
    );
    supervisor.finish();
}
