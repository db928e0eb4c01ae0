//! Destroy (LevelDB `DestroyDB`): delete a database's files from its folder.
//!
//! Invariants: the database's `LOCK` is taken first, so an open database (in this process or,
//! through the storage's lock, another) is refused with the lock's error and nothing is
//! deleted. Only files with LevelDB's names are removed (`CURRENT`, `LOG`, `LOG.old`,
//! `MANIFEST-*`, `*.log`, `*.ldb`, `*.sst`, `*.dbtmp`, and `LOCK` last, after its release);
//! anything else in the folder, subfolders included (`lost/`), is left as it is. A folder that
//! does not exist (or cannot be listed) is not an error, and is not created. Removing the
//! folder itself, once empty, is the caller's (the `Storage` trait has no folder removal).

use std::sync::Arc;

use crate::error::Result;
use crate::storage::{join, Storage};
use crate::version::filename::{self, parse_file_name, FileType};

/// What `destroy` removed, and whether anything is left in the folder.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DestroyReport {
    /// Names of the files removed, `LOCK` included when it was there.
    pub removed: Vec<String>,
    /// Entries left in the folder (files and folders not LevelDB's); 0 once the folder is
    /// empty (or when it did not exist).
    pub remaining: usize,
}

/// Deletes the database in `dir`. The database must not be open.
pub fn destroy(storage: Arc<dyn Storage>, dir: &str) -> Result<DestroyReport> {
    let mut report = DestroyReport::default();
    // LevelDB ignores the error: a folder that is not there has nothing to destroy.
    let Ok(names) = storage.list(dir) else {
        return Ok(report);
    };
    let lock_path = filename::lock_file_name(dir);
    let had_lock = names.iter().any(|n| n == "LOCK");
    let lock = storage.lock(&lock_path)?;
    let mut failure = None;
    for name in &names {
        match parse_file_name(name) {
            Some((_, FileType::DbLock)) | None => {}
            Some(_) => match storage.remove(&join(dir, name)) {
                Ok(()) => report.removed.push(name.clone()),
                // LevelDB keeps going and reports the first failure.
                Err(e) => {
                    failure.get_or_insert(e);
                }
            },
        }
    }
    drop(lock);
    // The lock file goes after its release (taking the lock may have created it).
    match storage.remove(&lock_path) {
        Ok(()) if had_lock => report.removed.push("LOCK".to_string()),
        Ok(()) => {}
        Err(e) => {
            failure.get_or_insert(e);
        }
    }
    if let Some(e) = failure {
        return Err(e);
    }
    report.remaining = storage.list(dir).map_or(0, |n| n.len());
    Ok(report)
}
