//! Fuzz target bodies, shared by the cargo-fuzz crate (`fuzz/`) and the stable replay test
//! (`tests/fuzz_replay.rs`), so both exercise exactly the same code.
//!
//! Contract of every function: for any input it returns (`Ok` or `Err`), never panics, never
//! loops without bound and never allocates more than a fixed budget (1 MiB decompression
//! limit, 4 MiB table blocks, bounded `.mcworld` import). The only panics are deliberate
//! `assert!`s on invariants that must hold for all inputs (an iterator that yields more entries
//! than its bytes can hold is looping; a decoded version edit re-encodes to itself) — each is
//! a finding. On success they return a small figure (entries, records) that tests check exactly.
//!
//! Not a public API: hidden from the docs and free to change with the targets.

use std::sync::Arc;

use crate::bedrock::{mcworld, nbt};
use crate::compress;
use crate::db::write_batch::{BatchHandler, WriteBatch};
use crate::error::Result;
use crate::iterator::InternalIterator;
use crate::key::{make_internal_key, ValueType};
use crate::log::Reader;
use crate::options::ReadOptions;
use crate::storage::{self, MemStorage, Storage};
use crate::table::block::Block;
use crate::table::table::TableSettings;
use crate::table::Table;
use crate::version::VersionEdit;

/// Decompression output limit of the `decompress` target.
pub const DECOMPRESS_LIMIT: usize = 1 << 20;
/// Largest block a fuzzed table may decompress.
pub const TABLE_BLOCK_LIMIT: usize = 4 << 20;

/// The most entries `len` bytes of entries can hold (each entry needs a 3-byte header), plus
/// slack: an iterator yielding more is looping.
fn entry_bound(len: usize) -> u64 {
    len as u64 / 3 + 2
}

/// Walks an iterator forward and backward, then seeks to the first keys seen and to a few
/// synthetic targets. Returns the forward entry count, or the iterator's error.
fn exercise(it: &mut dyn InternalIterator, bound: u64) -> Result<u64> {
    let mut forward = 0u64;
    let mut probes: Vec<Vec<u8>> = Vec::new();
    it.seek_to_first();
    while it.valid() {
        forward += 1;
        assert!(forward <= bound, "forward iteration passed {bound} entries");
        if probes.len() < 8 {
            probes.push(it.key().to_vec());
        }
        it.next();
    }
    it.status()?;
    let mut backward = 0u64;
    it.seek_to_last();
    while it.valid() {
        backward += 1;
        assert!(
            backward <= bound,
            "backward iteration passed {bound} entries"
        );
        it.prev();
    }
    it.status()?;
    // No forward == backward check: a damaged block whose restart points land mid-entry
    // legitimately parses differently backwards (no checksum vouches for it).
    probes.push(Vec::new());
    probes.push(vec![0xff; 12]);
    probes.push(make_internal_key(b"", u64::MAX >> 8, ValueType::Value));
    for p in &probes {
        it.seek(p);
        if it.valid() {
            let _ = (it.key().len(), it.value().len());
            it.prev();
            if it.valid() {
                it.next();
            }
        }
    }
    it.status()?;
    Ok(forward)
}

/// `data` as a block's contents: decode, iterate both ways, seek.
pub fn block(data: &[u8]) -> Result<u64> {
    let block = Arc::new(Block::new(data.to_vec())?);
    let mut it = block.iter();
    exercise(&mut it, entry_bound(data.len()))
}

/// `data` as a table file (in a `MemStorage`): open without and with checksum verification,
/// iterate both ways, seek, and look up the first keys with `internal_get`.
pub fn table(data: &[u8]) -> Result<u64> {
    let mem = MemStorage::new();
    storage::write_all(&mem, "000001.ldb", data)?;
    let file = mem.open_random("000001.ldb")?;
    let mut result = Ok(0);
    for verify in [false, true] {
        let settings = TableSettings {
            block_cache: None,
            max_block_size: TABLE_BLOCK_LIMIT,
            verify_checksums: verify,
            readahead: None,
        };
        let table = Arc::new(Table::open(
            file.clone(),
            "000001.ldb",
            data.len() as u64,
            settings,
        )?);
        let options = ReadOptions {
            verify_checksums: verify,
            fill_cache: false,
            ..ReadOptions::default()
        };
        let mut it = table.iter(options.clone());
        // A table's data blocks are inside the file, so the file size bounds the entries.
        let n = exercise(&mut it, entry_bound(data.len()));
        if n.is_ok() {
            it.seek_to_first();
            let mut keys = Vec::new();
            while it.valid() && keys.len() < 4 {
                keys.push(it.key().to_vec());
                it.next();
            }
            for k in keys {
                let found = table.internal_get(&options, &k)?;
                if verify {
                    // A key the iterator yielded is in the block the index points to.
                    assert!(found.is_some(), "internal_get misses an iterated key");
                }
            }
        }
        result = n;
    }
    result
}

