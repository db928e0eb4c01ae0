//! The map's layers against independent checks: Bedrock's slime-chunk rule against numpy's
//! MT19937 (PyPI numpy, which amulet-nbt brings; `RandomState(seed)` seeds with init_genrand,
//! the rule's generator), the slime count of a real world's chunks, and each layer's
//! invariants on a real world (the biome layer's column counts add up to its drawn pixels,
//! every cave column is at or below the slice, the height range lies inside the dimension).

mod common;

use std::process::Command;
use std::sync::Arc;

use strata::bedrock::map::{height_colour, render_map, top_blocks, MapLayer, MapOptions};
use strata::bedrock::slime::{is_slime_chunk, mt19937_outputs};
use strata::bedrock::{keys, World};
use strata::FsStorage;

/// numpy's verdict for each (x, z): `RandomState((x * 0x1f1f1f1f ^ z) mod 2^32)`'s first raw
/// 32-bit output % 10 == 0.
fn numpy_slime(coords: &[(i32, i32)]) -> Vec<bool> {
    let list: Vec<String> = coords.iter().map(|(x, z)| format!("{x},{z}")).collect();
    let out = Command::new("python3")
        .arg("-c")
        .arg(
            "import sys, numpy as np\n\
             out = []\n\
             for p in sys.stdin.read().split():\n\
             \x20   x, z = map(int, p.split(','))\n\
             \x20   seed = ((x * 0x1f1f1f1f) & 0xffffffff) ^ (z & 0xffffffff)\n\
             \x20   v = int(np.random.RandomState(seed).randint(0, 2**32, dtype=np.uint32))\n\
             \x20   out.append('1' if v % 10 == 0 else '0')\n\
             print(''.join(out))",
        )
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(list.join(" ").as_bytes())?;
            child.wait_with_output()
        })
        .expect("python3 with numpy (scripts/setup.sh installs amulet-nbt, which needs numpy)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .trim()
        .chars()
        .map(|c| c == '1')
        .collect()
}

#[test]
fn mt19937_reference_outputs() {
    // The first three outputs of std::mt19937's default seed, as C++ and numpy give them.
    assert_eq!(
        mt19937_outputs(5489, 3),
        vec![3_499_211_612, 581_869_302, 3_890_346_734]
    );
}

#[test]
fn slime_chunks_match_numpy() {
    let mut coords: Vec<(i32, i32)> = (-30..30)
        .flat_map(|x| (-30..30).map(move |z| (x, z)))
        .collect();
    // Far chunks and the extremes of i32 (wrapping multiplication).
    coords.extend([
        (1_875_000, -1_875_000),
        (-1_875_000, 1_875_000),
        (i32::MAX, i32::MIN),
        (i32::MIN, i32::MAX),
        (123_456, 654_321),
    ]);
    let ours: Vec<bool> = coords.iter().map(|&(x, z)| is_slime_chunk(x, z)).collect();
    let theirs = numpy_slime(&coords);
    assert_eq!(ours.len(), theirs.len());
    let differing: Vec<_> = coords
        .iter()
        .zip(ours.iter().zip(&theirs))
        .filter(|(_, (a, b))| a != b)
        .map(|(c, _)| *c)
        .collect();
    assert_eq!(differing, vec![]);
    // 3,600 chunks around the origin: the count numpy gives (382, about a tenth).
    assert_eq!(
        ours[..3600].iter().filter(|&&s| s).count(),
        theirs[..3600].iter().filter(|&&s| s).count()
    );
    assert_eq!(ours[..3600].iter().filter(|&&s| s).count(), 382);
}

fn open(name: &str) -> World {
    let path = common::worlds_dir().join(name);
    World::open(Arc::new(FsStorage::new()), path.to_str().unwrap()).unwrap()
}

