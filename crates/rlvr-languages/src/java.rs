//! Java specifics: the class a source's file must be named after, the JVM's flags, and the
//! harness of the warm JVM (`java/RlvrHarness.java`).

/// The warm JVM's harness (docs/languages.md, "Java: one warm JVM per job"), compiled once per
/// process in the sandbox like any source ([`crate::Compiler::java_harness`]).
pub const HARNESS_SOURCE: &str = include_str!("../java/RlvrHarness.java");
/// Its class.
pub const HARNESS_CLASS: &str = "RlvrHarness";

/// The libraries SandboxFusion's image puts on every Java program's class path, as Debian
/// installs them (`libjavatuples-java`; `scripts/setup`): MultiPL-E's Java imports
/// `org.javatuples`. Under `/usr`, so the sandbox sees them read-only. Also in
/// [`crate::compile::JAVAC_FLAGS`].
pub const LIBRARY_JARS: [&str; 1] = ["/usr/share/java/javatuples.jar"];

/// The run-time class path of a program whose classes are in `jar`: the jar, then the libraries.
pub fn class_path(jar: &str) -> String {
    std::iter::once(jar)
        .chain(LIBRARY_JARS)
        .collect::<Vec<_>>()
        .join(":")
}

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
    if warm {
        // The JIT's compiler threads all start with the JVM and stay: a test's threads get
        // the same thread ids (`/proc/thread-self`) whatever the JIT did before it.
        flags.push("-XX:-UseDynamicNumberOfCompilerThreads".to_owned());
    } else {
        flags.push("-Xss64m".to_owned());
    }
    flags
}

/// The name `javac` wants the source file to have: the public top-level type's (`public
/// class`, `interface`, `enum` or `record`, with any of `final`, `abstract`, `strictfp`,
/// `sealed`, `non-sealed` between), else `Main` (SandboxFusion's and most judges' name).
/// Comments, string, character and text-block literals and everything inside braces (nested
/// types) are skipped.
pub fn source_file_class(source: &str) -> String {
    let words = top_level_words(source);
    for (index, word) in words.iter().enumerate() {
        if *word != "public" {
            continue;
        }
        let mut position = index + 1;
        while words.get(position).is_some_and(|word| {
            matches!(
                *word,
                "final" | "abstract" | "strictfp" | "static" | "sealed" | "non-sealed"
            )
        }) {
            position += 1;
        }
        if words
            .get(position)
            .is_some_and(|word| matches!(*word, "class" | "interface" | "enum" | "record"))
            && let Some(name) = words.get(position + 1)
            && name
                .chars()
                .next()
                .is_some_and(|first| first.is_alphabetic() || first == '_' || first == '$')
        {
            return (*name).to_owned();
        }
    }
    "Main".to_owned()
}

/// The words (identifiers, keywords, `non-sealed`) of `source` outside every brace, comment and
/// literal, in order.
fn top_level_words(source: &str) -> Vec<&str> {
    let bytes = source.as_bytes();
    let mut words = Vec::new();
    let mut depth = 0usize;
    let mut index = 0;
    let word_byte =
        |byte: u8| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'$' || byte >= 0x80;
    while index < bytes.len() {
        let rest = &bytes[index..];
        if rest.starts_with(b"//") {
            index += rest
                .iter()
                .position(|&byte| byte == b'\n')
                .unwrap_or(rest.len());
        } else if rest.starts_with(b"/*") {
            index += rest[2..]
                .windows(2)
                .position(|pair| pair == b"*/")
                .map_or(rest.len(), |end| end + 4);
        } else if rest.starts_with(b"\"\"\"") {
            index += rest[3..]
                .windows(3)
                .enumerate()
                .find(|(at, triple)| *triple == b"\"\"\"" && !escaped(&rest[3..], *at))
                .map_or(rest.len(), |(end, _)| end + 6);
        } else if rest[0] == b'"' || rest[0] == b'\'' {
            let quote = rest[0];
            let mut end = 1;
            while end < rest.len() && rest[end] != b'\n' {
                if rest[end] == b'\\' {
                    end += 2;
                    continue;
                }
                if rest[end] == quote {
                    break;
                }
                end += 1;
            }
            index += (end + 1).min(rest.len());
        } else if rest[0] == b'{' {
            depth += 1;
            index += 1;
        } else if rest[0] == b'}' {
            depth = depth.saturating_sub(1);
            index += 1;
        } else if word_byte(rest[0]) {
            let mut length = rest
                .iter()
                .position(|&byte| !word_byte(byte))
                .unwrap_or(rest.len());
            if rest[..length] == *b"non" && rest[length..].starts_with(b"-sealed") {
                length += "-sealed".len();
            }
            if depth == 0
                && let Some(word) = source.get(index..index + length)
            {
                words.push(word);
            }
            index += length;
        } else {
            index += 1;
        }
    }
    words
}

