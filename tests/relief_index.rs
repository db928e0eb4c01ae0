//! The chunk index with relief samples (`bedrock::relief_index`) against the plain paths it
//! stands in for: its chunks equal `keys::chunk_positions`, and every map drawn with its
//! samples — relief, slime, height and biome layers, 1, 2 and 4 pixels per chunk, far out,
//! whole and in bands of rows — is byte for byte the map drawn by reading each chunk, with the
//! same figures (drawn, failed and named, without surface, slime, the biome legend's counts,
//! the height range). On every shared world and dimension, a
//! generated world, and a world with a damaged Data3D record and a chunk whose surface record
//! comes without its Version record.

mod common;

use std::sync::Arc;

use strata::bedrock::keys::{self, chunk_key, TAG_DATA3D, TAG_VERSION};
use strata::bedrock::map::{render_map, MapImage, MapLayer, MapOptions};
use strata::bedrock::relief_index::{
    chunk_split_keys, relief_index, ReliefIndex, ReliefPass, ReliefSample,
};
use strata::bedrock::synth::{generate, SynthParams};
use strata::bedrock::World;
use strata::db::WriteBatch;
use strata::{Db, FsStorage, MemStorage, Options, WriteOptions};

/// Every figure of an image, pixels included.
fn figures(m: &MapImage) -> String {
    format!(
        "{}x{} at {:?} ppc {} cpp {} indexed {} drawn {} failed {} {:?} without {} slime {} sampled-out {} biomes {:?} heights {:?} rgba crc {:08x}",
        m.width,
        m.height,
        m.min_chunk,
        m.pixels_per_chunk,
        m.chunks_per_pixel,
        m.chunks_indexed,
        m.chunks_drawn,
        m.chunks_failed,
        m.failed_chunks,
        m.chunks_without_surface,
        m.slime_chunks,
        m.chunks_sampled_out,
        m.biomes,
        m.height_range,
        crc32c::crc32c(&m.rgba)
    )
}

