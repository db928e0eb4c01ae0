//! A deterministic synthetic Bedrock world, written by Strata with the Bedrock profile (raw
//! deflate, id 4): `level.dat`, `levelname.txt` and `db/` holding, per chunk, a Version record
//! (chunk version 40), a Data3D record (height map and 24 biome storages from y -64, the first
//! one a palette storage and the rest "same as below") and SubChunkPrefix v9 records for the
//! subchunks spanning the surface; plus players (`~local_player`, `player_server_<uuid>`) and
//! a few global string keys.
//!
//! The same parameters always give the same logical content (keys and values); terrain comes
//! from value noise seeded by `seed`.

use std::sync::Arc;

use super::chunk::encode_data3d;
use super::keys::{chunk_key, TAG_DATA3D, TAG_SUBCHUNK, TAG_VERSION};
use super::level_dat;
use super::nbt::{self, Tag};
use super::subchunk::encode_subchunk_v9;
use crate::db::WriteBatch;
use crate::error::{Error, Result};
use crate::storage::{self, Storage};
use crate::{Db, Options, WriteOptions};

/// What to generate.
#[derive(Clone, Copy, Debug)]
pub struct SynthParams {
    /// Chunks along x and z (centred on chunk 0, 0). Each 1..=1024.
    pub chunks_x: u32,
    pub chunks_z: u32,
    pub seed: u64,
}

impl Default for SynthParams {
    fn default() -> Self {
        SynthParams {
            chunks_x: 16,
            chunks_z: 16,
            seed: 1,
        }
    }
}

const SEA_LEVEL: i32 = 62;
const MIN_Y: i32 = -64;
const CHUNK_VERSION: u8 = 40;
const BIOME_STORAGES: usize = 24;

fn hash(seed: u64, x: i64, z: i64) -> u64 {
    let mut h = seed ^ 0x9E37_79B9_7F4A_7C15;
    for v in [x as u64, z as u64] {
        h ^= v.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h = (h ^ (h >> 31)).wrapping_mul(0x94D0_49BB_1331_11EB);
        h ^= h >> 29;
    }
    h
}

/// Smooth value noise in [0, 1) with cells of `cell` blocks.
fn noise(seed: u64, x: i64, z: i64, cell: i64) -> f64 {
    let (cx, cz) = (x.div_euclid(cell), z.div_euclid(cell));
    let (fx, fz) = (
        x.rem_euclid(cell) as f64 / cell as f64,
        z.rem_euclid(cell) as f64 / cell as f64,
    );
    let v = |dx, dz| (hash(seed, cx + dx, cz + dz) >> 11) as f64 / (1u64 << 53) as f64;
    let s = |t: f64| t * t * (3.0 - 2.0 * t);
    let (sx, sz) = (s(fx), s(fz));
    let top = v(0, 0) + (v(1, 0) - v(0, 0)) * sx;
    let bottom = v(0, 1) + (v(1, 1) - v(0, 1)) * sx;
    top + (bottom - top) * sz
}

/// Terrain height (the y of the top solid block) and biome id of a column.
fn column(seed: u64, x: i64, z: i64) -> (i32, u32) {
    let h = 40.0 + 44.0 * noise(seed, x, z, 64) + 10.0 * noise(seed ^ 1, x, z, 16);
    let h = h as i32;
    let dry = noise(seed ^ 2, x, z, 96);
    let biome = if h < SEA_LEVEL - 1 {
        0 // ocean
    } else if h <= SEA_LEVEL + 1 {
        16 // beach
    } else if h > 86 {
        12 // ice plains
    } else if dry > 0.7 {
        2 // desert
    } else if dry < 0.4 {
        4 // forest
    } else {
        1 // plains
    };
    (h, biome)
}

fn block_at(y: i32, h: i32, biome: u32) -> &'static str {
    let sandy = matches!(biome, 2 | 16);
    if y > h {
        if y <= SEA_LEVEL {
            "minecraft:water"
        } else {
            "minecraft:air"
        }
    } else if y == h {
        match biome {
            0 => "minecraft:gravel",
            12 => "minecraft:snow",
            _ if sandy => "minecraft:sand",
            _ => "minecraft:grass_block",
        }
    } else if y >= h - 3 {
        if sandy {
            "minecraft:sandstone"
        } else {
            "minecraft:dirt"
        }
    } else {
        "minecraft:stone"
    }
}

fn uuid(seed: u64, n: u64) -> String {
    let a = hash(seed, n as i64, 7);
    let b = hash(seed, n as i64, 11);
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xFFFF,
        a & 0xFFF,
        b >> 52,
        b & 0xFFFF_FFFF_FFFF
    )
}

fn player(seed: u64, n: u64) -> Vec<u8> {
    let tag = Tag::Compound(vec![
        (
            "Pos".into(),
            Tag::List(
                nbt::TAG_FLOAT,
                vec![
                    Tag::Float(n as f32 * 3.5),
                    Tag::Float(80.0),
                    Tag::Float(-(n as f32)),
                ],
            ),
        ),
        ("UniqueID".into(), Tag::Long(hash(seed, n as i64, 3) as i64)),
        ("PlayerGameMode".into(), Tag::Int(1)),
        ("DimensionId".into(), Tag::Int(0)),
    ]);
    let mut out = Vec::new();
    nbt::write_root(&mut out, "", &tag);
    out
}

