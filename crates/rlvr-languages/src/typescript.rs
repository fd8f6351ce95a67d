//! TypeScript for `/run_code` (issue 35; SandboxFusion's `typescript` and `ts`): Debian's
//! `tsc` (package `node-typescript`) compiles the source to a CommonJS JavaScript program in
//! the sandbox, as the compiled languages are compiled (`compile::compile_with`), and Node.js
//! runs that program as a `nodejs` program runs. Types are not enforced: SandboxFusion runs
//! TypeScript with `tsx`, which strips types without checking them, so a program with a type
//! error (or one using Node's modules, whose declarations Debian does not ship) runs as there.
//! `tsc` emits JavaScript for such a program; a program it cannot emit fails to compile.

use std::path::Path;

use rlvr_sandbox::Sandbox;

use crate::compile::{CompileLimits, CompileReport, compile_with};
use crate::{Language, LanguageChoice, PrepareError, Toolchains};

/// The Debian package that provides `tsc`.
pub const TYPESCRIPT_PACKAGE: &str = "node-typescript";
/// Where Debian installs the TypeScript compiler (`/usr/bin/tsc` links here); under `/usr`,
/// so the sandbox sees it read-only.
pub const TYPESCRIPT_DIRECTORY: &str = "/usr/share/nodejs/typescript";
/// `tsc`'s flags, all fixed: CommonJS modules (Node.js runs the program as a script, and
/// `import x from "lodash"` becomes a `require`), a target Node.js 18+ runs natively, default
/// imports of CommonJS modules as `tsx` allows them, no declaration files checked, plain
/// diagnostics.
pub const TSC_FLAGS: &str =
    "--module commonjs --target es2020 --esModuleInterop --skipLibCheck --pretty false";

/// The TypeScript compiler's version, from its `package.json`, or why it is unavailable.
pub fn typescript_version() -> Result<String, String> {
    let path = Path::new(TYPESCRIPT_DIRECTORY).join("package.json");
    let text = fs_err::read_to_string(&path).map_err(|_| {
        format!(
            "{TYPESCRIPT_DIRECTORY} not found (Debian package {TYPESCRIPT_PACKAGE}; \
             scripts/setup installs it)"
        )
    })?;
    let manifest: serde_json::Value = serde_json::from_str(&text)
        .map_err(|error| format!("{}: not JSON: {error}", path.display()))?;
    manifest["version"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("{}: no version", path.display()))
}

/// The shell command compiling `main.ts` in `/tmp`: the program, with a final newline (an
/// empty source is an empty program, not a failed compile), goes to descriptor 3 whatever
/// type errors `tsc` reported; with no program, its diagnostics are the compile's.
fn command(node: &Path) -> String {
    format!(
        "{node} {TYPESCRIPT_DIRECTORY}/bin/tsc {TSC_FLAGS} main.ts > tsc.log 2>&1; \
         if test -f main.js; then {{ cat main.js; echo; }} >&3; else cat tsc.log; exit 1; fi",
        node = node.display()
    )
}

/// Compiles `source` to JavaScript in a fresh sandboxed process: a [`CompileReport`] whose
/// artifact is a Node.js (`nodejs`) program. `Err` when Node.js or `tsc` is not installed, or
/// the sandbox failed.
pub fn compile_typescript(
    sandbox: &Sandbox,
    toolchains: &Toolchains,
    source: &str,
    limits: CompileLimits,
) -> Result<CompileReport, PrepareError> {
    let node = toolchains
        .get(Language::JavaScript)
        .map_err(|unavailable| PrepareError::Unavailable(unavailable.clone()))?;
    typescript_version().map_err(|reason| {
        PrepareError::Unavailable(crate::ToolchainUnavailable {
            language: Language::JavaScript,
            package: TYPESCRIPT_PACKAGE,
            reason,
        })
    })?;
    let javascript = LanguageChoice::from(Language::JavaScript);
    Ok(compile_with(
        sandbox,
        javascript,
        ("main.ts", source),
        &command(&node.executable),
        limits,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_35_the_compile_command_names_no_input_but_main_ts() {
        let command = command(Path::new("/usr/bin/node"));
        assert!(
            command.starts_with(
                "/usr/bin/node /usr/share/nodejs/typescript/bin/tsc --module commonjs"
            )
        );
        assert_eq!(command.matches("main.ts").count(), 1);
    }
}
