//! Regression: recovery after a crash must yield a prefix of the write history even when no
//! write was synced. Syncing the old log lazily (only before the first *synced* write to the
//! new log, to save an fdatasync per switch) was tried twice without more; the soak test then
//! found states that were no prefix within minutes: the page cache may write the new log back
//! before the old one, so a crash can keep later writes (in the new log) while losing earlier
//! ones (the old log's unsynced tail). Here `FaultStorage` models exactly that reordering: a
//! torn append makes its whole file durable, while other files keep only what was synced.
//!
//! What makes the lazy sync safe now: each new log starts with a marker (an empty batch naming
//! the sequence that follows the old log's last record), and recovery stops at a log whose
//! marker is beyond where the previous log ended, parking it and every later log in
//! `lost/NNNNNN.log.unreplayed` (for `repair`) and reporting the gap. Without that check this test fails at the first crash after a switch.
//!
//! Every mutating storage operation of an unsynced workload crossing several memtable switches
//! is made the crash point, untorn, torn after a few bytes, and "torn" after all of its bytes
//! (the append reached the disk, its file written back whole, other files not), under both
//! folder policies: the reopened database must hold keys `0..j` exactly, for some `j`, and
//! nothing else. With the lazy sync this fails at the first append to each new log.

use std::sync::Arc;

use strata::storage::{DirPolicy, FaultStorage, MemStorage, Storage};
use strata::{Db, Options, ReadOptions, WriteOptions};

const PUTS: u32 = 120;

fn options() -> Options {
    Options {
        write_buffer_size: 4096,
        background_thread: false,
        ..Options::google().create()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

fn val(i: u32) -> Vec<u8> {
    let mut v = format!("value{i:05}-").into_bytes();
    v.resize(200, b'a' + (i % 26) as u8);
    v
}

/// Runs the workload until it finishes or the storage crashes; returns puts acknowledged.
fn workload(storage: &FaultStorage) -> u32 {
    let Ok(db) = Db::open(Arc::new(storage.clone()), "db", options()) else {
        return 0;
    };
    for i in 0..PUTS {
        if db.put(&WriteOptions::default(), &key(i), &val(i)).is_err() {
            return i;
        }
    }
    PUTS
}

/// The length `j` of the prefix `0..j` the database holds, or a description of why it is
/// no prefix.
fn prefix_len(db: &Db) -> Result<u32, String> {
    let mut present = Vec::new();
    for i in 0..PUTS {
        match db.get(&ReadOptions::default(), &key(i)).unwrap() {
            Some(v) if v == val(i) => present.push(true),
            Some(_) => return Err(format!("key {i} has a wrong value")),
            None => present.push(false),
        }
    }
    let j = present.iter().take_while(|p| **p).count();
    if let Some(later) = present[j..].iter().position(|p| *p) {
        return Err(format!(
            "keys 0..{j} present, {j} missing, {} present",
            j + later
        ));
    }
    Ok(j as u32)
}

#[test]
fn an_unsynced_workload_recovers_a_prefix_after_a_crash_at_every_operation() {
    // A counting run: how many mutating operations, and how many memtable switches.
    let counting = FaultStorage::new(Arc::new(MemStorage::new()));
    counting.record_ops();
    assert_eq!(workload(&counting), PUTS);
    let ops = counting.ops();
    let logs = ops
        .iter()
        .filter(|o| o.path.ends_with(".log") && o.kind == strata::storage::OpKind::Create)
        .count();
    assert!(
        logs >= 5,
        "only {logs} logs: the workload must cross memtable switches"
    );
    let total = counting.counts().total();

    let mut tried = 0;
    let mut longest = 0;
    let mut gaps = 0;
    for policy in [DirPolicy::KeepEntries, DirPolicy::DropUnsyncedEntries] {
        for n in 1..=total {
            for tear in [None, Some(7), Some(usize::MAX)] {
                let storage = FaultStorage::with_policy(Arc::new(MemStorage::new()), policy);
                storage.crash_at(n, tear);
                let acknowledged = workload(&storage);
                if !storage.crashed() {
                    continue;
                }
                tried += 1;
                let image = Arc::new(storage.crash_image());
                let db = Db::open(image.clone(), "db", options())
                    .unwrap_or_else(|e| panic!("{policy:?}, crash at {n}, tear {tear:?}: {e}"));
                let info = db.recovery_info();
                if let Some(gap) = &info.gap {
                    gaps += 1;
                    assert!(gap.found > gap.expected, "{gap:?}");
                    assert_eq!(info.lost_logs[0].name, gap.log, "{info:?}");
                    for lost in &info.lost_logs {
                        // Kept, not deleted: moved into lost/ whole.
                        let path = format!("db/lost/{}.unreplayed", lost.name);
                        assert!(image.exists(&path), "{path} missing");
                        let size = image.open_random(&path).unwrap().size().unwrap();
                        assert_eq!(size, lost.bytes, "{path}");
                        assert!(!image.exists(&format!("db/{}", lost.name)));
                    }
                } else {
                    assert!(info.lost_logs.is_empty());
                }
                let j = prefix_len(&db).unwrap_or_else(|e| {
                    panic!("{policy:?}, crash at op {n}, tear {tear:?}: no prefix: {e}; {info:?}; files {:?}", image.list("db"))
                });
                // Nothing was synced, so any prefix is allowed, but never more than was written.
                assert!(j <= acknowledged + 1, "{j} > {acknowledged} + 1");
                longest = longest.max(j);
            }
        }
    }
    println!(
        "{tried} crash points over {total} operations, {logs} logs; longest prefix {longest}; \
         {gaps} recoveries stopped at a gap"
    );
    assert!(tried as u64 >= 3 * total, "{tried} of {total}");
    assert!(
        gaps > 0,
        "no crash point lost an old log's tail behind a newer log"
    );
    // Torn-whole appends make most of the history durable at the late points.
    assert!(longest >= PUTS - 25, "longest prefix {longest}");
}
