//! Builds the exec supervisor (the workspace's `rlvr-exec-supervisor` binary) for the target,
//! statically linked, so it runs inside the sandbox's minimal root whatever the host's
//! libraries; the crate embeds the result (`include_bytes!`).
//!
//! A build script cannot depend on a binary (cargo's artifact dependencies are unstable), so
//! this one runs the cargo that runs it: the `exec-supervisor` profile, `+crt-static` for the
//! target only (build scripts and proc macros stay dynamic), and a target directory of its own
//! (the outer cargo holds the lock of its own), shared by every build of this crate. It shares the outer build's
//! jobserver (`CARGO_MAKEFLAGS`), so the two together use the cores they were given.

use std::path::{Path, PathBuf};
use std::process::Command;

fn environment(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("cargo sets {name}"))
}

fn main() {
    let manifest = PathBuf::from(environment("CARGO_MANIFEST_DIR"));
    let workspace = manifest
        .parent()
        .and_then(Path::parent)
        .expect("the crate is in crates/ of the workspace");
    // The supervisor, the codec it speaks, the list of a test child's steps it follows, and the
    // lock file and profile that build them.
    for input in [
        "crates/rlvr-exec-supervisor",
        "crates/rlvr-frame",
        "crates/rlvr-sandbox/src/test_child_steps.txt",
        "Cargo.lock",
        "Cargo.toml",
    ] {
        println!(
            "cargo::rerun-if-changed={}",
            workspace.join(input).display()
        );
    }
    println!("cargo::rerun-if-env-changed=RLVR_SUPERVISOR_LINKER");
    let output = PathBuf::from(environment("OUT_DIR"));
    // One supervisor build for every profile and lint run of this crate: a directory beside
    // the outer build's (cargo marks its target directory's root with CACHEDIR.TAG), else
    // under OUT_DIR.
    let target_directory = output
        .ancestors()
        .find(|directory| directory.join("CACHEDIR.TAG").is_file())
        .unwrap_or(&output)
        .join("exec-supervisor");
    let target = environment("TARGET");
    let host = environment("HOST");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .args(["build", "--locked", "--quiet"])
        .args([
            "--package",
            "rlvr-exec-supervisor",
            "--bin",
            "rlvr-exec-supervisor",
        ])
        .args(["--profile", "exec-supervisor", "--target", &target])
        .arg("--manifest-path")
        .arg(workspace.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target_directory)
        // Flags for the target's units only (with `--target`, not for build scripts).
        .env("CARGO_ENCODED_RUSTFLAGS", "-Ctarget-feature=+crt-static")
        .env_remove("RUSTFLAGS")
        // `cargo clippy` lints the supervisor as a workspace member already.
        .env_remove("RUSTC_WORKSPACE_WRAPPER");
    // glibc linked statically: a native build uses the system's `cc` (rustc's default); a cross
    // build (the aarch64 wheel) needs a linker with the target's static glibc:
    // `RLVR_SUPERVISOR_LINKER`, or Debian's cross compiler name (`gcc-aarch64-linux-gnu` with
    // `libc6-dev-arm64-cross`). The wheel's own linker (maturin's zig) cannot link glibc
    // statically.
    let linker = std::env::var_os("RLVR_SUPERVISOR_LINKER").or_else(|| {
        (target != host).then(|| {
            let architecture = target.split('-').next().unwrap_or_default();
            format!("{architecture}-linux-gnu-gcc").into()
        })
    });
    if let Some(linker) = linker {
        let variable = format!(
            "CARGO_TARGET_{}_LINKER",
            target.to_uppercase().replace(['-', '.'], "_")
        );
        command.env(variable, linker);
    }
    let status = command.status().expect("cargo starts");
    assert!(status.success(), "building the exec supervisor failed");
    let built = target_directory
        .join(&target)
        .join("exec-supervisor")
        .join("rlvr-exec-supervisor");
    std::fs::copy(&built, output.join("rlvr-exec-supervisor"))
        .unwrap_or_else(|error| panic!("copying {}: {error}", built.display()));
}
