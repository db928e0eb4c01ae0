//! `strata bench`: Google's db_bench workloads, flags and output format, on Strata.
//!
//! Keys are 16-byte decimal numbers (`%016d`), values come from db_bench's compressible
//! generator (each 100-byte piece is `compression_ratio` random printable bytes repeated), and
//! random keys come from LevelDB's Park–Miller generator seeded as db_bench seeds it, so the
//! workloads match db_bench's. Results print as db_bench prints them, or as JSON lines with
//! `--json` (each with a `latency` field: per-op percentiles where measured, else null).
//!
//! RucksDB's suite (put_100b ... writes_during_flush, `rucks.rs`) runs beside them, mirrored
//! by bench/harness.h on LevelDB and RocksDB (bench/rucksdb.sh).

mod rucks;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use strata::db::WriteBatch;
use strata::util::random::Random;
use strata::{CompressionType, Db, Options, ReadOptions, WriteOptions};

use crate::args::Args;
use crate::commands::CliError;

const DEFAULT_BENCHMARKS: &str = "fillseq,fillsync,fillrandom,overwrite,readrandom,readrandom,readseq,readreverse,compact,readrandom,readseq,readreverse,fill100K,crc32c";

struct Flags {
    benchmarks: Vec<String>,
    num: u64,
    reads: u64,
    value_size: usize,
    compression_ratio: f64,
    cache_size: Option<usize>,
    bloom_bits: Option<u32>,
    write_buffer_size: Option<usize>,
    max_file_size: Option<u64>,
    /// `--compression_threads=N`: Strata's block-compression workers (default: the cores).
    compression_threads: Option<usize>,
    /// `--readahead_threads=N`: Strata's scan readahead decoders (default: the cores, at most
    /// 8; 0: the reading thread decodes every block itself).
    readahead_threads: Option<usize>,
    /// `--copy_stored_blocks=0`: compactions rebuild every block (`Options::copy_stored_blocks`).
    copy_stored_blocks: bool,
    /// `--disable_auto_compactions=1` (RocksDB's db_bench flag): no compaction runs unless asked
    /// (`compact`), so a read benchmark on an existing database measures the reads alone.
    disable_auto_compactions: bool,
    /// `--verify_checksum=0` (RocksDB's db_bench flag): reads skip the blocks' CRC-32C
    /// (`ReadOptions::verify_checksums`; LevelDB's db_bench reads with it off, its default).
    verify_checksum: bool,
    db: String,
    use_existing_db: bool,
    compression: CompressionType,
    threads: usize,
    json: bool,
    /// `--histogram=1`: per-op latency percentiles for RucksDB's workloads (writes_during_flush
    /// always has them).
    histogram: bool,
}

/// db_bench's value source: 1 MiB of compressible bytes, handed out in slices.
struct ValueGen {
    ratio: f64,
    data: Vec<u8>,
    pos: usize,
}

impl ValueGen {
    /// The bytes are made at the first `generate` (LevelDB's db_bench makes its generator in
    /// `DoWrite`): a workload that writes nothing does not time making 1 MiB of them.
    fn new(ratio: f64) -> Self {
        ValueGen {
            ratio,
            data: Vec::new(),
            pos: 0,
        }
    }

    fn fill(ratio: f64) -> Vec<u8> {
        let mut rnd = Random::new(301);
        let mut data = Vec::with_capacity(1 << 20);
        while data.len() < 1 << 20 {
            let raw = ((100.0 * ratio) as usize).max(1);
            let piece: Vec<u8> = (0..raw).map(|_| b' ' + rnd.uniform(95) as u8).collect();
            let mut i = 0;
            while i < 100 {
                data.push(piece[i % raw]);
                i += 1;
            }
        }
        data
    }

    fn generate(&mut self, len: usize) -> &[u8] {
        if self.data.is_empty() {
            self.data = Self::fill(self.ratio);
        }
        if self.pos + len > self.data.len() {
            self.pos = 0;
        }
        self.pos += len;
        &self.data[self.pos - len..self.pos]
    }
}

