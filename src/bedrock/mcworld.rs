//! `.mcworld` import: a zip of a world folder (sometimes nested one directory deep) unpacked
//! into any `Storage` (memory in tests and in the browser, OPFS, the file system).
//!
//! The world's root in the zip is the shallowest folder (depth 0 or 1) holding `level.dat`,
//! else the folder holding `db/CURRENT`, else a bare db folder holding `CURRENT`. Only the
//! entries under that root are written.
//!
//! Hostile archives give errors, never unbounded work: names with `..`, absolute paths,
//! backslashes, drive letters or NUL are refused; the entry count is checked from the
//! end-of-central-directory record before the directory is parsed; every entry is inflated in
//! 64 KiB steps and its real size counted while inflating (header sizes are not trusted);
//! the compressed bytes actually consumed are counted at the reader, so the per-entry, total
//! and compression-ratio limits stop a zip bomb within one step of crossing a limit.

use std::io::{Cursor, Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::storage::{self, Storage};

/// Bounds on one import.
#[derive(Clone, Copy, Debug)]
pub struct ImportLimits {
    /// Most entries in the archive. Default 10,000.
    pub max_entries: usize,
    /// Largest inflated entry. Default 512 MiB.
    pub max_entry_bytes: u64,
    /// Largest inflated total. Default 2 GiB.
    pub max_total_bytes: u64,
    /// Largest ratio of inflated bytes to compressed bytes consumed so far in an entry,
    /// checked once it passes 1 MiB inflated. Default 200 (LevelDB tables are already
    /// compressed; a zip of zeros is ~1000).
    pub max_ratio: u64,
}

impl Default for ImportLimits {
    fn default() -> Self {
        ImportLimits {
            max_entries: 10_000,
            max_entry_bytes: 512 << 20,
            max_total_bytes: 2 << 30,
            max_ratio: 200,
        }
    }
}

/// What an import wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportReport {
    /// The world's folder inside the zip ("" for the top level).
    pub root_in_zip: String,
    pub files: u64,
    pub bytes: u64,
}

/// The archive's bytes, counting what the inflater has consumed.
struct Counting<'a> {
    inner: Cursor<&'a [u8]>,
    consumed: Arc<AtomicU64>,
}

impl Read for Counting<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

impl Seek for Counting<'_> {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(pos)
    }
}

fn refuse(msg: impl Into<String>) -> Error {
    Error::invalid_argument(format!("mcworld: {}", msg.into()))
}

fn zip_err(e: zip::result::ZipError) -> Error {
    Error::corruption(format!("mcworld: not a readable zip: {e}"))
}

/// Checks an entry name; returns it without a trailing `/`.
fn safe_name(name: &str) -> Result<&str> {
    let bad = name.is_empty()
        || name.starts_with('/')
        || name.contains('\\')
        || name.contains('\0')
        || name.as_bytes().get(1) == Some(&b':')
        || name.split('/').any(|c| c == ".." || c == ".");
    if bad {
        return Err(refuse(format!("unsafe entry name {name:?}")));
    }
    Ok(name.trim_end_matches('/'))
}

/// The entry count claimed by the end-of-central-directory record (None if not found or
/// zip64's 0xFFFF marker).
fn claimed_entries(zip: &[u8]) -> Option<u64> {
    let from = zip.len().saturating_sub(22 + 65_535);
    let at = (from..zip.len().saturating_sub(21))
        .rev()
        .find(|&i| zip[i..i + 4] == [0x50, 0x4B, 0x05, 0x06])?;
    let n = u16::from_le_bytes([zip[at + 10], zip[at + 11]]);
    (n != 0xFFFF).then_some(n as u64)
}

fn find_root(names: &[String]) -> Result<String> {
    let parent = |n: &str, leaf: &str| -> Option<String> {
        let p = n.strip_suffix(leaf)?;
        (p.is_empty() || p.ends_with('/')).then(|| p.trim_end_matches('/').to_string())
    };
    let depth = |p: &String| {
        if p.is_empty() {
            0
        } else {
            p.split('/').count()
        }
    };
    for leaf in ["level.dat", "db/CURRENT", "CURRENT"] {
        let best = names
            .iter()
            .filter_map(|n| parent(n, leaf))
            .filter(|p| depth(p) <= 1)
            .min_by_key(|p| (depth(p), p.clone()));
        if let Some(root) = best {
            return Ok(root);
        }
    }
    Err(refuse("no level.dat or db/CURRENT in the archive"))
}

