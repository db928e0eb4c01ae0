//! What Strata writes opens in the real LevelDBs: Mojang's (PyPI amulet-leveldb) for the
//! Bedrock profile, Google's (PyPI plyvel) for the Google profile, with exactly the model's
//! contents. Real worlds modified by Strata read back in Mojang's LevelDB as the model says.

mod common;

use std::collections::BTreeMap;

use common::Rng;
use strata::db::WriteBatch;
use strata::{Db, Options, ReadOptions, WriteOptions};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn assert_same(got: Vec<(Vec<u8>, Vec<u8>)>, model: &Model, what: &str) {
    let want: Vec<(Vec<u8>, Vec<u8>)> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(got.len(), want.len(), "{what}: entry count");
    assert!(got == want, "{what}: contents differ");
}

/// 100,000 random puts, overwrites and deletes (some in batches) over several flushes and
/// compactions; the last writes stay in the log.
fn write_random(dir: &str, options: Options, seed: u64) -> Model {
    let db = Db::open_path(dir, options).unwrap();
    let mut rng = Rng(seed);
    let mut model = Model::new();
    let w = WriteOptions::default();
    let mut i = 0u64;
    while i < 100_000 {
        let mut b = WriteBatch::new();
        for _ in 0..1 + rng.below(8) {
            i += 1;
            let k = format!("key{:06}", rng.below(20_000)).into_bytes();
            if rng.below(4) == 0 {
                b.delete(&k);
                model.remove(&k);
            } else {
                let len = rng.below(200) as usize;
                let v: Vec<u8> = (0..len).map(|j| b"strata"[(j + i as usize) % 6]).collect();
                b.put(&k, &v);
                model.insert(k, v);
            }
        }
        db.write(&w, b).unwrap();
        if i % 40_000 < 8 {
            db.compact_range(None, None).unwrap();
        }
    }
    // A final tail that stays in the log.
    for j in 0..50 {
        let k = format!("tail{j:03}").into_bytes();
        db.put(&w, &k, b"in the log").unwrap();
        model.insert(k, b"in the log".to_vec());
    }
    let props = db.properties();
    assert!(props.flushes >= 3, "{props:?}");
    assert!(props.compactions >= 1, "{props:?}");
    drop(db);
    let log_bytes: u64 = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();
    assert!(log_bytes > 0, "the log is not empty at close");
    // The log left at close was started at a memtable switch, so it opens with Strata's switch
    // marker: one full record (header: CRC, length 12, type 1) holding an empty batch (count
    // 0). The peers below replay it.
    let log = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "log"))
        .unwrap();
    let bytes = std::fs::read(&log).unwrap();
    assert_eq!(&bytes[4..7], &[12, 0, 1], "first record: 12 bytes, full");
    assert_eq!(&bytes[7 + 8..7 + 12], &[0, 0, 0, 0], "an empty batch");
    model
}

fn small_buffers(mut o: Options) -> Options {
    o.write_buffer_size = 256 * 1024;
    o.create_if_missing = true;
    o
}

#[test]
fn bedrock_profile_opens_in_mojangs_leveldb() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("bedrock");
    let model = write_random(dir.to_str().unwrap(), small_buffers(Options::bedrock()), 11);
    // Every data block Strata wrote is raw deflate (id 4) or stored (id 0).
    let db = Db::open_path(dir.to_str().unwrap(), Options::default().read_only()).unwrap();
    for (_, f) in db.version().all_files() {
        for id in db.table_stats(f).unwrap().compression_ids.keys() {
            assert!(*id == 4 || *id == 0, "block id {id}");
        }
    }
    drop(db);
    assert_same(
        common::dump_with_peer("amulet", &dir),
        &model,
        "amulet-leveldb",
    );
}

#[test]
fn google_profile_opens_in_googles_leveldb() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("google");
    let model = write_random(dir.to_str().unwrap(), small_buffers(Options::google()), 12);
    assert_same(common::dump_with_peer("plyvel", &dir), &model, "plyvel");
}

#[test]
fn worlds_modified_by_strata_read_back_in_mojangs_leveldb() {
    if common::skip_without_worlds("worlds_modified_by_strata_read_back_in_mojangs_leveldb") {
        return;
    }
    for world in common::worlds() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("db");
        common::copy_dir(&world.db_dir(), &dir);
        let d = dir.to_str().unwrap();
        let db = Db::open_path(d, Options::bedrock()).unwrap();
        // The model starts as the world's contents.
        let mut model = Model::new();
        let mut it = db.iter(&ReadOptions::default());
        it.seek_to_first();
        while it.valid() {
            model.insert(it.key().to_vec(), it.value().to_vec());
            it.next();
        }
        it.status().unwrap();
        assert_eq!(model.len() as u64, world.expected.entries, "{}", world.name);
        let mut rng = Rng(world.expected.crc32c as u64 | 1);
        let keys: Vec<Vec<u8>> = model.keys().cloned().collect();
        let w = WriteOptions::default();
        for i in 0..300 {
            let k = keys[rng.below(keys.len() as u64) as usize].clone();
            match i % 3 {
                0 => {
                    db.delete(&w, &k).unwrap();
                    model.remove(&k);
                }
                1 => {
                    let v = format!("strata edit {i}").into_bytes();
                    db.put(&w, &k, &v).unwrap();
                    model.insert(k, v);
                }
                _ => {
                    let mut nk = k.clone();
                    nk.push(b'+');
                    db.put(&w, &nk, b"new").unwrap();
                    model.insert(nk, b"new".to_vec());
                }
            }
            if i == 150 {
                db.compact_range(None, None).unwrap();
            }
        }
        drop(db);
        assert_same(common::dump_with_peer("amulet", &dir), &model, &world.name);
    }
}
