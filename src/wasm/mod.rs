//! The wasm-bindgen facade: the engine's public API as JavaScript classes, used by js/.
//!
//! Invariants: nothing here knows about files or formats; it only converts arguments, maps
//! errors to `LEVEL_*` codes, and moves entries across the boundary in batches (one call
//! returns many entries packed into one byte array, never one call per entry). Every method on
//! a closed database fails with `LEVEL_DATABASE_NOT_OPEN` instead of trapping.

#![allow(unsafe_code)] // wasm-bindgen's generated glue

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use js_sys::Reflect;
use wasm_bindgen::prelude::*;

use crate::db::{Bound, KeyRange, RangeIter, Snapshot, WriteBatch};
use crate::error::{Error, ErrorKind};
use crate::options::{Options, Profile, ReadOptions, WriteOptions};
use crate::storage::js_host::{JsHostStorage, StorageHost};
use crate::storage::{MemStorage, Storage};
use crate::{CompressionType, Db};

mod export;
mod world;

thread_local! {
    /// In-memory file systems by name, so a `mem` database survives close and reopen for as
    /// long as the wasm instance lives.
    static MEM_STORES: RefCell<HashMap<String, MemStorage>> = RefCell::new(HashMap::new());
}

/// The `LEVEL_*` code for an error kind.
fn level_code(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::NotFound => "LEVEL_NOT_FOUND",
        ErrorKind::Corruption => "LEVEL_CORRUPTION",
        // `kind` says more for these (`NoSpace`, `OutOfMemory`, `Internal`: a broken
        // invariant, a bug).
        ErrorKind::Io | ErrorKind::NoSpace | ErrorKind::OutOfMemory | ErrorKind::Internal => {
            "LEVEL_IO_ERROR"
        }
        ErrorKind::InvalidArgument => "LEVEL_INVALID_ARGUMENT",
        ErrorKind::Locked => "LEVEL_LOCKED",
        ErrorKind::NotSupported => "LEVEL_NOT_SUPPORTED",
    }
}

fn set(obj: &JsValue, key: &str, value: JsValue) {
    let _ = Reflect::set(obj, &JsValue::from_str(key), &value);
}

/// A JS `Error` carrying `code` (`LEVEL_*`), `kind` and, for corruption, `file` and `offset`.
fn js_err(e: Error) -> JsValue {
    let err: JsValue = js_sys::Error::new(&e.to_string()).into();
    set(&err, "code", JsValue::from_str(level_code(e.kind())));
    set(&err, "kind", JsValue::from_str(&format!("{:?}", e.kind())));
    if let Some(file) = e.file() {
        set(&err, "file", JsValue::from_str(file));
    }
    if let Some(offset) = e.offset() {
        set(&err, "offset", JsValue::from_f64(offset as f64));
    }
    err
}

fn not_open() -> JsValue {
    let err: JsValue = js_sys::Error::new("Database is not open").into();
    set(&err, "code", JsValue::from_str("LEVEL_DATABASE_NOT_OPEN"));
    err
}

fn invalid(message: &str) -> JsValue {
    js_err(Error::invalid_argument(message))
}

fn get_prop(obj: &JsValue, key: &str) -> JsValue {
    if obj.is_object() {
        Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
    } else {
        JsValue::UNDEFINED
    }
}

/// Option `key` of `obj`: `None` when absent (undefined or null), else `convert`'s value, or
/// an invalid-argument error saying the option must be `what`.
fn opt<T>(
    obj: &JsValue,
    key: &str,
    what: &str,
    convert: impl FnOnce(JsValue) -> Option<T>,
) -> Result<Option<T>, JsValue> {
    let v = get_prop(obj, key);
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    convert(v)
        .map(Some)
        .ok_or_else(|| invalid(&format!("option {key} must be {what}")))
}

fn opt_bool(obj: &JsValue, key: &str) -> Result<Option<bool>, JsValue> {
    opt(obj, key, "a boolean", |v| v.as_bool())
}

fn opt_number(obj: &JsValue, key: &str) -> Result<Option<f64>, JsValue> {
    opt(obj, key, "a non-negative integer", |v| {
        v.as_f64()
            .filter(|n| n.is_finite() && *n >= 0.0 && n.fract() == 0.0)
    })
}

fn opt_string(obj: &JsValue, key: &str) -> Result<Option<String>, JsValue> {
    opt(obj, key, "a string", |v| v.as_string())
}

