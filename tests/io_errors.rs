//! Disk full and I/O errors, injected through `FaultStorage` (no crash: the files stay as the
//! failing process left them). The error must reach the caller with its kind; a write whose
//! log sync failed is never acknowledged; after the fault clears ("the space returns") the
//! database reopens with every write known durable, whole batches, no leftover partial
//! tables, and `verify` passes.

mod common;
mod fault_workload;

use std::sync::Arc;

use fault_workload::{check, options, plan, run, states};
use strata::db::WriteBatch;
use strata::storage::{FaultStorage, MemStorage, OpKind, Storage};
use strata::{Db, ErrorKind, Options, ReadOptions, WriteOptions};

fn opts() -> Options {
    Options {
        write_buffer_size: 64 * 1024,
        ..options(false)
    }
}

const SYNC: WriteOptions = WriteOptions {
    sync: true,
    disable_wal: false,
};

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

fn val(i: u32) -> Vec<u8> {
    let mut v = format!("value{i:05}-").into_bytes();
    v.resize(200, b'0' + (i % 10) as u8);
    v
}

/// Writes `keys` with sync (each acknowledged write is durable).
fn fill(db: &Db, keys: std::ops::Range<u32>) {
    for i in keys {
        db.put(&SYNC, &key(i), &val(i)).unwrap();
    }
}

/// Table files in the folder that the current Version does not list.
fn orphan_tables(storage: &dyn Storage, db: &Db) -> Vec<String> {
    let live: Vec<u64> = db.version().all_files().map(|(_, f)| f.number).collect();
    storage
        .list("db")
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(".ldb"))
        .filter(|n| !live.contains(&n[..6].parse::<u64>().unwrap()))
        .collect()
}

/// Reopens after the fault and checks every key of `0..n` reads back exactly.
fn reopen_and_check(storage: &FaultStorage, n: u32) -> Db {
    let db = Db::open(Arc::new(storage.clone()), "db", opts()).unwrap();
    for i in 0..n {
        assert_eq!(
            db.get(&ReadOptions::default(), &key(i)).unwrap().as_deref(),
            Some(&val(i)[..]),
            "key {i}"
        );
    }
    assert_eq!(db.scan().unwrap().entries, n as u64);
    db.verify().unwrap();
    assert!(orphan_tables(storage, &db).is_empty());
    db
}

#[test]
fn disk_full_during_a_flush_reaches_the_caller_and_loses_nothing() {
    let storage = FaultStorage::new(Arc::new(MemStorage::new()));
    let db = Db::open(Arc::new(storage.clone()), "db", opts()).unwrap();
    fill(&db, 0..100);
    // 1 KiB of space: the table (about 20 KiB) cannot be written.
    storage.set_space(Some(1024));
    let e = db.flush().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoSpace, "{e}");
    assert!(e.file().unwrap().ends_with(".ldb"), "{e}");
    // The error is sticky: later writes report it rather than pretend.
    let e = db.put(&SYNC, b"late", b"x").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoSpace);
    drop(db);
    storage.set_space(None);
    let db = reopen_and_check(&storage, 100);
    assert_eq!(db.get(&ReadOptions::default(), b"late").unwrap(), None);
    assert_eq!(db.properties().files_per_level[0], 1);
}

#[test]
fn disk_full_during_a_compaction_reaches_the_caller_and_loses_nothing() {
    let storage = FaultStorage::new(Arc::new(MemStorage::new()));
    let opts = Options {
        disable_auto_compactions: true,
        ..opts()
    };
    let db = Db::open(Arc::new(storage.clone()), "db", opts.clone()).unwrap();
    // Interleaved keys: every table overlaps the others, so compaction must merge them.
    for part in 0..4 {
        for i in 0..100 {
            let k = i * 4 + part;
            db.put(&SYNC, &key(k), &val(k)).unwrap();
        }
        db.flush().unwrap();
    }
    let files = |db: &Db| db.properties().files_per_level;
    assert_eq!(files(&db), [2, 1, 1, 0, 0, 0, 0]);
    let bytes: u64 = db.properties().bytes_per_level.iter().sum();
    // Half the space the merged output needs: some output tables are written, then none fits.
    storage.set_space(Some(bytes / 2));
    let e = db.compact_range(None, None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoSpace, "{e}");
    assert!(e.file().unwrap().ends_with(".ldb"), "{e}");
    // Partial outputs were removed; the inputs are intact.
    assert!(orphan_tables(&storage, &db).is_empty());
    assert_eq!(files(&db), [2, 1, 1, 0, 0, 0, 0]);
    assert_eq!(db.scan().unwrap().entries, 400);
    drop(db);
    storage.set_space(None);
    let db = reopen_and_check(&storage, 400);
    db.compact_range(None, None).unwrap();
    assert_eq!(db.properties().files_per_level, [0, 0, 2, 0, 0, 0, 0]);
    assert_eq!(db.verify().unwrap().entries, 400);
}

