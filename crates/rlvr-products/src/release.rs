//! The parts a released line is made of, and the two line layouts written from them.
//!
//! Released: `{"prompt": [...], "label": GT, "metadata": {"data_type", "data_source", "ability",
//! "style", "hash", "ground_truth": GT}}`, the card's key order, `json.dumps` separators, `GT`
//! the exact JSON text of the tests. Upstream (KlearReasoner-CodeSub-15K): `{"data_source",
//! "prompt", "ability", "reward_model": {"style", "ground_truth": "<GT as a JSON string>"},
//! "hash"}`; upstream has no `data_type` (the release adds `"code"`), so a record whose
//! `data_type` is something else keeps it in an extra upstream key and the round trip stays
//! lossless.

use rlvr_dataset::json::ValueRef;
use rlvr_dataset::record::{ROUTING_DATA_TYPE, RecordRef};

use crate::python_json::{looks_ascii_escaped, push_string};
use crate::row::Routing;

/// `(role, content)` of one prompt message, WTF-8.
pub type MessageParts = (Vec<u8>, Vec<u8>);

/// One record as text pieces.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReleaseParts {
    /// `(role, content)` of each prompt message, WTF-8.
    pub prompt: Vec<MessageParts>,
    /// The tests as JSON text (written unchanged as `label` and `metadata.ground_truth`).
    pub ground_truth: String,
    /// `metadata.hash`, WTF-8.
    pub hash: Vec<u8>,
    /// The routing fields.
    pub routing: Routing,
    /// Escape non-ASCII text (`ensure_ascii=True`).
    pub ensure_ascii: bool,
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
        Ok(Self {
            prompt: prompt_parts(record.prompt)?,
            ground_truth: lossy(record.ground_truth_value.raw()),
            hash: record.hash.decode().into_owned(),
            routing: Routing {
                data_type: lossy(&record.data_type.decode()),
                data_source: lossy(&record.data_source.decode()),
                ability: lossy(&record.ability.decode()),
                style: lossy(&record.style.decode()),
            },
            ensure_ascii: looks_ascii_escaped(line),
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
        if rlvr_dataset::json::parse(&ground_truth).is_err() {
            return Err(missing("reward_model.ground_truth", "is not JSON text"));
        }
        let data_type = match value.get("data_type") {
            Some(_) => lossy(&string_field(value, "data_type", "data_type")?),
            None => ROUTING_DATA_TYPE.to_owned(),
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
            hash,
            routing: Routing {
                data_type,
                data_source: lossy(&string_field(value, "data_source", "data_source")?),
                ability: lossy(&string_field(value, "ability", "ability")?),
                style: lossy(&string_field(reward_model, "style", "reward_model.style")?),
            },
            ensure_ascii: looks_ascii_escaped(line),
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

    /// Appends the released line (without its newline).
    pub fn push_release_line(&self, out: &mut Vec<u8>) {
        let ascii = self.ensure_ascii;
        out.extend_from_slice(b"{\"prompt\": ");
        self.push_prompt(out);
        out.extend_from_slice(b", \"label\": ");
        out.extend_from_slice(self.ground_truth.as_bytes());
        out.extend_from_slice(b", \"metadata\": {\"data_type\": ");
        push_string(out, self.routing.data_type.as_bytes(), ascii);
        out.extend_from_slice(b", \"data_source\": ");
        push_string(out, self.routing.data_source.as_bytes(), ascii);
        out.extend_from_slice(b", \"ability\": ");
        push_string(out, self.routing.ability.as_bytes(), ascii);
        out.extend_from_slice(b", \"style\": ");
        push_string(out, self.routing.style.as_bytes(), ascii);
        out.extend_from_slice(b", \"hash\": ");
        push_string(out, &self.hash, ascii);
        out.extend_from_slice(b", \"ground_truth\": ");
        out.extend_from_slice(self.ground_truth.as_bytes());
        out.extend_from_slice(b"}}");
    }

    /// Appends the upstream line (without its newline).
    pub fn push_upstream_line(&self, out: &mut Vec<u8>) {
        let ascii = self.ensure_ascii;
        out.extend_from_slice(b"{\"data_source\": ");
        push_string(out, self.routing.data_source.as_bytes(), ascii);
        out.extend_from_slice(b", \"prompt\": ");
        self.push_prompt(out);
        out.extend_from_slice(b", \"ability\": ");
        push_string(out, self.routing.ability.as_bytes(), ascii);
        out.extend_from_slice(b", \"reward_model\": {\"style\": ");
        push_string(out, self.routing.style.as_bytes(), ascii);
        out.extend_from_slice(b", \"ground_truth\": ");
        push_string(out, self.ground_truth.as_bytes(), ascii);
        out.extend_from_slice(b"}, \"hash\": ");
        push_string(out, &self.hash, ascii);
        if self.routing.data_type != ROUTING_DATA_TYPE {
            out.extend_from_slice(b", \"data_type\": ");
            push_string(out, self.routing.data_type.as_bytes(), ascii);
        }
        out.push(b'}');
    }
}
