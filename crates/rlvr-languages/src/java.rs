//! Java specifics: the class a source's file must be named after, the JVM's flags, and the
//! harness of the warm JVM (`java/RlvrHarness.java`).

/// The warm JVM's harness (docs/languages.md, "Java: one warm JVM per job"), compiled once per
/// process in the sandbox like any source ([`crate::Compiler::java_harness`]).
pub const HARNESS_SOURCE: &str = include_str!("../java/RlvrHarness.java");
/// Its class.
pub const HARNESS_CLASS: &str = "RlvrHarness";

/// The JVM's flags for a test whose memory limit is `heap_megabytes`. Memory accounting: the
/// heap (`-Xmx`) is the test's limit; what the JVM needs besides (class metadata, JIT code,
/// thread stacks, about 40 to 100 MB) is bounded by the sandbox's cgroup, which allows the
/// test's limit plus the runner headroom (512 MiB); the heap starts small (`-Xms16m`) and
/// grows. The class space and code cache are
/// reserved small so the JVM also starts under an address-space limit (no cgroup). One
/// garbage-collector thread (serial GC) and no performance-data file in `/tmp`.
///
/// A fresh JVM per test runs `main` on the launcher's thread, whose stack is `-Xss64m`; the
/// warm JVM's harness gives each test's `main` thread a 64 MiB stack itself and leaves the
/// JVM's own threads at their default (each Java thread's stack is reserved address space: at
/// 64 MiB apiece a JVM with `-Xmx1g` did not fit in 2 GiB, measured).
pub fn jvm_flags(heap_megabytes: u64, warm: bool) -> Vec<String> {
    let mut flags = vec![
        format!("-Xmx{heap_megabytes}m"),
        "-Xms16m".to_owned(),
        "-XX:+UseSerialGC".to_owned(),
        "-XX:-UsePerfData".to_owned(),
        "-XX:CompressedClassSpaceSize=64m".to_owned(),
        "-XX:ReservedCodeCacheSize=64m".to_owned(),
        "-XX:MaxMetaspaceSize=256m".to_owned(),
        "-Xshare:auto".to_owned(),
        // The JVM's own messages (a fatal out-of-memory) go to stderr, not the answer.
        "-XX:+DisplayVMOutputToStderr".to_owned(),
        "-XX:ErrorFile=/dev/null".to_owned(),
        "-Dfile.encoding=UTF-8".to_owned(),
    ];
    if !warm {
        flags.push("-Xss64m".to_owned());
    }
    flags
}

/// The class `javac` wants the file named after: the first top-level `public class` (or
/// `public final`/`abstract` class), else `Main` (SandboxFusion's and most judges' name).
pub fn main_class(source: &str) -> String {
    let words: Vec<&str> = source
        .split(|character: char| {
            !(character.is_alphanumeric() || character == '_' || character == '$')
        })
        .filter(|word| !word.is_empty())
        .collect();
    for (index, window) in words.windows(2).enumerate() {
        if window[0] != "public" {
            continue;
        }
        let mut position = index + 1;
        while words
            .get(position)
            .is_some_and(|word| matches!(*word, "final" | "abstract" | "static" | "strictfp"))
        {
            position += 1;
        }
        if words.get(position) == Some(&"class")
            && let Some(name) = words.get(position + 1)
            && name
                .chars()
                .next()
                .is_some_and(|first| first.is_alphabetic() || first == '_')
        {
            return (*name).to_owned();
        }
    }
    "Main".to_owned()
}

/// A jar (a zip of stored entries, no manifest: the main class is named on the command line)
/// of the regular files of a tar stream, in the stream's order.
pub fn jar_from_tar(tar_bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::{Read, Write};
    let mut archive = tar::Archive::new(tar_bytes);
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .last_modified_time(zip::DateTime::default());
    for entry in archive.entries()? {
        let mut entry = entry?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry.path()?.to_string_lossy().into_owned();
        let name = path.trim_start_matches("./").to_owned();
        let mut contents = Vec::new();
        entry.read_to_end(&mut contents)?;
        writer
            .start_file(name, options)
            .map_err(std::io::Error::other)?;
        writer.write_all(&contents)?;
    }
    Ok(writer.finish().map_err(std::io::Error::other)?.into_inner())
}

#[cfg(test)]
mod tests {
    use super::main_class;

    #[test]
    fn the_public_class_names_the_file() {
        assert_eq!(
            main_class("import java.util.*;\npublic class Solution {}"),
            "Solution"
        );
        assert_eq!(main_class("public final class A_1 { }"), "A_1");
        assert_eq!(
            main_class("class Main { public static void main(String[] a) {} }"),
            "Main"
        );
        assert_eq!(main_class("class X {}"), "Main");
    }
}
