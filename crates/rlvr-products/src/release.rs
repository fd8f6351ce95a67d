//! The parts a released line is made of, and the two line layouts written from them.
//!
//! Released: `{"prompt": [...], "label": GT, "metadata": {"data_type", "data_source", "ability",
//! "style", "hash", "ground_truth": GT}}`, the card's key order, `json.dumps` separators, `GT`
//! the exact JSON text of the tests. Upstream (KlearReasoner-CodeSub-15K): `{"data_source",
//! "prompt", "ability", "reward_model": {"style", "ground_truth": "<GT as a JSON string>"},
//! "hash"}`; upstream has no `data_type` (the release adds `"code"`), so a record whose
//! `data_type` is something else keeps it in an extra upstream key and the round trip stays
//! lossless.

use rlvr_dataset::record::{ROUTING_DATA_TYPE, RecordRef};
use rlvr_python_compat::json::ValueRef;

use crate::release_line::ReleaseLine;
use rlvr_python_compat::dumps::{looks_ascii_escaped, push_string};

/// `(role, content)` of one prompt message, WTF-8.
pub type MessageParts = (Vec<u8>, Vec<u8>);

/// The routing fields of `metadata`, WTF-8 (a lone surrogate survives).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RoutingParts {
    /// `metadata.data_type`.
    pub data_type: Vec<u8>,
    /// `metadata.data_source`.
    pub data_source: Vec<u8>,
    /// `metadata.ability`.
    pub ability: Vec<u8>,
    /// `metadata.style`.
    pub style: Vec<u8>,
}

/// One record as text pieces.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReleaseParts {
    /// `(role, content)` of each prompt message, WTF-8.
    pub prompt: Vec<MessageParts>,
    /// The tests as JSON text (written as `metadata.ground_truth`, and as `label` unless
    /// [`ReleaseParts::label`] holds other text).
    pub ground_truth: String,
    /// The exact text of `label` when it is not the text of `ground_truth`.
    pub label: Option<String>,
    /// `metadata.hash`, WTF-8.
    pub hash: Vec<u8>,
    /// The routing fields.
    pub routing: RoutingParts,
    /// Escape non-ASCII text (`ensure_ascii=True`).
    pub ensure_ascii: bool,
    /// The source line itself, when an export kept it because the parts would not give it back
    /// byte for byte (see `docs/products.md`); written instead of the parts.
    pub source_line: Option<Vec<u8>>,
}

/// Why a line cannot be read in the layout asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("field `{field}`: {reason}")]
pub struct PartsError {
    /// The field.
    pub field: String,
    /// What is wrong.
    pub reason: String,
}

fn missing(field: &str, reason: &str) -> PartsError {
    PartsError {
        field: field.to_owned(),
        reason: reason.to_owned(),
    }
}

