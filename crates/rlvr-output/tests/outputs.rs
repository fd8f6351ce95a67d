//! The output helper's promises, checked on real files: nothing under the final name before
//! commit, the previous file untouched on failure, no temporary left behind, inputs refused.

use std::io::Write;
use std::path::Path;

use rlvr_output::{
    AtomicFile, CreatedDirectories, OutputError, commit_all, find_output_error,
    refuse_overwriting_inputs, write_atomically,
};

/// Names in a directory, sorted.
fn listing(directory: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(directory)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn nothing_appears_before_commit_and_the_whole_file_after() {
    let directory = tempfile::tempdir().unwrap();
    let target = directory.path().join("out.jsonl");
    let mut file = AtomicFile::create(&target).unwrap();
    file.write_all(b"first line\n").unwrap();
    assert_eq!(listing(directory.path()), Vec::<String>::new());
    file.commit().unwrap();
    assert_eq!(listing(directory.path()), vec!["out.jsonl"]);
    assert_eq!(std::fs::read(&target).unwrap(), b"first line\n");
}

#[test]
fn a_dropped_output_leaves_the_previous_file_and_no_temporary() {
    let directory = tempfile::tempdir().unwrap();
    let target = directory.path().join("out.jsonl");
    std::fs::write(&target, b"previous\n").unwrap();
    {
        let mut file = AtomicFile::create(&target).unwrap();
        file.write_all(&vec![b'x'; 3 << 20]).unwrap();
        // Dropped without commit, as on an error.
    }
    assert_eq!(listing(directory.path()), vec!["out.jsonl"]);
    assert_eq!(std::fs::read(&target).unwrap(), b"previous\n");
}

#[test]
fn commit_replaces_the_previous_file() {
    let directory = tempfile::tempdir().unwrap();
    let target = directory.path().join("out.jsonl");
    std::fs::write(&target, b"previous\n").unwrap();
    write_atomically(&target, b"new\n").unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), b"new\n");
    assert_eq!(listing(directory.path()), vec!["out.jsonl"]);
}

#[test]
fn a_set_is_committed_together() {
    let directory = tempfile::tempdir().unwrap();
    let names = ["train.jsonl", "validation.jsonl", "test.jsonl"];
    let mut files: Vec<AtomicFile> = names
        .iter()
        .map(|name| AtomicFile::create(directory.path().join(name)).unwrap())
        .collect();
    for (file, name) in files.iter_mut().zip(names) {
        file.write_all(name.as_bytes()).unwrap();
    }
    assert!(listing(directory.path()).is_empty());
    commit_all(files).unwrap();
    assert_eq!(
        listing(directory.path()),
        vec!["test.jsonl", "train.jsonl", "validation.jsonl"]
    );
}

#[test]
fn a_directory_is_not_a_file_output() {
    let directory = tempfile::tempdir().unwrap();
    let error = AtomicFile::create(directory.path()).unwrap_err();
    assert!(matches!(error, OutputError::UnusablePath { .. }), "{error}");
    assert!(error.to_string().contains("is a directory"), "{error}");
}

#[test]
fn a_missing_directory_is_a_usage_error_naming_the_output() {
    let directory = tempfile::tempdir().unwrap();
    let target = directory.path().join("missing").join("out.jsonl");
    let error = AtomicFile::create(&target).unwrap_err();
    assert!(!error.is_write_failure(), "fix the path, not the disk");
    assert!(error.to_string().contains("missing/out.jsonl"), "{error}");
    // A full disk when creating is still the disk's fault.
    let full = OutputError::create(&target, std::io::Error::from_raw_os_error(28));
    assert!(full.is_write_failure());
}