fn opt_bytes(obj: &JsValue, key: &str) -> Result<Option<Vec<u8>>, JsValue> {
    opt(obj, key, "a Uint8Array", |v| {
        v.dyn_into::<js_sys::Uint8Array>().ok().map(|a| a.to_vec())
    })
}

/// Open options from a plain JS object (names as in js/'s `OpenOptions`).
fn parse_options(obj: &JsValue) -> Result<Options, JsValue> {
    let mut o = match opt_string(obj, "profile")?.as_deref() {
        // No profile: the database's own dialect, detected at open (an empty one: Google's).
        None => Options {
            detect_profile: true,
            ..Options::google()
        },
        Some("google") => Options::google(),
        Some("bedrock") => Options::bedrock(),
        Some(p) => return Err(invalid(&format!("unknown profile {p:?}"))),
    };
    if let Some(b) = opt_bool(obj, "allowForeignCodec")? {
        o.allow_foreign_codec = b;
    }
    if let Some(c) = opt_string(obj, "compression")? {
        o.compression = match c.as_str() {
            "none" => CompressionType::None,
            "snappy" => CompressionType::Snappy,
            "zlib" => CompressionType::Zlib,
            "deflate-raw" => CompressionType::ZlibRaw,
            _ => {
                return Err(invalid(&format!(
                    "unknown compression {c:?} (none, snappy, zlib, deflate-raw)"
                )))
            }
        };
    }
    let flag = |key: &str, target: &mut bool| -> Result<(), JsValue> {
        if let Some(b) = opt_bool(obj, key)? {
            *target = b;
        }
        Ok(())
    };
    flag("createIfMissing", &mut o.create_if_missing)?;
    flag("errorIfExists", &mut o.error_if_exists)?;
    flag("readOnly", &mut o.read_only)?;
    flag("paranoidChecks", &mut o.paranoid_checks)?;
    let size = |key: &str, min: f64, max: f64| -> Result<Option<f64>, JsValue> {
        match opt_number(obj, key)? {
            Some(n) if n < min || n > max => Err(invalid(&format!(
                "option {key} must be between {min} and {max}"
            ))),
            other => Ok(other),
        }
    };
    const MAX: f64 = (1u64 << 31) as f64;
    if let Some(n) = size("cacheSize", 0.0, MAX)? {
        o.block_cache_capacity = n as usize;
    }
    if let Some(n) = size("writeBufferSize", 64.0 * 1024.0, MAX)? {
        o.write_buffer_size = n as usize;
    }
    if let Some(n) = size("blockSize", 1024.0, 4.0 * 1024.0 * 1024.0)? {
        o.block_size = n as usize;
    }
    if let Some(n) = size("blockRestartInterval", 1.0, 65_536.0)? {
        o.block_restart_interval = n as usize;
    }
    if let Some(n) = size("maxFileSize", 64.0 * 1024.0, MAX)? {
        o.max_file_size = n as u64;
    }
    if let Some(n) = size("bloomBitsPerKey", 0.0, 64.0)? {
        o.bloom_bits_per_key = n as u32;
    }
    if let Some(n) = size("maxOpenFiles", 16.0, 1_000_000.0)? {
        o.max_open_files = n as usize;
    }
    // Scans lend runs of compressed blocks to decoders outside the engine (JS workers); the
    // number only switches it on here (the host runs the decoders).
    if let Some(n) = size("decodeWorkers", 0.0, 64.0)? {
        o.readahead_threads = n as usize;
    }
    o.background_thread = false;
    Ok(o)
}

/// The storage behind `host`, or the named in-memory store when `host` is undefined.
fn storage_for(host: Option<StorageHost>, path: &str) -> Arc<dyn Storage> {
    match host {
        Some(h) => Arc::new(JsHostStorage::new(h)),
        None => Arc::new(MEM_STORES.with(|m| {
            m.borrow_mut()
                .entry(path.to_string())
                .or_insert_with(MemStorage::new)
                .clone()
        })),
    }
}

/// An open database.
#[wasm_bindgen]
pub struct Database {
    db: Option<Db>,
    /// Where the database was opened: its storage and the folder given to `open` (a world's
    /// root for `openWorld`), for the world methods in world.rs.
    storage: Arc<dyn Storage>,
    root: String,
    snapshots: HashMap<u32, Snapshot>,
    next_snapshot: u32,
    /// The chunks and relief samples of the last `chunkList` that asked for samples (or of
    /// `setReliefSamples`; world.rs): the maps drawn after it use them while the database is
    /// unchanged.
    relief: RefCell<Option<Arc<crate::bedrock::relief_index::ReliefIndex>>>,
}

