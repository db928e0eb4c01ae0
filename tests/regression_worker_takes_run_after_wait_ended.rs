//! A compression worker must leave a run to its writer when nobody waits any more.
//!
//! Runs of blocks reach the pool's queue only while someone waits on background work (a
//! writer stalled on a flush, a manual compaction), so that background compression never takes
//! a core from the foreground writers. A worker could still take such a run after the wait had
//! ended, and compress it on a core the foreground wanted. The worker now checks for a waiter
//! after taking the run and, finding none, leaves it queued: the writer compresses it itself.
//! The interleaving is forced with sync points, under a watchdog; its own test binary, since
//! sync-point callbacks are process-wide and other tests' pools would reach them.

mod common;

use std::sync::mpsc;
use std::sync::Mutex;
use std::time::Duration;

use common::watchdog::watchdog;
use strata::compress::CompressionType;
use strata::table::compress_pool::{compress_block, CompressionPool, CompressionStats, Job};
use strata::util::sync_point::{self, Latch};

const STEP: Duration = Duration::from_secs(30);

#[test]
fn a_run_queued_while_someone_waited_is_left_to_its_writer_once_the_wait_ends() {
    let latch = Latch::new();
    let progress = latch.clone();
    watchdog(
        "left_to_its_writer",
        Duration::from_secs(60),
        move || {
            format!(
                "took {}, idle {}",
                progress.count("took"),
                progress.count("idle")
            )
        },
        move || left_to_its_writer(latch),
    );
}

fn left_to_its_writer(latch: Latch) {
    let _points = sync_point::exclusive();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let release_rx = Mutex::new(release_rx);
    let l = latch.clone();
    sync_point::set_callback("CompressionPool::worker:took", move || {
        l.signal("took");
        // Held until the test has ended its wait (bounded, so a failed test cannot hang).
        let _ = release_rx.lock().unwrap().recv_timeout(STEP);
    });
    let l = latch.clone();
    sync_point::set_callback("CompressionPool::worker:idle", move || l.signal("idle"));

    let raw: Vec<u8> = (0..20_000u32).map(|i| (i % 7) as u8).collect();
    let inline = compress_block(CompressionType::Snappy, raw.clone(), Vec::new());
    assert_eq!(inline.type_id, CompressionType::Snappy.id());
    let pool = CompressionPool::new(1).expect("native targets have threads");
    let job = Job::new(CompressionType::Snappy);
    for _ in 0..2 {
        assert!(job.push(raw.clone(), Vec::new()).is_ok());
    }
    let waiting = pool.demand();
    pool.submit(job.clone());
    assert!(latch.wait_for("took", 1, STEP), "the worker took no run");
    drop(waiting);
    release_tx.send(()).unwrap();
    // The worker has decided and gone back to waiting for work.
    assert!(
        latch.wait_for("idle", 1, STEP),
        "the worker never went idle"
    );
    assert_eq!(pool.stats(), CompressionStats::default());
    // The writer compresses the run itself, to the same bytes.
    for _ in 0..2 {
        let block = pool.next_block(&job).unwrap();
        assert_eq!(block.type_id, inline.type_id);
        assert_eq!(block.data, inline.data);
    }
    assert_eq!(
        pool.stats(),
        CompressionStats {
            runs_by_workers: 0,
            runs_by_writers: 1
        }
    );
}
