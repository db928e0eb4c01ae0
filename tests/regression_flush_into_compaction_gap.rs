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
            let compactor = {
                let db = db.clone();
                spawn("compact", move || db.compact_range(Some(b"a"), Some(b"y")))
            };
            assert!(latch.wait_for("run", 1, STEP), "no compaction started");
            db.put(&w, b"m", b"middle").unwrap();
            let flusher = {
                let db = db.clone();
                spawn("flush", move || db.flush())
            };
            assert!(latch.wait_for("switched", 1, STEP), "no memtable switch");
            latch.signal("go");
            flusher.join().unwrap().unwrap();
            let compacted = compactor.join().unwrap();
            sync_point::clear();
            compacted.unwrap();

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
            let mut it = db.iter(&r);
            it.seek_to_first();
            let mut n = 0;
            while it.valid() {
                n += 1;
                it.next();
            }
            it.status().unwrap();
            assert_eq!(n, 202);
        },
    );
}
