//! `rlvr serve`: the verify engine over HTTP for trainers (native batch API, SandboxFusion,
//! open-instruct and OpenRLHF compatible routes, Prometheus metrics). Prints the bound
//! address as the first line of stdout, then serves until SIGTERM or Ctrl-C, finishing the
//! requests in flight. Routes and shapes: `docs/serve.md`.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rlvr_dataset::DatasetRows;
use rlvr_server::{ServerConfig, serve_until_signal};
use rlvr_verify::ProfileName;

use crate::exit::{Error, Status};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Address to listen on (loopback by default; port 0 picks a free port, printed first).
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// A second address serving only /metrics and /health, without the token, for Prometheus
    /// (its URL is the second line of stdout); verification routes are refused there (404).
    #[arg(long, value_name = "ADDR")]
    metrics_listen: Option<SocketAddr>,
    /// Jobs run at once, each in its own sandbox (default: one per core).
    #[arg(long, value_parser = crate::command::parse_workers)]
    workers: Option<usize>,
    /// Jobs admitted and not yet finished over all requests; beyond it requests get 429.
    #[arg(long, default_value_t = 16_384)]
    max_queue: usize,
    /// Most jobs in one request; beyond it 413.
    #[arg(long, default_value_t = 4_096)]
    max_jobs_per_request: usize,
    /// Largest request body in bytes; beyond it 413.
    #[arg(long, default_value_t = 64 << 20)]
    max_body_bytes: usize,
    /// Seconds a request may take at most (requests may ask for less).
    #[arg(long, default_value_t = 900.0)]
    request_deadline: f64,
    /// Profile of requests that name none.
    #[arg(long, value_enum, default_value_t = ProfileName::Judge)]
    profile: ProfileName,
    /// Most client connections open at once (lowered to fit `ulimit -n`). At the cap the one
    /// waiting longest for a request is closed to make room; if all are busy, 503.
    #[arg(long, default_value_t = 1024)]
    max_connections: usize,
    /// Seconds a client has to send a request's headers; past it 408 (or a silent close when
    /// nothing was sent).
    #[arg(long, default_value_t = 10.0)]
    header_timeout: f64,
    /// Seconds a client has to send a request's body after its headers; past it 408.
    #[arg(long, default_value_t = 60.0)]
    body_timeout: f64,
    /// Seconds a kept-alive connection may wait for its next request before it is closed.
    #[arg(long, default_value_t = 60.0)]
    idle_timeout: f64,
    /// A file holding a bearer token every route but /health and /v1/ping requires.
    #[arg(long)]
    token_file: Option<PathBuf>,
    /// Listen beyond loopback without --token-file (refused otherwise, exit 7): anyone who
    /// can reach the address can run programs in the sandbox.
    #[arg(long)]
    insecure_no_auth: bool,
    /// Run with whatever sandbox protections this machine has.
    #[arg(long)]
    allow_degraded: bool,
    /// Your copy of testlib.h, put in place of a C++ checker's `#include "testlib.h"`
    /// (`checker_cpp` ground truths; rlvr ships none).
    #[arg(long, value_name = "PATH")]
    testlib_header: Option<PathBuf>,
    /// A dataset JSONL file (or a `rlvr export parquet` directory) whose rows `/v1/verify` jobs
    /// may name by `"index"` (zero-based) or `"hash"` (`metadata.hash`) instead of sending their
    /// `ground_truth`; indexed by byte offset at start (each row read once for its hash), rows
    /// read when a job names them.
    #[arg(long, value_name = "FILE")]
    dataset: Option<PathBuf>,
}

pub(crate) fn run(args: Args) -> Result<Status, Error> {
    let config = resolve(&args)?;
    // Before the sandbox starts: a refused configuration fails at once, whatever the machine.
    config
        .check_exposure()
        .map_err(Error::UnauthenticatedExposure)?;
    let sandbox = crate::sandbox_setup::start_sandbox(args.allow_degraded)?;
    if !config.address.ip().is_loopback() && config.token.is_none() {
        eprintln!(
            "rlvr serve: warning: --insecure-no-auth: listening on {} without a token: anyone who can reach it can run code in the sandbox",
            config.address
        );
    }
    serve_until_signal(sandbox, config, |address, metrics_address| {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "http://{address}");
        if let Some(metrics_address) = metrics_address {
            let _ = writeln!(stdout, "http://{metrics_address}");
        }
        let _ = stdout.flush();
        eprintln!("rlvr serve: listening on http://{address}");
        if let Some(metrics_address) = metrics_address {
            eprintln!(
                "rlvr serve: metrics (/metrics, /health; no token) on http://{metrics_address}"
            );
        }
    })
    .map_err(Error::Server)?;
    eprintln!("rlvr serve: stopped after finishing every request in flight");
    Ok(Status::Success)
}

