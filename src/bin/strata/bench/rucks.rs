//! RucksDB's benchmark suite (drmingdrmer/rucksdb's `benches/basic_ops.rs` and
//! `benches/concurrent.rs`) as `strata bench` workloads, mirrored name for name, check for
//! check and output field for field by `RunRucks` in bench/harness.h, which runs the same on
//! Google's LevelDB and RocksDB (bench/rucksdb.sh runs all three). N is `--num`; values come
//! from db_bench's generator; 1 KB is 1,024 bytes.
//!
//! | workload | set-up (untimed) | timed | checked |
//! |---|---|---|---|
//! | put_100b, put_1kb, put_10kb | — | N, N/10, N/100 puts of 100 B, 1 KB, 10 KB, keys in order | every key reads back its value; a scan finds exactly them |
//! | get_memtable | 1,000 keys of 1 KB | N gets of random ones | all found, no table written |
//! | get_sstable | N/10 keys of 1 KB, compacted | N gets of random ones | all found, values intact, tables exist |
//! | get_not_found | as get_sstable | N gets of absent keys inside the key range (key + "."), answered by the bloom filter (`--bloom_bits`) | none found |
//! | delete | N keys of 100 B | all N deleted in order | a scan finds nothing |
//! | read_write_50_50 | 1,000 keys of 1 KB | N/4 ops: a get of a random key written so far, then a put of a new key | every read found; every key reads back its value |
//! | concurrent_writes | — | `--threads` writers share N/10 puts of 1 KB, each its own key range | as the puts |
//! | writes_during_flush | a 1 MB write buffer (RucksDB's flush_impact) | max(N/10, 4,096) puts of 1 KB, each timed | at least one memtable flush completed during the puts, and a put issued while background work ran |
//!
//! Each workload opens a fresh database and checks its own results; a failed check is an
//! error (exit status 1). Latency percentiles (nearest rank over every timed op, µs) are
//! recorded for writes_during_flush always, for the others with `--histogram=1`; that
//! workload also reports the flushes completed during its puts, the puts issued while a flush
//! or compaction was scheduled or running (`Db::background_busy`), and their percentiles.

use std::time::Instant;

use strata::util::random::Random;
use strata::{Db, Error, ReadOptions, WriteOptions};

use super::{destroy, key, Flags, ValueGen};

/// The suite's workloads, in bench/rucksdb.sh's order.
pub const WORKLOADS: [&str; 10] = [
    "put_100b",
    "put_1kb",
    "put_10kb",
    "get_memtable",
    "get_sstable",
    "get_not_found",
    "delete",
    "read_write_50_50",
    "concurrent_writes",
    "writes_during_flush",
];

pub fn is_rucks(name: &str) -> bool {
    WORKLOADS.contains(&name)
}

const KB: usize = 1024;

/// Per-op latencies in nanoseconds, kept whole: percentiles are exact.
#[derive(Default)]
struct Latency {
    ns: Vec<u64>,
}

impl Latency {
    fn add(&mut self, t0: Instant) {
        self.ns.push(t0.elapsed().as_nanos() as u64);
    }

    /// Nearest rank: the smallest value with at least permille/1000 of them at or below it.
    fn percentile(&self, permille: usize) -> f64 {
        let rank = (self.ns.len() * permille).div_ceil(1000);
        self.ns[rank.max(1) - 1] as f64 / 1000.0
    }

    fn max(&self) -> f64 {
        *self.ns.last().unwrap_or(&0) as f64 / 1000.0
    }

    /// The JSON object (sorted first), or null when nothing was timed.
    fn json(&self) -> String {
        if self.ns.is_empty() {
            return "null".into();
        }
        let mean = self.ns.iter().map(|&v| v as f64).sum::<f64>() / self.ns.len() as f64 / 1000.0;
        format!(
            "{{\"ops\":{},\"p50_us\":{:.3},\"p99_us\":{:.3},\"p999_us\":{:.3},\"max_us\":{:.3},\"mean_us\":{mean:.3}}}",
            self.ns.len(),
            self.percentile(500),
            self.percentile(990),
            self.percentile(999),
            self.max()
        )
    }

    fn text(&self) -> String {
        format!(
            "p50 {:.3} us, p99 {:.3} us, p99.9 {:.3} us, max {:.3} us",
            self.percentile(500),
            self.percentile(990),
            self.percentile(999),
            self.max()
        )
    }
}

fn fail(name: &str, what: impl std::fmt::Display) -> Error {
    Error::internal(format!("{name}: check failed: {what}"))
}

fn key_of(k: u64) -> Vec<u8> {
    let mut buf = Vec::with_capacity(16);
    key(k, &mut buf);
    buf
}

