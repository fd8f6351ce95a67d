//! What the exec supervisor starts for each test of a language ([`ProgramSpec`]), and how its
//! memory is accounted (docs/languages.md, "Memory accounting").

use crate::exec_protocol::ProgramSpec;
use crate::toolchain::Toolchain;
use rlvr_language::Language;

/// Limits that shape a program's command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProgramLimits {
    /// The test's memory limit.
    pub memory_bytes: u64,
}

/// The environment every program gets (the sandbox's, without anything of the verifier's).
/// `TZ` because the sandbox has no `/etc/localtime` (a JVM would search the zone database
/// for it, seconds of CPU). `MALLOC_ARENA_MAX`: glibc reserves 64 MiB of address space per
/// malloc arena, up to eight per core, one per thread that allocates; under an address-space
/// limit a JVM (a dozen threads) then cannot start its threads, nor a threaded C++ program.
const ENVIRONMENT: [&str; 7] = [
    "PATH=/usr/local/bin:/usr/bin:/bin",
    "TZ=UTC",
    "MALLOC_ARENA_MAX=2",
    "LANG=C.UTF-8",
    "LC_ALL=C.UTF-8",
    "HOME=/tmp",
    "TMPDIR=/tmp",
];

/// Where Debian installs Node.js modules (`node-lodash`; `scripts/setup`): on `NODE_PATH`, so
/// `require("lodash")` finds them, as in SandboxFusion's image. Under `/usr`, read-only in the
/// sandbox.
pub const NODE_LIBRARIES: &str = "/usr/share/nodejs";

fn environment(extra: &[String]) -> Vec<Vec<u8>> {
    ENVIRONMENT
        .iter()
        .map(|variable| variable.as_bytes().to_vec())
        .chain(extra.iter().map(|variable| variable.as_bytes().to_vec()))
        .collect()
}

/// The program for `language`: a compiled `artifact` exec'd from a sealed memory file, or the
/// interpreter with the `source` as descriptor 3; for Java, with the compiled harness
/// (`java_harness`, from [`crate::Compiler::java_harness`]), one warm JVM per job, without
/// it a fresh JVM per test. `None` for Python (the Python runner's).
pub fn program_spec(
    language: Language,
    toolchain: &Toolchain,
    artifact: Option<&[u8]>,
    source: &str,
    limits: ProgramLimits,
    java_harness: Option<&[u8]>,
) -> Option<ProgramSpec> {
    match language {
        Language::Cpp | Language::C | Language::Rust => Some(ProgramSpec {
            image: artifact?.to_vec(),
            path: Vec::new(),
            arguments: vec![b"./main".to_vec()],
            environment: environment(&[]),
            files: Vec::new(),
            persistent: false,
        }),
        // Go's runtime reserves more address space than it uses (its start-up fails under a
        // 256 MiB RLIMIT_AS): no address-space limit, the cgroup bounds memory, and
        // GOMEMLIMIT makes the collector work to stay under the test's limit.
        Language::Go => Some(ProgramSpec {
            image: artifact?.to_vec(),
            path: Vec::new(),
            arguments: vec![b"./main".to_vec()],
            environment: environment(&[format!("GOMEMLIMIT={}MiB", limits.memory_bytes >> 20)]),
            files: Vec::new(),
            persistent: false,
        }),
        Language::JavaScript => {
            // V8's old generation sized to the limit: a program that grows past it gets
            // Node's own "heap out of memory" instead of the cgroup's kill.
            let heap_megabytes = (limits.memory_bytes >> 20).max(64);
            Some(ProgramSpec {
                image: Vec::new(),
                path: toolchain.executable.as_os_str().as_encoded_bytes().to_vec(),
                arguments: vec![
                    b"node".to_vec(),
                    format!("--max-old-space-size={heap_megabytes}").into_bytes(),
                    b"--stack-size=30000".to_vec(),
                    b"--preserve-symlinks-main".to_vec(),
                    b"/proc/self/fd/3".to_vec(),
                ],
                environment: environment(&[format!("NODE_PATH={NODE_LIBRARIES}")]),
                files: vec![source.as_bytes().to_vec()],
                persistent: false,
            })
        }
        Language::Java => {
            let runtime = toolchain.runtime.as_ref()?;
            // The class with `public static void main(String[])` in what javac made (a comment
            // or a nested class naming another does not count); without one, the source
            // file's class, for `java`'s own "main method not found" message.
            let main = crate::java::main_class_in_jar(artifact?)
                .unwrap_or_else(|| crate::java::source_file_class(source));
            let heap_megabytes = (limits.memory_bytes >> 20).max(64);
            let mut arguments: Vec<Vec<u8>> = vec![b"java".to_vec()];
            arguments.extend(
                crate::java::jvm_flags(heap_megabytes, java_harness.is_some())
                    .into_iter()
                    .map(String::into_bytes),
            );
            let files = match java_harness {
                // The harness on the class path (descriptor 3), the job's jar (4) and the
                // libraries loaded afresh for every test.
                Some(harness) => {
                    arguments.extend([
                        b"-cp".to_vec(),
                        b"/proc/self/fd/3".to_vec(),
                        crate::java::HARNESS_CLASS.as_bytes().to_vec(),
                        main.into_bytes(),
                        b"/proc/self/fd/4".to_vec(),
                    ]);
                    arguments.extend(
                        crate::java::LIBRARY_JARS
                            .iter()
                            .map(|jar| jar.as_bytes().to_vec()),
                    );
                    vec![harness.to_vec(), artifact?.to_vec()]
                }
                None => {
                    arguments.extend([
                        b"-cp".to_vec(),
                        crate::java::class_path("/proc/self/fd/3").into_bytes(),
                        main.into_bytes(),
                    ]);
                    vec![artifact?.to_vec()]
                }
            };
            Some(ProgramSpec {
                image: Vec::new(),
                path: runtime.as_os_str().as_encoded_bytes().to_vec(),
                arguments,
                environment: environment(&[]),
                files,
                persistent: java_harness.is_some(),
            })
        }
        Language::Python => None,
    }
}

