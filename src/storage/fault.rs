//! Fault injection: a wrapper over any storage that knows what a power loss would leave, and
//! that fails, tears or runs out of space on demand (LevelDB's `fault_injection_test` env).
//!
//! Role: the one tool behind the crash-point, disk-full and I/O-error tests. Every mutating
//! call goes to the wrapped storage; reads pass through untouched and are not counted.
//!
//! Durability model (what `crash_image` returns):
//! - File contents: a file's bytes are durable up to the length it had at its last `sync`;
//!   later appends are dropped. Files the wrapper never wrote (found in a folder the first
//!   time it is touched) are durable in full.
//! - Folder entries, per [`DirPolicy`]:
//!   - `KeepEntries`: creates, renames and removes are durable at once (a journaling file
//!     system that orders metadata, and what most engines assume).
//!   - `DropUnsyncedEntries`: a folder's entries are durable only as of its last `sync_dir`.
//!     The crash image holds the folder exactly as it was then: files created since vanish,
//!     files removed since come back (with their durable bytes), a rename since is undone
//!     (so `CURRENT` is either the old or the new one, never missing). This is stricter than
//!     LevelDB's test env (which only deletes unsynced new files) and is one outcome POSIX
//!     allows: no directory change reached the disk before the crash.
//!
//! Faults (all counted in operations of a kind since the wrapper was made, 1-based):
//! - `fail_nth(kind, n)`: the n-th operation of that kind fails with `Io` and does nothing;
//!   later ones succeed.
//! - `crash_at(n, tear)`: the n-th mutating operation of any kind is where the machine dies.
//!   It and every later mutating operation fail with `Io` ("simulated crash") and change
//!   nothing. With `tear = Some(k)`, if that operation is an append, its first `k` bytes
//!   reach the file and the whole file as it then stands counts as durable (a torn write:
//!   the disk persisted part of the unsynced tail).
//! - `set_space(Some(bytes))`: appends may write that many more bytes; an append that does
//!   not fit fails with `NoSpace` and writes nothing, until `set_space(None)`.
//!
//! Invariants: every mutating call is counted exactly once, before it is attempted, so a run
//! that counted `n` operations can be replayed crashing at each of `1..=n`. The wrapper's
//! bookkeeping changes only when the wrapped call succeeds.
//!
//! Thread-safety: one mutex guards the bookkeeping and is held across each wrapped mutating
//! call, so counts are exact under concurrency; the order of concurrent calls is whatever the
//! threads make it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use super::{
    base_name, join, read_exact_at, FileLock, MemStorage, RandomAccessFile, Storage, WritableFile,
};
use crate::error::{Error, ErrorKind, Result};

/// What a crash does to folder entries made since the folder was last synced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirPolicy {
    KeepEntries,
    DropUnsyncedEntries,
}

/// The kinds of mutating operation that are counted and can be failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// `WritableFile::append`.
    Append,
    /// `WritableFile::sync`.
    Sync,
    Rename,
    /// `Storage::create` and `Storage::append` (opening a file for writing).
    Create,
    Remove,
    SyncDir,
}

const KINDS: usize = 6;

impl OpKind {
    fn index(self) -> usize {
        self as usize
    }
}

/// One counted operation, as journaled by [`FaultStorage::record_ops`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Op {
    pub kind: OpKind,
    pub path: String,
    /// Bytes of an append (0 for other kinds).
    pub len: usize,
}

/// Operations counted so far, per kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpCounts([u64; KINDS]);

impl OpCounts {
    pub fn get(&self, kind: OpKind) -> u64 {
        self.0[kind.index()]
    }
    /// Every mutating operation: the crash points of a run.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
}

struct Inode {
    /// Bytes written through the wrapper (or found at adoption).
    len: u64,
    /// Bytes as of the last sync.
    durable: u64,
    /// Where the file lives now; `None` once removed or replaced.
    path: Option<String>,
    /// Durable bytes kept when the file left the namespace while a synced folder still
    /// names it (only under `DropUnsyncedEntries`).
    saved: Option<Arc<Vec<u8>>>,
}

#[derive(Default)]
struct State {
    counts: OpCounts,
    fail: HashSet<(usize, u64)>,
    crash_at: Option<(u64, Option<usize>)>,
    crashed: bool,
    space: Option<u64>,
    journal: Option<Vec<Op>>,
    next_inode: u64,
    inodes: HashMap<u64, Inode>,
    /// Path → inode, for every file of a known folder.
    live: HashMap<String, u64>,
    /// Folder → its entries as of its last `sync_dir` (or first sight).
    synced: BTreeMap<String, BTreeMap<String, u64>>,
}

