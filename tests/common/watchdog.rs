//! A watchdog for multi-threaded tests: the test body runs on its own thread; the test thread
//! waits for it with a bound. A panic in the body (or in any thread it joins) fails the test at
//! once with that panic; a body still running after the bound fails the test with the state it
//! reached (`progress()`, e.g. operations done per thread) instead of hanging the run.

use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Starts `f` on a thread named `name` (what sync points and `thread_name` match on).
pub fn spawn<T: Send + 'static>(
    name: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::thread::JoinHandle<T> {
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(f)
        .expect("spawn a test thread")
}

/// Runs `body` under a watchdog of `limit`; `progress` describes the state reached.
pub fn watchdog<T: Send + 'static>(
    what: &str,
    limit: Duration,
    progress: impl Fn() -> String,
    body: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = mpsc::channel();
    let start = Instant::now();
    let handle = std::thread::Builder::new()
        .name(format!("{what} (body)"))
        .spawn(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
            let _ = tx.send(r);
        })
        .expect("spawn the test body");
    match rx.recv_timeout(limit) {
        Ok(Ok(v)) => {
            let _ = handle.join();
            v
        }
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => panic!(
            "{what}: watchdog fired after {:.1?} (limit {limit:?}); state reached: {}",
            start.elapsed(),
            progress()
        ),
    }
}

/// Sets a flag if its thread unwinds from a panic: a failing thread tells the others to stop
/// at once instead of finishing their work (or waiting forever for it).
pub struct FailOnPanic<'a>(pub &'a std::sync::atomic::AtomicBool);

impl Drop for FailOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
}
