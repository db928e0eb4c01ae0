//! Crash recovery, locking and repair.
//!
//! Crash images: while a database is being written (with flushes and compactions running on
//! the background thread), copies of the whole in-memory file system are taken at random
//! moments — what a machine crash would leave — and the newest log is cut at a random byte
//! past the last synced write (a torn, unsynced tail). Each image must open, hold every write
//! acknowledged with `sync`, and show every batch entirely or not at all.

mod common;

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::Arc;

use common::{entries, Rng};
use strata::db::WriteBatch;
use strata::storage::{MemStorage, Storage};
use strata::{Db, ErrorKind, Options, ReadOptions, WriteOptions};

const GROUPS: u64 = 200;

fn options() -> Options {
    Options {
        write_buffer_size: 16 * 1024,
        max_file_size: 32 * 1024,
        ..Options::google().create()
    }
}

/// State of every group after applying `history[..n]`.
fn state_after(history: &[(u64, String)], n: usize) -> BTreeMap<u64, String> {
    let mut s = BTreeMap::new();
    for (g, v) in &history[..n] {
        s.insert(*g, v.clone());
    }
    s
}

fn newest_log(storage: &MemStorage) -> Option<(String, usize)> {
    let name = common::logs_in(storage, "db").pop()?;
    let len = storage.file_size(&format!("db/{name}")).unwrap() as usize;
    Some((name, len))
}

#[test]
fn crash_images_keep_synced_writes_and_whole_batches() {
    let storage = MemStorage::new();
    let shared: Arc<dyn Storage> = Arc::new(storage.clone());
    let db = Db::open(shared, "db", options()).unwrap();
    let mut rng = Rng(0xc4a5_11ed);
    let mut history: Vec<(u64, String)> = Vec::new();
    // (history length, newest log name and length) at the last synced acknowledgement.
    let mut synced: (usize, Option<(String, usize)>) = (0, None);
    let mut images = 0;
    let mut torn = 0;
    for i in 0..6000u64 {
        let g = rng.below(GROUPS);
        let v = format!("batch {i} {}", "x".repeat(rng.below(300) as usize));
        let mut b = WriteBatch::new();
        for part in ["a", "b", "c"] {
            b.put(format!("g{g:03}-{part}").as_bytes(), v.as_bytes());
        }
        let sync = rng.below(5) == 0;
        db.write(
            &WriteOptions {
                sync,
                ..Default::default()
            },
            b,
        )
        .unwrap();
        history.push((g, v));
        if sync {
            synced = (history.len(), newest_log(&storage));
        }
        if rng.below(40) != 0 {
            continue;
        }
        // A crash now.
        let image = storage.snapshot();
        images += 1;
        if let Some((name, len)) = newest_log(&image) {
            let floor = match &synced.1 {
                Some((sname, slen)) if *sname == name => *slen,
                _ => 0,
            };
            if len > floor {
                let cut = floor + rng.below((len - floor) as u64 + 1) as usize;
                image.truncate(&format!("db/{name}"), cut);
                torn += 1;
            }
        }
        let recovered = Db::open(Arc::new(image), "db", options())
            .unwrap_or_else(|e| panic!("image {images} does not open: {e}"));
        let mut got: BTreeMap<u64, String> = BTreeMap::new();
        let mut it = recovered.iter(&ReadOptions::default());
        it.seek_to_first();
        let mut parts: BTreeMap<u64, Vec<String>> = BTreeMap::new();
        while it.valid() {
            let k = std::str::from_utf8(it.key()).unwrap();
            let g: u64 = k[1..4].parse().unwrap();
            parts
                .entry(g)
                .or_default()
                .push(String::from_utf8(it.value().to_vec()).unwrap());
            it.next();
        }
        it.status().unwrap();
        for (g, vs) in parts {
            assert_eq!(vs.len(), 3, "image {images}: group {g} has a partial batch");
            assert!(
                vs.iter().all(|v| *v == vs[0]),
                "image {images}: group {g} mixes batches"
            );
            got.insert(g, vs[0].clone());
        }
        // The image is the state after some prefix of the history that includes every
        // synced write.
        let ok = (synced.0..=history.len()).any(|n| state_after(&history, n) == got);
        assert!(
            ok,
            "image {images}: not a prefix state at or after the last sync ({} writes, {} synced)",
            history.len(),
            synced.0
        );
    }
    println!(
        "{images} crash images ({torn} with torn logs), {} writes",
        history.len()
    );
    assert!(images > 100);
    let p = db.properties();
    assert!(p.flushes > 20 && p.compactions > 5, "{p:?}");
}

