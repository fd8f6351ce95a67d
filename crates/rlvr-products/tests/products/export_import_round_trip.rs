//! Issue 13, property: export (both layouts, several shards) then import gives back the source
//! file byte for byte for every line the reader accepts as a record: lone surrogates anywhere
//! (prompt, hash, routing fields, tests), U+001C, U+2028, control characters, astral
//! characters, lines escaped with `ensure_ascii` or not, lines written unlike the release
//! (compact separators, `\u00e9`-style escapes in a UTF-8 line, `\/`), labels whose text differs
//! from the ground truth's (key order only, or another value).

use std::path::Path;

use proptest::prelude::*;
use rlvr_dataset::ReadOptions;
use rlvr_products::{ExportOptions, Layout, export_parquet, import_parquet};
use rlvr_python_compat::dumps::push_string;

/// One piece of a string: a character, or a lone surrogate (which only a JSON escape can
/// carry, and a UTF-8 column cannot).
#[derive(Debug, Clone)]
enum Piece {
    Character(char),
    LoneSurrogate(u16),
}

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        6 => "[ -~]".prop_map(|text: String| Piece::Character(text.chars().next().unwrap_or('a'))),
        2 => any::<char>().prop_map(Piece::Character),
        1 => prop_oneof![
            Just('\u{1c}'), Just('\u{1f}'), Just('\u{2028}'), Just('\u{2029}'), Just('\u{85}'),
            Just('\u{7f}'), Just('\n'), Just('\r'), Just('\t'), Just('"'), Just('\\'), Just('/'),
            Just('é'), Just('😀'), Just('\u{feff}'), Just('\u{0}'),
        ]
        .prop_map(Piece::Character),
        1 => (0xDC00u16..=0xDFFF).prop_map(Piece::LoneSurrogate),
        1 => (0xD800u16..=0xDBFF).prop_map(Piece::LoneSurrogate),
    ]
}

/// WTF-8 bytes of the pieces. A high surrogate is never followed by a low one here (Python
/// would join the two escapes into one character).
fn wtf8(pieces: &[Piece]) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut after_high = false;
    for piece in pieces {
        match piece {
            Piece::Character(character) => {
                let mut buffer = [0; 4];
                bytes.extend_from_slice(character.encode_utf8(&mut buffer).as_bytes());
                after_high = false;
            }
            Piece::LoneSurrogate(unit) => {
                if after_high && *unit >= 0xDC00 {
                    bytes.push(b'x');
                }
                let unit = u32::from(*unit);
                bytes.extend_from_slice(&[
                    0xE0 | (unit >> 12) as u8,
                    0x80 | ((unit >> 6) & 0x3F) as u8,
                    0x80 | (unit & 0x3F) as u8,
                ]);
                after_high = unit < 0xDC00;
            }
        }
    }
    bytes
}

fn text() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(piece(), 0..12).prop_map(|pieces| wtf8(&pieces))
}

/// How a line is written.
#[derive(Debug, Clone, Copy)]
enum Style {
    /// As `json.dumps` writes it, `ensure_ascii` on or off.
    Release { ensure_ascii: bool },
    /// Compact separators, and every `é` of the text escaped though the line is UTF-8.
    Other,
}

fn style() -> impl Strategy<Value = Style> {
    prop_oneof![
        3 => any::<bool>().prop_map(|ensure_ascii| Style::Release { ensure_ascii }),
        1 => Just(Style::Other),
    ]
}

/// A string literal in `style`.
fn string(text: &[u8], style: Style) -> Vec<u8> {
    let mut out = Vec::new();
    match style {
        Style::Release { ensure_ascii } => push_string(&mut out, text, ensure_ascii),
        Style::Other => {
            push_string(&mut out, text, false);
            let escaped = String::from_utf8_lossy(&out).replace('é', "\\u00e9");
            let escaped = escaped.replace('/', "\\/");
            // `push_string` wrote lone surrogates as escapes, so the text is UTF-8.
            out = escaped.into_bytes();
        }
    }
    out
}

#[derive(Debug, Clone)]
struct Record {
    prompt: Vec<(Vec<u8>, Vec<u8>)>,
    tests: Vec<(Vec<u8>, Vec<u8>)>,
    functional: Option<Vec<Vec<u8>>>,
    metadata: [Vec<u8>; 5],
    /// 0: label written as the ground truth; 1: keys in the other order; 2: another value.
    label_kind: u8,
    style: Style,
}