#[wasm_bindgen]
impl Database {
    /// Opens the database in folder `path` of `host` (a storage host object), or of the
    /// named in-memory store when `host` is undefined.
    pub fn open(
        host: Option<StorageHost>,
        path: &str,
        options: &JsValue,
    ) -> Result<Database, JsValue> {
        let opts = parse_options(options)?;
        let storage = storage_for(host, path);
        let db = Db::open(storage.clone(), path, opts).map_err(js_err)?;
        Ok(Database::new(db, storage, path))
    }

    /// Repairs the (closed) database in folder `path` (LevelDB's `RepairDB`, db/repair.rs):
    /// its MANIFEST rebuilt from the tables and logs found, tables written in the codec of
    /// `options` (Google's Snappy unless a profile or compression says otherwise). Returns
    /// the report as JSON (`tables`, `tablesRewritten`, `tablesLost`, `entries`,
    /// `logsReplayed`, `logRecords`, `logBytesDropped`, `lastSequence`).
    pub fn repair(
        host: Option<StorageHost>,
        path: &str,
        options: &JsValue,
    ) -> Result<String, JsValue> {
        let opts = parse_options(options)?;
        let storage = storage_for(host, path);
        let r = crate::db::repair::repair(storage, path, &opts).map_err(js_err)?;
        Ok(format!(
            "{{\"tables\":{},\"tablesRewritten\":{},\"tablesLost\":{},\"tablesMerged\":{},\"entries\":{},\"logsReplayed\":{},\"logRecords\":{},\"logBytesDropped\":{},\"lastSequence\":{}}}",
            r.tables,
            r.tables_rewritten,
            r.tables_lost,
            r.tables_merged,
            r.entries,
            r.logs_replayed,
            r.log_records,
            r.log_bytes_dropped,
            r.last_sequence
        ))
    }

    /// Deletes the (closed) database in folder `path` (LevelDB's `DestroyDB`, db/destroy.rs):
    /// its `LOCK` taken first, then only files with LevelDB's names removed. Returns JSON
    /// `{"removed":[names],"remaining":n}`: `remaining` counts what is left in the folder
    /// (0: empty, or missing), for the host to remove the folder itself.
    pub fn destroy(host: Option<StorageHost>, path: &str) -> Result<String, JsValue> {
        let storage = storage_for(host, path);
        let r = crate::db::destroy::destroy(storage, path).map_err(js_err)?;
        let names: Vec<String> = r
            .removed
            .iter()
            .map(|n| format!("\"{}\"", n.replace('\\', "\\\\").replace('"', "\\\"")))
            .collect();
        Ok(format!(
            "{{\"removed\":[{}],\"remaining\":{}}}",
            names.join(","),
            r.remaining
        ))
    }

    fn new(db: Db, storage: Arc<dyn Storage>, root: &str) -> Database {
        Database {
            db: Some(db),
            storage,
            root: root.to_string(),
            snapshots: HashMap::new(),
            next_snapshot: 1,
            relief: RefCell::new(None),
        }
    }

    fn db(&self) -> Result<&Db, JsValue> {
        self.db.as_ref().ok_or_else(not_open)
    }

    fn read_options(
        &self,
        snapshot: Option<u32>,
        fill_cache: bool,
    ) -> Result<ReadOptions, JsValue> {
        let snapshot = match snapshot {
            None => None,
            Some(id) => Some(
                self.snapshots
                    .get(&id)
                    .ok_or_else(|| invalid("snapshot was released"))?
                    .sequence(),
            ),
        };
        Ok(ReadOptions {
            snapshot,
            fill_cache,
            ..ReadOptions::default()
        })
    }

    /// The value of `key`, or `undefined`.
    pub fn get(
        &self,
        key: &[u8],
        snapshot: Option<u32>,
        fill_cache: bool,
    ) -> Result<Option<Vec<u8>>, JsValue> {
        let ro = self.read_options(snapshot, fill_cache)?;
        self.db()?.get(&ro, key).map_err(js_err)
    }

