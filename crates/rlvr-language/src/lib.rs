//! The languages rlvr scores, their names (code-fence tags, job keys, SandboxFusion's names)
//! and the C and C++ standards a job may ask for.
//!
//! A leaf crate: the verifier decides which language a response is in and plans it without
//! running anything, so it needs this and nothing of `rlvr-languages` (toolchains, compiling,
//! the exec supervisor), which depends on the sandbox.

#![forbid(unsafe_code)]

use std::fmt;

/// A language a response may be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Language {
    /// CPython, run by the warm Python runner (every profile).
    Python,
    /// C++ with g++ (`-O2`, static; C++17 unless the job asks for C++20).
    Cpp,
    /// C with gcc (`-O2`, static, GNU C11).
    C,
    /// Java 17 (OpenJDK): `javac`, then one warm JVM per job.
    Java,
    /// JavaScript on Node.js.
    JavaScript,
    /// Go (Debian's golang).
    Go,
    /// Rust (Debian's rustc).
    Rust,
}

/// A C++ standard a job may pin (`language: "cpp20"` or `"c++20"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, serde::Serialize)]
pub enum CppStandard {
    /// `-std=gnu++17`, the default (Codeforces' and SandboxFusion's).
    #[default]
    Cpp17,
    /// `-std=gnu++20`.
    Cpp20,
}

impl CppStandard {
    /// The `-std=` value.
    pub fn flag(self) -> &'static str {
        match self {
            Self::Cpp17 => "-std=gnu++17",
            Self::Cpp20 => "-std=gnu++20",
        }
    }

    /// A short name for keys and directories.
    pub fn short_name(self) -> &'static str {
        match self {
            Self::Cpp17 => "cpp17",
            Self::Cpp20 => "cpp20",
        }
    }
}

/// A language with the variant a job asked for (only C++ has variants).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct LanguageChoice {
    /// The language.
    pub language: Language,
    /// The C++ standard (ignored for other languages).
    pub cpp_standard: CppStandard,
}

impl From<Language> for LanguageChoice {
    fn from(language: Language) -> Self {
        Self {
            language,
            cpp_standard: CppStandard::default(),
        }
    }
}

impl Language {
    /// Every language, in the order `rlvr doctor` lists them.
    pub const ALL: [Self; 7] = [
        Self::Python,
        Self::Cpp,
        Self::C,
        Self::Java,
        Self::JavaScript,
        Self::Go,
        Self::Rust,
    ];

    /// The canonical name (job results, `--lang`, `rlvr doctor`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Python => "python",
            Self::Cpp => "cpp",
            Self::C => "c",
            Self::Java => "java",
            Self::JavaScript => "javascript",
            Self::Go => "go",
            Self::Rust => "rust",
        }
    }

    /// SandboxFusion's name for it (`/run_code`'s `language`).
    pub fn sandbox_fusion_name(self) -> &'static str {
        match self {
            Self::JavaScript => "nodejs",
            other => other.name(),
        }
    }

    /// Whether a program must be compiled before its tests run (and so has a compile step in
    /// SandboxFusion's answers).
    pub fn is_compiled(self) -> bool {
        matches!(
            self,
            Self::Cpp | Self::C | Self::Java | Self::Go | Self::Rust
        )
    }

    /// The language a code fence's info string names (its first word, any case): `cpp`, `c++`,
    /// `cc`, `cxx`, `c`, `java`, `js`, `javascript`, `node`, `nodejs`, `go`, `golang`, `rust`,
    /// `rs`, `python`, `py`, `python3`. `None` for anything else (an untagged fence too).
    pub fn from_fence_tag(info: &str) -> Option<LanguageChoice> {
        let word = info.split_whitespace().next()?;
        Self::from_name(word)
    }

    /// The language a job's `language` key, a fence tag or a SandboxFusion request names, with
    /// the C++ standard where the name carries one (`cpp20`, `c++20`, `cpp17`).
    pub fn from_name(name: &str) -> Option<LanguageChoice> {
        let lowered = name.trim().to_ascii_lowercase();
        let language = match lowered.as_str() {
            "python" | "py" | "python3" => Self::Python,
            "cpp" | "c++" | "cc" | "cxx" | "cpp17" | "c++17" | "gnu++17" | "cpp20" | "c++20"
            | "gnu++20" => Self::Cpp,
            "c" => Self::C,
            "java" => Self::Java,
            "js" | "javascript" | "node" | "nodejs" => Self::JavaScript,
            "go" | "golang" => Self::Go,
            "rust" | "rs" => Self::Rust,
            _ => return None,
        };
        let cpp_standard = if lowered.ends_with("20") {
            CppStandard::Cpp20
        } else {
            CppStandard::Cpp17
        };
        Some(LanguageChoice {
            language,
            cpp_standard,
        })
    }
}

impl fmt::Display for Language {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fence_tags_name_their_language() {
        for (tag, language) in [
            ("cpp", Language::Cpp),
            ("C++", Language::Cpp),
            ("cc", Language::Cpp),
            ("c", Language::C),
            ("java", Language::Java),
            ("js", Language::JavaScript),
            ("javascript", Language::JavaScript),
            ("go", Language::Go),
            ("rust", Language::Rust),
            ("rs", Language::Rust),
            ("python", Language::Python),
            ("py", Language::Python),
            ("Python3 title=x", Language::Python),
        ] {
            assert_eq!(
                Language::from_fence_tag(tag).map(|choice| choice.language),
                Some(language),
                "{tag}"
            );
        }
        for tag in ["", "text", "bash", "cpp-ish", "kotlin"] {
            assert_eq!(Language::from_fence_tag(tag), None, "{tag}");
        }
    }

    #[test]
    fn a_cpp20_name_selects_cpp20() {
        let choice = Language::from_name("c++20").expect("known");
        assert_eq!(choice.language, Language::Cpp);
        assert_eq!(choice.cpp_standard, CppStandard::Cpp20);
        assert_eq!(
            Language::from_name("cpp").map(|choice| choice.cpp_standard),
            Some(CppStandard::Cpp17)
        );
    }

    #[test]
    fn sandbox_fusion_names_round_trip() {
        for language in Language::ALL {
            assert_eq!(
                Language::from_name(language.sandbox_fusion_name()).map(|choice| choice.language),
                Some(language)
            );
        }
    }
}