#[test]
fn layers_of_a_real_world() {
    if common::skip_without_worlds("layers_of_a_real_world") {
        return;
    }
    let world = open("amulet_1_18_vanilla");
    let db = world.db();
    let chunks = keys::chunk_positions(db, 0).unwrap();
    let slime_by_numpy = numpy_slime(&chunks).iter().filter(|&&s| s).count() as u64;
    let render = |layer| {
        render_map(
            db,
            &MapOptions {
                dimension: 0,
                layer,
                pixels_per_chunk: 4,
                ..MapOptions::default()
            },
        )
        .unwrap()
    };

    let relief = render(MapLayer::Relief);
    assert_eq!((relief.chunks_indexed, relief.chunks_drawn), (2737, 2737));
    assert_eq!(relief.slime_chunks, slime_by_numpy);
    assert_eq!(relief.slime_chunks, 297);

    // Slime: only the slime chunks' pixels differ from relief.
    let slime = render(MapLayer::Slime);
    let (x0, z0) = slime.min_chunk;
    let mut tinted = std::collections::BTreeSet::new();
    for (i, (a, b)) in relief
        .rgba
        .chunks_exact(4)
        .zip(slime.rgba.chunks_exact(4))
        .enumerate()
    {
        if a != b {
            let (px, pz) = ((i as u32 % slime.width) / 4, (i as u32 / slime.width) / 4);
            tinted.insert((x0 + px as i32, z0 + pz as i32));
        }
    }
    assert!(tinted.iter().all(|&(x, z)| is_slime_chunk(x, z)));
    assert_eq!(tinted.len() as u64, 297);

    // Biome: the columns counted per biome are exactly the drawn pixels (every chunk has Data3D).
    let biome = render(MapLayer::Biome);
    assert_eq!(
        biome.biomes.iter().map(|b| b.1).sum::<u64>(),
        biome.opaque_pixels()
    );
    assert_eq!(biome.opaque_pixels(), 2737 * 16);
    assert!(biome.biomes.windows(2).all(|w| w[0].1 >= w[1].1));

    // Height: the range lies inside the Overworld, and each pixel is the ramp's colour.
    let height = render(MapLayer::Height);
    let (lo, hi) = height.height_range.unwrap();
    assert!(-64 <= lo && lo < hi && hi < 320, "{lo}..{hi}");
    assert_eq!(height_colour(-64), [20, 24, 110]);
    assert_eq!(height_colour(320), [255, 255, 255]);

    // Cave at y 20: every column's block is at or below 20, and the map draws what top_blocks
    // finds for a chunk.
    let cave = render(MapLayer::Cave(20));
    assert_eq!(
        cave.chunks_drawn + cave.chunks_without_surface + cave.chunks_failed,
        2737
    );
    for &(x, z) in chunks.iter().take(200) {
        for top in top_blocks(db, 0, x, z, Some(20))
            .unwrap()
            .into_iter()
            .flatten()
        {
            assert!(top.0 <= 20, "chunk ({x}, {z}): block at y {}", top.0);
        }
    }
    // Surface: real blocks differ from relief's biome colours.
    let surface = render(MapLayer::Surface);
    assert_eq!(surface.chunks_drawn, 2737);
    assert_ne!(surface.rgba, relief.rgba);
    assert_eq!(
        MapLayer::parse("cave", None).unwrap_err().to_string(),
        "Invalid argument: the cave layer needs a y level"
    );
    assert!(MapLayer::parse("caves", Some(1)).is_err());
}

/// A world with one chunk visited a million blocks away: no pixel per chunk fits, so a pixel
/// covers several chunks; every chunk is accounted for (drawn, sampled out, or without surface).
#[test]
fn far_flung_chunks_draw_with_several_chunks_per_pixel() {
    if common::skip_without_worlds("far_flung_chunks_draw_with_several_chunks_per_pixel") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("w");
    common::copy_dir(&common::worlds_dir().join("amulet_1_16"), &root);
    common::copy_dir(
        &common::worlds_dir().join("amulet_1_16").join("db"),
        &root.join("db"),
    );
    {
        let db = strata::Db::open_path(
            root.join("db").to_str().unwrap(),
            strata::Options::bedrock(),
        )
        .unwrap();
        // Version records (tag 0x2C) of chunks (62500, -62500) and (-62500, 62500): a
        // million blocks out.
        for (x, z) in [(62_500i32, -62_500i32), (-62_500, 62_500)] {
            let mut key = x.to_le_bytes().to_vec();
            key.extend_from_slice(&z.to_le_bytes());
            key.push(0x2C);
            db.put(&strata::WriteOptions::default(), &key, &[40])
                .unwrap();
        }
        db.close().unwrap();
    }
    let world = World::open(Arc::new(FsStorage::new()), root.to_str().unwrap()).unwrap();
    let db = world.db();
    let n = keys::chunk_positions(db, 0).unwrap().len() as u64;
    let opts = |cpp| MapOptions {
        dimension: 0,
        pixels_per_chunk: 1,
        chunks_per_pixel: cpp,
        max_pixels: 4 << 20,
        ..MapOptions::default()
    };
    let err = render_map(db, &opts(1)).unwrap_err();
    assert!(
        err.to_string().contains("125001×125001 map exceeds"),
        "{err}"
    );
    let image = render_map(db, &opts(64)).unwrap();
    assert_eq!((image.width, image.height), (1954, 1954)); // ceil(125,001 / 64)
    assert_eq!(image.chunks_indexed, n);
    assert_eq!(
        image.chunks_drawn
            + image.chunks_sampled_out
            + image.chunks_without_surface
            + image.chunks_failed,
        n
    );
    assert_eq!(image.chunks_without_surface, 2); // the two far chunks have no surface record
    assert!(image.chunks_drawn >= 1 && image.opaque_pixels() == image.chunks_drawn);
    assert!(render_map(db, &opts(3)).is_err());
    assert!(render_map(
        db,
        &MapOptions {
            pixels_per_chunk: 2,
            ..opts(4)
        }
    )
    .is_err());
}

