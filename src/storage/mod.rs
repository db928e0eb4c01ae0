//! The storage trait: the engine's only way to touch files, narrow enough that an in-memory
//! map, `std::fs`, Node's `fs`, OPFS and a fault injector can all stand behind it.
//!
//! Contract:
//! - Paths are `/`-separated strings; a database lives in one folder and names its files
//!   inside it (`join(dir, "CURRENT")`).
//! - `RandomAccessFile::read_at` may be called from several threads at once.
//! - A `WritableFile`'s bytes are durable only after `sync` returns; `append` may buffer.
//! - `rename` replaces the target atomically (LevelDB relies on this for `CURRENT`).
//! - A lock is released when its guard is dropped; a second exclusive lock on the same path,
//!   from this process or another, fails at once with `ErrorKind::Locked`.

use std::sync::Arc;

use crate::error::{Error, Result};

mod fault;
#[cfg(not(target_arch = "wasm32"))]
mod fs;
#[cfg(target_arch = "wasm32")]
pub mod js_host;
mod mem;

/// The shared byte handle of `RandomAccessFile::mapped_shared` (the `bytes` crate).
pub use bytes::Bytes;
pub use fault::{DirPolicy, FaultStorage, Op, OpCounts, OpKind};
#[cfg(not(target_arch = "wasm32"))]
pub use fs::FsStorage;
pub use mem::MemStorage;

/// A file read at arbitrary offsets.
pub trait RandomAccessFile: Send + Sync {
    /// Reads up to `buf.len()` bytes at `offset`; fewer only at the end of the file.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize>;
    /// Current size of the file in bytes.
    fn size(&self) -> Result<u64>;
    /// The whole file as memory, when the backend maps it (immutable table files natively),
    /// as a shared, reference-counted handle: readers slice blocks out of it, and a block lent
    /// from it (an uncompressed data block, `table::Table::block_at`) keeps the mapping alive
    /// after the file is closed.
    fn mapped_shared(&self) -> Option<Bytes> {
        None
    }
}

/// A file written by appending.
pub trait WritableFile: Send {
    fn append(&mut self, data: &[u8]) -> Result<()>;
    /// Hands buffered bytes to the backend (not necessarily durable).
    fn flush(&mut self) -> Result<()>;
    /// Makes every appended byte durable.
    fn sync(&mut self) -> Result<()>;
    /// `sync` for a file that takes no more appends (a retired log): nothing is prepared for
    /// appends to come (`storage::fs` extends a synced log with zeros at `sync`).
    fn sync_final(&mut self) -> Result<()> {
        self.sync()
    }
}

/// A held lock; dropping it releases the lock.
pub trait FileLock: Send + Sync {}

/// A place files live.
pub trait Storage: Send + Sync {
    fn open_random(&self, path: &str) -> Result<Arc<dyn RandomAccessFile>>;
    /// Creates (or truncates) a file for writing.
    fn create(&self, path: &str) -> Result<Box<dyn WritableFile>>;
    /// Opens a file for appending, creating it if missing.
    fn append(&self, path: &str) -> Result<Box<dyn WritableFile>>;
    fn exists(&self, path: &str) -> bool;
    fn file_size(&self, path: &str) -> Result<u64>;
    /// Names (not paths) of the entries of a folder.
    fn list(&self, dir: &str) -> Result<Vec<String>>;
    fn remove(&self, path: &str) -> Result<()>;
    /// Atomically replaces `to` with `from`.
    fn rename(&self, from: &str, to: &str) -> Result<()>;
    fn create_dir_all(&self, path: &str) -> Result<()>;
    /// Exclusive lock on `path`, creating the file if needed.
    fn lock(&self, path: &str) -> Result<Box<dyn FileLock>>;
    /// Shared lock on `path` if the file exists, without creating or changing anything.
    /// Conflicts with an exclusive lock held through this same backend.
    fn lock_shared(&self, path: &str) -> Result<Option<Box<dyn FileLock>>>;
    /// Makes a folder's entries (new files, renames) durable. Default: nothing to do.
    fn sync_dir(&self, _dir: &str) -> Result<()> {
        Ok(())
    }
}

/// `dir/name`, without doubling a trailing separator.
pub fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// The last component of a path (for error messages).
pub fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Reads exactly `len` bytes at `offset`; a short read is corruption (the file is truncated).
pub fn read_exact_at(file: &dyn RandomAccessFile, offset: u64, len: usize) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    read_exact_into(file, offset, len, &mut buf)?;
    Ok(buf)
}

