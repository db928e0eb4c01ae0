//! What Strata writes opens in the real LevelDBs: Mojang's (PyPI amulet-leveldb) for the
//! Bedrock profile, Google's (PyPI plyvel) for the Google profile, with exactly the model's
//! contents. Real worlds modified by Strata read back in Mojang's LevelDB as the model says.

mod common;

use std::collections::BTreeMap;

use common::{entries, Rng};
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

/// A crash image taken after a flush holds the log that flush made ahead for the next switch
/// (`State::next_log`): empty, numbered above the current log. Google's and Mojang's LevelDB
/// replay it as nothing and read exactly the writes, those of the current log included.
#[test]
fn a_crash_image_with_the_log_made_ahead_opens_in_both_leveldbs() {
    let tmp = tempfile::tempdir().unwrap();
    for (profile, options, peer) in [
        ("google", Options::google(), "plyvel"),
        ("bedrock", Options::bedrock(), "amulet"),
    ] {
        let dir = tmp.path().join(profile);
        let db = Db::open_path(dir.to_str().unwrap(), small_buffers(options)).unwrap();
        let w = WriteOptions::default();
        let mut model = Model::new();
        for i in 0..3000u32 {
            let k = format!("key{i:05}").into_bytes();
            let v = vec![b'a' + (i % 26) as u8; 50 + i as usize % 200];
            db.put(&w, &k, &v).unwrap();
            model.insert(k, v);
            if i == 1999 {
                db.flush().unwrap();
            }
        }
        // The image below is a copy of the live folder: nothing may move while it is taken.
        common::settle(&db);
        let logs = |d: &std::path::Path| -> Vec<(String, u64)> {
            let mut l: Vec<(String, u64)> = std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap())
                .filter(|e| e.file_name().to_string_lossy().ends_with(".log"))
                .map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    (name, e.metadata().unwrap().len())
                })
                .collect();
            l.sort();
            l
        };
        // The current log and the one made ahead, the last two (an older log may still wait
        // for its removal, which follows the flush's install).
        let all_logs = logs(&dir);
        assert!(all_logs.len() >= 2, "{profile}: {all_logs:?}");
        let open_logs = all_logs[all_logs.len() - 2..].to_vec();
        assert!(
            open_logs[0].1 > 0,
            "{profile}: the current log holds writes"
        );
        assert_eq!(open_logs[1].1, 0, "{profile}: the log made ahead is empty");
        let crash = tmp.path().join(format!("{profile}-crash"));
        common::copy_dir(&dir, &crash);
        drop(db);
        let closed: Vec<String> = logs(&dir).into_iter().map(|(name, _)| name).collect();
        assert_eq!(closed, [open_logs[0].0.clone()], "{profile}: closed");
        assert_same(common::dump_with_peer(peer, &crash), &model, peer);
    }
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