/// The address-space limit (`RLIMIT_AS`) of a test of `language` whose memory limit is
/// `memory_bytes`: the limit itself for native programs (as Python's tests, Klear's 1 GiB
/// address space), none where a runtime reserves far more address space than it uses (Go's
/// arenas, the JVM's class space and code cache, V8's pointer cage): there the sandbox's cgroup
/// (without one, the supervisor's own address-space limit) bounds the memory actually used,
/// and the runtime's own heap limit is set to the test's limit (`GOMEMLIMIT`, `-Xmx`,
/// `--max-old-space-size`).
pub fn address_space_limit(language: Language, memory_bytes: u64) -> u64 {
    match language {
        Language::Cpp | Language::C | Language::Rust => memory_bytes,
        Language::Go | Language::Java | Language::JavaScript | Language::Python => 0,
    }
}

/// The memory of a job's supervisor sandbox (its cgroup's limit, or without a cgroup every
/// process's address space) for tests limited to `test_memory_bytes`: at least 1 GiB of test
/// memory, plus 512 MiB of headroom for a native program (as the Python runner gets), 1 GiB for
/// a runtime that reserves far more address space than it uses (the JVM reserves its heap plus
/// about 700 MiB; measured: a JVM with `-Xmx512m` cannot start its threads in 1.5 GiB). Those
/// runtimes' real use is bounded per process by `RLIMIT_DATA` (Go, Node.js) or `-Xmx` (Java).
pub fn sandbox_memory_bytes(language: Language, test_memory_bytes: u64) -> u64 {
    let headroom: u64 = match language {
        Language::Go | Language::Java | Language::JavaScript => 1 << 30,
        Language::Cpp | Language::C | Language::Rust | Language::Python => 512 << 20,
    };
    test_memory_bytes.max(1 << 30).saturating_add(headroom)
}

/// The committed-memory limit (`RLIMIT_DATA`) of a test of `language`: for the runtimes that
/// reserve far more address space than they use (and so get no address-space limit), their
/// writable private memory is bounded instead: Go's heap at the test's limit, V8's with room
/// for Node itself besides the heap its flag bounds to the limit. Not the JVM's: every Java
/// thread's stack (`-Xss64m`) counts as data, so a limit tight enough to mean anything fails
/// its start-up; `-Xmx` bounds its heap, the cgroup (or the supervisor's address space) the rest.
pub fn data_limit(language: Language, memory_bytes: u64) -> u64 {
    match language {
        Language::Go => memory_bytes,
        Language::JavaScript => memory_bytes.saturating_add(128 << 20),
        Language::Java | Language::Cpp | Language::C | Language::Rust | Language::Python => 0,
    }
}

/// Whether a test's standard error says its runtime ran out of memory (a failed allocation
/// under `RLIMIT_AS`, or a runtime's own heap limit): the test's `memory_limit`, as Python's
/// `MemoryError` is.
pub fn reports_out_of_memory(language: Language, stdout: &[u8], stderr: &[u8]) -> bool {
    // The JVM's fatal-error report goes to stdout whatever its flags say.
    if language == Language::Java
        && String::from_utf8_lossy(&stdout[..stdout.len().min(4096)])
            .contains("insufficient memory for the Java Runtime Environment")
    {
        return true;
    }
    // Anywhere in what was kept (Go prints its stack traces after the message); a program
    // that prints a signature itself fails either way.
    let tail = String::from_utf8_lossy(stderr);
    let signatures: &[&str] = match language {
        Language::Cpp => &["std::bad_alloc"],
        Language::C => &[],
        Language::Java => &[
            "java.lang.OutOfMemoryError: Java heap space",
            "java.lang.OutOfMemoryError: GC overhead",
            "java.lang.OutOfMemoryError: Metaspace",
            "java.lang.OutOfMemoryError: Requested array size",
            "insufficient memory for the Java Runtime Environment",
        ],
        Language::JavaScript => &[
            "JavaScript heap out of memory",
            "Fatal process out of memory",
        ],
        Language::Go => &["runtime: out of memory", "fatal error: out of memory"],
        Language::Rust => &["memory allocation of"],
        Language::Python => &["MemoryError"],
    };
    signatures.iter().any(|signature| tail.contains(signature))
}
