//! Starting and stopping: bind, probe the sandbox interpreter, accept connections under the
//! cap ([`Connections`]) and serve each with its time limits ([`serve_connection`]) until a
//! shutdown signal; then stop accepting (new connections are refused at once), let every
//! request in flight finish, and stop the engine's workers after the last reply. With
//! `--metrics-listen`, a second listener runs the same accept loop with the metrics-only
//! router, under a small cap of its own, and stops with the first.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use rlvr_engine::{Engine, EngineConfig};
use rlvr_sandbox::{RunRequest, Sandbox};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};

use crate::admission::Admission;
use crate::config::ServerConfig;
use crate::connection::{Timeouts, serve_connection};
use crate::connections::Connections;
use axum::http::StatusCode;

use crate::error::{ServerError, raw_error_response};
use crate::metrics::Metrics;
use crate::routes::{metrics_router, router};
use crate::state::{AppState, slot_count};

/// The whole 503 a connection over the cap gets.
static SERVICE_UNAVAILABLE_RESPONSE: LazyLock<Vec<u8>> = LazyLock::new(|| {
    raw_error_response(
        StatusCode::SERVICE_UNAVAILABLE,
        &[("Retry-After", "1")],
        "every connection the server allows is busy (--max-connections); retry",
    )
});

/// File descriptors kept for the engine and the sandbox when the connection cap is sized
/// from the process's limit.
const RESERVED_DESCRIPTORS: u64 = 256;

/// Refused connections whose 503 may still be read by the client, at most.
const REFUSALS_DRAINING: usize = 64;

/// Connections the metrics-only port keeps open at once (Prometheus needs one per scraper).
const METRICS_PORT_CONNECTIONS: usize = 16;

/// Warnings that could flood the log under attack are written at most this often.
const WARNING_INTERVAL: Duration = Duration::from_secs(10);

/// A warning written at most once per [`WARNING_INTERVAL`], with how often it happened.
#[derive(Debug, Default)]
struct Throttled {
    last: Mutex<Option<Instant>>,
    since_last: AtomicU64,
}

impl Throttled {
    fn warn(&self, message: impl FnOnce(u64) -> String) {
        let count = self.since_last.fetch_add(1, Ordering::Relaxed) + 1;
        let mut last = self
            .last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if last.is_none_or(|last| last.elapsed() >= WARNING_INTERVAL) {
            *last = Some(Instant::now());
            self.since_last.store(0, Ordering::Relaxed);
            tracing::warn!("{}", message(count));
        }
    }
}

/// The connection cap: `--max-connections`, lowered to fit the process's descriptor limit.
fn connection_cap(configured: usize) -> usize {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
    let Some(limit) = limit else {
        return configured;
    };
    let fitting =
        usize::try_from(limit.saturating_sub(RESERVED_DESCRIPTORS).max(16)).unwrap_or(usize::MAX);
    if fitting < configured {
        tracing::warn!(
            "--max-connections {configured} lowered to {fitting}: the process may open {limit} files (ulimit -n) and keeps {RESERVED_DESCRIPTORS} for the sandbox"
        );
        return fitting;
    }
    configured
}

/// Answers 503 to a connection over the cap, then lets the client read it before closing.
fn refuse_connection(stream: TcpStream, draining: &Arc<Semaphore>) {
    let _ = stream.try_write(&SERVICE_UNAVAILABLE_RESPONSE);
    let Ok(permit) = Arc::clone(draining).try_acquire_owned() else {
        return;
    };
    tokio::spawn(async move {
        let mut stream = stream;
        let _ = stream.shutdown().await;
        let mut sink = vec![0; 16 << 10];
        let _ = tokio::time::timeout(Duration::from_secs(1), async {
            while let Ok(read) = stream.read(&mut sink).await {
                if read == 0 {
                    break;
                }
            }
        })
        .await;
        drop(permit);
    });
}

/// A bound server, not yet serving.
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    /// The metrics-only port (`--metrics-listen`), when asked for.
    metrics_listener: Option<TcpListener>,
    state: Arc<AppState>,
}

