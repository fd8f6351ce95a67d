//! Data products built from the code-rlvr-15k JSON Lines file: conversion between the upstream
//! and released layouts, lossless Parquet export (`hf` and `verl` layouts) and import back to
//! JSONL, leak-free splits, deduplication, a dataset card with charts, and a quality audit.
//!
//! Everything streams through `rlvr_dataset`'s parallel reader; memory is bounded by a few row
//! groups (export) or a few bytes per row (split, dedup, audit).

pub mod arrow_build;
pub mod error;
pub mod export;
pub mod hub_readme;
pub mod import;
pub mod layout;
pub mod normalize;
pub mod parquet_rows;
pub mod python_json;
pub mod release;
pub mod row;
pub mod shards;
pub mod string_list;

pub use error::ProductsError;
pub use export::{ExportOptions, ExportReport, export_parquet};
pub use import::{ImportReport, import_parquet};
pub use layout::Layout;