/// One chunk's records.
fn chunk_records(seed: u64, cx: i32, cz: i32, batch: &mut WriteBatch) {
    let mut heights = [0i16; 256];
    let mut biome_idx = vec![0u16; 4096];
    let mut palette: Vec<u32> = Vec::new();
    let mut cols = [(0i32, 0u32); 256];
    for z in 0..16 {
        for x in 0..16 {
            let (h, b) = column(seed, cx as i64 * 16 + x as i64, cz as i64 * 16 + z as i64);
            cols[z * 16 + x] = (h, b);
            let top = h.max(SEA_LEVEL);
            heights[z * 16 + x] = (top + 1 - MIN_Y) as i16;
            let p = match palette.iter().position(|&id| id == b) {
                Some(p) => p,
                None => {
                    palette.push(b);
                    palette.len() - 1
                }
            };
            for y in 0..16 {
                biome_idx[x * 256 + z * 16 + y] = p as u16;
            }
        }
    }
    let mut storages = vec![Some((palette, biome_idx))];
    storages.resize(BIOME_STORAGES, None);
    batch.put(&chunk_key(cx, cz, 0, TAG_VERSION, None), &[CHUNK_VERSION]);
    batch.put(
        &chunk_key(cx, cz, 0, TAG_DATA3D, None),
        &encode_data3d(&heights, &storages),
    );
    let lo = cols.iter().map(|c| c.0.min(SEA_LEVEL)).min().unwrap_or(0) - 3;
    let hi = cols.iter().map(|c| c.0.max(SEA_LEVEL)).max().unwrap_or(0);
    for sy in lo.div_euclid(16)..=hi.div_euclid(16) {
        let mut names: Vec<&str> = Vec::new();
        let mut idx = vec![0u16; 4096];
        for x in 0..16 {
            for z in 0..16 {
                let (h, b) = cols[z * 16 + x];
                for y in 0..16 {
                    let name = block_at(sy * 16 + y as i32, h, b);
                    let p = match names.iter().position(|n| *n == name) {
                        Some(p) => p,
                        None => {
                            names.push(name);
                            names.len() - 1
                        }
                    };
                    idx[x * 256 + z * 16 + y] = p as u16;
                }
            }
        }
        batch.put(
            &chunk_key(cx, cz, 0, TAG_SUBCHUNK, Some(sy as i8)),
            &encode_subchunk_v9(sy as i8, &names, &idx),
        );
    }
}

/// What was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SynthReport {
    pub chunks: u64,
    pub entries: u64,
}

/// Writes a new world into `root` (which must not hold a db yet).
pub fn generate(storage: Arc<dyn Storage>, root: &str, p: SynthParams) -> Result<SynthReport> {
    for n in [p.chunks_x, p.chunks_z] {
        if !(1..=1024).contains(&n) {
            return Err(Error::invalid_argument(format!(
                "chunks per side must be 1..=1024, not {n}"
            )));
        }
    }
    storage.create_dir_all(root)?;
    let level = Tag::Compound(vec![
        ("LevelName".into(), Tag::String("Strata synthetic".into())),
        ("RandomSeed".into(), Tag::Long(p.seed as i64)),
        ("SpawnX".into(), Tag::Int(0)),
        ("SpawnY".into(), Tag::Int(column(p.seed, 0, 0).0 + 1)),
        ("SpawnZ".into(), Tag::Int(0)),
        ("GameType".into(), Tag::Int(1)),
        ("StorageVersion".into(), Tag::Int(10)),
        (
            "lastOpenedWithVersion".into(),
            Tag::List(
                nbt::TAG_INT,
                [1, 21, 0, 3, 0].into_iter().map(Tag::Int).collect(),
            ),
        ),
    ]);
    storage::write_all(
        &*storage,
        &storage::join(root, "level.dat"),
        &level_dat::encode(10, &level),
    )?;
    storage::write_all(
        &*storage,
        &storage::join(root, "levelname.txt"),
        b"Strata synthetic",
    )?;
    let mut options = Options::bedrock().create();
    options.error_if_exists = true;
    let db = Db::open(storage, &storage::join(root, "db"), options)?;
    let mut entries = 0u64;
    let (x0, z0) = (-(p.chunks_x as i32 / 2), -(p.chunks_z as i32 / 2));
    for cx in x0..x0 + p.chunks_x as i32 {
        let mut batch = WriteBatch::new();
        for cz in z0..z0 + p.chunks_z as i32 {
            chunk_records(p.seed, cx, cz, &mut batch);
        }
        entries += batch.count() as u64;
        db.write(&WriteOptions::default(), batch)?;
    }
    let mut batch = WriteBatch::new();
    batch.put(b"~local_player", &player(p.seed, 0));
    for n in 1..=3 {
        batch.put(
            format!("player_server_{}", uuid(p.seed, n)).as_bytes(),
            &player(p.seed, n),
        );
    }
    let empty = {
        let mut v = Vec::new();
        nbt::write_root(&mut v, "", &Tag::Compound(Vec::new()));
        v
    };
    for key in [
        "BiomeData",
        "Overworld",
        "mobevents",
        "scoreboard",
        "portals",
        "AutonomousEntities",
    ] {
        batch.put(key.as_bytes(), &empty);
    }
    batch.put(
        format!("map_{}", -(hash(p.seed, 5, 5) as i64 >> 20)).as_bytes(),
        &empty,
    );
    entries += batch.count() as u64;
    db.write(&WriteOptions::default(), batch)?;
    db.compact_range(None, None)?;
    db.close()?;
    Ok(SynthReport {
        chunks: p.chunks_x as u64 * p.chunks_z as u64,
        entries,
    })
}