/// Binds `address`, naming it on failure.
async fn bind(address: SocketAddr) -> Result<TcpListener, ServerError> {
    TcpListener::bind(address)
        .await
        .map_err(|source| ServerError::Bind { address, source })
}

/// The address `listener` is bound to (the real port when 0 was asked for).
fn bound_address(listener: &TcpListener) -> Result<SocketAddr, ServerError> {
    listener.local_addr().map_err(|source| ServerError::Io {
        context: "reading the bound address",
        source,
    })
}

/// One listener with what its connections are served by: the router, the cap, and the
/// metrics its connection bookkeeping counts into.
struct Listening {
    listener: TcpListener,
    app: axum::Router,
    connections: Arc<Connections>,
    metrics: Arc<Metrics>,
}

/// Accepts connections on `listening` until `shutdown` completes, serving each on a task of
/// the returned set (the listener is closed on return: new connections are refused at once).
async fn accept_until(
    listening: Listening,
    timeouts: Timeouts,
    stop_receiver: watch::Receiver<bool>,
    shutdown: impl Future<Output = ()>,
) -> tokio::task::JoinSet<()> {
    let Listening {
        listener,
        app,
        connections,
        metrics,
    } = listening;
    let draining = Arc::new(Semaphore::new(REFUSALS_DRAINING));
    let (refusals, accept_errors) = (Throttled::default(), Throttled::default());
    let mut tasks = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => match connections.admit() {
                    Some(registration) => {
                        tasks.spawn(serve_connection(
                            stream,
                            peer,
                            registration,
                            app.clone(),
                            timeouts,
                            Arc::clone(&metrics),
                            stop_receiver.clone(),
                        ));
                    }
                    None => {
                        refusals.warn(|count| format!(
                            "503 to {count} connection(s): every one of the {} allowed is busy with a request (--max-connections)",
                            connections.open()
                        ));
                        refuse_connection(stream, &draining);
                    }
                },
                Err(error) => {
                    // Out of descriptors (EMFILE) or a connection reset before it was
                    // accepted: keep serving those already open.
                    accept_errors.warn(|count| format!("accepting a connection failed ({count} time(s)): {error}"));
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
        }
    }
    tasks
}

impl Server {
    /// Binds the address and starts the engine's workers. Must run inside a tokio runtime.
    pub async fn bind(sandbox: Sandbox, config: ServerConfig) -> Result<Self, ServerError> {
        let listener = bind(config.address).await?;
        let metrics_listener = match config.metrics_address {
            Some(address) => Some(bind(address).await?),
            None => None,
        };
        let probe_sandbox = sandbox.clone();
        let scientific_modules = tokio::task::spawn_blocking(move || {
            probe_sandbox
                .run(&RunRequest::python("import numpy, pandas"))
                .is_ok_and(|outcome| outcome.exit_code == Some(0))
        })
        .await
        .unwrap_or(false);
        let workers = config.workers.max(1);
        let slots = slot_count(workers);
        let engine = Engine::start(
            sandbox.clone(),
            EngineConfig {
                workers,
                queue_capacity: slots,
                testlib_header: config.testlib_header.clone(),
            },
        );
        let state = Arc::new(AppState {
            engine,
            sandbox,
            slots: Arc::new(Semaphore::new(slots)),
            admission: Admission::new(config.max_queue),
            metrics: Arc::new(Metrics::default()),
            config,
            shutting_down: AtomicBool::new(false),
            scientific_modules,
        });
        Ok(Self {
            listener,
            metrics_listener,
            state,
        })
    }

    /// The bound address (the real port when 0 was asked for).
    pub fn local_address(&self) -> Result<SocketAddr, ServerError> {
        bound_address(&self.listener)
    }

    /// The metrics-only port's bound address, when `--metrics-listen` asked for one.
    pub fn metrics_address(&self) -> Result<Option<SocketAddr>, ServerError> {
        self.metrics_listener
            .as_ref()
            .map(bound_address)
            .transpose()
    }