/// Unpacks the world in `zip` into `dest` on `storage`.
pub fn import(
    zip: &[u8],
    storage: &dyn Storage,
    dest: &str,
    limits: ImportLimits,
) -> Result<ImportReport> {
    if let Some(n) = claimed_entries(zip) {
        if n > limits.max_entries as u64 {
            return Err(refuse(format!(
                "{n} entries (limit {})",
                limits.max_entries
            )));
        }
    }
    let consumed = Arc::new(AtomicU64::new(0));
    let reader = Counting {
        inner: Cursor::new(zip),
        consumed: consumed.clone(),
    };
    let mut archive = zip::ZipArchive::new(reader).map_err(zip_err)?;
    if archive.len() > limits.max_entries {
        return Err(refuse(format!(
            "{} entries (limit {})",
            archive.len(),
            limits.max_entries
        )));
    }
    let mut names = Vec::with_capacity(archive.len());
    for i in 0..archive.len() {
        let name = archive
            .name_for_index(i)
            .ok_or_else(|| refuse("entry vanished"))?
            .map_err(zip_err)?;
        names.push(safe_name(&name)?.to_string());
    }
    let root = find_root(&names)?;
    let prefix = if root.is_empty() {
        String::new()
    } else {
        format!("{root}/")
    };
    storage.create_dir_all(dest)?;
    let mut report = ImportReport {
        root_in_zip: root.clone(),
        files: 0,
        bytes: 0,
    };
    let mut buf = vec![0u8; 64 * 1024];
    for (i, name) in names.iter().enumerate() {
        let Some(rel) = name.strip_prefix(&prefix) else {
            continue;
        };
        let mut file = archive.by_index(i).map_err(zip_err)?;
        if file.is_dir() || rel.is_empty() {
            if !rel.is_empty() {
                storage.create_dir_all(&storage::join(dest, rel))?;
            }
            continue;
        }
        let path = storage::join(dest, rel);
        if let Some((dir, _)) = path.rsplit_once('/') {
            storage.create_dir_all(dir)?;
        }
        let start = consumed.load(Ordering::Relaxed);
        let mut out = storage.create(&path)?;
        let mut written = 0u64;
        loop {
            let n = file
                .read(&mut buf)
                .map_err(|e| Error::corruption(format!("mcworld: {name}: {e}")))?;
            if n == 0 {
                break;
            }
            written += n as u64;
            report.bytes += n as u64;
            if written > limits.max_entry_bytes {
                return Err(refuse(format!(
                    "{name} inflates past {} bytes",
                    limits.max_entry_bytes
                )));
            }
            if report.bytes > limits.max_total_bytes {
                return Err(refuse(format!(
                    "the archive inflates past {} bytes",
                    limits.max_total_bytes
                )));
            }
            let compressed = (consumed.load(Ordering::Relaxed) - start).max(1);
            if written > 1 << 20 && written / compressed > limits.max_ratio {
                return Err(refuse(format!(
                    "{name} inflates more than {}× its compressed size",
                    limits.max_ratio
                )));
            }
            out.append(&buf[..n])?;
        }
        out.sync()?;
        report.files += 1;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_roots() {
        for bad in [
            "../evil",
            "a/../../b",
            "/etc/passwd",
            "C:/x",
            "a\\b",
            "a/./b",
            "",
        ] {
            assert!(safe_name(bad).is_err(), "{bad:?}");
        }
        assert_eq!(safe_name("db/").unwrap(), "db");
        let n = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(find_root(&n(&["level.dat", "db/CURRENT"])).unwrap(), "");
        assert_eq!(
            find_root(&n(&["W/level.dat", "W/db/CURRENT"])).unwrap(),
            "W"
        );
        assert_eq!(find_root(&n(&["W/db/CURRENT"])).unwrap(), "W");
        assert_eq!(find_root(&n(&["CURRENT", "000001.log"])).unwrap(), "");
        assert!(find_root(&n(&["a/b/level.dat"])).is_err());
        assert!(find_root(&n(&["xlevel.dat"])).is_err());
    }
}
