//! `js-host` storage (wasm only): every file operation is a synchronous call on a JavaScript
//! object. js/ provides hosts over `node:fs`, over OPFS sync access handles (a pre-opened pool)
//! and over a user-picked folder's `File`s (read-only).
//!
//! The host contract (all methods synchronous; failures are thrown):
//! `open(path, mode) -> fd` with mode `"r"` (must exist), `"w"` (create or truncate) or `"a"`
//! (append, create if missing); `read(fd, offset, buf) -> bytesRead` (fills `buf`, a view into
//! wasm memory, fewer bytes only at end of file); `write(fd, bytes)`; `sync(fd)`; `size(fd)`;
//! `close(fd)`; `exists(path)`; `fileSize(path)`; `list(dir) -> string[]`; `remove(path)`;
//! `rename(from, to)` (atomic replace); `mkdir(path)` (recursive); `lock(path, shared) -> token
//! | null` (null only for a shared lock on a missing file); `unlock(token)`; `syncDir(path)`.
//! A thrown value's `code` (Node style: `ENOENT`, `ENOSPC`, `ELOCKED`, `EROFS`) or `name`
//! (DOM style: `NotFoundError`, `QuotaExceededError`, `NoModificationAllowedError`) picks the
//! error kind.
//!
//! wasm32 without the atomics feature is single-threaded, which is what makes the `Send`/`Sync`
//! claims below sound: no JS value ever crosses a thread.

#![allow(unsafe_code)]

use std::sync::Arc;

use js_sys::{Array, Reflect};
use wasm_bindgen::prelude::*;

use super::{FileLock, RandomAccessFile, Storage, WritableFile};
use crate::error::{Error, ErrorKind, Result};

#[wasm_bindgen]
extern "C" {
    /// The JavaScript object that performs file operations.
    #[derive(Clone)]
    pub type StorageHost;

    #[wasm_bindgen(method, catch)]
    fn open(this: &StorageHost, path: &str, mode: &str) -> std::result::Result<f64, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn read(
        this: &StorageHost,
        fd: f64,
        offset: f64,
        buf: &mut [u8],
    ) -> std::result::Result<f64, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn write(this: &StorageHost, fd: f64, data: &[u8]) -> std::result::Result<(), JsValue>;
    #[wasm_bindgen(method, catch)]
    fn sync(this: &StorageHost, fd: f64) -> std::result::Result<(), JsValue>;
    #[wasm_bindgen(method, catch)]
    fn size(this: &StorageHost, fd: f64) -> std::result::Result<f64, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn close(this: &StorageHost, fd: f64) -> std::result::Result<(), JsValue>;
    #[wasm_bindgen(method, catch)]
    fn exists(this: &StorageHost, path: &str) -> std::result::Result<bool, JsValue>;
    #[wasm_bindgen(method, catch, js_name = fileSize)]
    fn file_size(this: &StorageHost, path: &str) -> std::result::Result<f64, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn list(this: &StorageHost, dir: &str) -> std::result::Result<Array, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn remove(this: &StorageHost, path: &str) -> std::result::Result<(), JsValue>;
    #[wasm_bindgen(method, catch)]
    fn rename(this: &StorageHost, from: &str, to: &str) -> std::result::Result<(), JsValue>;
    #[wasm_bindgen(method, catch)]
    fn mkdir(this: &StorageHost, path: &str) -> std::result::Result<(), JsValue>;
    #[wasm_bindgen(method, catch)]
    fn lock(this: &StorageHost, path: &str, shared: bool) -> std::result::Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn unlock(this: &StorageHost, token: JsValue) -> std::result::Result<(), JsValue>;
    #[wasm_bindgen(method, catch, js_name = syncDir)]
    fn sync_dir(this: &StorageHost, path: &str) -> std::result::Result<(), JsValue>;
}

/// Turns a thrown JS value into an engine error, keeping its message and picking the kind
/// from its `code` or `name`.
pub fn js_error(context: &str, err: JsValue) -> Error {
    let prop = |name: &str| {
        Reflect::get(&err, &JsValue::from_str(name))
            .ok()
            .and_then(|v| v.as_string())
    };
    let code = prop("code").or_else(|| prop("name")).unwrap_or_default();
    let message = prop("message")
        .or_else(|| err.as_string())
        .unwrap_or_else(|| "unknown error".to_string());
    let kind = match code.as_str() {
        "ENOENT" | "NotFoundError" => ErrorKind::NotFound,
        "ENOSPC" | "EDQUOT" | "QuotaExceededError" => ErrorKind::NoSpace,
        "ELOCKED" | "EAGAIN" | "EWOULDBLOCK" | "NoModificationAllowedError" | "LEVEL_LOCKED" => {
            ErrorKind::Locked
        }
        "EROFS" | "ENOTSUP" | "NotSupportedError" => ErrorKind::NotSupported,
        "EINVAL" => ErrorKind::InvalidArgument,
        _ => ErrorKind::Io,
    };
    let code = if code.is_empty() {
        String::new()
    } else {
        format!(" ({code})")
    };
    Error::new(kind, format!("{context}: {message}{code}"))
}

/// Storage whose files live behind a JavaScript host object.
pub struct JsHostStorage {
    host: StorageHost,
}

// SAFETY: wasm32-unknown-unknown without atomics has exactly one thread.
unsafe impl Send for JsHostStorage {}
// SAFETY: as above.
unsafe impl Sync for JsHostStorage {}

impl JsHostStorage {
    pub fn new(host: StorageHost) -> Self {
        JsHostStorage { host }
    }
}

