//! Memory-mapped tables (FsStorage maps `.ldb`/`.sst` files): reads through the mapping give
//! the same entries as `pread`, and damage seen through it is reported like damage read with
//! `pread`: a table shorter than the MANIFEST says (the mapping ends early) and a flipped byte
//! in a data block are `Corruption` errors naming the file, never a fault.

use std::path::Path;
use std::sync::Arc;

use strata::{
    CompressionType, Db, ErrorKind, FsStorage, Options, ReadOptions, ScanStats, WriteOptions,
};

const KEYS: u32 = 5_000;

fn options() -> Options {
    Options {
        compression: CompressionType::Snappy,
        write_buffer_size: 64 * 1024,
        max_file_size: 64 * 1024,
        block_size: 1024,
        background_thread: false,
        ..Options::google().create()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn val(i: u32) -> Vec<u8> {
    format!("value-{i}-{}", "abcdefghij".repeat((i % 13) as usize)).into_bytes()
}

fn build(dir: &Path) -> ScanStats {
    let db = Db::open(Arc::new(FsStorage::new()), dir.to_str().unwrap(), options()).unwrap();
    for i in 0..KEYS {
        db.put(&WriteOptions::default(), &key(i), &val(i)).unwrap();
    }
    db.compact_range(None, None).unwrap();
    let stats = db.scan().unwrap();
    db.close().unwrap();
    stats
}

fn tables(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut t: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ldb"))
        .collect();
    t.sort();
    t
}

/// Every key's value by `get`, and a forward iteration, through `storage`.
fn read_all(dir: &Path, storage: FsStorage) -> strata::Result<(ScanStats, u32)> {
    let db = Db::open(
        Arc::new(storage),
        dir.to_str().unwrap(),
        options().read_only(),
    )?;
    let mut found = 0;
    for i in 0..KEYS {
        if db.get(&ReadOptions::default(), &key(i))? == Some(val(i)) {
            found += 1;
        }
    }
    let mut stats = ScanStats::default();
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    while it.valid() {
        stats.add(it.key(), it.value());
        it.next();
    }
    it.status()?;
    Ok((stats, found))
}

#[test]
fn mapped_reads_equal_pread_reads() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let built = build(&db);
    assert_eq!(built.entries, KEYS as u64);
    assert!(tables(&db).len() > 3, "several tables");
    let mapped = read_all(&db, FsStorage::new()).unwrap();
    let plain = read_all(&db, FsStorage::without_mmap()).unwrap();
    assert_eq!(mapped, (built, KEYS));
    assert_eq!(plain, mapped);
}

#[test]
fn damage_seen_through_the_mapping_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base");
    build(&base);
    for (what, storage) in [
        ("mapped", FsStorage::new()),
        ("pread", FsStorage::without_mmap()),
    ] {
        // A table cut short: the mapping ends before the blocks the index names.
        let db = dir.path().join(format!("truncated-{what}"));
        copy(&base, &db);
        let t = tables(&db)[1].clone();
        let len = std::fs::metadata(&t).unwrap().len();
        let f = std::fs::OpenOptions::new().write(true).open(&t).unwrap();
        f.set_len(len / 2).unwrap();
        let e = read_all(&db, storage).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption, "{what}: {e}");
        assert_eq!(
            e.file(),
            Some(t.file_name().unwrap().to_str().unwrap()),
            "{what}: {e}"
        );

        // A flipped byte inside the first data block: the block checksum catches it.
        let db = dir.path().join(format!("flipped-{what}"));
        copy(&base, &db);
        let t = tables(&db)[2].clone();
        let mut bytes = std::fs::read(&t).unwrap();
        bytes[10] ^= 0x40;
        std::fs::write(&t, &bytes).unwrap();
        let e = read_all(&db, storage).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption, "{what}: {e}");
        assert_eq!(
            e.file(),
            Some(t.file_name().unwrap().to_str().unwrap()),
            "{what}: {e}"
        );
        assert_eq!(e.offset(), Some(0), "{what}: {e}");
    }
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}
