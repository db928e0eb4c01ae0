//! In-memory storage: a map from path to bytes. Used by tests and for databases that live only
//! in a page. Every write is immediately "durable"; locks are per `MemStorage` instance.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock};

use super::{FileLock, RandomAccessFile, Storage, WritableFile};
use crate::error::{Error, Result};

type Bytes = Arc<RwLock<Vec<u8>>>;

#[derive(Default)]
struct Inner {
    files: BTreeMap<String, Bytes>,
    dirs: std::collections::BTreeSet<String>,
}

/// A whole file system in memory. Cloning shares the same files.
#[derive(Clone, Default)]
pub struct MemStorage {
    inner: Arc<Mutex<Inner>>,
    /// Lock state per path: `-1` exclusive, `n > 0` shared holders.
    locks: Arc<Mutex<HashMap<String, i64>>>,
}

impl MemStorage {
    pub fn new() -> Self {
        Self::default()
    }

    fn get(&self, path: &str) -> Result<Bytes> {
        let inner = self.inner.lock().unwrap();
        inner
            .files
            .get(path)
            .cloned()
            .ok_or_else(|| Error::not_found(format!("{path}: no such file")))
    }

    /// An independent copy of every file as it is at this instant, as a machine crash would
    /// leave them (locks are not copied).
    pub fn snapshot(&self) -> MemStorage {
        let inner = self.inner.lock().unwrap();
        let files = inner
            .files
            .iter()
            .map(|(k, v)| (k.clone(), Arc::new(RwLock::new(v.read().unwrap().clone()))))
            .collect();
        MemStorage {
            inner: Arc::new(Mutex::new(Inner {
                files,
                dirs: inner.dirs.clone(),
            })),
            locks: Arc::default(),
        }
    }

    /// Cuts a file to `len` bytes (a torn write).
    pub fn truncate(&self, path: &str, len: usize) {
        if let Ok(f) = self.get(path) {
            f.write().unwrap().truncate(len);
        }
    }

    /// A copy of a file's bytes (for tests that damage files).
    pub fn contents(&self, path: &str) -> Option<Vec<u8>> {
        self.get(path).ok().map(|b| b.read().unwrap().clone())
    }
}

struct MemFile(Bytes);

impl RandomAccessFile for MemFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let data = self.0.read().unwrap();
        if offset >= data.len() as u64 {
            return Ok(0);
        }
        let start = offset as usize;
        let n = buf.len().min(data.len() - start);
        buf[..n].copy_from_slice(&data[start..start + n]);
        Ok(n)
    }

    fn size(&self) -> Result<u64> {
        Ok(self.0.read().unwrap().len() as u64)
    }
}

struct MemWriter(Bytes);

impl WritableFile for MemWriter {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.0.write().unwrap().extend_from_slice(data);
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> Result<()> {
        Ok(())
    }
}

struct MemLock {
    locks: Arc<Mutex<HashMap<String, i64>>>,
    path: String,
}

impl FileLock for MemLock {}

impl Drop for MemLock {
    fn drop(&mut self) {
        let mut locks = self.locks.lock().unwrap();
        if let Some(state) = locks.get_mut(&self.path) {
            if *state > 1 {
                *state -= 1;
            } else {
                locks.remove(&self.path);
            }
        }
    }
}

impl Storage for MemStorage {
    fn open_random(&self, path: &str) -> Result<Arc<dyn RandomAccessFile>> {
        Ok(Arc::new(MemFile(self.get(path)?)))
    }

    fn create(&self, path: &str) -> Result<Box<dyn WritableFile>> {
        let bytes: Bytes = Arc::default();
        self.inner
            .lock()
            .unwrap()
            .files
            .insert(path.to_string(), bytes.clone());
        Ok(Box::new(MemWriter(bytes)))
    }

    fn append(&self, path: &str) -> Result<Box<dyn WritableFile>> {
        let mut inner = self.inner.lock().unwrap();
        let bytes = inner.files.entry(path.to_string()).or_default().clone();
        Ok(Box::new(MemWriter(bytes)))
    }

    fn exists(&self, path: &str) -> bool {
        let inner = self.inner.lock().unwrap();
        inner.files.contains_key(path) || inner.dirs.contains(path)
    }

    fn file_size(&self, path: &str) -> Result<u64> {
        Ok(self.get(path)?.read().unwrap().len() as u64)
    }

    fn list(&self, dir: &str) -> Result<Vec<String>> {
        let inner = self.inner.lock().unwrap();
        let prefix = if dir.ends_with('/') || dir.is_empty() {
            dir.to_string()
        } else {
            format!("{dir}/")
        };
        let names: Vec<String> = inner
            .files
            .keys()
            .filter_map(|p| p.strip_prefix(&prefix))
            .filter(|rest| !rest.contains('/'))
            .map(str::to_string)
            .collect();
        if names.is_empty() && !inner.dirs.contains(dir) {
            return Err(Error::not_found(format!("{dir}: no such folder")));
        }
        Ok(names)
    }

    fn remove(&self, path: &str) -> Result<()> {
        match self.inner.lock().unwrap().files.remove(path) {
            Some(_) => Ok(()),
            None => Err(Error::not_found(format!("{path}: no such file"))),
        }
    }

    fn rename(&self, from: &str, to: &str) -> Result<()> {
        let mut inner = self.inner.lock().unwrap();
        let bytes = inner
            .files
            .remove(from)
            .ok_or_else(|| Error::not_found(format!("{from}: no such file")))?;
        inner.files.insert(to.to_string(), bytes);
        Ok(())
    }

    fn create_dir_all(&self, path: &str) -> Result<()> {
        let mut inner = self.inner.lock().unwrap();
        let mut acc = String::new();
        for part in path.split('/') {
            if !acc.is_empty() || path.starts_with('/') {
                acc.push('/');
            }
            acc.push_str(part);
            inner.dirs.insert(acc.clone());
        }
        inner.dirs.insert(path.to_string());
        Ok(())
    }

    fn lock(&self, path: &str) -> Result<Box<dyn FileLock>> {
        let mut locks = self.locks.lock().unwrap();
        if locks.contains_key(path) {
            return Err(Error::locked(format!(
                "{path}: held by another opener of this database"
            )));
        }
        locks.insert(path.to_string(), -1);
        drop(locks);
        self.inner
            .lock()
            .unwrap()
            .files
            .entry(path.to_string())
            .or_default();
        Ok(Box::new(MemLock {
            locks: self.locks.clone(),
            path: path.to_string(),
        }))
    }

    fn lock_shared(&self, path: &str) -> Result<Option<Box<dyn FileLock>>> {
        if !self.inner.lock().unwrap().files.contains_key(path) {
            return Ok(None);
        }
        let mut locks = self.locks.lock().unwrap();
        let state = locks.entry(path.to_string()).or_insert(0);
        if *state < 0 {
            return Err(Error::locked(format!(
                "{path}: held by another opener of this database"
            )));
        }
        *state += 1;
        Ok(Some(Box::new(MemLock {
            locks: self.locks.clone(),
            path: path.to_string(),
        })))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn conformance() {
        super::super::conformance::run(&super::MemStorage::new(), "db");
    }
}
