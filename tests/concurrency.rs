//! Many native threads on one `Db` (background thread on, tiny write buffer, so flushes and
//! compactions run under the traffic), checked against models:
//! - owner threads each own a disjoint key range and a `BTreeMap` model of it: every `get`,
//!   every iterator over the range and every read through a snapshot taken earlier must equal
//!   the model exactly (no other thread touches those keys);
//! - group writers set all `GROUP_KEYS` keys of a group to one value (or delete them all) in a
//!   single batch; reader threads check through iterators, snapshots and snapshot `get`s that
//!   every group is seen entirely or not at all, with one value;
//! - after the threads join, and again after a reopen, the database equals the union of the
//!   models exactly and passes `verify`.
//!
//! Forced memtable switches (`flush`) and manual compactions are interleaved by several owners,
//! so writers queue behind switches (the write-leader rule). A failing thread fails the test at
//! once: a thread that panics sets `failed` (`FailOnPanic`) and every loop stops on it; readers
//! also stop when the writers have all been joined, whichever way they ended; the body runs
//! under a watchdog that reports the operations done per thread if it stalls.
//!
//! `STRATA_STRESS=1` multiplies the operations by 10 and the threads by 2 (run it pinned to one
//! core, `scripts/stress.sh`, for an 8:1 or higher oversubscription).

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::watchdog::{watchdog, FailOnPanic};
use common::Rng;
use strata::db::WriteBatch;
use strata::storage::{MemStorage, Storage};
use strata::{Db, Options, ReadOptions, WriteOptions};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

const OWNER_KEYS: u64 = 300;
const GROUPS: u64 = 40;
const GROUP_KEYS: u64 = 4;

/// Thread and operation counts (10x the operations, 2x the threads with `STRATA_STRESS=1`).
#[derive(Clone, Copy, Debug)]
struct Scale {
    owners: u64,
    owner_ops: u64,
    group_writers: u64,
    group_ops: u64,
    readers: u64,
}

impl Scale {
    fn from_env() -> Scale {
        let stress = std::env::var("STRATA_STRESS").is_ok_and(|v| v == "1");
        let (threads, ops) = if stress { (2, 10) } else { (1, 1) };
        Scale {
            owners: 4 * threads,
            owner_ops: 10_000 * ops,
            group_writers: 2 * threads,
            group_ops: 6_000 * ops,
            readers: 2 * threads,
        }
    }

    fn threads(&self) -> u64 {
        self.owners + self.group_writers + self.readers
    }
}

fn options() -> Options {
    Options {
        write_buffer_size: 16 * 1024,
        max_file_size: 32 * 1024,
        block_size: 1024,
        background_thread: true,
        ..Options::google().create()
    }
}

fn owner_key(t: u64, n: u64) -> Vec<u8> {
    format!("o{t}-{n:04}").into_bytes()
}

fn owner_value(t: u64, op: u64, rng: &mut Rng) -> Vec<u8> {
    let mut v = format!("o{t}:{op}:").into_bytes();
    v.resize(20 + rng.below(200) as usize, b'a' + (op % 26) as u8);
    v
}

fn group_key(g: u64, j: u64) -> Vec<u8> {
    format!("g{g:03}-{j}").into_bytes()
}

fn group_value(writer: u64, op: u64) -> Vec<u8> {
    let mut v = format!("w{writer}:{op}:").into_bytes();
    v.resize(60, b'x');
    v
}

/// Every entry with `prefix`, through an iterator (forward; or backward and reversed).
fn range(db: &Db, options: &ReadOptions, prefix: &[u8], backward: bool) -> Model {
    let mut it = db.iter(options);
    let mut out = Model::new();
    if backward {
        let mut end = prefix.to_vec();
        *end.last_mut().unwrap() += 1;
        it.seek(&end);
        if it.valid() {
            it.prev();
        } else {
            it.seek_to_last();
        }
        while it.valid() && it.key().starts_with(prefix) {
            out.insert(it.key().to_vec(), it.value().to_vec());
            it.prev();
        }
    } else {
        it.seek(prefix);
        while it.valid() && it.key().starts_with(prefix) {
            out.insert(it.key().to_vec(), it.value().to_vec());
            it.next();
        }
    }
    it.status().unwrap();
    out
}

