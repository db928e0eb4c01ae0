//! A memtable flushed while a compaction runs must not land in the compaction's output level
//! inside the key range the compaction is rewriting.
//!
//! LevelDB pushes a flushed memtable below level 0 (`PickLevelForMemTableOutput`) when it
//! overlaps nothing there. A flush can run in the middle of a compaction (the compaction
//! yields to it), and the check looks at the current Version, where the compaction's inputs
//! are still installed and its outputs not yet. A manual compaction of level 1 takes every
//! level-1 file in its range, so its inputs can leave a gap: `[a000, a099]` and `[x000, x099]`
//! with nothing at levels 1 and 2 between them. A memtable holding only `m` overlaps nothing,
//! so it went to level 2, and the compaction's output `[a000, x099]`, installed there next,
//! overlapped it: two overlapping tables in one level, which the Version refuses (the
//! compaction failed and every later write with it). The interleaving is forced with sync
//! points, under a watchdog.
//!
//! Without a background thread every caller runs background steps, and a second caller could
//! pick a compaction while another caller's ran with the lock released: the same inputs
//! again, whose outputs then overlapped the first one's.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::watchdog::{spawn, watchdog};
use strata::storage::{MemStorage, Storage};
use strata::util::sync_point::{self, thread_name, Latch};
use strata::{Db, Options, ReadOptions, WriteOptions};

const STEP: Duration = Duration::from_secs(30);

fn files_at(db: &Db, level: usize) -> Vec<(String, String)> {
    db.version().files[level]
        .iter()
        .map(|f| {
            let user = |k: &[u8]| String::from_utf8_lossy(&k[..k.len() - 8]).into_owned();
            (user(&f.smallest), user(&f.largest))
        })
        .collect()
}

#[test]
fn a_flush_during_a_compaction_does_not_land_in_its_output_range() {
    let _x = sync_point::exclusive();
    let latch = Latch::new();
    let progress = latch.clone();
    watchdog(
        "flush during a compaction",
        Duration::from_secs(120),
        move || {
            format!(
                "compaction reached {}, memtable switched {}",
                progress.count("run"),
                progress.count("switched")
            )
        },
        move || {
            let storage: Arc<dyn Storage> = Arc::new(MemStorage::new());
            let options = Options {
                write_buffer_size: 1 << 20,
                ..Options::google().create()
            };
            let db = Arc::new(Db::open(storage, "db", options).unwrap());
            let w = WriteOptions::default();
            // Level 2: a050 and x050 (each flush overlaps nothing, so it goes down to 2).
            for key in ["a050", "x050"] {
                db.put(&w, key.as_bytes(), b"deep").unwrap();
                db.flush().unwrap();
            }
            // Level 1: [a000, a099] and [x000, x099] (each overlaps a level-2 table).
            for prefix in ["a", "x"] {
                for i in 0..100 {
                    let key = format!("{prefix}{i:03}");
                    db.put(&w, key.as_bytes(), format!("v{key}").as_bytes())
                        .unwrap();
                }
                db.flush().unwrap();
            }
            assert_eq!(
                files_at(&db, 1),
                [
                    ("a000".into(), "a099".into()),
                    ("x000".into(), "x099".into())
                ]
            );
            assert_eq!(
                files_at(&db, 2),
                [
                    ("a050".into(), "a050".into()),
                    ("x050".into(), "x050".into())
                ]
            );

            // The background thread stops before it runs the compaction it picked; a flush
            // of a memtable holding only `m` is then asked for, and the compaction goes on
            // (it yields to the flush after 64 entries).
            let l = latch.clone();
            sync_point::set_callback("DbInner::background_compaction:run", move || {
                if thread_name().starts_with("strata") {
                    l.signal("run");
                    assert!(l.wait_for("go", 1, STEP), "never let go");
                }
            });
            let l = latch.clone();
            sync_point::set_callback("DbInner::make_room:switched", move || l.signal("switched"));
            let l = latch.clone();
            sync_point::set_callback("DbInner::background_compaction:ran", move || {
                l.signal("ran")
            });
            // Where the memtable is written: inside the compaction (it yields to the flush)
            // is the case under test.
            let l = latch.clone();
            sync_point::set_callback("DbInner::compact_memtable:build", move || {
                if l.count("run") == 1 && l.count("ran") == 0 {
                    l.signal("flushed inside");
                }
            });
            let compactor = {
                let db = db.clone();
                spawn("compact", move || db.compact_range(Some(b"a"), Some(b"y")))
            };
            assert!(latch.wait_for("run", 1, STEP), "no compaction started");
            // (The range compaction's own flush switched memtables before it started.)
            let switched = latch.count("switched");
            db.put(&w, b"m", b"middle").unwrap();
            let flusher = {
                let db = db.clone();
                spawn("flush", move || db.flush())
            };
            assert!(
                latch.wait_for("switched", switched + 1, STEP),
                "no memtable switch"
            );
            latch.signal("go");
            flusher.join().unwrap().unwrap();
            let compacted = compactor.join().unwrap();
            sync_point::clear();
            compacted.unwrap();
            assert_eq!(latch.count("flushed inside"), 1);

            // The compaction wrote one table over [a000, x099] at level 2. The memtable,
            // flushed while it ran, kept out of that span (level 1: the unit test
            // `a_flush_keeps_out_of_a_running_compactions_output_range`), and the range
            // compaction then took it down into that table too.
            assert_eq!(files_at(&db, 0), []);
            assert_eq!(files_at(&db, 1), []);
            assert_eq!(files_at(&db, 2), [("a000".into(), "x099".into())]);

            // Every key reads back, level 1 and 2 hold no overlapping tables, and new writes
            // are taken.
            let r = ReadOptions::default();
            assert_eq!(db.get(&r, b"m").unwrap().as_deref(), Some(&b"middle"[..]));
            for prefix in ["a", "x"] {
                for i in 0..100 {
                    let key = format!("{prefix}{i:03}");
                    assert_eq!(
                        db.get(&r, key.as_bytes()).unwrap(),
                        Some(format!("v{key}").into_bytes()),
                        "{key}"
                    );
                }
            }
            db.put(&w, b"n", b"after").unwrap();
            db.flush().unwrap();
            assert_eq!(db.get(&r, b"n").unwrap().as_deref(), Some(&b"after"[..]));
            assert_eq!(common::entries(&db).len(), 202);
        },
    );
}