/// Whether the byte at `at` of `text` follows an odd number of backslashes.
fn escaped(text: &[u8], at: usize) -> bool {
    text[..at]
        .iter()
        .rev()
        .take_while(|&&byte| byte == b'\\')
        .count()
        % 2
        == 1
}

/// A class of a jar that `java` can start: its binary name (`pkg.Outer$Inner`), whether it is
/// public, and whether it is nested in another.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Runnable {
    name: String,
    public: bool,
    nested: bool,
}

/// The class `java` is to start from a compiled jar: among the classes that declare
/// `public static void main(String[])`, the top-level public one (the source file's class),
/// else a top-level one named `Main`, else the first top-level one by name, else the first
/// nested one by name. `None` when no class has such a `main` (or the jar is unreadable).
pub fn main_class_in_jar(jar: &[u8]) -> Option<String> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(jar)).ok()?;
    let mut runnable = Vec::new();
    for index in 0..archive.len() {
        let Ok(mut entry) = archive.by_index(index) else {
            continue;
        };
        if !entry.name().is_ok_and(|name| name.ends_with(".class")) {
            continue;
        }
        let mut contents = Vec::new();
        if std::io::Read::read_to_end(&mut entry, &mut contents).is_err() {
            continue;
        }
        if let Some(class) = runnable_class(&contents) {
            runnable.push(class);
        }
    }
    runnable.sort_by(|left, right| {
        let rank = |class: &Runnable| {
            (
                class.nested,
                !class.public,
                class.name.rsplit('.').next() != Some("Main"),
            )
        };
        rank(left)
            .cmp(&rank(right))
            .then_with(|| left.name.cmp(&right.name))
    });
    runnable.into_iter().next().map(|class| class.name)
}

/// Reads a class file's constant pool, access flags, methods and `InnerClasses` attribute: the
/// class when it declares `public static void main(String[])`.
fn runnable_class(class: &[u8]) -> Option<Runnable> {
    const ACC_PUBLIC: u16 = 0x0001;
    const ACC_STATIC: u16 = 0x0008;
    let mut reader = ClassReader {
        bytes: class,
        at: 0,
    };
    if reader.u32()? != 0xCAFE_BABE {
        return None;
    }
    reader.skip(4)?; // minor and major version
    let count = usize::from(reader.u16()?);
    // Per constant pool index: the text of a Utf8 entry, the name index of a Class entry.
    let mut texts: Vec<Option<&[u8]>> = vec![None; count];
    let mut class_names: Vec<Option<u16>> = vec![None; count];
    let mut index = 1;
    while index < count {
        let tag = reader.u8()?;
        match tag {
            1 => {
                let length = usize::from(reader.u16()?);
                texts[index] = Some(reader.take(length)?);
            }
            7 => class_names[index] = Some(reader.u16()?),
            8 | 16 | 19 | 20 => reader.skip(2)?,
            15 => reader.skip(3)?,
            3 | 4 | 9 | 10 | 11 | 12 | 17 | 18 => reader.skip(4)?,
            5 | 6 => {
                reader.skip(8)?;
                index += 1;
            }
            _ => return None,
        }
        index += 1;
    }
    let text = |index: u16| texts.get(usize::from(index)).copied().flatten();
    let access = reader.u16()?;
    let this_class = reader.u16()?;
    let name = text(
        class_names
            .get(usize::from(this_class))
            .copied()
            .flatten()?,
    )?;
    reader.skip(2)?; // super class
    let interfaces = usize::from(reader.u16()?);
    reader.skip(2 * interfaces)?;
    let skip_members = |reader: &mut ClassReader, main: &mut bool| -> Option<()> {
        for _ in 0..reader.u16()? {
            let flags = reader.u16()?;
            let member_name = text(reader.u16()?);
            let descriptor = text(reader.u16()?);
            if flags & (ACC_PUBLIC | ACC_STATIC) == ACC_PUBLIC | ACC_STATIC
                && member_name == Some(b"main".as_slice())
                && descriptor == Some(b"([Ljava/lang/String;)V".as_slice())
            {
                *main = true;
            }
            for _ in 0..reader.u16()? {
                reader.skip(2)?;
                let length = reader.u32()? as usize;
                reader.skip(length)?;
            }
        }
        Some(())
    };
    let mut field_main = false;
    skip_members(&mut reader, &mut field_main)?;
    let mut main = false;
    skip_members(&mut reader, &mut main)?;
    if !main {
        return None;
    }
    let mut nested = false;
    for _ in 0..reader.u16()? {
        let attribute = text(reader.u16()?);
        let length = reader.u32()? as usize;
        let body = reader.take(length)?;
        if attribute == Some(b"InnerClasses".as_slice()) {
            let mut inner = ClassReader { bytes: body, at: 0 };
            for _ in 0..inner.u16()? {
                let inner_class = inner.u16()?;
                inner.skip(6)?;
                nested |= inner_class == this_class;
            }
        }
    }
    Some(Runnable {
        name: String::from_utf8_lossy(name).replace('/', "."),
        public: access & ACC_PUBLIC != 0,
        nested,
    })
}

