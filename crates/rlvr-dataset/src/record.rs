//! The record model: one line of the dataset, read where it lies.
//!
//! [`RecordRef`] holds references into a parsed [`ValueRef`] tree, nothing decoded or copied:
//! the reader's hot paths, `validate`, `stats`, `audit`, `export` and `show` look at rows through
//! it. A record's tests, decoded, are [`crate::ground_truth::Tests`] (what the verifier runs);
//! here they stay a view ([`TestsRef`]), so a record whose tests the verifier would refuse can
//! still be read, shown and reported.
//!
//! The rules for being a record: `prompt` is a non-empty list of `{role, content}` messages,
//! `label` and `metadata.ground_truth` are test specifications (`inputs`/`outputs` lists or a
//! `functional` list), and the metadata routing fields and `hash` are strings. The card's finer
//! promises (exactly one user message, equal lengths, the constants, `label == ground_truth`)
//! are checks in [`crate::validation`], not conditions for being a record.
//!
//! A test value is a string or, in three released records, a list such as `["123"]`; it is kept
//! as released and never coerced.

use rlvr_python_compat::json::{JsonStr, ValueRef};

/// Why a JSON value is not a record: the field path and the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("field `{field}`: {reason}")]
pub struct RecordError {
    /// Dotted path of the offending field, such as `metadata.ground_truth.inputs[3]`.
    pub field: String,
    /// What is wrong with it.
    pub reason: String,
}

impl RecordError {
    fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            reason: reason.into(),
        }
    }
}

/// Which of the two test structures a specification uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestKind {
    /// `inputs`/`outputs`.
    InputOutput,
    /// `functional`.
    Functional,
}

/// One record, borrowed from a parsed line.
#[derive(Debug, Clone, Copy)]
pub struct RecordRef<'v, 'a> {
    /// The `prompt` list (at least one message).
    pub prompt: &'v [ValueRef<'a>],
    /// `prompt[0]["content"]`.
    pub prompt_content: &'v JsonStr<'a>,
    /// The `label` value as parsed.
    pub label_value: &'v ValueRef<'a>,
    /// `label` as tests.
    pub label: TestsRef<'v, 'a>,
    /// The `metadata.ground_truth` value as parsed.
    pub ground_truth_value: &'v ValueRef<'a>,
    /// `metadata.ground_truth` as tests.
    pub ground_truth: TestsRef<'v, 'a>,
    /// `metadata.data_type`.
    pub data_type: &'v JsonStr<'a>,
    /// `metadata.data_source`.
    pub data_source: &'v JsonStr<'a>,
    /// `metadata.ability`.
    pub ability: &'v JsonStr<'a>,
    /// `metadata.style`.
    pub style: &'v JsonStr<'a>,
    /// `metadata.hash`.
    pub hash: &'v JsonStr<'a>,
}

/// One prompt message, borrowed.
#[derive(Debug, Clone, Copy)]
pub struct MessageRef<'v, 'a> {
    /// `user` in the released data.
    pub role: &'v JsonStr<'a>,
    /// The problem statement.
    pub content: &'v JsonStr<'a>,
}

/// A test specification, borrowed.
#[derive(Debug, Clone, Copy)]
pub enum TestsRef<'v, 'a> {
    /// `inputs`/`outputs`; items are strings or lists.
    InputOutput {
        /// Program inputs.
        inputs: &'v [ValueRef<'a>],
        /// Expected outputs.
        outputs: &'v [ValueRef<'a>],
    },
    /// `functional`; items are strings.
    Functional {
        /// The test strings.
        tests: &'v [ValueRef<'a>],
    },
}

impl<'v, 'a> TestsRef<'v, 'a> {
    /// Reads a test specification from `value`; `field` names it in errors.
    pub fn from_value(value: &'v ValueRef<'a>, field: &str) -> Result<Self, RecordError> {
        let object = value.as_object().ok_or_else(|| {
            RecordError::new(
                field,
                format!("expected a dict, found {}", value.type_name()),
            )
        })?;
        let inputs = object.get("inputs");
        let outputs = object.get("outputs");
        if let Some(functional) = object.get("functional") {
            if inputs.is_some() || outputs.is_some() {
                return Err(RecordError::new(
                    field,
                    "has both `functional` and `inputs`/`outputs`",
                ));
            }
            let tests = list(functional, &format!("{field}.functional"))?;
            for (position, test) in tests.iter().enumerate() {
                if test.as_json_str().is_none() {
                    return Err(RecordError::new(
                        format!("{field}.functional[{position}]"),
                        format!("expected a str, found {}", test.type_name()),
                    ));
                }
            }
            return Ok(Self::Functional { tests });
        }
        let (Some(inputs), Some(outputs)) = (inputs, outputs) else {
            return Err(RecordError::new(
                field,
                "has neither `inputs` and `outputs` nor `functional`",
            ));
        };
        let inputs = test_values(inputs, &format!("{field}.inputs"))?;
        let outputs = test_values(outputs, &format!("{field}.outputs"))?;
        Ok(Self::InputOutput { inputs, outputs })
    }

