//! Languages beyond Python (issue 24): what each one is ([`Language`], from the leaf crate
//! `rlvr-language`, which the verifier uses without this one), where its toolchain is
//! ([`Toolchains`]), how a source becomes something to run inside the sandbox ([`Compiler`]:
//! compiled in the sandbox, once per distinct source thanks to a bounded [`CompileCache`]),
//! and the exec supervisor that runs the result once per test in an isolated child
//! ([`Supervisor`]). docs/languages.md has the flags, limits and memory accounting.

#![forbid(unsafe_code)]

mod cache;
mod compile;
mod java;
mod libraries;
mod precompiled;
mod program;
mod run_once;
mod supervisor;
mod toolchain;
mod typescript;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use rlvr_sandbox::{ReadOnlyDirectory, Sandbox};

pub use cache::{CacheKey, Cached, CompileCache, cache_key};
pub use compile::{
    C_FLAGS, CPP_FLAGS, CompileLimits, CompileReport, CompileStatus, DIAGNOSTICS_BYTES,
    JAVAC_FLAGS, PRECOMPILED_IN_SANDBOX, RUST_FLAGS, flags,
};
pub use java::{main_class_in_jar, source_file_class};
pub use libraries::{LIBRARIES, Library};
pub use precompiled::PrecompiledHeaders;
pub use program::{
    ProgramLimits, address_space_limit, data_limit, program_spec, reports_out_of_memory,
    sandbox_memory_bytes,
};
pub use rlvr_language::{CppStandard, Language, LanguageChoice};
pub use run_once::{
    Once, OnceError, OnceLimits, OnceOptions, OnceRun, classify, run_once, run_once_with,
};
pub use supervisor::{Supervisor, SupervisorError};
pub use toolchain::{Toolchain, ToolchainUnavailable, Toolchains};
pub use typescript::{
    TSC_FLAGS, TYPESCRIPT_DIRECTORY, TYPESCRIPT_PACKAGE, compile_typescript, typescript_version,
};

/// The exec supervisor's protocol (the `rlvr-exec-supervisor` crate's library).
pub use rlvr_exec_supervisor as exec_protocol;

/// The exec supervisor program (the `rlvr-exec-supervisor` binary), built statically by
/// `build.rs`.
pub const SUPERVISOR_IMAGE: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/rlvr-exec-supervisor"));

/// Bytes of artifacts and diagnostics the shared compile cache holds.
pub const DEFAULT_CACHE_BYTES: u64 = 512 << 20;

/// Why a source could not be made ready to run (the solution's own failures are in the
/// [`CompileReport`] instead).
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// The language's toolchain is not installed here: `language_unavailable`.
    #[error("{} is unavailable: {}", .0.language, .0.reason)]
    Unavailable(ToolchainUnavailable),
    /// The sandbox failed: `sandbox_error`.
    #[error("the sandbox failed compiling: {0}")]
    Sandbox(rlvr_sandbox::SandboxError),
}

// The cause is in the message (which reaches results as a reason), so not in the chain.
impl From<rlvr_sandbox::SandboxError> for PrepareError {
    fn from(error: rlvr_sandbox::SandboxError) -> Self {
        Self::Sandbox(error)
    }
}

/// Compiles sources for the sandbox, through the cache; shared by every worker.
#[derive(Debug)]
pub struct Compiler {
    toolchains: Toolchains,
    cache: CompileCache,
    precompiled: Option<PrecompiledHeaders>,
}

impl Compiler {
    /// A compiler over `toolchains`, with a cache of `cache_bytes` and, for C++, precompiled
    /// headers in `precompiled` (which sandboxes must see: [`sandbox_directories`]).
    pub fn new(
        toolchains: Toolchains,
        cache_bytes: u64,
        precompiled: Option<PrecompiledHeaders>,
    ) -> Self {
        Self {
            toolchains,
            cache: CompileCache::new(cache_bytes),
            precompiled,
        }
    }

