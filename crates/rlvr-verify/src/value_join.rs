//! Value joining: how a list-valued input or output becomes the text a program reads or must
//! print. Klear joins with `", "` (`", ".join(map(str, v))`); the judge, Code-R1's
//! preprocessing and prime join with `"\n"`; rllm joins inputs with `"\n"` but keeps only the
//! first element of a list output (`taco_to_lcb_format`).

use serde_json::Value;

use rlvr_dataset::TestValue;

/// The separator placed between the elements of a list value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ValueJoin {
    /// `", "` (Klear).
    CommaSpace,
    /// `"\n"` (judge, Code-R1, prime).
    Newline,
    /// rllm: inputs joined with `"\n"`; a list output becomes its first element.
    NewlineFirstOutput,
}

impl ValueJoin {
    /// The separator text.
    pub fn separator(self) -> &'static str {
        match self {
            Self::CommaSpace => ", ",
            Self::Newline | Self::NewlineFirstOutput => "\n",
        }
    }

    /// Renders an expected output: like [`ValueJoin::render`], except that rllm keeps only a
    /// list's first element (an empty list raises `IndexError` upstream; it is empty here).
    pub fn render_output(self, value: &TestValue) -> String {
        match (self, value) {
            (Self::NewlineFirstOutput, TestValue::List(items)) => {
                items.first().map(python_str).unwrap_or_default()
            }
            _ => self.render(value),
        }
    }

    /// Renders a test value: text verbatim, lists as Python `str()` of each element joined.
    pub fn render(self, value: &TestValue) -> String {
        match value {
            TestValue::Text(text) => text.clone(),
            TestValue::List(items) => items
                .iter()
                .map(python_str)
                .collect::<Vec<_>>()
                .join(self.separator()),
        }
    }
}

/// Python's `str()` of a JSON-decoded value (strings verbatim, `True`/`False`/`None`,
/// lists and objects in Python's repr).
pub(crate) fn python_str(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => python_repr(other),
    }
}

fn python_repr(value: &Value) -> String {
    match value {
        Value::Null => "None".to_owned(),
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        Value::Number(number) => match (number.as_i64(), number.as_u64(), number.as_f64()) {
            (Some(integer), _, _) => integer.to_string(),
            (None, Some(integer), _) => integer.to_string(),
            (None, None, Some(float)) => python_float_repr(float),
            (None, None, None) => number.to_string(),
        },
        Value::String(text) => {
            // Python quotes with `"` when the text holds `'` but no `"`.
            let quote = if text.contains('\'') && !text.contains('"') {
                '"'
            } else {
                '\''
            };
            let mut quoted = String::with_capacity(text.len() + 2);
            quoted.push(quote);
            for character in text.chars() {
                match character {
                    '\\' => quoted.push_str("\\\\"),
                    '\n' => quoted.push_str("\\n"),
                    '\t' => quoted.push_str("\\t"),
                    '\r' => quoted.push_str("\\r"),
                    other if other == quote => {
                        quoted.push('\\');
                        quoted.push(other);
                    }
                    other => quoted.push(other),
                }
            }
            quoted.push(quote);
            quoted
        }
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(python_repr).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Object(fields) => {
            let parts: Vec<String> = fields
                .iter()
                .map(|(key, item)| format!("'{key}': {}", python_repr(item)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
    }
}

/// Python's `repr(float)`: shortest round-trip digits, `.0` for integral values, exponent
/// form outside `1e-4 <= |x| < 1e16`.
fn python_float_repr(value: f64) -> String {
    if value.is_nan() {
        return "nan".to_owned();
    }
    if value.is_infinite() {
        return if value > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    let magnitude = value.abs();
    if magnitude != 0.0 && !(1e-4..1e16).contains(&magnitude) {
        let text = format!("{value:e}");
        let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
        let exponent: i32 = exponent.parse().unwrap_or(0);
        let sign = if exponent < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exponent.abs());
    }
    let text = format!("{value}");
    if text.contains('.') {
        text
    } else {
        format!("{text}.0")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn list(value: Value) -> TestValue {
        match value {
            Value::Array(items) => TestValue::List(items),
            other => panic!("not a list: {other}"),
        }
    }

    #[test]
    fn klear_joins_lists_with_comma_space() {
        assert_eq!(
            ValueJoin::CommaSpace.render(&list(json!(["1 2", "3"]))),
            "1 2, 3"
        );
        assert_eq!(ValueJoin::CommaSpace.render(&list(json!(["123"]))), "123");
        assert_eq!(
            ValueJoin::CommaSpace.render(&list(json!([1, 2.5, true, null]))),
            "1, 2.5, True, None"
        );
    }

    #[test]
    fn judge_joins_lists_with_newlines() {
        assert_eq!(
            ValueJoin::Newline.render(&list(json!(["1 2", "3"]))),
            "1 2\n3"
        );
        assert_eq!(
            ValueJoin::Newline.render(&TestValue::Text("x\n".into())),
            "x\n"
        );
    }

    #[test]
    fn rllm_keeps_the_first_element_of_a_list_output() {
        let join = ValueJoin::NewlineFirstOutput;
        assert_eq!(join.render(&list(json!(["1 2", "3"]))), "1 2\n3");
        assert_eq!(join.render_output(&list(json!(["1 2", "3"]))), "1 2");
        assert_eq!(join.render_output(&TestValue::Text("4\n".into())), "4\n");
        assert_eq!(
            ValueJoin::Newline.render_output(&list(json!(["1", "2"]))),
            "1\n2"
        );
    }

    #[test]
    fn python_repr_of_nested_values() {
        assert_eq!(
            python_str(&json!([1, "a'b", "c", [2.0]])),
            "[1, \"a'b\", 'c', [2.0]]"
        );
        assert_eq!(python_str(&json!(1e20)), "1e+20");
        assert_eq!(python_str(&json!(0.0001)), "0.0001");
    }
}