#[test]
fn a_second_opener_gets_locked_in_this_process_and_another() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let d = dir.to_str().unwrap();
    let db = Db::open_path(d, Options::google().create()).unwrap();
    db.put(&WriteOptions::default(), b"k", b"v").unwrap();
    let e = Db::open_path(d, Options::google()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Locked, "{e}");
    let e = Db::open_path(d, Options::google().read_only()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Locked, "{e}");
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["put", d, "x", "y"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Locked"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    drop(db);
    // Released on close (and a crashed holder's lock dies with its process).
    let db = Db::open_path(d, Options::google()).unwrap();
    assert_eq!(
        db.get(&ReadOptions::default(), b"k").unwrap().as_deref(),
        Some(&b"v"[..])
    );
}

fn fill(dir: &str, n: u32) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let db = Db::open_path(
        dir,
        Options {
            write_buffer_size: 64 * 1024,
            block_size: 1024,
            ..Options::bedrock().create()
        },
    )
    .unwrap();
    let mut model = BTreeMap::new();
    for i in 0..n {
        let k = format!("key{i:06}").into_bytes();
        let v = format!("value {i} {}", "z".repeat((i % 50) as usize)).into_bytes();
        db.put(&WriteOptions::default(), &k, &v).unwrap();
        model.insert(k, v);
    }
    db.compact_range(None, None).unwrap();
    for i in 0..100 {
        let k = format!("log{i:03}").into_bytes();
        db.put(&WriteOptions::default(), &k, b"in the log").unwrap();
        model.insert(k, b"in the log".to_vec());
    }
    model
}

fn contents(dir: &str) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let db = Db::open_path(dir, Options::default().read_only()).unwrap();
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    let mut m = BTreeMap::new();
    while it.valid() {
        m.insert(it.key().to_vec(), it.value().to_vec());
        it.next();
    }
    it.status().unwrap();
    m
}

#[test]
fn repair_rebuilds_a_lost_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let d = dir.to_str().unwrap();
    let model = fill(d, 20_000);
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        if name.starts_with("MANIFEST-") || name == "CURRENT" {
            std::fs::remove_file(p).unwrap();
        }
    }
    assert_eq!(
        Db::open_path(d, Options::default()).unwrap_err().kind(),
        ErrorKind::NotFound
    );
    let r = strata::db::repair::repair(Arc::new(strata::FsStorage::new()), d, &Options::bedrock())
        .unwrap();
    assert_eq!(r.logs_replayed, 1);
    assert_eq!(r.log_records, 100);
    assert_eq!(r.tables_lost + r.tables_rewritten, 0);
    assert_eq!(r.entries, 20_100);
    assert!(contents(d) == model, "repaired contents differ");
    // It is a normal database again.
    let db = Db::open_path(d, Options::bedrock()).unwrap();
    db.put(&WriteOptions::default(), b"after", b"repair")
        .unwrap();
    db.compact_range(None, None).unwrap();
    db.verify().unwrap();
}

