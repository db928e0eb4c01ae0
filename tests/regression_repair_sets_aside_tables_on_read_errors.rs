//! Regression: repair took any error reading a table for damage. A read that failed for a
//! passing reason (an I/O error, memory short for a large block) set an intact table aside in
//! `lost/` when it failed at open, and when it failed at a data block, rewrote the table
//! without that block's entries: a repair run to mend one thing lost data it could read a
//! moment later.
//!
//! Now only damage (corruption) is damage: any other error ends the repair with that error,
//! naming the table, and the folder is as the repair found it (nothing moved to `lost/`, the
//! logs in place, no file left behind): an open sees every write, and a repair run once the
//! storage answers again keeps every entry. Checked to fail on the old code (it returned `Ok`
//! with a table lost, or rewritten without a block's entries).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;

use strata::db::repair::repair;
use strata::storage::{DirPolicy, FaultStorage, FileLock, RandomAccessFile, WritableFile};
use strata::{
    CompressionType, Db, Error, ErrorKind, MemStorage, Options, ReadOptions, Result, Storage,
    WriteOptions,
};

const KEYS: u32 = 2000;
/// Keys written after the compaction: only in the log.
const LOG_KEYS: u32 = 50;

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

/// Which reads of the victim table fail while armed.
#[derive(Clone, Copy, Debug)]
enum Fault {
    /// Every read: the table cannot even be opened (its footer).
    All,
    /// Reads of its first data block (offset 0): it opens (footer, index and filter lie at
    /// its end), then a block fails.
    FirstBlock,
}

struct FailingFile {
    inner: Arc<dyn RandomAccessFile>,
    armed: Arc<AtomicBool>,
    fault: Fault,
    failed: Arc<AtomicU64>,
}

impl RandomAccessFile for FailingFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let hit = match self.fault {
            Fault::All => true,
            Fault::FirstBlock => offset == 0,
        };
        if hit && self.armed.load(SeqCst) {
            self.failed.fetch_add(1, SeqCst);
            return Err(Error::io("simulated read error"));
        }
        self.inner.read_at(offset, buf)
    }
    fn size(&self) -> Result<u64> {
        self.inner.size()
    }
}

/// MemStorage whose table files are opened through `wrap` (a fault, a count).
struct TablesWrapped {
    inner: MemStorage,
    wrap: TableWrap,
}

type TableWrap =
    Box<dyn Fn(&str, Arc<dyn RandomAccessFile>) -> Arc<dyn RandomAccessFile> + Send + Sync>;

/// `mem` with reads of `table` failing with `Io` as `fault` says, while `armed`.
fn failing_reads(
    mem: &MemStorage,
    table: String,
    armed: Arc<AtomicBool>,
    fault: Fault,
    failed: Arc<AtomicU64>,
) -> TablesWrapped {
    TablesWrapped {
        inner: mem.clone(),
        wrap: Box::new(move |path, inner| {
            if !path.ends_with(&table) {
                return inner;
            }
            Arc::new(FailingFile {
                inner,
                armed: armed.clone(),
                fault,
                failed: failed.clone(),
            })
        }),
    }
}