struct Shared {
    inner: Arc<dyn Storage>,
    policy: DirPolicy,
    state: Mutex<State>,
}

/// A storage wrapper that tracks durability and injects faults. Cloning shares the state.
#[derive(Clone)]
pub struct FaultStorage {
    shared: Arc<Shared>,
}

fn parent(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

fn crash_error(path: &str) -> Error {
    Error::io("simulated crash: the machine is down").in_file(base_name(path))
}

impl Shared {
    /// Counts one operation and decides whether it may run. `Ok(Some(k))`: a torn append
    /// keeping `k` bytes.
    fn admit(&self, st: &mut State, kind: OpKind, path: &str, len: usize) -> Result<Option<usize>> {
        if st.crashed {
            return Err(crash_error(path));
        }
        st.counts.0[kind.index()] += 1;
        if let Some(journal) = st.journal.as_mut() {
            journal.push(Op {
                kind,
                path: path.to_string(),
                len,
            });
        }
        let n = st.counts.0[kind.index()];
        if let Some((at, tear)) = st.crash_at {
            if st.counts.total() == at {
                st.crashed = true;
                return match (kind, tear) {
                    (OpKind::Append, Some(k)) => Ok(Some(k)),
                    _ => Err(crash_error(path)),
                };
            }
        }
        if st.fail.remove(&(kind.index(), n)) {
            return Err(
                Error::io(format!("injected {kind:?} failure #{n}")).in_file(base_name(path))
            );
        }
        Ok(None)
    }

    /// Makes a folder known: adopts every file in it as durable and its entries as synced.
    fn know_dir(&self, st: &mut State, dir: &str) {
        if st.synced.contains_key(dir) {
            return;
        }
        let mut entries = BTreeMap::new();
        for name in self.inner.list(dir).unwrap_or_default() {
            let path = join(dir, &name);
            let len = self.inner.file_size(&path).unwrap_or(0);
            let id = Self::new_inode(st, &path, len, len);
            entries.insert(name, id);
        }
        st.synced.insert(dir.to_string(), entries);
    }

    fn new_inode(st: &mut State, path: &str, len: u64, durable: u64) -> u64 {
        st.next_inode += 1;
        let id = st.next_inode;
        st.inodes.insert(
            id,
            Inode {
                len,
                durable,
                path: Some(path.to_string()),
                saved: None,
            },
        );
        st.live.insert(path.to_string(), id);
        id
    }

    /// The file at `path` leaves the namespace; keeps its durable bytes if a synced folder
    /// still names it.
    fn unlink(&self, st: &mut State, path: &str) {
        let Some(id) = st.live.remove(path) else {
            return;
        };
        let named = st.synced.values().any(|e| e.values().any(|&i| i == id));
        let saved = if named && self.policy == DirPolicy::DropUnsyncedEntries {
            let durable = st.inodes[&id].durable;
            Some(Arc::new(self.durable_bytes(path, durable)))
        } else {
            None
        };
        if let Some(inode) = st.inodes.get_mut(&id) {
            inode.path = None;
            inode.saved = saved;
        }
    }

    fn durable_bytes(&self, path: &str, durable: u64) -> Vec<u8> {
        self.inner
            .open_random(path)
            .and_then(|f| read_exact_at(&*f, 0, durable as usize))
            .unwrap_or_default()
    }
}

impl FaultStorage {
    /// Wraps `inner` keeping folder entries at once (`DirPolicy::KeepEntries`).
    pub fn new(inner: Arc<dyn Storage>) -> Self {
        Self::with_policy(inner, DirPolicy::KeepEntries)
    }

    pub fn with_policy(inner: Arc<dyn Storage>, policy: DirPolicy) -> Self {
        FaultStorage {
            shared: Arc::new(Shared {
                inner,
                policy,
                state: Mutex::new(State::default()),
            }),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.shared.state.lock().unwrap()
    }

    /// Operations counted so far.
    pub fn counts(&self) -> OpCounts {
        self.state().counts
    }

    /// Fails the `n`-th operation of `kind` (1-based, counted since the wrapper was made).
    pub fn fail_nth(&self, kind: OpKind, n: u64) {
        self.state().fail.insert((kind.index(), n));
    }

    /// Crashes at the `n`-th mutating operation (1-based), tearing it if it is an append.
    pub fn crash_at(&self, n: u64, tear: Option<usize>) {
        self.state().crash_at = Some((n, tear));
    }

    /// Starts journaling every counted operation (for choosing crash and tear points).
    pub fn record_ops(&self) {
        self.state().journal.get_or_insert_with(Vec::new);
    }

    /// The operations journaled since `record_ops`, in order.
    pub fn ops(&self) -> Vec<Op> {
        self.state().journal.clone().unwrap_or_default()
    }

    /// Whether the simulated crash has happened.
    pub fn crashed(&self) -> bool {
        self.state().crashed
    }

    /// Bytes appends may still write (`None`: unlimited).
    pub fn set_space(&self, bytes: Option<u64>) {
        self.state().space = bytes;
    }

    /// Bytes of `path` that a crash now would keep (`None` if a crash would lose the file's
    /// contents entirely or the wrapper does not know it).
    pub fn durable_len(&self, path: &str) -> Option<u64> {
        let st = self.state();
        st.live.get(path).map(|id| st.inodes[id].durable)
    }

    /// What a power loss now would leave: a new in-memory storage with the durable state of
    /// every folder the wrapper has seen.
    pub fn crash_image(&self) -> MemStorage {
        let mut st = self.state();
        let image = MemStorage::new();
        let dirs: Vec<String> = st.synced.keys().cloned().collect();
        for dir in &dirs {
            let _ = image.create_dir_all(dir);
            // Files that slipped past the wrapper (a LOCK file) are taken as they are.
            for name in self.shared.inner.list(dir).unwrap_or_default() {
                let path = join(dir, &name);
                if !st.live.contains_key(&path) {
                    let len = self.shared.inner.file_size(&path).unwrap_or(0);
                    Shared::new_inode(&mut st, &path, len, len);
                }
            }
            let entries: Vec<(String, u64)> = match self.shared.policy {
                DirPolicy::KeepEntries => st
                    .live
                    .iter()
                    .filter(|(p, _)| parent(p) == dir)
                    .map(|(p, &id)| (base_name(p).to_string(), id))
                    .collect(),
                DirPolicy::DropUnsyncedEntries => st.synced[dir]
                    .iter()
                    .map(|(n, &id)| (n.clone(), id))
                    .collect(),
            };
            for (name, id) in entries {
                let inode = &st.inodes[&id];
                let bytes = match (&inode.path, &inode.saved) {
                    (Some(p), _) => self.shared.durable_bytes(p, inode.durable),
                    (None, Some(saved)) => saved.to_vec(),
                    (None, None) => continue,
                };
                let _ = super::write_all(&image, &join(dir, &name), &bytes);
            }
        }
        image
    }
}

struct FaultWriter {
    shared: Arc<Shared>,
    inner: Box<dyn WritableFile>,
    inode: u64,
    path: String,
}

impl WritableFile for FaultWriter {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        let shared = self.shared.clone();
        let mut st = shared.state.lock().unwrap();
        let tear = shared.admit(&mut st, OpKind::Append, &self.path, data.len())?;
        if let Some(keep) = tear {
            let keep = keep.min(data.len());
            let _ = self.inner.append(&data[..keep]);
            let _ = self.inner.flush();
            if let Some(inode) = st.inodes.get_mut(&self.inode) {
                inode.len += keep as u64;
                inode.durable = inode.len;
            }
            return Err(crash_error(&self.path));
        }
        if let Some(space) = st.space {
            if (data.len() as u64) > space {
                return Err(Error::new(
                    ErrorKind::NoSpace,
                    format!("no space left for {} bytes", data.len()),
                )
                .in_file(base_name(&self.path)));
            }
            st.space = Some(space - data.len() as u64);
        }
        self.inner.append(data)?;
        if let Some(inode) = st.inodes.get_mut(&self.inode) {
            inode.len += data.len() as u64;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.shared.state.lock().unwrap().crashed {
            return Err(crash_error(&self.path));
        }
        self.inner.flush()
    }

    fn sync(&mut self) -> Result<()> {
        let shared = self.shared.clone();
        let mut st = shared.state.lock().unwrap();
        shared.admit(&mut st, OpKind::Sync, &self.path, 0)?;
        self.inner.sync()?;
        if let Some(inode) = st.inodes.get_mut(&self.inode) {
            inode.durable = inode.len;
        }
        Ok(())
    }
}

impl FaultStorage {
    fn open_writer(&self, path: &str, truncate: bool) -> Result<Box<dyn WritableFile>> {
        let shared = &self.shared;
        let mut st = shared.state.lock().unwrap();
        shared.know_dir(&mut st, parent(path));
        shared.admit(&mut st, OpKind::Create, path, 0)?;
        let existing = st.live.get(path).copied();
        let inner = if truncate {
            shared.inner.create(path)?
        } else {
            shared.inner.append(path)?
        };
        let inode = match existing {
            Some(id) if !truncate => id,
            _ => {
                shared.unlink(&mut st, path);
                Shared::new_inode(&mut st, path, 0, 0)
            }
        };
        Ok(Box::new(FaultWriter {
            shared: shared.clone(),
            inner,
            inode,
            path: path.to_string(),
        }))
    }
}

impl Storage for FaultStorage {
    fn open_random(&self, path: &str) -> Result<Arc<dyn RandomAccessFile>> {
        self.shared.inner.open_random(path)
    }

    fn create(&self, path: &str) -> Result<Box<dyn WritableFile>> {
        self.open_writer(path, true)
    }

    fn append(&self, path: &str) -> Result<Box<dyn WritableFile>> {
        self.open_writer(path, false)
    }

    fn exists(&self, path: &str) -> bool {
        self.shared.inner.exists(path)
    }

    fn file_size(&self, path: &str) -> Result<u64> {
        self.shared.inner.file_size(path)
    }

    fn list(&self, dir: &str) -> Result<Vec<String>> {
        self.shared.inner.list(dir)
    }

    fn remove(&self, path: &str) -> Result<()> {
        let shared = &self.shared;
        let mut st = shared.state.lock().unwrap();
        shared.know_dir(&mut st, parent(path));
        shared.admit(&mut st, OpKind::Remove, path, 0)?;
        // Keep the durable bytes before the file is gone.
        if shared.inner.exists(path) {
            shared.unlink(&mut st, path);
        }
        shared.inner.remove(path)
    }

    fn rename(&self, from: &str, to: &str) -> Result<()> {
        let shared = &self.shared;
        let mut st = shared.state.lock().unwrap();
        shared.know_dir(&mut st, parent(from));
        shared.know_dir(&mut st, parent(to));
        shared.admit(&mut st, OpKind::Rename, from, 0)?;
        if !shared.inner.exists(from) {
            return shared.inner.rename(from, to);
        }
        shared.unlink(&mut st, to);
        shared.inner.rename(from, to)?;
        if let Some(id) = st.live.remove(from) {
            st.live.insert(to.to_string(), id);
            if let Some(inode) = st.inodes.get_mut(&id) {
                inode.path = Some(to.to_string());
            }
        }
        Ok(())
    }

    fn create_dir_all(&self, path: &str) -> Result<()> {
        if self.state().crashed {
            return Err(crash_error(path));
        }
        self.shared.inner.create_dir_all(path)?;
        let mut st = self.state();
        self.shared.know_dir(&mut st, path);
        Ok(())
    }

    fn lock(&self, path: &str) -> Result<Box<dyn FileLock>> {
        self.shared.inner.lock(path)
    }

    fn lock_shared(&self, path: &str) -> Result<Option<Box<dyn FileLock>>> {
        self.shared.inner.lock_shared(path)
    }

    fn sync_dir(&self, dir: &str) -> Result<()> {
        let shared = &self.shared;
        let mut st = shared.state.lock().unwrap();
        shared.know_dir(&mut st, dir);
        shared.admit(&mut st, OpKind::SyncDir, dir, 0)?;
        shared.inner.sync_dir(dir)?;
        let entries: BTreeMap<String, u64> = st
            .live
            .iter()
            .filter(|(p, _)| parent(p) == dir)
            .map(|(p, &id)| (base_name(p).to_string(), id))
            .collect();
        st.synced.insert(dir.to_string(), entries);
        // Removed files no synced folder names any more need not be kept.
        let named: HashSet<u64> = st
            .synced
            .values()
            .flat_map(|e| e.values().copied())
            .collect();
        st.inodes
            .retain(|id, inode| inode.path.is_some() || named.contains(id));
        Ok(())
    }
}

#[cfg(test)]
mod tests;
