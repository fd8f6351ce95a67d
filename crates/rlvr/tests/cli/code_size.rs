//! Issue 33's size rule, checked on the tree: no source file over 800 lines and no function
//! over 150 lines outside tests (Rust parsed with `syn`, Python with the interpreter's `ast`).
//! Tests, fixtures and benchmark scripts are exempt; a long table of cases reads best whole.

use std::path::{Path, PathBuf};
use std::process::Command;

use syn::spanned::Spanned;
use syn::visit::Visit;

use crate::support::{python, repository};

const MOST_LINES_PER_FILE: usize = 800;
const MOST_LINES_PER_FUNCTION: usize = 150;

/// The tracked `.rs` and `.py` files that are not tests, fixtures or benchmarks.
fn source_files() -> Vec<PathBuf> {
    let output = Command::new("git")
        .args(["ls-files", "-z", "--", "*.rs", "*.py"])
        .current_dir(repository())
        .output()
        .expect("git runs");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout)
        .expect("paths are UTF-8")
        .split('\0')
        .filter(|path| !path.is_empty())
        .filter(|path| {
            !path.contains("/tests/")
                && !path.starts_with("python/tests/")
                && !path.starts_with("bench/")
                && !path.contains("/fixtures/")
                && !path.contains("/benches/")
        })
        .map(PathBuf::from)
        .collect()
}

/// Every function and method of a Rust file, as `(name, first line, lines)`.
struct RustFunctions(Vec<(String, usize, usize)>);

impl RustFunctions {
    /// From the `fn` keyword to the body's closing brace (doc comments and attributes not
    /// counted).
    fn note(&mut self, signature: &syn::Signature, body: &syn::Block) {
        let first = signature.fn_token.span().start().line;
        let last = body.span().end().line;
        self.0
            .push((signature.ident.to_string(), first, last - first + 1));
    }
}

impl<'ast> Visit<'ast> for RustFunctions {
    fn visit_item_fn(&mut self, function: &'ast syn::ItemFn) {
        self.note(&function.sig, &function.block);
        syn::visit::visit_item_fn(self, function);
    }

    fn visit_impl_item_fn(&mut self, function: &'ast syn::ImplItemFn) {
        self.note(&function.sig, &function.block);
        syn::visit::visit_impl_item_fn(self, function);
    }

    fn visit_trait_item_fn(&mut self, function: &'ast syn::TraitItemFn) {
        if let Some(body) = &function.default {
            self.note(&function.sig, body);
        }
        syn::visit::visit_trait_item_fn(self, function);
    }

    fn visit_item_mod(&mut self, module: &'ast syn::ItemMod) {
        // `#[cfg(test)] mod tests` is a test.
        let is_test = module
            .attrs
            .iter()
            .any(|attribute| quote_free(attribute) == "cfg(test)");
        if !is_test {
            syn::visit::visit_item_mod(self, module);
        }
    }
}

/// An attribute's text without spaces (`cfg(test)`).
fn quote_free(attribute: &syn::Attribute) -> String {
    match &attribute.meta {
        syn::Meta::List(list) => format!(
            "{}({})",
            list.path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default(),
            list.tokens.to_string().replace(' ', "")
        ),
        _ => String::new(),
    }
}

fn rust_functions(path: &Path, text: &str) -> Vec<(String, usize, usize)> {
    let file = syn::parse_file(text)
        .unwrap_or_else(|error| panic!("{} does not parse: {error}", path.display()));
    let mut functions = RustFunctions(Vec::new());
    functions.visit_file(&file);
    functions.0
}

/// Every function of the Python files, as `path\tname\tfirst line\tlines` lines.
fn python_functions(paths: &[&PathBuf]) -> Vec<(PathBuf, String, usize, usize)> {
    let script = "import ast, sys\n\
        for path in sys.argv[1:]:\n\
        \x20   for node in ast.walk(ast.parse(open(path, encoding='utf-8').read(), path)):\n\
        \x20       if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):\n\
        \x20           print(path, node.name, node.lineno, node.end_lineno - node.lineno + 1, sep='\\t')\n";
    let output = Command::new(python())
        .arg("-c")
        .arg(script)
        .args(paths)
        .current_dir(repository())
        .output()
        .expect("python runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            (
                PathBuf::from(fields[0]),
                fields[1].to_owned(),
                fields[2].parse().expect("a line number"),
                fields[3].parse().expect("a length"),
            )
        })
        .collect()
}

#[test]
fn issue_33_no_file_over_800_lines_and_no_function_over_150_outside_tests() {
    let files = source_files();
    assert!(files.len() > 100, "only {} source files found", files.len());
    let mut faults = Vec::new();
    let mut functions = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(repository().join(path)).expect("a source file");
        let lines = text.lines().count();
        if lines > MOST_LINES_PER_FILE {
            faults.push(format!("{}: {lines} lines", path.display()));
        }
        if path.extension().is_some_and(|extension| extension == "rs") {
            functions.extend(
                rust_functions(path, &text)
                    .into_iter()
                    .map(|(name, first, length)| (path.clone(), name, first, length)),
            );
        }
    }
    let python_files: Vec<&PathBuf> = files
        .iter()
        .filter(|path| path.extension().is_some_and(|extension| extension == "py"))
        .collect();
    functions.extend(python_functions(&python_files));
    assert!(
        functions.len() > 1000,
        "only {} functions found",
        functions.len()
    );
    for (path, name, first, length) in functions {
        if length > MOST_LINES_PER_FUNCTION {
            faults.push(format!(
                "{}:{first}: {name} is {length} lines",
                path.display()
            ));
        }
    }
    assert!(
        faults.is_empty(),
        "over the limits ({MOST_LINES_PER_FILE} lines a file, {MOST_LINES_PER_FUNCTION} a function):\n{}",
        faults.join("\n")
    );
}
