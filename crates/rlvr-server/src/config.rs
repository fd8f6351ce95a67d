//! The server's settings, resolved once before it starts, with secure defaults (loopback,
//! bounded body, bounded queue, bounded jobs per request, a deadline on every request, bounded
//! connections and time limits on reading requests).

use std::net::SocketAddr;
use std::time::Duration;

use rlvr_verify::ProfileName;

/// Everything `rlvr serve` needs to know before binding.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Where to listen; loopback by default.
    pub address: SocketAddr,
    /// A second listener serving only `/metrics` and `/health`, without the token
    /// (`--metrics-listen`), for Prometheus: scraping never needs the key that runs programs.
    pub metrics_address: Option<SocketAddr>,
    /// Engine worker threads (each runs one job at a time in its own sandbox).
    pub workers: usize,
    /// Jobs admitted and not yet finished, over all requests; beyond it requests get 429.
    pub max_queue: usize,
    /// Largest request body in bytes; beyond it requests get 413.
    pub max_body_bytes: usize,
    /// Most jobs (or tests, for the open-instruct routes) in one request; beyond it 413.
    pub max_jobs_per_request: usize,
    /// Deadline of a request when it names none, and the largest one it may name.
    pub request_deadline: Duration,
    /// The profile of routes that do not name one (`/get_reward`, `/v1/verify` without
    /// `profile`).
    pub default_profile: ProfileName,
    /// When set, every route but `/health` and `/v1/ping` needs `Authorization: Bearer <token>`.
    pub token: Option<String>,
    /// Listen beyond loopback without a token (`--insecure-no-auth`): anyone who reaches the
    /// address can run programs in the sandbox. [`ServerConfig::check_exposure`] refuses that
    /// combination unless this is set.
    pub insecure_no_auth: bool,
    /// Seconds clients are told to wait after a 429.
    pub retry_after_seconds: u64,
    /// Most connections open at once. At the cap, the connection that has waited longest for
    /// its next request is closed to make room; when every connection is busy, new ones get 503.
    pub max_connections: usize,
    /// Time a client has to send a request's headers: from the connection's start for its
    /// first request, from the first byte for later ones. Past it: 408, or a silent close when
    /// nothing was sent.
    pub header_timeout: Duration,
    /// Time a client has to send a request's body once its headers arrived; past it, 408.
    pub body_timeout: Duration,
    /// Time a kept-alive connection may wait for its next request before it is closed.
    pub idle_timeout: Duration,
    /// The text of the user's `testlib.h` (`--testlib-header`) for C++ checkers (issue 25).
    pub testlib_header: Option<std::sync::Arc<str>>,
    /// The dataset file (`--dataset`) whose rows `/v1/verify` jobs may name by `index` or
    /// `hash` instead of carrying their `ground_truth` (issue 34): indexed by byte offset, each
    /// job reads its own row.
    pub dataset: Option<std::sync::Arc<rlvr_dataset::DatasetRows>>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        let workers = std::thread::available_parallelism().map_or(2, usize::from);
        Self {
            address: SocketAddr::from(([127, 0, 0, 1], 8080)),
            metrics_address: None,
            workers,
            max_queue: 16_384,
            max_body_bytes: 64 << 20,
            max_jobs_per_request: 4_096,
            request_deadline: Duration::from_secs(900),
            default_profile: ProfileName::Judge,
            token: None,
            insecure_no_auth: false,
            retry_after_seconds: 1,
            max_connections: 1024,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(60),
            testlib_header: None,
            dataset: None,
        }
    }
}

/// A server that would listen beyond loopback with no token and no explicit opt-out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "refusing to listen on {address} without a token: anyone who can reach it could run programs \
     in the sandbox; pass --token-file FILE (clients send `Authorization: Bearer <token>`), \
     listen on loopback (127.0.0.1 or [::1]), or accept the risk with --insecure-no-auth"
)]
pub struct UnauthenticatedExposure {
    /// The address that was refused.
    pub address: SocketAddr,
}

impl ServerConfig {
    /// Refuses a non-loopback address without a token unless `insecure_no_auth` is set.
    /// Loopback (127.0.0.0/8, ::1) is reachable from this machine only, so it needs no token.
    pub fn check_exposure(&self) -> Result<(), UnauthenticatedExposure> {
        if self.address.ip().is_loopback() || self.token.is_some() || self.insecure_no_auth {
            Ok(())
        } else {
            Err(UnauthenticatedExposure {
                address: self.address,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(address: &str, token: Option<&str>, insecure_no_auth: bool) -> ServerConfig {
        ServerConfig {
            address: address.parse().unwrap(),
            token: token.map(str::to_owned),
            insecure_no_auth,
            ..ServerConfig::default()
        }
    }

    #[test]
    fn loopback_needs_no_token() {
        for address in ["127.0.0.1:8080", "127.3.2.1:0", "[::1]:8080"] {
            assert_eq!(
                config(address, None, false).check_exposure(),
                Ok(()),
                "{address}"
            );
        }
    }

    #[test]
    fn any_other_address_needs_a_token_or_the_explicit_opt_out() {
        for address in ["0.0.0.0:8080", "[::]:8080", "10.1.2.3:80", "192.0.2.7:0"] {
            let refused = config(address, None, false).check_exposure().unwrap_err();
            assert_eq!(refused.address, address.parse().unwrap());
            let message = refused.to_string();
            assert!(
                message.contains(address) || message.contains(&refused.address.to_string()),
                "{message}"
            );
            assert!(
                message.contains("--token-file") && message.contains("--insecure-no-auth"),
                "{message}"
            );
            assert_eq!(
                config(address, Some("secret"), false).check_exposure(),
                Ok(())
            );
            assert_eq!(config(address, None, true).check_exposure(), Ok(()));
        }
    }

    #[test]
    fn the_default_is_loopback_and_safe() {
        let defaults = ServerConfig::default();
        assert!(!defaults.insecure_no_auth && defaults.token.is_none());
        assert_eq!(defaults.check_exposure(), Ok(()));
    }
}
