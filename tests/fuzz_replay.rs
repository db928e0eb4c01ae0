//! Replays the fuzz targets (`strata::fuzzing`, the same bodies cargo-fuzz runs) on a stable
//! toolchain: a seed corpus built at test time from the real worlds in ../shared/worlds
//! (tables, logs, MANIFESTs, blocks, compressed payloads, NBT values, the .mcworld zips; never
//! copied into the repository) plus deterministic mutations of it (bit flips, byte sets,
//! truncations, splices, length-field bumps, inserted and deleted ranges).
//!
//! Every input must return (Ok or Err) without panicking; the number of inputs per target is
//! asserted, and well-formed seeds must give Ok with figures computed independently of the
//! engine's readers (table entry counts from MANIFEST.tsv, block entry counts and log record
//! counts from the small parsers below, file counts of the world folders).

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use common::{worlds, worlds_dir, Rng};
use strata::compress::{self, CompressionType};
use strata::db::WriteBatch;
use strata::fuzzing;
use strata::{Db, Options, ReadOptions};

// ---- independent parsers (no engine reader code) ----

fn varint(data: &[u8], pos: &mut usize) -> u64 {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = data[*pos];
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            break;
        }
    }
    v
}

fn u32le(d: &[u8], p: usize) -> usize {
    u32::from_le_bytes(d[p..p + 4].try_into().unwrap()) as usize
}

/// The entries of a block's contents: (key, value).
fn block_entries(b: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let restarts = b.len() - 4 - 4 * u32le(b, b.len() - 4);
    let (mut p, mut key, mut out) = (0, Vec::new(), Vec::new());
    while p < restarts {
        let shared = varint(b, &mut p) as usize;
        let non_shared = varint(b, &mut p) as usize;
        let vlen = varint(b, &mut p) as usize;
        key.truncate(shared);
        key.extend_from_slice(&b[p..p + non_shared]);
        p += non_shared;
        out.push((key.clone(), b[p..p + vlen].to_vec()));
        p += vlen;
    }
    out
}

/// A block of a table file: (compression id, stored payload, decompressed contents).
type RawBlock = (u8, Vec<u8>, Vec<u8>);

fn read_block(t: &[u8], handle: &[u8]) -> RawBlock {
    let mut p = 0;
    let off = varint(handle, &mut p) as usize;
    let size = varint(handle, &mut p) as usize;
    let id = t[off + size];
    let raw = t[off..off + size].to_vec();
    let data = compress::decompress(id, &raw, 16 << 20).unwrap();
    (id, raw, data)
}

/// Every data block of a table, through its footer and index block.
fn table_blocks(t: &[u8]) -> (Vec<u8>, Vec<RawBlock>) {
    let footer = &t[t.len() - 48..];
    assert_eq!(&footer[40..], &0xdb4775248b80fb57u64.to_le_bytes());
    let mut p = 0;
    varint(footer, &mut p);
    varint(footer, &mut p);
    let (_, _, index) = read_block(t, &footer[p..]);
    let blocks = block_entries(&index)
        .iter()
        .map(|(_, h)| read_block(t, h))
        .collect();
    (index, blocks)
}

/// The logical records of a log file (FULL, or FIRST..MIDDLE..LAST assembled), by walking
/// its 32 KiB blocks; stops at a zero type or a header that does not fit.
fn log_records(d: &[u8]) -> Vec<Vec<u8>> {
    let (mut out, mut cur, mut block) = (Vec::new(), Vec::new(), 0);
    while block < d.len() {
        let end = (block + 32768).min(d.len());
        let mut p = block;
        while p + 7 <= end {
            let len = u16::from_le_bytes([d[p + 4], d[p + 5]]) as usize;
            let kind = d[p + 6];
            if kind == 0 || p + 7 + len > end {
                return out;
            }
            cur.extend_from_slice(&d[p + 7..p + 7 + len]);
            if kind == 1 || kind == 4 {
                out.push(std::mem::take(&mut cur));
            }
            p += 7 + len;
        }
        block += 32768;
    }
    out
}

fn files_under(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                files_under(&e.path())
            } else {
                1
            }
        })
        .sum()
}

// ---- seeds ----

/// A seed input with the figure its target must return for it (None: Ok, any figure), after
/// clearing the bits of `ignore`.
struct Seed {
    data: Vec<u8>,
    expect: Option<u64>,
    ignore: u64,
}

#[derive(Default)]
struct Corpus {
    seeds: BTreeMap<&'static str, Vec<Seed>>,
}

impl Corpus {
    fn add(&mut self, target: &'static str, data: Vec<u8>, expect: Option<u64>) {
        self.add_masked(target, data, expect, 0);
    }

    fn add_masked(
        &mut self,
        target: &'static str,
        data: Vec<u8>,
        expect: Option<u64>,
        ignore: u64,
    ) {
        self.seeds.entry(target).or_default().push(Seed {
            data,
            expect,
            ignore,
        });
    }
}

