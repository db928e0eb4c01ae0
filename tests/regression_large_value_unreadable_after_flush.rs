//! Regression: a value larger than `max_block_size` (16 MiB) went into a table as one block,
//! as LevelDB writes it, and was then refused on every read as corruption: "block
//! decompresses to N bytes, over the 16777216-byte limit" for a compressed block, "block
//! handle ... lies outside the file" for a stored one. Acknowledged data, unreadable once
//! flushed. Found by the browser's real-trap test (js/test/browser.test.ts), whose 256 MiB
//! values came back unreadable after recovery flushed them. The reader's limit is now the
//! larger of `max_block_size` and what the block's codec can make of its stored bytes.
//!
//! Both profiles, a compressible value (48 MiB of one byte: 21x under Snappy, about 1000x under
//! deflate) and an incompressible one (20 MiB, stored), through a flush, a reopen, a compaction
//! and an iteration; Google's and Mojang's LevelDB read Strata's tables, and Strata reads the
//! tables Google's LevelDB writes with such values.

mod common;

use std::path::Path;

use common::Rng;
use strata::{Db, Options, ReadOptions, WriteOptions};

const MIB: usize = 1 << 20;

fn large_values() -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut rng = Rng(42);
    let noise: Vec<u8> = (0..20 * MIB).map(|_| rng.next() as u8).collect();
    vec![
        (b"a-small".to_vec(), b"before".to_vec()),
        (b"big-noise".to_vec(), noise),
        (b"big-same".to_vec(), vec![7u8; 48 * MIB]),
        (b"z-small".to_vec(), b"after".to_vec()),
    ]
}

fn crc(v: &[u8]) -> u32 {
    crc32c::crc32c(v)
}

fn assert_reads(db: &Db, want: &[(Vec<u8>, Vec<u8>)], what: &str) {
    for (k, v) in want {
        let got = db
            .get(&ReadOptions::default(), k)
            .unwrap_or_else(|e| panic!("{what}: get {}: {e}", String::from_utf8_lossy(k)))
            .unwrap_or_else(|| panic!("{what}: {} missing", String::from_utf8_lossy(k)));
        assert_eq!(
            (got.len(), crc(&got)),
            (v.len(), crc(v)),
            "{what}: {}",
            String::from_utf8_lossy(k)
        );
    }
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    let mut seen = Vec::new();
    while it.valid() {
        seen.push((it.key().to_vec(), it.value().len(), crc(it.value())));
        it.next();
    }
    it.status().unwrap();
    let expected: Vec<_> = want
        .iter()
        .map(|(k, v)| (k.clone(), v.len(), crc(v)))
        .collect();
    assert_eq!(seen, expected, "{what}: iteration");
}

fn write_and_read(options: Options, dir: &Path, peer: &str) {
    let want = large_values();
    let path = dir.to_str().unwrap();
    let db = Db::open_path(path, options.clone()).unwrap();
    for (k, v) in &want {
        db.put(&WriteOptions::default(), k, v).unwrap();
    }
    assert_reads(&db, &want, "memtable");
    db.compact_range(None, None).unwrap();
    assert!(db.version().all_files().count() > 0, "flushed into tables");
    assert_reads(&db, &want, "tables");
    drop(db);
    let db = Db::open_path(path, options).unwrap();
    assert_reads(&db, &want, "reopened");
    // The blocks really are larger than the default limit: one stored, one compressed.
    let mut ids = std::collections::BTreeSet::new();
    for (_, f) in db.version().all_files() {
        ids.extend(db.table_stats(f).unwrap().compression_ids.keys().copied());
    }
    assert!(ids.contains(&0) && ids.len() >= 2, "block codecs {ids:?}");
    drop(db);
    // The real LevelDB of the profile reads the same (it opens as a writer: a copy).
    let copy = dir.with_extension("peer");
    common::copy_dir(dir, &copy);
    let got = common::dump_with_peer(peer, &copy);
    let got: Vec<_> = got
        .iter()
        .map(|(k, v)| (k.clone(), v.len(), crc(v)))
        .collect();
    let expected: Vec<_> = want
        .iter()
        .map(|(k, v)| (k.clone(), v.len(), crc(v)))
        .collect();
    assert_eq!(got, expected, "{peer}");
}

#[test]
fn large_values_read_back_from_tables_in_the_google_profile() {
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::google();
    o.create_if_missing = true;
    write_and_read(o, &tmp.path().join("google"), "plyvel");
}

#[test]
fn large_values_read_back_from_tables_in_the_bedrock_profile() {
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::bedrock();
    o.create_if_missing = true;
    write_and_read(o, &tmp.path().join("bedrock"), "amulet");
}

#[test]
fn large_values_written_by_googles_leveldb_read_back() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("plyvel");
    let code = r#"
import sys, plyvel
db = plyvel.DB(sys.argv[1], create_if_missing=True, compression="snappy")
db.put(b"a-small", b"before")
db.put(b"big-same", bytes([7]) * (48 << 20))
db.put(b"big-bytes", bytes(range(256)) * (20 << 12))
db.put(b"z-small", b"after")
db.compact_range()
db.close()
"#;
    common::run_python(
        "plyvel",
        [std::ffi::OsStr::new("-c"), code.as_ref(), dir.as_os_str()],
    );
    let want = vec![
        (b"a-small".to_vec(), b"before".to_vec()),
        (
            b"big-bytes".to_vec(),
            (0..=255u8).cycle().take(20 * MIB).collect::<Vec<u8>>(),
        ),
        (b"big-same".to_vec(), vec![7u8; 48 * MIB]),
        (b"z-small".to_vec(), b"after".to_vec()),
    ];
    let db = Db::open_path(dir.to_str().unwrap(), Options::default().read_only()).unwrap();
    assert!(
        db.version().all_files().count() > 0,
        "plyvel compacted into tables"
    );
    assert_reads(&db, &want, "written by Google's LevelDB");
}
