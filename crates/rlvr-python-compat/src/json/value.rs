//! JSON values in two forms: [`ValueRef`], borrowed from the line buffer with lazily decoded
//! strings (the fast form the reader produces), and [`Value`], owned (what other crates keep).
//!
//! Both keep object members in written order, duplicates included; lookups take the last
//! duplicate, as a Python `dict` built by `json.loads` does. `python_eq` is Python's `==` on the
//! decoded objects: key order and overwritten duplicates do not matter, `1 == 1.0`, `True == 1`,
//! and a `NaN` inside a list or dict equals a `NaN` at the same place (see [`ValueRef::python_eq`]).

use std::borrow::Cow;
use std::cmp::Ordering;

use super::string::{JsonStr, JsonString, write_json_string};

/// A number exactly as written (including Python's `NaN`, `Infinity`, `-Infinity`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NumberRef<'a> {
    text: &'a str,
}

impl<'a> NumberRef<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Self { text }
    }

    /// The literal as written.
    pub fn as_text(&self) -> &'a str {
        self.text
    }

    /// True for literals Python turns into `int` (no fraction, exponent or special name).
    pub fn is_integer(&self) -> bool {
        is_integer_literal(self.text)
    }

    /// The value as `f64` (integers beyond 2^53 round, as `float(n)` would).
    pub fn as_f64(&self) -> f64 {
        literal_to_f64(self.text)
    }

    /// The value as `i64` when it is an integer literal in range.
    pub fn as_i64(&self) -> Option<i64> {
        if self.is_integer() {
            self.text.parse().ok()
        } else {
            None
        }
    }
}

fn is_integer_literal(text: &str) -> bool {
    !text
        .bytes()
        .any(|byte| matches!(byte, b'.' | b'e' | b'E' | b'N' | b'I'))
}

fn literal_to_f64(text: &str) -> f64 {
    match text {
        "NaN" => f64::NAN,
        "Infinity" => f64::INFINITY,
        "-Infinity" => f64::NEG_INFINITY,
        _ => text.parse().unwrap_or(f64::NAN),
    }
}

/// Python's `==` between two number literals: ints compare exactly, floats as IEEE doubles, and
/// an int equals a float only when the float is integral with exactly that value.
pub(crate) fn numbers_python_eq(left: &str, right: &str) -> bool {
    match (is_integer_literal(left), is_integer_literal(right)) {
        (true, true) => normalize_integer(left) == normalize_integer(right),
        (false, false) => literal_to_f64(left) == literal_to_f64(right),
        (true, false) => integer_equals_float(left, literal_to_f64(right)),
        (false, true) => integer_equals_float(right, literal_to_f64(left)),
    }
}

fn normalize_integer(text: &str) -> Cow<'_, str> {
    match text.strip_prefix('-') {
        Some("0") => Cow::Borrowed("0"),
        Some(_) | None => Cow::Borrowed(text),
    }
}

fn integer_equals_float(integer: &str, float: f64) -> bool {
    if !float.is_finite() || float.fract() != 0.0 {
        return false;
    }
    // `{:.0}` prints the exact decimal value of an integral double.
    let float_text = format!("{float:.0}");
    normalize_integer(integer) == normalize_integer(&float_text)
}

/// A JSON value borrowed from the text it was parsed from.
#[derive(Clone, Debug, PartialEq)]
pub enum ValueRef<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, kept as written.
    Number(NumberRef<'a>),
    /// A string, escapes not yet decoded.
    String(JsonStr<'a>),
    /// An array with its raw text.
    Array(ArrayRef<'a>),
    /// An object with its raw text.
    Object(ObjectRef<'a>),
}

/// An array and the exact text it was parsed from.
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayRef<'a> {
    pub(crate) items: Vec<ValueRef<'a>>,
    pub(crate) raw: &'a [u8],
}

/// An object (members in written order, duplicates kept) and the exact text it was parsed from.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectRef<'a> {
    pub(crate) members: Vec<(JsonStr<'a>, ValueRef<'a>)>,
    pub(crate) raw: &'a [u8],
}

impl<'a> ArrayRef<'a> {
    /// The items in order.
    pub fn items(&self) -> &[ValueRef<'a>] {
        &self.items
    }

    /// The array as written, brackets included.
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }
}