fn record() -> impl Strategy<Value = Record> {
    (
        prop::collection::vec((text(), text()), 1..3),
        prop::collection::vec((text(), text()), 1..4),
        prop::option::of(prop::collection::vec(text(), 1..3)),
        [text(), text(), text(), text(), text()],
        0u8..3,
        style(),
    )
        .prop_map(
            |(prompt, tests, functional, metadata, label_kind, style)| Record {
                prompt,
                tests,
                functional,
                metadata,
                label_kind,
                style,
            },
        )
}

impl Record {
    fn line(&self) -> Vec<u8> {
        let style = self.style;
        let (comma, colon): (&[u8], &[u8]) = match style {
            Style::Release { .. } => (b", ", b": "),
            Style::Other => (b",", b":"),
        };
        let list = |items: &mut dyn Iterator<Item = &Vec<u8>>| {
            let mut out = vec![b'['];
            for (position, item) in items.enumerate() {
                if position > 0 {
                    out.extend_from_slice(comma);
                }
                out.extend_from_slice(&string(item, style));
            }
            out.push(b']');
            out
        };
        let member = |out: &mut Vec<u8>, key: &str, value: &[u8]| {
            out.extend_from_slice(&string(key.as_bytes(), style));
            out.extend_from_slice(colon);
            out.extend_from_slice(value);
        };
        let tests = |swapped: bool| {
            let mut out = vec![b'{'];
            match &self.functional {
                Some(functional) => member(&mut out, "functional", &list(&mut functional.iter())),
                None => {
                    let inputs = list(&mut self.tests.iter().map(|(input, _)| input));
                    let outputs = list(&mut self.tests.iter().map(|(_, output)| output));
                    let (first, second) = if swapped {
                        (("outputs", outputs), ("inputs", inputs))
                    } else {
                        (("inputs", inputs), ("outputs", outputs))
                    };
                    member(&mut out, first.0, &first.1);
                    out.extend_from_slice(comma);
                    member(&mut out, second.0, &second.1);
                }
            }
            out.push(b'}');
            out
        };
        let ground_truth = tests(false);
        let label = match self.label_kind {
            0 => ground_truth.clone(),
            1 => tests(true),
            _ => b"{\"functional\": [\"assert True\"]}".to_vec(),
        };
        let mut line = vec![b'{'];
        let mut prompt = vec![b'['];
        for (position, (role, content)) in self.prompt.iter().enumerate() {
            if position > 0 {
                prompt.extend_from_slice(comma);
            }
            prompt.push(b'{');
            member(&mut prompt, "role", &string(role, style));
            prompt.extend_from_slice(comma);
            member(&mut prompt, "content", &string(content, style));
            prompt.push(b'}');
        }
        prompt.push(b']');
        member(&mut line, "prompt", &prompt);
        line.extend_from_slice(comma);
        member(&mut line, "label", &label);
        line.extend_from_slice(comma);
        let mut metadata = vec![b'{'];
        for (key, value) in ["data_type", "data_source", "ability", "style", "hash"]
            .iter()
            .zip(&self.metadata)
        {
            member(&mut metadata, key, &string(value, style));
            metadata.extend_from_slice(comma);
        }
        member(&mut metadata, "ground_truth", &ground_truth);
        metadata.push(b'}');
        member(&mut line, "metadata", &metadata);
        line.push(b'}');
        line
    }
}

fn round_trip(directory: &Path, source: &[u8], layout: Layout) -> Vec<u8> {
    let input = directory.join("source.jsonl");
    std::fs::write(&input, source).expect("writes");
    let export = directory.join(format!("export-{}", layout.name()));
    let options = ExportOptions {
        layout,
        shard_bytes: 2_000,
        row_group_rows: 2,
        encoders: 2,
        overwrite: true,
        read: ReadOptions {
            workers: 2,
            ..ReadOptions::default()
        },
        ..ExportOptions::default()
    };
    let report = export_parquet(&input, &export, &options).expect("exports");
    assert_eq!(report.bad_line_count, 0, "{:?}", report.bad_lines);
    assert!(report.inexact_rows.is_empty());
    let output = directory.join(format!("import-{}.jsonl", layout.name()));
    import_parquet(&export, &output).expect("imports");
    std::fs::read(&output).expect("reads")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn issue_13_export_then_import_gives_every_accepted_line_back(
        records in prop::collection::vec(record(), 1..8)
    ) {
        let mut source = Vec::new();
        for record in &records {
            let line = record.line();
            // Every generated line is a record the reader accepts.
            rlvr_dataset::check_record(&line).map_err(|error| {
                TestCaseError::fail(format!("{error}: {}", String::from_utf8_lossy(&line)))
            })?;
            source.extend_from_slice(&line);
            source.push(b'\n');
        }
        let directory = tempfile::tempdir().expect("temp dir");
        for layout in [Layout::Hf, Layout::Verl] {
            let imported = round_trip(directory.path(), &source, layout);
            prop_assert!(
                imported == source,
                "{}:\nsource:\n{}\nimported:\n{}",
                layout.name(),
                String::from_utf8_lossy(&source),
                String::from_utf8_lossy(&imported)
            );
        }
    }
}