    /// The process's compiler: this machine's toolchains, [`DEFAULT_CACHE_BYTES`], and the
    /// precompiled headers in [`cache_directory`] when it can be created.
    pub fn shared() -> &'static Arc<Compiler> {
        static SHARED: OnceLock<Arc<Compiler>> = OnceLock::new();
        SHARED.get_or_init(|| {
            let precompiled = cache_directory().and_then(|directory| {
                PrecompiledHeaders::new(directory.join("precompiled"))
                    .map_err(|error| tracing::warn!("no precompiled headers: {error}"))
                    .ok()
            });
            Arc::new(Compiler::new(
                Toolchains::shared().clone(),
                DEFAULT_CACHE_BYTES,
                precompiled,
            ))
        })
    }

    /// The warm JVM's harness, compiled in `sandbox` on first use (then from the cache): a jar.
    /// `Ok(None)` when `$RLVR_JAVA_FRESH_JVM` asks for a fresh JVM per test instead.
    pub fn java_harness(&self, sandbox: &Sandbox) -> Result<Option<Arc<[u8]>>, PrepareError> {
        if std::env::var_os("RLVR_JAVA_FRESH_JVM").is_some_and(|value| value == "1") {
            return Ok(None);
        }
        let compiled = self.compile(
            sandbox,
            Language::Java.into(),
            java::HARNESS_SOURCE,
            CompileLimits::default(),
        )?;
        let report = compiled.map(|cached| cached.report);
        match report.as_ref().and_then(|report| report.artifact.clone()) {
            Some(jar) => Ok(Some(jar)),
            None => Err(PrepareError::Sandbox(
                rlvr_sandbox::SandboxError::InvalidRequest {
                    reason: format!(
                        "the Java harness does not compile here: {}",
                        report.map_or_else(String::new, |report| report.summary(500))
                    ),
                },
            )),
        }
    }

    /// The toolchains this compiler uses.
    pub fn toolchains(&self) -> &Toolchains {
        &self.toolchains
    }

    /// The cache's hits and misses so far.
    pub fn cache_statistics(&self) -> (u64, u64) {
        self.cache.statistics()
    }

    /// Compiles `source` as `choice` in `sandbox` (or finds it compiled): the report says
    /// whether it compiled and holds the artifact. Interpreted languages have nothing to
    /// compile: `Ok(None)` once their toolchain is known to be there.
    pub fn compile(
        &self,
        sandbox: &Sandbox,
        choice: LanguageChoice,
        source: &str,
        limits: CompileLimits,
    ) -> Result<Option<Cached>, PrepareError> {
        let toolchain = self
            .toolchains
            .get(choice.language)
            .map_err(|unavailable| PrepareError::Unavailable(unavailable.clone()))?;
        if !choice.language.is_compiled() {
            return Ok(None);
        }
        let key = cache_key(&[
            choice.language.name().as_bytes(),
            choice.cpp_standard.short_name().as_bytes(),
            toolchain.version.as_bytes(),
            flags(choice).as_bytes(),
            source.as_bytes(),
        ]);
        let cached = self.cache.get_or_compile(key, || {
            compile::compile_in_sandbox(
                sandbox,
                choice,
                toolchain,
                source,
                limits,
                self.precompiled.as_ref(),
            )
        })?;
        Ok(Some(cached))
    }
}

/// Where rlvr keeps what it builds for itself (precompiled headers): `$RLVR_CACHE_DIR`, else
/// `/var/cache/rlvr` for root, else `$XDG_CACHE_HOME/rlvr` or `~/.cache/rlvr`.
pub fn cache_directory() -> Option<PathBuf> {
    if let Some(directory) = std::env::var_os("RLVR_CACHE_DIR").filter(|value| !value.is_empty()) {
        return Some(PathBuf::from(directory));
    }
    if rustix::process::geteuid().is_root() {
        return Some(PathBuf::from("/var/cache/rlvr"));
    }
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .map(|directory| directory.join("rlvr"))
}

/// The host directories sandboxes must see, read-only, for every language to work: the JDK's
/// configuration (`/usr/lib/jvm/*/lib/jvm.cfg` is a link into `/etc/java-17-openjdk`) and the
/// precompiled-header cache of [`Compiler::shared`]. Add them to `SandboxConfig`.
pub fn sandbox_directories() -> Vec<ReadOnlyDirectory> {
    let mut directories = Vec::new();
    let java_configuration = PathBuf::from("/etc/java-17-openjdk");
    if java_configuration.is_dir() {
        directories.push(ReadOnlyDirectory {
            host: java_configuration.clone(),
            sandbox: java_configuration,
        });
    }
    if let Some(precompiled) = &Compiler::shared().precompiled {
        directories.push(ReadOnlyDirectory {
            host: precompiled.directory().to_path_buf(),
            sandbox: PathBuf::from(PRECOMPILED_IN_SANDBOX),
        });
    }
    directories
}