/// Checks one database's dimension; returns (chunks, chunks with samples, maps compared).
fn check(db: &Db, dimension: i32, what: &str) -> (usize, usize, usize) {
    let index = Arc::new(relief_index(db, dimension).unwrap());
    let chunks = keys::chunk_positions(db, dimension).unwrap();
    assert_eq!(index.chunks, chunks, "{what} dimension {dimension}");
    assert_eq!(index.sequence, db.last_sequence());
    // The same pass in steps (wasm's, between which decode workers hand blocks back): the
    // same index, whether a step passes one entry or many.
    for step in [1, 100_000] {
        let mut pass = ReliefPass::new(db, dimension);
        let mut steps = 1;
        while !pass.step(step).unwrap() {
            steps += 1;
        }
        let stepped = pass.finish();
        assert_eq!(
            (&stepped.chunks, stepped.pack()),
            (&index.chunks, index.pack()),
            "{what} {step}"
        );
        assert!(
            step > 1 || steps as usize >= chunks.len(),
            "{what}: {steps} steps"
        );
    }
    // Shared between engines: passes over the ranges between split keys, packed and joined,
    // give the whole pass's index, byte for byte, however many parts and in whatever order.
    for parts in [2, 3, 8] {
        let keys = chunk_split_keys(db, parts, 0);
        assert!(keys.len() < parts && keys.windows(2).all(|k| k[0] < k[1]));
        joined_parts(db, dimension, &keys, &index, what);
    }
    // Any 8-byte keys at all (each chunk's records stay on one side): a cut at every 7th
    // chunk's own prefix, so ranges start exactly at a chunk's first key.
    let cuts: Vec<[u8; 8]> = chunks
        .iter()
        .step_by(7)
        .skip(1)
        .map(|&(x, z)| {
            let mut k = [0u8; 8];
            k[..4].copy_from_slice(&x.to_le_bytes());
            k[4..].copy_from_slice(&z.to_le_bytes());
            k
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    joined_parts(db, dimension, &cuts, &index, what);
    if chunks.is_empty() {
        return (0, 0, 0);
    }
    let z0 = chunks.iter().map(|c| c.1).min().unwrap();
    let z1 = chunks.iter().map(|c| c.1).max().unwrap();
    let x0 = chunks.iter().map(|c| c.0).min().unwrap();
    let x1 = chunks.iter().map(|c| c.0).max().unwrap();
    let mut maps = 0;
    for layer in [
        MapLayer::Relief,
        MapLayer::Slime,
        MapLayer::Height,
        MapLayer::Biome,
    ] {
        for (ppc, cpp) in [(1, 1), (2, 1), (4, 1), (1, 2), (1, 8)] {
            // The whole map, then (at 1 chunk per pixel) a band of rows in the middle.
            let mut regions = vec![None];
            if cpp == 1 {
                let mid = z0 + (z1 - z0) / 2;
                regions.push(Some((x0, mid, x1, (mid + 2).min(z1))));
            }
            for region in regions {
                let options = MapOptions {
                    dimension,
                    layer,
                    pixels_per_chunk: ppc,
                    chunks_per_pixel: cpp,
                    region,
                    chunks: Some(chunks.clone()),
                    ..MapOptions::default()
                };
                let read = render_map(db, &options);
                let sampled = render_map(
                    db,
                    &MapOptions {
                        relief: Some(index.clone()),
                        ..options.clone()
                    },
                );
                match (read, sampled) {
                    (Ok(a), Ok(b)) => assert_eq!(
                        figures(&a),
                        figures(&b),
                        "{what} dimension {dimension} {layer:?} ppc {ppc} cpp {cpp} {region:?}"
                    ),
                    (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                    (a, b) => panic!(
                        "{what}: {:?} against {:?}",
                        a.map(|m| figures(&m)),
                        b.map(|m| figures(&m))
                    ),
                }
                maps += 1;
            }
        }
    }
    (chunks.len(), index.sampled(), maps)
}

/// A chunk, with its samples and whether they come from a Data3D record.
type Sampled = ((i32, i32), Option<(Vec<ReliefSample>, bool)>);

/// Every chunk of an index with its samples and their source, in chunk order.
fn sampled_chunks(index: &ReliefIndex) -> Vec<Sampled> {
    index
        .chunks
        .iter()
        .map(|&(x, z)| {
            (
                (x, z),
                index.chunk(x, z).map(|c| (c.columns.to_vec(), c.data3d)),
            )
        })
        .collect()
}

/// Passes over the ranges `keys` cut (ascending), each packed. Laid end to end in key order
/// and joined, they are `whole` byte for byte (samples in the order met, as one pass keeps
/// them); in reverse order, the same chunks and samples.
fn joined_parts(db: &Db, dimension: i32, keys: &[[u8; 8]], whole: &ReliefIndex, what: &str) {
    let mut bounds: Vec<Option<Vec<u8>>> = vec![None];
    bounds.extend(keys.iter().map(|k| Some(k.to_vec())));
    bounds.push(None);
    let parts: Vec<Vec<u8>> = bounds
        .windows(2)
        .map(|r| {
            let mut pass = ReliefPass::with_range(db, dimension, r[0].as_deref(), r[1].clone());
            while !pass.step(usize::MAX).unwrap() {}
            pass.finish().pack()
        })
        .collect();
    let what = format!("{what} dimension {dimension}: {} parts", parts.len());
    let joined = ReliefIndex::unpack_parts(&parts.concat(), dimension, 5).unwrap();
    assert_eq!(joined.sequence, 5);
    assert_eq!(joined.chunks, whole.chunks, "{what}");
    assert!(joined.pack() == whole.pack(), "{what}");
    let reversed: Vec<Vec<u8>> = parts.into_iter().rev().collect();
    let joined = ReliefIndex::unpack_parts(&reversed.concat(), dimension, 5).unwrap();
    assert!(
        sampled_chunks(&joined) == sampled_chunks(whole),
        "{what}, reversed"
    );
}

#[test]
fn samples_draw_what_reads_draw_on_every_shared_world() {
    if common::skip_without_worlds("samples_draw_what_reads_draw_on_every_shared_world") {
        return;
    }
    let (mut chunks, mut sampled, mut maps) = (0, 0, 0);
    // Worlds whose tables the split keys cut (the others: data in the log only, or one prefix).
    let mut cut = Vec::new();
    for w in common::worlds() {
        let path = common::worlds_dir().join(&w.name);
        let world = World::open(Arc::new(FsStorage::new()), path.to_str().unwrap()).unwrap();
        for dimension in 0..3 {
            let (c, s, m) = check(world.db(), dimension, &w.name);
            (chunks, sampled, maps) = (chunks + c, sampled + s, maps + m);
        }
        let keys = chunk_split_keys(world.db(), 8, 0);
        if !keys.is_empty() {
            cut.push(format!("{} {}", w.name, keys.len()));
        }
    }
    println!("relief samples: {sampled} of {chunks} chunks sampled; {maps} maps equal; split keys (8 parts): {cut:?}");
    // Every world with tables is cut in 8 (7 keys); the four whose data are all in the log
    // (no table) are not.
    assert_eq!(cut.len(), 12, "{cut:?}");
    assert!(cut.iter().all(|c| c.ends_with(" 7")), "{cut:?}");
    // The shared worlds' chunks with a Data3D, Data2D or Data2DLegacy record (the rest are
    // LegacyTerrain): both kinds are there, so both paths were compared.
    assert!(sampled > 1000 && sampled < chunks, "{sampled} of {chunks}");
}

#[test]
fn samples_draw_what_reads_draw_on_a_generated_world() {
    let mem = Arc::new(MemStorage::new());
    generate(
        mem.clone(),
        "gen",
        SynthParams {
            chunks_x: 40,
            chunks_z: 30,
            seed: 9,
        },
    )
    .unwrap();
    let world = World::open(mem, "gen").unwrap();
    assert_eq!(check(world.db(), 0, "generated"), (1200, 1200, 32));
}

#[test]
fn a_damaged_record_and_a_surface_without_version() {
    let mem = Arc::new(MemStorage::new());
    generate(
        mem.clone(),
        "gen",
        SynthParams {
            chunks_x: 6,
            chunks_z: 5,
            seed: 3,
        },
    )
    .unwrap();
    let listed = keys::chunk_positions(World::open(mem.clone(), "gen").unwrap().db(), 0).unwrap();
    assert_eq!(listed.len(), 30);
    let ((dx, dz), (vx, vz)) = (listed[7], listed[12]);
    {
        let db = Db::open(mem.clone(), "gen/db", Options::bedrock()).unwrap();
        let mut batch = WriteBatch::new();
        // One chunk's Data3D is cut short: the map names it as failed, with or without samples.
        batch.put(&chunk_key(dx, dz, 0, TAG_DATA3D, None), &[1, 2, 3]);
        // A Data3D record with no Version record: not a chunk of the index.
        let data3d = db
            .get(
                &Default::default(),
                &chunk_key(listed[0].0, listed[0].1, 0, TAG_DATA3D, None),
            )
            .unwrap()
            .unwrap();
        batch.put(&chunk_key(4000, 4000, 0, TAG_DATA3D, None), &data3d);
        // Another chunk loses its Version record: not indexed either.
        batch.delete(&chunk_key(vx, vz, 0, TAG_VERSION, None));
        db.write(&WriteOptions::default(), batch).unwrap();
        db.close().unwrap();
    }
    let world = World::open(mem, "gen").unwrap();
    // 30 chunks, one without its Version record; the damaged one has no samples.
    assert_eq!(check(world.db(), 0, "damaged"), (29, 28, 32));
    let image = render_map(
        world.db(),
        &MapOptions {
            pixels_per_chunk: 4,
            relief: Some(Arc::new(relief_index(world.db(), 0).unwrap())),
            ..MapOptions::default()
        },
    )
    .unwrap();
    assert_eq!(
        (
            image.chunks_drawn,
            image.chunks_failed,
            image.failed_chunks.len()
        ),
        (28, 1, 1)
    );
    assert_eq!(
        (image.failed_chunks[0].0, image.failed_chunks[0].1),
        (dx, dz)
    );
}

#[test]
fn split_keys_share_the_pass_evenly_and_a_cut_inside_a_chunk_keeps_it() {
    let mem = Arc::new(MemStorage::new());
    generate(
        mem.clone(),
        "gen",
        SynthParams {
            chunks_x: 60,
            chunks_z: 60,
            seed: 4,
        },
    )
    .unwrap();
    // The world copied into a database of small tables (32 KiB), as a large world's are
    // small against the whole (2 MiB of hundreds): each holds a narrow range of keys.
    let world = World::open(mem.clone(), "gen").unwrap();
    let mut options = Options::bedrock().create();
    options.max_file_size = 32 << 10;
    options.write_buffer_size = 256 << 10;
    let db = Db::open(mem, "small-tables", options).unwrap();
    let mut it = world.db().iter(&Default::default());
    it.seek_to_first();
    let mut batch = WriteBatch::new();
    while it.valid() {
        batch.put(it.key(), it.value());
        if batch.count() == 1000 {
            db.write(&WriteOptions::default(), std::mem::take(&mut batch))
                .unwrap();
        }
        it.next();
    }
    db.write(&WriteOptions::default(), batch).unwrap();
    db.compact_range(None, None).unwrap();
    let tables: usize = db.version().files.iter().map(|l| l.len()).sum();
    assert!(tables >= 10, "{tables} tables");
    let db = &db;
    let whole = relief_index(db, 0).unwrap();
    assert_eq!((whole.chunks.len(), whole.sampled()), (3600, 3600));
    // Nothing to share: one part, or tables below the bytes asked for.
    assert!(chunk_split_keys(db, 1, 0).is_empty());
    assert!(chunk_split_keys(db, 4, u64::MAX).is_empty());
    // Four parts: three cuts, each part's chunks within 40% of a quarter (the estimate reads
    // no table), all of them the whole's.
    let keys = chunk_split_keys(db, 4, 0);
    assert_eq!(keys.len(), 3);
    let mut bounds: Vec<Option<Vec<u8>>> = vec![None];
    bounds.extend(keys.iter().map(|k| Some(k.to_vec())));
    bounds.push(None);
    let mut counts = Vec::new();
    for r in bounds.windows(2) {
        let mut pass = ReliefPass::with_range(db, 0, r[0].as_deref(), r[1].clone());
        while !pass.step(usize::MAX).unwrap() {}
        counts.push(pass.finish().chunks.len());
    }
    assert_eq!(counts.iter().sum::<usize>(), 3600, "{counts:?}");
    assert!(
        counts.iter().all(|&c| (540..=1260).contains(&c)),
        "{counts:?}"
    );
    // A cut between one chunk's Data3D and Version records (not a chunk-safe key): the chunk
    // is still listed once, without samples (the map reads it); every other chunk keeps its.
    let (x, z) = whole.chunks[1800];
    let cut = chunk_key(x, z, 0, TAG_VERSION, None);
    let mut packed = Vec::new();
    for (start, end) in [(None, Some(cut.clone())), (Some(cut.clone()), None)] {
        let mut pass = ReliefPass::with_range(db, 0, start.as_deref(), end);
        while !pass.step(usize::MAX).unwrap() {}
        packed.extend_from_slice(&pass.finish().pack());
    }
    let joined = ReliefIndex::unpack_parts(&packed, 0, 0).unwrap();
    assert_eq!(joined.chunks, whole.chunks);
    assert_eq!((joined.sampled(), joined.samples(x, z)), (3599, None));
    assert!(whole.samples(x, z).is_some());
    // Parts of another dimension, none at all, or a damaged part: errors.
    assert!(ReliefIndex::unpack_parts(&packed, 1, 0).is_err());
    assert!(ReliefIndex::unpack_parts(&[], 0, 0).is_err());
    assert!(ReliefIndex::unpack_parts(&packed[..packed.len() - 1], 0, 0).is_err());
}
