//! The CLI's commands, each a thin layer over `strata::Db`.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use strata::{CompressionType, Db, Error, Options, ReadOptions, WriteOptions};

use crate::args::Args;

pub enum CliError {
    Usage(String),
    Engine(Error),
}

impl From<Error> for CliError {
    fn from(e: Error) -> Self {
        CliError::Engine(e)
    }
}

type CliResult = Result<ExitCode, CliError>;

/// A world folder (level.dat + db/, or a bare folder around db/) resolves to its db/;
/// anything else is used as is.
pub fn resolve_db_dir(path: &str) -> String {
    let p = Path::new(path);
    if !p.join("CURRENT").is_file() && p.join("db").join("CURRENT").is_file() {
        return p.join("db").to_string_lossy().into_owned();
    }
    path.to_string()
}

fn open_read_only(path: &str) -> Result<Db, CliError> {
    open_db(path, Options::default().read_only())
}

/// Opens the database at `path` (a world folder resolves to its db/) and says on stderr what
/// recovery did not use (torn tails, unreferenced tables, logs after a gap), if anything.
pub fn open_db(path: &str, options: Options) -> Result<Db, CliError> {
    let db = Db::open_path(&resolve_db_dir(path), options)?;
    report_recovery(path, db.recovery_info());
    Ok(db)
}

/// Prints recovery's findings on stderr (nothing when recovery used everything).
pub fn report_recovery(path: &str, info: &strata::db::RecoveryInfo) {
    if info.is_clean() {
        return;
    }
    eprintln!("strata: recovery of {path} did not use everything it found:");
    for line in info.describe() {
        eprintln!("  {line}");
    }
    eprintln!("  (`strata repair {path}` folds every intact entry back in)");
}

/// Parses a key given as text or as `0x`-prefixed hex.
pub fn parse_key(s: &str) -> Result<Vec<u8>, CliError> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => {
            if hex.len() % 2 != 0 {
                return Err(CliError::Usage(format!(
                    "odd number of hex digits in {s:?}"
                )));
            }
            (0..hex.len())
                .step_by(2)
                .map(|i| {
                    u8::from_str_radix(&hex[i..i + 2], 16)
                        .map_err(|_| CliError::Usage(format!("bad hex in {s:?}")))
                })
                .collect()
        }
        None => Ok(s.as_bytes().to_vec()),
    }
}

/// Printable ASCII keys as text, anything else as 0x-hex.
pub fn display_key(key: &[u8]) -> String {
    if !key.is_empty() && key.iter().all(|&b| (0x20..0x7f).contains(&b)) && !key.starts_with(b"0x")
    {
        String::from_utf8_lossy(key).into_owned()
    } else {
        hex(key)
    }
}

pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(2 + bytes.len() * 2);
    s.push_str("0x");
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

