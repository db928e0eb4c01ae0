//! Every real Bedrock world in ../shared/worlds reads back exactly as Mojang's LevelDB reads
//! it: scan figures, point reads, reverse iteration, and seeks.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::SystemTime;

use common::{worlds, Rng};
use strata::{Db, Options, ReadOptions};

fn open(world: &common::World) -> Db {
    Db::open_path(&world.db_path(), Options::default().read_only())
        .unwrap_or_else(|e| panic!("{}: {e}", world.name))
}

/// (entries forward) for a world, checked against MANIFEST.tsv.
fn forward_entries(world: &common::World, db: &Db) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    let mut out = Vec::new();
    let mut stats = strata::ScanStats::default();
    while it.valid() {
        stats.add(it.key(), it.value());
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    assert_eq!(stats, world.expected, "{}: iterator figures", world.name);
    out
}

#[test]
fn scan_reproduces_mojangs_figures_for_every_world() {
    if common::skip_without_worlds("scan_reproduces_mojangs_figures_for_every_world") {
        return;
    }
    for world in worlds() {
        let db = open(&world);
        let stats = db.scan().unwrap();
        assert_eq!(stats, world.expected, "{}", world.name);
    }
}

#[test]
fn every_key_is_found_by_get_with_its_value() {
    if common::skip_without_worlds("every_key_is_found_by_get_with_its_value") {
        return;
    }
    for world in worlds() {
        let db = open(&world);
        let entries = forward_entries(&world, &db);
        let opts = ReadOptions::default();
        for (k, v) in &entries {
            let got = db.get(&opts, k).unwrap();
            assert_eq!(got.as_ref(), Some(v), "{}: get {:x?}", world.name, k);
        }
    }
}

#[test]
fn reverse_iteration_is_the_exact_reverse() {
    if common::skip_without_worlds("reverse_iteration_is_the_exact_reverse") {
        return;
    }
    for world in worlds() {
        let db = open(&world);
        let forward = forward_entries(&world, &db);
        let mut it = db.iter(&ReadOptions::default());
        it.seek_to_last();
        let mut backward = Vec::with_capacity(forward.len());
        while it.valid() {
            backward.push((it.key().to_vec(), it.value().to_vec()));
            it.prev();
        }
        it.status().unwrap();
        backward.reverse();
        assert_eq!(backward.len(), forward.len(), "{}", world.name);
        assert!(backward == forward, "{}: reverse differs", world.name);
    }
}

#[test]
fn seeks_to_random_keys_land_on_the_right_entry() {
    if common::skip_without_worlds("seeks_to_random_keys_land_on_the_right_entry") {
        return;
    }
    for world in worlds() {
        let db = open(&world);
        let entries = forward_entries(&world, &db);
        let keys: Vec<&[u8]> = entries.iter().map(|(k, _)| &k[..]).collect();
        let mut rng = Rng(0x5eed ^ world.expected.crc32c as u64);
        let mut it = db.iter(&ReadOptions::default());
        let mut present = 0;
        for i in 0..1000 {
            // Half present keys, half absent ones near or between them.
            let target: Vec<u8> = if i % 2 == 0 {
                keys[rng.below(keys.len() as u64) as usize].to_vec()
            } else {
                let mut k = keys[rng.below(keys.len() as u64) as usize].to_vec();
                match rng.below(4) {
                    0 => k.push(rng.next() as u8),
                    1 => {
                        k.pop();
                    }
                    2 => {
                        let j = rng.below(k.len().max(1) as u64) as usize;
                        if let Some(b) = k.get_mut(j) {
                            *b = b.wrapping_add(1);
                        }
                    }
                    _ => k = (0..rng.below(16)).map(|_| rng.next() as u8).collect(),
                }
                k
            };
            it.seek(&target);
            let pos = keys.partition_point(|k| *k < &target[..]);
            if pos == keys.len() {
                assert!(!it.valid(), "{}: seek past the end", world.name);
                continue;
            }
            assert!(it.valid(), "{}", world.name);
            assert_eq!(it.key(), keys[pos], "{}: seek {:x?}", world.name, target);
            assert_eq!(it.value(), &entries[pos].1[..]);
            if keys[pos] == &target[..] {
                present += 1;
            }
            // Changing direction after a seek stays consistent.
            if rng.below(2) == 0 {
                it.prev();
                if pos == 0 {
                    assert!(!it.valid());
                } else {
                    assert_eq!(it.key(), keys[pos - 1], "{}: prev after seek", world.name);
                    it.next();
                    assert_eq!(it.key(), keys[pos], "{}: next after prev", world.name);
                }
            } else {
                it.next();
                if pos + 1 == keys.len() {
                    assert!(!it.valid());
                } else {
                    assert_eq!(it.key(), keys[pos + 1], "{}: next after seek", world.name);
                    it.prev();
                    assert_eq!(it.key(), keys[pos], "{}: prev after next", world.name);
                }
            }
        }
        assert!(present >= 500, "{}: {present} present seeks", world.name);
        it.status().unwrap();
    }
}

#[test]
fn compression_ids_seen_match_the_manifest() {
    if common::skip_without_worlds("compression_ids_seen_match_the_manifest") {
        return;
    }
    for world in worlds() {
        let db = open(&world);
        let mut ids = BTreeMap::new();
        for (_, f) in db.version().all_files() {
            for (id, n) in db.table_stats(f).unwrap().compression_ids {
                *ids.entry(id).or_insert(0u64) += n;
            }
        }
        let seen: Vec<String> = ids.keys().map(|i| i.to_string()).collect();
        let seen = if seen.is_empty() {
            "-".to_string()
        } else {
            seen.join(",")
        };
        assert_eq!(seen, world.compression_ids, "{}", world.name);
        db.verify().unwrap();
    }
}

fn fingerprint(dir: &Path) -> Vec<(String, u64, SystemTime, u32)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let meta = e.metadata().unwrap();
            let data = std::fs::read(e.path()).unwrap_or_default();
            (
                e.file_name().into_string().unwrap(),
                meta.len(),
                meta.modified().unwrap(),
                crc32c::crc32c(&data),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn read_only_open_changes_nothing_in_the_folder() {
    if common::skip_without_worlds("read_only_open_changes_nothing_in_the_folder") {
        return;
    }
    for world in worlds() {
        // Work on a copy so the check cannot be fooled by permissions of the shared data.
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("db");
        common::copy_dir(&world.db_dir(), &dir);
        let before = fingerprint(&dir);
        {
            let db = Db::open_path(dir.to_str().unwrap(), Options::default().read_only()).unwrap();
            assert_eq!(db.scan().unwrap(), world.expected);
            db.verify().unwrap();
            let _ = db.get(&ReadOptions::default(), b"~local_player").unwrap();
        }
        assert_eq!(fingerprint(&dir), before, "{}", world.name);
    }
}
