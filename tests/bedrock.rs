//! Bedrock layer against the real worlds: key-kind summaries against MANIFEST.tsv, level.dat
//! fields, chunk counts, maps, `.mcworld` import (real and hostile zips), NBT and chunk
//! decoders under thousands of mutations (no panic, allocations bounded by the input), and
//! the synthetic world generator.
//!
//! Expected values not taken from MANIFEST.tsv were computed independently of Strata: level.dat
//! fields with a 40-line Python NBT reader, chunk counts and LegacyTerrain non-air columns by
//! iterating copies of each db with Mojang's LevelDB (PyPI amulet-leveldb).

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::BTreeSet;
use std::io::Write as _;
use std::sync::Arc;

use common::{worlds, worlds_dir, Rng};
use strata::bedrock::map::{render_map, surface_blocks, surface_tile, MapOptions};
use strata::bedrock::mcworld::{import, ImportLimits};
use strata::bedrock::synth::{generate, SynthParams};
use strata::bedrock::{chunk, keys, nbt, subchunk, World};
use strata::{Db, FsStorage, MemStorage, Options, ReadOptions, ScanStats};

// ---- a per-thread record of the largest single allocation ----

struct Tracking;

thread_local! {
    static TRACK: Cell<bool> = const { Cell::new(false) };
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

fn note(size: usize) {
    let _ = TRACK.try_with(|t| {
        if t.get() {
            let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
        }
    });
}

#[global_allocator]
static ALLOCATOR: Tracking = Tracking;

/// Runs `f` and returns the largest single allocation it made on this thread.
fn largest_allocation(f: impl FnOnce()) -> usize {
    LARGEST.with(|l| l.set(0));
    TRACK.with(|t| t.set(true));
    f();
    TRACK.with(|t| t.set(false));
    LARGEST.with(|l| l.get())
}

// ---- helpers ----

fn open(name: &str) -> World {
    let path = worlds_dir().join(name);
    World::open(Arc::new(FsStorage::new()), path.to_str().unwrap()).unwrap()
}

fn scan(db: &Db) -> ScanStats {
    db.scan().unwrap()
}

/// Chunks per dimension counted straight from raw keys: 9- or 13-byte keys whose last byte is
/// 0x2C (Version) or 0x76 (LegacyVersion).
fn raw_chunk_positions(db: &Db) -> [Vec<(i32, i32)>; 3] {
    let mut sets: [BTreeSet<(i32, i32)>; 3] = Default::default();
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    while it.valid() {
        let k = it.key();
        if matches!(k.len(), 9 | 13) && matches!(k[k.len() - 1], 0x2C | 0x76) {
            let dim = if k.len() == 9 {
                0
            } else {
                i32::from_le_bytes(k[8..12].try_into().unwrap())
            };
            if (0..3).contains(&dim) {
                let x = i32::from_le_bytes(k[0..4].try_into().unwrap());
                let z = i32::from_le_bytes(k[4..8].try_into().unwrap());
                sets[dim as usize].insert((x, z));
            }
        }
        it.next();
    }
    it.status().unwrap();
    sets.map(|s| s.into_iter().collect())
}

/// (world, overworld, nether, end) chunk counts, from Mojang's LevelDB.
const CHUNKS: [(&str, [usize; 3]); 16] = [
    ("amulet_1_16", [436, 0, 0]),
    ("amulet_1_17_20_caves_and_cliffs", [182, 0, 0]),
    ("amulet_1_17_20_vanilla", [82, 0, 0]),
    ("amulet_1_17_40_superflat", [72, 0, 0]),
    ("amulet_1_17_40_vanilla", [216, 0, 0]),
    ("amulet_1_18_superflat", [6, 0, 0]),
    ("amulet_1_18_updated_superflat", [72, 0, 0]),
    ("amulet_1_18_vanilla", [2737, 70, 13]),
    ("bedrock_provider_mctestdb", [57, 0, 0]),
    ("mcpe_0_11_mcedit_testdb", [256, 0, 0]),
    ("minet_testworld", [1277, 0, 0]),
    ("rbedrock_example1", [105, 0, 0]),
    ("rbedrock_example2_2022", [1, 0, 0]),
    ("rbedrock_example2_2025", [56, 0, 0]),
    ("rbedrock_example3", [22, 0, 0]),
    ("bds_26_0_featherdev", [4390, 656, 140]),
];

// ---- real worlds ----

#[test]
fn key_summary_totals_match_the_manifest_and_chunk_counts_match_raw_keys() {
    if common::skip_without_worlds(
        "key_summary_totals_match_the_manifest_and_chunk_counts_match_raw_keys",
    ) {
        return;
    }
    let all = worlds();
    assert_eq!(all.len(), CHUNKS.len());
    for w in &all {
        let world = open(&w.name);
        let s = keys::summarize(world.db()).unwrap();
        assert_eq!(s.total.count, w.expected.entries, "{}", w.name);
        assert_eq!(s.total.key_bytes, w.expected.key_bytes, "{}", w.name);
        assert_eq!(s.total.value_bytes, w.expected.value_bytes, "{}", w.name);
        let rows: u64 = s.by_kind.values().map(|k| k.count).sum();
        assert_eq!(rows, s.total.count, "{}", w.name);

        let expected = CHUNKS.iter().find(|c| c.0 == w.name).unwrap().1;
        let raw = raw_chunk_positions(world.db());
        assert_eq!(raw.clone().map(|p| p.len()), expected, "{}", w.name);
        for (dim, &n) in expected.iter().enumerate() {
            // The index (which seeks past each chunk's records) lists exactly the chunks a
            // pass over every key finds.
            let positions = keys::chunk_positions(world.db(), dim as i32).unwrap();
            assert_eq!(positions, raw[dim], "{} dim {dim}", w.name);
            assert_eq!(positions.len(), n, "{} dim {dim}", w.name);
            let summarized = s.chunks.get(&(dim as i32)).copied().unwrap_or(0);
            assert_eq!(summarized as usize, n, "{} dim {dim}", w.name);
        }
    }
}

#[test]
fn key_kinds_of_one_world() {
    if common::skip_without_worlds("key_kinds_of_one_world") {
        return;
    }
    let s = keys::summarize(open("amulet_1_18_vanilla").db()).unwrap();
    let row = |l: &str| {
        s.by_kind
            .get(l)
            .map(|k| (k.count, k.key_bytes, k.value_bytes))
    };
    assert_eq!(row("chunk:Version"), Some((2820, 25712, 2820)));
    assert_eq!(row("chunk:Data3D"), Some((2820, 25712, 7602816)));
    assert_eq!(row("chunk:SubChunkPrefix"), Some((26511, 267598, 77707037)));
    assert_eq!(row("~local_player"), Some((1, 13, 7666)));
    assert_eq!(row("other"), None);
    let s = keys::summarize(open("rbedrock_example1").db()).unwrap();
    assert_eq!(s.by_kind["VILLAGE"].count, 4);
}

#[test]
fn level_dat_fields() {
    if common::skip_without_worlds("level_dat_fields") {
        return;
    }
    let dat = open("amulet_1_18_vanilla").level_dat().unwrap().unwrap();
    assert_eq!(dat.storage_version, 8);
    assert_eq!(dat.name.as_deref(), Some("1.18.0"));
    assert_eq!(dat.game_version.as_deref(), Some("1.18.0.25.0"));
    assert_eq!(dat.seed, Some(2221503403));
    assert_eq!(dat.spawn, Some((0, 32767, 0)));
    assert_eq!(dat.game_mode, Some(1));

    let dat = open("mcpe_0_11_mcedit_testdb")
        .level_dat()
        .unwrap()
        .unwrap();
    assert_eq!(dat.storage_version, 4);
    assert_eq!(
        dat.name.as_deref(),
        Some("*Witch Boss Fight* - By SerperiorCraft")
    );
    assert_eq!(dat.game_version, None);
    assert_eq!(dat.seed, Some(1064409167));
    assert_eq!(dat.spawn, Some((33, 55, 182)));
    assert_eq!(dat.game_mode, Some(0));

    let dat = open("rbedrock_example3").level_dat().unwrap().unwrap();
    assert_eq!(dat.storage_version, 10);
    assert_eq!(dat.name.as_deref(), Some("Example 3 World"));
    assert_eq!(dat.game_version.as_deref(), Some("1.19.70.2.0"));
    assert_eq!(dat.seed, Some(-6391273322831028377));
    assert_eq!(dat.spawn, Some((-24, 32767, -20)));

    assert!(open("minet_testworld").level_dat().unwrap().is_none());
}

#[test]
fn maps_of_data3d_data2d_and_legacy_terrain_worlds() {
    if common::skip_without_worlds("maps_of_data3d_data2d_and_legacy_terrain_worlds") {
        return;
    }
    // (world, chunks, scale, opaque pixels)
    let cases = [
        // Data3D and Data2D: every column of every chunk is drawn.
        ("amulet_1_18_vanilla", 2737, 4, 2737 * 16),
        ("amulet_1_16", 436, 16, 436 * 256),
        // LegacyTerrain: only columns holding a block (15,657 of 65,536).
        ("mcpe_0_11_mcedit_testdb", 256, 16, 15_657),
    ];
    for (name, chunks, scale, opaque) in cases {
        let world = open(name);
        let options = MapOptions {
            pixels_per_chunk: scale,
            ..MapOptions::default()
        };
        let image = render_map(world.db(), &options).unwrap();
        assert_eq!(image.chunks_indexed, chunks, "{name}");
        assert_eq!(image.chunks_drawn, chunks, "{name}");
        assert_eq!(
            image.chunks_failed + image.chunks_without_surface,
            0,
            "{name}"
        );
        assert_eq!(image.opaque_pixels(), opaque, "{name}");
        let png = image.to_png().unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    }
    let nether = MapOptions {
        dimension: 1,
        pixels_per_chunk: 1,
        ..MapOptions::default()
    };
    let image = render_map(open("amulet_1_18_vanilla").db(), &nether).unwrap();
    assert_eq!((image.chunks_drawn, image.opaque_pixels()), (70, 70));
    assert!(render_map(open("amulet_1_16").db(), &nether).is_err());
    let too_big = MapOptions {
        max_pixels: 1000,
        ..MapOptions::default()
    };
    assert!(render_map(open("amulet_1_16").db(), &too_big).is_err());
}

#[test]
fn surface_blocks_of_a_real_chunk() {
    if common::skip_without_worlds("surface_blocks_of_a_real_chunk") {
        return;
    }
    let world = open("amulet_1_18_vanilla");
    let tops = surface_blocks(world.db(), 0, 0, 0).unwrap();
    assert!(tops.iter().all(Option::is_some));
    let tile = surface_tile(world.db(), 0, 0, 0).unwrap().unwrap();
    assert_eq!(tile.len(), 1024);
    assert!(tile.chunks_exact(4).all(|p| p[3] == 255));
    assert_eq!(surface_tile(world.db(), 0, 100_000, 0).unwrap(), None);
}

// ---- .mcworld ----

fn mcworld_bytes(name: &str) -> Vec<u8> {
    std::fs::read(worlds_dir().join(format!("{name}.mcworld"))).unwrap()
}

#[test]
fn every_mcworld_imports_into_memory_and_scans_to_the_manifest() {
    if common::skip_without_worlds("every_mcworld_imports_into_memory_and_scans_to_the_manifest") {
        return;
    }
    let mut seen = 0;
    for w in worlds() {
        let path = worlds_dir().join(format!("{}.mcworld", w.name));
        if !path.is_file() {
            continue;
        }
        seen += 1;
        let mem = Arc::new(MemStorage::new());
        let report = import(&mcworld_bytes(&w.name), &*mem, "w", ImportLimits::default()).unwrap();
        assert_eq!(report.root_in_zip, "", "{}", w.name);
        let world = World::open(mem.clone(), "w").unwrap();
        assert_eq!(scan(world.db()), w.expected, "{}", w.name);
        let on_disk = open(&w.name).level_dat().unwrap().map(|d| d.name);
        assert_eq!(
            world.level_dat().unwrap().map(|d| d.name),
            on_disk,
            "{}",
            w.name
        );
    }
    assert_eq!(seen, 4);
}

fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(1));
    for (name, data) in entries {
        w.start_file(*name, options).unwrap();
        w.write_all(data).unwrap();
    }
    w.finish().unwrap().into_inner()
}