#[test]
fn repair_keeps_every_intact_entry_of_a_damaged_table() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let d = dir.to_str().unwrap();
    let model = fill(d, 20_000);
    // Damage one data block of the largest table.
    let db = Db::open_path(d, Options::default().read_only()).unwrap();
    let version = db.version();
    let f = version
        .all_files()
        .map(|(_, f)| f.clone())
        .max_by_key(|f| f.file_size)
        .unwrap();
    let table = db.table_cache().table(f.number, f.file_size).unwrap();
    let mut index = table.index_iter();
    use strata::iterator::InternalIterator;
    index.seek_to_first();
    index.next();
    index.next();
    let (handle, _) = strata::table::format::BlockHandle::decode(index.value()).unwrap();
    let (block, _) = table.read_block_uncached(handle, true).unwrap();
    let block = Arc::new(block);
    let mut it = block.iter();
    it.seek_to_first();
    let mut lost = Vec::new();
    while it.valid() {
        lost.push(strata::key::extract_user_key(it.key()).to_vec());
        it.next();
    }
    drop((it, table, version, db));
    let path = dir.join(format!("{:06}.ldb", f.number));
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[handle.offset as usize + 10] ^= 0x55;
    std::fs::write(&path, bytes).unwrap();
    let e = Db::open_path(d, Options::default().read_only())
        .unwrap()
        .scan()
        .unwrap_err();
    assert!(e.is_corruption());

    let r = strata::db::repair::repair(Arc::new(strata::FsStorage::new()), d, &Options::bedrock())
        .unwrap();
    assert_eq!(r.tables_rewritten, 1);
    assert!(!lost.is_empty());
    let mut expected = model.clone();
    for k in &lost {
        expected.remove(k);
    }
    let got = contents(d);
    assert_eq!(got.len(), model.len() - lost.len(), "recovered count");
    assert!(got == expected, "every intact entry is kept");
    println!(
        "repair kept {} of {} entries ({} in the damaged block)",
        got.len(),
        model.len(),
        lost.len()
    );
}

/// What recovery reports of a log's unused tail: a tail of zeros alone is not reported (the
/// space a synced log is extended with, `storage::fs`), and a record cut by the end of the
/// file is counted to the cut even when its last bytes are zeros (a sequence number's high
/// bytes here), since the file does not end on a block boundary.
#[test]
fn unused_log_tails_are_counted_to_the_cut_and_zeros_alone_are_not_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let d = dir.to_str().unwrap();
    let db = Db::open_path(d, Options::google().create()).unwrap();
    for i in 0..50u32 {
        let key = format!("key{i:03}");
        db.put(&WriteOptions::default(), key.as_bytes(), b"a value")
            .unwrap();
    }
    drop(db);
    let log = common::only_log(&dir);
    let path = dir.join(&log);
    let bytes = std::fs::read(&path).unwrap();
    let fs = strata::FsStorage::new();
    let mut reader = strata::log::Reader::new(
        fs.open_random(path.to_str().unwrap()).unwrap(),
        log.clone(),
        true,
        true,
    );
    let mut record = Vec::new();
    let mut records = 0;
    while reader.read_record(&mut record).unwrap() {
        records += 1;
    }
    let last = reader.last_record_offset();
    assert_eq!(reader.end_of_last_record(), bytes.len() as u64);

    // Zeros after the last record (not to a block boundary): nothing reported.
    let mut zeros = bytes.clone();
    zeros.resize(bytes.len() + 5000, 0);
    std::fs::write(&path, &zeros).unwrap();
    let db = Db::open_path(d, Options::google().read_only()).unwrap();
    assert!(db.recovery_info().is_clean(), "{:?}", db.recovery_info());
    assert_eq!(db.recovery_info().logs[0].records, records);
    drop(db);

    // The last record cut 8 bytes into its payload: the sequence number's last bytes are zero.
    let cut = last as usize + 7 + 8;
    assert_eq!(bytes[cut - 1], 0);
    assert_ne!(cut % 32_768, 0);
    std::fs::write(&path, &bytes[..cut]).unwrap();
    let db = Db::open_path(d, Options::google().read_only()).unwrap();
    let info = db.recovery_info();
    assert_eq!(
        info.dropped_tails,
        vec![strata::db::DroppedTail {
            file: log.clone(),
            offset: last,
            bytes: 15,
        }]
    );
    assert_eq!(info.logs[0].records, records - 1);
}

