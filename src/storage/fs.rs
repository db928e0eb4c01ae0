//! Native storage over `std::fs`: positional reads (`pread`), buffered appends, `fdatasync`,
//! atomic `rename`, and advisory locks on `LOCK` (exclusive for writers, shared for read-only
//! openers, so a writer and a reader in two processes exclude each other).
//!
//! Locks: on Unix a POSIX `fcntl` record lock over the whole file (what Google's and Mojang's
//! LevelDB take, and what other Strata processes check); elsewhere the platform's file lock
//! (`File::try_lock`). Not `flock` on Unix: a `flock` belongs to the open file description,
//! which a child forked by any thread of this process inherits until it execs, so a database
//! closed in one thread could still read as locked to its reopener for that window (seen as a
//! flaky `Locked` in tests that spawn processes). POSIX record locks belong to the process and
//! are dropped when any descriptor of the file is closed, so a process-wide table of held locks
//! answers a second opener in this process before any descriptor is opened, and shared holders
//! in this process share one descriptor.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::{FileLock, RandomAccessFile, Storage, WritableFile};
use crate::error::{Error, Result};

/// The native file system; paths are used as given.
///
/// Table files (`.ldb`, `.sst`) opened for reading are memory-mapped, as LevelDB does on
/// 64-bit hosts (at most `MAX_MAPS` at once, then `pread`): a block read is then a slice of
/// the mapping, with no system call, no copy and no buffer to zero. Tables are never modified
/// after they are written, so the mapping stays valid (a file that shrinks under the mapping
/// by another program's hand would fault, as in LevelDB). Mapped pages are file cache, counted
/// in a process's resident size while mapped; a scan's readahead reads with `pread` instead,
/// so a full scan does not map the whole database.
#[derive(Clone, Copy, Debug)]
pub struct FsStorage {
    map_tables: bool,
}

impl Default for FsStorage {
    fn default() -> Self {
        Self::new()
    }
}

impl FsStorage {
    /// Maps table files on 64-bit hosts.
    pub fn new() -> Self {
        FsStorage {
            map_tables: cfg!(target_pointer_width = "64"),
        }
    }

    /// Reads every file with `pread` (no memory maps).
    pub fn without_mmap() -> Self {
        FsStorage { map_tables: false }
    }
}

/// Tables mapped at once in this process (LevelDB's default limit on 64-bit hosts).
const MAX_MAPS: usize = 1000;
static MAPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A read-only mapping of a whole table file, counted against `MAX_MAPS`.
struct TableMap(memmap2::Mmap);

impl TableMap {
    fn new(file: &File) -> Option<TableMap> {
        use std::sync::atomic::Ordering;
        let len = file.metadata().ok()?.len();
        if len == 0 || usize::try_from(len).is_err() {
            return None;
        }
        if MAPS.fetch_add(1, Ordering::Relaxed) >= MAX_MAPS {
            MAPS.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        // SAFETY: the mapping is read-only and table files are immutable once written (the
        // engine never rewrites or truncates one; it only deletes them, which leaves the
        // mapping valid). This is LevelDB's own contract for its mmap'd tables.
        #[allow(unsafe_code)]
        let map = unsafe { memmap2::Mmap::map(file) };
        match map {
            Ok(m) => Some(TableMap(m)),
            Err(_) => {
                MAPS.fetch_sub(1, Ordering::Relaxed);
                None
            }
        }
    }
}

impl AsRef<[u8]> for TableMap {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for TableMap {
    fn drop(&mut self) {
        MAPS.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

fn io_err(path: &str, e: io::Error) -> Error {
    let kind = e.kind();
    let mut err = Error::from(e);
    if kind == io::ErrorKind::NotFound {
        err = Error::not_found(format!("{path}: no such file or folder"));
    }
    err.in_file(path)
}

struct FsFile {
    file: File,
    path: String,
    /// The table's mapping (`TableMap`), shared with the blocks borrowed from it: unmapped
    /// (and uncounted) when the file and the last such block are gone.
    map: Option<bytes::Bytes>,
}

impl RandomAccessFile for FsFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        #[cfg(unix)]
        use std::os::unix::fs::FileExt;
        #[cfg(windows)]
        use std::os::windows::fs::FileExt;
        loop {
            #[cfg(unix)]
            let r = self.file.read_at(buf, offset);
            #[cfg(windows)]
            let r = self.file.seek_read(buf, offset);
            match r {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(io_err(&self.path, e)),
            }
        }
    }