    /// Values of many keys in one call: `[count u32]` then per key `[present u8][vlen u32][value]`.
    #[wasm_bindgen(js_name = getMany)]
    pub fn get_many(&self, keys: &[u8], snapshot: Option<u32>) -> Result<Vec<u8>, JsValue> {
        let ro = self.read_options(snapshot, true)?;
        let db = self.db()?;
        let mut out = vec![0u8; 4];
        let mut count = 0u32;
        let mut rest = keys;
        let mut v = Vec::new(); // one value buffer for every key
        while !rest.is_empty() {
            let (key, tail) = take_chunk(rest).ok_or_else(|| invalid("malformed key list"))?;
            rest = tail;
            if db.get_into(&ro, key, &mut v).map_err(js_err)? {
                out.push(1);
                out.extend_from_slice(&(v.len() as u32).to_le_bytes());
                out.extend_from_slice(&v);
            } else {
                out.push(0);
            }
            count += 1;
        }
        out[..4].copy_from_slice(&count.to_le_bytes());
        Ok(out)
    }

    pub fn put(&self, key: &[u8], value: &[u8], sync: bool) -> Result<(), JsValue> {
        self.db()?
            .put(&write_options(sync), key, value)
            .map_err(js_err)
    }

    pub fn del(&self, key: &[u8], sync: bool) -> Result<(), JsValue> {
        self.db()?.delete(&write_options(sync), key).map_err(js_err)
    }

    /// Applies packed operations atomically: per op `[kind u8: 1 put, 0 del][klen u32][key]`
    /// and, for puts, `[vlen u32][value]`.
    pub fn write(&self, ops: &[u8], sync: bool) -> Result<(), JsValue> {
        let db = self.db()?;
        let mut batch = WriteBatch::new();
        let mut rest = ops;
        while let Some((&kind, tail)) = rest.split_first() {
            let (key, tail) = take_chunk(tail).ok_or_else(|| invalid("malformed batch"))?;
            rest = tail;
            match kind {
                1 => {
                    let (value, tail) =
                        take_chunk(rest).ok_or_else(|| invalid("malformed batch"))?;
                    rest = tail;
                    batch.put(key, value);
                }
                0 => batch.delete(key),
                _ => return Err(invalid("malformed batch")),
            }
        }
        if batch.is_empty() {
            return Ok(());
        }
        db.write(&write_options(sync), batch).map_err(js_err)
    }

    /// A bounded iterator; `options` holds `gt`/`gte`/`lt`/`lte` (Uint8Array), `reverse`,
    /// `limit` (negative or absent: none), `snapshot` (an id) and `fillCache`.
    pub fn iterator(&self, options: &JsValue) -> Result<Cursor, JsValue> {
        let bound = |incl: &str, excl: &str| -> Result<Option<Bound>, JsValue> {
            Ok(match opt_bytes(options, incl)? {
                Some(key) => Some(Bound {
                    key,
                    inclusive: true,
                }),
                None => opt_bytes(options, excl)?.map(|key| Bound {
                    key,
                    inclusive: false,
                }),
            })
        };
        let limit = match get_prop(options, "limit").as_f64() {
            Some(n) if n >= 0.0 => Some(n as u64),
            _ => None,
        };
        let range = KeyRange {
            lower: bound("gte", "gt")?,
            upper: bound("lte", "lt")?,
            reverse: opt_bool(options, "reverse")?.unwrap_or(false),
            limit,
        };
        let snapshot = opt_number(options, "snapshot")?.map(|n| n as u32);
        let fill = opt_bool(options, "fillCache")?.unwrap_or(true);
        let ro = self.read_options(snapshot, fill)?;
        let it = self.db()?.iter(&ro);
        Ok(Cursor {
            it: Some(RangeIter::new(it, range)),
        })
    }

    /// Pins the current state; returns an id for `get`/`iterator` options.
    pub fn snapshot(&mut self) -> Result<u32, JsValue> {
        let snap = self.db()?.snapshot();
        let id = self.next_snapshot;
        self.next_snapshot += 1;
        self.snapshots.insert(id, snap);
        Ok(id)
    }

    #[wasm_bindgen(js_name = releaseSnapshot)]
    pub fn release_snapshot(&mut self, id: u32) {
        self.snapshots.remove(&id);
    }

    /// The headline scan: `[entries, keyBytes, valueBytes, crc32c]`.
    pub fn scan(&self) -> Result<Vec<f64>, JsValue> {
        let s = self.db()?.scan().map_err(js_err)?;
        Ok(vec![
            s.entries as f64,
            s.key_bytes as f64,
            s.value_bytes as f64,
            s.crc32c as f64,
        ])
    }

