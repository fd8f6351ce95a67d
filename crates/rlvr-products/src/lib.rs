//! Data products built from the code-rlvr-15k JSON Lines file: conversion between the upstream
//! and released layouts, lossless Parquet export (`hf` and `verl` layouts) and import back to
//! JSONL, leak-free splits, deduplication, a dataset card with charts, and a quality audit.
//!
//! Everything streams through `rlvr_dataset`'s parallel reader; memory is bounded by a few row
//! groups (export) or a few bytes per row (split, dedup, audit).

#![forbid(unsafe_code)]

pub mod arrow_build;
pub mod audit;
pub mod audit_rules;
pub mod bad_lines;
pub mod card;
pub mod charts;
pub mod convert;
pub mod dedup;
pub mod error;
pub mod export;
pub mod group_key;
pub mod hub_readme;
pub mod import;
pub mod layout;
pub mod normalize;
pub mod parquet_rows;
pub mod release;
mod release_line;
pub mod row;
pub mod shards;
pub mod source_lines;
pub mod split;
pub mod string_list;

pub use audit::{AuditOptions, AuditReport, audit_file};
pub use card::{CardReport, write_card};
pub use convert::{ConvertReport, LineLayout, convert_file};
pub use dedup::{DedupReport, dedup_file};
pub use error::ProductsError;
pub use export::{ExportOptions, ExportReport, export_parquet};
pub use group_key::GroupBy;
pub use import::{ImportReport, import_parquet};
pub use layout::Layout;
pub use split::{SplitOptions, SplitReport, split_file};