#[test]
fn nested_world_folder_is_found() {
    if common::skip_without_worlds("nested_world_folder_is_found") {
        return;
    }
    let mut src =
        zip::ZipArchive::new(std::io::Cursor::new(mcworld_bytes("rbedrock_example3"))).unwrap();
    let mut entries = Vec::new();
    for i in 0..src.len() {
        let mut f = src.by_index(i).unwrap();
        if f.is_dir() {
            continue;
        }
        let mut data = Vec::new();
        std::io::Read::read_to_end(&mut f, &mut data).unwrap();
        entries.push((format!("My World/{}", f.name().unwrap()), data));
    }
    let refs: Vec<(&str, &[u8])> = entries
        .iter()
        .map(|(n, d)| (n.as_str(), d.as_slice()))
        .collect();
    let zip = zip_of(&refs);
    let mem = Arc::new(MemStorage::new());
    let report = import(&zip, &*mem, "x", ImportLimits::default()).unwrap();
    assert_eq!(report.root_in_zip, "My World");
    let world = World::open(mem, "x").unwrap();
    let expected = worlds()
        .into_iter()
        .find(|w| w.name == "rbedrock_example3")
        .unwrap();
    assert_eq!(scan(world.db()), expected.expected);
}

#[test]
fn hostile_zips_are_refused() {
    if common::skip_without_worlds("hostile_zips_are_refused") {
        return;
    }
    let mem = MemStorage::new();
    let limits = ImportLimits::default();
    let err = |zip: &[u8], limits: ImportLimits| import(zip, &mem, "h", limits).unwrap_err();

    // A path escaping the destination.
    let e = err(&zip_of(&[("level.dat", b"x"), ("../evil", b"x")]), limits);
    assert!(e.message().contains("unsafe entry name \"../evil\""), "{e}");
    let e = err(&zip_of(&[("/abs/level.dat", b"x")]), limits);
    assert!(e.message().contains("unsafe entry name"), "{e}");

    // A truncated archive.
    let real = mcworld_bytes("rbedrock_example1");
    let e = err(&real[..real.len() / 2], limits);
    assert!(e.is_corruption(), "{e}");

    // No world inside.
    let e = err(&zip_of(&[("readme.txt", b"hi")]), limits);
    assert!(e.message().contains("no level.dat"), "{e}");

    // Too many entries (checked from the end record before parsing the directory).
    let names: Vec<String> = (0..12).map(|i| format!("f{i}")).collect();
    let many: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b""[..])).collect();
    let few = ImportLimits {
        max_entries: 10,
        ..limits
    };
    assert!(err(&zip_of(&many), few).message().contains("12 entries"));

    // A bomb: 1 GiB of zeros in one entry (~1 MB compressed at the default level).
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    w.start_file("level.dat", options).unwrap();
    w.write_all(b"x").unwrap();
    w.start_file("db/CURRENT", options).unwrap();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..1024 {
        w.write_all(&zeros).unwrap();
    }
    let bomb = w.finish().unwrap().into_inner();
    assert!(bomb.len() < 2 << 20, "{} bytes", bomb.len());
    let peak = largest_allocation(|| {
        let e = err(&bomb, limits);
        assert!(
            e.message().contains("more than 200× its compressed size"),
            "{e}"
        );
    });
    assert!(peak < 4 << 20, "largest allocation {peak}");
    // Without the ratio limit, the per-entry and total limits stop it.
    let no_ratio = ImportLimits {
        max_ratio: u64::MAX,
        max_entry_bytes: 64 << 20,
        ..limits
    };
    assert!(err(&bomb, no_ratio)
        .message()
        .contains("inflates past 67108864 bytes"));
    let total = ImportLimits {
        max_ratio: u64::MAX,
        max_total_bytes: 32 << 20,
        ..limits
    };
    assert!(err(&bomb, total)
        .message()
        .contains("the archive inflates past"));
}

