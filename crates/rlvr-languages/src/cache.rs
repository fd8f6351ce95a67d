//! The compile cache: identical sources compile once. An entry is keyed by the SHA-256 of the
//! language and its variant, the toolchain's version, the flags and the source; concurrent
//! requests for one key wait for a single compile. Bounded in bytes (least recently used
//! entries go first).
//!
//! Why sharing is safe across jobs and clients: an artifact is a function of its key alone. It
//! was produced in a sandbox whose only inputs are the toolchain (read-only), the fixed flags
//! and the source (no network, a fresh `/tmp`, nothing of the host), so any job with the same
//! key would have compiled the same program, and no job can reach another source's entry
//! without a SHA-256 collision. Only finished compiles are kept (success or a compile error);
//! one that ran out of time or memory may depend on the machine's load and is not.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};

use sha2::{Digest, Sha256};

use crate::compile::{CompileReport, CompileStatus};

/// A cache key.
pub type CacheKey = [u8; 32];

/// The key of one compile: every part separated so no two different inputs share a key.
pub fn cache_key(parts: &[&[u8]]) -> CacheKey {
    let mut hash = Sha256::new();
    for part in parts {
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part);
    }
    hash.finalize().into()
}

#[derive(Debug)]
enum Slot {
    Ready {
        report: Arc<CompileReport>,
        bytes: u64,
        last_used: u64,
    },
    Pending(Arc<Pending>),
}

#[derive(Debug, Default)]
struct Pending {
    /// `None` while compiling; then the report, or `None` inside when the compile failed
    /// without one (the waiters compile for themselves).
    result: Mutex<Option<Option<Arc<CompileReport>>>>,
    done: Condvar,
}

#[derive(Debug, Default)]
struct State {
    slots: HashMap<CacheKey, Slot>,
    clock: u64,
    used_bytes: u64,
    hits: u64,
    misses: u64,
}

/// A bounded, single-flight cache of compile reports.
#[derive(Debug)]
pub struct CompileCache {
    state: Mutex<State>,
    capacity_bytes: u64,
}

/// What a lookup gave: the report and whether it came from the cache.
#[derive(Debug, Clone)]
pub struct Cached {
    /// The report.
    pub report: Arc<CompileReport>,
    /// It was compiled before (by this request or a concurrent one).
    pub hit: bool,
}

fn size_of(report: &CompileReport) -> u64 {
    (report
        .artifact
        .as_ref()
        .map_or(0, |artifact| artifact.len())
        + report.diagnostics.len()) as u64
        + 256
}

impl CompileCache {
    /// A cache holding at most `capacity_bytes` of artifacts and diagnostics.
    pub fn new(capacity_bytes: u64) -> Self {
        Self {
            state: Mutex::new(State::default()),
            capacity_bytes,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Hits and misses so far.
    pub fn statistics(&self) -> (u64, u64) {
        let state = self.lock();
        (state.hits, state.misses)
    }

    /// The report for `key`, compiling with `compile` when no one has (or is doing so now).
    /// An `Err` from `compile` is returned to its caller and cached for nobody.
    pub fn get_or_compile<E>(
        &self,
        key: CacheKey,
        compile: impl FnOnce() -> Result<CompileReport, E>,
    ) -> Result<Cached, E> {
        let pending = {
            let mut state = self.lock();
            state.clock += 1;
            let now = state.clock;
            match state.slots.get_mut(&key) {
                Some(Slot::Ready {
                    report, last_used, ..
                }) => {
                    *last_used = now;
                    let report = Arc::clone(report);
                    state.hits += 1;
                    return Ok(Cached { report, hit: true });
                }
                Some(Slot::Pending(pending)) => Some(Arc::clone(pending)),
                None => {
                    state
                        .slots
                        .insert(key, Slot::Pending(Arc::new(Pending::default())));
                    state.misses += 1;
                    None
                }
            }
        };
        if let Some(pending) = pending {
            let mut result = pending
                .result
                .lock()
                .unwrap_or_else(|poison| poison.into_inner());
            while result.is_none() {
                result = pending
                    .done
                    .wait(result)
                    .unwrap_or_else(|poison| poison.into_inner());
            }
            if let Some(Some(report)) = result.as_ref() {
                self.lock().hits += 1;
                return Ok(Cached {
                    report: Arc::clone(report),
                    hit: true,
                });
            }
            drop(result);
            // The leader failed without a report: compile for ourselves, uncached.
            return compile().map(|report| Cached {
                report: Arc::new(report),
                hit: false,
            });
        }
        // We lead: compile, publish, wake the waiters (also when `compile` panics).
        let mut guard = LeaderGuard {
            cache: self,
            key,
            published: None,
        };
        let result = compile().map(Arc::new);
        if let Ok(report) = &result {
            guard.published = Some(Arc::clone(report));
        }
        drop(guard);
        result.map(|report| Cached { report, hit: false })
    }
}

/// Publishes the leader's result when dropped, so waiters never wait forever.
struct LeaderGuard<'a> {
    cache: &'a CompileCache,
    key: CacheKey,
    published: Option<Arc<CompileReport>>,
}

impl Drop for LeaderGuard<'_> {
    fn drop(&mut self) {
        let mut state = self.cache.lock();
        let Some(Slot::Pending(pending)) = state.slots.remove(&self.key) else {
            return;
        };
        let keep = self
            .published
            .as_ref()
            .filter(|report| report.status == CompileStatus::Finished);
        if let Some(report) = keep {
            let bytes = size_of(report);
            if bytes <= self.cache.capacity_bytes {
                state.clock += 1;
                let last_used = state.clock;
                state.used_bytes += bytes;
                state.slots.insert(
                    self.key,
                    Slot::Ready {
                        report: Arc::clone(report),
                        bytes,
                        last_used,
                    },
                );
                evict(&mut state, self.cache.capacity_bytes);
            }
        }
        drop(state);
        let mut result = pending
            .result
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        *result = Some(self.published.take());
        pending.done.notify_all();
    }
}