impl Storage for TablesWrapped {
    fn open_random(&self, path: &str) -> Result<Arc<dyn RandomAccessFile>> {
        let inner = self.inner.open_random(path)?;
        Ok(if path.ends_with(".ldb") {
            (self.wrap)(path, inner)
        } else {
            inner
        })
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

/// 2000 keys compacted into several tables, then 50 more only in the log; the tables' names.
fn build() -> (MemStorage, Vec<String>) {
    let mem = MemStorage::new();
    let db = Db::open(Arc::new(mem.clone()), "db", options()).unwrap();
    for i in 0..KEYS {
        db.put(&WriteOptions::default(), &key(i), &val(i)).unwrap();
    }
    db.compact_range(None, None).unwrap();
    for i in KEYS..KEYS + LOG_KEYS {
        db.put(&WriteOptions::default(), &key(i), &val(i)).unwrap();
    }
    assert_eq!(db.memtable_entries(), LOG_KEYS as usize);
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

/// Every file of the folder (and of `lost/`) with its bytes.
fn folder(mem: &MemStorage) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for dir in ["db", "db/lost"] {
        for name in mem.list(dir).unwrap_or_default() {
            let path = format!("{dir}/{name}");
            if let Ok(bytes) = strata::storage::read_all(mem, &path) {
                out.push((path, bytes));
            }
        }
    }
    out.sort();
    out
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
    assert_eq!(n, KEYS + LOG_KEYS);
}

#[test]
fn a_read_error_ends_repair_and_leaves_the_folder_as_it_was() {
    for fault in [Fault::All, Fault::FirstBlock] {
        let (mem, tables) = build();
        let victim = tables[tables.len() / 2].clone();
        let before = folder(&mem);
        assert!(before.iter().any(|(p, _)| p.ends_with(".log")));
        let armed = Arc::new(AtomicBool::new(true));
        let failed = Arc::new(AtomicU64::new(0));
        let failing = failing_reads(&mem, victim.clone(), armed.clone(), fault, failed.clone());
        let e = repair(Arc::new(failing), "db", &options()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Io, "{fault:?}: {e}");
        assert!(e.message().contains("simulated read error"), "{e}");
        assert_eq!(e.file(), Some(victim.as_str()), "{fault:?}: {e}");
        assert!(failed.load(SeqCst) > 0, "{fault:?}: the fault was reached");
        // The folder as it was: every file, byte for byte; the log's writes are still seen.
        assert!(
            folder(&mem) == before,
            "{fault:?}: the failed repair changed the folder"
        );
        all_keys_back(&mem);
        // Once the storage answers, repair keeps every entry.
        armed.store(false, SeqCst);
        let report = repair(Arc::new(mem.clone()), "db", &options()).unwrap();
        assert_eq!(report.tables_lost, 0, "{fault:?}: {report:?}");
        assert_eq!(report.tables_rewritten, 0, "{fault:?}: {report:?}");
        assert_eq!(report.logs_replayed, 1, "{fault:?}: {report:?}");
        assert_eq!(
            report.entries,
            (KEYS + LOG_KEYS) as u64,
            "{fault:?}: {report:?}"
        );
        all_keys_back(&mem);
    }
}

/// A repair that finishes moves what it replaced to `lost/` only after CURRENT names its
/// MANIFEST, whose log number is past every log: a database where one table is damaged
/// comes back with every intact entry, its replayed log and old MANIFEST in `lost/`.
#[test]
fn a_finished_repair_sets_aside_the_log_the_damage_and_the_old_manifest() {
    let (mem, tables) = build();
    let victim = format!("db/{}", tables[0]);
    let mut bytes = strata::storage::read_all(&mem, &victim).unwrap();
    bytes[10] ^= 0xff; // the first data block's checksum fails
    strata::storage::write_all(&mem, &victim, &bytes).unwrap();
    let old_manifest = mem
        .list("db")
        .unwrap()
        .into_iter()
        .find(|n| n.starts_with("MANIFEST-"))
        .unwrap();
    let report = repair(Arc::new(mem.clone()), "db", &options()).unwrap();
    assert_eq!(report.tables_rewritten, 1, "{report:?}");
    assert_eq!(report.tables_lost, 0, "{report:?}");
    assert_eq!(report.logs_replayed, 1, "{report:?}");
    let mut lost = mem.list("db/lost").unwrap();
    lost.sort();
    let log = lost.iter().find(|n| n.ends_with(".log")).cloned();
    assert!(log.is_some(), "{lost:?}");
    assert!(lost.contains(&tables[0]), "{lost:?}");
    assert!(lost.contains(&old_manifest), "{lost:?}");
    assert_eq!(lost.len(), 3, "{lost:?}");
    // Every key but those of the damaged block, each with its own value.
    let db = Db::open(Arc::new(mem.clone()), "db", options()).unwrap();
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    let mut n = 0u64;
    while it.valid() {
        let i: u32 = std::str::from_utf8(&it.key()[3..])
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(it.value(), val(i), "key {i}");
        n += 1;
        it.next();
    }
    it.status().unwrap();
    assert_eq!(n, report.entries);
    assert!(
        n < (KEYS + LOG_KEYS) as u64 && n > (KEYS + LOG_KEYS) as u64 - 20,
        "{n}"
    );
}

/// Two overlapping tables, the older damaged in its first block (see the next test), in a
/// folder of their own; the options they were written with.
fn build_shadowed() -> (MemStorage, Options, Vec<String>) {
    let mem = MemStorage::new();
    let opts = Options {
        write_buffer_size: 1 << 20,
        ..options()
    };
    let db = Db::open(Arc::new(mem.clone()), "db", opts.clone()).unwrap();
    for i in 0..200 {
        db.put(&WriteOptions::default(), &key(i), b"old").unwrap();
    }
    db.flush().unwrap();
    for i in 100..300 {
        db.put(&WriteOptions::default(), &key(i), &val(i)).unwrap();
    }
    db.flush().unwrap();
    drop(db);
    let mut tables: Vec<String> = mem
        .list("db")
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(".ldb"))
        .collect();
    tables.sort();
    assert_eq!(tables.len(), 2, "{tables:?}");
    damage_first_block(&mem, &tables[0]);
    (mem, opts, tables)
}

fn damage_first_block(mem: &MemStorage, table: &str) {
    let path = format!("db/{table}");
    let mut bytes = strata::storage::read_all(mem, &path).unwrap();
    bytes[10] ^= 0xff;
    strata::storage::write_all(mem, &path, &bytes).unwrap();
}

/// Every key with its value, through `get` (checked against the scan).
fn contents(storage: Arc<dyn Storage>, opts: &Options) -> Vec<(Vec<u8>, Vec<u8>)> {
    let db = Db::open(storage, "db", opts.clone()).unwrap();
    let mut out = Vec::new();
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    for (k, v) in &out {
        assert_eq!(
            db.get(&ReadOptions::default(), k).unwrap().as_deref(),
            Some(&v[..])
        );
    }
    out
}

/// A repair is a sequence of storage operations, and the machine may die between any two.
/// Crashed at each of them (both folder policies), the folder is never worse than before:
/// after an open of what the crash left, a repair gives exactly what an uncrashed repair
/// gives, every key with its newest surviving value. Two folders: tables from a compaction with a log
/// tail and a damaged table (rewritten), and overlapping tables merged into one run.
#[test]
fn a_repair_crashed_at_any_step_loses_nothing() {
    type Setup = fn() -> (MemStorage, Options);
    let setups: [(&str, Setup); 2] = [
        ("rewrite", || {
            let (mem, tables) = build();
            damage_first_block(&mem, &tables[0]);
            (mem, options())
        }),
        ("merge", || {
            let (mem, opts, _) = build_shadowed();
            (mem, opts)
        }),
    ];
    for (name, setup) in setups {
        for policy in [DirPolicy::KeepEntries, DirPolicy::DropUnsyncedEntries] {
            let (mem, opts) = setup();
            let counting = FaultStorage::with_policy(Arc::new(mem), policy);
            counting.record_ops();
            let report = repair(Arc::new(counting.clone()), "db", &opts).unwrap();
            let ops = counting.ops().len() as u64;
            let want = contents(Arc::new(counting.crash_image()), &opts);
            assert!(!want.is_empty());
            if name == "merge" {
                assert_eq!(report.tables_merged, 2, "{report:?}");
            }
            for n in 1..=ops {
                let (mem, opts) = setup();
                let storage = FaultStorage::with_policy(Arc::new(mem), policy);
                storage.crash_at(n, None);
                let _ = repair(Arc::new(storage.clone()), "db", &opts);
                assert!(storage.crashed(), "{name} {policy:?}: op {n} reached");
                let image: Arc<dyn Storage> = Arc::new(storage.crash_image());
                // The application opens the folder first, as it finds it (an open that works
                // may replay, flush and delete what it takes for obsolete).
                if let Ok(db) = Db::open(image.clone(), "db", opts.clone()) {
                    drop(db);
                }
                repair(image.clone(), "db", &opts)
                    .unwrap_or_else(|e| panic!("{name} {policy:?}, crash at op {n}: {e}"));
                let got = contents(image, &opts);
                assert!(
                    got == want,
                    "{name} {policy:?}, crash at op {n} of {ops}: {} entries, not {}",
                    got.len(),
                    want.len()
                );
            }
        }
    }
}

/// Level 0 is searched newest file number first, and repair lists every table there. A
/// damaged table is rewritten under a new, higher number though its entries are older than
/// those of a table it overlaps: `get` then found the old value first (a scan, merging by
/// sequence, disagreed). Now repair sees the order broken and merges the tables into one
/// sorted run at the last level: `get` and the scan agree on the newest value of every key.
#[test]
fn a_rewritten_table_never_shadows_newer_entries() {
    let (mem, opts, tables) = build_shadowed();
    let report = repair(Arc::new(mem.clone()), "db", &opts).unwrap();
    assert_eq!(report.tables_rewritten, 1, "{report:?}");
    assert_eq!(report.tables_merged, 2, "{report:?}");
    let db = Db::open(Arc::new(mem.clone()), "db", opts).unwrap();
    for i in 100..300 {
        let got = db.get(&ReadOptions::default(), &key(i)).unwrap();
        assert_eq!(got.as_deref(), Some(&val(i)[..]), "key {i}");
    }
    // The scan agrees: every key once, 100..299 at their new values, the rest of 0..99 that
    // survived the damage at "old".
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    let (mut old, mut new) = (0, 0);
    while it.valid() {
        let i: u32 = std::str::from_utf8(&it.key()[3..])
            .unwrap()
            .parse()
            .unwrap();
        if i >= 100 {
            assert_eq!(it.value(), val(i), "key {i}");
            new += 1;
        } else {
            assert_eq!(it.value(), b"old", "key {i}");
            old += 1;
        }
        it.next();
    }
    it.status().unwrap();
    assert_eq!(new, 200);
    assert!(old > 0 && old < 100, "{old}");
    // The originals are kept in lost/: the damaged one and the one merged.
    let lost = mem.list("db/lost").unwrap();
    for t in &tables {
        assert!(lost.contains(t), "{t} in {lost:?}");
    }
}

/// A table file counted while open.
struct CountedFile {
    inner: Arc<dyn RandomAccessFile>,
    open: Arc<AtomicU64>,
}

impl Drop for CountedFile {
    fn drop(&mut self) {
        self.open.fetch_sub(1, SeqCst);
    }
}

impl RandomAccessFile for CountedFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        self.inner.read_at(offset, buf)
    }
    fn size(&self) -> Result<u64> {
        self.inner.size()
    }
}

