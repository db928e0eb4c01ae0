//! Native storage over `std::fs`: positional reads (`pread`), buffered appends, `fdatasync`,
//! atomic `rename`, and an advisory `flock` on `LOCK` (exclusive for writers, shared for
//! read-only openers, so a writer and a reader in two processes exclude each other).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::sync::Arc;

use super::{FileLock, RandomAccessFile, Storage, WritableFile};
use crate::error::{Error, Result};

/// The native file system. Stateless: paths are used as given.
#[derive(Clone, Copy, Debug, Default)]
pub struct FsStorage;

impl FsStorage {
    pub fn new() -> Self {
        FsStorage
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
}

struct FsWriter {
    file: io::BufWriter<File>,
    path: String,
}

impl WritableFile for FsWriter {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.file.write_all(data).map_err(|e| io_err(&self.path, e))
    }

    fn flush(&mut self) -> Result<()> {
        self.file.flush().map_err(|e| io_err(&self.path, e))
    }

    fn sync(&mut self) -> Result<()> {
        self.flush()?;
        self.file
            .get_ref()
            .sync_data()
            .map_err(|e| io_err(&self.path, e))
    }
}

impl Drop for FsWriter {
    fn drop(&mut self) {
        let _ = self.file.flush();
    }
}

struct FsLock {
    _file: File,
}

impl FileLock for FsLock {}

fn lock_error(path: &str, e: std::fs::TryLockError) -> Error {
    match e {
        std::fs::TryLockError::WouldBlock => {
            Error::locked(format!("{path}: the database is in use by another opener"))
        }
        std::fs::TryLockError::Error(e) => io_err(path, e),
    }
}

impl Storage for FsStorage {
    fn open_random(&self, path: &str) -> Result<Arc<dyn RandomAccessFile>> {
        let file = File::open(path).map_err(|e| io_err(path, e))?;
        Ok(Arc::new(FsFile {
            file,
            path: path.to_string(),
        }))
    }

    fn create(&self, path: &str) -> Result<Box<dyn WritableFile>> {
        let file = File::create(path).map_err(|e| io_err(path, e))?;
        Ok(Box::new(FsWriter {
            file: io::BufWriter::with_capacity(64 * 1024, file),
            path: path.to_string(),
        }))
    }

    fn append(&self, path: &str) -> Result<Box<dyn WritableFile>> {
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(|e| io_err(path, e))?;
        Ok(Box::new(FsWriter {
            file: io::BufWriter::with_capacity(64 * 1024, file),
            path: path.to_string(),
        }))
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
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| io_err(path, e))?;
        file.try_lock().map_err(|e| lock_error(path, e))?;
        Ok(Box::new(FsLock { _file: file }))
    }

    fn lock_shared(&self, path: &str) -> Result<Option<Box<dyn FileLock>>> {
        let file = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(path, e)),
        };
        file.try_lock_shared().map_err(|e| lock_error(path, e))?;
        Ok(Some(Box::new(FsLock { _file: file })))
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
    #[test]
    fn conformance() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("db");
        super::super::conformance::run(&super::FsStorage::new(), root.to_str().unwrap());
    }
}