/// Big-endian reads over a class file, `None` past its end.
struct ClassReader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> ClassReader<'a> {
    fn take(&mut self, count: usize) -> Option<&'a [u8]> {
        let slice = self.bytes.get(self.at..self.at.checked_add(count)?)?;
        self.at += count;
        Some(slice)
    }

    fn skip(&mut self, count: usize) -> Option<()> {
        self.take(count).map(drop)
    }

    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    fn u16(&mut self) -> Option<u16> {
        let bytes = self.take(2)?;
        Some(u16::from_be_bytes([bytes[0], bytes[1]]))
    }

    fn u32(&mut self) -> Option<u32> {
        let bytes = self.take(4)?;
        Some(u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }
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
    use super::{main_class_in_jar, source_file_class};

    #[test]
    fn the_public_top_level_type_names_the_file() {
        assert_eq!(
            source_file_class("import java.util.*;\npublic class Solution {}"),
            "Solution"
        );
        assert_eq!(source_file_class("public final class A_1 { }"), "A_1");
        assert_eq!(
            source_file_class("class Main { public static void main(String[] a) {} }"),
            "Main"
        );
        assert_eq!(source_file_class("class X {}"), "Main");
        assert_eq!(source_file_class("public record Point(int x) {}"), "Point");
        assert_eq!(source_file_class("public non-sealed class Open {}"), "Open");
    }

    #[test]
    fn comments_literals_and_nested_types_do_not_name_the_file() {
        let source = "// public class Line {}\n/* public class Block {} */\n\
            class Main {\n  public static class Nested {}\n  String s = \"public class Text\";\n\
              char c = '\"'; String t = \"\"\"\n public class Block2 \"\"\";\n}\n\
            /** public class Doc */ public class Solution { }\n";
        assert_eq!(source_file_class(source), "Solution");
        assert_eq!(
            source_file_class("class Main { public static class Nested { } }"),
            "Main"
        );
        assert_eq!(
            source_file_class("/* unterminated public class Never"),
            "Main"
        );
    }

    /// A jar of the classes `javac` makes of `source` (file `file`.java); `None` without a JDK.
    fn compiled(file: &str, source: &str) -> Option<Vec<u8>> {
        let directory = tempfile::tempdir().ok()?;
        let path = directory.path().join(format!("{file}.java"));
        std::fs::write(&path, source).ok()?;
        let classes = directory.path().join("classes");
        let status = std::process::Command::new("javac")
            .arg("-d")
            .arg(&classes)
            .arg(&path)
            .status()
            .ok()?;
        assert!(status.success(), "{source}");
        let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let mut entries: Vec<_> = walk(&classes);
        entries.sort();
        for entry in entries {
            let name = entry
                .strip_prefix(&classes)
                .ok()?
                .to_string_lossy()
                .into_owned();
            writer
                .start_file(
                    name,
                    zip::write::SimpleFileOptions::default()
                        .compression_method(zip::CompressionMethod::Stored),
                )
                .ok()?;
            std::io::Write::write_all(&mut writer, &std::fs::read(&entry).ok()?).ok()?;
        }
        Some(writer.finish().ok()?.into_inner())
    }

    fn walk(directory: &std::path::Path) -> Vec<std::path::PathBuf> {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(directory).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                files.extend(walk(&path));
            } else {
                files.push(path);
            }
        }
        files
    }

    #[test]
    fn the_main_class_is_the_one_with_main() {
        if std::process::Command::new("javac")
            .arg("-version")
            .output()
            .is_err()
        {
            return;
        }
        let cases = [
            // A comment naming another class, and a nested public class without main.
            (
                "Solution",
                "// public class Foo\npublic class Solution {\n public static class Helper {}\n public static void main(String[] a) {}\n}\n",
                Some("Solution"),
            ),
            // main only in a nested public static class.
            (
                "Main",
                "class Outer {\n public static class Inner { public static void main(String[] a) {} }\n}\n",
                Some("Outer$Inner"),
            ),
            // Two classes with main: the public top-level one wins.
            (
                "Second",
                "class First { public static void main(String[] a) {} }\npublic class Second { public static void main(String[] a) {} }\n",
                Some("Second"),
            ),
            // No public class: the one with main, whatever its name.
            (
                "Main",
                "class Helper { static int f() { return 1; } }\nclass Program { public static void main(String... a) {} }\n",
                Some("Program"),
            ),
            // A main that is not `public static void main(String[])` does not count.
            (
                "Main",
                "class Main { static void main(String[] a) {} public static void main(int a) {} }\n",
                None,
            ),
        ];
        for (file, source, expected) in cases {
            let jar = compiled(file, source).expect("javac runs");
            assert_eq!(main_class_in_jar(&jar).as_deref(), expected, "{source}");
        }
        assert_eq!(main_class_in_jar(b"not a jar"), None);
    }
}
