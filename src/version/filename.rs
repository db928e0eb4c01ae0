//! File names inside a database folder (LevelDB db/filename.cc): `CURRENT`, `LOCK`, `LOG`,
//! `LOG.old`, `MANIFEST-NNNNNN`, `NNNNNN.log`, `NNNNNN.ldb` (legacy `.sst`), `NNNNNN.dbtmp`.

use crate::error::{Error, Result};
use crate::storage::{join, Storage};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileType {
    Log,
    DbLock,
    Table,
    Descriptor,
    Current,
    Temp,
    InfoLog,
}

pub fn log_file_name(dir: &str, number: u64) -> String {
    join(dir, &format!("{number:06}.log"))
}

pub fn table_file_name(dir: &str, number: u64) -> String {
    join(dir, &format!("{number:06}.ldb"))
}

pub fn sst_table_file_name(dir: &str, number: u64) -> String {
    join(dir, &format!("{number:06}.sst"))
}

pub fn descriptor_file_name(dir: &str, number: u64) -> String {
    join(dir, &format!("MANIFEST-{number:06}"))
}

pub fn current_file_name(dir: &str) -> String {
    join(dir, "CURRENT")
}

pub fn lock_file_name(dir: &str) -> String {
    join(dir, "LOCK")
}

pub fn temp_file_name(dir: &str, number: u64) -> String {
    join(dir, &format!("{number:06}.dbtmp"))
}

fn parse_number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Recognizes a file name: `(number, type)`; number is 0 for unnumbered files.
pub fn parse_file_name(name: &str) -> Option<(u64, FileType)> {
    match name {
        "CURRENT" => return Some((0, FileType::Current)),
        "LOCK" => return Some((0, FileType::DbLock)),
        "LOG" | "LOG.old" => return Some((0, FileType::InfoLog)),
        _ => {}
    }
    if let Some(rest) = name.strip_prefix("MANIFEST-") {
        return parse_number(rest).map(|n| (n, FileType::Descriptor));
    }
    let (stem, ext) = name.split_once('.')?;
    let n = parse_number(stem)?;
    let t = match ext {
        "log" => FileType::Log,
        "ldb" | "sst" => FileType::Table,
        "dbtmp" => FileType::Temp,
        _ => return None,
    };
    Some((n, t))
}

/// Points `CURRENT` at `MANIFEST-number` atomically (write a temp file, sync, rename).
pub fn set_current_file(storage: &dyn Storage, dir: &str, number: u64) -> Result<()> {
    let manifest = format!("MANIFEST-{number:06}\n");
    let tmp = temp_file_name(dir, number);
    crate::storage::write_all(storage, &tmp, manifest.as_bytes())?;
    if let Err(e) = storage.rename(&tmp, &current_file_name(dir)) {
        let _ = storage.remove(&tmp);
        return Err(e);
    }
    storage.sync_dir(dir)
}

/// Removes a MANIFEST whose installation failed, unless `CURRENT` already names it (the
/// rename happened and only the folder sync after it failed): then it is the live MANIFEST.
pub fn remove_uninstalled_manifest(storage: &dyn Storage, dir: &str, number: u64) {
    let path = descriptor_file_name(dir, number);
    if read_current_file(storage, dir).is_ok_and(|name| name == crate::storage::base_name(&path)) {
        return;
    }
    let _ = storage.remove(&path);
}

/// Reads `CURRENT` and returns the MANIFEST file name it names. Accepts `\n` and `\r\n`.
pub fn read_current_file(storage: &dyn Storage, dir: &str) -> Result<String> {
    let path = current_file_name(dir);
    let bytes = crate::storage::read_all(storage, &path)?;
    let bad = |why: &str| Error::corruption(format!("CURRENT {why}")).in_file("CURRENT");
    if bytes.len() > 4096 {
        return Err(bad("is too large"));
    }
    let text = std::str::from_utf8(&bytes).map_err(|_| bad("is not text"))?;
    let name = text
        .strip_suffix("\r\n")
        .or_else(|| text.strip_suffix('\n'))
        .ok_or_else(|| bad("does not end with a newline"))?;
    match parse_file_name(name) {
        Some((_, FileType::Descriptor)) => Ok(name.to_string()),
        _ => Err(bad(&format!("names {name:?}, not a MANIFEST file"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::MemStorage;

    #[test]
    fn names_round_trip() {
        assert_eq!(log_file_name("db", 7), "db/000007.log");
        assert_eq!(table_file_name("db", 1234567), "db/1234567.ldb");
        assert_eq!(descriptor_file_name("db", 2), "db/MANIFEST-000002");
        for (name, want) in [
            ("100.log", Some((100, FileType::Log))),
            ("0.ldb", Some((0, FileType::Table))),
            ("000005.sst", Some((5, FileType::Table))),
            ("MANIFEST-000002", Some((2, FileType::Descriptor))),
            ("CURRENT", Some((0, FileType::Current))),
            ("LOCK", Some((0, FileType::DbLock))),
            ("LOG.old", Some((0, FileType::InfoLog))),
            ("000009.dbtmp", Some((9, FileType::Temp))),
            ("", None),
            ("foo", None),
            ("MANIFEST", None),
            ("MANIFEST-", None),
            ("MANIFEST-3x", None),
            ("100", None),
            ("100.", None),
            ("100.lop", None),
            ("-1.log", None),
            ("184467440737095516150.log", None),
        ] {
            assert_eq!(parse_file_name(name), want, "{name}");
        }
    }

    #[test]
    fn current_accepts_lf_and_crlf_only() {
        let s = MemStorage::new();
        set_current_file(&s, "db", 5).unwrap();
        assert_eq!(s.contents("db/CURRENT").unwrap(), b"MANIFEST-000005\n");
        assert_eq!(read_current_file(&s, "db").unwrap(), "MANIFEST-000005");
        assert!(!s.exists("db/000005.dbtmp"));
        crate::storage::write_all(&s, "db/CURRENT", b"MANIFEST-000009\r\n").unwrap();
        assert_eq!(read_current_file(&s, "db").unwrap(), "MANIFEST-000009");
        for bad in [
            &b"MANIFEST-000009"[..],
            b"",
            b"\n",
            b"000003.log\n",
            b"MANIF\xffEST\n",
        ] {
            crate::storage::write_all(&s, "db/CURRENT", bad).unwrap();
            let e = read_current_file(&s, "db").unwrap_err();
            assert!(e.is_corruption(), "{bad:?}");
            assert_eq!(e.file(), Some("CURRENT"));
        }
    }
}
