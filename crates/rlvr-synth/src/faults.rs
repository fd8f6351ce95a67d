//! Injected lines for tests of bad input: one line per fault kind that validation must reject,
//! and one per quirk that Python's `json` accepts and so must the reader (a lone surrogate
//! escape, a CRLF line end, an escaped solidus, keys in another order). Each is a small record
//! built from one valid template with one thing changed, so it trips exactly the check named.

use serde::Serialize;
use serde_json::{Value, json};

use rlvr_python_compat::dumps::push_serde_value;

/// What an injected line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InjectionKind {
    /// A record cut off in the middle: not valid JSON.
    InvalidJson,
    /// Bytes that are not UTF-8 inside a string.
    NonUtf8,
    /// The `label` key is missing.
    MissingTopLevelKey,
    /// An `id` key next to the three released ones.
    ExtraTopLevelKey,
    /// Two user messages in `prompt`.
    TwoMessages,
    /// A user message with empty content.
    EmptyContent,
    /// The single message has role `assistant`.
    AssistantRole,
    /// `label` and `metadata.ground_truth` differ in one output.
    LabelDiffersFromGroundTruth,
    /// Two inputs and one output.
    InputOutputLengthMismatch,
    /// Empty `inputs` and `outputs`.
    EmptyInputs,
    /// An empty `functional` list.
    EmptyFunctional,
    /// `data_source` is not `coder1_longcot`.
    WrongDataSource,
    /// A valid record whose prompt holds the lone surrogate escape `\ud800` (Python accepts it).
    LoneSurrogateEscape,
    /// A valid record ending in `\r\n`.
    CrlfLineEnding,
    /// A valid record with an escaped solidus `\/` in its prompt.
    EscapedSolidus,
    /// A valid record with top-level, metadata and ground-truth keys in another order.
    KeysReordered,
}

/// Whether a reader and validator must reject or accept an injected line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExpectedOutcome {
    /// The named check fails for this row.
    Rejected,
    /// The row is a valid record; every check passes for it.
    Accepted,
}

/// One injected line and where it was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InjectedLine {
    /// What the line is.
    pub kind: InjectionKind,
    /// Zero-based row index (every line of a synthetic file is non-empty, so this is line - 1).
    pub row: u64,
    /// One-based line number.
    pub line: u64,
    /// Byte offset of the line's first byte.
    pub byte_offset: u64,
    /// Whether validation must reject or accept the line.
    pub expect: ExpectedOutcome,
    /// The validation check the line must fail (for rejected lines): `valid_json`,
    /// `top_level_keys`, `single_user_message`, `label_equals_ground_truth`,
    /// `input_output_paired`, `functional_non_empty` or `routing_constants`.
    pub check: Option<&'static str>,
}

impl InjectionKind {
    /// Every kind, in the order they are written.
    pub const ALL: [InjectionKind; 16] = [
        Self::InvalidJson,
        Self::MissingTopLevelKey,
        Self::LoneSurrogateEscape,
        Self::ExtraTopLevelKey,
        Self::TwoMessages,
        Self::CrlfLineEnding,
        Self::EmptyContent,
        Self::AssistantRole,
        Self::EscapedSolidus,
        Self::LabelDiffersFromGroundTruth,
        Self::InputOutputLengthMismatch,
        Self::KeysReordered,
        Self::EmptyInputs,
        Self::EmptyFunctional,
        Self::WrongDataSource,
        Self::NonUtf8,
    ];

