//! Regression: a `put` panicked with "the leader is in its own group" when several threads
//! wrote while a memtable switch was forced. Any writer that found no active leader became
//! leader and took a group from the front of the queue; when the group was cut before the
//! writer itself (a forced switch goes alone), its batch was never committed and its result
//! never set. Only the writer at the front of the queue may lead (LevelDB's rule).
//!
//! The interleaving is forced with sync points, not left to the scheduler:
//! 1. writer `L` leads and is held after taking its group;
//! 2. `W2` (a put) and `F` (a forced switch: `flush`) queue up behind it, in that order;
//! 3. `L` is released, commits alone and wakes `W2`, the new front, which is held before it
//!    takes the queue's lock: no leader is active and `W2` is the front;
//! 4. `W3` (a put) arrives then and decides whether to lead. Before the fix `W3` led,
//!    committed only `W2` and panicked; now it waits, `W2` leads, then `F`, then `W3`.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::watchdog::{spawn, watchdog};
use strata::storage::{MemStorage, Storage};
use strata::util::sync_point::{self, thread_name, Latch};
use strata::{Db, Options, ReadOptions, WriteOptions};

const STEP: Duration = Duration::from_secs(20);

#[test]
fn a_writer_behind_a_forced_switch_never_leads_a_group_without_itself() {
    let _x = sync_point::exclusive();
    let latch = Latch::new();
    let latch_for_progress = latch.clone();
    let progress = move || {
        ["enqueued", "L held", "W3 decided", "woken"]
            .iter()
            .map(|e| format!("{e}={}", latch_for_progress.count(e)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    watchdog(
        "write leader rule",
        Duration::from_secs(120),
        progress,
        move || {
            let storage: Arc<dyn Storage> = Arc::new(MemStorage::new());
            let options = Options {
                background_thread: true,
                ..Options::google().create()
            };
            let db = Arc::new(Db::open(storage.clone(), "db", options.clone()).unwrap());
            let release_l = Arc::new(AtomicBool::new(false));

            {
                let l = latch.clone();
                sync_point::set_callback("DbInner::write:enqueued", move || l.signal("enqueued"));
                let l = latch.clone();
                let release = release_l.clone();
                sync_point::set_callback("DbInner::write:lead", move || {
                    let me = thread_name();
                    if me == "W3" {
                        l.signal("W3 decided");
                    }
                    if me == "L" && !release.load(Ordering::SeqCst) {
                        l.signal("L held");
                        assert!(l.wait_for("release L", 1, STEP), "L was never released");
                    }
                });
                let l = latch.clone();
                sync_point::set_callback("DbInner::write:wait", move || {
                    if thread_name() == "W3" {
                        l.signal("W3 decided");
                        l.signal("W3 waited");
                    }
                });
                let l = latch.clone();
                sync_point::set_callback("DbInner::write:woken", move || {
                    l.signal("woken");
                    if thread_name() == "W2" {
                        // W2 is the front and no leader is active: hold it while W3 arrives.
                        l.signal("W2 woken");
                        assert!(l.wait_for("W3 decided", 1, STEP), "W3 never decided");
                    }
                });
            }

            let w = WriteOptions::default();
            let db_l = db.clone();
            let l = spawn("L", move || db_l.put(&w, b"l", b"1"));
            assert!(latch.wait_for("L held", 1, STEP), "L never led");
            let db2 = db.clone();
            let w2 = spawn("W2", move || db2.put(&WriteOptions::default(), b"w2", b"2"));
            // L found the queue empty and leads without entering it: W2 is the first queued.
            assert!(latch.wait_for("enqueued", 1, STEP));
            let dbf = db.clone();
            let f = spawn("F", move || dbf.flush());
            assert!(latch.wait_for("enqueued", 2, STEP));
            release_l.store(true, Ordering::SeqCst);
            latch.signal("release L");
            assert!(latch.wait_for("W2 woken", 1, STEP), "L never woke W2");
            let db3 = db.clone();
            let w3 = spawn("W3", move || db3.put(&WriteOptions::default(), b"w3", b"3"));

            // Every writer returns Ok: none panics, none is left without its result.
            for (name, h) in [("L", l), ("W2", w2), ("W3", w3)] {
                h.join()
                    .unwrap_or_else(|_| panic!("writer {name} panicked"))
                    .unwrap();
            }
            f.join().expect("the forced switch panicked").unwrap();
            assert!(
                latch.count("woken") >= 3,
                "the interleaving was not forced: {} wakes",
                latch.count("woken")
            );
            assert!(latch.count("W3 waited") >= 1, "W3 never waited behind W2");
            sync_point::clear();

            let r = ReadOptions::default();
            for (k, v) in [(&b"l"[..], &b"1"[..]), (b"w2", b"2"), (b"w3", b"3")] {
                assert_eq!(db.get(&r, k).unwrap().as_deref(), Some(v));
            }
            drop(db);
            let db = Db::open(storage, "db", options).unwrap();
            assert_eq!(db.get(&r, b"w3").unwrap().as_deref(), Some(&b"3"[..]));
            assert_eq!(db.scan().unwrap().entries, 3);
        },
    );
}
