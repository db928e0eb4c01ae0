//! Bulk-load switches (RocksDB's seed workload: WAL off, auto-compaction off, L0 triggers
//! raised): the data is readable after a flush, survives reopen, and compacts afterwards.
//! With automatic compactions off, level 0's triggers hold no write back (no compaction is
//! coming to bring it down).

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::watchdog::watchdog;
use strata::storage::{MemStorage, Storage};
use strata::{Db, Options, ReadOptions, WriteOptions};

#[test]
fn bulk_loaded_data_is_readable_and_compactable() {
    let storage: Arc<dyn Storage> = Arc::new(MemStorage::new());
    let bulk = Options {
        write_buffer_size: 64 * 1024,
        disable_auto_compactions: true,
        l0_slowdown_writes_trigger: usize::MAX,
        l0_stop_writes_trigger: usize::MAX,
        ..Options::google().create()
    };
    let db = Db::open(storage.clone(), "db", bulk.clone()).unwrap();
    let w = WriteOptions {
        disable_wal: true,
        ..Default::default()
    };
    let mut rng = strata::util::random::Random::new(42);
    let mut keys = std::collections::BTreeMap::new();
    for i in 0..50_000u32 {
        let k = format!("{:016}", rng.uniform(1 << 30)).into_bytes();
        let v = format!("value {i:08} {}", "v".repeat(84)).into_bytes();
        db.put(&w, &k, &v).unwrap();
        keys.insert(k, v);
    }
    db.flush().unwrap();
    let p = db.properties();
    assert_eq!(p.compactions, 0, "no automatic compaction");
    assert!(
        p.files_per_level[0] > 20,
        "everything stayed in level 0: {p:?}"
    );
    // The log was skipped: nothing but the empty current log holds data.
    drop(db);
    let db = Db::open(storage.clone(), "db", bulk).unwrap();
    assert_eq!(db.scan().unwrap().entries, keys.len() as u64);
    for (k, v) in keys.iter().step_by(97) {
        assert_eq!(
            db.get(&ReadOptions::default(), k).unwrap().as_ref(),
            Some(v)
        );
    }
    db.compact_range(None, None).unwrap();
    let p = db.properties();
    assert_eq!(p.files_per_level[0], 0, "{p:?}");
    assert!(p.compactions > 0);
    let mut stats = strata::ScanStats::default();
    for (k, v) in &keys {
        stats.add(k, v);
    }
    assert_eq!(db.scan().unwrap(), stats);
    db.verify().unwrap();
}

/// Writes past level 0's slowdown and stop triggers with automatic compactions off (the
/// triggers left at their defaults): none is slowed (the slowdown's 1 ms sleep was taken on
/// every write once 8 files were in level 0) or stopped, and nothing is compacted.
#[test]
fn disabled_compactions_hold_no_write_back_at_level_0s_triggers() {
    use strata::util::sync_point::{self, Latch};
    let _exclusive = sync_point::exclusive();
    let latch = Latch::new();
    let l = latch.clone();
    sync_point::set_callback("DbInner::make_room:slowdown", move || l.signal("slowdown"));
    // The engine's background thread flushes: a flush that never ends fails the test.
    let l = latch.clone();
    watchdog(
        "writes past level 0's triggers, compactions off",
        Duration::from_secs(120),
        move || format!("slowdowns signalled: {}", l.count("slowdown")),
        move || {
            let storage: Arc<dyn Storage> = Arc::new(MemStorage::new());
            let options = Options {
                write_buffer_size: 16 * 1024,
                disable_auto_compactions: true,
                background_thread: true,
                ..Options::google().create()
            };
            assert_eq!(
                (
                    options.l0_slowdown_writes_trigger,
                    options.l0_stop_writes_trigger
                ),
                (8, 12)
            );
            let db = Db::open(storage, "db", options).unwrap();
            let value = vec![b'v'; 1000];
            // Keys in a scattered order, so that every flushed table overlaps the others
            // and stays in level 0 (a table overlapping nothing is placed deeper).
            for i in 0..400u32 {
                let k = format!("{:08}", i * 7919 % 400);
                db.put(&WriteOptions::default(), k.as_bytes(), &value)
                    .unwrap();
            }
            db.flush().unwrap();
            let p = db.properties();
            assert!(p.files_per_level[0] > 12, "past the stop trigger: {p:?}");
            assert_eq!(p.compactions, 0);
            assert_eq!(latch.count("slowdown"), 0, "a write was slowed");
            assert_eq!(db.scan().unwrap().entries, 400);
        },
    );
}