struct JsFile {
    host: StorageHost,
    fd: f64,
    path: String,
}

// SAFETY: single-threaded target (see the module comment).
unsafe impl Send for JsFile {}
// SAFETY: as above.
unsafe impl Sync for JsFile {}

impl Drop for JsFile {
    fn drop(&mut self) {
        let _ = self.host.close(self.fd);
    }
}

impl RandomAccessFile for JsFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let n = self
            .host
            .read(self.fd, offset as f64, buf)
            .map_err(|e| js_error(&format!("read {}", self.path), e))?;
        if !(0.0..=buf.len() as f64).contains(&n) {
            return Err(Error::io(format!(
                "read {}: host returned {n} bytes for a {}-byte buffer",
                self.path,
                buf.len()
            )));
        }
        Ok(n as usize)
    }

    fn size(&self) -> Result<u64> {
        self.host
            .size(self.fd)
            .map(|n| n as u64)
            .map_err(|e| js_error(&format!("size {}", self.path), e))
    }
}

/// Appends are gathered into `buf` and handed to the host in large writes.
struct JsWritable {
    file: JsFile,
    buf: Vec<u8>,
}

const WRITE_BUFFER: usize = 64 * 1024;

impl WritableFile for JsWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        if self.buf.len() + data.len() > WRITE_BUFFER {
            self.flush()?;
        }
        if data.len() >= WRITE_BUFFER {
            return self
                .file
                .host
                .write(self.file.fd, data)
                .map_err(|e| js_error(&format!("write {}", self.file.path), e));
        }
        self.buf.extend_from_slice(data);
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let result = self.file.host.write(self.file.fd, &self.buf);
        self.buf.clear();
        result.map_err(|e| js_error(&format!("write {}", self.file.path), e))
    }

    fn sync(&mut self) -> Result<()> {
        self.flush()?;
        self.file
            .host
            .sync(self.file.fd)
            .map_err(|e| js_error(&format!("sync {}", self.file.path), e))
    }
}

impl Drop for JsWritable {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

struct JsLock {
    host: StorageHost,
    token: JsValue,
}

// SAFETY: single-threaded target (see the module comment).
unsafe impl Send for JsLock {}
// SAFETY: as above.
unsafe impl Sync for JsLock {}

impl FileLock for JsLock {}

impl Drop for JsLock {
    fn drop(&mut self) {
        let _ = self.host.unlock(self.token.clone());
    }
}

impl JsHostStorage {
    fn open_file(&self, path: &str, mode: &str) -> Result<JsFile> {
        let fd = self
            .host
            .open(path, mode)
            .map_err(|e| js_error(&format!("open {path}"), e))?;
        Ok(JsFile {
            host: self.host.clone(),
            fd,
            path: path.to_string(),
        })
    }

    fn writable(&self, path: &str, mode: &str) -> Result<Box<dyn WritableFile>> {
        Ok(Box::new(JsWritable {
            file: self.open_file(path, mode)?,
            buf: Vec::new(),
        }))
    }
}

impl Storage for JsHostStorage {
    fn open_random(&self, path: &str) -> Result<Arc<dyn RandomAccessFile>> {
        Ok(Arc::new(self.open_file(path, "r")?))
    }

    fn create(&self, path: &str) -> Result<Box<dyn WritableFile>> {
        self.writable(path, "w")
    }

    fn append(&self, path: &str) -> Result<Box<dyn WritableFile>> {
        self.writable(path, "a")
    }

    fn exists(&self, path: &str) -> bool {
        self.host.exists(path).unwrap_or(false)
    }

    fn file_size(&self, path: &str) -> Result<u64> {
        self.host
            .file_size(path)
            .map(|n| n as u64)
            .map_err(|e| js_error(&format!("size {path}"), e))
    }

    fn list(&self, dir: &str) -> Result<Vec<String>> {
        let names = self
            .host
            .list(dir)
            .map_err(|e| js_error(&format!("list {dir}"), e))?;
        names
            .iter()
            .map(|v| {
                v.as_string()
                    .ok_or_else(|| Error::io(format!("list {dir}: host returned a non-string")))
            })
            .collect()
    }

    fn remove(&self, path: &str) -> Result<()> {
        self.host
            .remove(path)
            .map_err(|e| js_error(&format!("remove {path}"), e))
    }

    fn rename(&self, from: &str, to: &str) -> Result<()> {
        self.host
            .rename(from, to)
            .map_err(|e| js_error(&format!("rename {from} to {to}"), e))
    }

    fn create_dir_all(&self, path: &str) -> Result<()> {
        self.host
            .mkdir(path)
            .map_err(|e| js_error(&format!("mkdir {path}"), e))
    }

    fn lock(&self, path: &str) -> Result<Box<dyn FileLock>> {
        let token = self
            .host
            .lock(path, false)
            .map_err(|e| js_error(&format!("lock {path}"), e))?;
        Ok(Box::new(JsLock {
            host: self.host.clone(),
            token,
        }))
    }

    fn lock_shared(&self, path: &str) -> Result<Option<Box<dyn FileLock>>> {
        let token = self
            .host
            .lock(path, true)
            .map_err(|e| js_error(&format!("lock {path}"), e))?;
        if token.is_null() || token.is_undefined() {
            return Ok(None);
        }
        Ok(Some(Box::new(JsLock {
            host: self.host.clone(),
            token,
        })))
    }

    fn sync_dir(&self, dir: &str) -> Result<()> {
        self.host
            .sync_dir(dir)
            .map_err(|e| js_error(&format!("sync {dir}"), e))
    }
}
