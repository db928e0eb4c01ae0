//! Regression: one torn MANIFEST record and one ordinary write destroyed a table. A user's
//! world had the MANIFEST record that adds `000005.ldb` torn (truncated mid-record, or its
//! length field flipped): recovery dropped it as a torn tail, silently, so the database read
//! 125 entries instead of 1,675; the next writable open deleted the 802,053-byte table as
//! obsolete and reused its file number for the flushed log: 1,549 records gone for good.
//!
//! Now: recovery reports the unused MANIFEST tail (file, offset, bytes) and the table the
//! MANIFEST never mentions (name, size, entries); no open or compaction deletes a table the
//! database cannot account for, no new file takes its number, and `repair` brings every entry
//! back. The log written after the lost table starts with a switch marker naming sequence
//! 1,501, which the recovered state does not reach: replaying it alone would be no prefix of
//! the history, so it is reported as a gap and parked for repair too, and new writes get
//! sequences above everything on disk. A log cut mid-file: its unused tail is reported.

use std::path::Path;

use strata::db::repair::repair;
use strata::{Db, FsStorage, Options, ReadOptions, WriteOptions};

const IN_TABLE: u32 = 1500;

/// A change to a file's bytes.
type Damage = Box<dyn Fn(&mut Vec<u8>)>;
const IN_LOG: u32 = 125;

