//! `rlvr serve`: the HTTP face of the verify engine. Routes and API shapes only: every job
//! goes to [`rlvr_engine::Engine`], every single program (SandboxFusion `/run_code`) to
//! [`rlvr_sandbox::Sandbox::run`]; no sandbox or scoring logic lives here.
//!
//! Routes: the native batch `POST /v1/verify` (JSON or NDJSON stream), SandboxFusion
//! `POST /run_code` and `GET /v1/ping`, open-instruct `POST /test_program`,
//! `POST /test_program_stdio` and `GET /health`, OpenRLHF `POST /get_reward`, and
//! `GET /metrics` in Prometheus text. See `docs/serve.md`.

#![forbid(unsafe_code)]

mod admission;
mod auth;
mod batch;
mod config;
mod connection;
mod connections;
mod error;
mod metrics;
mod request_body;
mod routes;
mod server;
mod state;

pub use config::{ServerConfig, UnauthenticatedExposure};
pub use error::ServerError;
pub use server::{Server, serve_until_signal};
