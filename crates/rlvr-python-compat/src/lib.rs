//! Python compatibility: text read and written exactly as the Python code around the dataset
//! reads and writes it, for every crate that must agree with it byte for byte.
//!
//! - [`json`]: a parser that accepts exactly what `json.loads` accepts (lone surrogates kept as
//!   WTF-8 strings, `NaN`/`Infinity`, numbers as written, duplicate keys), with Python's `==`;
//! - [`dumps`]: JSON text as `json.dumps` writes it (`ensure_ascii` on or off);
//! - [`loads`]: JSON text as `json.loads` reads it, into serde values and types;
//! - [`text`]: `str.isspace`, `str.strip`, `str.split()`, `str.splitlines()` and the card's
//!   prompt normalization `" ".join(s.split())`.

#![forbid(unsafe_code)]

pub mod dumps;
pub mod json;
pub mod loads;
pub mod text;
