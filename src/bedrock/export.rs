//! `.mcworld` export: a world folder compacted on a copy, then zipped (level.dat,
//! levelname.txt, db/ and every other file of the folder, recursively).
//!
//! Invariants: the original world is only ever read (the copy is what gets compacted; the
//! caller gives the scratch storage: a temp folder natively, memory in wasm); `LOCK` files
//! are not copied or zipped; the zip is written through any `Write + Seek` (a file natively,
//! a `Vec` in wasm). Entries: tables (`.ldb`, `.sst`) are stored — their blocks are already
//! raw-deflate compressed and a second deflate gains ~1% for a lot of time — everything else
//! (level.dat, logs, MANIFEST, text, images) up to 64 MiB is deflated (`zip_writer`: Strata's
//! own small writer, miniz_oxide's deflater). A bare db folder is zipped under `db/`.

use std::io::{Seek, Write};
use std::sync::Arc;

use super::db_dir_of;
use super::zip_writer::ZipWriter;
use crate::error::{Error, Result};
use crate::storage::{self, Storage};
use crate::Db;

/// What an export wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExportReport {
    /// Files in the zip.
    pub files: u64,
    /// Their bytes before zipping (after compaction).
    pub bytes: u64,
}

fn is_lock(name: &str) -> bool {
    name == "LOCK" || name == "LOCK.owner"
}

/// Every file under `root` (paths relative to it, `/`-separated, sorted), LOCK files left out.
/// A name is a folder when the storage lists it; a db folder is always walked (memory
/// storages do not list folders).
pub fn world_files(storage: &dyn Storage, root: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    walk(storage, root, "", &mut out, 0)?;
    if storage.exists(&storage::join(root, "db/CURRENT"))
        && !out.iter().any(|f| f.starts_with("db/"))
    {
        walk(storage, &storage::join(root, "db"), "db/", &mut out, 1)?;
    }
    out.sort();
    Ok(out)
}

fn walk(
    storage: &dyn Storage,
    dir: &str,
    rel: &str,
    out: &mut Vec<String>,
    depth: usize,
) -> Result<()> {
    if depth > 16 {
        return Err(Error::invalid_argument(format!(
            "{dir}: folders nested too deep"
        )));
    }
    let mut names = storage.list(dir)?;
    names.sort();
    for name in names {
        if is_lock(&name) {
            continue;
        }
        let path = storage::join(dir, &name);
        if storage.list(&path).is_ok() {
            walk(storage, &path, &format!("{rel}{name}/"), out, depth + 1)?;
        } else {
            out.push(format!("{rel}{name}"));
        }
    }
    Ok(())
}

/// Copies the world at `root` of `src` into `dest` of `dst` (every file, no LOCK). Returns the
/// bytes copied.
pub fn copy_world(src: &dyn Storage, root: &str, dst: &dyn Storage, dest: &str) -> Result<u64> {
    let mut bytes = 0;
    dst.create_dir_all(dest)?;
    for rel in world_files(src, root)? {
        let to = storage::join(dest, &rel);
        if let Some((dir, _)) = to.rsplit_once('/') {
            dst.create_dir_all(dir)?;
        }
        let from = src.open_random(&storage::join(root, &rel))?;
        let mut w = dst.create(&to)?;
        let size = from.size()?;
        let mut at = 0u64;
        while at < size {
            let n = (size - at).min(1 << 20) as usize;
            w.append(&storage::read_exact_at(&*from, at, n)?)?;
            at += n as u64;
        }
        w.sync()?;
        bytes += size;
    }
    dst.sync_dir(dest)?;
    Ok(bytes)
}

/// Opens the world's db at `root` writable (Bedrock profile, inline compaction: the same
/// steps as the streamed export's, so the same tables), compacts every level into new
/// tables and closes it: the log is emptied, deleted records are gone from the files.
pub fn compact(storage: Arc<dyn Storage>, root: &str) -> Result<()> {
    let dir = db_dir_of(&*storage, root);
    let db = Db::open(storage, &dir, super::export_stream::scratch_options())?;
    db.compact_range(None, None)?;
    db.close()
}

/// Files up to this size that are not tables are deflated (read whole); larger ones stored.
pub(crate) const DEFLATE_MAX: u64 = 64 << 20;

/// Zips the world at `root` of `storage` into `out` as a `.mcworld`.
pub fn write_zip<W: Write + Seek>(
    storage: &dyn Storage,
    root: &str,
    out: W,
) -> Result<ExportReport> {
    write_zip_with(storage, root, ZipWriter::new(out))
}

#[doc(hidden)]
pub fn write_zip_with<W: Write + Seek>(
    storage: &dyn Storage,
    root: &str,
    mut zip: ZipWriter<W>,
) -> Result<ExportReport> {
    let bare = db_dir_of(storage, root) == root;
    let mut report = ExportReport::default();
    for rel in world_files(storage, root)? {
        let file = storage.open_random(&storage::join(root, &rel))?;
        let size = file.size()?;
        let table = rel.ends_with(".ldb") || rel.ends_with(".sst");
        let name = if bare { format!("db/{rel}") } else { rel };
        if table || size > DEFLATE_MAX {
            zip.stored(&name, size, |sink| {
                let mut at = 0u64;
                while at < size {
                    let n = (size - at).min(1 << 20) as usize;
                    sink.write(&storage::read_exact_at(&*file, at, n)?)?;
                    at += n as u64;
                }
                Ok(())
            })?;
        } else {
            zip.deflated(&name, &storage::read_exact_at(&*file, 0, size as usize)?)?;
        }
        report.files += 1;
        report.bytes += size;
    }
    zip.finish()?;
    Ok(report)
}

/// The whole export: copies the world at `root` of `src` into `scratch_root` of `scratch`,
/// compacts the copy, zips it into `out`. The caller removes the scratch copy.
pub fn export<W: Write + Seek>(
    src: &dyn Storage,
    root: &str,
    scratch: Arc<dyn Storage>,
    scratch_root: &str,
    out: W,
) -> Result<ExportReport> {
    copy_world(src, root, &*scratch, scratch_root)?;
    compact(scratch.clone(), scratch_root)?;
    write_zip(&*scratch, scratch_root, out)
}