impl<'a> ObjectRef<'a> {
    /// The members in written order, duplicates included.
    pub fn members(&self) -> &[(JsonStr<'a>, ValueRef<'a>)] {
        &self.members
    }

    /// The object as written, braces included.
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// The value of the last member named `key` (Python's `dict` keeps the last duplicate).
    pub fn get(&self, key: &str) -> Option<&ValueRef<'a>> {
        self.members
            .iter()
            .rev()
            .find(|(name, _)| name.eq_str(key))
            .map(|(_, value)| value)
    }

    /// The distinct keys, decoded, in order of first appearance.
    pub fn distinct_keys(&self) -> Vec<Cow<'a, [u8]>> {
        let mut keys: Vec<Cow<'a, [u8]>> = Vec::with_capacity(self.members.len());
        for (name, _) in &self.members {
            let decoded = name.decode();
            if !keys.contains(&decoded) {
                keys.push(decoded);
            }
        }
        keys
    }

    /// Python `dict` view: distinct keys (last duplicate wins), sorted by key bytes.
    fn effective_members(&self) -> Vec<(Cow<'a, [u8]>, &ValueRef<'a>)> {
        let mut entries: Vec<(Cow<'a, [u8]>, usize, &ValueRef<'a>)> = self
            .members
            .iter()
            .enumerate()
            .map(|(order, (name, value))| (name.decode(), order, value))
            .collect();
        // Sort by key, later members first, then keep the first of each key.
        entries.sort_by(|left, right| left.0.cmp(&right.0).then(right.1.cmp(&left.1)));
        entries.dedup_by(|later, earlier| later.0 == earlier.0);
        entries
            .into_iter()
            .map(|(key, _, value)| (key, value))
            .collect()
    }
}

