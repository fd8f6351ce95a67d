//! Builds the exec supervisor (`supervisor/main.rs`) with the same `rustc` cargo uses: std
//! only, optimised, statically linked, so it runs inside the sandbox's minimal root whatever
//! the host's libraries. The crate embeds the result (`include_bytes!`).

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let source = PathBuf::from("supervisor/main.rs");
    println!("cargo::rerun-if-changed=supervisor/main.rs");
    println!("cargo::rerun-if-changed=src/exec_protocol.rs");
    let output = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("rlvr-exec-supervisor");
    let compiler = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let target = std::env::var("TARGET").expect("cargo sets TARGET");
    let status = Command::new(compiler)
        .args([
            "--edition",
            "2024",
            "--crate-type",
            "bin",
            "--target",
            &target,
        ])
        .args([
            "-C",
            "opt-level=2",
            "-C",
            "panic=abort",
            "-C",
            "debuginfo=0",
        ])
        .args(["-C", "strip=symbols", "-C", "target-feature=+crt-static"])
        .args(["-D", "warnings", "-o"])
        .arg(&output)
        .arg(&source)
        .status()
        .expect("rustc starts");
    assert!(status.success(), "building the exec supervisor failed");
}
