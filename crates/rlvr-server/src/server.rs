//! Starting and stopping: bind, probe the sandbox interpreter, serve until a shutdown
//! signal, then finish every request in flight (new connections are refused at once), and
//! stop the engine's workers after the last reply.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rlvr_engine::{Engine, EngineConfig};
use rlvr_sandbox::{RunRequest, Sandbox};
use tokio::sync::Semaphore;

use crate::admission::Admission;
use crate::config::ServerConfig;
use crate::error::ServerError;
use crate::metrics::Metrics;
use crate::routes::router;
use crate::state::{AppState, slot_count};

/// A bound server, not yet serving.
#[derive(Debug)]
pub struct Server {
    listener: tokio::net::TcpListener,
    state: Arc<AppState>,
}

impl Server {
    /// Binds the address and starts the engine's workers. Must run inside a tokio runtime.
    pub async fn bind(sandbox: Sandbox, config: ServerConfig) -> Result<Self, ServerError> {
        let listener = tokio::net::TcpListener::bind(config.address)
            .await
            .map_err(|source| ServerError::Bind {
                address: config.address,
                source,
            })?;
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
        Ok(Self { listener, state })
    }

    /// The bound address (the real port when 0 was asked for).
    pub fn local_address(&self) -> Result<SocketAddr, ServerError> {
        self.listener
            .local_addr()
            .map_err(|source| ServerError::Io {
                context: "reading the bound address",
                source,
            })
    }

    /// Serves until `shutdown` completes, then stops accepting connections, lets every
    /// request in flight finish, and stops the workers.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServerError> {
        let Self { listener, state } = self;
        let app = router(Arc::clone(&state));
        let flag_state = Arc::clone(&state);
        let served = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                shutdown.await;
                flag_state.shutting_down.store(true, Ordering::Relaxed);
                tracing::info!("shutting down: finishing requests in flight");
            })
            .await;
        // Joining the workers blocks: do it off the runtime's threads.
        let _ = tokio::task::spawn_blocking(move || drop(state)).await;
        served.map_err(|source| ServerError::Io {
            context: "serving",
            source,
        })
    }
}

/// Runs a server on its own runtime until SIGTERM or SIGINT; `on_bound` receives the bound
/// address before the first request is accepted (the CLI prints it).
pub fn serve_until_signal(
    sandbox: Sandbox,
    config: ServerConfig,
    on_bound: impl FnOnce(SocketAddr),
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
        on_bound(server.local_address()?);
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
