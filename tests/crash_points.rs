//! Crash-point enumeration (after LevelDB's fault_injection_test): a deterministic workload —
//! multi-key batches (puts and deletes), some synced, flushes, compactions and reopens, with a
//! small write buffer so the engine flushes and compacts on its own — runs once on a
//! `FaultStorage` to count its storage operations, then again crashing at each one (and, for an
//! append, once more with the append torn in half). The image a power loss would leave must:
//! open; pass `Db::verify`; show every batch entirely or not at all (each batch writes every
//! key of one group with one tag); and equal the state after some prefix of the attempted
//! writes that includes every write acknowledged as durable (a synced write, or any write
//! before a successful flush, compaction or reopen).
//!
//! Both folder policies run: entries durable at once, and entries durable only at `sync_dir`.
//! `STRATA_CRASH_POINTS_ALL=1` runs a workload four times longer.

mod common;
mod fault_workload;

use std::sync::Arc;
use std::time::Instant;

use fault_workload::{check, options, plan, run, states, Step};
use strata::storage::{DirPolicy, FaultStorage, MemStorage, OpKind};
use strata::{Db, Options, ReadOptions, WriteOptions};

/// What one policy's enumeration saw.
#[derive(Debug, Default, PartialEq, Eq)]
struct Figures {
    /// Storage operations of the workload.
    ops: u64,
    /// Crash points tried (each operation, plus a torn variant of each append).
    tried: u64,
    /// Crash points per kind of the operation crashed at: create, append, sync, rename,
    /// remove, sync_dir.
    by_kind: [u64; 6],
    /// Images that lost acknowledged but unsynced writes (matched a prefix short of every
    /// acknowledged write).
    lost_unsynced: u64,
}

fn kind_slot(kind: OpKind) -> usize {
    match kind {
        OpKind::Create => 0,
        OpKind::Append => 1,
        OpKind::Sync => 2,
        OpKind::Rename => 3,
        OpKind::Remove => 4,
        OpKind::SyncDir => 5,
    }
}

/// Crashes the workload at every storage operation under one folder policy.
fn enumerate(policy: DirPolicy, plan: &[Step]) -> Figures {
    let states = states(plan);
    let opts = options(false);
    let counting = FaultStorage::with_policy(Arc::new(MemStorage::new()), policy);
    counting.record_ops();
    let full = run(&counting, plan, &opts);
    assert!(
        full.finished,
        "{policy:?}: the workload runs without faults"
    );
    let ops = counting.ops();
    assert_eq!(ops.len() as u64, counting.counts().total());
    // The image after a clean run holds at least every durable write.
    check(Arc::new(counting.crash_image()), &states, &full, "no crash");

    let mut fig = Figures {
        ops: ops.len() as u64,
        ..Figures::default()
    };
    for (i, op) in ops.iter().enumerate() {
        let n = i as u64 + 1;
        let mut tears = vec![None];
        if op.kind == OpKind::Append && op.len > 1 {
            tears.push(Some(op.len / 2));
        }
        for tear in tears {
            let storage = FaultStorage::with_policy(Arc::new(MemStorage::new()), policy);
            storage.crash_at(n, tear);
            let out = run(&storage, plan, &opts);
            // (The run may still finish: a crash in a removal of an obsolete file, or in
            // compaction after the last write was acknowledged, is not reported to it.)
            assert!(
                storage.crashed(),
                "{policy:?}: op {n} is reached again: {out:?}"
            );
            let what = format!("{policy:?}, crash at op {n} ({op:?}, tear {tear:?})");
            let matched = check(Arc::new(storage.crash_image()), &states, &out, &what);
            if matched < out.acknowledged {
                fig.lost_unsynced += 1;
            }
            fig.tried += 1;
            fig.by_kind[kind_slot(op.kind)] += 1;
        }
    }
    fig
}

#[test]
fn every_crash_point_keeps_durable_writes_and_whole_batches() {
    let all = std::env::var_os("STRATA_CRASH_POINTS_ALL").is_some();
    let plan = plan(if all { 1200 } else { 300 }, 0x5eed_c4a5);
    let writes = plan
        .iter()
        .filter(|s| matches!(s, Step::Write { .. }))
        .count();
    let start = Instant::now();
    let mut total = 0;
    let mut figures = Vec::new();
    for policy in [DirPolicy::KeepEntries, DirPolicy::DropUnsyncedEntries] {
        let fig = enumerate(policy, &plan);
        println!("{policy:?}: {fig:?}");
        total += fig.tried;
        figures.push(fig);
    }
    println!(
        "{total} crash points over {} steps ({writes} writes) in {:.1?}",
        plan.len(),
        start.elapsed()
    );
    if !all {
        assert_eq!(writes, 290);
        // Each session's first switch creates its log; each flush creates the next
        // switch's, and a close removes the one left unused (`State::next_log`).
        let expected = |lost_unsynced| Figures {
            ops: 1674,
            tried: 3028,
            by_kind: [74, 2708, 135, 4, 63, 44],
            lost_unsynced,
        };
        assert_eq!(figures, vec![expected(1651), expected(1652)]);
        assert_eq!(total, 6056);
    }
}