#[test]
fn write_errors_carry_the_output_error() {
    // /dev/full answers every write with ENOSPC; its directory cannot hold a temporary, so
    // write through the error path directly.
    let error = OutputError::write(
        "/data/out.jsonl",
        std::io::Error::from_raw_os_error(28), // ENOSPC
    );
    let carried = std::io::Error::new(std::io::ErrorKind::StorageFull, error);
    let chain: Vec<&(dyn std::error::Error + 'static)> = vec![&carried];
    let found = find_output_error(chain).expect("found inside the io error");
    assert!(found.is_write_failure());
    assert!(found.to_string().contains("/data/out.jsonl"));
    let unwrapped = OutputError::from_io("/elsewhere", carried);
    assert!(
        unwrapped.to_string().contains("/data/out.jsonl"),
        "{unwrapped}"
    );
}

#[test]
fn created_directories_go_away_unless_kept() {
    let root = tempfile::tempdir().unwrap();
    let nested = root.path().join("a").join("b");
    drop(CreatedDirectories::create(&nested).unwrap());
    assert!(listing(root.path()).is_empty());

    std::fs::create_dir(root.path().join("existing")).unwrap();
    drop(CreatedDirectories::create(root.path().join("existing")).unwrap());
    assert_eq!(listing(root.path()), vec!["existing"]);

    CreatedDirectories::create(&nested).unwrap().keep();
    assert!(nested.is_dir());
}

#[test]
fn created_directories_with_committed_files_stay() {
    let root = tempfile::tempdir().unwrap();
    let nested = root.path().join("out");
    let directories = CreatedDirectories::create(&nested).unwrap();
    write_atomically(nested.join("README.md"), b"# card\n").unwrap();
    drop(directories);
    assert_eq!(listing(&nested), vec!["README.md"]);
}

#[test]
fn an_output_that_is_an_input_is_refused_in_every_spelling() {
    let root = tempfile::tempdir().unwrap();
    let input = root.path().join("train.jsonl");
    std::fs::write(&input, b"{}\n").unwrap();
    let other = root.path().join("other.jsonl");
    std::fs::write(&other, b"{}\n").unwrap();
    let hard_link = root.path().join("hard.jsonl");
    std::fs::hard_link(&input, &hard_link).unwrap();
    let symlink = root.path().join("link.jsonl");
    std::os::unix::fs::symlink(&input, &symlink).unwrap();
    let dotted = root.path().join(".").join("train.jsonl");

    let refused = |output: &Path| refuse_overwriting_inputs(&[&input], &[output]);
    for (output, relation) in [
        (input.as_path(), "is the input"),
        (dotted.as_path(), "is the input"),
        (hard_link.as_path(), "is a hard link to"),
        (symlink.as_path(), "is a symlink to"),
    ] {
        let error = refused(output).expect_err("refused");
        assert!(error.to_string().contains(relation), "{output:?}: {error}");
        assert!(!error.is_write_failure());
    }
    // The input given through a symlink, the output its target.
    let error = refuse_overwriting_inputs(&[&symlink], &[&input]).unwrap_err();
    assert!(error.to_string().contains("symlink"), "{error}");

    refused(&other).expect("a different file is fine");
    refused(&root.path().join("new.jsonl")).expect("a new file is fine");
    refuse_overwriting_inputs(&[&root.path().join("missing.jsonl")], &[&input])
        .expect("a missing input is reported by the reader");
}

#[test]
fn obsolete_files_go_only_after_the_new_set_is_in_place() {
    let directory = tempfile::tempdir().unwrap();
    let old = [
        "train-00000-of-00002.parquet",
        "train-00001-of-00002.parquet",
    ];
    for name in old {
        std::fs::write(directory.path().join(name), b"old").unwrap();
    }
    let mut file = AtomicFile::create(directory.path().join("train-00000.parquet")).unwrap();
    file.write_all(b"new").unwrap();
    assert_eq!(file.bytes_written(), 3);
    file.set_path(directory.path().join("train-00000-of-00001.parquet"))
        .unwrap();
    assert!(
        file.set_path(directory.path().join("elsewhere").join("x"))
            .is_err()
    );
    let obsolete: Vec<_> = old.iter().map(|name| directory.path().join(name)).collect();
    rlvr_output::commit_all_replacing(vec![file], &obsolete).unwrap();
    assert_eq!(
        listing(directory.path()),
        vec!["train-00000-of-00001.parquet"]
    );
}