/// A database with tables on several levels and a stray copy of its oldest table under the
/// highest number: its numbers do not order its entries, so repair merges it. The merge reads
/// each run of disjoint tables a table at a time: never more table files open at once than
/// the table cache holds (before, every table at once: past the open-file limit on a large
/// database, a repair that could never finish), and every key keeps its newest value.
#[test]
fn a_merge_opens_tables_a_run_at_a_time() {
    let mem = MemStorage::new();
    let opts = Options {
        compression: CompressionType::None,
        max_file_size: 8 * 1024,
        max_open_files: 4,
        ..options()
    };
    let db = Db::open(Arc::new(mem.clone()), "db", opts.clone()).unwrap();
    let mut rng = 7u64;
    for round in 0..40u32 {
        for _ in 0..500 {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let i = ((rng >> 33) % 6000) as u32;
            let mut v = val(i);
            v[0] = b'A' + (round % 26) as u8;
            db.put(&WriteOptions::default(), &key(i), &v).unwrap();
        }
        db.flush().unwrap();
        while db.maintenance().unwrap() {}
    }
    drop(db);
    let before = contents(Arc::new(mem.clone()), &opts);
    let mut names: Vec<String> = mem
        .list("db")
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(".ldb"))
        .collect();
    names.sort();
    // A stray copy of the oldest table under a number above every other (as a copy made by
    // hand, or a log replayed twice, leaves): its entries are older than those of the tables
    // it overlaps, so level 0's order cannot be trusted.
    let copy = strata::storage::read_all(&mem, &format!("db/{}", names[0])).unwrap();
    strata::storage::write_all(&mem, "db/999999.ldb", &copy).unwrap();
    let tables = names.len() + 1;
    assert!(tables > 60, "{tables} tables");
    let open = Arc::new(AtomicU64::new(0));
    let peak = Arc::new(AtomicU64::new(0));
    let counting = TablesWrapped {
        inner: mem.clone(),
        wrap: Box::new({
            let (open, peak) = (open.clone(), peak.clone());
            move |_, inner| {
                let now = open.fetch_add(1, SeqCst) + 1;
                peak.fetch_max(now, SeqCst);
                Arc::new(CountedFile {
                    inner,
                    open: open.clone(),
                })
            }
        }),
    };
    let report = repair(Arc::new(counting), "db", &opts).unwrap();
    assert_eq!(report.tables_merged as usize, tables, "{report:?}");
    // What the table cache holds (at least one table in each of its 16 shards) and one table
    // per run of disjoint tables (here 5); every table at once, it was all 79.
    assert!(
        peak.load(SeqCst) <= 16 + 8,
        "{} of {tables} table files open at once",
        peak.load(SeqCst)
    );
    assert_eq!(open.load(SeqCst), 0);
    let after = contents(Arc::new(mem.clone()), &opts);
    assert!(
        after == before,
        "{} entries after, {} before",
        after.len(),
        before.len()
    );
}
