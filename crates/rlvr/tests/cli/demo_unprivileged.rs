//! Issue 15: `scripts/demo` works as an ordinary user: it skips the system setup, and the
//! sandbox runs in user-namespace mode. The demo runs from a checkout the user owns (a copy of
//! the files it needs) with the binary under test.

use std::path::Path;

use crate::support::{Caller, Mode};

#[test]
fn issue_15_the_demo_runs_without_root() {
    let Some(caller) = Caller::new(Mode::UserNamespace, 62097) else {
        return;
    };
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let checkout = caller.directory.path();
    for relative in ["scripts/demo", "scripts/python-path", "examples/jobs.jsonl"] {
        let target = checkout.join(relative);
        std::fs::create_dir_all(target.parent().expect("parent")).expect("mkdir");
        std::fs::copy(repository.join(relative), &target).expect("copy");
        std::os::unix::fs::chown(&target, Some(caller.uid), Some(caller.uid)).expect("chown");
    }
    for directory in ["scripts", "examples"] {
        std::os::unix::fs::chown(checkout.join(directory), Some(caller.uid), Some(caller.uid))
            .expect("chown");
    }
    let demo = checkout.join("scripts/demo");
    let output = caller
        .program(demo.to_str().expect("utf-8"), &[])
        .env("RLVR_BIN", env!("CARGO_BIN_EXE_rlvr"))
        .output()
        .expect("run the demo");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("mode: user namespace (no root needed)"),
        "{stdout}"
    );
    assert!(stdout.contains("skipping scripts/setup"), "{stdout}");
    // Both profiles scored every example job.
    let results = stdout
        .lines()
        .filter(|line| line.starts_with("{\"id\""))
        .count();
    assert_eq!(results, 12, "{stdout}\n{stderr}");
    // The system interpreter's numpy and pandas (Debian's dist-packages) import in the runner.
    assert!(!stdout.contains("sandbox_error"), "{stdout}\n{stderr}");
    assert!(checkout.join("sample/code-rlvr-sample.jsonl").exists());
}
