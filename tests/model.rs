//! The whole engine against a `BTreeMap` model: random puts, deletes, batches, snapshots,
//! iterators both ways, flushes, compactions and reopens, on the in-memory storage with a tiny
//! write buffer so every layer is exercised. The seed is printed so a failure reproduces
//! (`STRATA_SEED=N cargo test --test model`).

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::Rng;
use strata::db::WriteBatch;
use strata::storage::{MemStorage, Storage};
use strata::{Db, Options, ReadOptions, WriteOptions};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn seed() -> u64 {
    let s = std::env::var("STRATA_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5742_4154_4100_0001);
    println!("STRATA_SEED={s}");
    s
}

fn options(background: bool) -> Options {
    Options {
        write_buffer_size: 32 * 1024,
        max_file_size: 64 * 1024,
        block_size: 1024,
        background_thread: background,
        ..Options::google().create()
    }
}

fn key(rng: &mut Rng) -> Vec<u8> {
    let n = rng.below(3000);
    let mut k = format!("k{n:05}").into_bytes();
    if rng.below(10) == 0 {
        k.push(rng.next() as u8);
    }
    k
}

fn value(rng: &mut Rng, i: u64) -> Vec<u8> {
    let len = match rng.below(20) {
        0 => 0,
        1 => 2000 + rng.below(3000) as usize,
        _ => rng.below(120) as usize,
    };
    let mut v = format!("v{i}:").into_bytes();
    v.resize(len.max(v.len()), b'x' + (i % 3) as u8);
    v
}

fn check_all(db: &Db, model: &Model, snapshot: Option<u64>, rng: &mut Rng, what: &str) {
    let opts = ReadOptions {
        snapshot,
        ..ReadOptions::default()
    };
    let mut it = db.iter(&opts);
    it.seek_to_first();
    let mut got = Vec::with_capacity(model.len());
    while it.valid() {
        got.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    let want: Vec<(Vec<u8>, Vec<u8>)> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(got.len(), want.len(), "{what}: entry count");
    assert!(got == want, "{what}: forward contents differ");
    it.seek_to_last();
    let mut back = Vec::with_capacity(model.len());
    while it.valid() {
        back.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    back.reverse();
    assert!(back == want, "{what}: backward contents differ");
    // One buffer for every get_into, holding the last value found (or stale bytes).
    let mut buf = b"stale bytes, longer than some values".to_vec();
    for _ in 0..50 {
        let k = key(rng);
        assert_eq!(
            db.get(&opts, &k).unwrap().as_ref(),
            model.get(&k),
            "{what}: get {k:?}"
        );
        let found = db.get_into(&opts, &k, &mut buf).unwrap();
        assert_eq!(
            found.then_some(&buf),
            model.get(&k),
            "{what}: get_into {k:?}"
        );
        assert!(
            found || buf.is_empty(),
            "{what}: get_into {k:?} left {buf:?}"
        );
        it.seek(&k);
        match model.range(k.clone()..).next() {
            Some((mk, mv)) => {
                assert!(it.valid(), "{what}: seek {k:?}");
                assert_eq!(
                    (it.key(), it.value()),
                    (&mk[..], &mv[..]),
                    "{what}: seek {k:?}"
                );
            }
            None => assert!(!it.valid(), "{what}: seek {k:?} past the end"),
        }
    }
}

fn run(background: bool, ops: u64) {
    let mut rng = Rng(seed() ^ background as u64);
    let storage = MemStorage::new();
    let shared: Arc<dyn Storage> = Arc::new(storage.clone());
    let mut db = Db::open(shared.clone(), "db", options(background)).unwrap();
    let mut model = Model::new();
    let mut snapshots: Vec<(strata::db::Snapshot, Model)> = Vec::new();
    let w = WriteOptions::default();
    let (mut flushes, mut compactions, mut reopens) = (0, 0, 0);
    for i in 0..ops {
        match rng.below(1000) / 10 {
            0..=54 => {
                let (k, v) = (key(&mut rng), value(&mut rng, i));
                db.put(&w, &k, &v).unwrap();
                model.insert(k, v);
            }
            55..=74 => {
                let k = key(&mut rng);
                db.delete(&w, &k).unwrap();
                model.remove(&k);
            }
            75..=89 => {
                let mut b = WriteBatch::new();
                for _ in 0..1 + rng.below(20) {
                    let k = key(&mut rng);
                    if rng.below(3) == 0 {
                        b.delete(&k);
                        model.remove(&k);
                    } else {
                        let v = value(&mut rng, i);
                        b.put(&k, &v);
                        model.insert(k, v);
                    }
                }
                db.write(&w, b).unwrap();
            }
            90..=94 => {
                let k = key(&mut rng);
                assert_eq!(
                    db.get(&ReadOptions::default(), &k).unwrap().as_ref(),
                    model.get(&k),
                    "op {i}: get"
                );
            }
            95 => {
                if snapshots.len() < 4 {
                    snapshots.push((db.snapshot(), model.clone()));
                } else {
                    let (s, m) = snapshots.remove(rng.below(4) as usize);
                    check_all(
                        &db,
                        &m,
                        Some(s.sequence()),
                        &mut rng,
                        &format!("op {i}: snapshot"),
                    );
                }
            }
            96 => {
                let a = key(&mut rng);
                let b = key(&mut rng);
                let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
                db.compact_range(Some(&lo), Some(&hi)).unwrap();
            }
            97 if rng.below(4) == 0 => {
                check_all(&db, &model, None, &mut rng, &format!("op {i}: full check"))
            }
            98 if rng.below(4) == 0 => {
                // Reopen: snapshots die with the handle.
                snapshots.clear();
                let p = db.properties();
                (flushes, compactions) = (flushes + p.flushes, compactions + p.compactions);
                reopens += 1;
                drop(db);
                db = Db::open(shared.clone(), "db", options(background)).unwrap();
                check_all(
                    &db,
                    &model,
                    None,
                    &mut rng,
                    &format!("op {i}: after reopen"),
                );
            }
            _ => {
                // The iterator's view is fixed when it is created.
                let mut it = db.iter(&ReadOptions::default());
                let k = key(&mut rng);
                db.put(&w, &k, b"later").unwrap();
                it.seek_to_first();
                let mut n = 0;
                while it.valid() {
                    n += 1;
                    it.next();
                }
                assert_eq!(n, model.len(), "op {i}: iterator saw a later write");
                model.insert(k, b"later".to_vec());
            }
        }
    }
    for (s, m) in &snapshots {
        check_all(&db, m, Some(s.sequence()), &mut rng, "final snapshot");
    }
    snapshots.clear();
    db.compact_range(None, None).unwrap();
    check_all(&db, &model, None, &mut rng, "after full compaction");
    let props = db.properties();
    let (flushes, compactions) = (flushes + props.flushes, compactions + props.compactions);
    println!(
        "{ops} ops, {reopens} reopens, {flushes} flushes, {compactions} compactions; {props:?}"
    );
    assert!(reopens > 10, "{reopens} reopens");
    assert!(flushes > 100, "{flushes} flushes");
    assert!(compactions > 20, "{compactions} compactions");
    db.verify().unwrap();
    drop(db);
    // Obsolete files were removed: only live tables, one log, one MANIFEST remain.
    let names = storage.list("db").unwrap();
    let manifests = names.iter().filter(|n| n.starts_with("MANIFEST-")).count();
    assert_eq!(manifests, 1, "{names:?}");
    let db = Db::open(shared, "db", options(background).read_only()).unwrap();
    let live: usize = db.version().all_files().count();
    let tables = names.iter().filter(|n| n.ends_with(".ldb")).count();
    assert_eq!(live, tables, "{names:?}");
    check_all(&db, &model, None, &mut rng, "read-only reopen");
}

#[test]
fn model_check_with_background_thread() {
    run(true, 120_000);
}

#[test]
fn model_check_inline_compaction() {
    run(false, 100_000);
}