/// The same workload with flushes and compactions on the background thread: the order of
/// storage operations varies from run to run, so crash points are sampled (every 5th of a
/// counting run's operations; a point the rerun does not reach is not counted) and the
/// invariants are checked, not exact counts.
#[test]
fn crash_points_with_the_background_thread() {
    let plan = plan(200, 0x0b6_c4a5);
    let states = states(&plan);
    let opts = options(true);
    let start = Instant::now();
    for policy in [DirPolicy::KeepEntries, DirPolicy::DropUnsyncedEntries] {
        let counting = FaultStorage::with_policy(Arc::new(MemStorage::new()), policy);
        let full = run(&counting, &plan, &opts);
        assert!(full.finished);
        let ops = counting.counts().total();
        let mut tried = 0;
        for n in (1..=ops).step_by(5) {
            let storage = FaultStorage::with_policy(Arc::new(MemStorage::new()), policy);
            storage.crash_at(n, None);
            let out = run(&storage, &plan, &opts);
            if !storage.crashed() {
                continue;
            }
            let what = format!("{policy:?}, background thread, crash at op {n}");
            check(Arc::new(storage.crash_image()), &states, &out, &what);
            tried += 1;
        }
        println!("{policy:?}, background thread: {ops} operations, {tried} crash points");
        assert!(
            tried >= ops / 5 - 20,
            "{policy:?}: {tried} of {ops} points reached"
        );
    }
    println!("background-thread crash points in {:.1?}", start.elapsed());
}

fn small_inline() -> Options {
    Options {
        write_buffer_size: 4096,
        ..options(false)
    }
}

fn get(db: &Db, k: &[u8]) -> Option<Vec<u8>> {
    db.get(&ReadOptions::default(), k).unwrap()
}

/// Regression: when the memtable was switched, the old log's unsynced tail was only
/// flushed, so a crash could keep a synced write from the new log while losing acknowledged
/// writes before it (recovery was not a prefix of the history). The old log is now synced
/// before the new one takes writes; and the new log's folder entry is synced before any
/// write to it is acknowledged.
#[test]
fn old_log_tail_is_synced_before_a_synced_write_in_the_new_log() {
    for policy in [DirPolicy::KeepEntries, DirPolicy::DropUnsyncedEntries] {
        let storage = FaultStorage::with_policy(Arc::new(MemStorage::new()), policy);
        let db = Db::open(Arc::new(storage.clone()), "db", small_inline()).unwrap();
        for i in 0..3u8 {
            db.put(&WriteOptions::default(), &[b'a', i], &[i; 1500])
                .unwrap();
        }
        assert_eq!(db.properties().flushes, 0);
        // The next write switches the memtable: creates log (+1), then the flush creates the
        // next switch's log (+2) and a table (+3), which fails, so the old memtable stays
        // unflushed.
        let creates = storage.counts().get(OpKind::Create);
        storage.fail_nth(OpKind::Create, creates + 3);
        let sync = WriteOptions {
            sync: true,
            ..Default::default()
        };
        db.put(&sync, b"b", b"synced").unwrap();
        assert_eq!(storage.counts().get(OpKind::Create), creates + 3);
        assert!(
            db.flush().is_err(),
            "{policy:?}: the failed flush is sticky"
        );
        let image = storage.crash_image();
        drop(db);
        let db = Db::open(Arc::new(image), "db", small_inline()).unwrap();
        assert_eq!(
            get(&db, b"b").as_deref(),
            Some(&b"synced"[..]),
            "{policy:?}"
        );
        for i in 0..3u8 {
            assert!(
                get(&db, &[b'a', i]) == Some(vec![i; 1500]),
                "{policy:?}: a{i} lost"
            );
        }
    }
}

/// Regression: a MANIFEST record naming a new table was synced while the table's folder
/// entry was not, so a crash that drops unsynced folder entries left a MANIFEST naming a
/// missing table (the database would not open). The folder is now synced before each
/// MANIFEST record, as LevelDB does when it syncs a MANIFEST.
#[test]
fn manifest_never_names_a_table_whose_folder_entry_may_vanish() {
    let storage =
        FaultStorage::with_policy(Arc::new(MemStorage::new()), DirPolicy::DropUnsyncedEntries);
    let db = Db::open(Arc::new(storage.clone()), "db", small_inline()).unwrap();
    for i in 0..20u8 {
        db.put(&WriteOptions::default(), &[b'k', i], &[i; 300])
            .unwrap();
    }
    db.flush().unwrap();
    // Two memtables' worth (the memtable counts the bytes it uses, not its capacity).
    assert_eq!(db.properties().files_per_level.iter().sum::<usize>(), 2);
    let image = storage.crash_image();
    drop(db);
    let db = Db::open(Arc::new(image), "db", small_inline()).unwrap();
    assert_eq!(db.verify().unwrap().entries, 20);
    for i in 0..20u8 {
        assert_eq!(get(&db, &[b'k', i]), Some(vec![i; 300]));
    }
}
