//! The references checked against the code (issue 23): `docs/cli-reference.snap.md` is every
//! command's `--help`, and `docs/architecture.md`'s crate table lists each crate's own
//! dependencies as its manifest does. The help page is an insta snapshot, a Markdown page of
//! its own (`docs/cli-reference.snap.md`, insta's metadata beside it in `cli-reference.snap`):
//! the test fails when a flag changes and the page does not (`cargo insta review`, or
//! `INSTA_UPDATE=always`, rewrites it from the binary).

use std::process::Output;

use crate::support::{repository, rlvr, stderr};

/// `rlvr ARGUMENTS...` at a fixed help width.
fn help(arguments: &[&str]) -> String {
    let output: Output = rlvr()
        .args(arguments)
        .env("COLUMNS", "100")
        .output()
        .expect("rlvr runs");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    String::from_utf8(output.stdout).expect("help is UTF-8")
}

/// The subcommands `rlvr --help` lists (without `help` itself).
fn subcommands(top: &str) -> Vec<String> {
    top.lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| !line.is_empty())
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
        .filter(|name| name != "help")
        .collect()
}

fn reference() -> String {
    let top = help(&["--help"]);
    let mut text = String::from(
        "# Command reference\n\n<!-- Generated from the binary's `--help` by \
         crates/rlvr/tests/cli/reference.rs, an insta snapshot (`cargo insta review` updates \
         it); exit statuses, outputs and errors: docs/cli.md. -->\n\n## rlvr\n\n```text\n",
    );
    text.push_str(&top);
    text.push_str("```\n");
    let mut pending: Vec<Vec<String>> = subcommands(&top)
        .into_iter()
        .rev()
        .map(|command| vec![command])
        .collect();
    while let Some(path) = pending.pop() {
        let mut arguments: Vec<&str> = path.iter().map(String::as_str).collect();
        arguments.push("--help");
        let page = help(&arguments);
        text.push_str(&format!("\n## rlvr {}\n\n```text\n", path.join(" ")));
        text.push_str(&page);
        text.push_str("```\n");
        // Nested commands (`export parquet`) follow their parent.
        for nested in subcommands(&page).into_iter().rev() {
            let mut longer = path.clone();
            longer.push(nested);
            pending.push(longer);
        }
    }
    text
}

#[test]
fn issue_23_the_command_reference_documents_every_flag() {
    let reference = reference();
    for flag in ["--no-verify", "--attempts", "--lang", "--workers"] {
        assert!(reference.contains(flag), "{flag}");
    }
    // A page of docs/ as it is (a binary snapshot keeps its content file whole).
    insta::with_settings!({
        snapshot_path => "../../../../docs",
        prepend_module_to_snapshot => false,
    }, {
        insta::assert_binary_snapshot!("cli-reference.md", reference.into_bytes());
    });
}

#[test]
fn the_subcommand_list_is_read_from_the_help() {
    let top = "Usage: rlvr <COMMAND>\n\nCommands:\n  validate  Check\n  serve     Serve the verifier over\n                 OpenRLHF)\n  help      Print\n\nOptions:\n  -h\n";
    assert_eq!(subcommands(top), ["validate", "serve"]);
}

/// The workspace crates each crate's manifest lists under `[dependencies]`.
fn manifest_dependencies(crate_directory: &std::path::Path) -> std::collections::BTreeSet<String> {
    let text = std::fs::read_to_string(crate_directory.join("Cargo.toml")).expect("manifest");
    let manifest: toml::Table = toml::from_str(&text).expect("a TOML manifest");
    manifest
        .get("dependencies")
        .and_then(toml::Value::as_table)
        .map(|dependencies| {
            dependencies
                .keys()
                .filter(|name| name.starts_with("rlvr-"))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn issue_23_the_architecture_table_matches_the_manifests() {
    let text = std::fs::read_to_string(repository().join("docs/architecture.md")).expect("read");
    let mut documented = std::collections::BTreeMap::new();
    // The crates' table only (the page's other tables have rows that name `rlvr` too).
    let table = text
        .lines()
        .skip_while(|line| !line.starts_with("| crate | owns | depends on |"))
        .take_while(|line| line.starts_with('|'));
    for line in table.filter(|line| line.starts_with("| `rlvr")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let name = cells[1].trim_matches('`').to_owned();
        let depends: std::collections::BTreeSet<String> = match cells[3] {
            "nothing of ours" => Default::default(),
            list => list
                .split(", ")
                .map(|short| format!("rlvr-{short}"))
                .collect(),
        };
        documented.insert(name, depends);
    }
    let crates = repository().join("crates");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&crates).expect("crates") {
        let directory = entry.expect("entry").path();
        let name = directory
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let depends = documented
            .get(&name)
            .unwrap_or_else(|| panic!("docs/architecture.md has no row for {name}"));
        let actual = manifest_dependencies(&directory);
        assert_eq!(
            &actual, depends,
            "{name}: docs/architecture.md against its manifest"
        );
        names.push(name);
    }
    assert_eq!(
        documented.len(),
        names.len(),
        "rows for crates that do not exist"
    );
}

/// Every repository path the documentation names (`crates/...`, `python/...`, `scripts/...`,
/// `tests/...`, `docs/...`) exists: moved tests and renamed files leave no dead pointer.
#[test]
fn every_path_the_documentation_names_exists() {
    let root = repository();
    let mut documents = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).expect("docs") {
        documents.push(entry.expect("entry").path());
    }
    let mut missing = Vec::new();
    let mut checked = 0;
    for document in documents
        .iter()
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
    {
        // The notes record history, including files since moved.
        if document.ends_with("notes.md") {
            continue;
        }
        let text = std::fs::read_to_string(document).expect("read");
        for word in text.split(|character: char| {
            !(character.is_ascii_alphanumeric() || "_-./".contains(character))
        }) {
            let word = word.trim_end_matches(['.', '/']);
            // A file: a known top directory and a last part with an extension (prose such as
            // "python/untagged" is not a path).
            let is_file = word
                .rsplit('/')
                .next()
                .is_some_and(|last| last.contains('.'));
            let named = is_file
                && ["crates/", "python/", "scripts/", "tests/", "docs/"]
                    .iter()
                    .any(|prefix| word.starts_with(prefix));
            if named && !word.contains("..") {
                checked += 1;
                if !root.join(word).exists() {
                    missing.push(format!("{}: {word}", document.display()));
                }
            }
        }
    }
    assert!(missing.is_empty(), "{missing:#?}");
    assert!(
        checked > 50,
        "only {checked} paths found: is the scan still reading them?"
    );
}