fn string_field(value: &ValueRef<'_>, key: &str, field: &str) -> Result<Vec<u8>, PartsError> {
    value
        .get(key)
        .and_then(ValueRef::as_json_str)
        .map(|string| string.decode().into_owned())
        .ok_or_else(|| missing(field, "missing or not a str"))
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn prompt_parts(prompt: &[ValueRef<'_>]) -> Result<Vec<MessageParts>, PartsError> {
    prompt
        .iter()
        .enumerate()
        .map(|(position, message)| {
            let field = format!("prompt[{position}]");
            Ok((
                string_field(message, "role", &field)?,
                string_field(message, "content", &field)?,
            ))
        })
        .collect()
}

impl ReleaseParts {
    /// From a released record (the line is needed to tell its escaping style).
    pub fn from_release(record: &RecordRef<'_, '_>, line: &[u8]) -> Result<Self, PartsError> {
        let label = record.label_value.raw();
        let ground_truth = record.ground_truth_value.raw();
        Ok(Self {
            prompt: prompt_parts(record.prompt)?,
            ground_truth: lossy(ground_truth),
            label: (label != ground_truth).then(|| lossy(label)),
            hash: record.hash.decode().into_owned(),
            routing: RoutingParts {
                data_type: record.data_type.decode().into_owned(),
                data_source: record.data_source.decode().into_owned(),
                ability: record.ability.decode().into_owned(),
                style: record.style.decode().into_owned(),
            },
            ensure_ascii: looks_ascii_escaped(line),
            source_line: None,
        })
    }

    /// From an upstream line's parsed value.
    pub fn from_upstream(value: &ValueRef<'_>, line: &[u8]) -> Result<Self, PartsError> {
        let prompt = value
            .get("prompt")
            .and_then(ValueRef::as_array)
            .ok_or_else(|| missing("prompt", "not a list"))?;
        let reward_model = value
            .get("reward_model")
            .ok_or_else(|| missing("reward_model", "missing"))?;
        let ground_truth = string_field(reward_model, "ground_truth", "reward_model.ground_truth")?;
        let ground_truth = String::from_utf8(ground_truth).map_err(|_| {
            missing(
                "reward_model.ground_truth",
                "holds a lone surrogate outside a JSON escape",
            )
        })?;
        if rlvr_python_compat::json::parse(&ground_truth).is_err() {
            return Err(missing("reward_model.ground_truth", "is not JSON text"));
        }
        let data_type = match value.get("data_type") {
            Some(_) => string_field(value, "data_type", "data_type")?,
            None => ROUTING_DATA_TYPE.as_bytes().to_vec(),
        };
        let hash = match value.get("hash") {
            Some(_) => string_field(value, "hash", "hash")?,
            None => string_field(
                value
                    .get("extra_info")
                    .ok_or_else(|| missing("hash", "missing"))?,
                "hash",
                "extra_info.hash",
            )?,
        };
        Ok(Self {
            prompt: prompt_parts(prompt)?,
            ground_truth,
            label: None,
            hash,
            routing: RoutingParts {
                data_type,
                data_source: string_field(value, "data_source", "data_source")?,
                ability: string_field(value, "ability", "ability")?,
                style: string_field(reward_model, "style", "reward_model.style")?,
            },
            ensure_ascii: looks_ascii_escaped(line),
            source_line: None,
        })
    }

    fn push_prompt(&self, out: &mut Vec<u8>) {
        out.push(b'[');
        for (position, (role, content)) in self.prompt.iter().enumerate() {
            if position > 0 {
                out.extend_from_slice(b", ");
            }
            out.extend_from_slice(b"{\"role\": ");
            push_string(out, role, self.ensure_ascii);
            out.extend_from_slice(b", \"content\": ");
            push_string(out, content, self.ensure_ascii);
            out.push(b'}');
        }
        out.push(b']');
    }

    /// Appends the released line (without its newline): the kept source line when there is
    /// one, else the line written from the parts.
    pub fn push_release_line(&self, out: &mut Vec<u8>) {
        if let Some(line) = &self.source_line {
            out.extend_from_slice(line);
            return;
        }
        let prompt: Vec<(&[u8], &[u8])> = self
            .prompt
            .iter()
            .map(|(role, content)| (role.as_slice(), content.as_slice()))
            .collect();
        let routing = &self.routing;
        ReleaseLine {
            prompt: &prompt,
            label: self
                .label
                .as_deref()
                .unwrap_or(&self.ground_truth)
                .as_bytes(),
            ground_truth: self.ground_truth.as_bytes(),
            metadata: [
                &routing.data_type,
                &routing.data_source,
                &routing.ability,
                &routing.style,
                &self.hash,
            ],
            ensure_ascii: self.ensure_ascii,
        }
        .write_to(out);
    }

    /// Appends the upstream line (without its newline). Upstream has no `label`: the tests
    /// travel as `reward_model.ground_truth`.
    pub fn push_upstream_line(&self, out: &mut Vec<u8>) {
        let ascii = self.ensure_ascii;
        out.extend_from_slice(b"{\"data_source\": ");
        push_string(out, &self.routing.data_source, ascii);
        out.extend_from_slice(b", \"prompt\": ");
        self.push_prompt(out);
        out.extend_from_slice(b", \"ability\": ");
        push_string(out, &self.routing.ability, ascii);
        out.extend_from_slice(b", \"reward_model\": {\"style\": ");
        push_string(out, &self.routing.style, ascii);
        out.extend_from_slice(b", \"ground_truth\": ");
        push_string(out, self.ground_truth.as_bytes(), ascii);
        out.extend_from_slice(b"}, \"hash\": ");
        push_string(out, &self.hash, ascii);
        if self.routing.data_type != ROUTING_DATA_TYPE.as_bytes() {
            out.extend_from_slice(b", \"data_type\": ");
            push_string(out, &self.routing.data_type, ascii);
        }
        out.push(b'}');
    }
}