struct Count(u64);

impl BatchHandler for Count {
    fn put(&mut self, _key: &[u8], _value: &[u8]) {
        self.0 += 1;
    }
    fn delete(&mut self, _key: &[u8]) {
        self.0 += 1;
    }
}

/// `data` as a log or MANIFEST file: read every record in strict mode and in skip mode, and
/// decode each record as a write batch and as a version edit. Returns the record count of
/// the strict pass.
pub fn log(data: &[u8]) -> Result<u64> {
    let mem = MemStorage::new();
    storage::write_all(&mem, "000001.log", data)?;
    let file = mem.open_random("000001.log")?;
    // A record takes at least its 7-byte header.
    let bound = data.len() as u64 / 7 + 2;
    let mut strict_result = Ok(0);
    // Skip mode, strict mode as a log is replayed (ending at holes when the file ends on a
    // block boundary), strict mode as a MANIFEST is read.
    for (strict, holes) in [(false, false), (true, true), (true, false)] {
        let mut reader = Reader::new(file.clone(), "000001.log", true, strict);
        if holes {
            reader = reader.ending_at_holes();
        }
        let mut record = Vec::new();
        let mut n = 0u64;
        let r = loop {
            match reader.read_record(&mut record) {
                Ok(true) => {
                    n += 1;
                    assert!(n <= bound, "log reader passed {bound} records");
                    assert!(record.len() <= data.len(), "record longer than the log");
                    if let Ok(batch) = WriteBatch::from_contents(record.clone()) {
                        let _ = batch.iterate(&mut Count(0));
                    }
                    let _ = VersionEdit::decode(&record);
                }
                Ok(false) => break Ok(n),
                Err(e) => break Err(e),
            }
        };
        if strict {
            strict_result = r;
        }
    }
    strict_result
}

/// `data` as an encoded version edit; on success, the edit re-encodes to something that
/// decodes to the same edit.
pub fn version_edit(data: &[u8]) -> Result<u64> {
    let edit = VersionEdit::decode(data)?;
    let again = VersionEdit::decode(&edit.encode()).expect("a decoded edit re-encodes");
    assert_eq!(edit, again, "edit round trip");
    Ok(edit.encode().len() as u64)
}

/// `data` as a block payload under compression ids 0, 1, 2 (zlib; and Zstd with the frame
/// magic prepended) and 4, each limited to 1 MiB of output or what its codec can make of its
/// bytes, whichever is more. Returns a mask of the decodes
/// that succeeded: 1 id 0, 2 id 1, 4 id 2 (zlib), 8 id 2 (Zstd), 16 id 4.
pub fn decompress(data: &[u8]) -> Result<u64> {
    let mut mask = 0u64;
    let mut zstd = vec![0x28, 0xb5, 0x2f, 0xfd];
    zstd.extend_from_slice(data);
    let cases = [(0u8, data), (1, data), (2, data), (2, &zstd[..]), (4, data)];
    for (bit, (id, input)) in cases.into_iter().enumerate() {
        if let Ok(out) = compress::decompress(id, input, DECOMPRESS_LIMIT) {
            let most = DECOMPRESS_LIMIT.max(compress::most_from(id, input));
            assert!(out.len() <= most, "id {id}: output over the limit");
            mask |= 1 << bit;
        }
    }
    Ok(mask)
}

/// `data` as little-endian NBT (one or more roots), rendered as JSON on success. Returns the
/// number of roots.
pub fn nbt(data: &[u8]) -> Result<u64> {
    let roots = nbt::read_all(data)?;
    for (_, tag) in &roots {
        let _ = nbt::to_json(tag, 16);
    }
    Ok(roots.len() as u64)
}

/// Import limits of the `mcworld` target: small enough that a bomb stops quickly.
pub fn mcworld_limits() -> mcworld::ImportLimits {
    mcworld::ImportLimits {
        max_entries: 2_000,
        max_entry_bytes: 32 << 20,
        max_total_bytes: 64 << 20,
        max_ratio: 200,
    }
}

/// `data` as a `.mcworld` zip imported into a `MemStorage`. Returns the files written.
pub fn mcworld(data: &[u8]) -> Result<u64> {
    let mem = MemStorage::new();
    let report = mcworld::import(data, &mem, "world", mcworld_limits())?;
    Ok(report.files)
}

/// A target body.
pub type Target = fn(&[u8]) -> Result<u64>;

/// Every target by name, for the replay test and the fuzz crate.
pub const TARGETS: [(&str, Target); 7] = [
    ("block", block),
    ("table", table),
    ("log", log),
    ("version_edit", version_edit),
    ("decompress", decompress),
    ("nbt", nbt),
    ("mcworld", mcworld),
];
