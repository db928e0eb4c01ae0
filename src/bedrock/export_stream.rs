//! `.mcworld` export in bounded steps, through storage files: the world is copied into a
//! temporary folder of a scratch storage (a browser's OPFS or IndexedDB store, a folder on
//! disk, memory), the copy is compacted there, and the zip is appended to a file of that same
//! folder. Peak memory is the scratch database's caches and a few buffers, whatever the world's
//! size; each `step` does a bounded piece of work (a budget of bytes copied or zipped, one
//! compaction), so a host without threads reports progress and can stop between steps.
//!
//! Invariants: the world is only read (its file list and sizes are taken at the start; a file
//! that shrank or vanished meanwhile fails the export); the zip is byte-identical to
//! `export::export` of the same world (same file order, the same compaction steps, stored
//! entries' CRC-32 read first so the zip file is only appended to); the temporary folder is
//! removed on failure, on `cancel` and when dropped unfinished, and a leftover of a crash is
//! removed at the start of the next export into it; on success only the zip remains there
//! (`ZIP_NAME`) until `finish` moves it or the caller takes it and calls `discard`. A step
//! creates at most `FILES_PER_STEP` files when copying (OPFS opens file handles between
//! engine calls).

use std::collections::BTreeSet;
use std::io::Write;
use std::sync::Arc;

use super::db_dir_of;
use super::export::{world_files, ExportReport, DEFLATE_MAX};
use super::zip_writer::ZipWriter;
use crate::db::CompactSteps;
use crate::error::{Error, ErrorKind, Result};
use crate::storage::{self, RandomAccessFile, Storage, WritableFile};
use crate::{Db, Options};

/// The zip's name inside the temporary folder.
pub const ZIP_NAME: &str = "world.mcworld";
/// The copy's folder inside the temporary folder.
const COPY_DIR: &str = "world";
/// Bytes read or written per storage call.
const CHUNK: u64 = 1 << 20;
/// Most files a copy step creates.
const FILES_PER_STEP: usize = 16;

/// Where an export is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Copy,
    Compact,
    Zip,
    Done,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Copy => "copy",
            Phase::Compact => "compact",
            Phase::Zip => "zip",
            Phase::Done => "done",
        }
    }
}

/// The current phase's figures: bytes done of `total` (copy: the world's bytes; compact:
/// table bytes rewritten of an estimate, reaching `total` when the phase ends; zip: bytes of
/// the compacted files zipped). `done` never decreases within a phase and equals `total` at
/// its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    pub phase: Phase,
    pub done: u64,
    pub total: u64,
}

struct Copying {
    files: Vec<(String, u64)>,
    i: usize,
    at: u64,
    input: Option<Arc<dyn RandomAccessFile>>,
    output: Option<Box<dyn WritableFile>>,
}

/// The stored entry being zipped: its CRC-32 first (a read pass), then its bytes.
struct Entry {
    name: String,
    file: Arc<dyn RandomAccessFile>,
    size: u64,
    at: u64,
    crc: Option<crc32fast::Hasher>,
}

struct Zipping {
    zip: ZipWriter<Appender>,
    files: Vec<(String, u64)>,
    bare: bool,
    i: usize,
    entry: Option<Entry>,
}

enum State {
    Copy(Copying),
    Open,
    Compact(Box<Db>, CompactSteps),
    Zip(Box<Zipping>),
    Done,
    Failed,
}

/// An export in progress (see the module comment).
pub struct StreamedExport {
    src: Arc<dyn Storage>,
    root: String,
    scratch: Arc<dyn Storage>,
    dir: String,
    /// Folders of the copy (memory storages do not list folders: removal walks these too).
    folders: BTreeSet<String>,
    state: State,
    progress: Progress,
    report: ExportReport,
    /// The zip stays (a finished export whose caller takes it).
    keep_zip: bool,
    /// The storage error behind a failed zip write (its kind, e.g. NoSpace, kept).
    write_error: ErrorSlot,
}

/// `io::Write` over a storage file; the engine error of a failed append is kept (a full
/// disk or quota must reach the caller as `NoSpace`, not as a generic I/O error).
struct Appender {
    file: Box<dyn WritableFile>,
    error: ErrorSlot,
}

type ErrorSlot = Arc<std::sync::Mutex<Option<Error>>>;

fn keep(slot: &ErrorSlot, e: Error) -> std::io::Error {
    let msg = e.to_string();
    *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
    std::io::Error::other(msg)
}

impl Write for Appender {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.file.append(buf) {
            Ok(()) => Ok(buf.len()),
            Err(e) => Err(keep(&self.error, e)),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.file.flush() {
            Ok(()) => Ok(()),
            Err(e) => Err(keep(&self.error, e)),
        }
    }
}

