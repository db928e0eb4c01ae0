//! `Db::content_identity`: the bytes a cache of something derived from a database (the
//! viewer's kept chunk index) is filed under. The same database opened again (read-only or
//! not) gives the same bytes; a write (in the log or flushed to a table), a copy with one
//! value changed, or another database gives other bytes; opening read-only changes nothing.

use std::path::Path;
use std::sync::Arc;

use strata::{CompressionType, Db, FsStorage, Options, WriteOptions};

fn options() -> Options {
    Options {
        write_buffer_size: 64 * 1024,
        // Flushes and compactions inline: two folders given the same writes get the same
        // files, byte for byte.
        background_thread: false,
        // Table sizes follow value lengths exactly.
        compression: CompressionType::None,
        ..Options::google().create()
    }
}

fn open(dir: &Path, read_only: bool) -> Db {
    let mut o = options();
    o.read_only = read_only;
    Db::open(Arc::new(FsStorage::new()), dir.to_str().unwrap(), o).unwrap()
}

fn fill(dir: &Path, n: u32, odd: &[u8]) {
    let db = open(dir, false);
    for i in 0..n {
        let v = if i == 7 {
            odd.to_vec()
        } else {
            vec![(i % 251) as u8; 100]
        };
        db.put(
            &WriteOptions::default(),
            format!("key{i:06}").as_bytes(),
            &v,
        )
        .unwrap();
    }
    db.close().unwrap();
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn identities_follow_contents() {
    let root = tempfile::tempdir().unwrap();
    let a = root.path().join("a");
    fill(&a, 3000, b"the odd one");
    // Tables and a log: both count.
    let names: Vec<String> = files(&a).into_iter().map(|f| f.0).collect();
    assert!(names.iter().any(|n| n.ends_with(".ldb")), "{names:?}");
    assert!(names.iter().any(|n| n.ends_with(".log")), "{names:?}");

    let before = files(&a);
    let id = open(&a, true).content_identity().unwrap();
    assert_eq!(open(&a, true).content_identity().unwrap(), id);
    // Read-only opens changed nothing on disk.
    assert_eq!(files(&a), before);

    // The same writes into another folder (same numbers, sizes, keys): the same identity.
    let b = root.path().join("b");
    fill(&b, 3000, b"the odd one");
    assert_eq!(files(&b), before);
    assert_eq!(open(&b, true).content_identity().unwrap(), id);
    // The same keys, one value a byte longer (the same key ranges and sequences): another
    // identity. (A value changed at equal table size is what the identity cannot see.)
    let c = root.path().join("c");
    fill(&c, 3000, b"the odd one!");
    assert_ne!(open(&c, true).content_identity().unwrap(), id);

    // A write: another identity, in the log and once flushed into a table.
    let db = open(&a, false);
    let reopened = db.content_identity().unwrap();
    db.put(&WriteOptions::default(), b"key000001", b"changed")
        .unwrap();
    let written = db.content_identity().unwrap();
    assert_ne!(written, reopened);
    db.flush().unwrap();
    let flushed = db.content_identity().unwrap();
    assert_ne!(flushed, written);
    db.close().unwrap();
    assert_ne!(open(&a, true).content_identity().unwrap(), id);
}
