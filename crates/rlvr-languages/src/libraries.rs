//! The libraries SandboxFusion's image ships that its tests and MultiPL-E use, as Debian
//! packages them (`scripts/setup` installs them): what `rlvr doctor` checks in the sandbox.

use rlvr_language::Language;

/// One library programs of a language may use without shipping it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Library {
    /// The language whose programs see it.
    pub language: Language,
    /// What a program names to use it.
    pub name: &'static str,
    /// The Debian package that provides it.
    pub package: &'static str,
    /// Where the package installs it (under `/usr`: the sandbox sees it read-only).
    pub path: &'static str,
    /// A program that uses it and prints `hello`.
    pub probe: &'static str,
}

/// Every such library: `org.javatuples` (on every Java program's class path,
/// `java::LIBRARY_JARS`) and `lodash` (on Node.js's `NODE_PATH`,
/// `program::NODE_LIBRARIES`).
pub const LIBRARIES: [Library; 2] = [
    Library {
        language: Language::Java,
        name: "org.javatuples",
        package: "libjavatuples-java",
        path: crate::java::LIBRARY_JARS[0],
        probe: "import org.javatuples.Pair;\npublic class Main { public static void main(String[] a) { System.out.println(Pair.with(\"hello\", 1).getValue0()); } }\n",
    },
    Library {
        language: Language::JavaScript,
        name: "lodash",
        package: "node-lodash",
        path: "/usr/share/nodejs/lodash",
        probe: "const _ = require('lodash');\nconsole.log(_.head(['hello', 'world']));\n",
    },
];