/// Flags to one validated configuration, before anything starts.
fn resolve(args: &Args) -> Result<ServerConfig, Error> {
    let usage = Error::Usage;
    let default_profile = args.profile;
    let Some(request_deadline) = Duration::try_from_secs_f64(args.request_deadline)
        .ok()
        .filter(|deadline| !deadline.is_zero() && deadline.as_secs() <= 365 * 24 * 3600)
    else {
        return Err(usage(
            "--request-deadline must be a positive number of seconds, at most a year".into(),
        ));
    };
    let seconds = |name: &str, value: f64| -> Result<Duration, Error> {
        if value.is_finite() && value > 0.0 && value <= 86_400.0 {
            Ok(Duration::from_secs_f64(value))
        } else {
            Err(usage(format!(
                "{name} must be a positive number of seconds (at most a day)"
            )))
        }
    };
    let header_timeout = seconds("--header-timeout", args.header_timeout)?;
    let body_timeout = seconds("--body-timeout", args.body_timeout)?;
    let idle_timeout = seconds("--idle-timeout", args.idle_timeout)?;
    if args.max_connections == 0 {
        return Err(usage("--max-connections must be positive".into()));
    }
    if args.max_queue == 0 || args.max_jobs_per_request == 0 || args.max_body_bytes == 0 {
        return Err(usage(
            "--max-queue, --max-jobs-per-request and --max-body-bytes must be positive".into(),
        ));
    }
    let token = crate::command::token_file::read_token_file(args.token_file.as_deref())?;
    let defaults = ServerConfig::default();
    Ok(ServerConfig {
        address: args.addr,
        metrics_address: args.metrics_listen,
        workers: args.workers.unwrap_or(defaults.workers),
        max_queue: args.max_queue,
        max_body_bytes: args.max_body_bytes,
        max_jobs_per_request: args.max_jobs_per_request.min(args.max_queue),
        request_deadline,
        default_profile,
        token,
        insecure_no_auth: args.insecure_no_auth,
        retry_after_seconds: defaults.retry_after_seconds,
        max_connections: args.max_connections,
        header_timeout,
        body_timeout,
        idle_timeout,
        testlib_header: crate::command::testlib_header::read_testlib_header(
            args.testlib_header.as_deref(),
        )?,
        dataset: args.dataset.as_deref().map(open_dataset).transpose()?,
    })
}

/// `--dataset`: the file indexed by byte offset and by `metadata.hash`.
fn open_dataset(path: &std::path::Path) -> Result<Arc<DatasetRows>, Error> {
    let usage = |error: anyhow::Error| Error::usage(format!("--dataset: {error:#}"));
    let mut rows = if path.is_dir() {
        // An export directory (`rlvr export parquet`): restored to JSON Lines once (`rlvr
        // import parquet`, byte for byte), indexed, then unlinked: the open file stays readable
        // and nothing is left behind.
        let restored =
            std::env::temp_dir().join(format!("rlvr-serve-dataset-{}.jsonl", std::process::id()));
        let imported = rlvr_products::import_parquet(path, &restored)
            .map_err(|error| Error::usage(format!("--dataset: {}: {error}", path.display())));
        let rows = imported
            .and_then(|_| DatasetRows::open(&restored).map_err(|error| usage(error.into())));
        let _ = std::fs::remove_file(&restored);
        rows?
    } else {
        DatasetRows::open(path).map_err(|error| usage(error.into()))?
    };
    if rows.is_empty() {
        return Err(Error::usage(format!(
            "--dataset: {}: no rows",
            path.display()
        )));
    }
    let hashed = rows.index_hashes().map_err(|error| usage(error.into()))?;
    eprintln!(
        "rlvr serve: dataset {}: {} rows, {hashed} with a metadata.hash",
        path.display(),
        rows.len()
    );
    Ok(Arc::new(rows))
}
