//! `rlvr show`: prints one record by zero-based row index: the prompt, the test kind and counts,
//! the first tests (long values truncated, with a note) and the metadata. Only newlines are
//! scanned up to the row; nothing else is parsed.
//!
//! Exit status: 0 shown; 1 the row exists but is not a valid record (the reason is printed);
//! 2 unreadable file or an index past the last row.

use std::fmt::Write;
use std::path::PathBuf;

use rlvr_dataset::stats::group_thousands;
use rlvr_dataset::{
    BadLine, LineError, MessageRef, RecordRef, RowLookup, TestsRef, parse_line, read_row,
};
use rlvr_python_compat::json::{JsonStr, ValueRef, write_json_string};

use crate::command::validate::unreadable;
use crate::exit::{Error, Status};
use crate::stdout::{out, outln};

/// Characters of the prompt printed before truncating.
const PROMPT_CHARS_SHOWN: usize = 4000;
/// Characters of one test value printed before truncating.
const TEST_CHARS_SHOWN: usize = 300;
/// Tests printed.
const TESTS_SHOWN: usize = 3;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The JSON Lines file.
    file: PathBuf,
    /// Zero-based row index (blank lines are not rows).
    index: u64,
    /// Print `{"row", "line", "byte_offset", "record"}` with the record exactly as parsed.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: Args) -> Result<Status, Error> {
    let raw = match read_row(&args.file, args.index).map_err(unreadable)? {
        RowLookup::Found(raw) => raw,
        RowLookup::OutOfRange { rows } => {
            return Err(Error::usage(format!(
                "row {} is out of range: `{}` has {rows} rows",
                args.index,
                args.file.display()
            )));
        }
    };
    let bad_line = |error: LineError| BadLine {
        path: args.file.clone(),
        position: raw.position,
        error,
    };
    let value = match parse_line(&raw.bytes) {
        Ok(value) => value,
        Err(error) => {
            eprintln!("rlvr: bad line: {}", bad_line(error));
            return Ok(Status::ProblemsFound);
        }
    };
    if args.json {
        let position = raw.position;
        outln!(
            "{{\"row\":{},\"line\":{},\"byte_offset\":{},\"record\":{}}}",
            position.row,
            position.line,
            position.byte_offset,
            value.to_owned_value().to_json()
        )?;
        return Ok(Status::Success);
    }
    let record = RecordRef::from_value(&value).and_then(|record| Ok((record, record.messages()?)));
    let (record, messages) = match record {
        Ok(found) => found,
        Err(source) => {
            eprintln!(
                "rlvr: bad line: {}",
                bad_line(LineError::InvalidRecord { error: source })
            );
            return Ok(Status::ProblemsFound);
        }
    };
    let mut out = String::new();
    let position = raw.position;
    let _ = writeln!(
        out,
        "row {} (line {}, byte offset {})",
        position.row, position.line, position.byte_offset
    );
    render_record(&mut out, &record, &messages);
    out!("{out}")?;
    Ok(Status::Success)
}

fn truncated(text: &str, limit: usize) -> (String, Option<usize>) {
    let total = text.chars().count();
    if total <= limit {
        (text.to_owned(), None)
    } else {
        (text.chars().take(limit).collect(), Some(total))
    }
}

fn json_text(string: &JsonStr<'_>) -> String {
    let mut out = String::new();
    write_json_string(&string.decode(), &mut out);
    out
}

fn test_value_text(value: &ValueRef<'_>) -> String {
    let text = match value.as_json_str() {
        Some(string) => json_text(string),
        None => value.to_owned_value().to_json(),
    };
    match truncated(&text, TEST_CHARS_SHOWN) {
        (text, None) => text,
        (text, Some(total)) => format!(
            "{text}... [truncated: {} characters in all]",
            group_thousands(total as u64)
        ),
    }
}

fn render_record(out: &mut String, record: &RecordRef<'_, '_>, messages: &[MessageRef<'_, '_>]) {
    let _ = writeln!(out, "prompt: {} message(s)", messages.len());
    for message in messages {
        let content = message.content.to_string_lossy();
        let _ = writeln!(
            out,
            "--- {} ({} characters) ---",
            message.role.to_string_lossy(),
            group_thousands(message.content.code_point_count() as u64)
        );
        let (text, total) = truncated(&content, PROMPT_CHARS_SHOWN);
        let _ = writeln!(out, "{text}");
        if let Some(total) = total {
            let _ = writeln!(
                out,
                "[truncated: first {PROMPT_CHARS_SHOWN} of {} characters shown]",
                group_thousands(total as u64)
            );
        }
    }
    let _ = writeln!(out, "---");
    match record.label {
        TestsRef::InputOutput { inputs, outputs } => {
            let lists = inputs
                .iter()
                .chain(outputs)
                .filter(|value| value.as_json_str().is_none())
                .count();
            let _ = write!(
                out,
                "tests: input/output, {} inputs, {} outputs",
                inputs.len(),
                outputs.len()
            );
            let _ = writeln!(
                out,
                "{}",
                if lists > 0 {
                    format!(" ({lists} list-valued, kept as released)")
                } else {
                    String::new()
                }
            );
            for (position, (input, output)) in
                inputs.iter().zip(outputs).take(TESTS_SHOWN).enumerate()
            {
                let _ = writeln!(out, "  [{position}] input:  {}", test_value_text(input));
                let _ = writeln!(out, "      output: {}", test_value_text(output));
            }
            let shown = inputs.len().min(outputs.len()).min(TESTS_SHOWN);
            if inputs.len().max(outputs.len()) > shown {
                let _ = writeln!(
                    out,
                    "  ... {} more not shown",
                    inputs.len().max(outputs.len()) - shown
                );
            }
        }
        TestsRef::Functional { tests } => {
            let _ = writeln!(out, "tests: functional, {} test strings", tests.len());
            for (position, test) in tests.iter().take(TESTS_SHOWN).enumerate() {
                let test = test
                    .as_json_str()
                    .map(JsonStr::to_string_lossy)
                    .unwrap_or_default();
                let (text, total) = truncated(&test, TEST_CHARS_SHOWN);
                let note = total
                    .map(|total| format!("... [truncated: {total} characters in all]"))
                    .unwrap_or_default();
                let _ = writeln!(out, "  [{position}] {text}{note}");
            }
            if tests.len() > TESTS_SHOWN {
                let _ = writeln!(out, "  ... {} more not shown", tests.len() - TESTS_SHOWN);
            }
        }
    }
    let _ = writeln!(out, "metadata:");
    for (name, value) in [
        ("data_type", record.data_type),
        ("data_source", record.data_source),
        ("ability", record.ability),
        ("style", record.style),
        ("hash", record.hash),
    ] {
        let _ = writeln!(out, "  {name}: {}", json_text(value));
    }
    let comparison = if record.label_equals_ground_truth() {
        "equal to label"
    } else {
        "DIFFERS from label"
    };
    let _ = writeln!(out, "  ground_truth: {comparison}");
}