    /// Serves until `shutdown` completes, then stops accepting connections, lets every
    /// request in flight finish, and stops the workers.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServerError> {
        let Self {
            listener,
            metrics_listener,
            state,
        } = self;
        let metrics = Arc::clone(&state.metrics);
        let timeouts = Timeouts {
            header: state.config.header_timeout,
            idle: state.config.idle_timeout,
        };
        let (stop_sender, stop_receiver) = watch::channel(false);
        // The metrics-only port's connections are counted apart: its scrapes are not trainer
        // traffic, and the exposition stays what the main port saw.
        let metrics_port = metrics_listener.map(|listener| {
            let port_metrics = Arc::new(Metrics::default());
            let listening = Listening {
                listener,
                app: metrics_router(Arc::clone(&state)),
                connections: Connections::new(METRICS_PORT_CONNECTIONS, Arc::clone(&port_metrics)),
                metrics: port_metrics,
            };
            let mut stopped = stop_receiver.clone();
            tokio::spawn(accept_until(
                listening,
                timeouts,
                stop_receiver.clone(),
                async move {
                    let _ = stopped.wait_for(|stop| *stop).await;
                },
            ))
        });
        let listening = Listening {
            listener,
            app: router(Arc::clone(&state)),
            connections: Connections::new(
                connection_cap(state.config.max_connections),
                Arc::clone(&metrics),
            ),
            metrics,
        };
        let mut tasks = accept_until(listening, timeouts, stop_receiver, shutdown).await;
        state.shutting_down.store(true, Ordering::Relaxed);
        tracing::info!("shutting down: finishing requests in flight");
        let _ = stop_sender.send(true);
        while tasks.join_next().await.is_some() {}
        if let Some(port) = metrics_port
            && let Ok(mut port_tasks) = port.await
        {
            while port_tasks.join_next().await.is_some() {}
        }
        // Joining the workers blocks: do it off the runtime's threads.
        let _ = tokio::task::spawn_blocking(move || drop(state)).await;
        Ok(())
    }
}

/// Runs a server on its own runtime until SIGTERM or SIGINT; `on_bound` receives the bound
/// address and the metrics-only port's (`--metrics-listen`) before the first request is
/// accepted (the CLI prints them).
pub fn serve_until_signal(
    sandbox: Sandbox,
    config: ServerConfig,
    on_bound: impl FnOnce(SocketAddr, Option<SocketAddr>),
) -> Result<(), ServerError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("rlvr-serve")
        .build()
        .map_err(|source| ServerError::Io {
            context: "starting the async runtime",
            source,
        })?;
    runtime.block_on(async move {
        let mut terminate = tokio::signal::unix::signal(
            tokio::signal::unix::SignalKind::terminate(),
        )
        .map_err(|source| ServerError::Io {
            context: "installing the SIGTERM handler",
            source,
        })?;
        let mut interrupt = tokio::signal::unix::signal(
            tokio::signal::unix::SignalKind::interrupt(),
        )
        .map_err(|source| ServerError::Io {
            context: "installing the SIGINT handler",
            source,
        })?;
        let server = Server::bind(sandbox, config).await?;
        on_bound(server.local_address()?, server.metrics_address()?);
        server
            .run(async move {
                tokio::select! {
                    _ = terminate.recv() => {}
                    _ = interrupt.recv() => {}
                }
            })
            .await
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_503_response_declares_its_body_length() {
        crate::error::assert_well_formed(&SERVICE_UNAVAILABLE_RESPONSE);
    }

    #[test]
    fn the_cap_fits_the_descriptor_limit() {
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile)
            .current
            .unwrap_or(u64::MAX);
        let cap = connection_cap(usize::MAX);
        assert!(cap as u64 <= limit.saturating_sub(RESERVED_DESCRIPTORS).max(16));
        assert_eq!(connection_cap(10), 10);
    }
}
