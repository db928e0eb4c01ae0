//! Named interleaving points for deterministic concurrency tests (RocksDB's `SyncPoint`).
//!
//! The engine calls `sync_point("Area::step")` where threads meet (the write queue, the
//! background thread, the readahead pool, the table cache). In every build the call is one
//! relaxed atomic load and a branch; only when a test has installed a callback for a point does
//! it run that callback on the thread that reached the point. A callback may count, record, or
//! block its thread until another thread reaches a point (`Latch`), which is how a test forces
//! an exact interleaving instead of hoping the scheduler produces it.
//!
//! Invariants:
//! - Production code never installs a callback; with none installed nothing changes.
//! - A point marked `sync_point` is reached with no engine lock held, so its callback may
//!   block. A point marked `signal_point` is reached with a lock held: its callback must only
//!   record (never block, never call the engine).
//! - Callbacks are global to the process: tests that install them serialize on
//!   `exclusive()` and remove them with `clear()` (the guard does it when dropped).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

type Callback = Arc<dyn Fn() + Send + Sync>;

static ACTIVE: AtomicBool = AtomicBool::new(false);
static CALLBACKS: Mutex<Vec<(&'static str, Callback)>> = Mutex::new(Vec::new());
static EXCLUSIVE: Mutex<()> = Mutex::new(());

fn callbacks() -> MutexGuard<'static, Vec<(&'static str, Callback)>> {
    // A test whose callback panicked poisons nothing we rely on: the list stays consistent.
    CALLBACKS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether any callback is installed (one relaxed load).
#[inline]
pub fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed)
}

/// A point reached with no engine lock held: its callbacks may block.
#[inline]
pub fn sync_point(name: &'static str) {
    if active() {
        run(name);
    }
}

/// A point reached with an engine lock held: its callbacks must only record.
#[inline]
pub fn signal_point(name: &'static str) {
    if active() {
        run(name);
    }
}

#[cold]
fn run(name: &'static str) {
    let matching: Vec<Callback> = callbacks()
        .iter()
        .filter(|(n, _)| *n == name)
        .map(|(_, f)| f.clone())
        .collect();
    for f in matching {
        f();
    }
}

/// Runs `f` on every thread that reaches `name`, until `clear`.
pub fn set_callback(name: &'static str, f: impl Fn() + Send + Sync + 'static) {
    callbacks().push((name, Arc::new(f)));
    ACTIVE.store(true, Ordering::Relaxed);
}

/// Removes every callback.
pub fn clear() {
    let mut cbs = callbacks();
    cbs.clear();
    ACTIVE.store(false, Ordering::Relaxed);
}

/// Serializes the tests of one process that install callbacks; clears them when dropped.
pub struct Exclusive {
    _guard: MutexGuard<'static, ()>,
}

impl Drop for Exclusive {
    fn drop(&mut self) {
        clear();
    }
}

/// Takes the process-wide right to install callbacks (waits for another test to finish).
pub fn exclusive() -> Exclusive {
    let guard = EXCLUSIVE.lock().unwrap_or_else(|e| e.into_inner());
    clear();
    Exclusive { _guard: guard }
}

/// Counts events by name and lets threads wait for a count, with a deadline so that a forced
/// interleaving that never happens fails the test instead of hanging it.
#[derive(Clone, Default)]
pub struct Latch {
    inner: Arc<(Mutex<HashMap<String, u64>>, Condvar)>,
}

impl Latch {
    pub fn new() -> Latch {
        Latch::default()
    }

    fn counts(&self) -> MutexGuard<'_, HashMap<String, u64>> {
        self.inner.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records one occurrence of `event` (never blocks: usable from a `signal_point`).
    pub fn signal(&self, event: &str) {
        *self.counts().entry(event.to_string()).or_insert(0) += 1;
        self.inner.1.notify_all();
    }

    /// How often `event` has occurred.
    pub fn count(&self, event: &str) -> u64 {
        self.counts().get(event).copied().unwrap_or(0)
    }

    /// Waits until `event` has occurred at least `n` times. Returns false on timeout.
    pub fn wait_for(&self, event: &str, n: u64, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut counts = self.counts();
        loop {
            if counts.get(event).copied().unwrap_or(0) >= n {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            counts = match self.inner.1.wait_timeout(counts, deadline - now) {
                Ok((c, _)) => c,
                Err(e) => e.into_inner().0,
            };
        }
    }
}

/// The name of the calling thread ("" when unnamed): how callbacks tell threads apart.
pub fn thread_name() -> String {
    std::thread::current().name().unwrap_or("").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callbacks_run_only_for_their_point_and_only_while_installed() {
        let _x = exclusive();
        let latch = Latch::new();
        sync_point("A");
        assert_eq!(latch.count("a"), 0);
        let l = latch.clone();
        set_callback("A", move || l.signal("a"));
        sync_point("A");
        signal_point("A");
        sync_point("B");
        assert_eq!(latch.count("a"), 2);
        clear();
        sync_point("A");
        assert_eq!(latch.count("a"), 2);
        assert!(!active());
    }

    #[test]
    fn latch_waits_for_a_count_and_times_out() {
        let latch = Latch::new();
        let l = latch.clone();
        let t = std::thread::spawn(move || {
            l.signal("x");
            l.signal("x");
        });
        assert!(latch.wait_for("x", 2, Duration::from_secs(10)));
        t.join().unwrap();
        assert!(!latch.wait_for("x", 3, Duration::from_millis(20)));
    }
}