/// Raw deflate (id 4) has no header or checksum, and both it and a Zstd frame without the
/// optional checksum ignore bytes after their end (as zlib's `uncompress` does), so other
/// payloads may happen to decode as id 4, or as Zstd once the magic is prepended: those bits
/// are not predicted for them. Zlib (adler32) and Snappy (exact length) must refuse them.
fn deflate_dont_care(id: u8) -> u64 {
    if id == 4 {
        ZSTD_BIT
    } else {
        mask_bit(4) | ZSTD_BIT
    }
}

/// The `decompress` target's bit for id 2 with the Zstd magic prepended.
const ZSTD_BIT: u64 = 8;

/// The `decompress` target's bit for a successful decode under each id it tries.
fn mask_bit(id: u8) -> u64 {
    match id {
        0 => 1,
        1 => 2,
        2 => 4,
        4 => 16,
        _ => unreachable!(),
    }
}

fn build_corpus() -> Corpus {
    let mut c = Corpus::default();
    let root = worlds_dir();
    for w in worlds() {
        let db = w.db_dir();
        let notes = std::fs::read_to_string(root.join("MANIFEST.tsv")).unwrap();
        let line = notes
            .lines()
            .find(|l| l.split('\t').next() == Some(w.name.as_str()))
            .unwrap();
        // "internal records: tables P put/D del": every entry of the world's live tables.
        let tables_field = line.split("internal records: tables ").nth(1).unwrap();
        let (puts, rest) = tables_field.split_once(" put/").unwrap();
        let dels = rest.split_once(" del").unwrap().0;
        let want_table_entries: u64 = puts.parse::<u64>().unwrap() + dels.parse::<u64>().unwrap();
        let mut table_entries = 0u64;

        let mut names: Vec<String> = std::fs::read_dir(&db)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        for name in names {
            let data = std::fs::read(db.join(&name)).unwrap();
            if name.ends_with(".ldb") || name.ends_with(".sst") {
                let (index, blocks) = table_blocks(&data);
                let n: u64 = blocks
                    .iter()
                    .map(|(_, _, b)| block_entries(b).len() as u64)
                    .sum();
                table_entries += n;
                c.add(
                    "block",
                    index.clone(),
                    Some(block_entries(&index).len() as u64),
                );
                // A few blocks per table: first, last and two between.
                let picks = [0, blocks.len() / 3, 2 * blocks.len() / 3, blocks.len() - 1];
                let mut last = usize::MAX;
                for &i in &picks {
                    if i == last {
                        continue;
                    }
                    last = i;
                    let (id, raw, contents) = &blocks[i];
                    c.add(
                        "block",
                        contents.clone(),
                        Some(block_entries(contents).len() as u64),
                    );
                    let (expect, ignore) = (1 | mask_bit(*id), deflate_dont_care(*id));
                    c.add_masked("decompress", raw.clone(), Some(expect), ignore);
                }
                // The same contents in every codec this build writes.
                let (_, _, contents) = &blocks[0];
                for (kind, id) in [
                    (CompressionType::Snappy, 1),
                    (CompressionType::Zlib, 2),
                    (CompressionType::ZlibRaw, 4),
                ] {
                    let mut out = Vec::new();
                    assert!(compress::compress(kind, contents, &mut out));
                    c.add_masked(
                        "decompress",
                        out,
                        Some(1 | mask_bit(id)),
                        deflate_dont_care(id),
                    );
                }
                c.add("table", data, Some(n));
            } else if name.ends_with(".log") || name.starts_with("MANIFEST-") {
                let records = log_records(&data);
                if name.starts_with("MANIFEST-") {
                    for r in &records {
                        c.add("version_edit", r.clone(), None);
                    }
                }
                c.add("log", data, Some(records.len() as u64));
            }
        }
        assert_eq!(
            table_entries, want_table_entries,
            "{}: table entries",
            w.name
        );

        // NBT: level.dat after its 8-byte header, and a few record values of each world.
        let level_dat = root.join(&w.name).join("level.dat");
        if level_dat.is_file() {
            let d = std::fs::read(level_dat).unwrap();
            c.add("nbt", d[8..].to_vec(), Some(1));
        }
        let mem = common::load_into_mem(&db, "db");
        let opts = Options {
            create_if_missing: false,
            ..Options::bedrock()
        };
        let dbh = Db::open(Arc::new(mem), "db", opts).unwrap();
        let mut it = dbh.iter(&ReadOptions::default());
        it.seek_to_first();
        let mut per_tag: BTreeMap<u8, usize> = BTreeMap::new();
        while it.valid() {
            let k = it.key();
            // BlockEntity (0x31) and Entity (0x32) chunk records, player records.
            let tag = match k.len() {
                9 | 13 => Some(k[k.len() - 1]),
                _ if k.starts_with(b"~local_player") => Some(0),
                _ => None,
            };
            // (Some worlds keep empty Entity records: no NBT to seed.)
            if let (Some(t @ (0 | 0x31 | 0x32)), false) = (tag, it.value().is_empty()) {
                let n = per_tag.entry(t).or_default();
                if *n < 3 {
                    *n += 1;
                    c.add("nbt", it.value().to_vec(), None);
                }
            }
            it.next();
        }
        it.status().unwrap();
    }
    for name in [
        "rbedrock_example1",
        "rbedrock_example2_2022",
        "rbedrock_example2_2025",
        "rbedrock_example3",
    ] {
        let zip = std::fs::read(root.join(format!("{name}.mcworld"))).unwrap();
        c.add("mcworld", zip, Some(files_under(&root.join(name))));
    }
    c
}