/// Drops least recently used entries until the cache fits.
fn evict(state: &mut State, capacity_bytes: u64) {
    while state.used_bytes > capacity_bytes {
        let oldest = state
            .slots
            .iter()
            .filter_map(|(key, slot)| match slot {
                Slot::Ready { last_used, .. } => Some((*last_used, *key)),
                Slot::Pending(_) => None,
            })
            .min();
        let Some((_, key)) = oldest else { return };
        if let Some(Slot::Ready { bytes, .. }) = state.slots.remove(&key) {
            state.used_bytes -= bytes;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;
    use rlvr_language::Language;

    fn report(artifact: &[u8], status: CompileStatus) -> CompileReport {
        CompileReport {
            choice: Language::Cpp.into(),
            status,
            exit_code: Some(0),
            wall: Duration::ZERO,
            diagnostics: String::new(),
            artifact: Some(Arc::from(artifact)),
        }
    }

    #[test]
    fn concurrent_requests_for_one_key_compile_once() {
        let cache = CompileCache::new(1 << 20);
        let compiles = AtomicUsize::new(0);
        let key = cache_key(&[b"cpp", b"int main(){}"]);
        std::thread::scope(|scope| {
            for _ in 0..8 {
                scope.spawn(|| {
                    let cached = cache
                        .get_or_compile(key, || {
                            compiles.fetch_add(1, Ordering::SeqCst);
                            std::thread::sleep(Duration::from_millis(50));
                            Ok::<_, ()>(report(b"binary", CompileStatus::Finished))
                        })
                        .expect("compiles");
                    assert_eq!(cached.report.artifact.as_deref(), Some(&b"binary"[..]));
                });
            }
        });
        assert_eq!(compiles.load(Ordering::SeqCst), 1);
        assert_eq!(cache.statistics(), (7, 1));
    }

    #[test]
    fn different_sources_never_share_an_entry() {
        let cache = CompileCache::new(1 << 20);
        let first = cache
            .get_or_compile(cache_key(&[b"cpp", b"a"]), || {
                Ok::<_, ()>(report(b"first", CompileStatus::Finished))
            })
            .expect("compiles");
        let second = cache
            .get_or_compile(cache_key(&[b"cpp", b"b"]), || {
                Ok::<_, ()>(report(b"second", CompileStatus::Finished))
            })
            .expect("compiles");
        assert!(!first.hit && !second.hit);
        assert_eq!(second.report.artifact.as_deref(), Some(&b"second"[..]));
        // Key parts are length-prefixed: ("ab", "c") is not ("a", "bc").
        assert_ne!(cache_key(&[b"ab", b"c"]), cache_key(&[b"a", b"bc"]));
    }

    #[test]
    fn timeouts_are_not_cached_and_the_size_is_bounded() {
        let cache = CompileCache::new(2_000);
        let key = cache_key(&[b"slow"]);
        for _ in 0..2 {
            let cached = cache
                .get_or_compile(key, || {
                    Ok::<_, ()>(report(b"", CompileStatus::TimeLimitExceeded))
                })
                .expect("reports");
            assert!(!cached.hit);
        }
        for index in 0..10u8 {
            cache
                .get_or_compile(cache_key(&[&[index]]), || {
                    Ok::<_, ()>(report(&[index; 500], CompileStatus::Finished))
                })
                .expect("compiles");
        }
        let state = cache.lock();
        assert!(state.used_bytes <= 2_000, "{}", state.used_bytes);
        assert!(state.slots.len() < 10);
    }

    #[test]
    fn a_failed_leader_lets_the_next_request_compile() {
        let cache = CompileCache::new(1 << 20);
        let key = cache_key(&[b"x"]);
        assert!(
            cache
                .get_or_compile(key, || Err::<CompileReport, _>("sandbox"))
                .is_err()
        );
        let cached = cache
            .get_or_compile(key, || {
                Ok::<_, &str>(report(b"ok", CompileStatus::Finished))
            })
            .expect("compiles");
        assert!(!cached.hit);
    }
}