#[test]
fn a_write_whose_log_sync_failed_is_not_acknowledged() {
    let storage = FaultStorage::new(Arc::new(MemStorage::new()));
    let db = Db::open(Arc::new(storage.clone()), "db", opts()).unwrap();
    fill(&db, 0..10);
    storage.fail_nth(OpKind::Sync, storage.counts().get(OpKind::Sync) + 1);
    let e = db.put(&SYNC, &key(10), &val(10)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
    // Not visible, and every later write fails (a failed fsync cannot be retried safely).
    assert_eq!(db.get(&ReadOptions::default(), &key(10)).unwrap(), None);
    assert_eq!(
        db.put(&SYNC, &key(11), &val(11)).unwrap_err().kind(),
        ErrorKind::Io
    );
    assert_eq!(db.flush().unwrap_err().kind(), ErrorKind::Io);
    // A crash now keeps the 10 acknowledged writes; the failed one is not durable.
    let image = storage.crash_image();
    drop(db);
    let db = Db::open(Arc::new(image), "db", opts()).unwrap();
    assert_eq!(db.scan().unwrap().entries, 10);
}

/// Regression: when the memtable switched, a failed sync of the old log's tail was returned to
/// the writer but not made sticky, so a retry could "succeed" (Linux may report a failed
/// fsync once and then clear it) and acknowledge writes after lost ones.
#[test]
fn a_failed_sync_of_the_old_log_at_a_memtable_switch_is_sticky() {
    let storage = FaultStorage::new(Arc::new(MemStorage::new()));
    let opts = Options {
        write_buffer_size: 4096,
        ..opts()
    };
    let db = Db::open(Arc::new(storage.clone()), "db", opts).unwrap();
    let mut i = 0;
    while db.properties().memtable_bytes <= 4096 {
        db.put(&WriteOptions::default(), &key(i), &val(i)).unwrap();
        i += 1;
    }
    assert_eq!(i, 17);
    // The next write finds the memtable full: it creates a new log, then syncs the old one.
    let syncs = storage.counts().get(OpKind::Sync);
    let creates = storage.counts().get(OpKind::Create);
    storage.fail_nth(OpKind::Sync, syncs + 1);
    let e = db.put(&SYNC, &key(19), &val(19)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
    assert_eq!(storage.counts().get(OpKind::Sync), syncs + 1);
    assert_eq!(storage.counts().get(OpKind::Create), creates + 1);
    let e = db.put(&SYNC, &key(20), &val(20)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    assert_eq!(db.get(&ReadOptions::default(), &key(20)).unwrap(), None);
}

/// A memtable switch syncs the old log (recovery must yield a prefix whatever order files are
/// written back in; tests/regression_lazy_log_sync_breaks_prefix.rs) but not the folder: the
/// new log's folder entry is synced before the first synced write to it, once, and not at all
/// by a database that never syncs.
#[test]
fn memtable_switches_sync_old_logs_and_the_folder_only_before_a_synced_write() {
    let storage = FaultStorage::new(Arc::new(MemStorage::new()));
    let opts = Options {
        write_buffer_size: 4096,
        ..opts()
    };
    let db = Db::open(Arc::new(storage.clone()), "db", opts.clone()).unwrap();
    storage.record_ops();
    let count = |ops: &[strata::storage::Op], kind: OpKind, suffix: &str| {
        ops.iter()
            .filter(|o| o.kind == kind && o.path.ends_with(suffix))
            .count()
    };
    // 200 unsynced puts of 200 bytes: a dozen switches, none syncing a log (recovery keeps a
    // prefix through the new logs' markers); the folder is synced only by the flushes' MANIFEST
    // edits, never for a log.
    for i in 0..200 {
        db.put(&WriteOptions::default(), &key(i), &val(i)).unwrap();
    }
    let ops = storage.ops();
    let logs_created = count(&ops, OpKind::Create, ".log");
    let manifest_syncs = count(&ops, OpKind::Sync, "");
    assert!(logs_created >= 10, "{logs_created} switches");
    assert_eq!(count(&ops, OpKind::Sync, ".log"), 0);
    let edits = ops
        .iter()
        .filter(|o| o.kind == OpKind::Sync && o.path.contains("MANIFEST"))
        .count();
    assert_eq!(count(&ops, OpKind::SyncDir, ""), edits, "{manifest_syncs}");

    // Fill the memtable again, then one synced put makes it switch: the old log (not flushed
    // yet) is synced first, then the folder, then the new log with the synced write. The new
    // log was made ahead by the last flush (`State::next_log`): the switch creates none.
    let before = storage.ops().len();
    let mut i = 200;
    while db.properties().memtable_bytes <= 4096 {
        db.put(&WriteOptions::default(), &key(i), &val(i)).unwrap();
        i += 1;
    }
    let ahead = common::logs_in(&storage, "db");
    db.put(&SYNC, &key(i), &val(i)).unwrap();
    let ops = storage.ops()[before..].to_vec();
    let kinds: Vec<(OpKind, &str)> = ops
        .iter()
        .filter(|o| o.kind != OpKind::Append)
        .map(|o| (o.kind, o.path.rsplit('/').next().unwrap()))
        .collect();
    let syncs: Vec<_> = kinds
        .iter()
        .take_while(|(k, p)| !(*k == OpKind::Create && p.ends_with(".log")))
        .filter(|(k, p)| *k == OpKind::SyncDir || (*k == OpKind::Sync && p.ends_with(".log")))
        .take(3)
        .collect();
    assert_eq!(syncs.len(), 3, "{kinds:?}");
    let new_log = syncs[2].1;
    // The current log and the one made ahead, which the switch took.
    assert_eq!(ahead.len(), 2, "{ahead:?}");
    assert_eq!(new_log, ahead.iter().max().unwrap(), "{kinds:?}");
    assert!(
        syncs[0].0 == OpKind::Sync && syncs[0].1 < new_log,
        "{syncs:?}"
    );
    assert_eq!(syncs[1].0, OpKind::SyncDir, "{syncs:?}");
    assert_eq!(syncs[2].0, OpKind::Sync, "{syncs:?}");
    // A second synced write to the same log syncs only that log.
    let before = storage.ops().len();
    db.put(&SYNC, &key(i + 1), &val(i + 1)).unwrap();
    let ops = storage.ops()[before..].to_vec();
    assert_eq!(count(&ops, OpKind::Sync, ".log"), 1);
    assert_eq!(count(&ops, OpKind::SyncDir, ""), 0);
    drop(db);
    let db = Db::open(Arc::new(storage.clone()), "db", opts).unwrap();
    for k in 0..=i + 1 {
        assert_eq!(
            db.get(&ReadOptions::default(), &key(k)).unwrap(),
            Some(val(k)),
            "{k}"
        );
    }
}

/// Every storage operation of the shared workload fails in turn (once, no crash); the
/// workload stops at the first error it sees. Reopening on the same files must succeed and
/// hold a prefix of the history with every durable write.
#[test]
fn every_failed_operation_leaves_a_database_that_reopens() {
    let plan = plan(300, 0x10e7_7017);
    let states = states(&plan);
    let counting = FaultStorage::new(Arc::new(MemStorage::new()));
    counting.record_ops();
    assert!(run(&counting, &plan, &options(false)).finished);
    let ops = counting.ops();
    let mut per_kind: Vec<(OpKind, u64)> = Vec::new();
    let mut seen = std::collections::HashMap::new();
    for op in &ops {
        let n = seen.entry(op.kind).or_insert(0u64);
        *n += 1;
        per_kind.push((op.kind, *n));
    }
    let mut reported = 0;
    for &(kind, n) in &per_kind {
        let storage = FaultStorage::new(Arc::new(MemStorage::new()));
        storage.fail_nth(kind, n);
        let out = run(&storage, &plan, &options(false));
        if !out.finished {
            reported += 1;
        }
        let what = format!("{kind:?} #{n} fails");
        check(Arc::new(storage.clone()), &states, &out, &what);
    }
    println!(
        "{} failure points ({} reached the workload as errors)",
        per_kind.len(),
        reported
    );
    // A failed creation of the log made ahead for the next switch is not an error: that
    // switch creates its own (`State::next_log`); so is a failed removal of it at the close.
    assert_eq!((per_kind.len(), reported), (1721, 1630));
}

#[test]
fn batches_failing_mid_log_record_are_invisible_after_reopen() {
    // A batch whose log append fails half-way (header written, payload not) must not appear.
    let storage = FaultStorage::new(Arc::new(MemStorage::new()));
    let db = Db::open(Arc::new(storage.clone()), "db", opts()).unwrap();
    fill(&db, 0..5);
    // A log record is two appends (header, payload): fail the payload.
    storage.fail_nth(OpKind::Append, storage.counts().get(OpKind::Append) + 2);
    let mut b = WriteBatch::new();
    b.put(b"x1", b"1");
    b.put(b"x2", b"2");
    assert_eq!(db.write(&SYNC, b).unwrap_err().kind(), ErrorKind::Io);
    drop(db);
    let db = reopen_and_check(&storage, 5);
    assert_eq!(db.get(&ReadOptions::default(), b"x1").unwrap(), None);
}

/// Regression: when the folder sync after renaming `CURRENT` failed, the caller removed the
/// new MANIFEST although `CURRENT` already named it; the database then never opened again
/// ("CURRENT names MANIFEST-000001, which does not exist").
#[test]
fn a_failed_folder_sync_after_current_is_renamed_keeps_the_manifest_it_names() {
    let storage = FaultStorage::new(Arc::new(MemStorage::new()));
    storage.fail_nth(OpKind::SyncDir, 1);
    let e = Db::open(Arc::new(storage.clone()), "db", opts()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
    let db = Db::open(Arc::new(storage.clone()), "db", opts()).unwrap();
    fill(&db, 0..3);
    drop(db);
    reopen_and_check(&storage, 3);
}

/// Regression: when the MANIFEST sync of a finished compaction failed, obsolete-file deletion
/// ran before the error was recorded and deleted the new tables, while the MANIFEST file
/// still held the edit naming them ("table named by the MANIFEST is missing" on reopen).
#[test]
fn outputs_of_a_compaction_whose_manifest_sync_failed_are_kept() {
    let scenario = |storage: &FaultStorage, fail_sync: Option<u64>| {
        let opts = Options {
            disable_auto_compactions: true,
            ..opts()
        };
        let db = Db::open(Arc::new(storage.clone()), "db", opts).unwrap();
        for part in 0..2 {
            for i in 0..50 {
                let k = i * 2 + part;
                db.put(&SYNC, &key(k), &val(k)).unwrap();
            }
            db.flush().unwrap();
        }
        let before = storage.counts().total();
        if let Some(n) = fail_sync {
            storage.fail_nth(OpKind::Sync, n);
        }
        (db.compact_range(None, None), before)
    };
    let counting = FaultStorage::new(Arc::new(MemStorage::new()));
    counting.record_ops();
    let (r, before) = scenario(&counting, None);
    r.unwrap();
    // The compaction's MANIFEST sync: count the syncs up to it.
    let ops = counting.ops();
    let output = (before as usize..ops.len())
        .find(|&i| ops[i].kind == OpKind::Sync && ops[i].path.ends_with(".ldb"))
        .unwrap();
    let at = (output..ops.len())
        .find(|&i| ops[i].kind == OpKind::Sync && ops[i].path.contains("MANIFEST"))
        .unwrap();
    let nth = ops[..=at].iter().filter(|o| o.kind == OpKind::Sync).count() as u64;

    let storage = FaultStorage::new(Arc::new(MemStorage::new()));
    let (r, _) = scenario(&storage, Some(nth));
    assert_eq!(r.unwrap_err().kind(), ErrorKind::Io);
    let db = reopen_and_check(&storage, 100);
    assert_eq!(db.verify().unwrap().entries, 100);
}