// ---- mutations ----

/// One deterministic mutation of `base` (`other`: a second seed for splices).
fn mutate(rng: &mut Rng, base: &[u8], other: &[u8], tail_bias: bool) -> Vec<u8> {
    let mut d = base.to_vec();
    if d.is_empty() {
        return vec![rng.below(256) as u8];
    }
    let len = d.len() as u64;
    // Half the positions near the end, where footers, indexes and restart arrays live.
    let pos = |rng: &mut Rng| -> usize {
        if tail_bias && rng.below(2) == 0 {
            (len - 1 - rng.below(len.min(300))) as usize
        } else {
            rng.below(len) as usize
        }
    };
    match rng.below(7) {
        0 => {
            for _ in 0..=rng.below(4) {
                let p = pos(rng);
                d[p] ^= 1 << rng.below(8);
            }
        }
        1 => {
            let p = pos(rng);
            d[p] = [0x00, 0xff, 0x7f, 0x80, rng.below(256) as u8][rng.below(5) as usize];
        }
        2 => d.truncate(rng.below(len) as usize),
        3 => {
            let p = pos(rng);
            let n = (1 + rng.below(64)) as usize;
            let from = rng.below(other.len().max(1) as u64) as usize;
            let src = &other[from.min(other.len())..(from + n).min(other.len())];
            let end = (p + src.len()).min(d.len());
            d[p..end].copy_from_slice(&src[..end - p]);
        }
        4 => {
            // A length field: a varint byte or a little-endian u16/u32 nudged or blown up.
            let p = pos(rng);
            match rng.below(4) {
                0 => d[p] = d[p].wrapping_add(1),
                1 => d[p] = d[p].wrapping_sub(1),
                2 => d[p] |= 0x80,
                _ => {
                    let v = [0xffff_ffffu32, 0x7fff_ffff, 0x8000, 0x1_0000][rng.below(4) as usize];
                    let end = (p + 4).min(d.len());
                    d[p..end].copy_from_slice(&v.to_le_bytes()[..end - p]);
                }
            }
        }
        5 => {
            let p = pos(rng);
            let n = (1 + rng.below(32)) as usize;
            d.drain(p..(p + n).min(d.len()));
        }
        _ => {
            let p = pos(rng);
            let n = 1 + rng.below(32);
            let fill: Vec<u8> = (0..n).map(|_| rng.below(256) as u8).collect();
            d.splice(p..p, fill);
        }
    }
    d
}

// ---- the replay ----

/// Mutations per target, and the largest seed each mutation may start from.
const PLAN: [(&str, u64, usize); 7] = [
    ("block", 20_000, 1 << 20),
    ("table", 4_000, 400_000),
    ("log", 10_000, 200_000),
    ("version_edit", 20_000, 1 << 20),
    ("decompress", 5_000, 1 << 20),
    ("nbt", 20_000, 1 << 20),
    ("mcworld", 2_000, 1 << 20),
];

/// Seeds per target in the shared worlds (fixed data; a change here means the corpus did).
// With the 16 shared worlds; bds_26_0_featherdev adds its 21 tables, its log and MANIFEST (2 log
// seeds), 117 version edits, 89 blocks, 131 compressed blocks and 4 NBT records.
const SEEDS: [(&str, usize); 7] = [
    ("block", 198),
    ("table", 45),
    ("log", 31),
    ("version_edit", 159),
    ("decompress", 288),
    ("nbt", 80),
    ("mcworld", 4),
];

