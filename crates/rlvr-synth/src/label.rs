//! Test payloads: the `label` object (written twice per record, as `label` and as
//! `metadata.ground_truth`). Input/output records get multi-line inputs cut from the shared text
//! pool and mostly short outputs, sized to the row's byte budget; the mixed-value records get a
//! few `["123"]`-style list entries in both lists; functional records get Python assert strings
//! calling the function their prompt names.

use std::io::Write;

use rand::RngExt;
use rand::seq::index;

use crate::pool::TextPool;
use crate::prompt::{FunctionSpec, ParameterKind, ReturnKind};
use crate::random::Random;
use rlvr_python_compat::dumps::{push_string, push_string_body};

/// Share of an input/output record's test bytes that goes to the inputs.
const INPUT_SHARE: f64 = 0.85;
/// Output strings shorter than this are short answers rather than slices of the pool.
const SHORT_OUTPUT_BYTES: f64 = 40.0;
/// Chance that an input string carries a line with tabs, quotes or backslashes.
const SPECIAL_LINE_CHANCE: f64 = 0.004;
const SPECIAL_LINES: &[&str] = &[
    "say \"hi\"\tthen wait\n",
    "C:\\temp\\input.txt\n",
    "a\tb\tc\n",
    "it's \"quoted\" \\ escaped\n",
];
const WORDS: &[&str] = &[
    "hello",
    "world",
    "abc",
    "racecar",
    "Level",
    "snake_case-text",
    "it's",
    "café",
    "x",
    "",
];

/// Appends `{"inputs": [...], "outputs": [...]}` for `pairs` pairs of about `body_bytes` escaped
/// bytes in all, `list_values` of them list-valued on both sides.
pub(crate) fn push_input_output_label(
    out: &mut Vec<u8>,
    random: &mut Random,
    pool: &TextPool,
    pairs: u32,
    body_bytes: u64,
    list_values: u32,
) {
    let pairs_usize = pairs as usize;
    let list_positions: Vec<usize> = if list_values > 0 && pairs >= list_values {
        index::sample(random, pairs_usize, list_values as usize).into_vec()
    } else {
        Vec::new()
    };
    let input_budget = body_bytes as f64 * INPUT_SHARE;
    let output_budget = body_bytes as f64 - input_budget;
    let header_style = random.random_range(0..3u8);
    out.extend_from_slice(b"{\"inputs\": [");
    push_strings(
        out,
        random,
        pairs_usize,
        &list_positions,
        input_budget,
        |out, random, target| {
            let target = target as usize;
            let header_start = out.len();
            // Writing to a Vec cannot fail.
            let _ = match header_style {
                0 => write!(out, "{}\\n", random.random_range(1..200_000)),
                1 => write!(
                    out,
                    "{} {}\\n",
                    random.random_range(1..2_000),
                    random.random_range(1..2_000)
                ),
                _ => write!(out, "1\\n{}\\n", random.random_range(1..100_000)),
            };
            if random.random_bool(SPECIAL_LINE_CHANCE) {
                push_string_body(
                    out,
                    SPECIAL_LINES[random.random_range(0..SPECIAL_LINES.len())].as_bytes(),
                    false,
                );
            }
            let header_bytes = out.len() - header_start;
            if target > header_bytes + 2 {
                pool.push_slice(random, out, target - header_bytes);
            }
        },
    );
    out.extend_from_slice(b"], \"outputs\": [");
    push_strings(
        out,
        random,
        pairs_usize,
        &list_positions,
        output_budget,
        |out, random, target| {
            if target < SHORT_OUTPUT_BYTES {
                push_short_answer(out, random);
            } else {
                pool.push_slice(random, out, target as usize);
            }
        },
    );
    out.extend_from_slice(b"]}");
}

/// The `count` strings of one side (inputs or outputs), comma-separated, a list value at each
/// of `list_positions`. Each string aims at its share of what is left of `budget`, so the
/// side's total corrects itself as it goes and lands close to the budget; `body` writes a
/// string's contents, given the bytes it aims at.
fn push_strings(
    out: &mut Vec<u8>,
    random: &mut Random,
    count: usize,
    list_positions: &[usize],
    mut budget: f64,
    mut body: impl FnMut(&mut Vec<u8>, &mut Random, f64),
) {
    for index in 0..count {
        if index > 0 {
            out.extend_from_slice(b", ");
        }
        if list_positions.contains(&index) {
            push_list_value(out, random);
            continue;
        }
        let string_start = out.len();
        out.push(b'"');
        let share = budget.max(0.0) / (count - index) as f64;
        let target = share * spread_factor(random);
        body(out, random, target);
        out.push(b'"');
        budget -= (out.len() - string_start - 2) as f64;
    }
}

