//! Setting up the sandbox, the same way for every command that runs programs (`run`, `verify`,
//! `serve`, `check-checker`, `redteam`, `doctor`): its settings from the environment, starting
//! it with the one exit status for "this machine cannot provide the protections asked for", and
//! the probe of the modules the Klear profile needs. Commands use this, never each other.

use rlvr_sandbox::{RunRequest, Sandbox, SandboxConfig};

use crate::exit::Error;

fn uid_from_environment(name: &str) -> Result<Option<u32>, Error> {
    let Some(value) = std::env::var_os(name) else {
        return Ok(None);
    };
    let uid = value
        .to_str()
        .and_then(|text| text.parse().ok())
        .filter(|&uid: &u32| uid != 0)
        .ok_or_else(|| Error::usage(format!("{name} must be a non-zero uid")))?;
    Ok(Some(uid))
}

/// The sandbox settings of every command that runs programs: `RLVR_SANDBOX_UID` picks the
/// host uid and gid programs run as when rlvr runs as root (default 65534, `nobody`),
/// `RLVR_SANDBOX_RUNNER_UID` the warm runner's (default 65533, or 65532 when that is the
/// program uid). Without root both are ignored: the caller's ids are used.
pub(crate) fn sandbox_config(allow_degraded: bool) -> Result<SandboxConfig, Error> {
    let mut config = SandboxConfig {
        allow_degraded,
        // The JDK's configuration and the precompiled-header cache (issue 24).
        read_only_directories: rlvr_languages::sandbox_directories(),
        ..SandboxConfig::default()
    };
    if let Some(uid) = uid_from_environment("RLVR_SANDBOX_UID")? {
        config.uid = uid;
        config.gid = uid;
    }
    let runner = uid_from_environment("RLVR_SANDBOX_RUNNER_UID")?
        .unwrap_or(if config.uid == 65533 { 65532 } else { 65533 });
    if runner == config.uid {
        return Err(Error::usage(
            "RLVR_SANDBOX_RUNNER_UID must differ from RLVR_SANDBOX_UID",
        ));
    }
    config.runner_uid = runner;
    config.runner_gid = runner;
    Ok(config)
}

/// Starts the sandbox; a failure is [`Error::SandboxUnavailable`] (exit 3).
pub(crate) fn start_sandbox(allow_degraded: bool) -> Result<Sandbox, Error> {
    let config = sandbox_config(allow_degraded)?;
    Sandbox::new(config)
        .map_err(|error| Error::sandbox_unavailable("the sandbox cannot start", error))
}

/// The Klear prefix imports numpy and pandas; without them every functional test would fail
/// silently, so refuse instead.
pub(crate) fn require_scientific_modules(sandbox: &Sandbox) -> Result<(), Error> {
    let probe = sandbox
        .run(&RunRequest::python("import numpy, pandas"))
        .map_err(Error::Sandbox)?;
    if probe.exit_code != Some(0) {
        let reason = String::from_utf8_lossy(&probe.stderr);
        let last = reason.trim_end().lines().last().unwrap_or("import failed");
        return Err(Error::SandboxUnavailable {
            message: format!(
                "the klear profile imports numpy and pandas in every functional test, but the sandbox \
                 interpreter {} cannot ({last}); install them (scripts/setup does) or pick another profile",
                sandbox.interpreter().host_executable.display()
            ),
            source: None,
        });
    }
    Ok(())
}
