//! A read's view (the memtables and the Version it reads) is kept and handed to the reads after
//! it while nothing changes (`DbInner::read_view`). These tests pin what that cache must never
//! do: show a read anything older than the state at its start, or keep alive what the state
//! has moved past (a compacted-away table stays on disk while any Version holding it lives).

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::watchdog::watchdog;
use strata::storage::{MemStorage, Storage};
use strata::{Db, Options, ReadOptions, WriteOptions};

fn tables_in(storage: &dyn Storage, dir: &str) -> Vec<String> {
    common::files_in(storage, dir, ".ldb")
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

#[test]
fn reads_follow_every_switch_flush_and_compaction_and_keep_no_compacted_table() {
    watchdog("read view", Duration::from_secs(120), String::new, || {
        for background_thread in [true, false] {
            let storage: Arc<dyn Storage> = Arc::new(MemStorage::new());
            let options = Options {
                background_thread,
                ..Options::google().create()
            };
            let db = Db::open(storage.clone(), "db", options).unwrap();
            let (w, r) = (WriteOptions::default(), ReadOptions::default());
            // Two tables holding every key, the second newer; each step read in between, so
            // each read finds the view of the step before cached.
            for round in 0..2u32 {
                for i in 0..500 {
                    db.put(&w, &key(i), format!("v{round}-{i}").as_bytes())
                        .unwrap();
                }
                let want = format!("v{round}-7");
                assert_eq!(
                    db.get(&r, &key(7)).unwrap().as_deref(),
                    Some(want.as_bytes())
                );
                db.flush().unwrap();
                assert_eq!(
                    db.get(&r, &key(7)).unwrap().as_deref(),
                    Some(want.as_bytes())
                );
            }
            let before = tables_in(&*storage, "db");
            assert_eq!(before.len(), 2, "{background_thread}: {before:?}");
            // A range compaction's first step flushes the memtable (a switch, which clears
            // the cached view); the view cached by the read after it holds the Version
            // with both tables, and only the compaction's install replaces that Version.
            let mut steps = db.compact_range_steps(None, None).unwrap();
            assert!(!db.compact_step(&mut steps).unwrap());
            assert_eq!(db.get(&r, &key(1)).unwrap().as_deref(), Some(&b"v1-1"[..]));
            while !db.compact_step(&mut steps).unwrap() {}
            // No read since: the compaction's inputs go although the last view held them.
            let deadline = Instant::now() + Duration::from_secs(20);
            let mut after = tables_in(&*storage, "db");
            while after.len() != 1 && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
                after = tables_in(&*storage, "db");
            }
            assert_eq!(after.len(), 1, "{background_thread}: {after:?}");
            assert!(
                !before.contains(&after[0]),
                "{background_thread}: {after:?}"
            );
            // Reads see the compacted table, then a write after it, from the memtable.
            assert_eq!(db.scan().unwrap().entries, 500);
            assert_eq!(
                db.get(&r, &key(499)).unwrap().as_deref(),
                Some(&b"v1-499"[..])
            );
            db.put(&w, &key(3), b"newest").unwrap();
            assert_eq!(
                db.get(&r, &key(3)).unwrap().as_deref(),
                Some(&b"newest"[..])
            );
            db.delete(&w, &key(4)).unwrap();
            assert_eq!(db.get(&r, &key(4)).unwrap(), None);
            assert_eq!(db.scan().unwrap().entries, 499);
        }
    });
}