/// `read_exact_at` into `buf`, resized to `len` bytes first: a reader that reuses one buffer
/// (`util::buffer_pool`) pays no allocation, and no zero fill but of bytes past its old
/// length. On an error `buf`'s contents are unspecified.
pub fn read_exact_into(
    file: &dyn RandomAccessFile,
    offset: u64,
    len: usize,
    buf: &mut Vec<u8>,
) -> Result<()> {
    if buf.capacity() == 0 {
        *buf = vec![0; len]; // a zeroed allocation (large ones come zeroed from the OS)
    } else {
        buf.resize(len, 0);
    }
    let mut done = 0;
    while done < len {
        let n = file.read_at(offset + done as u64, &mut buf[done..])?;
        if n == 0 {
            return Err(Error::corruption(format!(
                "truncated read: wanted {len} bytes, file ends after {done}"
            ))
            .at_offset(offset));
        }
        done += n;
    }
    Ok(())
}

/// Reads a whole (small) file.
pub fn read_all(storage: &dyn Storage, path: &str) -> Result<Vec<u8>> {
    let file = storage.open_random(path)?;
    let size = file.size()?;
    read_exact_at(&*file, 0, size as usize).map_err(|e| e.in_file(base_name(path)))
}

/// Writes a whole file and syncs it.
pub fn write_all(storage: &dyn Storage, path: &str, data: &[u8]) -> Result<()> {
    let mut f = storage.create(path)?;
    f.append(data)?;
    f.sync()
}

#[cfg(test)]
pub(crate) mod conformance {
    //! The same assertions, run against every backend.
    use super::*;
    use crate::error::ErrorKind;

    pub fn run(storage: &dyn Storage, root: &str) {
        storage.create_dir_all(root).unwrap();
        let a = join(root, "a");
        let b = join(root, "b");
        assert!(!storage.exists(&a));
        assert_eq!(
            storage.open_random(&a).err().unwrap().kind(),
            ErrorKind::NotFound
        );

        let mut w = storage.create(&a).unwrap();
        w.append(b"hello ").unwrap();
        w.append(b"world").unwrap();
        w.sync().unwrap();
        drop(w);
        assert!(storage.exists(&a));
        assert_eq!(storage.file_size(&a).unwrap(), 11);
        let r = storage.open_random(&a).unwrap();
        let mut buf = [0u8; 5];
        assert_eq!(r.read_at(6, &mut buf).unwrap(), 5);
        assert_eq!(&buf, b"world");
        assert_eq!(r.read_at(9, &mut buf).unwrap(), 2);
        assert_eq!(r.read_at(11, &mut buf).unwrap(), 0);
        assert!(read_exact_at(&*r, 8, 5).unwrap_err().is_corruption());

        let mut w = storage.append(&a).unwrap();
        w.append(b"!").unwrap();
        w.flush().unwrap();
        drop(w);
        assert_eq!(read_all(storage, &a).unwrap(), b"hello world!");

        write_all(storage, &b, b"second").unwrap();
        storage.rename(&b, &a).unwrap();
        assert!(!storage.exists(&b));
        assert_eq!(read_all(storage, &a).unwrap(), b"second");

        let mut names = storage.list(root).unwrap();
        names.sort();
        assert_eq!(names, vec!["a".to_string()]);

        let lock_path = join(root, "LOCK");
        assert!(storage.lock_shared(&lock_path).unwrap().is_none());
        let held = storage.lock(&lock_path).unwrap();
        assert_eq!(
            storage.lock(&lock_path).err().unwrap().kind(),
            ErrorKind::Locked
        );
        assert_eq!(
            storage.lock_shared(&lock_path).err().unwrap().kind(),
            ErrorKind::Locked
        );
        drop(held);
        let again = storage.lock(&lock_path).unwrap();
        drop(again);
        let shared = storage.lock_shared(&lock_path).unwrap();
        assert!(shared.is_some());
        assert_eq!(
            storage.lock(&lock_path).err().unwrap().kind(),
            ErrorKind::Locked
        );
        drop(shared);

        storage.remove(&a).unwrap();
        assert!(!storage.exists(&a));
        assert_eq!(storage.remove(&a).unwrap_err().kind(), ErrorKind::NotFound);
    }
}