/// Synced writes extend the log with zeros ahead of its records (`storage::fs`). A crash image
/// taken while the database is open, zeros and all, reopens in Strata with nothing reported
/// dropped and reads the same in Google's and Mojang's LevelDB. A record torn inside the zeros
/// is a torn write: Strata drops it and names exactly its bytes, and both LevelDBs read the
/// records before it. A closed database's log ends with its last record.
#[test]
fn synced_logs_with_zero_filled_space_open_in_strata_and_both_leveldbs() {
    use strata::storage::Storage as _;
    let tmp = tempfile::tempdir().unwrap();
    let fs = strata::FsStorage::new();
    for (profile, options, peer) in [
        ("google", Options::google(), "plyvel"),
        ("bedrock", Options::bedrock(), "amulet"),
    ] {
        let dir = tmp.path().join(profile);
        let mut create = options.clone();
        create.create_if_missing = true;
        let db = Db::open_path(dir.to_str().unwrap(), create).unwrap();
        let sync = WriteOptions {
            sync: true,
            ..WriteOptions::default()
        };
        let mut model = Model::new();
        let mut last_key = Vec::new();
        for i in 0..300u32 {
            let key = format!("key{i:05}").into_bytes();
            // The last value spans sector boundaries, so a power cut can tear it.
            let len = if i == 299 {
                2000
            } else {
                200 + i as usize % 100
            };
            let value = vec![(i % 250 + 1) as u8; len];
            db.put(&sync, &key, &value).unwrap();
            model.insert(key.clone(), value);
            last_key = key;
        }
        let log_name = common::only_log(&dir);
        let log_size = |d: &std::path::Path| std::fs::metadata(d.join(&log_name)).unwrap().len();
        // 300 records of about 270 bytes: past the first 64 KiB of zeros, so extended twice.
        let open_size = log_size(&dir);
        assert_eq!(
            open_size % 32_768,
            0,
            "{profile}: zeros end on a block boundary"
        );
        assert!(open_size > 81_000, "{profile}: {open_size}");
        let crash = tmp.path().join(format!("{profile}-crash"));
        common::copy_dir(&dir, &crash);
        let torn = tmp.path().join(format!("{profile}-torn"));
        common::copy_dir(&dir, &torn);
        drop(db);

        // Closed: the log ends with its last record.
        let closed = log_size(&dir);
        let mut reader = strata::log::Reader::new(
            fs.open_random(dir.join(&log_name).to_str().unwrap())
                .unwrap(),
            log_name.clone(),
            true,
            true,
        );
        let mut record = Vec::new();
        let mut records = 0;
        while reader.read_record(&mut record).unwrap() {
            records += 1;
        }
        assert_eq!(records, 300, "{profile}");
        assert_eq!(
            reader.end_of_last_record(),
            closed,
            "{profile}: no zeros left"
        );
        let (last_offset, last_end) = (reader.last_record_offset(), reader.end_of_last_record());
        assert!(closed < open_size, "{profile}");

        // The crash image: the same records, then zeros to the block boundary.
        let image = std::fs::read(crash.join(&log_name)).unwrap();
        assert_eq!(image.len() as u64, open_size);
        assert!(
            image[closed as usize..].iter().all(|&b| b == 0),
            "{profile}"
        );
        let peer_copy = tmp.path().join(format!("{profile}-crash-peer"));
        common::copy_dir(&crash, &peer_copy);
        assert_same(common::dump_with_peer(peer, &peer_copy), &model, peer);
        let db = Db::open_path(crash.to_str().unwrap(), options.clone()).unwrap();
        let info = db.recovery_info().clone();
        assert!(info.dropped_tails.is_empty(), "{profile}: {info:?}");
        assert_eq!(info.logs.len(), 1, "{profile}: {info:?}");
        assert_eq!(info.logs[0].records, 300, "{profile}");
        assert_same(entries(&db), &model, profile);
        drop(db);

        // The last record torn: its sectors up to the first boundary 30 bytes into its payload
        // reached the disk, the rest of it reads as zeros, like the space after it.
        let mut bytes = std::fs::read(torn.join(&log_name)).unwrap();
        let kept = (last_offset + 7 + 30).div_ceil(512) * 512;
        assert!(kept < last_end, "{profile}");
        assert!(bytes[kept as usize - 1] != 0, "{profile}: a value byte");
        bytes[kept as usize..last_end as usize].fill(0);
        std::fs::write(torn.join(&log_name), &bytes).unwrap();
        let mut shorter = model.clone();
        shorter.remove(&last_key);
        let peer_copy = tmp.path().join(format!("{profile}-torn-peer"));
        common::copy_dir(&torn, &peer_copy);
        assert_same(common::dump_with_peer(peer, &peer_copy), &shorter, peer);
        let db = Db::open_path(torn.to_str().unwrap(), options.clone()).unwrap();
        let info = db.recovery_info().clone();
        assert_eq!(
            info.dropped_tails,
            vec![strata::db::DroppedTail {
                file: log_name.clone(),
                offset: last_offset,
                bytes: kept - last_offset,
            }],
            "{profile}"
        );
        assert_eq!(info.logs[0].records, 299, "{profile}");
        assert_same(entries(&db), &shorter, profile);
    }
}

/// Large values moved by compactions as copied blocks (`Options::copy_stored_blocks`): a
/// Bedrock database (raw deflate, 160 KiB blocks, values up to 400 KiB) opens in Mojang's
/// LevelDB and a Google one (Snappy, 4 KiB blocks, values up to 20 KiB) in Google's, with
/// exactly the model's contents.
#[test]
fn large_values_copied_by_compactions_open_in_both_leveldbs() {
    for (profile, engine, max_len) in [
        (Options::bedrock(), "amulet", 400 << 10),
        (Options::google(), "plyvel", 20 << 10),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join(engine);
        let mut o = profile.create();
        o.write_buffer_size = 1 << 20;
        o.max_file_size = 1 << 20;
        let db = Db::open_path(dir.to_str().unwrap(), o).unwrap();
        let mut rng = Rng(21);
        let mut model = Model::new();
        let w = WriteOptions::default();
        for i in 0..600u64 {
            let k = format!("key{:04}", rng.below(300)).into_bytes();
            if rng.below(6) == 0 {
                db.delete(&w, &k).unwrap();
                model.remove(&k);
                continue;
            }
            // Half small, half large: compressible lines with a random length.
            let len = if rng.below(2) == 0 {
                rng.below(200) as usize
            } else {
                (max_len / 2) + rng.below(max_len as u64 / 2) as usize
            };
            let line = format!("{i} {} ", rng.below(1000));
            let v: Vec<u8> = line.bytes().cycle().take(len).collect();
            db.put(&w, &k, &v).unwrap();
            model.insert(k, v);
            if i % 150 == 149 {
                db.compact_range(None, None).unwrap();
            }
        }
        db.compact_range(None, None).unwrap();
        let props = db.properties();
        assert!(props.blocks_copied >= 50, "{engine}: {props:?}");
        assert_same(entries(&db), &model, engine);
        drop(db);
        assert_same(common::dump_with_peer(engine, &dir), &model, engine);
    }
}