/// Checks that every group in `view` is whole (all keys, one value). Returns the groups seen.
fn check_groups(view: &Model, what: &str) -> u64 {
    let mut by_group: BTreeMap<&[u8], Vec<&Vec<u8>>> = BTreeMap::new();
    for (k, v) in view {
        by_group.entry(&k[..4]).or_default().push(v);
    }
    for (g, values) in &by_group {
        assert_eq!(
            values.len() as u64,
            GROUP_KEYS,
            "{what}: group {} partly visible",
            String::from_utf8_lossy(g)
        );
        assert!(
            values.iter().all(|v| *v == values[0]),
            "{what}: group {} mixes batches",
            String::from_utf8_lossy(g)
        );
    }
    by_group.len() as u64
}

#[derive(Default)]
struct Counters {
    ops: AtomicU64,
    /// Operations done by each owner, then each group writer, then each reader (views).
    per_thread: Vec<AtomicU64>,
    flushes: AtomicU64,
    gets_checked: AtomicU64,
    ranges_checked: AtomicU64,
    snapshot_checks: AtomicU64,
    group_views: AtomicU64,
}

impl Counters {
    fn new(threads: u64) -> Counters {
        Counters {
            per_thread: (0..threads).map(|_| AtomicU64::new(0)).collect(),
            ..Counters::default()
        }
    }

    fn progress(&self) -> String {
        let per: Vec<u64> = self
            .per_thread
            .iter()
            .map(|n| n.load(Ordering::Relaxed))
            .collect();
        format!(
            "{} operations, {} flushes, per thread {per:?}",
            self.ops.load(Ordering::Relaxed),
            self.flushes.load(Ordering::Relaxed)
        )
    }
}

