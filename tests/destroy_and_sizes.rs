//! `db::destroy` (LevelDB's DestroyDB) and `Db::approximate_size` (GetApproximateSizes): a
//! destroy removes exactly LevelDB's files and is refused while the database is open; an
//! approximate size counts flushed table bytes of the range, and nothing for an empty range.

use std::sync::Arc;

use strata::db::destroy::destroy;
use strata::storage::write_all;
use strata::{Db, ErrorKind, MemStorage, Options, Storage, WriteOptions};

fn fill(db: &Db, n: usize) {
    let w = WriteOptions::default();
    for i in 0..n {
        let value: Vec<u8> = (0..1000).map(|j| ((i * 7 + j * 13) % 251) as u8).collect();
        db.put(&w, format!("key{i:05}").as_bytes(), &value).unwrap();
    }
}

#[test]
fn destroy_removes_only_leveldb_files() {
    let storage = Arc::new(MemStorage::new());
    let db = Db::open(storage.clone(), "db", Options::google().create()).unwrap();
    fill(&db, 100);
    db.flush().unwrap();
    write_all(&*storage, "db/notes.txt", b"keep me").unwrap();
    // Open: refused, nothing removed.
    let err = destroy(storage.clone(), "db").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Locked);
    assert!(storage.exists("db/CURRENT"));
    db.close().unwrap();

    let before = storage.list("db").unwrap();
    let report = destroy(storage.clone(), "db").unwrap();
    let mut expected: Vec<String> = before.into_iter().filter(|n| n != "notes.txt").collect();
    expected.sort();
    let mut removed = report.removed.clone();
    removed.sort();
    assert_eq!(removed, expected);
    assert!(removed.iter().any(|n| n.ends_with(".ldb")));
    assert!(removed.iter().any(|n| n == "CURRENT"));
    assert_eq!(storage.list("db").unwrap(), vec!["notes.txt".to_string()]);
    assert_eq!(report.remaining, 1);
}

#[test]
fn destroy_of_a_missing_folder_is_not_an_error() {
    let storage = Arc::new(MemStorage::new());
    let report = destroy(storage.clone(), "nowhere").unwrap();
    assert!(report.removed.is_empty());
    assert_eq!(report.remaining, 0);
}

#[test]
fn approximate_size_counts_flushed_tables() {
    let storage = Arc::new(MemStorage::new());
    let db = Db::open(storage, "db", Options::google().create()).unwrap();
    fill(&db, 1000);
    // In the memtable only: LevelDB counts tables, not the memtable.
    assert_eq!(db.approximate_size(b"key", b"kez").unwrap(), 0);
    db.flush().unwrap();
    let all = db.approximate_size(b"key", b"kez").unwrap();
    let tables: u64 = db.properties().bytes_per_level.iter().sum();
    // The whole range: every table byte up to the last data block's start.
    assert!(all <= tables && all > tables * 9 / 10, "{all} of {tables}");
    let half = db.approximate_size(b"key00000", b"key00500").unwrap();
    assert!(
        half > all * 4 / 10 && half < all * 6 / 10,
        "{half} of {all}"
    );
    assert_eq!(db.approximate_size(b"key00500", b"key00500").unwrap(), 0);
    assert_eq!(db.approximate_size(b"z", b"a").unwrap(), 0);
}