fn key(k: u64, buf: &mut Vec<u8>) {
    use std::io::Write;
    buf.clear();
    let _ = write!(buf, "{k:016}");
}

/// What one thread did.
#[derive(Default, Clone)]
struct Stats {
    done: u64,
    bytes: u64,
    found: u64,
    message: String,
}

impl Stats {
    fn merge(&mut self, o: &Stats) {
        self.done += o.done;
        self.bytes += o.bytes;
        self.found += o.found;
        if self.message.is_empty() {
            self.message = o.message.clone();
        }
    }
}

fn parse(raw: &[String]) -> Result<Flags, CliError> {
    // db_bench spells flags --name=value; both forms are accepted.
    let valued = [
        "benchmarks",
        "num",
        "reads",
        "value_size",
        "compression_ratio",
        "cache_size",
        "bloom_bits",
        "write_buffer_size",
        "max_file_size",
        "compression_threads",
        "readahead_threads",
        "copy_stored_blocks",
        "disable_auto_compactions",
        "verify_checksum",
        "db",
        "use_existing_db",
        "compression",
        "threads",
        "histogram",
    ];
    let args = Args::parse(raw, &valued, &["json"])?;
    args.positionals(&[])?;
    let num = args.number("num")?.unwrap_or(1_000_000);
    let reads = match args.value("reads") {
        Some(r) if r != "-1" => r
            .parse()
            .map_err(|_| CliError::Usage(format!("--reads {r:?}")))?,
        _ => num,
    };
    let signed = |name: &str| -> Result<Option<i64>, CliError> {
        match args.value(name) {
            None => Ok(None),
            Some(v) => v
                .parse::<i64>()
                .map(Some)
                .map_err(|_| CliError::Usage(format!("--{name} takes a number"))),
        }
    };
    let compression = match args.value("compression").unwrap_or("snappy") {
        "none" => CompressionType::None,
        "snappy" => CompressionType::Snappy,
        "zlib" => CompressionType::Zlib,
        "zlib-raw" | "zlib_raw" => CompressionType::ZlibRaw,
        other => return Err(CliError::Usage(format!("unknown --compression {other:?}"))),
    };
    Ok(Flags {
        benchmarks: args
            .value("benchmarks")
            .unwrap_or(DEFAULT_BENCHMARKS)
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
        num,
        reads,
        value_size: args.number("value_size")?.unwrap_or(100) as usize,
        compression_ratio: args
            .value("compression_ratio")
            .map(|v| {
                v.parse()
                    .map_err(|_| CliError::Usage("--compression_ratio takes a number".into()))
            })
            .transpose()?
            .unwrap_or(0.5),
        cache_size: signed("cache_size")?
            .filter(|&v| v >= 0)
            .map(|v| v as usize),
        bloom_bits: signed("bloom_bits")?.filter(|&v| v >= 0).map(|v| v as u32),
        write_buffer_size: signed("write_buffer_size")?
            .filter(|&v| v > 0)
            .map(|v| v as usize),
        max_file_size: signed("max_file_size")?
            .filter(|&v| v > 0)
            .map(|v| v as u64),
        compression_threads: args.number("compression_threads")?.map(|n| n as usize),
        readahead_threads: args.number("readahead_threads")?.map(|n| n as usize),
        copy_stored_blocks: !matches!(args.value("copy_stored_blocks"), Some("0") | Some("false")),
        disable_auto_compactions: matches!(
            args.value("disable_auto_compactions"),
            Some("1") | Some("true")
        ),
        verify_checksum: !matches!(args.value("verify_checksum"), Some("0") | Some("false")),
        db: args
            .value("db")
            .unwrap_or("/tmp/strata-dbbench")
            .to_string(),
        use_existing_db: matches!(args.value("use_existing_db"), Some("1") | Some("true")),
        compression,
        threads: args.number("threads")?.unwrap_or(1).max(1) as usize,
        json: args.has("json"),
        histogram: matches!(args.value("histogram"), Some("1") | Some("true")),
    })
}