fn inside(path: &str, dir: &str) -> bool {
    let dir = dir.trim_end_matches('/');
    path == dir || path.starts_with(&format!("{dir}/"))
}

/// The scratch database's options: the Bedrock profile, small caches (they bound memory;
/// they do not change the bytes written), no background thread (the same steps everywhere).
pub fn scratch_options() -> Options {
    let mut o = Options::bedrock();
    o.background_thread = false;
    o.block_cache_capacity = 8 << 20;
    o.max_open_files = 64;
    o.readahead_threads = 0;
    o
}

/// Every file under `dir` (LOCK files included), walking `extra` folders as well (memory
/// storages list files only). Missing folders are skipped.
fn files_under(storage: &dyn Storage, dir: &str, extra: &BTreeSet<String>) -> Result<Vec<String>> {
    let mut out = BTreeSet::new();
    let mut seen = BTreeSet::new();
    let mut todo: Vec<(String, usize)> = vec![(dir.to_string(), 0)];
    for f in extra {
        todo.push((storage::join(dir, f), 1));
    }
    while let Some((d, depth)) = todo.pop() {
        if depth > 20 || !seen.insert(d.clone()) {
            continue;
        }
        let names = match storage.list(&d) {
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(e) if e.kind() == ErrorKind::Io && depth > 0 => continue,
            Err(e) => return Err(e),
        };
        for name in names {
            let path = storage::join(&d, &name);
            if storage.list(&path).is_ok() {
                todo.push((path, depth + 1));
            } else {
                out.insert(path);
            }
        }
    }
    Ok(out.into_iter().collect())
}