fn owner(db: &Db, t: u64, ops: u64, stop: &AtomicBool, c: &Counters) -> Model {
    let _fail = FailOnPanic(stop);
    let mut rng = Rng(0xC0_0000 + t);
    let mut model = Model::new();
    let mut snaps: Vec<(strata::db::Snapshot, Model)> = Vec::new();
    let prefix = format!("o{t}-").into_bytes();
    for op in 0..ops {
        if stop.load(Ordering::Relaxed) {
            break; // another thread failed
        }
        let sync = WriteOptions {
            sync: rng.below(20) == 0,
            ..WriteOptions::default()
        };
        let k = owner_key(t, rng.below(OWNER_KEYS));
        match rng.below(100) {
            0..=39 => {
                let v = owner_value(t, op, &mut rng);
                db.put(&sync, &k, &v).unwrap();
                model.insert(k, v);
            }
            40..=49 => {
                db.delete(&sync, &k).unwrap();
                model.remove(&k);
            }
            50..=64 => {
                let mut b = WriteBatch::new();
                for _ in 0..1 + rng.below(8) {
                    let k = owner_key(t, rng.below(OWNER_KEYS));
                    if rng.below(4) == 0 {
                        b.delete(&k);
                        model.remove(&k);
                    } else {
                        let v = owner_value(t, op, &mut rng);
                        b.put(&k, &v);
                        model.insert(k, v);
                    }
                }
                db.write(&sync, b).unwrap();
            }
            65..=84 => {
                let got = db.get(&ReadOptions::default(), &k).unwrap();
                assert_eq!(got.as_ref(), model.get(&k), "owner {t} op {op}: get");
                c.gets_checked.fetch_add(1, Ordering::Relaxed);
            }
            85..=92 => {
                let backward = rng.below(2) == 0;
                let got = range(db, &ReadOptions::default(), &prefix, backward);
                assert!(
                    got == model,
                    "owner {t} op {op}: range (backward {backward})"
                );
                c.ranges_checked.fetch_add(1, Ordering::Relaxed);
            }
            _ => {
                if snaps.len() < 3 && rng.below(2) == 0 {
                    snaps.push((db.snapshot(), model.clone()));
                } else if !snaps.is_empty() {
                    let (s, m) = snaps.remove(rng.below(snaps.len() as u64) as usize);
                    let ro = ReadOptions {
                        snapshot: Some(s.sequence()),
                        ..ReadOptions::default()
                    };
                    assert!(
                        range(db, &ro, &prefix, false) == m,
                        "owner {t} op {op}: snapshot"
                    );
                    let probe = owner_key(t, rng.below(OWNER_KEYS));
                    assert_eq!(db.get(&ro, &probe).unwrap().as_ref(), m.get(&probe));
                    c.snapshot_checks.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        if t == 0 && op % 2_500 == 2_499 {
            db.compact_range(None, None).unwrap();
        }
        // Forced memtable switches from several threads while the others write: writers queue
        // behind a switch, which goes alone (the regression behind the write-leader rule).
        if t % 2 == 1 && op % 700 == 350 {
            db.flush().unwrap();
            c.flushes.fetch_add(1, Ordering::Relaxed);
        }
        c.ops.fetch_add(1, Ordering::Relaxed);
        c.per_thread[t as usize].fetch_add(1, Ordering::Relaxed);
    }
    model
}

fn group_writer(db: &Db, w: u64, sc: Scale, stop: &AtomicBool, c: &Counters) -> Model {
    let _fail = FailOnPanic(stop);
    let mut rng = Rng(0x6_0000 + w);
    let mut model = Model::new();
    for op in 0..sc.group_ops {
        if stop.load(Ordering::Relaxed) {
            break; // another thread failed
        }
        // Writer w owns the groups g with g % group_writers == w.
        let g = rng.below(GROUPS / sc.group_writers) * sc.group_writers + w;
        let mut b = WriteBatch::new();
        let delete = rng.below(5) == 0;
        let v = group_value(w, op);
        for j in 0..GROUP_KEYS {
            let k = group_key(g, j);
            if delete {
                b.delete(&k);
                model.remove(&k);
            } else {
                b.put(&k, &v);
                model.insert(k, v.clone());
            }
        }
        let sync = WriteOptions {
            sync: rng.below(10) == 0,
            ..WriteOptions::default()
        };
        db.write(&sync, b).unwrap();
        c.ops.fetch_add(1, Ordering::Relaxed);
        c.per_thread[(sc.owners + w) as usize].fetch_add(1, Ordering::Relaxed);
    }
    model
}

fn reader(db: &Db, r: u64, slot: usize, stop: [&AtomicBool; 2], c: &Counters) {
    let [writers_done, failed] = stop;
    let _fail = FailOnPanic(failed);
    let mut rng = Rng(0xEAD_0000 + r);
    let mut i = 0u64;
    // At least 20 views each, unless a thread failed (then stop at once).
    while !failed.load(Ordering::Relaxed) && (!writers_done.load(Ordering::Relaxed) || i < 20) {
        let what = format!("reader {r} view {i}");
        match rng.below(3) {
            0 => {
                let view = range(db, &ReadOptions::default(), b"g", rng.below(2) == 0);
                check_groups(&view, &what);
            }
            1 => {
                let s = db.snapshot();
                let ro = ReadOptions {
                    snapshot: Some(s.sequence()),
                    ..ReadOptions::default()
                };
                let a = range(db, &ro, b"g", false);
                check_groups(&a, &what);
                // The same snapshot read again, backwards, after more writes: identical.
                std::thread::yield_now();
                assert!(range(db, &ro, b"g", true) == a, "{what}: snapshot moved");
            }
            _ => {
                let s = db.snapshot();
                let ro = ReadOptions {
                    snapshot: Some(s.sequence()),
                    ..ReadOptions::default()
                };
                let g = rng.below(GROUPS);
                let vals: Vec<_> = (0..GROUP_KEYS)
                    .map(|j| db.get(&ro, &group_key(g, j)).unwrap())
                    .collect();
                assert!(
                    vals.iter().all(|v| *v == vals[0]),
                    "{what}: gets of group {g}"
                );
            }
        }
        c.group_views.fetch_add(1, Ordering::Relaxed);
        c.per_thread[slot].fetch_add(1, Ordering::Relaxed);
        i += 1;
    }
}

fn check_final(db: &Db, want: &Model, what: &str) {
    let all = range(db, &ReadOptions::default(), b"", false);
    // (An empty prefix matches everything.)
    assert_eq!(all.len(), want.len(), "{what}: entry count");
    assert!(all == *want, "{what}: contents differ from the models");
    for (k, v) in want.iter().step_by(37) {
        assert_eq!(
            db.get(&ReadOptions::default(), k).unwrap().as_ref(),
            Some(v)
        );
    }
    db.verify().unwrap();
}

#[test]
fn threads_on_one_db_agree_with_their_models() {
    let sc = Scale::from_env();
    let c = Arc::new(Counters::new(sc.threads()));
    let progress = {
        let c = c.clone();
        move || c.progress()
    };
    let limit = Duration::from_secs(if sc.owner_ops > 10_000 { 1800 } else { 300 });
    watchdog("threads on one db", limit, progress, move || run(sc, &c));
}

fn run(sc: Scale, c: &Counters) {
    let start = Instant::now();
    let mem = MemStorage::new();
    let storage: Arc<dyn Storage> = Arc::new(mem.clone());
    let db = Db::open(storage.clone(), "db", options()).unwrap();
    // Writers stop early when any thread fails; readers stop when every writer is done.
    let failed = AtomicBool::new(false);
    let writers_done = AtomicBool::new(false);
    let mut want = Model::new();
    std::thread::scope(|s| {
        let owners: Vec<_> = (0..sc.owners)
            .map(|t| {
                s.spawn({
                    let (db, failed) = (&db, &failed);
                    move || owner(db, t, sc.owner_ops, failed, c)
                })
            })
            .collect();
        let groups: Vec<_> = (0..sc.group_writers)
            .map(|w| {
                s.spawn({
                    let (db, failed) = (&db, &failed);
                    move || group_writer(db, w, sc, failed, c)
                })
            })
            .collect();
        let readers: Vec<_> = (0..sc.readers)
            .map(|r| {
                let slot = (sc.owners + sc.group_writers + r) as usize;
                s.spawn({
                    let (db, writers_done, failed) = (&db, &writers_done, &failed);
                    move || reader(db, r, slot, [writers_done, failed], c)
                })
            })
            .collect();
        // Whatever way a writer ends, the readers are told to stop once all writers ended;
        // a writer's panic is re-raised only after every thread has been joined.
        let mut panicked = None;
        for h in owners.into_iter().chain(groups) {
            match h.join() {
                Ok(m) => want.extend(m),
                Err(p) => {
                    failed.store(true, Ordering::SeqCst);
                    panicked.get_or_insert(p);
                }
            }
        }
        writers_done.store(true, Ordering::SeqCst);
        for h in readers {
            if let Err(p) = h.join() {
                panicked.get_or_insert(p);
            }
        }
        if let Some(p) = panicked {
            std::panic::resume_unwind(p);
        }
    });
    let ops = c.ops.load(Ordering::Relaxed);
    assert_eq!(
        ops,
        sc.owners * sc.owner_ops + sc.group_writers * sc.group_ops
    );
    check_final(&db, &want, "after join");
    let props = db.properties();
    drop(db);
    let db = Db::open(storage, "db", options()).unwrap();
    check_final(&db, &want, "after reopen");
    println!(
        "{} threads, {ops} operations ({} forced switches), {} gets, {} ranges, {} snapshot \
         checks, {} group views; {} entries; {:?}; {:.1?}",
        sc.threads(),
        c.flushes.load(Ordering::Relaxed),
        c.gets_checked.load(Ordering::Relaxed),
        c.ranges_checked.load(Ordering::Relaxed),
        c.snapshot_checks.load(Ordering::Relaxed),
        c.group_views.load(Ordering::Relaxed),
        want.len(),
        props,
        start.elapsed()
    );
    assert!(c.group_views.load(Ordering::Relaxed) >= sc.readers * 20);
    // Every owner with an odd number forced a switch every 700 operations.
    assert_eq!(
        c.flushes.load(Ordering::Relaxed),
        (sc.owners / 2) * (sc.owner_ops / 700 + u64::from(sc.owner_ops % 700 > 350))
    );
}
