//! The chunk index with relief samples: one pass over every key that lists a dimension's
//! chunks (as `keys::chunk_positions`) and, from the surface records the same pass meets,
//! keeps what the relief layer draws of each chunk at up to 4 pixels per chunk, so the first
//! map of a world opened for the first time needs no second read of its blocks.
//!
//! Invariants:
//! - `chunks` equals `keys::chunk_positions` for the same database state.
//! - A chunk has samples only when its first surface record in key order (Data3D, then
//!   Data2D, then Data2DLegacy: the order `map::surface_columns` tries them) decodes, every
//!   column then having a height and a biome. LegacyTerrain chunks, chunks whose record does not
//!   decode, chunks with no surface record and chunks met twice (keys out of order, which a
//!   database never gives) have none: the map reads them as before, and reports their damage
//!   as before.
//! - The samples are columns (4i, 4j) for i, j in 0..4: every column the relief layer draws at
//!   1, 2 or 4 pixels per chunk, and far out (the centre column, (8, 8)).
//! - `sequence` is the database's last sequence before the pass: a map may use the samples
//!   only while it is unchanged (any write makes them stale).
//! - Memory: 16 × 6 bytes per sampled chunk and 12 per chunk (17 MiB for 160,000 chunks).

use super::chunk::{decode_data2d, decode_data2d_legacy, decode_data3d_at, Surface};
use super::colours::biome_colour;
use super::keys::{
    classify, is_version_record, scan_options, KeyKind, TAG_DATA2D, TAG_DATA2D_LEGACY, TAG_DATA3D,
    TAG_LEGACY_TERRAIN, TAG_LEGACY_VERSION, TAG_VERSION,
};
use crate::error::Result;
use crate::Db;

/// Columns sampled per chunk: every 4th column each way.
pub const SAMPLES_PER_CHUNK: usize = 16;

/// One sampled column: what shading compares (the height-map value) and the biome's colour.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReliefSample {
    pub height: i16,
    pub colour: [u8; 3],
}

/// A dimension's chunks, with the relief samples of those that have them.
#[derive(Debug, Default)]
pub struct ReliefIndex {
    pub dimension: i32,
    /// The database's last sequence before the pass.
    pub sequence: u64,
    /// Ascending (x, z), as `keys::chunk_positions`.
    pub chunks: Vec<(i32, i32)>,
    /// Per chunk of `chunks`: where its samples start in `samples`, or `u32::MAX` for none.
    at: Vec<u32>,
    samples: Vec<ReliefSample>,
}

impl ReliefIndex {
    /// The samples of chunk (x, z), row by row (`[i * 4 + j]` is column (x 4j, z 4i)), if it
    /// has them.
    pub fn samples(&self, x: i32, z: i32) -> Option<&[ReliefSample]> {
        let i = self.chunks.binary_search(&(x, z)).ok()?;
        let at = self.at[i];
        (at != u32::MAX).then(|| &self.samples[at as usize..at as usize + SAMPLES_PER_CHUNK])
    }

    /// Chunks of `chunks` with samples.
    pub fn sampled(&self) -> usize {
        self.at.iter().filter(|&&a| a != u32::MAX).count()
    }
}

/// What the pass learnt of one chunk of the dimension.
struct Met {
    x: i32,
    z: i32,
    version: bool,
    /// A surface record was met (the first decides: later ones are not the map's).
    surface: bool,
    /// Where its samples start in the index's `samples`, or `u32::MAX`.
    at: u32,
}

/// The sampled columns (`z * 16 + x`): (4j, 4i) for sample i * 4 + j.
const COLUMNS: [usize; SAMPLES_PER_CHUNK] = {
    let mut c = [0; SAMPLES_PER_CHUNK];
    let mut n = 0;
    while n < SAMPLES_PER_CHUNK {
        c[n] = (n / 4) * 4 * 16 + (n % 4) * 4;
        n += 1;
    }
    c
};

fn sample(heights: &[i16; 256], biomes: impl Fn(usize) -> u32, out: &mut Vec<ReliefSample>) {
    for (n, &col) in COLUMNS.iter().enumerate() {
        out.push(ReliefSample {
            height: heights[col],
            colour: biome_colour(biomes(n)),
        });
    }
}

/// A surface record's samples, or `None` where the map must read it (`LegacyTerrain`) or it
/// does not decode (the map reads it and reports why).
fn samples_of(tag: u8, v: &[u8], out: &mut Vec<ReliefSample>) -> bool {
    let surface: Option<Surface> = match tag {
        // Data3D: only the sampled columns' biomes are looked up (the others still checked).
        TAG_DATA3D => match decode_data3d_at(v, &COLUMNS) {
            Ok((heights, biomes)) => {
                sample(&heights, |n| biomes[n], out);
                return true;
            }
            Err(_) => None,
        },
        TAG_DATA2D => decode_data2d(v).ok(),
        TAG_DATA2D_LEGACY => decode_data2d_legacy(v).ok(),
        _ => None,
    };
    match surface {
        Some(s) => {
            sample(&s.heights, |n| s.biomes[COLUMNS[n]], out);
            true
        }
        None => false,
    }
}

/// Lists the chunks of `dimension` and samples their relief, in one pass over every key.
pub fn relief_index(db: &Db, dimension: i32) -> Result<ReliefIndex> {
    let sequence = db.last_sequence();
    let mut met: Vec<Met> = Vec::new();
    // Samples stay in the order met (`at` points into them): no copy when sorting.
    let mut samples: Vec<ReliefSample> = Vec::new();
    let mut it = db.iter(&scan_options());
    it.seek_to_first();
    while it.valid() {
        let k = it.key();
        // Version and surface records have no subchunk byte: 9 or 13 bytes ending in their
        // tag. Every other key is passed over unparsed.
        if (k.len() == 9 || k.len() == 13)
            && matches!(
                k[k.len() - 1],
                TAG_VERSION
                    | TAG_LEGACY_VERSION
                    | TAG_DATA3D
                    | TAG_DATA2D
                    | TAG_DATA2D_LEGACY
                    | TAG_LEGACY_TERRAIN
            )
        {
            if let KeyKind::Chunk(c) = classify(k) {
                if c.dimension == dimension {
                    if met.last().is_none_or(|m| (m.x, m.z) != (c.x, c.z)) {
                        met.push(Met {
                            x: c.x,
                            z: c.z,
                            version: false,
                            surface: false,
                            at: u32::MAX,
                        });
                    }
                    let m = met.last_mut().expect("pushed above");
                    if is_version_record(&c) {
                        m.version = true;
                    } else if !m.surface {
                        m.surface = true;
                        let at = samples.len() as u32;
                        if samples_of(c.tag, it.value(), &mut samples) {
                            m.at = at;
                        }
                    }
                }
            }
        }
        it.next();
    }
    it.status()?;
    // Keys come in byte order (little-endian coordinates): sorted by (x, z) here. A chunk met
    // twice keeps no samples (the map reads it).
    met.sort_by_key(|m| (m.x, m.z));
    let mut index = ReliefIndex {
        dimension,
        sequence,
        chunks: Vec::with_capacity(met.len()),
        at: Vec::with_capacity(met.len()),
        samples,
    };
    let mut i = 0;
    while i < met.len() {
        let mut j = i + 1;
        while j < met.len() && (met[j].x, met[j].z) == (met[i].x, met[i].z) {
            j += 1;
        }
        if met[i..j].iter().any(|m| m.version) {
            index.chunks.push((met[i].x, met[i].z));
            index.at.push(if j - i == 1 { met[i].at } else { u32::MAX });
        }
        i = j;
    }
    Ok(index)
}