// ---- decoders under mutation ----

type Values = Vec<Vec<u8>>;

/// Real values: (NBT: level.dat bodies, player records, block entities; subchunks; Data3D).
fn real_values() -> (Values, Values, Values) {
    let (mut nbts, mut subchunks, mut data3d) = (Vec::new(), Vec::new(), Vec::new());
    for name in ["amulet_1_18_vanilla", "amulet_1_16", "rbedrock_example3"] {
        let world = open(name);
        let dat = std::fs::read(worlds_dir().join(name).join("level.dat")).unwrap();
        nbts.push(dat[8..].to_vec());
        let mut it = world.db().iter(&ReadOptions::default());
        it.seek_to_first();
        let (mut be, mut sc, mut d3) = (0, 0, 0);
        while it.valid() {
            match keys::classify(it.key()) {
                keys::KeyKind::LocalPlayer => nbts.push(it.value().to_vec()),
                keys::KeyKind::Chunk(c) if c.tag == 0x31 && be < 3 => {
                    be += 1;
                    nbts.push(it.value().to_vec());
                }
                keys::KeyKind::Chunk(c) if c.tag == 0x2F && sc < 3 && it.value().len() > 2000 => {
                    sc += 1;
                    subchunks.push(it.value().to_vec());
                }
                keys::KeyKind::Chunk(c) if c.tag == 0x2B && d3 < 2 => {
                    d3 += 1;
                    data3d.push(it.value().to_vec());
                }
                _ => {}
            }
            it.next();
        }
    }
    (nbts, subchunks, data3d)
}

