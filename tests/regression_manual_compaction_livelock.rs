//! Regression: `compact_range` right after a random fill never returned. Once the manual
//! compaction of level 0 was done, level 1 was over its size budget, so the background thread
//! rescheduled itself at once; finding the (finished) manual compaction still set, it did
//! nothing, and spun holding the state lock while the waiting `compact_range` starved.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use strata::db::WriteBatch;
use strata::storage::{MemStorage, Storage};
use strata::{Db, Options, WriteOptions};

#[test]
fn compact_range_returns_while_automatic_compaction_is_due() {
    let storage: Arc<dyn Storage> = Arc::new(MemStorage::new());
    // L0 triggers raised (Mojang's kind of setting): every flush stays in level 0, so the
    // manual compaction of level 0 puts ~30 MB into level 1, far over its 10 MiB budget, at
    // the moment it finishes.
    let options = Options {
        l0_compaction_trigger: 64,
        l0_slowdown_writes_trigger: 64,
        l0_stop_writes_trigger: 64,
        ..Options::google().create()
    };
    let db = Arc::new(Db::open(storage, "db", options).unwrap());
    // 300,000 random 16-byte keys with 100-byte values, as db_bench's fillrandom.
    let mut x: u64 = 301;
    for _ in 0..300 {
        let mut batch = WriteBatch::new();
        for _ in 0..1000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let key = format!("{:016}", (x >> 33) % 300_000);
            // Incompressible values, so the data really occupies ~30 MB.
            let value: Vec<u8> = (0..100u64)
                .map(|i| (x.wrapping_mul(i + 1).rotate_left(i as u32) >> 56) as u8)
                .collect();
            batch.put(key.as_bytes(), &value);
        }
        db.write(&WriteOptions::default(), batch).unwrap();
    }
    let before = db.properties().files_per_level;
    assert!(before[0] >= 5, "{before:?}");
    let (tx, rx) = mpsc::channel();
    let worker = db.clone();
    std::thread::spawn(move || {
        let r = worker.compact_range(None, None);
        let _ = tx.send(r.map(|_| worker.properties()));
    });
    let props = rx
        .recv_timeout(Duration::from_secs(120))
        .expect("compact_range did not return within 120 s (livelock)")
        .unwrap();
    // Everything ends in one level below 0, and every key written is there.
    let levels = props.files_per_level.clone();
    assert_eq!(levels[0], 0, "{levels:?}");
    assert_eq!(levels.iter().filter(|&&n| n > 0).count(), 1, "{levels:?}");
    let mut it = db.iter(&Default::default());
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    it.status().unwrap();
    let mut keys = std::collections::BTreeSet::new();
    let mut x: u64 = 301;
    for _ in 0..300_000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        keys.insert((x >> 33) % 300_000);
    }
    assert_eq!(n, keys.len());
}