pub fn scan(raw: &[String]) -> CliResult {
    let args = Args::parse(raw, &["readahead-threads"], &["json", "timing"])?;
    let [path] = args.positionals(&["DB_DIR"])? else {
        unreachable!()
    };
    let mut options = Options::default().read_only();
    if let Some(n) = args.number("readahead-threads")? {
        options.readahead_threads = n as usize;
    }
    let start = Instant::now();
    let db = open_db(path, options)?;
    let opened = start.elapsed().as_secs_f64();
    let stats = db.scan()?;
    let secs = start.elapsed().as_secs_f64();
    if args.has("timing") {
        let threads = db.options().readahead_threads;
        eprintln!(
            "{{\"open_seconds\":{opened:.6},\"seconds\":{secs:.6},\"readahead_threads\":{threads}}}"
        );
    }
    if args.has("json") {
        println!("{}", stats.to_json());
    } else {
        println!("entries      {}", stats.entries);
        println!("key_bytes    {}", stats.key_bytes);
        println!("value_bytes  {}", stats.value_bytes);
        println!("crc32c       {}", stats.crc32c);
        println!(
            "time         {:.3} s ({:.0} entries/s, {:.1} MB/s of keys+values)",
            secs,
            stats.entries as f64 / secs.max(1e-9),
            (stats.key_bytes + stats.value_bytes) as f64 / 1e6 / secs.max(1e-9)
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub fn get(raw: &[String]) -> CliResult {
    let args = Args::parse(raw, &[], &["hex"])?;
    let [path, key] = args.positionals(&["DB_DIR", "KEY"])? else {
        unreachable!()
    };
    let key = parse_key(key)?;
    let db = open_read_only(path)?;
    match db.get(&ReadOptions::default(), &key)? {
        Some(v) => {
            let mut out = std::io::stdout().lock();
            let printable = std::str::from_utf8(&v)
                .is_ok_and(|t| !t.chars().any(|c| c.is_control() && c != '\n' && c != '\t'));
            if args.has("hex") || !printable {
                let _ = writeln!(out, "{}", hex(&v));
            } else {
                let _ = out.write_all(&v);
                let _ = writeln!(out);
            }
            Ok(ExitCode::SUCCESS)
        }
        None => {
            eprintln!("strata: NotFound: {}", display_key(&key));
            Ok(ExitCode::from(1))
        }
    }
}

pub fn dump(raw: &[String]) -> CliResult {
    let args = Args::parse(raw, &["limit"], &[])?;
    let [path] = args.positionals(&["DB_DIR"])? else {
        unreachable!()
    };
    let limit = args.number("limit")?.unwrap_or(u64::MAX);
    let db = open_read_only(path)?;
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut n = 0;
    while it.valid() && n < limit {
        if writeln!(out, "{}\t{}", display_key(it.key()), it.value().len()).is_err() {
            return Ok(ExitCode::SUCCESS); // closed pipe (e.g. `| head`)
        }
        n += 1;
        it.next();
    }
    it.status()?;
    let _ = out.flush();
    Ok(ExitCode::SUCCESS)
}

pub fn info(raw: &[String]) -> CliResult {
    let args = Args::parse(raw, &[], &[])?;
    let [path] = args.positionals(&["DB_DIR"])? else {
        unreachable!()
    };
    let db = open_read_only(path)?;
    let rec = db.recovery_info();
    let version = db.version();
    println!("database     {}", db.dir());
    println!("manifest     {}", rec.manifest);
    let d = db.dialect();
    let name = match d.profile {
        Some(strata::Profile::Bedrock) => "bedrock",
        Some(strata::Profile::Google) => "google",
        None => "none yet",
    };
    println!("dialect      {name} ({})", d.reason);
    println!("last seq     {}", db.last_sequence());
    println!("next file    {}", rec.next_file_number);
    for log in &rec.logs {
        println!(
            "log          {}: {} batches, {} bytes",
            log.name, log.records, log.bytes
        );
    }
    println!(
        "memtable     {} entries (from the log)",
        db.memtable_entries()
    );
    let mut all_ids = std::collections::BTreeMap::<u8, u64>::new();
    let mut total_entries = 0;
    let mut total_bytes = 0;
    for level in 0..strata::options::config::NUM_LEVELS {
        let files = &version.files[level];
        if files.is_empty() {
            continue;
        }
        println!(
            "level {level}      {} files, {} bytes",
            files.len(),
            version.level_bytes(level)
        );
        for f in files {
            let stats = db.table_stats(f)?;
            let ids: Vec<String> = stats
                .compression_ids
                .iter()
                .map(|(id, n)| format!("{id}:{n}"))
                .collect();
            println!(
                "  {:06}.ldb  {:>10} bytes  {:>8} entries  {:>5} blocks  ids {{{}}}  index id {}  filter {}",
                f.number,
                f.file_size,
                stats.entries,
                stats.data_blocks,
                ids.join(", "),
                stats.index_compression,
                if stats.has_filter { "yes" } else { "no" }
            );
            for (id, n) in stats.compression_ids {
                *all_ids.entry(id).or_default() += n;
            }
            total_entries += stats.entries;
            total_bytes += f.file_size;
        }
    }
    let ids: Vec<String> = all_ids.keys().map(|id| id.to_string()).collect();
    println!("tables       {total_bytes} bytes, {total_entries} internal entries");
    println!(
        "compression  ids seen in data blocks: {}",
        if ids.is_empty() {
            "-".to_string()
        } else {
            ids.join(",")
        }
    );
    Ok(ExitCode::SUCCESS)
}

pub fn verify(raw: &[String]) -> CliResult {
    let args = Args::parse(raw, &[], &[])?;
    let [path] = args.positionals(&["DB_DIR"])? else {
        unreachable!()
    };
    let db = match open_read_only(path) {
        Ok(db) => db,
        Err(CliError::Engine(e)) => {
            println!("FAILED: {e}");
            return Ok(ExitCode::from(1));
        }
        Err(e) => return Err(e),
    };
    match db.verify() {
        Ok(r) => {
            println!(
                "OK: {} tables, {} blocks, {} entries, {} bytes; logs and MANIFEST intact",
                r.tables, r.blocks, r.entries, r.bytes
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            println!("FAILED: {e}");
            Ok(ExitCode::from(1))
        }
    }
}

/// Options for writing to `path`: the database's own dialect (detected at open from its
/// tables and a level.dat beside it) unless `--profile` says otherwise; a codec the database's
/// dialect cannot read is refused unless `--force-codec`.
fn write_options(path: &str, args: &Args) -> Result<Options, CliError> {
    let is_world = Path::new(path).join("level.dat").is_file();
    let mut o = match args.value("profile") {
        Some("bedrock") => Options::bedrock(),
        Some("google") => Options::google(),
        None => Options {
            detect_profile: true,
            ..if is_world {
                Options::bedrock()
            } else {
                Options::google()
            }
        },
        Some(other) => return Err(CliError::Usage(format!("unknown profile {other:?}"))),
    };
    o.allow_foreign_codec = args.has("force-codec");
    if let Some(n) = args.number("compression-threads")? {
        o.compression_threads = n as usize;
    }
    if let Some(c) = args.value("compression") {
        o.compression = CompressionType::from_name(c)
            .filter(|c| *c != CompressionType::Zstd)
            .ok_or_else(|| CliError::Usage(format!("unknown compression {c:?}")))?;
    }
    Ok(o)
}

const WRITE_FLAGS: &[&str] = &["profile", "compression", "compression-threads"];

pub fn put(raw: &[String]) -> CliResult {
    let args = Args::parse(raw, WRITE_FLAGS, &["sync", "force-codec"])?;
    let [path, key, value] = args.positionals(&["DB_DIR", "KEY", "VALUE"])? else {
        unreachable!()
    };
    let (key, value) = (parse_key(key)?, parse_key(value)?);
    let mut options = write_options(path, &args)?;
    options.create_if_missing = true;
    let db = open_db(path, options)?;
    let w = WriteOptions {
        sync: args.has("sync"),
        ..Default::default()
    };
    db.put(&w, &key, &value)?;
    db.close()?;
    Ok(ExitCode::SUCCESS)
}

pub fn delete(raw: &[String]) -> CliResult {
    let args = Args::parse(raw, WRITE_FLAGS, &["sync", "force-codec"])?;
    let [path, key] = args.positionals(&["DB_DIR", "KEY"])? else {
        unreachable!()
    };
    let key = parse_key(key)?;
    let db = open_db(path, write_options(path, &args)?)?;
    let w = WriteOptions {
        sync: args.has("sync"),
        ..Default::default()
    };
    db.delete(&w, &key)?;
    db.close()?;
    Ok(ExitCode::SUCCESS)
}

pub fn compact(raw: &[String]) -> CliResult {
    let args = Args::parse(raw, WRITE_FLAGS, &["force-codec"])?;
    let [path] = args.positionals(&["DB_DIR"])? else {
        unreachable!()
    };
    let start = Instant::now();
    let db = open_db(path, write_options(path, &args)?)?;
    db.compact_range(None, None)?;
    let p = db.properties();
    db.close()?;
    println!(
        "compacted in {:.3} s; files per level {:?}, bytes per level {:?}",
        start.elapsed().as_secs_f64(),
        p.files_per_level,
        p.bytes_per_level
    );
    Ok(ExitCode::SUCCESS)
}

pub fn repair(raw: &[String]) -> CliResult {
    let args = Args::parse(raw, WRITE_FLAGS, &["force-codec"])?;
    let [path] = args.positionals(&["DB_DIR"])? else {
        unreachable!()
    };
    let options = write_options(path, &args)?;
    let storage = std::sync::Arc::new(strata::FsStorage::new());
    let r = strata::db::repair::repair(storage, &resolve_db_dir(path), &options)?;
    println!(
        "repaired: {} tables ({} rewritten, {} lost), {} entries, {} logs replayed ({} records, {} bytes dropped), last sequence {}",
        r.tables, r.tables_rewritten, r.tables_lost, r.entries, r.logs_replayed, r.log_records, r.log_bytes_dropped, r.last_sequence
    );
    if r.tables_merged > 0 {
        println!(
            "  {} tables merged into one sorted run (their file numbers did not order their entries); the originals are in lost/",
            r.tables_merged
        );
    }
    Ok(ExitCode::SUCCESS)
}