fn mutate(rng: &mut Rng, v: &[u8]) -> Vec<u8> {
    let mut m = v.to_vec();
    for _ in 0..1 + rng.below(3) {
        let at = rng.below(m.len() as u64) as usize;
        match rng.below(5) {
            0 => m[at] ^= 1 << rng.below(8),
            1 => m[at] = [0x00, 0x7F, 0x80, 0xFF][rng.below(4) as usize],
            2 => m.truncate(at),
            3 if at + 4 <= m.len() => {
                m[at..at + 4].copy_from_slice(&[0xFF, 0xFF, 0xFF, 0x7F]);
            }
            _ => {
                let n = rng.below(16) as usize;
                let seg = m[at..(at + n).min(m.len())].to_vec();
                m.splice(at..at, seg);
            }
        }
        if m.is_empty() {
            break;
        }
    }
    m
}

#[test]
fn mutated_values_never_panic_and_allocate_within_a_bound() {
    if common::skip_without_worlds("mutated_values_never_panic_and_allocate_within_a_bound") {
        return;
    }
    let (nbts, subchunks, data3d) = real_values();
    assert!(nbts.len() >= 9 && subchunks.len() == 9 && data3d.len() == 4);
    // The originals decode.
    for v in &nbts {
        nbt::read_all(v).unwrap();
    }
    for v in &subchunks {
        subchunk::decode_subchunk(v).unwrap();
    }
    for v in &data3d {
        chunk::decode_data3d(v).unwrap();
    }
    let mut rng = Rng(0x5EED);
    let (mut runs, mut errors) = (0, 0);
    for _ in 0..400 {
        for (kind, values) in [(0, &nbts), (1, &subchunks), (2, &data3d)] {
            for v in values.iter() {
                let m = mutate(&mut rng, v);
                let mut failed = false;
                let peak = largest_allocation(|| {
                    failed = match kind {
                        0 => nbt::read_all(&m).is_err(),
                        1 => subchunk::decode_subchunk(&m).is_err(),
                        _ => chunk::decode_data3d(&m).is_err(),
                    };
                });
                // Trees cost at most ~40 bytes per input byte; a subchunk adds its 8 KiB of
                // indices and a palette Vec.
                assert!(
                    peak <= 48 * m.len() + 16 * 1024,
                    "kind {kind}: {peak} bytes allocated for a {}-byte value",
                    m.len()
                );
                runs += 1;
                errors += failed as u32;
            }
        }
    }
    assert!(runs >= 8000, "{runs}");
    assert!(errors > runs / 4, "{errors} of {runs} mutations rejected");
}

