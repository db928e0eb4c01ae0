//! Shared helpers for integration tests: the real worlds in ../shared/worlds and their
//! expected figures (MANIFEST.tsv, computed with Mojang's LevelDB).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use strata::{ScanStats, Storage};

pub mod watchdog;

/// Where the real worlds are: `../shared/worlds` beside the repository, or `$STRATA_WORLDS`.
fn worlds_path() -> PathBuf {
    std::env::var_os("STRATA_WORLDS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/worlds"))
}

/// `../shared/worlds` beside the repository (or `$STRATA_WORLDS`). Tests that read them start
/// with `skip_without_worlds`; reaching here without them is a test failure.
pub fn worlds_dir() -> PathBuf {
    let dir = worlds_path();
    assert!(
        dir.join("MANIFEST.tsv").is_file(),
        "real worlds not found at {} (set STRATA_WORLDS)",
        dir.display()
    );
    dir
}

/// True when the real worlds are missing (a clone with nothing beside it): the calling test
/// then says so on stderr, loudly, and returns without checking anything. Under CI (`CI` set)
/// the worlds must be there: their absence fails the test instead.
pub fn skip_without_worlds(test: &str) -> bool {
    let dir = worlds_path();
    if dir.join("MANIFEST.tsv").is_file() {
        return false;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI: the real worlds are missing at {} (set STRATA_WORLDS)",
        dir.display()
    );
    let line = format!(
        "!!! SKIPPED {test}: the real worlds are not at {} (set STRATA_WORLDS)\n",
        dir.display()
    );
    // Straight to file descriptor 2: the test harness captures eprintln! of passing tests.
    // SAFETY: writes `line`'s initialized bytes to stderr; `line` outlives the call.
    #[allow(unsafe_code)]
    let written = unsafe { libc::write(2, line.as_ptr().cast(), line.len()) };
    if written < 0 {
        eprint!("{line}");
    }
    true
}

#[derive(Clone, Debug)]
pub struct World {
    pub name: String,
    pub expected: ScanStats,
    pub compression_ids: String,
}

impl World {
    /// The LevelDB folder of the world.
    pub fn db_dir(&self) -> PathBuf {
        worlds_dir().join(&self.name).join("db")
    }

    pub fn db_path(&self) -> String {
        self.db_dir().to_string_lossy().into_owned()
    }
}

/// Every world listed in MANIFEST.tsv.
pub fn worlds() -> Vec<World> {
    let text = std::fs::read_to_string(worlds_dir().join("MANIFEST.tsv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (c_name, c_e, c_k, c_v, c_c, c_ids) = (
        col("name"),
        col("entries"),
        col("key_bytes"),
        col("value_bytes"),
        col("crc32c"),
        col("compression_ids"),
    );
    let worlds: Vec<World> = lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            World {
                name: f[c_name].to_string(),
                expected: ScanStats {
                    entries: f[c_e].parse().unwrap(),
                    key_bytes: f[c_k].parse().unwrap(),
                    value_bytes: f[c_v].parse().unwrap(),
                    crc32c: f[c_c].parse().unwrap(),
                },
                compression_ids: f[c_ids].to_string(),
            }
        })
        .collect();
    assert_eq!(worlds.len(), 16, "MANIFEST.tsv lists 16 worlds");
    worlds
}

/// Loads every file of a folder into an in-memory storage under `dir`.
pub fn load_into_mem(src: &Path, dir: &str) -> strata::MemStorage {
    let mem = strata::MemStorage::new();
    mem.create_dir_all(dir).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            let name = entry.file_name().into_string().unwrap();
            let data = std::fs::read(entry.path()).unwrap();
            strata::storage::write_all(&mem, &format!("{dir}/{name}"), &data).unwrap();
        }
    }
    mem
}

/// The files in folder `dir` of `storage` whose names end with `suffix`, sorted: oldest
/// first for numbered files (their numbers are zero-padded).
pub fn files_in(storage: &dyn Storage, dir: &str, suffix: &str) -> Vec<String> {
    let mut files: Vec<String> = storage
        .list(dir)
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(suffix))
        .collect();
    files.sort();
    files
}

/// The write-ahead logs in folder `dir` of `storage`, oldest first.
pub fn logs_in(storage: &dyn Storage, dir: &str) -> Vec<String> {
    files_in(storage, dir, ".log")
}

/// The name of the write-ahead log in `dir`, a database folder holding exactly one.
pub fn only_log(dir: &Path) -> String {
    let logs: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".log"))
        .collect();
    assert_eq!(logs.len(), 1, "one log in {}: {logs:?}", dir.display());
    logs.into_iter().next().unwrap()
}

/// Waits until `db` has no flush or compaction scheduled or running, seen twice 20 ms apart
/// (with no writes coming, it then stays so): its folder is then stable, and a copy of it is
/// a point-in-time crash image (a file listed, then removed by an install before its copy,
/// failed a copy of a live folder). Panics after 60 s.
pub fn settle(db: &strata::Db) {
    let start = std::time::Instant::now();
    loop {
        if !db.background_busy() {
            std::thread::sleep(std::time::Duration::from_millis(20));
            if !db.background_busy() {
                return;
            }
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "background work still running after 60 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Copies a folder (files only, one level) to `dst`.
pub fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), dst.join(entry.file_name())).unwrap();
        }
    }
}

/// Runs Python (`$PYTHON`, else `python3`) with `args`; `what` names it when it fails (the
/// peers come from scripts/setup.sh).
pub fn run_python<I, S>(what: &str, args: I)
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let out = std::process::Command::new(std::env::var("PYTHON").unwrap_or("python3".into()))
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{what} failed (run scripts/setup.sh): {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every entry of `db` in order, read with the default options.
pub fn entries(db: &strata::Db) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut it = db.iter(&strata::ReadOptions::default());
    it.seek_to_first();
    let mut out = Vec::new();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    out
}

/// Reads database `dir` whole with a real LevelDB (`plyvel`: Google's, `amulet`: Mojang's,
/// through tests/peers/dump_db.py) and returns its entries in iteration order. Both open it as
/// writers: pass a copy where the original matters.
pub fn dump_with_peer(engine: &str, dir: &Path) -> Vec<(Vec<u8>, Vec<u8>)> {
    let out = dir.with_extension("dump");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/dump_db.py");
    let o = std::process::Command::new(std::env::var("PYTHON").unwrap_or("python3".into()))
        .arg(script)
        .arg(engine)
        .arg(dir)
        .arg(&out)
        .output()
        .expect("python3 runs");
    assert!(
        o.status.success(),
        "{engine} could not read {} (run scripts/setup.sh): {}",
        dir.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    read_peer_records(&out, true)
}

/// Reads the records the Python peer scripts write: `(u32 LE length, key)` and, with
/// `with_values`, `(u32 LE length, value)` after each key.
pub fn read_peer_records(path: &Path, with_values: bool) -> Vec<(Vec<u8>, Vec<u8>)> {
    let data = std::fs::read(path).unwrap();
    let mut out = Vec::new();
    let mut p = 0;
    let take = |p: &mut usize| {
        let n = u32::from_le_bytes(data[*p..*p + 4].try_into().unwrap()) as usize;
        let s = data[*p + 4..*p + 4 + n].to_vec();
        *p += 4 + n;
        s
    };
    while p < data.len() {
        let k = take(&mut p);
        let v = if with_values {
            take(&mut p)
        } else {
            Vec::new()
        };
        out.push((k, v));
    }
    out
}

/// A tiny deterministic PRNG for tests (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}
