//! The reader's positions (rows, lines, byte offsets) across chunk boundaries, CRLF, blank lines
//! and a missing final newline; `read_row`; and the law that stats accumulators merge in any
//! grouping and order to the same result.

use proptest::prelude::*;
use rlvr_dataset::stats::{RowFigures, StatsAccumulator, TestFigures};
use rlvr_dataset::{
    LinePosition, ReadError, ReadOptions, RowLookup, for_each_line, read_row, try_for_each_line,
};

fn record(prompt: &str) -> String {
    let tests = format!(
        "{{\"inputs\":[\"{}\\n\"],\"outputs\":[\"1\\n\"]}}",
        "7 ".repeat(300)
    );
    format!(
        "{{\"prompt\":[{{\"role\":\"user\",\"content\":\"{prompt}\"}}],\"label\":{tests},\"metadata\":{{\"data_type\":\"code\",\"data_source\":\"coder1_longcot\",\"ability\":\"code\",\"style\":\"rule\",\"hash\":\"h\",\"ground_truth\":{tests}}}}}"
    )
}

#[test]
fn positions_survive_chunking_crlf_blank_lines_and_no_final_newline() {
    let directory = tempfile::tempdir().expect("tempdir");
    let path = directory.path().join("file.jsonl");
    let mut text = String::new();
    let mut expected = Vec::new();
    let mut row = 0;
    for line in 0..40u64 {
        if line % 7 == 3 {
            text.push_str("  \r\n");
            continue;
        }
        expected.push(LinePosition {
            row,
            line: line + 1,
            byte_offset: text.len() as u64,
        });
        row += 1;
        text.push_str(&record(&format!("p{line}")));
        text.push_str(if line % 2 == 0 { "\r\n" } else { "\n" });
    }
    text.push_str(&record("last"));
    expected.push(LinePosition {
        row,
        line: 41,
        byte_offset: (text.len() - record("last").len()) as u64,
    });
    std::fs::write(&path, &text).expect("write");
    for chunk_bytes in [1024, 4096, 1 << 20] {
        let options = ReadOptions {
            chunk_bytes,
            workers: 3,
            sha256: true,
        };
        let mut seen = Vec::new();
        let summary = for_each_line(
            &path,
            &options,
            |line| line.parse().is_ok(),
            |position, parsed| {
                assert!(parsed, "row {position:?} parses");
                seen.push(position);
            },
        )
        .expect("read");
        assert_eq!(seen, expected, "chunk {chunk_bytes}");
        assert_eq!(summary.lines, 41);
        assert_eq!(summary.blank_lines, 6);
        assert_eq!(summary.bytes, text.len() as u64);
        assert!(summary.sha256.is_some());
    }
    for position in [expected[0], expected[5], expected[expected.len() - 1]] {
        match read_row(&path, position.row).expect("read_row") {
            RowLookup::Found(raw) => {
                assert_eq!(raw.position, position);
                assert!(!raw.bytes.ends_with(b"\r"));
                assert!(rlvr_dataset::check_record(&raw.bytes).is_ok());
            }
            RowLookup::OutOfRange { .. } => panic!("row {} not found", position.row),
        }
    }
    assert_eq!(
        read_row(&path, 1000).expect("read_row"),
        RowLookup::OutOfRange {
            rows: expected.len() as u64
        }
    );
}

#[test]
fn crlf_inside_a_line_is_reported_like_python_splitting_it() {
    let error = rlvr_dataset::parse_line(b"{\"a\":\r1}").expect_err("lone carriage return");
    assert!(error.to_string().contains("carriage return"), "{error}");
}

fn figures() -> impl Strategy<Value = RowFigures> {
    (
        0u64..50,
        0u8..6,
        0u8..4,
        prop::bool::ANY,
        1u64..20,
        0u64..3,
        prop::bool::ANY,
    )
        .prop_map(
            |(chars, prompt, hash, functional, count, lists, equal)| RowFigures {
                prompt_chars: chars,
                prompt_key: [prompt; 16],
                normalized_prompt_key: [prompt / 2; 16],
                hash_key: [hash; 16],
                tests: if functional {
                    TestFigures::Functional { tests: count }
                } else {
                    TestFigures::InputOutput {
                        pairs: count,
                        list_values: lists,
                    }
                },
                label_equals_ground_truth: equal,
                routing_constants_match: !equal || chars > 2,
            },
        )
}

proptest! {
    #[test]
    fn merging_accumulators_is_order_and_grouping_independent(
        rows in prop::collection::vec(figures(), 0..60),
        cuts in prop::collection::vec(0usize..60, 0..5),
        reverse in prop::bool::ANY,
    ) {
        let mut sequential = StatsAccumulator::default();
        for (index, row) in rows.iter().enumerate() {
            sequential.add(index as u64, row);
        }
        let mut bounds: Vec<usize> = cuts.into_iter().map(|cut| cut.min(rows.len())).collect();
        bounds.push(0);
        bounds.push(rows.len());
        bounds.sort_unstable();
        let mut parts: Vec<StatsAccumulator> = bounds
            .windows(2)
            .map(|window| {
                let mut part = StatsAccumulator::default();
                for (index, row) in rows.iter().enumerate().take(window[1]).skip(window[0]) {
                    part.add(index as u64, row);
                }
                part
            })
            .collect();
        if reverse {
            parts.reverse();
        }
        let mut merged = StatsAccumulator::default();
        for part in parts {
            merged.merge(part);
        }
        prop_assert_eq!(merged.finish(1, None), sequential.finish(1, None));
    }
}