// ---- synthetic worlds ----

#[test]
fn gen_world_is_deterministic() {
    let params = SynthParams {
        chunks_x: 12,
        chunks_z: 10,
        seed: 42,
    };
    let mut figures = Vec::new();
    for _ in 0..2 {
        let mem = Arc::new(MemStorage::new());
        let report = generate(mem.clone(), "gen", params).unwrap();
        assert_eq!(report.chunks, 120);
        let world = World::open(mem.clone(), "gen").unwrap();
        figures.push((report.entries, scan(world.db())));
        let dat = world.level_dat().unwrap().unwrap();
        assert_eq!((dat.seed, dat.game_mode), (Some(42), Some(1)));
        assert_eq!(keys::chunk_positions(world.db(), 0).unwrap().len(), 120);
        let image = render_map(world.db(), &MapOptions::default()).unwrap();
        assert_eq!(
            (image.chunks_drawn, image.opaque_pixels()),
            (120, 120 * 256)
        );
        // The subchunks' top blocks agree with the Data3D height map.
        let d3 = world
            .db()
            .get(
                &ReadOptions::default(),
                &keys::chunk_key(0, 0, 0, keys::TAG_DATA3D, None),
            )
            .unwrap()
            .unwrap();
        let surface = chunk::decode_data3d(&d3).unwrap();
        let tops = surface_blocks(world.db(), 0, 0, 0).unwrap();
        for (i, top) in tops.iter().enumerate() {
            assert_eq!(
                top.as_ref().unwrap().0,
                surface.heights[i] as i32 - 65,
                "column {i}"
            );
        }
        // A second generation into the same place is refused.
        assert!(generate(mem, "gen", params).is_err());
    }
    assert_eq!(figures[0], figures[1]);
    let (entries, stats) = figures[0];
    assert_eq!(entries, stats.entries);
    assert_eq!(
        stats,
        ScanStats {
            entries: 487,
            key_bytes: 4762,
            value_bytes: 441374,
            crc32c: 3516745584
        }
    );
}