/// Removes every file under `dir` (folders stay where the storage keeps them: a host that
/// can remove folders does it itself). Files already gone are fine.
pub fn remove_tree(storage: &dyn Storage, dir: &str, extra: &BTreeSet<String>) -> Result<()> {
    for f in files_under(storage, dir, extra)? {
        match storage.remove(&f) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The copy's known subfolders, relative to the temporary folder.
fn copy_folders(files: &[(String, u64)]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    out.insert(COPY_DIR.to_string());
    out.insert(format!("{COPY_DIR}/db"));
    for (rel, _) in files {
        let mut p = rel.as_str();
        while let Some((parent, _)) = p.rsplit_once('/') {
            out.insert(format!("{COPY_DIR}/{parent}"));
            p = parent;
        }
    }
    out
}

impl StreamedExport {
    /// Starts an export of the world at `root` of `src` through the temporary folder `dir` of
    /// `scratch` (created; whatever a crashed export left there is removed first). No world
    /// file is copied yet.
    pub fn new(
        src: Arc<dyn Storage>,
        root: &str,
        scratch: Arc<dyn Storage>,
        dir: &str,
    ) -> Result<StreamedExport> {
        if dir.trim_end_matches('/').is_empty() {
            return Err(Error::invalid_argument(
                "export: the temporary folder needs a name",
            ));
        }
        if inside(dir, root) || inside(root, dir) {
            return Err(Error::invalid_argument(format!(
                "export: the temporary folder {dir:?} must be outside the world {root:?}"
            )));
        }
        let mut files = Vec::new();
        for rel in world_files(&*src, root)? {
            let size = src.file_size(&storage::join(root, &rel))?;
            files.push((rel, size));
        }
        let folders = copy_folders(&files);
        remove_tree(&*scratch, dir, &folders)?;
        scratch.create_dir_all(&storage::join(dir, COPY_DIR))?;
        let total = files.iter().map(|(_, s)| s).sum();
        Ok(StreamedExport {
            src,
            root: root.to_string(),
            scratch,
            dir: dir.to_string(),
            folders,
            state: State::Copy(Copying {
                files,
                i: 0,
                at: 0,
                input: None,
                output: None,
            }),
            progress: Progress {
                phase: Phase::Copy,
                done: 0,
                total,
            },
            report: ExportReport::default(),
            keep_zip: false,
            write_error: ErrorSlot::default(),
        })
    }

    pub fn progress(&self) -> Progress {
        self.progress
    }

    /// What the zip holds (final once `Phase::Done`).
    pub fn report(&self) -> ExportReport {
        self.report
    }

    /// The zip's path in the scratch storage.
    pub fn zip_path(&self) -> String {
        storage::join(&self.dir, ZIP_NAME)
    }

    /// The temporary folder.
    pub fn dir(&self) -> &str {
        &self.dir
    }

    /// Does about `budget` bytes of copying or zipping, or one compaction. Returns true once
    /// the zip is complete. A failure removes the temporary folder; later steps repeat it.
    pub fn step(&mut self, budget: u64) -> Result<bool> {
        match self.state {
            State::Done => return Ok(true),
            State::Failed => {
                return Err(Error::invalid_argument(
                    "export: this export failed or was cancelled",
                ))
            }
            _ => {}
        }
        match self.step_inner(budget.max(1)) {
            Ok(done) => Ok(done),
            Err(e) => {
                let kept = self
                    .write_error
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .take();
                let e = kept.unwrap_or(e);
                self.state = State::Failed;
                let _ = remove_tree(&*self.scratch, &self.dir, &self.folders);
                Err(e)
            }
        }
    }

    fn step_inner(&mut self, budget: u64) -> Result<bool> {
        let state = std::mem::replace(&mut self.state, State::Failed);
        self.state = match state {
            State::Copy(mut c) => {
                if self.copy_step(&mut c, budget)? {
                    State::Open
                } else {
                    State::Copy(c)
                }
            }
            State::Open => {
                let copy = storage::join(&self.dir, COPY_DIR);
                let db_dir = db_dir_of(&*self.scratch, &copy);
                let db = Db::open(self.scratch.clone(), &db_dir, scratch_options())?;
                let steps = db.compact_range_steps(None, None)?;
                self.progress = Progress {
                    phase: Phase::Compact,
                    done: 0,
                    total: 0,
                };
                State::Compact(Box::new(db), steps)
            }
            State::Compact(db, mut steps) => {
                let finished = db.compact_step(&mut steps)?;
                let (done, total) = steps.progress();
                self.progress.total = self.progress.total.max(total);
                self.progress.done = self.progress.done.max(done.min(self.progress.total));
                if finished {
                    db.close()?;
                    self.progress.done = self.progress.total;
                    self.start_zip()?
                } else {
                    State::Compact(db, steps)
                }
            }
            State::Zip(mut z) => {
                if self.zip_step(&mut z, budget)? {
                    z.zip.finish()?.file.sync()?;
                    let copy = storage::join(&self.dir, COPY_DIR);
                    remove_tree(&*self.scratch, &copy, &BTreeSet::new())?;
                    for f in &self.folders {
                        if let Some(rel) = f.strip_prefix(&format!("{COPY_DIR}/")) {
                            let sub = storage::join(&copy, rel);
                            remove_tree(&*self.scratch, &sub, &BTreeSet::new())?;
                        }
                    }
                    self.progress.done = self.progress.total;
                    self.keep_zip = true;
                    State::Done
                } else {
                    State::Zip(z)
                }
            }
            other => other,
        };
        if matches!(self.state, State::Done) {
            self.progress = Progress {
                phase: Phase::Done,
                done: self.progress.total,
                total: self.progress.total,
            };
            return Ok(true);
        }
        Ok(false)
    }

    fn copy_step(&mut self, c: &mut Copying, budget: u64) -> Result<bool> {
        let mut moved = 0u64;
        let mut created = 0;
        while c.i < c.files.len() {
            let (rel, size) = &c.files[c.i];
            if c.output.is_none() {
                if created == FILES_PER_STEP {
                    return Ok(false);
                }
                let from = storage::join(&self.root, rel);
                let to = storage::join(&storage::join(&self.dir, COPY_DIR), rel);
                if let Some((parent, _)) = to.rsplit_once('/') {
                    self.scratch.create_dir_all(parent)?;
                }
                c.input = Some(self.src.open_random(&from)?);
                c.output = Some(self.scratch.create(&to)?);
                c.at = 0;
                created += 1;
            }
            let (input, output) = (c.input.as_ref().unwrap(), c.output.as_mut().unwrap());
            while c.at < *size {
                if moved >= budget {
                    return Ok(false);
                }
                let n = (*size - c.at).min(CHUNK).min(budget - moved) as usize;
                let data = storage::read_exact_at(&**input, c.at, n).map_err(|e| {
                    Error::new(
                        e.kind(),
                        format!("export: {rel} changed while it was being copied: {e}"),
                    )
                })?;
                output.append(&data)?;
                c.at += n as u64;
                moved += n as u64;
                self.progress.done += n as u64;
            }
            output.sync()?;
            c.output = None;
            c.input = None;
            c.i += 1;
        }
        self.scratch.sync_dir(&storage::join(&self.dir, COPY_DIR))?;
        Ok(true)
    }

    fn start_zip(&mut self) -> Result<State> {
        let copy = storage::join(&self.dir, COPY_DIR);
        let bare = db_dir_of(&*self.scratch, &copy) == copy;
        let mut files = Vec::new();
        for rel in world_files(&*self.scratch, &copy)? {
            let size = self.scratch.file_size(&storage::join(&copy, &rel))?;
            files.push((rel, size));
        }
        // The compacted copy's folders (for removal), beside the original's.
        for (rel, _) in &files {
            let mut p = rel.as_str();
            while let Some((parent, _)) = p.rsplit_once('/') {
                self.folders.insert(format!("{COPY_DIR}/{parent}"));
                p = parent;
            }
        }
        let out = self.scratch.create(&self.zip_path())?;
        self.progress = Progress {
            phase: Phase::Zip,
            done: 0,
            total: files.iter().map(|(_, s)| s).sum(),
        };
        Ok(State::Zip(Box::new(Zipping {
            zip: ZipWriter::new(Appender {
                file: out,
                error: self.write_error.clone(),
            }),
            files,
            bare,
            i: 0,
            entry: None,
        })))
    }

    fn zip_step(&mut self, z: &mut Zipping, budget: u64) -> Result<bool> {
        let copy = storage::join(&self.dir, COPY_DIR);
        let mut moved = 0u64;
        loop {
            if let Some(e) = z.entry.as_mut() {
                while e.at < e.size {
                    if moved >= budget {
                        return Ok(false);
                    }
                    let n = (e.size - e.at).min(CHUNK).min(budget - moved) as usize;
                    let data = storage::read_exact_at(&*e.file, e.at, n)?;
                    match e.crc.as_mut() {
                        Some(h) => h.update(&data),
                        None => {
                            z.zip.data(&data)?;
                            self.progress.done += n as u64;
                        }
                    }
                    e.at += n as u64;
                    moved += n as u64;
                }
                if let Some(h) = e.crc.take() {
                    z.zip.begin_stored(&e.name, e.size, h.finalize())?;
                    e.at = 0;
                    continue;
                }
                z.zip.end_stored()?;
                z.entry = None;
                self.report.files += 1;
                continue;
            }
            if z.i == z.files.len() {
                return Ok(true);
            }
            if moved >= budget {
                return Ok(false);
            }
            let (rel, size) = z.files[z.i].clone();
            z.i += 1;
            let file = self.scratch.open_random(&storage::join(&copy, &rel))?;
            if file.size()? != size {
                return Err(Error::io(format!(
                    "export: {rel} changed size while zipping"
                )));
            }
            let table = rel.ends_with(".ldb") || rel.ends_with(".sst");
            let name = if z.bare { format!("db/{rel}") } else { rel };
            self.report.bytes += size;
            if table || size > DEFLATE_MAX {
                z.entry = Some(Entry {
                    name,
                    file,
                    size,
                    at: 0,
                    crc: Some(crc32fast::Hasher::new()),
                });
                if size == 0 {
                    // No read pass: the CRC of nothing.
                    z.zip.begin_stored(&z.entry.as_ref().unwrap().name, 0, 0)?;
                    z.entry.as_mut().unwrap().crc = None;
                }
            } else {
                let data = storage::read_exact_at(&*file, 0, size as usize)?;
                z.zip.deflated(&name, &data)?;
                self.progress.done += size;
                moved += size;
                self.report.files += 1;
            }
        }
    }

    /// Stops the export and removes the temporary folder (the zip too). The world is
    /// untouched. Idempotent.
    pub fn cancel(&mut self) -> Result<()> {
        self.state = State::Failed;
        self.keep_zip = false;
        remove_tree(&*self.scratch, &self.dir, &self.folders)
    }

    /// A finished export: moves the zip to `to` (same storage; replaced atomically) and
    /// removes the temporary folder's files. Refused before the zip is complete.
    pub fn finish_to(&mut self, to: &str) -> Result<()> {
        if !matches!(self.state, State::Done) {
            return Err(Error::invalid_argument(
                "export: the zip is not complete yet",
            ));
        }
        self.scratch.rename(&self.zip_path(), to)?;
        self.keep_zip = false;
        self.state = State::Failed;
        remove_tree(&*self.scratch, &self.dir, &self.folders)
    }
}

impl Drop for StreamedExport {
    fn drop(&mut self) {
        if !self.keep_zip {
            // Drop the scratch database and files before removing them.
            self.state = State::Failed;
            let _ = remove_tree(&*self.scratch, &self.dir, &self.folders);
        }
    }
}

/// The whole streamed export in one call (native callers and tests): the zip ends at
/// `dir/ZIP_NAME` of `scratch`, everything else in `dir` removed.
pub fn export_streamed(
    src: Arc<dyn Storage>,
    root: &str,
    scratch: Arc<dyn Storage>,
    dir: &str,
    budget: u64,
) -> Result<ExportReport> {
    let mut e = StreamedExport::new(src, root, scratch, dir)?;
    while !e.step(budget)? {}
    Ok(e.report())
}