    /// The structure used.
    pub fn kind(&self) -> TestKind {
        match self {
            Self::InputOutput { .. } => TestKind::InputOutput,
            Self::Functional { .. } => TestKind::Functional,
        }
    }
}

fn list<'v, 'a>(value: &'v ValueRef<'a>, field: &str) -> Result<&'v [ValueRef<'a>], RecordError> {
    value.as_array().ok_or_else(|| {
        RecordError::new(
            field,
            format!("expected a list, found {}", value.type_name()),
        )
    })
}

fn test_values<'v, 'a>(
    value: &'v ValueRef<'a>,
    field: &str,
) -> Result<&'v [ValueRef<'a>], RecordError> {
    let items = list(value, field)?;
    for (position, item) in items.iter().enumerate() {
        if !matches!(item, ValueRef::String(_) | ValueRef::Array(_)) {
            return Err(RecordError::new(
                format!("{field}[{position}]"),
                format!("expected a str or a list, found {}", item.type_name()),
            ));
        }
    }
    Ok(items)
}

fn member<'v, 'a>(
    value: &'v ValueRef<'a>,
    parent: &str,
    key: &str,
) -> Result<&'v ValueRef<'a>, RecordError> {
    let object = value.as_object().ok_or_else(|| {
        RecordError::new(
            parent,
            format!("expected a dict, found {}", value.type_name()),
        )
    })?;
    object
        .get(key)
        .ok_or_else(|| RecordError::new(join(parent, key), "missing"))
}

fn string_member<'v, 'a>(
    value: &'v ValueRef<'a>,
    parent: &str,
    key: &str,
) -> Result<&'v JsonStr<'a>, RecordError> {
    let found = member(value, parent, key)?;
    found.as_json_str().ok_or_else(|| {
        RecordError::new(
            join(parent, key),
            format!("expected a str, found {}", found.type_name()),
        )
    })
}

fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}

impl<'v, 'a> RecordRef<'v, 'a> {
    /// Reads a record from a parsed line.
    pub fn from_value(value: &'v ValueRef<'a>) -> Result<Self, RecordError> {
        let prompt = list(member(value, "", "prompt")?, "prompt")?;
        let first = prompt
            .first()
            .ok_or_else(|| RecordError::new("prompt", "empty list"))?;
        let prompt_content = string_member(first, "prompt[0]", "content")?;
        let label_value = member(value, "", "label")?;
        let label = TestsRef::from_value(label_value, "label")?;
        let metadata = member(value, "", "metadata")?;
        let ground_truth_value = member(metadata, "metadata", "ground_truth")?;
        let ground_truth = TestsRef::from_value(ground_truth_value, "metadata.ground_truth")?;
        Ok(Self {
            prompt,
            prompt_content,
            label_value,
            label,
            ground_truth_value,
            ground_truth,
            data_type: string_member(metadata, "metadata", "data_type")?,
            data_source: string_member(metadata, "metadata", "data_source")?,
            ability: string_member(metadata, "metadata", "ability")?,
            style: string_member(metadata, "metadata", "style")?,
            hash: string_member(metadata, "metadata", "hash")?,
        })
    }

    /// The prompt's messages; every one must have string `role` and `content`.
    pub fn messages(&self) -> Result<Vec<MessageRef<'v, 'a>>, RecordError> {
        self.prompt
            .iter()
            .enumerate()
            .map(|(position, message)| {
                let parent = format!("prompt[{position}]");
                Ok(MessageRef {
                    role: string_member(message, &parent, "role")?,
                    content: string_member(message, &parent, "content")?,
                })
            })
            .collect()
    }

    /// Whether `label == metadata.ground_truth` in Python ([`crate::label_equals_ground_truth`]).
    pub fn label_equals_ground_truth(&self) -> bool {
        crate::label_equals_ground_truth(self.label_value, self.ground_truth_value)
    }

    /// Whether the four routing fields hold the documented constants.
    pub fn routing_constants_match(&self) -> bool {
        self.data_type.eq_str(ROUTING_DATA_TYPE)
            && self.data_source.eq_str(ROUTING_DATA_SOURCE)
            && self.ability.eq_str(ROUTING_ABILITY)
            && self.style.eq_str(ROUTING_STYLE)
    }
}

/// `metadata.data_type` in every released record.
pub const ROUTING_DATA_TYPE: &str = "code";
/// `metadata.data_source` in every released record.
pub const ROUTING_DATA_SOURCE: &str = "coder1_longcot";
/// `metadata.ability` in every released record.
pub const ROUTING_ABILITY: &str = "code";
/// `metadata.style` in every released record.
pub const ROUTING_STYLE: &str = "rule";
