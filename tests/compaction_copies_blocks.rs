//! A compaction copies a stored block holding one large value instead of decompressing and
//! compressing it again (`Options::copy_stored_blocks`): exactly the blocks that are alone in
//! their input table and would be alone in the output, only in the output's codec, and the
//! output tables are byte for byte those a compaction rebuilding every block writes.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use strata::{CompressionType, Db, Options, ReadOptions, WriteOptions};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn key(i: usize) -> Vec<u8> {
    format!("key{i:03}").into_bytes()
}

/// 6,000 bytes that every codec compresses by far more than an eighth: alone, a block of its
/// own at 4 KiB blocks.
fn large(i: usize, salt: u8) -> Vec<u8> {
    let line = format!("value {i:03} version {salt} of a large entry; ");
    line.bytes().cycle().take(6_000).collect()
}

/// 6,000 bytes no codec shrinks by an eighth: stored raw (id 0) under any codec.
fn incompressible(i: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ i as u64;
    (0..6_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

fn options(compression: CompressionType, copy: bool, threads: usize) -> Options {
    sized_options(compression, copy, threads, Options::google().max_file_size)
}

fn sized_options(
    compression: CompressionType,
    copy: bool,
    threads: usize,
    max_file_size: u64,
) -> Options {
    let mut o = Options::google().create();
    o.max_file_size = max_file_size;
    o.compression = compression;
    o.allow_foreign_codec = true;
    o.block_size = 4096;
    o.write_buffer_size = 64 << 20;
    o.background_thread = false;
    o.disable_auto_compactions = true;
    o.compression_threads = threads;
    o.copy_stored_blocks = copy;
    o
}

/// Table A: keys 0-29 large, 30-39 small, 40-49 large, 50 incompressible, 51 small. Table B:
/// a new large 5 and 45, a deletion of 7, a small 20. Then one compaction merges them.
///
/// Alone in their input blocks: A's 0-29, 41-49, 50 and 51 (40 follows the small ones into
/// their block; 51 is too small to fill a block), B's 5 (B's first entry; 45 shares a block
/// with the deletion and the small 20). The compaction drops 7 and the old 5, 20 and 45, and
/// copies 0-6, 8-19, 22-29, 41-44 and 46-49: 35 blocks (21 joins B's small 20 in a block),
/// and 50 too when the output's codec is none (stored raw is then this codec's form).
///
/// Returns the compactions, the blocks copied and the tables left.
fn scenario(dir: &Path, write: &Options, compact: &Options) -> (u64, u64, usize) {
    let d = dir.to_str().unwrap();
    let w = WriteOptions::default();
    let mut model = Model::new();
    {
        let db = Db::open_path(d, write.clone()).unwrap();
        for i in 0..=51 {
            let v = match i {
                30..=39 | 51 => vec![b's'; 100],
                50 => incompressible(i),
                _ => large(i, 1),
            };
            db.put(&w, &key(i), &v).unwrap();
            model.insert(key(i), v);
        }
        db.flush().unwrap();
        for i in [5, 45] {
            db.put(&w, &key(i), &large(i, 2)).unwrap();
            model.insert(key(i), large(i, 2));
        }
        db.delete(&w, &key(7)).unwrap();
        model.remove(&key(7));
        db.put(&w, &key(20), &[b't'; 100]).unwrap();
        model.insert(key(20), vec![b't'; 100]);
        db.flush().unwrap();
        assert_eq!(db.properties().compactions, 0);
    }
    let db = Db::open_path(d, compact.clone()).unwrap();
    db.compact_range(None, None).unwrap();
    let props = db.properties();
    let got: Model = common::entries(&db).into_iter().collect();
    assert_eq!(got.len(), 51);
    assert!(got == model, "contents after the compaction");
    let tables = db.version().all_files().count();
    (props.compactions, props.blocks_copied, tables)
}

/// Every table in `dir`, by name, with its bytes.
fn tables(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ldb"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect()
}

#[test]
fn copied_blocks_are_exactly_the_lone_large_values_and_change_no_byte() {
    // This build writes no Zstd frames: with Zstd every block is stored raw (id 0), as
    // with none.
    for (codec, copies) in [
        (CompressionType::Snappy, 35),
        (CompressionType::Zlib, 35),
        (CompressionType::ZlibRaw, 35),
        (CompressionType::None, 36),
        (CompressionType::Zstd, 36),
    ] {
        // One output table, or outputs cut at 4,000 bytes with copied blocks in flight (a
        // table is cut only right after a block is written, so the copies are the same). The
        // tables are written with the default size either way, so that they land on the same
        // levels.
        for (threads, max_file_size) in [(0, 2 << 20), (2, 2 << 20), (0, 4_000), (2, 4_000)] {
            let what = format!("{codec:?}, {threads} compression threads, {max_file_size}");
            let tmp = tempfile::tempdir().unwrap();
            let (on, off) = (tmp.path().join("on"), tmp.path().join("off"));
            let w = options(codec, true, threads);
            let o = sized_options(codec, true, threads, max_file_size);
            let (compactions, copied, outputs) = scenario(&on, &w, &o);
            assert_eq!((compactions, copied), (1, copies), "{what}");
            if max_file_size > 1 << 20 {
                assert_eq!(outputs, 1, "{what}");
            } else {
                assert!(outputs >= 3, "{what}: {outputs} tables");
            }
            let w = options(codec, false, threads);
            let o = sized_options(codec, false, threads, max_file_size);
            let (compactions, copied, _) = scenario(&off, &w, &o);
            assert_eq!((compactions, copied), (1, 0), "{what}: copies off");
            let (a, b) = (tables(&on), tables(&off));
            assert_eq!(a.len(), outputs, "{what}");
            assert!(a == b, "{what}: the output tables differ from rebuilt ones");
        }
    }
}

#[test]
fn a_block_in_another_codec_is_rebuilt_in_the_outputs_codec() {
    // Only a block stored raw (the incompressible value 50) is the same block under none.
    for (from, to, copies) in [
        (CompressionType::Zlib, CompressionType::ZlibRaw, 0),
        (CompressionType::ZlibRaw, CompressionType::Zlib, 0),
        (CompressionType::Snappy, CompressionType::Zlib, 0),
        (CompressionType::ZlibRaw, CompressionType::Snappy, 0),
        (CompressionType::None, CompressionType::Snappy, 0),
        (CompressionType::Snappy, CompressionType::None, 1),
        (CompressionType::Zlib, CompressionType::None, 1),
    ] {
        let what = format!("{from:?} to {to:?}");
        let tmp = tempfile::tempdir().unwrap();
        let (changed, direct) = (tmp.path().join("changed"), tmp.path().join("direct"));
        let (compactions, copied, _) =
            scenario(&changed, &options(from, true, 0), &options(to, true, 0));
        assert_eq!((compactions, copied), (1, copies), "{what}");
        // The output is the table a compaction of blocks written in `to` rebuilds.
        let o = options(to, false, 0);
        scenario(&direct, &o, &o);
        assert!(
            tables(&changed) == tables(&direct),
            "{what}: the output is not in the output's codec"
        );
    }
}

/// A block the cache holds unverified (read with `verify_checksums` off) is still never
/// copied with damage under a fresh checksum: the stored bytes are verified as they are read.
#[test]
fn a_damaged_lone_block_is_never_copied_under_a_fresh_checksum() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let d = dir.to_str().unwrap();
    let o = options(CompressionType::Snappy, true, 0);
    let w = WriteOptions::default();
    {
        let db = Db::open_path(d, o.clone()).unwrap();
        for i in 0..20 {
            db.put(&w, &key(i), &large(i, 1)).unwrap();
        }
        db.flush().unwrap();
        db.put(&w, &key(3), &large(3, 2)).unwrap();
        db.flush().unwrap();
    }
    // Flip a byte inside the stored bytes of the first table's block for key 10 (a lone
    // block): Snappy keeps the value's first line as a literal.
    let (name, bytes) = tables(&dir)
        .into_iter()
        .max_by_key(|(_, b)| b.len())
        .unwrap();
    let needle = b"value 010 version 1";
    let at = bytes
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("the value's first line is stored as is");
    let mut damaged = bytes.clone();
    damaged[at] ^= 0x20;
    std::fs::write(dir.join(&name), &damaged).unwrap();

    let db = Db::open_path(d, o).unwrap();
    let unverified = ReadOptions {
        verify_checksums: false,
        ..ReadOptions::default()
    };
    let read = db.get(&unverified, &key(10)).unwrap().unwrap();
    assert_eq!(
        &read[..needle.len()],
        b"Value 010 version 1",
        "the damaged block, cached"
    );
    let err = db.compact_range(None, None).unwrap_err();
    assert!(
        err.to_string().contains("checksum mismatch"),
        "unexpected error: {err}"
    );
    drop(db);
    // The damaged table is left as it was.
    assert_eq!(std::fs::read(dir.join(&name)).unwrap(), damaged);
}