    fn size(&self) -> Result<u64> {
        Ok(self
            .file
            .metadata()
            .map_err(|e| io_err(&self.path, e))?
            .len())
    }

    fn mapped_shared(&self) -> Option<bytes::Bytes> {
        self.map.clone()
    }
}

/// Appended bytes of a file that will be synced are handed to the kernel's writeback every
/// `WRITEBACK_BYTES` (Linux `sync_file_range(SYNC_FILE_RANGE_WRITE)`, RocksDB's
/// `bytes_per_sync`), so the sync that finishes it has little left to wait for: a table when
/// finished, the MANIFEST per edit. It is a hint: nothing becomes durable by it, nothing is
/// written that the sync would not write, and its errors are left to the sync.
///
/// Logs (`*.log`) are left to the page cache: an unsynced log is not synced at its memtable
/// switch (the marker keeps recovery a prefix, `db/write.rs`) and is usually deleted once its
/// memtable is flushed, before the kernel would write it at all. Starting its writeback
/// wrote every logged byte to the device for nothing, and the flush's table sync and the
/// log's unlink then waited behind it (fill100K 1 M: table fdatasync 9 ms instead of 2, an
/// unlink 5 ms instead of 0.8; Google's LevelDB never writes such a log back). A synced
/// write syncs the log itself.
const WRITEBACK_BYTES: u64 = 1 << 20;

/// Whether a file created at `path` gets early writeback (see `WRITEBACK_BYTES`).
fn early_writeback(path: &str) -> bool {
    !path.ends_with(".log")
}

/// A synced log is extended with zeros ahead of its records, so that most synced writes
/// overwrite blocks already allocated and written, and `fdatasync` flushes the data alone.
/// A write past the end of a file changes its size, which `fdatasync` must also make durable:
/// on ext4 a journal commit per synced write, the cost that separated fillsync from Google's
/// LevelDB (an append plus `fdatasync` of 140 bytes: 247-309 us; an overwrite: 197-237 us,
/// on this machine's disk).
///
/// Only a log created here and synced is extended: at its first sync (which commits the
/// file's size anyway), then ahead of any append that would pass the zeros, to `len + grow`
/// rounded up to the log's 32 KiB blocks, `grow` doubling from `PREFILL_MIN` to
/// `PREFILL_MAX`. So a synced log's size is always a block boundary, which tells recovery the
/// log may hold holes (`log::Reader::ending_at_holes`). A log never synced is never extended
/// (no bytes written for nothing). Zeros are what LevelDB's log readers (and
/// Strata's, `log::reader`) skip as preallocated space, without reporting damage; because the
/// zeros end on a block boundary, a writer that reopens the log to append (LevelDB's
/// `reuse_logs`) starts a fresh block after them. Dropping a writer whose records are all
/// synced cuts the zeros off, so such a closed database's log is exactly its records; otherwise
/// (and after a crash) they stay, and recovery does not count them as dropped bytes. A failed
/// extension only ends extending: the sync goes on.
#[cfg(unix)]
const PREFILL_MIN: u64 = 64 << 10;
#[cfg(unix)]
const PREFILL_MAX: u64 = 1 << 20;

/// The zero-filled space past a synced log's records (`PREFILL_MIN`).
#[cfg(unix)]
struct Prefill {
    /// Where the zeros end: the file's size once they are written.
    end: u64,
    /// The next extension's size.
    grow: u64,
    /// Set by the first sync: from then on the zeros stay ahead of every append, so the
    /// file's size is always a block boundary and a recovering reader knows it may hold
    /// holes (`log::Reader::ending_at_holes`).
    active: bool,
    /// The file's length at the last sync: a writer dropped with nothing unsynced cuts the
    /// zeros off (no hole can be left), one with unsynced records keeps them.
    synced: u64,
}

struct FsWriter {
    file: io::BufWriter<File>,
    path: String,
    /// The file's length, counting buffered bytes.
    len: u64,
    /// Where the bytes not yet handed to writeback (or synced) start.
    writeback_from: u64,
    /// Whether appends start writeback (`early_writeback`).
    writeback: bool,
    /// Zeros ahead of a synced log's records (`PREFILL_MIN`); `None` for other files, for a
    /// log opened to append, and after a failed extension or write.
    #[cfg(unix)]
    prefill: Option<Prefill>,
}

impl FsWriter {
    fn new(file: File, path: &str, len: u64) -> Self {
        FsWriter {
            file: io::BufWriter::with_capacity(64 * 1024, file),
            path: path.to_string(),
            len,
            writeback_from: len,
            writeback: early_writeback(path),
            #[cfg(unix)]
            prefill: None,
        }
    }