/// Without a background thread, a caller that finds another caller's compaction running
/// does not start one of its own.
#[test]
fn a_second_inline_caller_does_not_start_a_compaction_while_one_runs() {
    let _x = sync_point::exclusive();
    let latch = Latch::new();
    let progress = latch.clone();
    watchdog(
        "two inline callers",
        Duration::from_secs(120),
        move || format!("compactions reached {}", progress.count("run")),
        move || {
            let storage: Arc<dyn Storage> = Arc::new(MemStorage::new());
            let options = Options {
                background_thread: false,
                ..Options::google().create()
            };
            let db = Arc::new(Db::open(storage, "db", options).unwrap());
            let w = WriteOptions::default();
            // Six overlapping memtables: the first goes down to level 2, the second to level
            // 1, the others stay at level 0; the sixth makes a compaction due.
            let fill = |db: &Db, round: u32| {
                for i in 0..100 {
                    let key = format!("k{i:03}");
                    db.put(
                        &WriteOptions::default(),
                        key.as_bytes(),
                        format!("v{round}").as_bytes(),
                    )
                    .unwrap();
                }
                db.flush().unwrap();
            };
            for round in 0..5 {
                fill(&db, round);
            }
            let shape = |db: &Db| {
                db.version()
                    .files
                    .iter()
                    .map(|f| f.len())
                    .collect::<Vec<_>>()
            };
            assert_eq!(shape(&db), [3, 1, 1, 0, 0, 0, 0]);
            assert_eq!(db.properties().compactions, 0);

            // The first caller to reach a compaction's run waits there; any later one would
            // go on. The first is the thread that writes the sixth memtable.
            let l = latch.clone();
            sync_point::set_callback("DbInner::background_compaction:run", move || {
                l.signal("run");
                if l.count("run") == 1 {
                    assert!(l.wait_for("go", 1, STEP), "never let go");
                }
            });
            let first = {
                let db = db.clone();
                spawn("first", move || {
                    fill(&db, 5);
                    db.maintenance()
                })
            };
            assert!(latch.wait_for("run", 1, STEP), "no compaction started");
            assert_eq!(shape(&db), [4, 1, 1, 0, 0, 0, 0]);
            // A second caller finds it running: no compaction of its own.
            db.maintenance().unwrap();
            assert_eq!(latch.count("run"), 1);
            latch.signal("go");
            first.join().unwrap().unwrap();
            sync_point::clear();
            db.maintenance().unwrap();

            assert_eq!(db.properties().compactions, 1);
            assert_eq!(shape(&db), [0, 1, 1, 0, 0, 0, 0]);
            let r = ReadOptions::default();
            for i in 0..100 {
                let key = format!("k{i:03}");
                assert_eq!(
                    db.get(&r, key.as_bytes()).unwrap().as_deref(),
                    Some(&b"v5"[..]),
                    "{key}"
                );
            }
            db.put(&w, b"after", b"x").unwrap();
            db.flush().unwrap();
        },
    );
}
