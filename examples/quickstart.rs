//! The basics: open a database folder (created when missing), write, read, iterate a range,
//! take a snapshot, count everything, close. `cargo run --example quickstart [DIR]`.

use strata::db::WriteBatch;
use strata::{Db, Options, ReadOptions, WriteOptions};

fn main() -> strata::Result<()> {
    let dir = std::env::args().nth(1).unwrap_or_else(|| {
        let d = std::env::temp_dir().join(format!("strata-quickstart-{}", std::process::id()));
        d.to_string_lossy().into_owned()
    });
    let db = Db::open_path(&dir, Options::google().create())?;
    let w = WriteOptions::default();
    for i in 0..1000u32 {
        db.put(
            &w,
            format!("key{i:04}").as_bytes(),
            format!("value {i}").as_bytes(),
        )?;
    }
    let mut batch = WriteBatch::new();
    batch.delete(b"key0000");
    batch.put(b"key1000", b"the last one");
    db.write(&WriteOptions { sync: true, ..w }, batch)?;

    let r = ReadOptions::default();
    println!(
        "key0042 = {:?}",
        db.get(&r, b"key0042")?.map(String::from_utf8)
    );
    let snap = db.snapshot();
    db.put(&w, b"key0042", b"changed")?;
    let then = ReadOptions {
        snapshot: Some(snap.sequence()),
        ..ReadOptions::default()
    };
    println!(
        "key0042 then {:?}, now {:?}",
        db.get(&then, b"key0042")?.map(String::from_utf8),
        db.get(&r, b"key0042")?.map(String::from_utf8)
    );
    drop(snap);

    let mut it = db.iter(&r);
    it.seek(b"key0990");
    while it.valid() && it.key() < &b"key0995"[..] {
        println!(
            "{} = {}",
            String::from_utf8_lossy(it.key()),
            String::from_utf8_lossy(it.value())
        );
        it.next();
    }
    it.status()?;
    let stats = db.scan()?;
    println!(
        "{} entries in {dir}, crc32c {}",
        stats.entries, stats.crc32c
    );
    db.close()
}