    /// Extends a synced log's zeros so that they reach past `needed` bytes (`PREFILL_MIN`), from
    /// where they end (or from the records' end, the first time).
    #[cfg(unix)]
    fn extend_prefill(&mut self, needed: u64) {
        use std::os::unix::fs::FileExt;
        let Some(p) = &mut self.prefill else {
            return;
        };
        if needed <= p.end {
            return;
        }
        let block = crate::log::BLOCK_SIZE as u64;
        let end = (needed + p.grow).div_ceil(block) * block;
        static ZEROS: [u8; 64 << 10] = [0; 64 << 10];
        let file = self.file.get_ref();
        let mut at = p.end.max(self.len);
        while at < end {
            // Every write ends on a block boundary, so the file does wherever a crash stops
            // them (a peer appending after the zeros starts a fresh block).
            let n = (end - at).min(ZEROS.len() as u64 - at % block) as usize;
            if file.write_all_at(&ZEROS[..n], at).is_err() {
                // No room, say: stop extending. The zeros written stay (they end on a block
                // boundary); records past them grow the file as in any log.
                self.prefill = None;
                return;
            }
            at += n as u64;
        }
        p.end = end;
        p.grow = (p.grow * 2).min(PREFILL_MAX);
    }

    fn start_writeback(&mut self) -> Result<()> {
        self.flush()?;
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: a plain system call on a descriptor this writer owns.
            #[allow(unsafe_code)]
            unsafe {
                libc::sync_file_range(
                    self.file.get_ref().as_raw_fd(),
                    self.writeback_from as libc::off64_t,
                    (self.len - self.writeback_from) as libc::off64_t,
                    libc::SYNC_FILE_RANGE_WRITE,
                );
            }
        }
        self.writeback_from = self.len;
        Ok(())
    }

    /// `fdatasync`s what was handed to the file.
    fn sync_written(&mut self) -> Result<()> {
        self.file
            .get_ref()
            .sync_data()
            .map_err(|e| io_err(&self.path, e))?;
        self.writeback_from = self.len;
        #[cfg(unix)]
        if let Some(p) = &mut self.prefill {
            p.synced = self.len;
        }
        Ok(())
    }

    /// After a failed write the file's contents past the last sync are unknown: its zeros are
    /// left as they are (never cut at a length that may not hold the records).
    fn stop_prefill(&mut self) {
        #[cfg(unix)]
        {
            self.prefill = None;
        }
    }
}

impl WritableFile for FsWriter {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        #[cfg(unix)]
        if self.prefill.as_ref().is_some_and(|p| p.active) {
            self.extend_prefill(self.len + data.len() as u64);
        }
        if let Err(e) = self.file.write_all(data) {
            self.stop_prefill();
            return Err(io_err(&self.path, e));
        }
        self.len += data.len() as u64;
        if self.writeback && self.len - self.writeback_from >= WRITEBACK_BYTES {
            self.start_writeback()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if let Err(e) = self.file.flush() {
            self.stop_prefill();
            return Err(io_err(&self.path, e));
        }
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        self.flush()?;
        #[cfg(unix)]
        {
            if let Some(p) = &mut self.prefill {
                p.active = true;
            }
            self.extend_prefill(self.len);
        }
        self.sync_written()
    }