    /// A scan in steps (`ScanCursor::step`), so the host can lend and deliver readahead runs
    /// between steps (decode workers); the figures are `scan()`'s.
    #[wasm_bindgen(js_name = scanCursor)]
    pub fn scan_cursor(&self) -> Result<ScanCursor, JsValue> {
        let options = ReadOptions {
            fill_cache: false,
            readahead: true,
            ..ReadOptions::default()
        };
        let mut it = self.db()?.iter(&options);
        it.seek_to_first();
        Ok(ScanCursor {
            it: Some(it),
            stats: crate::db::ScanStats::default(),
        })
    }

    /// Up to `max` queued readahead runs lent to outside decoders, packed: `[count u32]`
    /// then per run `[id f64][verify u8][filter u8][max_block_size u32][blocks u32]
    /// [size u32 × blocks][raw_len u32][raw]` (`filter`: the reader's `LendFilter` code for
    /// `decodeRun`, 0 for none). Empty unless the database was opened with `decodeWorkers`.
    #[wasm_bindgen(js_name = lendRuns)]
    pub fn lend_runs(&self, max: u32) -> Result<Vec<u8>, JsValue> {
        let runs = match self.db()?.table_cache().readahead() {
            Some(pool) => pool.lend(max as usize),
            None => Vec::new(),
        };
        let mut out = Vec::new();
        out.extend_from_slice(&(runs.len() as u32).to_le_bytes());
        for r in runs {
            out.extend_from_slice(&(r.id as f64).to_le_bytes());
            out.push(r.verify as u8);
            out.push(r.filter);
            out.extend_from_slice(&r.max_block_size.to_le_bytes());
            out.extend_from_slice(&(r.sizes.len() as u32).to_le_bytes());
            for s in &r.sizes {
                out.extend_from_slice(&s.to_le_bytes());
            }
            out.extend_from_slice(&(r.raw.len() as u32).to_le_bytes());
            out.extend_from_slice(&r.raw);
        }
        Ok(out)
    }

    /// The decoded blocks of lent run `id`, packed as `decodeRun` returns them. Ignored when
    /// the cursor got there first.
    #[wasm_bindgen(js_name = deliverRun)]
    pub fn deliver_run(&self, id: f64, packed: &[u8]) -> Result<(), JsValue> {
        let Some(pool) = self.db()?.table_cache().readahead() else {
            return Ok(());
        };
        match unpack_blocks(packed) {
            Some(blocks) => pool.deliver(id as u64, blocks),
            None => pool.abandon(id as u64),
        }
        Ok(())
    }

    /// Lent run `id`'s decoder failed or went away: its cursor decodes it.
    #[wasm_bindgen(js_name = abandonRun)]
    pub fn abandon_run(&self, id: f64) -> Result<(), JsValue> {
        if let Some(pool) = self.db()?.table_cache().readahead() {
            pool.abandon(id as u64);
        }
        Ok(())
    }

    /// Readahead counters as JSON (`runsLent`, `runsByWorkers`: delivered in time,
    /// `runsByReader`: decoded by the cursor itself, ...); `null` without decode workers.
    #[wasm_bindgen(js_name = readaheadStats)]
    pub fn readahead_stats(&self) -> Result<String, JsValue> {
        Ok(match self.db()?.table_cache().readahead() {
            None => "null".to_string(),
            Some(pool) => {
                let s = pool.stats();
                format!(
                    "{{\"runsScheduled\":{},\"runsLent\":{},\"runsByWorkers\":{},\"runsByReader\":{},\"runsCancelled\":{},\"blocksDelivered\":{}}}",
                    s.runs_scheduled, s.runs_lent, s.runs_by_workers, s.runs_by_reader, s.runs_cancelled, s.blocks_delivered
                )
            }
        })
    }

    #[wasm_bindgen(js_name = compactRange)]
    pub fn compact_range(
        &self,
        start: Option<Vec<u8>>,
        end: Option<Vec<u8>>,
    ) -> Result<(), JsValue> {
        self.db()?
            .compact_range(start.as_deref(), end.as_deref())
            .map_err(js_err)
    }

    /// Approximate table bytes of the keys in `[start, end)` (LevelDB's
    /// `GetApproximateSizes`: flushed tables only, not the memtable).
    #[wasm_bindgen(js_name = approximateSize)]
    pub fn approximate_size(&self, start: &[u8], end: &[u8]) -> Result<f64, JsValue> {
        let n = self.db()?.approximate_size(start, end).map_err(js_err)?;
        Ok(n as f64)
    }