/// Where each record of a log starts and ends.
struct Records {
    starts: Vec<u64>,
    ends: Vec<u64>,
}

/// A crash image of a log with synced writes: the log's records (200 puts, one each),
/// then the zeros it was extended with up to a block boundary. Returns the image's folder,
/// the log's name, its records, and the sequence after the last.
fn synced_crash_image(
    tmp: &std::path::Path,
    name: &str,
) -> (std::path::PathBuf, String, Records, u64) {
    let dir = tmp.join(format!("{name}-live"));
    let db = Db::open_path(dir.to_str().unwrap(), Options::google().create()).unwrap();
    let sync = WriteOptions {
        sync: true,
        ..WriteOptions::default()
    };
    for i in 0..200u32 {
        let value = vec![b'a' + (i % 26) as u8; 300];
        db.put(&sync, format!("key{i:04}").as_bytes(), &value)
            .unwrap();
    }
    let image = tmp.join(name);
    common::copy_dir(&dir, &image);
    drop(db);
    let log = common::only_log(&image);
    let fs = strata::FsStorage::new();
    let mut reader = strata::log::Reader::new(
        fs.open_random(image.join(&log).to_str().unwrap()).unwrap(),
        log.clone(),
        true,
        true,
    );
    let mut record = Vec::new();
    let mut records = Records {
        starts: Vec::new(),
        ends: Vec::new(),
    };
    let mut next = 0;
    while reader.read_record(&mut record).unwrap() {
        records.starts.push(reader.last_record_offset());
        records.ends.push(reader.end_of_last_record());
        let b = WriteBatch::from_contents(record.clone()).unwrap();
        next = b.sequence() + b.count() as u64;
    }
    assert_eq!(records.starts.len(), 200, "one record per put");
    (image, log, records, next)
}

/// Recovery of a log with holes a power cut left in its zeros: the replay ends at the first
/// hole (a prefix), the rest is reported as the log's dropped tail; records a peer appended
/// after the zeros (LevelDB's `reuse_logs`) are replayed when they continue the history, and
/// end the log when they do not.
#[test]
fn recovery_ends_a_log_at_a_power_cut_hole_and_takes_a_peers_append() {
    let tmp = tempfile::tempdir().unwrap();
    let count = |dir: &std::path::Path| {
        let db = Db::open_path(dir.to_str().unwrap(), Options::google().read_only()).unwrap();
        (db.scan().unwrap().entries, db.recovery_info().clone())
    };

    // A whole sector lost in the middle of the records (record 100 on).
    let (image, log, records, _) = synced_crash_image(tmp.path(), "hole");
    let path = image.join(&log);
    let mut bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.len() % 32_768, 0);
    let end = *records.ends.last().unwrap();
    assert!(bytes[end as usize..].iter().all(|&b| b == 0));
    let lost = (records.starts[101] as usize + 10).div_ceil(512) * 512;
    bytes[lost..lost + 512].fill(0);
    std::fs::write(&path, &bytes).unwrap();
    let (n, info) = count(&image);
    // The record holding the lost sector's start; the puts before it survive.
    let hit = records.ends.iter().position(|&e| e > lost as u64).unwrap();
    assert!(hit >= 101);
    assert_eq!(n, hit as u64, "the puts before the damaged record");
    assert_eq!(info.logs[0].records, hit as u64);
    assert_eq!(
        info.dropped_tails,
        vec![strata::db::DroppedTail {
            file: log.clone(),
            offset: records.ends[hit - 1],
            bytes: end - records.ends[hit - 1],
        }]
    );

    // A peer's append after the zeros, continuing the history: replayed.
    let append = |image: &std::path::Path, sequence: u64| {
        let path = image.join(&log);
        let size = std::fs::metadata(&path).unwrap().len();
        let fs = strata::FsStorage::new();
        let mut w =
            strata::log::Writer::with_length(fs.append(path.to_str().unwrap()).unwrap(), size);
        let mut b = WriteBatch::new();
        b.put(b"peer key", b"peer value");
        b.set_sequence(sequence);
        w.add_record(b.contents()).unwrap();
        w.sync().unwrap();
        drop(w);
        // Zeros after it to a block boundary, as Strata's writer leaves them (a log a synced
        // writer extended): the case where a record after zeros may lie past a hole.
        let size = std::fs::metadata(&path).unwrap().len();
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(size.div_ceil(32_768) * 32_768).unwrap();
    };
    let (image, _, _, next) = synced_crash_image(tmp.path(), "append");
    append(&image, next);
    let (n, info) = count(&image);
    assert_eq!(n, 201);
    assert!(info.is_clean(), "{info:?}");
    assert_eq!(info.logs[0].records, 201);

    // Records after the zeros that skip sequences lie past a hole: not replayed, reported.
    let (image, _, records, next) = synced_crash_image(tmp.path(), "skip");
    let size = std::fs::metadata(image.join(&log)).unwrap().len();
    append(&image, next + 5);
    let (n, info) = count(&image);
    assert_eq!(n, 200);
    assert_eq!(info.logs[0].records, 200);
    let tail = &info.dropped_tails;
    assert_eq!(tail.len(), 1, "{info:?}");
    assert_eq!(tail[0].offset, *records.ends.last().unwrap());
    // To the appended record's end, past the zeros.
    assert!(tail[0].offset + tail[0].bytes > size);
}

