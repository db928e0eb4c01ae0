//! Regression: writes acknowledged without `sync` sat in the log writer's user-space buffer
//! (a `BufWriter`) until the next sync, memtable switch or close, so a crash of the process —
//! not of the machine — lost up to a buffer's worth of acknowledged writes. LevelDB hands every
//! log record to the OS before the write returns, and so does Strata now.
//!
//! The test runs its own executable again as a child that opens a database on disk, writes
//! without `sync` (single puts and batches, across memtable switches) and then aborts: no
//! destructor, no flush. The parent reopens the database and expects every acknowledged write.

use std::process::Command;

use strata::db::WriteBatch;
use strata::{Db, Options, ReadOptions, WriteOptions};

const CHILD_DIR: &str = "STRATA_REGRESSION_CHILD_DIR";
const PUTS: u32 = 3_000;
const BATCHES: u32 = 100;

fn options() -> Options {
    Options {
        // A few memtable switches along the way (each value is ~200 bytes).
        write_buffer_size: 256 * 1024,
        ..Options::google().create()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    format!("value {i} ")
        .repeat(1 + i as usize % 40)
        .into_bytes()
}

fn child(dir: &str) -> ! {
    let db = Db::open_path(dir, options()).unwrap();
    let w = WriteOptions::default();
    for i in 0..PUTS {
        db.put(&w, &key(i), &value(i)).unwrap();
    }
    for b in 0..BATCHES {
        let mut batch = WriteBatch::new();
        for j in 0..10 {
            let i = PUTS + b * 10 + j;
            batch.put(&key(i), &value(i));
        }
        batch.delete(&key(b));
        db.write(&w, batch).unwrap();
    }
    // Every write above was acknowledged; die without running any destructor.
    std::process::abort();
}

#[test]
fn unsynced_acknowledged_writes_survive_an_abort_of_the_process() {
    if let Ok(dir) = std::env::var(CHILD_DIR) {
        child(&dir);
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "unsynced_acknowledged_writes_survive_an_abort_of_the_process",
            "--test-threads=1",
        ])
        .env(CHILD_DIR, &dir)
        .status()
        .unwrap();
    assert!(!status.success(), "the child aborts: {status:?}");

    let db = Db::open_path(dir.to_str().unwrap(), options()).unwrap();
    let r = ReadOptions::default();
    let total = PUTS + BATCHES * 10;
    for i in 0..total {
        let expected = (i >= BATCHES).then(|| value(i));
        assert_eq!(db.get(&r, &key(i)).unwrap(), expected, "key {i}");
    }
    assert_eq!(db.scan().unwrap().entries, (total - BATCHES) as u64);
}