    fn sync_final(&mut self) -> Result<()> {
        self.flush()?;
        self.sync_written()
    }
}

impl Drop for FsWriter {
    fn drop(&mut self) {
        if self.file.flush().is_err() {
            return;
        }
        // A closed log whose records are all synced ends with its last record, as one that
        // was never extended. With records unsynced, the zeros stay: cutting them could leave
        // a size that says no hole is possible where a power cut still can leave one.
        #[cfg(unix)]
        if let Some(p) = &self.prefill {
            if p.end > self.len && p.synced == self.len {
                let _ = self.file.get_ref().set_len(self.len);
            }
        }
    }
}

/// A lock held by this process: its descriptor (closed when the last holder lets go).
struct Held {
    exclusive: bool,
    holders: usize,
    _file: Arc<File>,
}

/// Every `LOCK` this process holds, by canonical path.
static HELD: Mutex<Option<HashMap<PathBuf, Held>>> = Mutex::new(None);

struct FsLock {
    key: PathBuf,
}

impl FileLock for FsLock {}

impl Drop for FsLock {
    fn drop(&mut self) {
        let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
        let table = held.get_or_insert_with(HashMap::new);
        if let Some(h) = table.get_mut(&self.key) {
            h.holders -= 1;
            if h.holders == 0 {
                table.remove(&self.key);
            }
        }
    }
}

/// The canonical path of a lock file (its folder must exist; the file need not).
fn lock_key(path: &str) -> Result<PathBuf> {
    let p = Path::new(path);
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let dir = std::fs::canonicalize(dir).map_err(|e| io_err(path, e))?;
    Ok(dir.join(p.file_name().unwrap_or_default()))
}

fn in_use(path: &str) -> Error {
    Error::locked(format!("{path}: the database is in use by another opener"))
}

/// A POSIX record lock over the whole file, as LevelDB's `LockFile` takes (`F_SETLK`: fails
/// at once if another process holds a conflicting one).
#[cfg(unix)]
#[allow(unsafe_code)]
fn record_lock(file: &File, path: &str, exclusive: bool) -> Result<()> {
    use std::os::unix::io::AsRawFd;
    // SAFETY: `libc::flock` is a plain C struct for which all-zero bytes are a valid value.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = (if exclusive {
        libc::F_WRLCK
    } else {
        libc::F_RDLCK
    }) as _;
    fl.l_whence = libc::SEEK_SET as _;
    fl.l_start = 0;
    fl.l_len = 0; // to the end of the file, however long
                  // SAFETY: the descriptor is open (owned by `file`, borrowed for the call) and `fl` is a
                  // valid `flock` that outlives the call; F_SETLK only reads it.
    let r = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLK, &fl as *const libc::flock) };
    if r == -1 {
        let e = io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::EAGAIN) | Some(libc::EACCES) => in_use(path),
            _ => io_err(path, e),
        });
    }
    Ok(())
}

/// The lock this platform's LevelDB takes: a POSIX record lock on Unix, `LockFileEx` (through
/// `File::try_lock`) elsewhere.
fn platform_lock(file: &File, path: &str, exclusive: bool) -> Result<()> {
    #[cfg(unix)]
    {
        record_lock(file, path, exclusive)
    }
    #[cfg(not(unix))]
    {
        if exclusive {
            file.try_lock().map_err(|e| lock_error(path, e))
        } else {
            file.try_lock_shared().map_err(|e| lock_error(path, e))
        }
    }
}

#[cfg(not(unix))]
fn lock_error(path: &str, e: std::fs::TryLockError) -> Error {
    match e {
        std::fs::TryLockError::WouldBlock => in_use(path),
        std::fs::TryLockError::Error(e) => io_err(path, e),
    }
}

impl Storage for FsStorage {
    fn open_random(&self, path: &str) -> Result<Arc<dyn RandomAccessFile>> {
        let file = File::open(path).map_err(|e| io_err(path, e))?;
        let is_table = path.ends_with(".ldb") || path.ends_with(".sst");
        let map = if self.map_tables && is_table {
            TableMap::new(&file).map(bytes::Bytes::from_owner)
        } else {
            None
        };
        Ok(Arc::new(FsFile {
            file,
            path: path.to_string(),
            map,
        }))
    }

    fn create(&self, path: &str) -> Result<Box<dyn WritableFile>> {
        let file = File::create(path).map_err(|e| io_err(path, e))?;
        #[allow(unused_mut)]
        let mut w = FsWriter::new(file, path, 0);
        #[cfg(unix)]
        if path.ends_with(".log") {
            w.prefill = Some(Prefill {
                end: 0,
                grow: PREFILL_MIN,
                active: false,
                synced: 0,
            });
        }
        Ok(Box::new(w))
    }

    fn append(&self, path: &str) -> Result<Box<dyn WritableFile>> {
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(|e| io_err(path, e))?;
        let len = file.metadata().map_err(|e| io_err(path, e))?.len();
        Ok(Box::new(FsWriter::new(file, path, len)))
    }

    fn exists(&self, path: &str) -> bool {
        std::path::Path::new(path).exists()
    }

    fn file_size(&self, path: &str) -> Result<u64> {
        Ok(std::fs::metadata(path).map_err(|e| io_err(path, e))?.len())
    }