/// Names and sizes of the files in `db`, sorted.
fn files_of(s: &dyn Storage) -> Vec<(String, u64)> {
    let mut names = s.list("db").unwrap();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let size = s.file_size(&format!("db/{n}")).unwrap();
            (n, size)
        })
        .collect()
}

/// An open with nothing to recover writes nothing: the MANIFEST's own log is empty, so
/// writing goes on in it. The open creates, renames, removes and syncs nothing (it opens
/// that log for writing again: one `create`, truncating nothing); the first synced write
/// then syncs the folder, as it does for a new log, and a power loss after it keeps it.
/// A log holding anything, even only a switch marker, is replaced as before.
#[test]
fn an_idle_open_writes_nothing_and_goes_on_in_its_empty_log() {
    use strata::storage::{DirPolicy, FaultStorage, OpKind};
    let inner = Arc::new(MemStorage::new());
    let w = WriteOptions::default();
    // Written, then reopened: the replay is flushed and the new log is empty.
    {
        let db = Db::open(inner.clone(), "db", Options::google().create()).unwrap();
        for i in 0..100u32 {
            db.put(&w, format!("k{i:03}").as_bytes(), b"first").unwrap();
        }
    }
    drop(Db::open(inner.clone(), "db", Options::google()).unwrap());
    let before = files_of(&*inner);
    let logs: Vec<&(String, u64)> = before.iter().filter(|(n, _)| n.ends_with(".log")).collect();
    assert_eq!(logs.len(), 1, "{before:?}");
    let (log, log_size) = logs[0].clone();
    assert_eq!(log_size, 0);

    let fault = Arc::new(FaultStorage::with_policy(
        inner.clone(),
        DirPolicy::DropUnsyncedEntries,
    ));
    let db = Db::open(fault.clone(), "db", Options::google()).unwrap();
    let kinds = [
        OpKind::Create,
        OpKind::Append,
        OpKind::Sync,
        OpKind::Rename,
        OpKind::Remove,
        OpKind::SyncDir,
    ];
    let counts = |f: &FaultStorage| kinds.map(|k| f.counts().get(k));
    assert_eq!(counts(&fault), [1, 0, 0, 0, 0, 0]);
    assert_eq!(files_of(&*inner), before);
    assert!(db.recovery_info().is_clean(), "{:?}", db.recovery_info());

    // A synced write: the folder (once), then the log.
    let sync = WriteOptions {
        sync: true,
        ..WriteOptions::default()
    };
    db.put(&sync, b"k100", b"second").unwrap();
    let c = counts(&fault);
    assert_eq!([c[2], c[3], c[4], c[5]], [1, 0, 0, 1]);
    let image = Arc::new(fault.crash_image());
    drop(db);
    let db = Db::open(image.clone(), "db", Options::google()).unwrap();
    let info = db.recovery_info();
    assert!(info.is_clean(), "{info:?}");
    assert_eq!(
        info.logs
            .iter()
            .map(|l| (l.name.as_str(), l.records))
            .collect::<Vec<_>>(),
        [(log.as_str(), 1)]
    );
    let all = entries(&db);
    assert_eq!(all.len(), 101);
    assert_eq!(all[0], (b"k000".to_vec(), b"first".to_vec()));
    assert_eq!(all[100], (b"k100".to_vec(), b"second".to_vec()));

    // That open replayed an entry, so it flushed it and started a new log; after a flush
    // the current log holds a switch marker: the next open replaces it too.
    let after_replay = files_of(&*image);
    assert!(
        !after_replay.iter().any(|(n, _)| *n == log),
        "{after_replay:?}"
    );
    db.flush().unwrap();
    drop(db);
    let marked = files_of(&*image);
    let marked_log: Vec<&(String, u64)> =
        marked.iter().filter(|(n, _)| n.ends_with(".log")).collect();
    assert_eq!(marked_log.len(), 1, "{marked:?}");
    assert!(marked_log[0].1 > 0, "{marked:?}");
    let db = Db::open(image.clone(), "db", Options::google()).unwrap();
    let reopened = files_of(&*image);
    assert!(
        !reopened.iter().any(|(n, _)| n == &marked_log[0].0),
        "{reopened:?}"
    );
    assert_eq!(entries(&db).len(), 101);
}

