//! Regression: a stepped range compaction (`Db::compact_range_steps`, what the streamed
//! `.mcworld` export runs) dropped before it finished left its request registered, so every
//! later `compact_range` waited for it forever. Dropping it now withdraws the request.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use strata::db::WriteBatch;
use strata::storage::{MemStorage, Storage};
use strata::{Db, Options, WriteOptions};

#[test]
fn compact_range_returns_after_a_stepped_compaction_was_dropped_half_way() {
    let storage: Arc<dyn Storage> = Arc::new(MemStorage::new());
    let options = Options {
        write_buffer_size: 256 << 10,
        l0_compaction_trigger: 64,
        l0_slowdown_writes_trigger: 64,
        l0_stop_writes_trigger: 64,
        ..Options::google().create()
    };
    let db = Arc::new(Db::open(storage, "db", options).unwrap());
    // About 4 MB in a dozen level-0 tables: several steps of compaction work.
    let mut x: u64 = 7;
    for _ in 0..40 {
        let mut batch = WriteBatch::new();
        for _ in 0..1000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let key = format!("{:016}", (x >> 33) % 100_000);
            let value: Vec<u8> = (0..100u64)
                .map(|i| (x.wrapping_mul(i + 1).rotate_left(i as u32) >> 56) as u8)
                .collect();
            batch.put(key.as_bytes(), &value);
        }
        db.write(&WriteOptions::default(), batch).unwrap();
    }
    let mut steps = db.compact_range_steps(None, None).unwrap();
    // The flush, then one compaction step: the request is registered and not finished.
    assert!(!db.compact_step(&mut steps).unwrap());
    assert!(!db.compact_step(&mut steps).unwrap());
    drop(steps);
    // Watchdog: the full compaction must return (it hung before the fix).
    let (tx, rx) = mpsc::channel();
    let d = db.clone();
    std::thread::spawn(move || {
        let r = d.compact_range(None, None);
        let _ = tx.send(r);
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(r) => r.unwrap(),
        Err(_) => {
            panic!("compact_range did not return within 60 s after a dropped stepped compaction")
        }
    }
    let files: Vec<usize> = db.properties().files_per_level;
    assert_eq!(files[0], 0, "level 0 compacted away: {files:?}");
}
