//! Builds the exec supervisor (`supervisor/main.rs` and its modules) with the same `rustc` cargo uses: std
//! only, optimised, statically linked, so it runs inside the sandbox's minimal root whatever
//! the host's libraries. The crate embeds the result (`include_bytes!`).

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let source = PathBuf::from("supervisor/main.rs");
    // The supervisor is main.rs and the modules next to it: any file there rebuilds it.
    println!("cargo::rerun-if-changed=supervisor");
    println!("cargo::rerun-if-changed=src/exec_protocol.rs");
    println!("cargo::rerun-if-changed=../rlvr-sandbox/src/test_child_steps.txt");
    let output = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("rlvr-exec-supervisor");
    let compiler = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let target = std::env::var("TARGET").expect("cargo sets TARGET");
    let mut command = Command::new(compiler);
    // The supervisor is linked statically against glibc. A native build uses the system's `cc`
    // (rustc's default); a cross build (the aarch64 wheel) needs a linker with the target's
    // static glibc: `RLVR_SUPERVISOR_LINKER`, or Debian's cross compiler name
    // (`gcc-aarch64-linux-gnu` with `libc6-dev-arm64-cross`). The wheel's own linker (maturin's
    // zig) cannot link glibc statically.
    println!("cargo::rerun-if-env-changed=RLVR_SUPERVISOR_LINKER");
    let host = std::env::var("HOST").expect("cargo sets HOST");
    let linker = std::env::var_os("RLVR_SUPERVISOR_LINKER").or_else(|| {
        (target != host).then(|| {
            let architecture = target.split('-').next().unwrap_or_default();
            format!("{architecture}-linux-gnu-gcc").into()
        })
    });
    if let Some(linker) = linker {
        let mut argument = std::ffi::OsString::from("linker=");
        argument.push(linker);
        command.arg("-C").arg(argument);
    }
    let status = command
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
