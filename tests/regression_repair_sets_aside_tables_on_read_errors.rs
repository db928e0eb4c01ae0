//! Regression: repair took any error reading a table for damage. A read that failed for a
//! passing reason (an I/O error, memory short for a large block) set an intact table aside in
//! `lost/` when it failed at open, and when it failed at a data block, rewrote the table
//! without that block's entries: a repair run to mend one thing lost data it could read a
//! moment later.
//!
//! Now only damage (corruption) is damage: any other error ends the repair with that error,
//! the table left where it was, and a repair run once the storage answers again keeps every
//! entry. Checked to fail on the old code (it returned `Ok` with a table lost or rewritten).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;

use strata::db::repair::repair;
use strata::storage::{FileLock, RandomAccessFile, WritableFile};
use strata::{
    CompressionType, Db, Error, ErrorKind, MemStorage, Options, ReadOptions, Result, Storage,
    WriteOptions,
};

const KEYS: u32 = 2000;

fn options() -> Options {
    Options {
        compression: CompressionType::Snappy,
        write_buffer_size: 64 * 1024,
        max_file_size: 32 * 1024,
        block_size: 1024,
        background_thread: false,
        ..Options::google().create()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

fn val(i: u32) -> Vec<u8> {
    let mut v = format!("v{i:05}-").into_bytes();
    v.resize(100, b'a' + (i % 26) as u8);
    v
}

/// MemStorage whose reads of one table fail with `Io` once `after` reads of it succeeded,
/// while armed.
struct FailingReads {
    inner: MemStorage,
    table: String,
    armed: Arc<AtomicBool>,
    after: u64,
    reads: Arc<AtomicU64>,
}

struct FailingFile {
    inner: Arc<dyn RandomAccessFile>,
    armed: Arc<AtomicBool>,
    after: u64,
    reads: Arc<AtomicU64>,
}

impl RandomAccessFile for FailingFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        if self.armed.load(SeqCst) && self.reads.fetch_add(1, SeqCst) >= self.after {
            return Err(Error::io("simulated read error"));
        }
        self.inner.read_at(offset, buf)
    }
    fn size(&self) -> Result<u64> {
        self.inner.size()
    }
}

impl Storage for FailingReads {
    fn open_random(&self, path: &str) -> Result<Arc<dyn RandomAccessFile>> {
        let inner = self.inner.open_random(path)?;
        if !path.ends_with(&self.table) {
            return Ok(inner);
        }
        Ok(Arc::new(FailingFile {
            inner,
            armed: self.armed.clone(),
            after: self.after,
            reads: self.reads.clone(),
        }))
    }
    fn create(&self, path: &str) -> Result<Box<dyn WritableFile>> {
        self.inner.create(path)
    }
    fn append(&self, path: &str) -> Result<Box<dyn WritableFile>> {
        self.inner.append(path)
    }
    fn exists(&self, path: &str) -> bool {
        self.inner.exists(path)
    }
    fn file_size(&self, path: &str) -> Result<u64> {
        self.inner.file_size(path)
    }
    fn list(&self, dir: &str) -> Result<Vec<String>> {
        self.inner.list(dir)
    }
    fn remove(&self, path: &str) -> Result<()> {
        self.inner.remove(path)
    }
    fn rename(&self, from: &str, to: &str) -> Result<()> {
        self.inner.rename(from, to)
    }
    fn create_dir_all(&self, path: &str) -> Result<()> {
        self.inner.create_dir_all(path)
    }
    fn lock(&self, path: &str) -> Result<Box<dyn FileLock>> {
        self.inner.lock(path)
    }
    fn lock_shared(&self, path: &str) -> Result<Option<Box<dyn FileLock>>> {
        self.inner.lock_shared(path)
    }
}

/// 2000 keys compacted into several tables; the names of the tables.
fn build() -> (MemStorage, Vec<String>) {
    let mem = MemStorage::new();
    let db = Db::open(Arc::new(mem.clone()), "db", options()).unwrap();
    for i in 0..KEYS {
        db.put(&WriteOptions::default(), &key(i), &val(i)).unwrap();
    }
    db.compact_range(None, None).unwrap();
    drop(db);
    let mut tables: Vec<String> = mem
        .list("db")
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(".ldb"))
        .collect();
    tables.sort();
    assert!(tables.len() >= 3, "{tables:?}");
    (mem, tables)
}

/// Every key with its own value, read through a fresh open.
fn all_keys_back(mem: &MemStorage) {
    let db = Db::open(Arc::new(mem.clone()), "db", options()).unwrap();
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    let mut n = 0u32;
    while it.valid() {
        assert_eq!(it.key(), key(n));
        assert_eq!(it.value(), val(n), "key {n}");
        n += 1;
        it.next();
    }
    it.status().unwrap();
    assert_eq!(n, KEYS);
}

#[test]
fn a_read_error_ends_repair_and_sets_nothing_aside() {
    // `after`: 0 fails the open of the table (its footer), 3 a data block after the footer,
    // index and filter were read.
    for after in [0u64, 3] {
        let (mem, tables) = build();
        let victim = tables[tables.len() / 2].clone();
        let armed = Arc::new(AtomicBool::new(true));
        let reads = Arc::new(AtomicU64::new(0));
        let failing = FailingReads {
            inner: mem.clone(),
            table: victim.clone(),
            armed: armed.clone(),
            after,
            reads: reads.clone(),
        };
        let e = repair(Arc::new(failing), "db", &options()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Io, "after {after}: {e}");
        assert!(e.message().contains("simulated read error"), "{e}");
        assert!(
            reads.load(SeqCst) > after,
            "after {after}: the fault was reached"
        );
        // The table is where it was, byte for byte, and nothing was set aside for it.
        assert!(mem.exists(&format!("db/{victim}")), "after {after}");
        let lost = mem.list("db/lost").unwrap_or_default();
        assert!(
            !lost.iter().any(|n| n == &victim),
            "after {after}: {victim} set aside: {lost:?}"
        );
        // Once the storage answers, repair keeps every entry.
        armed.store(false, SeqCst);
        let report = repair(Arc::new(mem.clone()), "db", &options()).unwrap();
        assert_eq!(report.tables_lost, 0, "after {after}: {report:?}");
        assert_eq!(report.tables_rewritten, 0, "after {after}: {report:?}");
        assert_eq!(report.entries, KEYS as u64, "after {after}: {report:?}");
        all_keys_back(&mem);
    }
}
