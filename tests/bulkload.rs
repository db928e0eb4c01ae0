//! Bulk-load switches (RocksDB's seed workload: WAL off, auto-compaction off, L0 triggers
//! raised): the data is readable after a flush, survives reopen, and compacts afterwards.

use std::sync::Arc;

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
