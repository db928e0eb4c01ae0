//! The log a memtable switch takes is created ahead, by the flush before it
//! (`State::next_log`): every switch after the first finds its log ready, so the writer that
//! switches makes no system call. The log made ahead is empty; a clean close removes it, and a
//! crash image that holds it reopens with every write and nothing reported dropped.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::watchdog::watchdog;
use strata::storage::MemStorage;
use strata::util::sync_point::{self, Latch};
use strata::{Db, Options, ReadOptions, WriteOptions};

/// Log file names in `db`, oldest first.
fn logs(storage: &MemStorage) -> Vec<String> {
    common::logs_in(storage, "db")
}

/// Five rounds of 200 puts and a flush, then a crash image and a close: what each step leaves.
fn switches_take_logs_made_ahead(background_thread: bool) {
    let _exclusive = sync_point::exclusive();
    let latch = Latch::new();
    for (name, point) in [
        ("DbInner::make_room:log_ready", "log_ready"),
        ("DbInner::make_room:log_created", "log_created"),
    ] {
        let l = latch.clone();
        sync_point::set_callback(name, move || l.signal(point));
    }
    let l = latch.clone();
    watchdog(
        "switches taking logs made ahead",
        Duration::from_secs(120),
        move || {
            format!(
                "logs ready: {}, created at the switch: {}",
                l.count("log_ready"),
                l.count("log_created")
            )
        },
        move || {
            let storage = MemStorage::new();
            let options = Options {
                background_thread,
                ..Options::google().create()
            };
            let db = Db::open(Arc::new(storage.clone()), "db", options.clone()).unwrap();
            assert_eq!(logs(&storage), ["000002.log"], "the open's log");
            let key = |i: u32| format!("key{i:05}").into_bytes();
            let value = |i: u32| vec![(i % 251) as u8; 100 + i as usize % 50];
            for round in 0..5u32 {
                for i in round * 200..(round + 1) * 200 {
                    db.put(&WriteOptions::default(), &key(i), &value(i))
                        .unwrap();
                }
                db.flush().unwrap();
            }
            // Only the first switch created its log; each flush made the next one.
            assert_eq!(
                (latch.count("log_created"), latch.count("log_ready")),
                (1, 4)
            );
            // The tail that stays in the current log.
            for i in 1000..1100 {
                db.put(&WriteOptions::default(), &key(i), &value(i))
                    .unwrap();
            }
            // The current log, then the one the last flush made for the next switch: empty.
            // (With a background thread an older log may still wait for its removal, which
            // follows the flush's install: `Db::flush` returns at the install.)
            let all_logs = logs(&storage);
            assert!(all_logs.len() >= 2, "{all_logs:?}");
            let open_logs = all_logs[all_logs.len() - 2..].to_vec();
            let ahead = format!("db/{}", open_logs[1]);
            assert_eq!(storage.contents(&ahead).map(|c| c.len()), Some(0));

            // A crash now: the image replays both logs, the one made ahead as empty.
            let crash = storage.snapshot();
            drop(db);
            assert_eq!(
                logs(&storage),
                open_logs[..1],
                "a close removes the log made ahead"
            );
            for (what, image) in [("crash image", crash), ("closed", storage)] {
                let db = Db::open(Arc::new(image), "db", options.clone()).unwrap();
                let info = db.recovery_info();
                assert!(info.is_clean(), "{what}: {:?}", info.describe());
                let replayed: Vec<(String, u64)> = info
                    .logs
                    .iter()
                    .map(|l| (l.name.clone(), l.records))
                    .collect();
                // The current log: the switch marker, then 100 puts.
                let mut want = vec![(open_logs[0].clone(), 101)];
                if what == "crash image" {
                    want.push((open_logs[1].clone(), 0));
                }
                assert_eq!(replayed, want, "{what}");
                for i in 0..1100 {
                    assert_eq!(
                        db.get(&ReadOptions::default(), &key(i)).unwrap(),
                        Some(value(i)),
                        "{what}: key {i}"
                    );
                }
                assert_eq!(db.scan().unwrap().entries, 1100, "{what}");
            }
        },
    );
}

#[test]
fn switches_take_logs_made_ahead_with_a_background_thread() {
    switches_take_logs_made_ahead(true);
}

#[test]
fn switches_take_logs_made_ahead_without_a_background_thread() {
    switches_take_logs_made_ahead(false);
}

/// A flush that cannot create the next switch's log still succeeds: that switch creates its
/// log itself, as the first one does, and nothing is lost.
#[test]
fn a_log_that_could_not_be_made_ahead_is_created_at_the_switch() {
    use strata::storage::{FaultStorage, OpKind};
    let _exclusive = sync_point::exclusive();
    let latch = Latch::new();
    let l = latch.clone();
    sync_point::set_callback("DbInner::make_room:log_created", move || {
        l.signal("log_created")
    });
    let storage = FaultStorage::new(Arc::new(MemStorage::new()));
    let options = Options {
        background_thread: false,
        ..Options::google().create()
    };
    let db = Db::open(Arc::new(storage.clone()), "db", options.clone()).unwrap();
    let key = |i: u32| format!("key{i:05}").into_bytes();
    for i in 0..200 {
        db.put(&WriteOptions::default(), &key(i), b"first").unwrap();
    }
    // The flush's switch creates its log (+1); the flush creates the next switch's (+2),
    // which fails, then its table (+3).
    let creates = storage.counts().get(OpKind::Create);
    storage.fail_nth(OpKind::Create, creates + 2);
    db.flush().unwrap();
    assert_eq!(storage.counts().get(OpKind::Create), creates + 3);
    assert_eq!(latch.count("log_created"), 1);
    for i in 200..400 {
        db.put(&WriteOptions::default(), &key(i), b"second")
            .unwrap();
    }
    db.flush().unwrap();
    assert_eq!(
        latch.count("log_created"),
        2,
        "the second switch made its own log"
    );
    assert_eq!(db.properties().flushes, 2);
    drop(db);
    let db = Db::open(Arc::new(storage.crash_image()), "db", options).unwrap();
    assert!(db.recovery_info().is_clean());
    for i in 0..400 {
        let want: &[u8] = if i < 200 { b"first" } else { b"second" };
        assert_eq!(
            db.get(&ReadOptions::default(), &key(i)).unwrap().as_deref(),
            Some(want)
        );
    }
}