impl<'a> ValueRef<'a> {
    /// The member `key` when this is an object.
    pub fn get(&self, key: &str) -> Option<&ValueRef<'a>> {
        self.as_object()?.get(key)
    }

    /// The object, when this is one.
    pub fn as_object(&self) -> Option<&ObjectRef<'a>> {
        if let Self::Object(object) = self {
            Some(object)
        } else {
            None
        }
    }

    /// The items, when this is an array.
    pub fn as_array(&self) -> Option<&[ValueRef<'a>]> {
        if let Self::Array(array) = self {
            Some(&array.items)
        } else {
            None
        }
    }

    /// The string, when this is one.
    pub fn as_json_str(&self) -> Option<&JsonStr<'a>> {
        if let Self::String(string) = self {
            Some(string)
        } else {
            None
        }
    }

    /// Whether this is a string equal to `text`.
    pub fn is_str(&self, text: &str) -> bool {
        self.as_json_str().is_some_and(|string| string.eq_str(text))
    }

    /// The JSON type name Python users know (`str`, `list`, `dict`, ...), for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Null => "null",
            Self::Bool(_) => "bool",
            Self::Number(number) if number.is_integer() => "int",
            Self::Number(_) => "float",
            Self::String(_) => "str",
            Self::Array(_) => "list",
            Self::Object(_) => "dict",
        }
    }

    /// The text this value was parsed from (for strings: between the quotes).
    pub fn raw(&self) -> &'a [u8] {
        match self {
            Self::Null => b"null",
            Self::Bool(true) => b"true",
            Self::Bool(false) => b"false",
            Self::Number(number) => number.text.as_bytes(),
            Self::String(string) => string.raw(),
            Self::Array(array) => array.raw,
            Self::Object(object) => object.raw,
        }
    }

    /// Python's `==` on the values `json.loads` would build.
    ///
    /// `json.loads` turns every `NaN` literal into one shared float object, and Python compares
    /// list items and dict values by identity first (`PyObject_RichCompareBool`), so a `NaN`
    /// inside a container equals a `NaN` at the same place of another, while a bare `NaN` never
    /// equals anything (`nan == nan` is false). Hence the fast path: identical raw text is equal
    /// unless it is a bare `NaN`.
    pub fn python_eq(&self, other: &ValueRef<'_>) -> bool {
        if std::mem::discriminant(self) == std::mem::discriminant(other)
            && self.raw() == other.raw()
        {
            return !self.is_nan();
        }
        self.python_eq_slow(other)
    }

    /// A `NaN` literal.
    fn is_nan(&self) -> bool {
        matches!(self, Self::Number(number) if number.text == "NaN")
    }

    /// Python's comparison of two items of containers: identity first, then `==`.
    fn item_eq(&self, other: &ValueRef<'_>) -> bool {
        (self.is_nan() && other.is_nan()) || self.python_eq(other)
    }

    fn python_eq_slow(&self, other: &ValueRef<'_>) -> bool {
        match (self, other) {
            (Self::Null, ValueRef::Null) => true,
            // Python: True == 1 and False == 0.0.
            (Self::Bool(left), ValueRef::Bool(right)) => left == right,
            (Self::Bool(flag), ValueRef::Number(number))
            | (Self::Number(number), ValueRef::Bool(flag)) => {
                numbers_python_eq(if *flag { "1" } else { "0" }, number.text)
            }
            (Self::Number(left), ValueRef::Number(right)) => {
                numbers_python_eq(left.text, right.text)
            }
            (Self::String(left), ValueRef::String(right)) => left.python_eq(right),
            (Self::Array(left), ValueRef::Array(right)) => {
                left.items.len() == right.items.len()
                    && left
                        .items
                        .iter()
                        .zip(&right.items)
                        .all(|(left, right)| left.item_eq(right))
            }
            (Self::Object(left), ValueRef::Object(right)) => {
                let (left, right) = (left.effective_members(), right.effective_members());
                left.len() == right.len()
                    && left.iter().zip(&right).all(
                        |((left_key, left_value), (right_key, right_value))| {
                            left_key == right_key && left_value.item_eq(right_value)
                        },
                    )
            }
            _ => false,
        }
    }

    /// The owned form.
    pub fn to_owned_value(&self) -> Value {
        match self {
            Self::Null => Value::Null,
            Self::Bool(flag) => Value::Bool(*flag),
            Self::Number(number) => Value::Number(Number {
                text: number.text.into(),
            }),
            Self::String(string) => Value::String(string.to_json_string()),
            Self::Array(array) => {
                Value::Array(array.items.iter().map(Self::to_owned_value).collect())
            }
            Self::Object(object) => Value::Object(
                object
                    .members
                    .iter()
                    .map(|(key, value)| (key.to_json_string(), value.to_owned_value()))
                    .collect(),
            ),
        }
    }
}

/// An owned number, kept exactly as written.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Number {
    text: Box<str>,
}

impl Number {
    /// The literal as written.
    pub fn as_text(&self) -> &str {
        &self.text
    }

    /// The value as `f64`.
    pub fn as_f64(&self) -> f64 {
        literal_to_f64(&self.text)
    }

    /// The value as `i64` when it is an integer literal in range.
    pub fn as_i64(&self) -> Option<i64> {
        NumberRef::new(&self.text).as_i64()
    }
}

/// An owned JSON value. Objects keep members in written order, duplicates included.
/// Derived `==` is structural (order and duplicates matter); use [`Value::python_eq`] for
/// Python's `==`.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, kept as written.
    Number(Number),
    /// A decoded string.
    String(JsonString),
    /// An array.
    Array(Vec<Value>),
    /// An object's members in written order.
    Object(Vec<(JsonString, Value)>),
}

