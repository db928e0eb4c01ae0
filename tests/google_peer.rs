//! Databases written by Google's LevelDB (PyPI plyvel, built in the test) read back exactly:
//! Snappy on and off, deletions, overwrites, batches, several levels and a non-empty log.

mod common;

use std::path::Path;
use std::process::Command;

use strata::{Db, Options, ReadOptions};

fn read_records(path: &Path, with_values: bool) -> Entries {
    common::read_peer_records(path, with_values)
}

type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// Builds a database with plyvel; returns (dir, expected live entries, deleted keys).
fn make_google_db(
    tmp: &Path,
    compression: &str,
    seed: u32,
    ops: u32,
) -> (String, Entries, Vec<Vec<u8>>) {
    let dir = tmp.join(format!("google-{compression}-{seed}"));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/google_db.py");
    let out = Command::new(std::env::var("PYTHON").unwrap_or("python3".into()))
        .arg(&script)
        .arg(&dir)
        .arg(compression)
        .arg(seed.to_string())
        .arg(ops.to_string())
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "plyvel writer failed (run scripts/setup.sh): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let d = dir.to_string_lossy().into_owned();
    let expected = read_records(Path::new(&format!("{d}.expected")), true);
    let absent = read_records(Path::new(&format!("{d}.absent")), false)
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    (d, expected, absent)
}

fn check(compression: &str, seed: u32) {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, expected, absent) = make_google_db(tmp.path(), compression, seed, 30_000);
    assert!(expected.len() > 5_000, "{} live entries", expected.len());
    assert!(absent.len() > 500, "{} deleted keys", absent.len());
    let db = Db::open_path(&dir, Options::default().read_only()).unwrap();

    // The data really is spread over tables at several levels and a non-empty log.
    let version = db.version();
    let levels = (0..7).filter(|&l| version.num_files(l) > 0).count();
    assert!(levels >= 2, "tables on {levels} levels");
    assert!(db.memtable_entries() > 0, "the log holds entries");
    let ids: std::collections::BTreeSet<u8> = version
        .all_files()
        .flat_map(|(_, f)| db.table_stats(f).unwrap().compression_ids.into_keys())
        .collect();
    if compression == "snappy" {
        assert!(ids.contains(&1), "snappy blocks: {ids:?}");
    } else {
        assert_eq!(ids.into_iter().collect::<Vec<_>>(), vec![0]);
    }
    for (_, f) in version.all_files() {
        assert!(
            db.table_stats(f).unwrap().has_filter,
            "bloom filter in {}",
            f.number
        );
    }

    // Forward.
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    let mut got = Vec::new();
    while it.valid() {
        got.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    assert_eq!(got.len(), expected.len());
    assert!(got == expected, "forward contents differ");
    // Backward.
    it.seek_to_last();
    let mut back = Vec::new();
    while it.valid() {
        back.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    back.reverse();
    assert!(back == expected, "backward contents differ");
    // Point reads: every live key, every deleted key (through the bloom filters).
    let opts = ReadOptions::default();
    for (k, v) in &expected {
        assert_eq!(db.get(&opts, k).unwrap().as_ref(), Some(v));
    }
    for k in &absent {
        assert_eq!(db.get(&opts, k).unwrap(), None, "deleted key {k:x?}");
    }
    let mut stats = strata::ScanStats::default();
    for (k, v) in &expected {
        stats.add(k, v);
    }
    assert_eq!(db.scan().unwrap(), stats);
    db.verify().unwrap();
}

#[test]
fn reads_google_leveldb_with_snappy() {
    check("snappy", 1);
}

#[test]
fn reads_google_leveldb_uncompressed() {
    check("none", 2);
}