    /// Flushes the memtable to a table.
    pub fn flush(&self) -> Result<(), JsValue> {
        self.db()?.flush().map_err(js_err)
    }

    /// Runs one bounded step of pending compaction work; true if more is due.
    pub fn maintenance(&self) -> Result<bool, JsValue> {
        self.db()?.maintenance().map_err(js_err)
    }

    /// Levels, files and counters as JSON (`snapshots`: the snapshot ids not yet released).
    pub fn properties(&self) -> Result<String, JsValue> {
        let p = self.db()?.properties();
        let list = |v: Vec<String>| v.join(",");
        Ok(format!(
            "{{\"filesPerLevel\":[{}],\"bytesPerLevel\":[{}],\"lastSequence\":{},\"memtableBytes\":{},\"compactions\":{},\"flushes\":{},\"blocksCopied\":{},\"writeGroups\":{},\"snapshots\":{}}}",
            list(p.files_per_level.iter().map(|n| n.to_string()).collect()),
            list(p.bytes_per_level.iter().map(|n| n.to_string()).collect()),
            p.last_sequence,
            p.memtable_bytes,
            p.compactions,
            p.flushes,
            p.blocks_copied,
            p.write_groups,
            self.snapshots.len()
        ))
    }

    /// The live tables level by level, as LevelDB's `leveldb.sstables` property prints them
    /// (`Version::DebugString`): `--- level N ---` then ` number:size['key' @ seq : type ..
    /// 'key' @ seq : type]` per table, bytes outside printable ASCII as `\xNN`.
    pub fn sstables(&self) -> Result<String, JsValue> {
        use std::fmt::Write;
        let v = self.db()?.version();
        let mut out = String::new();
        for (level, files) in v.files.iter().enumerate() {
            let _ = writeln!(out, "--- level {level} ---");
            for f in files {
                let _ = writeln!(
                    out,
                    " {}:{}[{} .. {}]",
                    f.number,
                    f.file_size,
                    debug_internal_key(&f.smallest),
                    debug_internal_key(&f.largest)
                );
            }
        }
        Ok(out)
    }

    /// The database's dialect as detected at open, as JSON: `{"profile":"bedrock"|"google"|
    /// null,"reason":"…"}`.
    pub fn dialect(&self) -> Result<String, JsValue> {
        let d = self.db()?.dialect();
        let profile = match d.profile {
            Some(Profile::Bedrock) => "\"bedrock\"",
            Some(Profile::Google) => "\"google\"",
            None => "null",
        };
        Ok(format!(
            "{{\"profile\":{profile},\"reason\":\"{}\"}}",
            d.reason.replace('\\', "\\\\").replace('"', "\\\"")
        ))
    }

    /// What recovery did not use at open, as JSON (`RecoveryInfo`): unused tails of the
    /// MANIFEST and logs, tables the MANIFEST never mentions, a gap before a log.
    pub fn recovery(&self) -> Result<String, JsValue> {
        let r = self.db()?.recovery_info();
        let s = |v: &str| format!("\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\""));
        let tails: Vec<String> = r
            .dropped_tails
            .iter()
            .map(|t| {
                format!(
                    "{{\"file\":{},\"offset\":{},\"bytes\":{}}}",
                    s(&t.file),
                    t.offset,
                    t.bytes
                )
            })
            .collect();
        let tables: Vec<String> = r
            .unreferenced_tables
            .iter()
            .map(|t| {
                format!(
                    "{{\"file\":{},\"bytes\":{},\"entries\":{}}}",
                    s(&t.file),
                    t.bytes,
                    t.entries.map_or("null".to_string(), |n| n.to_string())
                )
            })
            .collect();
        let lost: Vec<String> = r
            .lost_logs
            .iter()
            .map(|l| format!("{{\"file\":{},\"bytes\":{}}}", s(&l.name), l.bytes))
            .collect();
        let gap = r.gap.as_ref().map_or("null".to_string(), |g| {
            format!(
                "{{\"log\":{},\"expected\":{},\"found\":{}}}",
                s(&g.log),
                g.expected,
                g.found
            )
        });
        let messages: Vec<String> = r.describe().iter().map(|m| s(m)).collect();
        Ok(format!(
            "{{\"clean\":{},\"droppedTails\":[{}],\"unreferencedTables\":[{}],\"gap\":{},\"lostLogs\":[{}],\"messages\":[{}]}}",
            r.is_clean(),
            tails.join(","),
            tables.join(","),
            gap,
            lost.join(","),
            messages.join(",")
        ))
    }

    #[wasm_bindgen(js_name = isOpen)]
    pub fn is_open(&self) -> bool {
        self.db.is_some()
    }

    /// Closes the database (releasing its lock); later calls fail with
    /// `LEVEL_DATABASE_NOT_OPEN`. Closing twice is allowed.
    pub fn close(&mut self) -> Result<(), JsValue> {
        self.snapshots.clear();
        self.relief.replace(None);
        match self.db.take() {
            Some(db) => db.close().map_err(js_err),
            None => Ok(()),
        }
    }
}