    /// The validation check this line must fail, or `None` for an accepted quirk.
    pub fn check(self) -> Option<&'static str> {
        match self {
            Self::InvalidJson | Self::NonUtf8 => Some("valid_json"),
            Self::MissingTopLevelKey | Self::ExtraTopLevelKey => Some("top_level_keys"),
            Self::TwoMessages | Self::EmptyContent | Self::AssistantRole => {
                Some("single_user_message")
            }
            Self::LabelDiffersFromGroundTruth => Some("label_equals_ground_truth"),
            Self::InputOutputLengthMismatch | Self::EmptyInputs => Some("input_output_paired"),
            Self::EmptyFunctional => Some("functional_non_empty"),
            Self::WrongDataSource => Some("routing_constants"),
            Self::LoneSurrogateEscape
            | Self::CrlfLineEnding
            | Self::EscapedSolidus
            | Self::KeysReordered => None,
        }
    }

    /// Whether validation must reject or accept the line.
    pub fn expect(self) -> ExpectedOutcome {
        if self.check().is_some() {
            ExpectedOutcome::Rejected
        } else {
            ExpectedOutcome::Accepted
        }
    }

    /// The full line, newline included.
    pub(crate) fn line(self, seed: u64) -> Vec<u8> {
        const MARKER: &str = "@MARKER@";
        let name = serde_json::to_value(self)
            .ok()
            .and_then(|value| value.as_str().map(str::to_owned))
            .unwrap_or_default();
        let content = format!(
            "Injected line ({name}, seed {seed}).\nRead two integers a and b (1 ≤ a, b ≤ 10^9) and print a + b. {MARKER}"
        );
        let tests = json!({"inputs": ["1 2\n", "30 40\n"], "outputs": ["3\n", "70\n"]});
        let hash = format!("{:032x}", u128::from(seed) << 64 | self as u128);
        let mut record = json!({
            "prompt": [{"role": "user", "content": content}],
            "label": tests.clone(),
            "metadata": {
                "data_type": "code", "data_source": "coder1_longcot", "ability": "code", "style": "rule",
                "hash": hash, "ground_truth": tests,
            },
        });
        let mut marker_replacement: &[u8] = b"";
        let mut line_end: &[u8] = b"\n";
        match self {
            Self::InvalidJson | Self::KeysReordered => {}
            Self::NonUtf8 => marker_replacement = b"\xff\xfe\xc3\x28",
            Self::MissingTopLevelKey => {
                record
                    .as_object_mut()
                    .map(|fields| fields.shift_remove("label"));
            }
            Self::ExtraTopLevelKey => record["id"] = json!(42),
            Self::TwoMessages => {
                record["prompt"] = json!([record["prompt"][0].clone(), record["prompt"][0].clone()])
            }
            Self::EmptyContent => record["prompt"][0]["content"] = json!(""),
            Self::AssistantRole => record["prompt"][0]["role"] = json!("assistant"),
            Self::LabelDiffersFromGroundTruth => {
                record["metadata"]["ground_truth"]["outputs"][1] = json!("71\n")
            }
            Self::InputOutputLengthMismatch => set_tests(
                &mut record,
                json!({"inputs": ["1 2\n", "30 40\n"], "outputs": ["3\n"]}),
            ),
            Self::EmptyInputs => set_tests(&mut record, json!({"inputs": [], "outputs": []})),
            Self::EmptyFunctional => set_tests(&mut record, json!({"functional": []})),
            Self::WrongDataSource => record["metadata"]["data_source"] = json!("coder2_shortcot"),
            Self::LoneSurrogateEscape => marker_replacement = br"\ud800",
            Self::CrlfLineEnding => line_end = b"\r\n",
            Self::EscapedSolidus => marker_replacement = br"a\/b",
        }
        if self == Self::KeysReordered {
            record = reorder_keys(&record);
        }
        let mut text = Vec::new();
        push_serde_value(&mut text, &record, false);
        let mut line = replace_marker(&text, MARKER.as_bytes(), marker_replacement);
        if self == Self::InvalidJson {
            line.truncate(line.len() / 2);
        }
        line.extend_from_slice(line_end);
        line
    }
}

fn set_tests(record: &mut Value, tests: Value) {
    record["label"] = tests.clone();
    record["metadata"]["ground_truth"] = tests;
}

/// Metadata first, then label, then prompt; metadata and ground-truth keys reversed.
fn reorder_keys(record: &Value) -> Value {
    let reversed = |value: &Value| -> Value {
        match value.as_object() {
            Some(fields) => Value::Object(
                fields
                    .iter()
                    .rev()
                    .map(|(key, item)| (key.clone(), item.clone()))
                    .collect(),
            ),
            None => value.clone(),
        }
    };
    let mut metadata = reversed(&record["metadata"]);
    metadata["ground_truth"] = reversed(&record["metadata"]["ground_truth"]);
    json!({"metadata": metadata, "label": record["label"].clone(), "prompt": record["prompt"].clone()})
}

fn replace_marker(text: &[u8], marker: &[u8], replacement: &[u8]) -> Vec<u8> {
    match text
        .windows(marker.len())
        .position(|window| window == marker)
    {
        Some(position) => [
            &text[..position],
            replacement,
            &text[position + marker.len()..],
        ]
        .concat(),
        None => text.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejected_lines_fail_exactly_their_check_and_accepted_ones_are_valid() {
        for kind in InjectionKind::ALL {
            let line = kind.line(7);
            assert!(line.ends_with(b"\n"));
            assert_eq!(
                line.iter().filter(|&&byte| byte == b'\n').count(),
                1,
                "{kind:?}"
            );
            let parsed = std::str::from_utf8(&line)
                .ok()
                .and_then(|text| serde_json::from_str::<Value>(text).ok());
            match kind {
                InjectionKind::InvalidJson
                | InjectionKind::NonUtf8
                | InjectionKind::LoneSurrogateEscape => {
                    assert!(
                        parsed.is_none(),
                        "{kind:?} should not parse with serde_json"
                    )
                }
                _ => {
                    let record = parsed.unwrap_or_else(|| panic!("{kind:?} should parse"));
                    let keys: Vec<&String> = record
                        .as_object()
                        .map(|fields| fields.keys().collect())
                        .unwrap_or_default();
                    let expected_keys = match kind {
                        InjectionKind::MissingTopLevelKey => 2,
                        InjectionKind::ExtraTopLevelKey => 4,
                        _ => 3,
                    };
                    assert_eq!(keys.len(), expected_keys, "{kind:?}");
                    let equal = record.get("label") == Some(&record["metadata"]["ground_truth"]);
                    assert_eq!(
                        equal,
                        !matches!(
                            kind,
                            InjectionKind::LabelDiffersFromGroundTruth
                                | InjectionKind::MissingTopLevelKey
                        ),
                        "{kind:?}"
                    );
                }
            }
        }
        assert!(
            InjectionKind::LoneSurrogateEscape
                .line(1)
                .windows(6)
                .any(|window| window == br"\ud800")
        );
        assert!(InjectionKind::CrlfLineEnding.line(1).ends_with(b"}\r\n"));
    }
}
