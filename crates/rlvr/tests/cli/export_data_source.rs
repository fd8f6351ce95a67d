//! `rlvr export parquet --layout verl --data-source NAME` (issue 16): the exported file routes
//! to verl's stock scorer and still imports back byte for byte. What verl itself does with the
//! file is tested in python/tests/test_verl.py.

use std::path::Path;

use crate::support::rlvr_in;

/// Release rows with both test kinds (the Python suite's fixture).
fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/tests/fixtures/release_rows.jsonl")
}

#[test]
fn issue16_data_source_exports_import_back_byte_for_byte() {
    let directory = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    let source = fixture();
    let source_text = source.to_string_lossy().into_owned();
    for (name, flags) in [
        ("default", vec![]),
        ("stock", vec!["--data-source", "codecontests"]),
        ("custom", vec!["--data-source", "my_code"]),
    ] {
        let mut arguments = vec![
            "export",
            "parquet",
            source_text.as_str(),
            name,
            "--layout",
            "verl",
        ];
        arguments.extend(flags);
        let exported = rlvr_in(&arguments, directory.path());
        assert!(
            exported.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&exported.stderr)
        );
        let restored = format!("{name}.jsonl");
        let imported = rlvr_in(&["import", "parquet", name, &restored], directory.path());
        assert!(
            imported.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&imported.stderr)
        );
        let original = fs_err::read(&source).unwrap_or_else(|error| panic!("{error}"));
        let back = fs_err::read(directory.path().join(&restored))
            .unwrap_or_else(|error| panic!("{error}"));
        assert!(
            original == back,
            "{name}: the import differs from the source"
        );
    }
}

#[test]
fn issue16_data_source_needs_the_verl_layout() {
    let directory = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    let source = fixture();
    let output = rlvr_in(
        &[
            "export",
            "parquet",
            &source.to_string_lossy(),
            "out",
            "--data-source",
            "taco",
        ],
        directory.path(),
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--data-source") && stderr.contains("--layout verl"),
        "{stderr}"
    );
}