fn options() -> Options {
    Options {
        background_thread: false,
        ..Options::bedrock().create()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    format!("value {i} ").repeat(8).into_bytes()
}

/// A database whose last MANIFEST record adds the one table (1,500 entries) and whose log
/// holds 125 more. Returns (MANIFEST name, offset of its last record, table name).
fn build(dir: &Path) -> (String, u64, String) {
    let d = dir.to_str().unwrap();
    let db = Db::open_path(d, options()).unwrap();
    for i in 0..IN_TABLE {
        db.put(&WriteOptions::default(), &key(i), &value(i))
            .unwrap();
    }
    db.flush().unwrap();
    for i in IN_TABLE..IN_TABLE + IN_LOG {
        db.put(&WriteOptions::default(), &key(i), &value(i))
            .unwrap();
    }
    let version = db.version();
    let tables: Vec<u64> = version.all_files().map(|(_, f)| f.number).collect();
    assert_eq!(tables.len(), 1);
    drop(version);
    drop(db);
    let manifest = std::fs::read_to_string(dir.join("CURRENT"))
        .unwrap()
        .trim()
        .to_string();
    // The offset of the MANIFEST's last record: read it with the engine's own log reader.
    let file = FsStorage::new();
    let f = strata::Storage::open_random(&file, dir.join(&manifest).to_str().unwrap()).unwrap();
    let mut reader = strata::log::Reader::new(f, manifest.clone(), true, true);
    let mut record = Vec::new();
    let mut last = 0;
    while reader.read_record(&mut record).unwrap() {
        last = reader.last_record_offset();
    }
    (manifest, last, format!("{:06}.ldb", tables[0]))
}

fn count(d: &str) -> u64 {
    let db = Db::open_path(d, Options::default().read_only()).unwrap();
    db.scan().unwrap().entries
}

#[test]
fn a_torn_manifest_record_loses_no_table() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("base");
    let (manifest, last, table) = build(&base);
    let manifest_len = std::fs::metadata(base.join(&manifest)).unwrap().len();
    let table_bytes = std::fs::read(base.join(&table)).unwrap();
    assert!(manifest_len - last > 20, "{manifest_len} {last}");

    // Cut inside the last record's header, at its payload's start, mid-payload, one byte
    // short; and its length field flipped (a length past the end of the file).
    let cuts = [
        last + 3,
        last + 7,
        last + (manifest_len - last) / 2,
        manifest_len - 1,
    ];
    let mut cases: Vec<(String, Damage)> = cuts
        .iter()
        .map(|&c| {
            let f: Damage = Box::new(move |b: &mut Vec<u8>| b.truncate(c as usize));
            (format!("cut at {c}"), f)
        })
        .collect();
    cases.push((
        "length flipped".to_string(),
        Box::new(move |b: &mut Vec<u8>| b[last as usize + 5] ^= 0x40),
    ));

    for (what, damage) in cases {
        let dir = tmp.path().join(what.replace(' ', "-"));
        std::fs::create_dir(&dir).unwrap();
        for e in std::fs::read_dir(&base).unwrap() {
            let p = e.unwrap().path();
            std::fs::copy(&p, dir.join(p.file_name().unwrap())).unwrap();
        }
        let mpath = dir.join(&manifest);
        let mut bytes = std::fs::read(&mpath).unwrap();
        damage(&mut bytes);
        std::fs::write(&mpath, &bytes).unwrap();
        let d = dir.to_str().unwrap();

        if what == "length flipped" {
            // The stored checksum matches the record's real (shorter) payload, all present:
            // damage, not a torn write. A clear error naming the file and the record, then
            // repair brings everything back.
            let e = Db::open_path(d, Options::default().read_only()).unwrap_err();
            assert!(e.is_corruption(), "{e}");
            assert_eq!(
                (e.file(), e.offset()),
                (Some(manifest.as_str()), Some(last))
            );
            let report = repair(std::sync::Arc::new(FsStorage::new()), d, &options()).unwrap();
            assert_eq!(report.entries, (IN_TABLE + IN_LOG) as u64, "{report:?}");
            assert_eq!(count(d), (IN_TABLE + IN_LOG) as u64);
            continue;
        }

        // Read-only: nothing that would not be a prefix, and the report says why.
        let db = Db::open_path(d, Options::default().read_only()).unwrap();
        assert_eq!(db.scan().unwrap().entries, 0, "{what}");
        let info = db.recovery_info().clone();
        drop(db);
        let gap = info.gap.clone().expect("a gap before the log");
        assert_eq!(
            (gap.expected, gap.found),
            (1, IN_TABLE as u64 + 1),
            "{what}"
        );
        assert_eq!(info.lost_logs.len(), 1, "{what}");
        assert_eq!(info.lost_logs[0].name, gap.log);
        let tail = &info.dropped_tails;
        assert_eq!(tail.len(), 1, "{what}: {info:?}");
        assert_eq!(tail[0].file, manifest, "{what}");
        assert_eq!(tail[0].offset, last, "{what}");
        assert_eq!(tail[0].bytes, bytes.len() as u64 - last, "{what}");
        assert_eq!(info.unreferenced_tables.len(), 1, "{what}: {info:?}");
        let t = &info.unreferenced_tables[0];
        assert_eq!(
            (t.file.as_str(), t.bytes, t.entries),
            (
                table.as_str(),
                table_bytes.len() as u64,
                Some(IN_TABLE as u64)
            ),
            "{what}"
        );
        assert!(info.describe().iter().any(|l| l.contains("strata repair")));

        // Writable: writes, a flush, a compaction, a reopen: the table stays, byte for byte,
        // no new file takes its number, the log waits in lost/ for repair.
        let db = Db::open_path(d, options()).unwrap();
        assert!(dir
            .join("lost")
            .join(format!("{}.unreplayed", gap.log))
            .exists());
        // New writes sort after everything on disk (the lost table's and log's sequences).
        assert!(db.last_sequence() >= (IN_TABLE + IN_LOG) as u64, "{what}");
        let w = WriteOptions::default();
        db.put(&w, &key(3), b"newer than the crash").unwrap();
        db.put(&w, b"after", b"the crash").unwrap();
        db.flush().unwrap();
        db.compact_range(None, None).unwrap();
        let numbers: Vec<u64> = db.version().all_files().map(|(_, f)| f.number).collect();
        assert!(
            !numbers.iter().any(|n| format!("{n:06}.ldb") == table),
            "{what}"
        );
        drop(db);
        let db = Db::open_path(d, options()).unwrap();
        assert_eq!(db.recovery_info().unreferenced_tables.len(), 1, "{what}");
        assert_eq!(db.scan().unwrap().entries, 2, "{what}");
        drop(db);
        assert_eq!(
            std::fs::read(dir.join(&table)).unwrap(),
            table_bytes,
            "{what}"
        );

        // Repair folds both back in: every entry is there again, the newer write on top.
        let report = repair(std::sync::Arc::new(FsStorage::new()), d, &options()).unwrap();
        assert_eq!(report.unreplayed_logs_restored, 1, "{what}: {report:?}");
        assert_eq!(count(d), (IN_TABLE + IN_LOG + 1) as u64, "{what}");
        let db = Db::open_path(d, Options::default().read_only()).unwrap();
        let r = ReadOptions::default();
        assert_eq!(db.get(&r, &key(7)).unwrap(), Some(value(7)));
        assert_eq!(
            db.get(&r, &key(IN_TABLE + 5)).unwrap(),
            Some(value(IN_TABLE + 5))
        );
        assert_eq!(
            db.get(&r, &key(3)).unwrap().as_deref(),
            Some(&b"newer than the crash"[..])
        );
        assert!(
            db.recovery_info().is_clean(),
            "{what}: {:?}",
            db.recovery_info()
        );
    }
}

#[test]
fn a_log_cut_mid_file_reports_its_unused_tail() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let d = dir.to_str().unwrap();
    let db = Db::open_path(d, options()).unwrap();
    for i in 0..IN_LOG {
        db.put(&WriteOptions::default(), &key(i), &value(i))
            .unwrap();
    }
    drop(db);
    let log = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "log"))
        .unwrap();
    let len = std::fs::metadata(&log).unwrap().len();
    // Cut in the middle of a record (each record is 7 + 12 + ~100 bytes).
    let cut = len / 2 + 3;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&log)
        .unwrap()
        .set_len(cut)
        .unwrap();
    let db = Db::open_path(d, Options::default().read_only()).unwrap();
    let entries = db.scan().unwrap().entries;
    assert!(entries > 0 && entries < IN_LOG as u64, "{entries}");
    let info = db.recovery_info();
    assert_eq!(info.dropped_tails.len(), 1, "{info:?}");
    let t = &info.dropped_tails[0];
    assert_eq!(t.file, log.file_name().unwrap().to_str().unwrap());
    assert_eq!(t.offset + t.bytes, cut);
    assert!(t.bytes > 0 && t.bytes < 200, "{t:?}");
    assert!(info.unreferenced_tables.is_empty());
}