    fn list(&self, dir: &str) -> Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(|e| io_err(dir, e))? {
            let entry = entry.map_err(|e| io_err(dir, e))?;
            if let Some(name) = entry.file_name().to_str() {
                names.push(name.to_string());
            }
        }
        Ok(names)
    }

    fn remove(&self, path: &str) -> Result<()> {
        std::fs::remove_file(path).map_err(|e| io_err(path, e))
    }

    fn rename(&self, from: &str, to: &str) -> Result<()> {
        std::fs::rename(from, to).map_err(|e| io_err(from, e))
    }

    fn create_dir_all(&self, path: &str) -> Result<()> {
        std::fs::create_dir_all(path).map_err(|e| io_err(path, e))
    }

    fn lock(&self, path: &str) -> Result<Box<dyn FileLock>> {
        let key = lock_key(path)?;
        let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
        let table = held.get_or_insert_with(HashMap::new);
        if table.contains_key(&key) {
            return Err(in_use(path));
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| io_err(path, e))?;
        platform_lock(&file, path, true)?;
        table.insert(
            key.clone(),
            Held {
                exclusive: true,
                holders: 1,
                _file: Arc::new(file),
            },
        );
        Ok(Box::new(FsLock { key }))
    }

    fn lock_shared(&self, path: &str) -> Result<Option<Box<dyn FileLock>>> {
        if !Path::new(path).exists() {
            return Ok(None);
        }
        let key = lock_key(path)?;
        let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
        let table = held.get_or_insert_with(HashMap::new);
        if let Some(h) = table.get_mut(&key) {
            if h.exclusive {
                return Err(in_use(path));
            }
            h.holders += 1;
            return Ok(Some(Box::new(FsLock { key })));
        }
        let file = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(path, e)),
        };
        platform_lock(&file, path, false)?;
        table.insert(
            key.clone(),
            Held {
                exclusive: false,
                holders: 1,
                _file: Arc::new(file),
            },
        );
        Ok(Some(Box::new(FsLock { key })))
    }

    fn sync_dir(&self, dir: &str) -> Result<()> {
        #[cfg(unix)]
        {
            let d = File::open(dir).map_err(|e| io_err(dir, e))?;
            d.sync_all().map_err(|e| io_err(dir, e))?;
        }
        let _ = dir;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    /// A synced log is extended with zeros to block boundaries, doubling, ahead of every
    /// append once synced; a log never synced, a table and a log opened to append never are;
    /// dropping the writer cuts the zeros off when every record is synced.
    #[cfg(unix)]
    #[test]
    fn a_synced_log_is_extended_with_zeros_and_cut_back_when_closed() {
        use super::super::Storage;
        let dir = tempfile::tempdir().unwrap();
        let fs = super::FsStorage::new();
        let path = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
        let size = |n: &str| std::fs::metadata(dir.path().join(n)).unwrap().len();
        let record = vec![0xA5u8; 1000];

        let log = path("000003.log");
        let mut w = fs.create(&log).unwrap();
        w.append(&record).unwrap();
        w.flush().unwrap();
        assert_eq!(size("000003.log"), 1000, "an unsynced log is not extended");
        w.sync().unwrap();
        // 1,000 + 64 KiB, up to a 32 KiB block boundary.
        assert_eq!(size("000003.log"), 98_304);
        let bytes = std::fs::read(dir.path().join("000003.log")).unwrap();
        assert_eq!(&bytes[..1000], &record[..]);
        assert!(bytes[1000..].iter().all(|&b| b == 0));
        // Syncs inside the zeros overwrite them; the size stays.
        for _ in 0..97 {
            w.append(&record).unwrap();
            w.sync().unwrap();
        }
        assert_eq!(size("000003.log"), 98_304);
        // The 99th record crosses the end: 99,000 + 128 KiB, rounded up to a block.
        w.append(&record).unwrap();
        w.sync().unwrap();
        assert_eq!(size("000003.log"), 262_144);
        // Unsynced appends too: the zeros stay ahead (the append that would pass them, at
        // 262,000 bytes, extends to 263,000 + 256 KiB rounded up to a block), so the size is a
        // block boundary whatever is synced.
        for _ in 0..170 {
            w.append(&record).unwrap();
        }
        w.flush().unwrap();
        assert_eq!(size("000003.log"), 557_056);
        w.sync().unwrap();
        assert_eq!(size("000003.log"), 557_056);
        drop(w);
        assert_eq!(
            size("000003.log"),
            269_000,
            "closing with all synced cuts the zeros off"
        );
        let bytes = std::fs::read(dir.path().join("000003.log")).unwrap();
        assert!(bytes.iter().all(|&b| b == 0xA5));

        // Reopened to append (LevelDB's reuse_logs): never extended.
        let mut w = fs.append(&log).unwrap();
        w.append(&record).unwrap();
        w.sync().unwrap();
        assert_eq!(size("000003.log"), 270_000);
        drop(w);

        // Tables and the MANIFEST are synced once, finished: never extended.
        for name in ["000004.ldb", "MANIFEST-000002"] {
            let mut w = fs.create(&path(name)).unwrap();
            w.append(&record).unwrap();
            w.sync().unwrap();
            assert_eq!(size(name), 1000, "{name}");
        }

        // A log dropped by a crash (the writer never dropped) keeps its zeros; so does one
        // closed with records unsynced.
        let mut w = fs.create(&path("000005.log")).unwrap();
        w.append(&record).unwrap();
        w.sync().unwrap();
        std::mem::forget(w);
        assert_eq!(size("000005.log"), 98_304);
        let mut w = fs.create(&path("000006.log")).unwrap();
        w.append(&record).unwrap();
        w.sync().unwrap();
        w.append(&record).unwrap();
        drop(w);
        assert_eq!(size("000006.log"), 98_304);
        let bytes = std::fs::read(dir.path().join("000006.log")).unwrap();
        assert!(bytes[..2000].iter().all(|&b| b == 0xA5));
        assert!(bytes[2000..].iter().all(|&b| b == 0));
    }

    #[test]
    fn conformance() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("db");
        super::super::conformance::run(&super::FsStorage::new(), root.to_str().unwrap());
        let root = dir.path().join("db-pread");
        super::super::conformance::run(&super::FsStorage::without_mmap(), root.to_str().unwrap());
    }

    #[test]
    fn tables_are_mapped_and_read_the_same_bytes() {
        use super::super::Storage;
        let dir = tempfile::tempdir().unwrap();
        let bytes: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let fs = super::FsStorage::new();
        for name in ["000007.ldb", "000008.sst", "000009.log", "MANIFEST-000002"] {
            let path = dir.path().join(name);
            std::fs::write(&path, &bytes).unwrap();
            let f = fs.open_random(path.to_str().unwrap()).unwrap();
            let table = name.ends_with(".ldb") || name.ends_with(".sst");
            assert_eq!(
                f.mapped_shared().map(|m| m.len()),
                table.then_some(100_000),
                "{name}"
            );
            if let Some(m) = f.mapped_shared() {
                assert_eq!(m, &bytes[..]);
            }
            let mut buf = vec![0; 1000];
            assert_eq!(f.read_at(99_500, &mut buf).unwrap(), 500);
            assert_eq!(&buf[..500], &bytes[99_500..]);
            let plain = super::FsStorage::without_mmap();
            assert!(plain
                .open_random(path.to_str().unwrap())
                .unwrap()
                .mapped_shared()
                .is_none());
        }
        // An empty table cannot be mapped; it reads as empty.
        let empty = dir.path().join("000010.ldb");
        std::fs::write(&empty, b"").unwrap();
        let f = fs.open_random(empty.to_str().unwrap()).unwrap();
        assert!(f.mapped_shared().is_none());
        assert_eq!(f.read_at(0, &mut [0; 4]).unwrap(), 0);
    }

    /// Early writeback is for files that will be synced (tables, the MANIFEST), not logs:
    /// an unsynced log is deleted after its flush, usually before the kernel writes it.
    /// Either way every appended byte reads back.
    #[test]
    fn early_writeback_skips_logs() {
        use crate::storage::Storage;
        let dir = tempfile::tempdir().unwrap();
        let fs = super::FsStorage::new();
        for (name, writeback) in [
            ("000007.log", false),
            ("000008.ldb", true),
            ("MANIFEST-000002", true),
            ("000009.dbtmp", true),
        ] {
            assert_eq!(super::early_writeback(name), writeback, "{name}");
            let path = dir.path().join(name);
            let path = path.to_str().unwrap();
            let mut w = fs.create(path).unwrap();
            let chunk: Vec<u8> = (0..64 * 1024).map(|i| (i % 251) as u8).collect();
            for _ in 0..40 {
                w.append(&chunk).unwrap();
            }
            w.sync().unwrap();
            drop(w);
            let got = std::fs::read(path).unwrap();
            assert_eq!(got.len(), 40 * 64 * 1024, "{name}");
            assert!(got.chunks(chunk.len()).all(|c| c == &chunk[..]), "{name}");
        }
    }
}
