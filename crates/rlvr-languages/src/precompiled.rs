//! A precompiled `bits/stdc++.h` per g++ version and standard: most competitive C++ starts
//! with `#include <bits/stdc++.h>`, whose parse is about two thirds of a typical compile (1.2 s
//! without, 0.4 s with, measured here). Built once on the host from the system's own header and
//! our fixed flags (no input from any response), stored in a cache directory that every
//! sandbox sees read-only at [`PRECOMPILED_IN_SANDBOX`](crate::PRECOMPILED_IN_SANDBOX). g++ uses
//! it only when it is valid for the compile (same flags, first include); otherwise it reads the
//! header as usual, so a stale or missing file costs time, never correctness.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use crate::compile::CPP_FLAGS;
use crate::toolchain::Toolchain;
use rlvr_language::CppStandard;

/// The cache of precompiled headers, in a host directory.
#[derive(Debug)]
pub struct PrecompiledHeaders {
    directory: PathBuf,
    /// Per key, whether its header is usable (a failed build is not retried).
    built: Mutex<HashMap<String, bool>>,
}

impl PrecompiledHeaders {
    /// A cache in `directory` (created, world-readable: sandboxed compilers run as another
    /// uid).
    pub fn new(directory: PathBuf) -> std::io::Result<Self> {
        use std::os::unix::fs::PermissionsExt;
        fs_create_dir_all(&directory)?;
        std::fs::set_permissions(&directory, std::fs::Permissions::from_mode(0o755))?;
        Ok(Self {
            directory,
            built: Mutex::new(HashMap::new()),
        })
    }

    /// The host directory.
    pub fn directory(&self) -> &Path {
        &self.directory
    }

    /// The subdirectory holding `bits/stdc++.h.gch` for this toolchain and standard, built
    /// now if it is not there yet; `None` when it cannot be built (compiles go on without).
    pub fn ensure(&self, toolchain: &Toolchain, standard: CppStandard) -> Option<String> {
        let mut hash = Sha256::new();
        for part in [toolchain.version.as_str(), standard.flag(), CPP_FLAGS] {
            hash.update(part.as_bytes());
            hash.update([0]);
        }
        let key = format!(
            "{}-{}",
            standard.short_name(),
            &hex_string(&hash.finalize())[..16]
        );
        let mut built = self
            .built
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        if let Some(&usable) = built.get(&key) {
            return usable.then_some(key);
        }
        let target = self.directory.join(&key);
        let usable = target.join("bits/stdc++.h.gch").is_file() || {
            match build(toolchain, standard, &self.directory, &target) {
                Ok(()) => true,
                Err(error) => {
                    tracing::warn!("no precompiled bits/stdc++.h for {key}: {error}");
                    false
                }
            }
        };
        built.insert(key.clone(), usable);
        usable.then_some(key)
    }
}

fn hex_string(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn fs_create_dir_all(path: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(path)
        .map_err(|error| std::io::Error::new(error.kind(), format!("{}: {error}", path.display())))
}

/// Builds the header in a temporary directory beside `target`, then renames it into place
/// (another process building the same key at the same time leaves one of the two).
fn build(
    toolchain: &Toolchain,
    standard: CppStandard,
    directory: &Path,
    target: &Path,
) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let temporary = directory.join(format!(".building-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&temporary);
    fs_create_dir_all(&temporary.join("bits"))?;
    let wrapper = temporary.join("wrapper.h");
    std::fs::write(&wrapper, "#include <bits/stdc++.h>\n")?;
    let output = temporary.join("bits/stdc++.h.gch");
    let result = Command::new(&toolchain.executable)
        .arg(standard.flag())
        .args(CPP_FLAGS.split_whitespace())
        .args(["-x", "c++-header"])
        .arg(&wrapper)
        .arg("-o")
        .arg(&output)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()?;
    std::fs::remove_file(&wrapper)?;
    if !result.status.success() {
        let _ = std::fs::remove_dir_all(&temporary);
        return Err(std::io::Error::other(format!(
            "g++ exited with {}: {}",
            result.status,
            String::from_utf8_lossy(&result.stderr).trim()
        )));
    }
    for (path, mode) in [
        (&temporary, 0o755),
        (&temporary.join("bits"), 0o755),
        (&output, 0o644),
    ] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
    }
    if std::fs::rename(&temporary, target).is_err() {
        // Someone else got there first: theirs is as good.
        let _ = std::fs::remove_dir_all(&temporary);
    }
    if target.join("bits/stdc++.h.gch").is_file() {
        Ok(())
    } else {
        Err(std::io::Error::other(
            "the header is not in place after building it",
        ))
    }
}