impl Flags {
    fn options(&self, bulk: bool) -> Options {
        let mut o = Options::google();
        o.create_if_missing = true;
        o.compression = self.compression;
        // db_bench: no bloom filter unless --bloom_bits is given.
        o.bloom_bits_per_key = self.bloom_bits.unwrap_or(0);
        if let Some(c) = self.cache_size {
            o.block_cache_capacity = c;
        }
        if let Some(w) = self.write_buffer_size {
            o.write_buffer_size = w;
        }
        if let Some(m) = self.max_file_size {
            o.max_file_size = m;
        }
        if let Some(n) = self.compression_threads {
            o.compression_threads = n;
        }
        if let Some(n) = self.readahead_threads {
            o.readahead_threads = n;
        }
        o.copy_stored_blocks = self.copy_stored_blocks;
        o.disable_auto_compactions |= self.disable_auto_compactions;
        if bulk {
            o.disable_auto_compactions = true;
            o.l0_slowdown_writes_trigger = usize::MAX;
            o.l0_stop_writes_trigger = usize::MAX;
            o.write_buffer_size = o.write_buffer_size.max(64 << 20);
        }
        o
    }
}

fn destroy(dir: &str) {
    let _ = std::fs::remove_dir_all(dir);
}

pub fn bench(raw: &[String]) -> Result<ExitCode, CliError> {
    let flags = parse(raw)?;
    if !flags.json {
        print_header(&flags);
    }
    if !flags.use_existing_db {
        destroy(&flags.db);
    }
    let mut db: Option<Arc<Db>> = None;
    for name in flags.benchmarks.clone() {
        if rucks::is_rucks(&name) {
            // A fresh database of its own, checked by the workload itself.
            if flags.use_existing_db {
                if !flags.json {
                    println!("{name:<12} : skipped (--use_existing_db is true)");
                }
                continue;
            }
            db = None;
            rucks::run(&flags, &name)?;
            continue;
        }
        let fresh = matches!(
            name.as_str(),
            "fillseq"
                | "fillrandom"
                | "fillsync"
                | "fillbatch"
                | "fill100K"
                | "bulkload_seq"
                | "bulkload_random"
        );
        let bulk = name.starts_with("bulkload");
        if fresh {
            if flags.use_existing_db {
                if !flags.json {
                    println!("{name:<12} : skipped (--use_existing_db is true)");
                }
                continue;
            }
            db = None;
            destroy(&flags.db);
        }
        if name == "open" {
            // kvbench's open: the existing database opened and closed --reads times, nothing
            // else held open.
            db = None;
            let n = flags.reads.max(1);
            let start = Instant::now();
            for _ in 0..n {
                drop(Db::open_path(&flags.db, flags.options(false))?);
            }
            let secs = start.elapsed().as_secs_f64();
            let stats = Stats {
                done: n,
                ..Stats::default()
            };
            report(&flags, &name, &stats, secs);
            continue;
        }
        if name == "stats" {
            // LevelDB db_bench's `stats`: the tree's shape where the list reaches it.
            if let Some(d) = &db {
                let p = d.properties();
                let files: Vec<String> = p.files_per_level.iter().map(|n| n.to_string()).collect();
                let mb: Vec<String> = p
                    .bytes_per_level
                    .iter()
                    .map(|b| format!("{:.1}", *b as f64 / 1048576.0))
                    .collect();
                eprintln!(
                    "stats        : files per level {}; MB per level {}; memtable {} bytes; compaction or flush running: {}",
                    files.join("/"),
                    mb.join("/"),
                    p.memtable_bytes,
                    d.background_busy()
                );
            }
            continue;
        }
        if name != "crc32c" && (db.is_none() || fresh) {
            db = Some(Arc::new(Db::open_path(&flags.db, flags.options(bulk))?));
        }
        let start = Instant::now();
        let stats = run_threads(&flags, &name, db.clone())?;
        let secs = start.elapsed().as_secs_f64();
        report(&flags, &name, &stats, secs);
        if bulk {
            // Make the load durable (it skipped the log) before the next benchmark.
            if let Some(d) = &db {
                d.flush()?;
            }
            db = None;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn run_threads(flags: &Flags, name: &str, db: Option<Arc<Db>>) -> Result<Stats, CliError> {
    let results: Vec<Result<Stats, strata::Error>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..flags.threads)
            .map(|t| {
                let db = db.clone();
                s.spawn(move || run_one(flags, name, db.as_deref(), t))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("bench thread"))
            .collect()
    });
    let mut total = Stats::default();
    for r in results {
        total.merge(&r?);
    }
    Ok(total)
}

fn run_one(
    flags: &Flags,
    name: &str,
    db: Option<&Db>,
    thread: usize,
) -> Result<Stats, strata::Error> {
    let mut rnd = Random::new(1000 + thread as u32);
    let mut gen = ValueGen::new(flags.compression_ratio);
    let mut k = Vec::with_capacity(32);
    let mut st = Stats::default();
    let num = flags.num;
    let w = WriteOptions::default();
    let r = ReadOptions {
        verify_checksums: flags.verify_checksum,
        ..ReadOptions::default()
    };
    // The fill workloads: (sequential keys, entries, batch size, value size, write options).
    let no_wal = WriteOptions {
        disable_wal: true,
        ..Default::default()
    };
    let sync = WriteOptions {
        sync: true,
        ..Default::default()
    };
    let vs = flags.value_size;
    let fill = match name {
        "fillseq" => Some((true, num, 1, vs, w.clone())),
        "fillrandom" | "overwrite" => Some((false, num, 1, vs, w.clone())),
        "fillbatch" => Some((true, num, 1000, vs, w.clone())),
        "fillsync" => Some((false, num / 1000, 1, vs, sync)),
        "fill100K" => Some((false, num / 1000, 1, 100_000, w.clone())),
        "bulkload_seq" => Some((true, num, 1000, vs, no_wal)),
        "bulkload_random" => Some((false, num, 1000, vs, no_wal)),
        _ => None,
    };
    if let Some((seq, n, batch, vsize, wopts)) = fill {
        let db = db.expect("database open");
        let mut i = 0;
        while i < n {
            // Room for the whole batch (16-byte keys): no growth while filling it.
            let mut b = WriteBatch::with_capacity(batch as usize * (vsize + 16 + 8));
            for j in 0..batch {
                let id = if seq {
                    i + j
                } else {
                    rnd.uniform(num as u32) as u64
                };
                key(id, &mut k);
                b.put(&k, gen.generate(vsize));
                st.bytes += (vsize + k.len()) as u64;
                st.done += 1;
            }
            db.write(&wopts, b)?;
            i += batch;
        }
        return Ok(st);
    }
    match name {
        "readseq" | "readreverse" => {
            let db = db.expect("database open");
            let mut it = db.iter(&r);
            if name == "readseq" {
                it.seek_to_first()
            } else {
                it.seek_to_last()
            }
            while it.valid() && st.done < flags.reads {
                st.bytes += (it.key().len() + it.value().len()) as u64;
                st.done += 1;
                if name == "readseq" {
                    it.next()
                } else {
                    it.prev()
                }
            }
            it.status()?;
        }
        "readrandom" | "readmissing" | "readhot" => {
            let db = db.expect("database open");
            let range = if name == "readhot" {
                num.div_ceil(100).max(1)
            } else {
                num
            };
            // One value buffer for every get, as db_bench's `std::string value`.
            let mut value = Vec::new();
            for _ in 0..flags.reads {
                key(rnd.uniform(range as u32) as u64, &mut k);
                if name == "readmissing" {
                    k.push(b'.');
                }
                if db.get_into(&r, &k, &mut value)? {
                    st.found += 1;
                }
                st.done += 1;
            }
            st.message = format!("({} of {} found)", st.found, flags.reads);
        }
        "seekrandom" => {
            let db = db.expect("database open");
            let mut it = db.iter(&r);
            for _ in 0..flags.reads {
                key(rnd.uniform(num as u32) as u64, &mut k);
                it.seek(&k);
                if it.valid() && it.key() == &k[..] {
                    st.found += 1;
                }
                st.done += 1;
            }
            st.message = format!("({} of {} found)", st.found, flags.reads);
        }
        "deleteseq" | "deleterandom" => {
            let db = db.expect("database open");
            for i in 0..num {
                let id = if name == "deleteseq" {
                    i
                } else {
                    rnd.uniform(num as u32) as u64
                };
                key(id, &mut k);
                db.delete(&w, &k)?;
                st.done += 1;
            }
        }
        "mixed" => {
            let db = db.expect("database open");
            let mut value = Vec::new();
            for i in 0..num {
                key(rnd.uniform(num as u32) as u64, &mut k);
                if i % 2 == 0 {
                    if db.get_into(&r, &k, &mut value)? {
                        st.found += 1;
                    }
                } else {
                    let v = gen.generate(flags.value_size);
                    st.bytes += (v.len() + k.len()) as u64;
                    db.put(&w, &k, v)?;
                }
                st.done += 1;
            }
            st.message = format!("({} of {} reads found)", st.found, num.div_ceil(2));
        }
        "compact" => {
            if thread == 0 {
                db.expect("database open").compact_range(None, None)?;
                st.done = 1;
            }
        }
        "crc32c" => {
            let data = vec![b'x'; 4096];
            let mut crc = 0u32;
            while st.bytes < 500 * 1048576 {
                crc = strata::util::crc::extend(crc, &data);
                st.bytes += data.len() as u64;
                st.done += 1;
            }
            st.message = format!("(4K per op; crc {crc:#x})");
        }
        other => {
            return Err(strata::Error::invalid_argument(format!(
                "unknown benchmark {other:?}"
            )))
        }
    }
    Ok(st)
}

fn report(flags: &Flags, name: &str, st: &Stats, secs: f64) {
    let done = st.done.max(1);
    let micros = secs * 1e6 / done as f64;
    let mbps = (st.bytes > 0).then(|| st.bytes as f64 / 1048576.0 / secs);
    if flags.json {
        println!(
            "{{\"benchmark\":\"{name}\",\"micros_per_op\":{micros:.3},\"ops\":{},\"seconds\":{secs:.6},\"mb_per_s\":{},\"found\":{},\"threads\":{},\"latency\":null}}",
            st.done,
            mbps.map_or("null".to_string(), |m| format!("{m:.1}")),
            st.found,
            flags.threads
        );
        return;
    }
    let mut extra = String::new();
    if let Some(m) = mbps {
        extra.push_str(&format!("{m:6.1} MB/s"));
    }
    if !st.message.is_empty() {
        if !extra.is_empty() {
            extra.push(' ');
        }
        extra.push_str(&st.message);
    }
    println!(
        "{name:<12} : {micros:11.3} micros/op;{}{extra}",
        if extra.is_empty() { "" } else { " " }
    );
}

fn print_header(flags: &Flags) {
    let raw = (16 + flags.value_size) as f64 * flags.num as f64 / 1048576.0;
    let file =
        (16.0 + flags.value_size as f64 * flags.compression_ratio) * flags.num as f64 / 1048576.0;
    println!("Strata:     version {}", env!("CARGO_PKG_VERSION"));
    println!("Keys:       16 bytes each");
    println!(
        "Values:     {} bytes each ({} bytes after compression)",
        flags.value_size,
        (flags.value_size as f64 * flags.compression_ratio + 0.5) as usize
    );
    println!("Entries:    {}", flags.num);
    println!("RawSize:    {raw:.1} MB (estimated)");
    println!("FileSize:   {file:.1} MB (estimated)");
    println!(
        "Compression: {}  Threads: {}",
        flags.compression.name(),
        flags.threads
    );
    println!("------------------------------------------------");
}
