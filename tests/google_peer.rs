//! Databases written by Google's LevelDB (PyPI plyvel, built in the test) read back exactly:
//! Snappy on and off, deletions, overwrites, batches, several levels and a non-empty log.

mod common;

use std::path::Path;

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
    common::run_python(
        "plyvel writer",
        [
            script.as_os_str(),
            dir.as_os_str(),
            compression.as_ref(),
            seed.to_string().as_ref(),
            ops.to_string().as_ref(),
        ],
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
    let got = common::entries(&db);
    assert_eq!(got.len(), expected.len());
    assert!(got == expected, "forward contents differ");
    // Backward.
    let mut it = db.iter(&ReadOptions::default());
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

/// Large values in blocks Google's LevelDB compressed (its own Snappy) are copied by Strata's
/// compaction as they were stored, and the database then reads back exactly in Strata and
/// in Google's LevelDB.
#[test]
fn large_values_google_leveldb_stored_are_copied_and_read_back_by_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("google-large");
    // Both sides compute the same entries: 400 puts over 300 keys in a scattered order,
    // 5,000-19,999 bytes each, held in the memtable; Google's LevelDB then writes them all
    // into one table (`compact_range` flushes the memtable first).
    let script = r#"
import sys, plyvel
db = plyvel.DB(sys.argv[1], create_if_missing=True, write_buffer_size=64 << 20,
               compression='snappy')
for i in range(400):
    line = b'%d google line ' % i
    n = 5000 + (i * 131) % 15000
    db.put(b'key%04d' % ((i * 7919) % 300), (line * (n // len(line) + 1))[:n])
db.compact_range()
db.close()
"#;
    common::run_python(
        "plyvel writer",
        ["-c".as_ref(), script.as_ref(), dir.as_os_str()],
    );
    let mut model = std::collections::BTreeMap::new();
    for i in 0..400usize {
        let line = format!("{i} google line ");
        let n = 5000 + (i * 131) % 15000;
        let v: Vec<u8> = line.bytes().cycle().take(n).collect();
        model.insert(format!("key{:04}", (i * 7919) % 300).into_bytes(), v);
    }
    assert_eq!(model.len(), 300);

    let mut o = Options::google();
    o.background_thread = false;
    let db = Db::open_path(dir.to_str().unwrap(), o).unwrap();
    let version = db.version();
    assert_eq!(
        version.all_files().count(),
        1,
        "Google's LevelDB wrote one table"
    );
    drop(version);
    // Small values at both ends: the compaction merging Strata's table with Google's takes
    // every value Google stored (and drops the 100 older versions). Each is alone in its
    // Snappy block, so all are copied but the two overwritten and key0001, which follows
    // the small key0000 into its block: 297 blocks Google's LevelDB compressed.
    let w = strata::WriteOptions::default();
    for k in [&b"key0000"[..], b"key0299"] {
        db.put(&w, k, b"small").unwrap();
        model.insert(k.to_vec(), b"small".to_vec());
    }
    db.compact_range(None, None).unwrap();
    let props = db.properties();
    assert_eq!(props.blocks_copied, 297, "{props:?}");
    let want: Entries = model.into_iter().collect();
    let got = common::entries(&db);
    drop(db);
    assert!(got == want, "Strata's reading after the compaction");
    let peer = common::dump_with_peer("plyvel", &dir);
    assert!(
        peer == want,
        "Google's LevelDB's reading after the compaction"
    );
}