#[test]
fn gen_world_uses_the_bedrock_profile_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("w");
    let report = generate(
        Arc::new(FsStorage::new()),
        root.to_str().unwrap(),
        SynthParams::default(),
    )
    .unwrap();
    let db = Db::open_path(
        root.join("db").to_str().unwrap(),
        Options::default().read_only(),
    )
    .unwrap();
    assert_eq!(scan(&db).entries, report.entries);
    let ids: BTreeSet<u8> = db
        .version()
        .files
        .iter()
        .flatten()
        .flat_map(|f| db.table_stats(f).unwrap().compression_ids.into_keys())
        .collect();
    assert_eq!(ids, BTreeSet::from([4]));
    assert_eq!(
        std::fs::read(root.join("levelname.txt")).unwrap(),
        b"Strata synthetic"
    );
}

// ---- CLI ----

fn strata(args: &[&str]) -> (bool, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn cli_world_commands() {
    if common::skip_without_worlds("cli_world_commands") {
        return;
    }
    let w = worlds_dir();
    let path = |n: &str| w.join(n).to_string_lossy().into_owned();
    assert_eq!(
        strata(&["world", "chunks", &path("amulet_1_16")]),
        (true, "436\n".into())
    );
    assert_eq!(
        strata(&[
            "world",
            "chunks",
            &path("amulet_1_18_vanilla"),
            "--dimension",
            "2"
        ]),
        (true, "13\n".into())
    );
    assert_eq!(
        strata(&["world", "chunks", &path("rbedrock_example1.mcworld")]),
        (true, "105\n".into())
    );
    let (ok, info) = strata(&["world", "info", &path("rbedrock_example2_2025")]);
    assert!(ok);
    assert!(info.contains("name          Example 2\n"), "{info}");
    let total: Vec<&str> = info
        .lines()
        .find(|l| l.starts_with("total "))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(total, ["total", "1141", "11660", "2145162"]);
    assert!(info.contains("chunks overworld  56\n"), "{info}");

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("g");
    let out = out.to_str().unwrap();
    let (ok, text) = strata(&[
        "gen-world",
        out,
        "--chunks-x",
        "5",
        "--chunks-z",
        "3",
        "--seed",
        "9",
    ]);
    assert!(ok, "{text}");
    assert_eq!(strata(&["world", "chunks", out]), (true, "15\n".into()));
    let png = dir.path().join("m.png");
    let (ok, text) = strata(&["world", "map", out, "--out", png.to_str().unwrap()]);
    assert!(ok, "{text}");
    assert!(
        text.contains("80×48 px, 15 chunks indexed, 15 drawn"),
        "{text}"
    );
    assert_eq!(&std::fs::read(&png).unwrap()[..4], b"\x89PNG");
    assert!(!strata(&["world", "chunks", out, "--dimension", "5"]).0);
}