/// A table the MANIFEST does not name can raise the last sequence above the MANIFEST's; only
/// a new MANIFEST records that, so such an open is not quiet: it replaces the log and writes
/// a MANIFEST, as before. (Quiet, a memtable switch before the first edit would start the
/// next log with a marker beyond what the MANIFEST says, which recovery reads as a gap.)
#[test]
fn an_open_that_finds_a_table_with_later_sequences_writes_them_down() {
    let storage = Arc::new(MemStorage::new());
    let w = WriteOptions::default();
    {
        let db = Db::open(storage.clone(), "db", Options::google().create()).unwrap();
        for i in 0..100u32 {
            db.put(&w, format!("k{i:03}").as_bytes(), b"first").unwrap();
        }
    }
    drop(Db::open(storage.clone(), "db", Options::google()).unwrap());
    // A table written elsewhere, whose sequences run to 1,000, dropped into the folder.
    {
        let other = Db::open(storage.clone(), "other", Options::google().create()).unwrap();
        for i in 0..1000u32 {
            other
                .put(&w, format!("z{i:04}").as_bytes(), b"other")
                .unwrap();
        }
        other.flush().unwrap();
        assert_eq!(other.last_sequence(), 1000);
    }
    let table = storage
        .list("other")
        .unwrap()
        .into_iter()
        .find(|n| n.ends_with(".ldb"))
        .unwrap();
    let bytes = strata::storage::read_all(&*storage, &format!("other/{table}")).unwrap();
    strata::storage::write_all(&*storage, "db/000900.ldb", &bytes).unwrap();

    let before = files_of(&*storage);
    let db = Db::open(storage.clone(), "db", Options::google()).unwrap();
    let info = db.recovery_info();
    assert_eq!(info.unreferenced_tables.len(), 1, "{info:?}");
    assert_eq!(db.last_sequence(), 1000);
    let after = files_of(&*storage);
    let named = |files: &[(String, u64)], ext: &str| -> Vec<String> {
        files
            .iter()
            .filter(|(n, _)| n.contains(ext))
            .map(|(n, _)| n.clone())
            .collect()
    };
    assert_ne!(named(&before, ".log"), named(&after, ".log"));
    assert_ne!(named(&before, "MANIFEST"), named(&after, "MANIFEST"));
    // The table stays where it was, reported, never deleted.
    assert!(after.iter().any(|(n, _)| n == "000900.ldb"));
}