/// LevelDB's `InternalKey::DebugString`: `'user key' @ sequence : type`, the user key's bytes
/// outside printable ASCII as `\xNN` (`EscapeString`); `(bad)` and the escaped bytes when
/// the key does not parse.
fn debug_internal_key(ikey: &[u8]) -> String {
    use std::fmt::Write;
    let escape = |bytes: &[u8]| {
        let mut s = String::with_capacity(bytes.len());
        for &b in bytes {
            if (b' '..=b'~').contains(&b) {
                s.push(b as char);
            } else {
                let _ = write!(s, "\\x{b:02x}");
            }
        }
        s
    };
    match crate::key::parse_internal_key(ikey) {
        Some(p) => format!(
            "'{}' @ {} : {}",
            escape(p.user_key),
            p.sequence,
            p.value_type as u8
        ),
        None => format!("(bad){}", escape(ikey)),
    }
}

fn write_options(sync: bool) -> WriteOptions {
    WriteOptions {
        sync,
        ..WriteOptions::default()
    }
}

/// Splits `[len u32 LE][bytes]` off the front of `data`.
fn take_chunk(data: &[u8]) -> Option<(&[u8], &[u8])> {
    let len = u32::from_le_bytes(data.get(..4)?.try_into().ok()?) as usize;
    let rest = &data[4..];
    if rest.len() < len {
        return None;
    }
    Some(rest.split_at(len))
}

/// A bounded iterator over a database.
#[wasm_bindgen]
pub struct Cursor {
    it: Option<RangeIter>,
}

#[wasm_bindgen]
impl Cursor {
    /// Up to `n` entries (and about `max_bytes`), packed as `[count u32][ended u32]` then per
    /// entry `[klen u32][key][vlen u32][value]` (key or value parts omitted when not asked
    /// for); `ended` is 1 once the walk has ended.
    pub fn nextv(
        &mut self,
        n: u32,
        max_bytes: u32,
        keys: bool,
        values: bool,
    ) -> Result<Vec<u8>, JsValue> {
        let it = self
            .it
            .as_mut()
            .ok_or_else(|| invalid("iterator is closed"))?;
        let mut out = Vec::with_capacity(64 * 1024);
        out.extend_from_slice(&[0u8; 8]); // header, filled in below
        let mut count = 0u32;
        let mut ended = 0u32;
        while count < n && out.len() < max_bytes as usize {
            match it.next_entry().map_err(js_err)? {
                None => {
                    ended = 1;
                    break;
                }
                Some((k, v)) => {
                    if keys {
                        out.extend_from_slice(&(k.len() as u32).to_le_bytes());
                        out.extend_from_slice(k);
                    }
                    if values {
                        out.extend_from_slice(&(v.len() as u32).to_le_bytes());
                        out.extend_from_slice(v);
                    }
                    count += 1;
                }
            }
        }
        out[..4].copy_from_slice(&count.to_le_bytes());
        out[4..8].copy_from_slice(&ended.to_le_bytes());
        Ok(out)
    }

    /// Repositions at the first entry at or after `target` in the walking direction.
    pub fn seek(&mut self, target: &[u8]) -> Result<(), JsValue> {
        self.it
            .as_mut()
            .ok_or_else(|| invalid("iterator is closed"))?
            .seek(target);
        Ok(())
    }

    pub fn close(&mut self) {
        self.it = None;
    }
}

/// A scan in steps: each `step` adds up to `max` entries to the figures.
#[wasm_bindgen]
pub struct ScanCursor {
    it: Option<crate::db::DbIter>,
    stats: crate::db::ScanStats,
}