/// A panic in the caller's `map` (on a worker thread) or `consume` (on the calling thread)
/// reaches the caller as that panic, with every thread ended, never a reader waiting forever
/// for buffers the lost chunk would have returned. Many small chunks, more than the buffer
/// pool holds, and the hash thread on.
#[test]
fn a_panic_in_the_callers_functions_reaches_the_caller_and_nothing_hangs() {
    let directory = tempfile::tempdir().expect("tempdir");
    let path = directory.path().join("file.jsonl");
    let text: String = (0..4000)
        .map(|line| format!("{{\"line\":{line}}}\n"))
        .collect();
    std::fs::write(&path, text).expect("write");
    let options = ReadOptions {
        chunk_bytes: 1024,
        workers: 2,
        sha256: true,
    };
    for panic_in_map in [true, false] {
        let (sender, receiver) = std::sync::mpsc::channel();
        let (path, options) = (path.clone(), options.clone());
        std::thread::spawn(move || {
            let outcome = std::panic::catch_unwind(|| {
                for_each_line(
                    &path,
                    &options,
                    |line| {
                        if panic_in_map && line.bytes == b"{\"line\":37}" {
                            panic!("map failed on line 38");
                        }
                        line.bytes.len()
                    },
                    |position, _| {
                        if !panic_in_map && position.line == 200 {
                            panic!("consume failed on line 200");
                        }
                    },
                )
            });
            let _ = sender.send(outcome.map(|_| ()).map_err(|payload| {
                payload
                    .downcast_ref::<&str>()
                    .map(|text| (*text).to_owned())
                    .unwrap_or_default()
            }));
        });
        let outcome = receiver
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("for_each_line returned (no deadlock)");
        let expected = if panic_in_map {
            "map failed on line 38"
        } else {
            "consume failed on line 200"
        };
        assert_eq!(outcome, Err(expected.to_owned()));
    }
}

/// What a failing consumer sees come back, or a problem with the file.
#[derive(Debug)]
enum ConsumerStop {
    Full(u64),
    Read(ReadError),
}

impl From<ReadError> for ConsumerStop {
    fn from(error: ReadError) -> Self {
        Self::Read(error)
    }
}

/// Issue 23: a consumer that fails (a full disk while writing rows out) stops the read at once:
/// its error comes back, and only the chunks already in the buffer pool were read and parsed,
/// not the rest of the file.
#[test]
fn a_failing_consumer_stops_the_read_after_a_bounded_amount() {
    let directory = tempfile::tempdir().expect("tempdir");
    let path = directory.path().join("file.jsonl");
    let line_bytes = 100;
    let lines = 20_000u64;
    let text: String = (0..lines)
        .map(|line| format!("{{\"line\":{line:>width$}}}\n", width = line_bytes - 10))
        .collect();
    assert_eq!(text.len(), line_bytes * lines as usize);
    std::fs::write(&path, text).expect("write");
    let options = ReadOptions {
        chunk_bytes: 1024,
        workers: 2,
        sha256: true,
    };
    // The pool, one chunk the reader may start just before it sees the stop, the chunk being
    // consumed; each chunk grows past `chunk_bytes` to the end of its last line.
    let bound = (2 * options.workers as u64 + 4) * (options.chunk_bytes / line_bytes + 1) as u64;
    for fail_at_row in [0, 500] {
        let mapped = std::sync::atomic::AtomicU64::new(0);
        let mut consumed = 0;
        let outcome = try_for_each_line(
            &path,
            &options,
            |line| {
                mapped.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                line.bytes.len()
            },
            |position, _| {
                consumed += 1;
                if position.row == fail_at_row {
                    return Err(ConsumerStop::Full(position.row));
                }
                Ok(())
            },
        );
        assert!(
            matches!(outcome, Err(ConsumerStop::Full(row)) if row == fail_at_row),
            "{outcome:?}"
        );
        assert_eq!(
            consumed,
            fail_at_row + 1,
            "no row is consumed after the error"
        );
        let mapped = mapped.into_inner();
        assert!(
            mapped <= fail_at_row + 1 + bound,
            "{mapped} of {lines} lines parsed after the consumer failed at row {fail_at_row} (bound {bound})"
        );
    }
    let missing = try_for_each_line(
        &directory.path().join("missing.jsonl"),
        &options,
        |line| line.bytes.len(),
        |_, _| Ok::<(), ConsumerStop>(()),
    );
    assert!(
        matches!(missing, Err(ConsumerStop::Read(ReadError::Io { .. }))),
        "{missing:?}"
    );
}
