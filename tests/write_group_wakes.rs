//! Group commit wakes each writer alone: a writer queued behind a leader sleeps on its own
//! thread and is woken only when a leader has committed its batch or when it has become the
//! front of the queue (it then leads). These tests force the one window where such a wake
//! could be lost: the leader wakes the writer after the writer has decided to sleep but before
//! it sleeps, and other code on the writer's thread parks in that window (taking the thread's
//! unpark token). The wake must be kept, and the writer must return, never sleep forever. A
//! leader that panics in the middle of its commit must not leave its group asleep either.
//!
//! Interleavings are forced with sync points; every test runs under a watchdog.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::watchdog::{spawn, watchdog};
use strata::storage::{MemStorage, Storage};
use strata::util::sync_point::{self, thread_name, Latch};
use strata::{Db, Options, ReadOptions, WriteOptions};

const STEP: Duration = Duration::from_secs(20);

fn open() -> (Arc<dyn Storage>, Options, Arc<Db>) {
    let storage: Arc<dyn Storage> = Arc::new(MemStorage::new());
    let options = Options {
        background_thread: true,
        ..Options::google().create()
    };
    let db = Arc::new(Db::open(storage.clone(), "db", options.clone()).unwrap());
    (storage, options, db)
}

fn progress(latch: &Latch) -> impl Fn() -> String {
    let latch = latch.clone();
    move || {
        ["lead", "parking", "held", "woken"]
            .iter()
            .map(|e| format!("{e}={}", latch.count(e)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Each key holds its own value, and so it does after a reopen (the log replays them).
fn assert_written(storage: Arc<dyn Storage>, options: Options, db: Arc<Db>, keys: &[&[u8]]) {
    let r = ReadOptions::default();
    for k in keys {
        assert_eq!(db.get(&r, k).unwrap().as_deref(), Some(*k), "{k:?}");
    }
    drop(db);
    let db = Db::open(storage, "db", options).unwrap();
    for k in keys {
        assert_eq!(
            db.get(&r, k).unwrap().as_deref(),
            Some(*k),
            "{k:?} after reopen"
        );
    }
    assert_eq!(db.scan().unwrap().entries, keys.len() as u64);
}

/// Holds `A` when it leads (until `release A`); counts every thread's leads.
fn hold_a_leading(latch: &Latch, release_a: &Arc<AtomicBool>) {
    let l = latch.clone();
    let release = release_a.clone();
    sync_point::set_callback("DbInner::write:lead", move || {
        l.signal("lead");
        l.signal(&format!("lead {}", thread_name()));
        if thread_name() == "A" && !release.load(Ordering::SeqCst) {
            l.signal("held");
            assert!(l.wait_for("release A", 1, STEP), "A was never released");
        }
    });
}

/// A database with a 64 KiB write buffer and no background thread (none to clear a poisoned
/// state lock by chance, so the write path's guard must), holding `before`.
fn open_small_without_thread(before: &[u8]) -> (Arc<dyn Storage>, Options, Arc<Db>) {
    let storage: Arc<dyn Storage> = Arc::new(MemStorage::new());
    let options = Options {
        background_thread: false,
        write_buffer_size: 64 << 10,
        ..Options::google().create()
    };
    let db = Arc::new(Db::open(storage.clone(), "db", options.clone()).unwrap());
    db.put(&WriteOptions::default(), b"before", before).unwrap();
    (storage, options, db)
}

/// Makes `who` panic at its memtable switch, with the state lock held (as a storage that
/// panics creating the new log would); counts that and every thread's sleeps.
fn panic_at_switch(latch: &Latch, who: &'static str) {
    let l = latch.clone();
    sync_point::set_callback("DbInner::make_room:switched", move || {
        if thread_name() == who {
            l.signal(&format!("{who} panics"));
            panic!("injected: {who}'s commit fails with the state lock held");
        }
    });
    let l = latch.clone();
    sync_point::set_callback("DbInner::write:parking", move || {
        l.signal("parking");
    });
}

/// Holds `A` when it leads (until `release A`) and `B` before it sleeps the first time (until
/// `release B`); counts every thread's leads, sleeps and wakes.
fn hold_a_leading_and_b_before_sleeping(latch: &Latch, release_a: &Arc<AtomicBool>) {
    hold_a_leading(latch, release_a);
    let l = latch.clone();
    sync_point::set_callback("DbInner::write:parking", move || {
        l.signal("parking");
        l.signal(&format!("parking {}", thread_name()));
        if thread_name() == "B" && l.count("parking B") == 1 {
            assert!(l.wait_for("release B", 1, STEP), "B was never released");
            // Other code parking on B's thread takes the unpark token the leader left: the
            // wake must not depend on it.
            std::thread::park_timeout(Duration::from_millis(20));
        }
    });
    let l = latch.clone();
    sync_point::set_callback("DbInner::write:woken", move || {
        l.signal("woken");
    });
}

#[test]
fn a_group_member_committed_before_it_sleeps_keeps_its_wake_and_returns() {
    let _x = sync_point::exclusive();
    let latch = Latch::new();
    watchdog(
        "member woken before it sleeps",
        Duration::from_secs(120),
        progress(&latch),
        {
            let latch = latch.clone();
            move || {
                let (storage, options, db) = open();
                let release_a = Arc::new(AtomicBool::new(false));
                hold_a_leading_and_b_before_sleeping(&latch, &release_a);
                let groups_before = db.properties().write_groups;

                // A leads alone and is held; L and then B queue behind it.
                let db_a = db.clone();
                let a = spawn("A", move || db_a.put(&WriteOptions::default(), b"a", b"a"));
                assert!(latch.wait_for("held", 1, STEP), "A never led");
                let db_l = db.clone();
                let l = spawn("L", move || db_l.put(&WriteOptions::default(), b"l", b"l"));
                assert!(latch.wait_for("parking L", 1, STEP), "L never queued");
                let db_b = db.clone();
                let b = spawn("B", move || db_b.put(&WriteOptions::default(), b"b", b"b"));
                assert!(latch.wait_for("parking B", 1, STEP), "B never queued");

                // A commits and wakes L, the new front; L leads a group of L and B, commits
                // it, and wakes B, which has not gone to sleep yet.
                release_a.store(true, Ordering::SeqCst);
                latch.signal("release A");
                a.join().expect("A panicked").unwrap();
                l.join().expect("L panicked").unwrap();
                assert_eq!(latch.count("lead L"), 1);
                assert_eq!(latch.count("lead B"), 0, "B led: it was not in L's group");

                // B now sleeps: the wake it was given before must end that sleep at once.
                latch.signal("release B");
                b.join().expect("B panicked").unwrap();
                assert_eq!(latch.count("lead B"), 0, "B led its own group");
                assert_eq!(latch.count("parking B"), 1, "B slept more than once");
                sync_point::clear();

                assert_eq!(db.properties().write_groups - groups_before, 2);
                assert_written(storage, options, db, &[b"a", b"b", b"l"]);
            }
        },
    );
}

#[test]
fn a_writer_made_the_front_before_it_sleeps_keeps_its_wake_and_leads() {
    let _x = sync_point::exclusive();
    let latch = Latch::new();
    watchdog(
        "front woken before it sleeps",
        Duration::from_secs(120),
        progress(&latch),
        {
            let latch = latch.clone();
            move || {
                let (storage, options, db) = open();
                let release_a = Arc::new(AtomicBool::new(false));
                hold_a_leading_and_b_before_sleeping(&latch, &release_a);
                let groups_before = db.properties().write_groups;

                // A leads alone and is held; B queues behind it and stops before sleeping.
                let db_a = db.clone();
                let a = spawn("A", move || db_a.put(&WriteOptions::default(), b"a", b"a"));
                assert!(latch.wait_for("held", 1, STEP), "A never led");
                let db_b = db.clone();
                let b = spawn("B", move || db_b.put(&WriteOptions::default(), b"b", b"b"));
                assert!(latch.wait_for("parking B", 1, STEP), "B never queued");

                // A commits and wakes B, now the front, before B sleeps.
                release_a.store(true, Ordering::SeqCst);
                latch.signal("release A");
                a.join().expect("A panicked").unwrap();
                assert_eq!(latch.count("lead B"), 0);

                // B sleeps; the wake ends it, and B leads its own group.
                latch.signal("release B");
                b.join().expect("B panicked").unwrap();
                assert_eq!(latch.count("lead B"), 1);
                assert_eq!(latch.count("parking B"), 1, "B slept more than once");
                sync_point::clear();

                assert_eq!(db.properties().write_groups - groups_before, 2);
                assert_written(storage, options, db, &[b"a", b"b"]);
            }
        },
    );
}

#[test]
fn a_leader_panicking_in_its_commit_fails_its_group_and_later_writes_instead_of_hanging_them() {
    let _x = sync_point::exclusive();
    let latch = Latch::new();
    watchdog(
        "leader panics in its commit",
        Duration::from_secs(120),
        progress(&latch),
        {
            let latch = latch.clone();
            move || {
                // A 64 KiB write buffer: A's 100 KB value fills the memtable, so B's commit
                // switches to a new one, and panics there with the state lock held.
                let (storage, options, db) = open_small_without_thread(b"before");
                let release_a = Arc::new(AtomicBool::new(false));
                hold_a_leading(&latch, &release_a);
                panic_at_switch(&latch, "B");

                // A leads alone and is held; B and C queue behind it. A commits and wakes B,
                // which leads a group of B and C and panics in it.
                let db_a = db.clone();
                let a = spawn("A", move || {
                    db_a.put(&WriteOptions::default(), b"a", &vec![7u8; 100_000])
                });
                assert!(latch.wait_for("held", 1, STEP), "A never led");
                let db_b = db.clone();
                let b = spawn("B", move || db_b.put(&WriteOptions::default(), b"b", b"b"));
                assert!(latch.wait_for("parking", 1, STEP), "B never queued");
                let db_c = db.clone();
                let c = spawn("C", move || db_c.put(&WriteOptions::default(), b"c", b"c"));
                assert!(latch.wait_for("parking", 2, STEP), "C never queued");
                release_a.store(true, Ordering::SeqCst);
                latch.signal("release A");

                a.join().expect("A panicked").unwrap();
                assert!(b.join().is_err(), "B's injected panic did not unwind");
                assert_eq!(latch.count("B panics"), 1);
                assert_eq!(latch.count("lead C"), 0, "C was not in B's group");
                // C, in B's group, wakes with the error; so does every later write.
                let e = c.join().expect("C panicked").expect_err("C");
                assert!(e.to_string().contains("panicked"), "C: {e}");
                sync_point::clear();
                for _ in 0..3 {
                    let e = db
                        .put(&WriteOptions::default(), b"d", b"d")
                        .expect_err("a write after the panic");
                    assert!(e.to_string().contains("panicked"), "{e}");
                }
                // Reads go on.
                let r = ReadOptions::default();
                assert_eq!(
                    db.get(&r, b"before").unwrap().as_deref(),
                    Some(&b"before"[..])
                );
                assert_eq!(db.get(&r, b"a").unwrap().map(|v| v.len()), Some(100_000));

                // Nothing of the failed group reached a log: reopened, the database holds
                // what was written before it.
                drop(db);
                let db = Db::open(storage, "db", options).unwrap();
                assert_eq!(
                    db.get(&r, b"before").unwrap().as_deref(),
                    Some(&b"before"[..])
                );
                assert_eq!(db.get(&r, b"a").unwrap().map(|v| v.len()), Some(100_000));
                for k in [&b"b"[..], b"c", b"d"] {
                    assert_eq!(db.get(&r, k).unwrap(), None, "{k:?}");
                }
                assert_eq!(db.scan().unwrap().entries, 2);
            }
        },
    );
}

#[test]
fn a_leader_that_never_queued_panicking_wakes_the_writers_behind_it_with_the_error() {
    let _x = sync_point::exclusive();
    let latch = Latch::new();
    watchdog(
        "lone leader panics",
        Duration::from_secs(120),
        progress(&latch),
        {
            let latch = latch.clone();
            move || {
                // A 64 KiB write buffer, already full: A, writing alone to an idle database,
                // leads without entering the queue and switches memtables, where it panics
                // with the state lock held. B and C queue behind it meanwhile.
                let (storage, options, db) = open_small_without_thread(&vec![7u8; 100_000]);
                let release_a = Arc::new(AtomicBool::new(false));
                hold_a_leading(&latch, &release_a);
                panic_at_switch(&latch, "A");
                let l = latch.clone();
                sync_point::set_callback("DbInner::write:enqueued", move || {
                    l.signal("enqueued");
                });

                let db_a = db.clone();
                let a = spawn("A", move || db_a.put(&WriteOptions::default(), b"a", b"a"));
                assert!(latch.wait_for("held", 1, STEP), "A never led");
                let db_b = db.clone();
                let b = spawn("B", move || db_b.put(&WriteOptions::default(), b"b", b"b"));
                assert!(latch.wait_for("parking", 1, STEP), "B never queued");
                let db_c = db.clone();
                let c = spawn("C", move || db_c.put(&WriteOptions::default(), b"c", b"c"));
                assert!(latch.wait_for("parking", 2, STEP), "C never queued");
                release_a.store(true, Ordering::SeqCst);
                latch.signal("release A");

                assert!(a.join().is_err(), "A's injected panic did not unwind");
                assert_eq!(latch.count("A panics"), 1);
                // A never entered the queue; B and C did, and the panicking A handed it on:
                // B led (and met the error), then C.
                assert_eq!(latch.count("enqueued"), 2);
                for (name, h) in [("B", b), ("C", c)] {
                    let e = h
                        .join()
                        .unwrap_or_else(|_| panic!("{name} panicked"))
                        .expect_err(name);
                    assert!(e.to_string().contains("panicked"), "{name}: {e}");
                }
                assert_eq!(latch.count("lead B"), 1);
                sync_point::clear();
                let e = db
                    .put(&WriteOptions::default(), b"d", b"d")
                    .expect_err("a write after the panic");
                assert!(e.to_string().contains("panicked"), "{e}");

                // Reopened, the database holds what was written before the panic, only.
                drop(db);
                let db = Db::open(storage, "db", options).unwrap();
                let r = ReadOptions::default();
                assert_eq!(
                    db.get(&r, b"before").unwrap().map(|v| v.len()),
                    Some(100_000)
                );
                for k in [&b"a"[..], b"b", b"c", b"d"] {
                    assert_eq!(db.get(&r, k).unwrap(), None, "{k:?}");
                }
                assert_eq!(db.scan().unwrap().entries, 1);
            }
        },
    );
}

#[test]
fn a_writer_that_finds_the_state_lock_poisoned_by_a_panicking_leader_gets_no_panic_of_its_own() {
    let _x = sync_point::exclusive();
    let latch = Latch::new();
    watchdog(
        "a poisoned state lock met by another writer",
        Duration::from_secs(120),
        progress(&latch),
        {
            let latch = latch.clone();
            move || {
                // A commits and wakes B; B leads and panics with the state lock held, which
                // poisons it. A, back from its commit, takes the state lock for its inline
                // work after that and before B's unwinding records the error: the window a
                // loaded machine found (A panicked there on the poison, once in 15 runs).
                let (storage, options, db) = open_small_without_thread(b"before");
                let release_a = Arc::new(AtomicBool::new(false));
                hold_a_leading(&latch, &release_a);
                panic_at_switch(&latch, "B");
                let l = latch.clone();
                sync_point::set_callback("DbInner::write:unwinding", move || {
                    if thread_name() == "B" {
                        l.signal("B unwinding");
                        // Unwinding: no assertion here (a second panic aborts).
                        let _ = l.wait_for("A returned", 1, STEP);
                    }
                });
                let l = latch.clone();
                sync_point::set_callback("DbInner::run_inline_work", move || {
                    if thread_name() == "A" {
                        assert!(l.wait_for("B unwinding", 1, STEP), "B never unwound");
                        l.signal("A locks");
                    }
                });

                let db_a = db.clone();
                let a = spawn("A", move || {
                    db_a.put(&WriteOptions::default(), b"a", &vec![7u8; 100_000])
                });
                assert!(latch.wait_for("held", 1, STEP), "A never led");
                let db_b = db.clone();
                let b = spawn("B", move || db_b.put(&WriteOptions::default(), b"b", b"b"));
                assert!(latch.wait_for("parking", 1, STEP), "B never queued");
                release_a.store(true, Ordering::SeqCst);
                latch.signal("release A");

                // A's own write was committed before B led: A returns it, and no panic.
                a.join().expect("A panicked on the poisoned lock").unwrap();
                assert_eq!(latch.count("A locks"), 1);
                latch.signal("A returned");
                assert!(b.join().is_err(), "B's injected panic did not unwind");
                assert_eq!(latch.count("B panics"), 1);
                sync_point::clear();

                // The poison became the sticky error: writes refused, reads go on.
                let e = db
                    .put(&WriteOptions::default(), b"d", b"d")
                    .expect_err("a write after the panic");
                assert!(e.to_string().contains("panicked"), "{e}");
                let r = ReadOptions::default();
                assert_eq!(db.get(&r, b"a").unwrap().map(|v| v.len()), Some(100_000));
                drop(db);
                let db = Db::open(storage, "db", options).unwrap();
                assert_eq!(db.get(&r, b"a").unwrap().map(|v| v.len()), Some(100_000));
                assert_eq!(db.get(&r, b"b").unwrap(), None);
                assert_eq!(db.scan().unwrap().entries, 2);
            }
        },
    );
}