#[wasm_bindgen]
impl ScanCursor {
    /// Adds entries until `max_bytes` of keys and values were added; true once every entry
    /// was added.
    pub fn step(&mut self, max_bytes: u32) -> Result<bool, JsValue> {
        let it = self
            .it
            .as_mut()
            .ok_or_else(|| invalid("scan cursor is closed"))?;
        let mut bytes = 0usize;
        while bytes < max_bytes as usize && it.valid() {
            let (k, v) = (it.key(), it.value());
            bytes += k.len() + v.len() + 16;
            self.stats.add(k, v);
            it.next();
        }
        if it.valid() {
            return Ok(false);
        }
        it.status().map_err(js_err)?;
        Ok(true)
    }

    /// `[entries, key bytes, value bytes, CRC-32C]` so far.
    pub fn figures(&self) -> Vec<f64> {
        let s = &self.stats;
        vec![
            s.entries as f64,
            s.key_bytes as f64,
            s.value_bytes as f64,
            s.crc32c as f64,
        ]
    }

    pub fn close(&mut self) {
        self.it = None;
    }
}

/// `[count u32]` then per block `[len u32][bytes]`; `None` if malformed.
fn unpack_blocks(packed: &[u8]) -> Option<Vec<Vec<u8>>> {
    let u32_at = |at: usize| -> Option<u32> {
        Some(u32::from_le_bytes(packed.get(at..at + 4)?.try_into().ok()?))
    };
    let count = u32_at(0)? as usize;
    let mut at = 4;
    let mut out = Vec::with_capacity(count.min(4096));
    for _ in 0..count {
        let len = u32_at(at)? as usize;
        at += 4;
        out.push(packed.get(at..at.checked_add(len)?)?.to_vec());
        at += len;
    }
    (at == packed.len()).then_some(out)
}

/// The key filters decode workers know, by `LendFilter::code`.
const LEND_FILTERS: &[crate::table::readahead::LendFilter] =
    &[crate::bedrock::relief_index::CHUNK_INDEX_FILTER];

/// Decodes a lent readahead run (what a decode worker runs, in its own wasm instance):
/// `raw` holds the blocks end to end with their trailers, `sizes` each one's length; with a
/// `filter` code (`lendRuns` gives it; 0 or absent: none, an unknown code: none either) each
/// block keeps only the entries the reader reads (`table::readahead::filter_block`). Returns
/// the blocks packed as `[count u32]` then per block `[len u32][contents]`; a block that fails
/// its checksum or does not decompress is an error (the engine's cursor then decodes the run
/// itself and reports it where the block is read).
#[wasm_bindgen(js_name = decodeRun)]
pub fn decode_run(
    raw: &[u8],
    sizes: &[u32],
    verify: bool,
    max_block_size: u32,
    filter: Option<u8>,
) -> Result<Vec<u8>, JsValue> {
    let mut blocks =
        crate::table::readahead::decode_run(raw, sizes, verify, max_block_size as usize)
            .map_err(js_err)?;
    if let Some(f) = LEND_FILTERS.iter().find(|f| Some(f.code) == filter) {
        blocks = blocks
            .into_iter()
            .map(|b| crate::table::readahead::filter_block(b, f.keeps))
            .collect::<crate::error::Result<_>>()
            .map_err(js_err)?;
    }
    let mut out = Vec::with_capacity(4 + blocks.iter().map(|b| b.len() + 4).sum::<usize>());
    out.extend_from_slice(&(blocks.len() as u32).to_le_bytes());
    for b in &blocks {
        out.extend_from_slice(&(b.len() as u32).to_le_bytes());
        out.extend_from_slice(b);
    }
    Ok(out)
}

/// Zips files into a zip archive (`names[i]` holds `files[i]`, a Uint8Array): tables
/// (`.ldb`, `.sst`) stored, other files deflated; deterministic (no timestamps). For
/// `exportFromOpfs`.
#[wasm_bindgen(js_name = zipFiles)]
pub fn zip_files(names: Vec<String>, files: js_sys::Array) -> Result<Vec<u8>, JsValue> {
    use crate::bedrock::zip_writer::ZipWriter;
    if names.len() != files.length() as usize {
        return Err(invalid("zipFiles: one name per file"));
    }
    let mut zip = ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (i, name) in names.iter().enumerate() {
        let data = js_sys::Uint8Array::new(&files.get(i as u32)).to_vec();
        if name.ends_with(".ldb") || name.ends_with(".sst") {
            zip.stored(name, data.len() as u64, |sink| sink.write(&data))
                .map_err(js_err)?;
        } else {
            zip.deflated(name, &data).map_err(js_err)?;
        }
    }
    Ok(zip.finish().map_err(js_err)?.into_inner())
}