#[test]
fn fuzz_targets_survive_the_seed_corpus_and_its_mutations() {
    if common::skip_without_worlds("fuzz_targets_survive_the_seed_corpus_and_its_mutations") {
        return;
    }
    let start = Instant::now();
    let corpus = build_corpus();
    eprintln!("corpus built in {:.1?}", start.elapsed());
    // scripts/fuzz.sh seeds cargo-fuzz from the same corpus.
    if let Some(out) = std::env::var_os("STRATA_FUZZ_CORPUS_OUT") {
        for (target, seeds) in &corpus.seeds {
            let dir = std::path::Path::new(&out).join(target);
            std::fs::create_dir_all(&dir).unwrap();
            for (i, s) in seeds.iter().enumerate() {
                std::fs::write(dir.join(format!("seed-{i:04}")), &s.data).unwrap();
            }
        }
    }
    let counts: Vec<(&str, usize)> = SEEDS
        .iter()
        .map(|s| (s.0, corpus.seeds[s.0].len()))
        .collect();
    assert_eq!(counts, SEEDS, "seeds per target");
    let mut report = Vec::new();
    for (target, run) in fuzzing::TARGETS {
        let t0 = Instant::now();
        let seeds = &corpus.seeds[target];
        let want_seeds = SEEDS.iter().find(|s| s.0 == target).unwrap().1;
        assert_eq!(seeds.len(), want_seeds, "{target}: seeds");
        let mut runs = 0u64;
        for (i, s) in seeds.iter().enumerate() {
            let got = run(&s.data)
                .unwrap_or_else(|e| panic!("{target}: seed {i} ({} bytes): {e}", s.data.len()));
            if let Some(want) = s.expect {
                assert_eq!(
                    got & !s.ignore,
                    want,
                    "{target}: seed {i} ({} bytes)",
                    s.data.len()
                );
            }
            runs += 1;
        }
        let (_, mutations, max_base) = *PLAN.iter().find(|p| p.0 == target).unwrap();
        let bases: Vec<&Seed> = seeds.iter().filter(|s| s.data.len() <= max_base).collect();
        assert!(
            !bases.is_empty(),
            "{target}: no seed small enough to mutate"
        );
        let mut rng = Rng(0x5eed_0000 + target.len() as u64 * 7919);
        let (mut ok, mut err) = (0u64, 0u64);
        for _ in 0..mutations {
            let base = bases[rng.below(bases.len() as u64) as usize];
            let other = bases[rng.below(bases.len() as u64) as usize];
            let input = mutate(&mut rng, &base.data, &other.data, target != "nbt");
            match run(&input) {
                Ok(_) => ok += 1,
                Err(_) => err += 1,
            }
            runs += 1;
        }
        assert_eq!(runs, want_seeds as u64 + mutations, "{target}: inputs run");
        assert_eq!(ok + err, mutations);
        report.push(format!(
            "{target}: {runs} inputs ({} seeds, {mutations} mutations: {ok} Ok, {err} Err) in {:.1?}",
            seeds.len(),
            t0.elapsed()
        ));
    }
    for line in &report {
        eprintln!("{line}");
    }
    eprintln!("total {:.1?}", start.elapsed());
}

/// Log seeds replay the same batches the engine's recovery would: the write-batch operations
/// in each world's log match MANIFEST.tsv's "log P put/D del".
#[test]
fn log_seeds_hold_the_batches_manifest_tsv_counts() {
    if common::skip_without_worlds("log_seeds_hold_the_batches_manifest_tsv_counts") {
        return;
    }
    let notes = std::fs::read_to_string(worlds_dir().join("MANIFEST.tsv")).unwrap();
    let mut checked = 0;
    for w in worlds() {
        let line = notes
            .lines()
            .find(|l| l.split('\t').next() == Some(w.name.as_str()))
            .unwrap();
        let field = line.split(", log ").nth(1).unwrap();
        let (puts, rest) = field.split_once(" put/").unwrap();
        let dels = rest.split_once(" del").unwrap().0;
        let want: u64 = puts.parse::<u64>().unwrap() + dels.parse::<u64>().unwrap();
        let mut got = 0u64;
        for e in std::fs::read_dir(w.db_dir()).unwrap() {
            let e = e.unwrap();
            if e.file_name().to_string_lossy().ends_with(".log") {
                let data = std::fs::read(e.path()).unwrap();
                // The fuzz target reads the same records the independent walker finds.
                let records = log_records(&data);
                assert_eq!(fuzzing::log(&data).unwrap(), records.len() as u64);
                for r in records {
                    got += u64::from(WriteBatch::from_contents(r).unwrap().count());
                }
            }
        }
        assert_eq!(got, want, "{}: log batch operations", w.name);
        checked += 1;
    }
    assert_eq!(checked, 16);
}

#[test]
fn mutate_is_deterministic_and_changes_inputs() {
    let base: Vec<u8> = (0..=255u8).collect();
    let run = || {
        let mut rng = Rng(42);
        (0..100)
            .map(|_| mutate(&mut rng, &base, &base[..10], true))
            .collect::<Vec<_>>()
    };
    let a = run();
    assert_eq!(a, run());
    assert_eq!(a.iter().filter(|m| **m == base).count(), 0);
}