/// The map drawn in bands of chunk rows (`MapOptions::region`, as the viewer draws a large
/// world progressively) stacks into exactly the whole map: every pixel (shading across band
/// edges included), and figures that add up to the whole map's (drawn, failed, without
/// surface, slime chunks, biome columns, height range). Bands of several heights, each layer.
fn assert_bands_stack_into_the_whole_map(db: &strata::Db, what: &str) {
    let chunks = keys::chunk_positions(db, 0).unwrap();
    let layers = [
        MapLayer::Relief,
        MapLayer::Surface,
        MapLayer::Height,
        MapLayer::Biome,
        MapLayer::Slime,
        MapLayer::parse("cave", Some(-20)).unwrap(),
    ];
    for layer in layers {
        for (ppc, rows) in [(4u32, 7i32), (1, 1), (2, 64)] {
            let whole = render_map(
                db,
                &MapOptions {
                    layer,
                    pixels_per_chunk: ppc,
                    ..MapOptions::default()
                },
            )
            .unwrap();
            let (x0, z0) = whole.min_chunk;
            let x1 = x0 + (whole.width / ppc) as i32 - 1;
            let z1 = z0 + (whole.height / ppc) as i32 - 1;
            let mut rgba = Vec::new();
            let (mut drawn, mut failed, mut without, mut slime, mut indexed) = (0, 0, 0, 0, 0);
            let mut biomes = std::collections::BTreeMap::<u32, u64>::new();
            let mut range: Option<(i32, i32)> = None;
            let mut z = z0;
            while z <= z1 {
                let zb = (z + rows - 1).min(z1);
                let band = render_map(
                    db,
                    &MapOptions {
                        layer,
                        pixels_per_chunk: ppc,
                        region: Some((x0, z, x1, zb)),
                        chunks: Some(chunks.clone()),
                        ..MapOptions::default()
                    },
                )
                .unwrap();
                assert_eq!(band.min_chunk, (x0, z), "{what} {layer:?}");
                assert_eq!(
                    (band.width, band.height),
                    (whole.width, (zb - z + 1) as u32 * ppc),
                    "{what} {layer:?}"
                );
                rgba.extend_from_slice(&band.rgba);
                drawn += band.chunks_drawn;
                failed += band.chunks_failed;
                without += band.chunks_without_surface;
                slime += band.slime_chunks;
                indexed += band.chunks_indexed;
                for (id, n) in band.biomes {
                    *biomes.entry(id).or_default() += n;
                }
                if let Some((lo, hi)) = band.height_range {
                    range = Some(range.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
                }
                z = zb + 1;
            }
            let label = format!("{what} {layer:?} at {ppc} px/chunk in bands of {rows} rows");
            assert!(rgba == whole.rgba, "{label}: pixels differ");
            assert_eq!(
                (drawn, failed, without, slime, indexed),
                (
                    whole.chunks_drawn,
                    whole.chunks_failed,
                    whole.chunks_without_surface,
                    whole.slime_chunks,
                    whole.chunks_indexed
                ),
                "{label}"
            );
            let mut merged: Vec<(u32, u64)> = biomes.into_iter().collect();
            merged.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            assert_eq!(merged, whole.biomes, "{label}");
            assert_eq!(range, whole.height_range, "{label}");
        }
    }
    // A region with no chunk is a transparent image of its size; a reversed one is refused,
    // and so is a region with several chunks per pixel.
    let far = render_map(
        db,
        &MapOptions {
            pixels_per_chunk: 2,
            region: Some((100_000, 100_000, 100_002, 100_000)),
            ..MapOptions::default()
        },
    )
    .unwrap();
    assert_eq!(
        (
            far.width,
            far.height,
            far.chunks_indexed,
            far.opaque_pixels()
        ),
        (6, 2, 0, 0)
    );
    for (region, cpp) in [((1, 0, 0, 0), 1), ((0, 1, 0, 0), 1), ((0, 0, 3, 3), 2)] {
        let opts = MapOptions {
            pixels_per_chunk: 1,
            chunks_per_pixel: cpp,
            region: Some(region),
            ..MapOptions::default()
        };
        assert!(
            render_map(db, &opts).is_err(),
            "{what} {region:?} cpp {cpp}"
        );
    }
}

/// A `gen-world` world of `x` × `z` chunks in `dir/w`.
fn synth_world(dir: &std::path::Path, x: u32, z: u32, seed: u64) -> std::path::PathBuf {
    let root = dir.join("w");
    strata::bedrock::synth::generate(
        Arc::new(FsStorage::new()),
        root.to_str().unwrap(),
        strata::bedrock::synth::SynthParams {
            chunks_x: x,
            chunks_z: z,
            seed,
        },
    )
    .unwrap();
    root
}

#[test]
fn bands_stack_into_the_whole_map_synthetic() {
    let tmp = tempfile::tempdir().unwrap();
    let root = synth_world(tmp.path(), 24, 19, 7);
    let world = World::open(Arc::new(FsStorage::new()), root.to_str().unwrap()).unwrap();
    assert_bands_stack_into_the_whole_map(world.db(), "synthetic 24x19");
}

#[test]
fn bands_stack_into_the_whole_map_real_world() {
    if common::skip_without_worlds("bands_stack_into_the_whole_map_real_world") {
        return;
    }
    assert_bands_stack_into_the_whole_map(open("amulet_1_18_vanilla").db(), "amulet_1_18_vanilla");
}

/// Every shared world, every dimension with chunks, every layer: each chunk is drawn, or has
/// no surface record, or is counted as failed; no chunk of these worlds (all opened by the
/// game) fails to decode.
#[test]
fn every_shared_world_every_layer_decodes() {
    if common::skip_without_worlds("every_shared_world_every_layer_decodes") {
        return;
    }
    let layers = [
        MapLayer::Relief,
        MapLayer::Surface,
        MapLayer::Height,
        MapLayer::Biome,
        MapLayer::Slime,
        MapLayer::parse("cave", Some(0)).unwrap(),
    ];
    let mut checked = 0;
    for w in common::worlds() {
        let dir = common::worlds_dir().join(&w.name);
        let world = World::open(Arc::new(FsStorage::new()), dir.to_str().unwrap()).unwrap();
        for dimension in 0..3 {
            let n = keys::chunk_positions(world.db(), dimension).unwrap().len() as u64;
            if n == 0 {
                continue;
            }
            for layer in layers {
                let image = render_map(
                    world.db(),
                    &MapOptions {
                        dimension,
                        layer,
                        pixels_per_chunk: 1,
                        ..MapOptions::default()
                    },
                )
                .unwrap();
                let what = format!("{} dimension {dimension} {layer:?}", w.name);
                assert_eq!(image.chunks_indexed, n, "{what}");
                assert_eq!(
                    image.chunks_drawn + image.chunks_without_surface + image.chunks_failed,
                    n,
                    "{what}"
                );
                assert_eq!(image.chunks_failed, 0, "{what}");
                checked += 1;
            }
        }
    }
    assert!(
        checked >= 15 * 6,
        "{checked} world/dimension/layer maps checked"
    );
}

/// A chunk whose surface record does not decode is counted and named (with why), in the whole
/// map and in the band that holds it; the other chunks are drawn.
#[test]
fn undecodable_chunks_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let root = synth_world(tmp.path(), 8, 8, 3);
    {
        let db = strata::Db::open_path(
            root.join("db").to_str().unwrap(),
            strata::Options::bedrock(),
        )
        .unwrap();
        for (x, z) in [(1, 2), (-3, 0)] {
            let key = keys::chunk_key(x, z, 0, keys::TAG_DATA3D, None);
            db.put(
                &strata::WriteOptions::default(),
                &key,
                b"not a Data3D record",
            )
            .unwrap();
        }
        db.close().unwrap();
    }
    let world = World::open(Arc::new(FsStorage::new()), root.to_str().unwrap()).unwrap();
    let whole = render_map(
        world.db(),
        &MapOptions {
            pixels_per_chunk: 1,
            ..MapOptions::default()
        },
    )
    .unwrap();
    assert_eq!((whole.chunks_drawn, whole.chunks_failed), (62, 2));
    let mut named: Vec<(i32, i32)> = whole.failed_chunks.iter().map(|f| (f.0, f.1)).collect();
    named.sort();
    assert_eq!(named, vec![(-3, 0), (1, 2)]);
    assert!(
        whole.failed_chunks.iter().all(|f| !f.2.is_empty()),
        "{:?}",
        whole.failed_chunks
    );
    // The band of rows 1..=2 holds (1, 2) only; row 0 (north of it) is read, not counted.
    let band = render_map(
        world.db(),
        &MapOptions {
            pixels_per_chunk: 1,
            region: Some((-4, 1, 3, 2)),
            ..MapOptions::default()
        },
    )
    .unwrap();
    assert_eq!((band.chunks_drawn, band.chunks_failed), (15, 1));
    assert_eq!(
        band.failed_chunks
            .iter()
            .map(|f| (f.0, f.1))
            .collect::<Vec<_>>(),
        vec![(1, 2)]
    );
}