/// Writes keys first..first+n in order with values of `vsize` from `gen` (untimed set-up).
fn fill(db: &Db, gen: &mut ValueGen, first: u64, n: u64, vsize: usize) -> Result<(), Error> {
    let w = WriteOptions::default();
    let mut k = Vec::with_capacity(16);
    for i in 0..n {
        key(first + i, &mut k);
        db.put(&w, &k, gen.generate(vsize))?;
    }
    Ok(())
}

/// Every key first..first+n must read back the value a fresh generator gives in order.
fn verify(
    flags: &Flags,
    name: &str,
    db: &Db,
    first: u64,
    n: u64,
    vsize: usize,
) -> Result<(), Error> {
    let mut gen = ValueGen::new(flags.compression_ratio);
    let r = ReadOptions::default();
    let mut k = Vec::with_capacity(16);
    for i in 0..n {
        let want = gen.generate(vsize);
        key(first + i, &mut k);
        let shown = String::from_utf8_lossy(&k).into_owned();
        match db.get(&r, &k)? {
            None => return Err(fail(name, format!("key {shown} written but not found"))),
            Some(v) if v != want => {
                return Err(fail(
                    name,
                    format!("key {shown} reads back a different value"),
                ))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Live entries, by a full scan.
fn count(db: &Db) -> Result<u64, Error> {
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    it.status()?;
    Ok(n)
}

fn table_files(db: &Db) -> usize {
    db.properties().files_per_level.iter().sum()
}

/// What a workload did, for its output line.
#[derive(Default)]
struct Outcome {
    ops: u64,
    secs: f64,
    bytes: u64,
    found: u64,
    threads: usize,
    message: String,
    lat: Latency,
    /// writes_during_flush: (flushes completed during the puts, puts issued during
    /// background work, their latencies).
    flush: Option<(u64, u64, Latency)>,
}

/// Runs one workload of RucksDB's suite on a fresh database and prints its line.
pub fn run(flags: &Flags, name: &str) -> Result<(), Error> {
    let mut options = flags.options(false);
    if name == "writes_during_flush" {
        options.write_buffer_size = 1 << 20;
    }
    destroy(&flags.db);
    let db = Db::open_path(&flags.db, options)?;
    let mut out = workload(flags, name, &db)?;
    db.close()?;
    out.lat.ns.sort_unstable();
    if let Some((_, _, busy)) = out.flush.as_mut() {
        busy.ns.sort_unstable();
    }
    report(flags, name, &out);
    Ok(())
}

fn workload(flags: &Flags, name: &str, db: &Db) -> Result<Outcome, Error> {
    let n_all = flags.num.max(1);
    let hist = flags.histogram || name == "writes_during_flush";
    let mut gen = ValueGen::new(flags.compression_ratio);
    // Its bytes made before any workload's clock starts.
    gen.generate(0);
    let mut rnd = Random::new(1000);
    let w = WriteOptions::default();
    let r = ReadOptions::default();
    let mut k = Vec::with_capacity(32);
    let mut out = Outcome {
        threads: 1,
        ..Outcome::default()
    };
    match name {
        "put_100b" | "put_1kb" | "put_10kb" => {
            let (vsize, ops) = match name {
                "put_100b" => (100, n_all),
                "put_1kb" => (KB, n_all / 10),
                _ => (10 * KB, n_all / 100),
            };
            out.ops = ops.max(1);
            let start = Instant::now();
            for i in 0..out.ops {
                key(i, &mut k);
                let v = gen.generate(vsize);
                let t0 = Instant::now();
                db.put(&w, &k, v)?;
                if hist {
                    out.lat.add(t0);
                }
                out.bytes += (k.len() + vsize) as u64;
            }
            out.secs = start.elapsed().as_secs_f64();
            verify(flags, name, db, 0, out.ops, vsize)?;
            if count(db)? != out.ops {
                return Err(fail(name, "a scan does not find exactly the keys written"));
            }
        }
        "get_memtable" | "get_sstable" | "get_not_found" => {
            let keys = if name == "get_memtable" {
                n_all.min(1000)
            } else {
                (n_all / 10).max(1)
            };
            let missing = name == "get_not_found";
            fill(db, &mut gen, 0, keys, KB)?;
            if name == "get_memtable" {
                if table_files(db) > 0 {
                    return Err(fail(
                        name,
                        "a table was written: the keys are not all in the memtable",
                    ));
                }
            } else {
                db.compact_range(None, None)?;
                if table_files(db) == 0 {
                    return Err(fail(name, "no table after the compaction"));
                }
            }
            out.ops = n_all;
            let mut wrong = 0;
            // One value buffer for every get, as the C++ harness's `std::string value`.
            let mut v = Vec::new();
            let start = Instant::now();
            for _ in 0..out.ops {
                key(rnd.uniform(keys as u32) as u64, &mut k);
                if missing {
                    k.push(b'.');
                }
                let t0 = Instant::now();
                let got = db.get_into(&r, &k, &mut v)?;
                if hist {
                    out.lat.add(t0);
                }
                if got {
                    out.found += 1;
                    if v.len() != KB {
                        wrong += 1;
                    }
                }
            }
            out.secs = start.elapsed().as_secs_f64();
            out.message = format!("({} of {} found)", out.found, out.ops);
            if missing && out.found != 0 {
                return Err(fail(name, format!("absent keys found {}", out.message)));
            }
            if !missing && out.found != out.ops {
                return Err(fail(
                    name,
                    format!("keys written not found {}", out.message),
                ));
            }
            if wrong > 0 {
                return Err(fail(name, format!("{wrong} values of the wrong size")));
            }
            if name == "get_memtable" && table_files(db) > 0 {
                return Err(fail(name, "a table was written during the gets"));
            }
            if missing {
                // The keys that are there are still found.
                if db.get(&r, &key_of(0))?.is_none() || db.get(&r, &key_of(keys - 1))?.is_none() {
                    return Err(fail(name, "a key written is not found"));
                }
            } else {
                verify(flags, name, db, 0, keys, KB)?;
            }
        }
        "delete" => {
            out.ops = n_all;
            fill(db, &mut gen, 0, out.ops, 100)?;
            let start = Instant::now();
            for i in 0..out.ops {
                key(i, &mut k);
                let t0 = Instant::now();
                db.delete(&w, &k)?;
                if hist {
                    out.lat.add(t0);
                }
            }
            out.secs = start.elapsed().as_secs_f64();
            if count(db)? != 0 {
                return Err(fail(
                    name,
                    "a scan still finds keys after every key was deleted",
                ));
            }
            if db.get(&r, &key_of(0))?.is_some() || db.get(&r, &key_of(out.ops - 1))?.is_some() {
                return Err(fail(name, "a deleted key is found"));
            }
        }
        "read_write_50_50" => {
            let mut written = n_all.min(1000);
            fill(db, &mut gen, 0, written, KB)?;
            out.ops = (n_all / 4).max(2);
            let mut wrong = 0;
            let mut v = Vec::new();
            let start = Instant::now();
            for i in 0..out.ops {
                if i % 2 == 0 {
                    key(rnd.uniform(written as u32) as u64, &mut k);
                    let t0 = Instant::now();
                    let got = db.get_into(&r, &k, &mut v)?;
                    if hist {
                        out.lat.add(t0);
                    }
                    if got {
                        out.found += 1;
                        if v.len() != KB {
                            wrong += 1;
                        }
                    }
                } else {
                    key(written, &mut k);
                    written += 1;
                    let v = gen.generate(KB);
                    let t0 = Instant::now();
                    db.put(&w, &k, v)?;
                    if hist {
                        out.lat.add(t0);
                    }
                    out.bytes += (k.len() + KB) as u64;
                }
            }
            out.secs = start.elapsed().as_secs_f64();
            let reads = out.ops.div_ceil(2);
            out.message = format!("({} of {reads} reads found)", out.found);
            if out.found != reads {
                return Err(fail(
                    name,
                    format!("reads of keys written not found {}", out.message),
                ));
            }
            if wrong > 0 {
                return Err(fail(name, format!("{wrong} values of the wrong size")));
            }
            verify(flags, name, db, 0, written, KB)?;
        }
        "concurrent_writes" => {
            let threads = flags.threads.max(1);
            let per = (n_all / 10 / threads as u64).max(1);
            out.threads = threads;
            out.ops = per * threads as u64;
            let start = Instant::now();
            let lats: Vec<Result<Latency, Error>> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..threads as u64)
                    .map(|t| {
                        s.spawn(move || {
                            let mut gen = ValueGen::new(flags.compression_ratio);
                            let mut k = Vec::with_capacity(16);
                            let mut lat = Latency::default();
                            let w = WriteOptions::default();
                            for j in 0..per {
                                key(t * per + j, &mut k);
                                let v = gen.generate(KB);
                                let t0 = Instant::now();
                                db.put(&w, &k, v)?;
                                if hist {
                                    lat.add(t0);
                                }
                            }
                            Ok(lat)
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("writer thread"))
                    .collect()
            });
            out.secs = start.elapsed().as_secs_f64();
            for l in lats {
                out.lat.ns.extend(l?.ns);
            }
            out.bytes = out.ops * (16 + KB) as u64;
            for t in 0..threads as u64 {
                verify(flags, name, db, t * per, per, KB)?;
            }
            if count(db)? != out.ops {
                return Err(fail(name, "a scan does not find exactly the keys written"));
            }
        }
        "writes_during_flush" => {
            out.ops = (n_all / 10).max(4096);
            let flushes0 = db.properties().flushes;
            let mut busy_ops = 0;
            let mut busy = Latency::default();
            let start = Instant::now();
            for i in 0..out.ops {
                key(i, &mut k);
                let v = gen.generate(KB);
                let during = db.background_busy();
                let t0 = Instant::now();
                db.put(&w, &k, v)?;
                out.lat.add(t0);
                if during {
                    busy.ns.push(*out.lat.ns.last().unwrap_or(&0));
                    busy_ops += 1;
                }
                out.bytes += (k.len() + KB) as u64;
            }
            out.secs = start.elapsed().as_secs_f64();
            let flushes = db.properties().flushes - flushes0;
            if flushes == 0 {
                return Err(fail(name, "no memtable flush completed while the puts ran"));
            }
            if busy_ops == 0 {
                return Err(fail(
                    name,
                    "no put was issued while a flush or compaction ran",
                ));
            }
            verify(flags, name, db, 0, out.ops, KB)?;
            out.flush = Some((flushes, busy_ops, busy));
        }
        other => {
            return Err(Error::invalid_argument(format!(
                "unknown benchmark {other:?}"
            )))
        }
    }
    Ok(out)
}

/// The line bench/harness.h prints for the same workload, field for field.
fn report(flags: &Flags, name: &str, out: &Outcome) {
    let micros = out.secs * 1e6 / out.ops.max(1) as f64;
    let mbps = (out.bytes > 0).then(|| out.bytes as f64 / 1048576.0 / out.secs);
    if flags.json {
        let mut line = format!(
            "{{\"benchmark\":\"{name}\",\"micros_per_op\":{micros:.3},\"ops\":{},\"seconds\":{:.6},\"mb_per_s\":{},\"found\":{},\"threads\":{},\"latency\":{}",
            out.ops,
            out.secs,
            mbps.map_or("null".to_string(), |m| format!("{m:.1}")),
            out.found,
            out.threads,
            out.lat.json()
        );
        if let Some((flushes, busy_ops, busy)) = &out.flush {
            line.push_str(&format!(
                ",\"flushes\":{flushes},\"busy_ops\":{busy_ops},\"latency_busy\":{}",
                busy.json()
            ));
        }
        println!("{line}}}");
        return;
    }
    let mut extra = String::new();
    if let Some(m) = mbps {
        extra.push_str(&format!("{m:6.1} MB/s"));
    }
    if !out.message.is_empty() {
        if !extra.is_empty() {
            extra.push(' ');
        }
        extra.push_str(&out.message);
    }
    if !out.lat.ns.is_empty() {
        extra.push_str(if extra.is_empty() { "(" } else { " (" });
        extra.push_str(&out.lat.text());
        extra.push(')');
    }
    if let Some((flushes, busy_ops, busy)) = &out.flush {
        extra.push_str(&format!(
            " ({flushes} flushes; {busy_ops} of {} puts during background work{})",
            out.ops,
            if busy.ns.is_empty() {
                String::new()
            } else {
                format!(": {}", busy.text())
            }
        ));
    }
    println!(
        "{name:<12} : {micros:11.3} micros/op;{}{extra}",
        if extra.is_empty() { "" } else { " " }
    );
}

#[cfg(test)]
mod tests {
    use super::Latency;

    #[test]
    fn percentiles_are_nearest_rank() {
        let lat = Latency {
            ns: (1..=1000).map(|v| v * 1000).collect(),
        };
        assert_eq!(lat.percentile(500), 500.0);
        assert_eq!(lat.percentile(990), 990.0);
        assert_eq!(lat.percentile(999), 999.0);
        assert_eq!(lat.max(), 1000.0);
        let one = Latency { ns: vec![7000] };
        assert_eq!(one.percentile(500), 7.0);
        assert_eq!(one.percentile(999), 7.0);
        // 3 values: p50 is the 2nd (rank ceil(1.5)), p99 the 3rd.
        let three = Latency {
            ns: vec![1000, 2000, 3000],
        };
        assert_eq!(three.percentile(500), 2.0);
        assert_eq!(three.percentile(990), 3.0);
        assert_eq!(
            three.json(),
            "{\"ops\":3,\"p50_us\":2.000,\"p99_us\":3.000,\"p999_us\":3.000,\"max_us\":3.000,\"mean_us\":2.000}"
        );
    }
}