impl Value {
    /// The value of the last member named `key`, when this is an object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Self::Object(members) => members
                .iter()
                .rev()
                .find(|(name, _)| name == key)
                .map(|(_, value)| value),
            _ => None,
        }
    }

    /// The string, when this is one.
    pub fn as_json_string(&self) -> Option<&JsonString> {
        if let Self::String(string) = self {
            Some(string)
        } else {
            None
        }
    }

    /// The items, when this is an array.
    pub fn as_array(&self) -> Option<&[Value]> {
        if let Self::Array(items) = self {
            Some(items)
        } else {
            None
        }
    }

    /// Python's `==` on the values `json.loads` would build (a `NaN` inside a container equals
    /// a `NaN` at the same place, as for [`ValueRef::python_eq`]).
    pub fn python_eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Self::Null, Self::Null) => true,
            (Self::Bool(left), Self::Bool(right)) => left == right,
            (Self::Bool(flag), Self::Number(number)) | (Self::Number(number), Self::Bool(flag)) => {
                numbers_python_eq(if *flag { "1" } else { "0" }, &number.text)
            }
            (Self::Number(left), Self::Number(right)) => numbers_python_eq(&left.text, &right.text),
            (Self::String(left), Self::String(right)) => left == right,
            (Self::Array(left), Self::Array(right)) => {
                left.len() == right.len()
                    && left
                        .iter()
                        .zip(right)
                        .all(|(left, right)| left.item_eq(right))
            }
            (Self::Object(left), Self::Object(right)) => {
                let (left, right) = (effective_members(left), effective_members(right));
                left.len() == right.len()
                    && left.iter().zip(&right).all(
                        |((left_key, left_value), (right_key, right_value))| {
                            left_key == right_key && left_value.item_eq(right_value)
                        },
                    )
            }
            _ => false,
        }
    }

    fn is_nan(&self) -> bool {
        matches!(self, Self::Number(number) if &*number.text == "NaN")
    }

    /// Python's comparison of two items of containers: identity first, then `==`.
    fn item_eq(&self, other: &Value) -> bool {
        (self.is_nan() && other.is_nan()) || self.python_eq(other)
    }

    /// Compact JSON text (no spaces); parses back to an equal value here and in Python.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    /// Appends compact JSON text to `out`.
    pub fn write_json(&self, out: &mut String) {
        match self {
            Self::Null => out.push_str("null"),
            Self::Bool(true) => out.push_str("true"),
            Self::Bool(false) => out.push_str("false"),
            Self::Number(number) => out.push_str(&number.text),
            Self::String(string) => write_json_string(string.as_wtf8(), out),
            Self::Array(items) => {
                out.push('[');
                for (position, item) in items.iter().enumerate() {
                    if position > 0 {
                        out.push(',');
                    }
                    item.write_json(out);
                }
                out.push(']');
            }
            Self::Object(members) => {
                out.push('{');
                for (position, (key, value)) in members.iter().enumerate() {
                    if position > 0 {
                        out.push(',');
                    }
                    write_json_string(key.as_wtf8(), out);
                    out.push(':');
                    value.write_json(out);
                }
                out.push('}');
            }
        }
    }
}

fn effective_members(members: &[(JsonString, Value)]) -> Vec<(&JsonString, &Value)> {
    let mut entries: Vec<(usize, &JsonString, &Value)> = members
        .iter()
        .enumerate()
        .map(|(order, (key, value))| (order, key, value))
        .collect();
    entries.sort_by(|left, right| match left.1.cmp(right.1) {
        Ordering::Equal => right.0.cmp(&left.0),
        other => other,
    });
    entries.dedup_by(|later, earlier| later.1 == earlier.1);
    entries
        .into_iter()
        .map(|(_, key, value)| (key, value))
        .collect()
}