/// How much one string's size differs from its share: uniform in 0.25..1.75, mean 1 (cheap,
/// since it is drawn for every string).
fn spread_factor(random: &mut Random) -> f64 {
    0.25 + 1.5 * random.random::<f64>()
}

/// A list-valued test entry such as `["123"]`, the quirk of three released records.
fn push_list_value(out: &mut Vec<u8>, random: &mut Random) {
    out.extend_from_slice(format!("[\"{}\"]", random.random_range(0..100_000)).as_bytes());
}

fn push_short_answer(out: &mut Vec<u8>, random: &mut Random) {
    let answer = match random.random_range(0..8u8) {
        0 => "YES".to_string(),
        1 => "NO".to_string(),
        2 => "-1".to_string(),
        3 => format!(
            "{} {}",
            random.random_range(0..1000),
            random.random_range(0..1000)
        ),
        4 => format!("{:.9}", random.random::<f64>() * 100.0),
        _ => random.random_range(0..1_000_000_000u64).to_string(),
    };
    out.extend_from_slice(answer.as_bytes());
    out.extend_from_slice(b"\\n");
}

/// Appends `{"functional": [...]}` with `asserts` assert strings calling `function`.
pub(crate) fn push_functional_label(
    out: &mut Vec<u8>,
    random: &mut Random,
    function: &FunctionSpec,
    asserts: u32,
    ascii_only: bool,
) {
    out.extend_from_slice(b"{\"functional\": [");
    for index in 0..asserts {
        if index > 0 {
            out.extend_from_slice(b", ");
        }
        let argument = match function.parameter_kind {
            ParameterKind::Integer => random.random_range(0..10_000u32).to_string(),
            ParameterKind::Text => {
                python_repr(&format!("{} {}", pick_word(random), pick_word(random)))
            }
            ParameterKind::IntegerList => {
                let length = random.random_range(0..8);
                let items: Vec<String> = (0..length)
                    .map(|_| random.random_range(-50..100i32).to_string())
                    .collect();
                format!("[{}]", items.join(", "))
            }
        };
        let expected = match function.returns {
            ReturnKind::Boolean => if random.random_bool(0.5) {
                "True"
            } else {
                "False"
            }
            .to_string(),
            ReturnKind::Integer => random.random_range(-100..100_000i64).to_string(),
            ReturnKind::Text => python_repr(pick_word(random)),
        };
        let assertion = format!("assert {}({argument}) == {expected}", function.name);
        push_string(out, assertion.as_bytes(), ascii_only);
    }
    out.extend_from_slice(b"]}");
}

fn pick_word(random: &mut Random) -> &'static str {
    WORDS[random.random_range(0..WORDS.len())]
}

/// Python's `repr` of a simple string: single quotes unless it contains one.
fn python_repr(text: &str) -> String {
    if text.contains('\'') {
        format!("\"{text}\"")
    } else {
        format!("'{text}'")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::{Stream, random_for};

    #[test]
    fn input_output_labels_are_valid_json_with_the_requested_shape() {
        let pool = TextPool::new(1, 64 * 1024);
        let mut random = random_for(1, Stream::Row, 0);
        let mut out = Vec::new();
        push_input_output_label(&mut out, &mut random, &pool, 40, 40_000, 2);
        let label: serde_json::Value = serde_json::from_slice(&out).expect("valid JSON");
        let inputs = label["inputs"].as_array().expect("inputs");
        let outputs = label["outputs"].as_array().expect("outputs");
        assert_eq!((inputs.len(), outputs.len()), (40, 40));
        assert_eq!(inputs.iter().filter(|value| value.is_array()).count(), 2);
        assert_eq!(outputs.iter().filter(|value| value.is_array()).count(), 2);
        assert!(out.len() > 30_000 && out.len() < 55_000, "{}", out.len());
    }

    #[test]
    fn functional_labels_call_the_named_function() {
        let mut random = random_for(1, Stream::Row, 0);
        let function = crate::prompt::function_for(&mut random);
        let mut out = Vec::new();
        push_functional_label(&mut out, &mut random, function, 23, true);
        let label: serde_json::Value = serde_json::from_slice(&out).expect("valid JSON");
        let tests = label["functional"].as_array().expect("functional");
        assert_eq!(tests.len(), 23);
        let prefix = format!("assert {}(", function.name);
        assert!(
            tests
                .iter()
                .all(|test| test.as_str().is_some_and(|text| text.starts_with(&prefix)))
        );
    }
}