/// The lines of the release itself need no kept copy: they come back from the columns.
#[test]
fn release_written_lines_are_rebuilt_from_the_columns() {
    let record = Record {
        prompt: vec![(
            b"user".to_vec(),
            "Solve é \u{2028}\u{1c}".as_bytes().to_vec(),
        )],
        tests: vec![(b"1\n".to_vec(), b"2\n".to_vec())],
        functional: None,
        metadata: [
            b"code".to_vec(),
            b"coder1_longcot".to_vec(),
            b"code".to_vec(),
            b"rule".to_vec(),
            b"0123".to_vec(),
        ],
        label_kind: 0,
        style: Style::Release {
            ensure_ascii: false,
        },
    };
    let mut source = record.line();
    source.push(b'\n');
    let directory = tempfile::tempdir().expect("temp dir");
    let input = directory.path().join("source.jsonl");
    std::fs::write(&input, &source).expect("writes");
    let report = export_parquet(
        &input,
        &directory.path().join("export"),
        &ExportOptions::default(),
    )
    .expect("exports");
    assert_eq!(report.source_lines_kept, 0);
    let output = directory.path().join("import.jsonl");
    import_parquet(&directory.path().join("export"), &output).expect("imports");
    assert_eq!(std::fs::read(&output).expect("reads"), source);
}

/// Past a shard's budget for kept lines, rows are reported and come back equal record by
/// record (here: the compact separators become `json.dumps`'s).
#[test]
fn rows_past_the_kept_line_budget_are_reported_and_come_back_equal() {
    let record = |hash: &[u8]| Record {
        prompt: vec![(b"user".to_vec(), b"Solve it".to_vec())],
        tests: vec![(b"1\n".to_vec(), b"2\n".to_vec())],
        functional: None,
        metadata: [
            b"code".to_vec(),
            b"coder1_longcot".to_vec(),
            b"code".to_vec(),
            b"rule".to_vec(),
            hash.to_vec(),
        ],
        label_kind: 0,
        style: Style::Other,
    };
    let lines: Vec<Vec<u8>> = [b"a", b"b", b"c"]
        .iter()
        .map(|hash| record(*hash).line())
        .collect();
    let source: Vec<u8> = lines
        .iter()
        .flat_map(|line| [line.as_slice(), b"\n"].concat())
        .collect();
    let directory = tempfile::tempdir().expect("temp dir");
    let input = directory.path().join("source.jsonl");
    std::fs::write(&input, &source).expect("writes");
    let export = directory.path().join("export");
    let options = ExportOptions {
        source_lines_budget: lines[0].len() + 1,
        ..ExportOptions::default()
    };
    let report = export_parquet(&input, &export, &options).expect("exports");
    assert_eq!(report.source_lines_kept, 1);
    assert_eq!(report.inexact_rows, [1, 2]);
    assert!(report.has_problems());
    let output = directory.path().join("import.jsonl");
    import_parquet(&export, &output).expect("imports");
    let imported = std::fs::read_to_string(&output).expect("reads");
    let imported: Vec<&str> = imported.lines().collect();
    assert_eq!(imported[0].as_bytes(), lines[0].as_slice());
    for (imported, source) in imported.iter().zip(&lines).skip(1) {
        assert_ne!(imported.as_bytes(), source.as_slice());
        let imported = rlvr_dataset::parse_line(imported.as_bytes()).expect("parses");
        let source = rlvr_dataset::parse_line(source).expect("parses");
        assert!(imported.python_eq(&source));
    }
}
