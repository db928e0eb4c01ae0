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
//! - `sequence` is the database's last sequence before the pass (for an index unpacked or
//!   joined from parts, the one the caller vouches for): a map may use the samples only while
//!   it is unchanged (any write makes them stale).
//! - A sampled chunk records whether its samples come from a Data3D record (heights counted
//!   from the dimension's lowest y) or a Data2D one (from y 0), so the height layer can place
//!   them too.
//! - Memory: 16 × 3 bytes per sampled chunk and 13 per chunk (9 MiB for 160,000 chunks).

use super::chunk::{decode_data2d, decode_data2d_legacy, decode_data3d_at, Surface};
use super::colours::biome_colour;
use super::keys::{
    classify, is_version_record, record_tag, scan_options, KeyKind, TAG_DATA2D, TAG_DATA2D_LEGACY,
    TAG_DATA3D, TAG_LEGACY_TERRAIN, TAG_LEGACY_VERSION, TAG_VERSION,
};
use crate::error::{Error, Result};
use crate::table::readahead::LendFilter;
use crate::Db;

/// Columns sampled per chunk: every 4th column each way.
pub const SAMPLES_PER_CHUNK: usize = 16;

/// One sampled column, in 3 bytes: what shading compares (the height-map value, i16 LE) and
/// the biome id (below 256: a chunk with another id at a sampled column has no samples).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReliefSample([u8; 3]);

impl ReliefSample {
    pub fn new(height: i16, biome: u8) -> ReliefSample {
        let h = height.to_le_bytes();
        ReliefSample([h[0], h[1], biome])
    }

    pub fn height(self) -> i16 {
        i16::from_le_bytes([self.0[0], self.0[1]])
    }

    pub fn biome(self) -> u8 {
        self.0[2]
    }

    /// The relief layer's colour: the biome's.
    pub fn colour(self) -> [u8; 3] {
        biome_colour(self.0[2] as u32)
    }
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
    /// Per chunk of `chunks`: its samples come from a Data3D record (false: Data2D or
    /// Data2DLegacy; false too for a chunk without samples).
    data3d: Vec<bool>,
    samples: Vec<ReliefSample>,
}

/// One sampled chunk.
#[derive(Clone, Copy, Debug)]
pub struct SampledChunk<'a> {
    /// Row by row: `[i * 4 + j]` is column (x 4j, z 4i).
    pub columns: &'a [ReliefSample],
    /// The samples come from a Data3D record: a height-map value h is y h - 1 + the
    /// dimension's lowest y (else y h - 1).
    pub data3d: bool,
}

impl ReliefIndex {
    /// The samples of chunk (x, z), row by row (`[i * 4 + j]` is column (x 4j, z 4i)), if it
    /// has them.
    pub fn samples(&self, x: i32, z: i32) -> Option<&[ReliefSample]> {
        self.chunk(x, z).map(|c| c.columns)
    }

    /// Chunk (x, z)'s samples and where they come from, if it has them.
    pub fn chunk(&self, x: i32, z: i32) -> Option<SampledChunk<'_>> {
        let i = self.chunks.binary_search(&(x, z)).ok()?;
        let at = self.at[i];
        (at != u32::MAX).then(|| SampledChunk {
            columns: &self.samples[at as usize..at as usize + SAMPLES_PER_CHUNK],
            data3d: self.data3d[i],
        })
    }

    /// Chunks of `chunks` with samples.
    pub fn sampled(&self) -> usize {
        self.at.iter().filter(|&&a| a != u32::MAX).count()
    }

    /// The index as bytes, to keep beside a world's chunk list (`unpack` reads them back):
    /// `"SRI3"`, dimension i32, chunk count u32, per chunk x i32 z i32, its first sample u32
    /// (`u32::MAX`: none) and a flags byte (1: Data3D samples), sample count u32, per sample
    /// height i16 and biome u8; all little-endian. The sequence is not kept: it is the
    /// reader's.
    pub fn pack(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + self.chunks.len() * 13 + self.samples.len() * 3);
        out.extend_from_slice(PACK_MAGIC);
        out.extend_from_slice(&self.dimension.to_le_bytes());
        out.extend_from_slice(&(self.chunks.len() as u32).to_le_bytes());
        for ((&(x, z), &at), &data3d) in self.chunks.iter().zip(&self.at).zip(&self.data3d) {
            out.extend_from_slice(&x.to_le_bytes());
            out.extend_from_slice(&z.to_le_bytes());
            out.extend_from_slice(&at.to_le_bytes());
            out.push(data3d as u8);
        }
        out.extend_from_slice(&(self.samples.len() as u32).to_le_bytes());
        for s in &self.samples {
            out.extend_from_slice(&s.0);
        }
        out
    }

    /// Reads `pack`'s bytes, for a database whose contents are those the samples were taken
    /// from (the caller's word: the viewer keeps them under the world's content identity),
    /// now at `sequence`. Bytes that are not a well-formed index (cut short, trailing bytes,
    /// chunks out of order, a sample range outside the samples, unknown flags, an earlier
    /// format) are an error.
    pub fn unpack(bytes: &[u8], sequence: u64) -> Result<ReliefIndex> {
        let mut at = 0;
        let index = ReliefIndex::unpack_at(bytes, &mut at, sequence)?;
        if at != bytes.len() {
            return Err(Error::invalid_argument("relief samples: trailing bytes"));
        }
        Ok(index)
    }

    /// Reads the packed parts of one dimension's index laid end to end (each `pack`'s bytes
    /// of a `ReliefPass::with_range` pass, the ranges disjoint, in any order) and joins them
    /// (`join`). No part at all, a part of another dimension, or any part not well formed is
    /// an error.
    pub fn unpack_parts(bytes: &[u8], dimension: i32, sequence: u64) -> Result<ReliefIndex> {
        let mut at = 0;
        let mut parts = Vec::new();
        while at < bytes.len() {
            let part = ReliefIndex::unpack_at(bytes, &mut at, sequence)?;
            if part.dimension != dimension {
                return Err(Error::invalid_argument(format!(
                    "relief samples: a part of dimension {} where {dimension} was asked for",
                    part.dimension
                )));
            }
            parts.push(part);
        }
        if parts.is_empty() {
            return Err(Error::invalid_argument("relief samples: no part"));
        }
        ReliefIndex::join(dimension, sequence, parts)
    }

    /// One index made of the indexes of passes over disjoint key ranges of the same database
    /// state (`ReliefPass::with_range`): the chunks of all, ascending. A chunk found in two
    /// parts (ranges not split at a chunk's key prefix, which `chunk_split_keys` never gives)
    /// keeps no samples, as a chunk met twice in one pass: the map reads it. More samples in
    /// all than a `u32` can index are an error.
    pub fn join(dimension: i32, sequence: u64, parts: Vec<ReliefIndex>) -> Result<ReliefIndex> {
        let all_samples: usize = parts.iter().map(|p| p.samples.len()).sum();
        if all_samples > (u32::MAX as usize) - SAMPLES_PER_CHUNK {
            return Err(Error::invalid_argument(
                "relief samples: more samples in the parts than an index holds",
            ));
        }
        let total: usize = parts.iter().map(|p| p.chunks.len()).sum();
        // (chunk, part, row in part), sorted: each part is ascending already, so the sort
        // meets runs it merges.
        let mut rows: Vec<((i32, i32), u32, u32)> = Vec::with_capacity(total);
        for (p, part) in parts.iter().enumerate() {
            rows.extend(
                part.chunks
                    .iter()
                    .enumerate()
                    .map(|(i, &c)| (c, p as u32, i as u32)),
            );
        }
        rows.sort_unstable();
        // Where each part's samples start in the joined samples.
        let mut base = Vec::with_capacity(parts.len());
        let mut samples = Vec::with_capacity(all_samples);
        for part in &parts {
            base.push(samples.len() as u32);
            samples.extend_from_slice(&part.samples);
        }
        let mut index = ReliefIndex {
            dimension,
            sequence,
            chunks: Vec::with_capacity(total),
            at: Vec::with_capacity(total),
            data3d: Vec::with_capacity(total),
            samples,
        };
        let mut i = 0;
        while i < rows.len() {
            let (c, p, r) = rows[i];
            let mut j = i + 1;
            while j < rows.len() && rows[j].0 == c {
                j += 1;
            }
            let part = &parts[p as usize];
            let at = part.at[r as usize];
            let once = j - i == 1 && at != u32::MAX;
            index.chunks.push(c);
            index.at.push(if once {
                base[p as usize] + at
            } else {
                u32::MAX
            });
            index.data3d.push(once && part.data3d[r as usize]);
            i = j;
        }
        Ok(index)
    }

    /// Reads one packed index at `*at`, leaving `*at` past it.
    fn unpack_at(bytes: &[u8], cursor: &mut usize, sequence: u64) -> Result<ReliefIndex> {
        let bad = |why: &str| Error::invalid_argument(format!("relief samples: {why}"));
        let mut at = *cursor;
        let mut take = |n: usize| -> Result<&[u8]> {
            let s = bytes
                .get(at..at.checked_add(n).ok_or_else(|| bad("cut short"))?)
                .ok_or_else(|| bad("cut short"))?;
            at += n;
            Ok(s)
        };
        let u32_of = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        if take(4)? != PACK_MAGIC {
            return Err(bad("not a packed relief index"));
        }
        let dimension = u32_of(take(4)?) as i32;
        if !(0..=2).contains(&dimension) {
            return Err(bad("dimension is not 0, 1 or 2"));
        }
        let n = u32_of(take(4)?) as usize;
        let rows = take(n.checked_mul(13).ok_or_else(|| bad("cut short"))?)?;
        let mut chunks = Vec::with_capacity(n);
        let mut firsts = Vec::with_capacity(n);
        let mut data3d = Vec::with_capacity(n);
        for r in rows.chunks_exact(13) {
            let c = (u32_of(&r[0..4]) as i32, u32_of(&r[4..8]) as i32);
            if chunks.last().is_some_and(|&last| last >= c) {
                return Err(bad("chunks out of order"));
            }
            if r[12] > 1 {
                return Err(bad("unknown chunk flags"));
            }
            chunks.push(c);
            firsts.push(u32_of(&r[8..12]));
            data3d.push(r[12] == 1);
        }
        let count = u32_of(take(4)?) as usize;
        let raw = take(count.checked_mul(3).ok_or_else(|| bad("cut short"))?)?;
        *cursor = at;
        if firsts
            .iter()
            .any(|&f| f != u32::MAX && (f as usize).saturating_add(SAMPLES_PER_CHUNK) > count)
        {
            return Err(bad("a chunk's samples lie outside them"));
        }
        let samples = raw
            .chunks_exact(3)
            .map(|r| ReliefSample([r[0], r[1], r[2]]))
            .collect();
        Ok(ReliefIndex {
            dimension,
            sequence,
            chunks,
            at: firsts,
            data3d,
            samples,
        })
    }
}

const PACK_MAGIC: &[u8; 4] = b"SRI3";

/// What the pass learnt of one chunk of the dimension.
struct Met {
    x: i32,
    z: i32,
    version: bool,
    /// A surface record was met (the first decides: later ones are not the map's).
    surface: bool,
    /// Where its samples start in the index's `samples`, or `u32::MAX`.
    at: u32,
    /// The samples come from a Data3D record.
    data3d: bool,
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

/// Appends the chunk's samples; false (nothing appended) when a sampled column's biome id does
/// not fit a byte.
fn sample(
    heights: &[i16; 256],
    biomes: impl Fn(usize) -> u32,
    out: &mut Vec<ReliefSample>,
) -> bool {
    let mut s = [ReliefSample::default(); SAMPLES_PER_CHUNK];
    for (n, &col) in COLUMNS.iter().enumerate() {
        let Ok(b) = u8::try_from(biomes(n)) else {
            return false;
        };
        s[n] = ReliefSample::new(heights[col], b);
    }
    out.extend_from_slice(&s);
    true
}

/// A surface record's samples, or `None` where the map must read it (`LegacyTerrain`) or it
/// does not decode (the map reads it and reports why).
fn samples_of(tag: u8, v: &[u8], out: &mut Vec<ReliefSample>) -> bool {
    let surface: Option<Surface> = match tag {
        // Data3D: only the sampled columns' biomes are looked up (the others still checked).
        TAG_DATA3D => match decode_data3d_at(v, &COLUMNS) {
            Ok((heights, biomes)) => return sample(&heights, |n| biomes[n], out),
            Err(_) => None,
        },
        TAG_DATA2D => decode_data2d(v).ok(),
        TAG_DATA2D_LEGACY => decode_data2d_legacy(v).ok(),
        _ => None,
    };
    match surface {
        Some(s) => sample(&s.heights, |n| s.biomes[COLUMNS[n]], out),
        None => false,
    }
}

/// Lists the chunks of `dimension` and samples their relief, in one pass over every key.
pub fn relief_index(db: &Db, dimension: i32) -> Result<ReliefIndex> {
    let mut pass = ReliefPass::new(db, dimension);
    while !pass.step(usize::MAX)? {}
    Ok(pass.finish())
}

/// `relief_index` in steps, so that a host without threads (wasm) can hand the pass's blocks
/// to decode workers between steps (`Database.chunkListCursor`). The pass reads as of its
/// start (its iterator's implicit snapshot); `sequence` is the last sequence then.
pub struct ReliefPass {
    dimension: i32,
    sequence: u64,
    it: crate::db::DbIter,
    /// The first user key past the pass's range (none: to the last key).
    end: Option<Vec<u8>>,
    met: Vec<Met>,
    /// Samples stay in the order met (`at` points into them): no copy when sorting.
    samples: Vec<ReliefSample>,
}

impl ReliefPass {
    pub fn new(db: &Db, dimension: i32) -> ReliefPass {
        ReliefPass::with_range(db, dimension, None, None)
    }

    /// A pass over the user keys in `[start, end)` only (none: from the first, to the last):
    /// its index holds the chunks whose keys lie there. Passes over the ranges between
    /// `chunk_split_keys` find every chunk's records on one side, so their indexes `join` into
    /// the whole pass's, which is how engines on several cores share the pass.
    pub fn with_range(
        db: &Db,
        dimension: i32,
        start: Option<&[u8]>,
        end: Option<Vec<u8>>,
    ) -> ReliefPass {
        let sequence = db.last_sequence();
        let mut options = scan_options();
        // Decode workers may hand back only the records this pass reads.
        options.lend_filter = Some(CHUNK_INDEX_FILTER);
        let mut it = db.iter(&options);
        match start {
            Some(k) => it.seek(k),
            None => it.seek_to_first(),
        }
        ReliefPass {
            dimension,
            sequence,
            it,
            end,
            met: Vec::new(),
            samples: Vec::new(),
        }
    }

    /// Reads on until about `max_bytes` of keys and values were passed; true once every key
    /// was (or the iterator's error).
    pub fn step(&mut self, max_bytes: usize) -> Result<bool> {
        let mut bytes = 0usize;
        let it = &mut self.it;
        while it.valid() {
            if bytes >= max_bytes {
                return Ok(false);
            }
            let k = it.key();
            if self.end.as_deref().is_some_and(|end| k >= end) {
                break;
            }
            bytes = bytes.saturating_add(k.len() + it.value().len() + 16);
            // Version and surface records only; every other key is passed over unparsed.
            if chunk_index_record(k) {
                if let KeyKind::Chunk(c) = classify(k) {
                    if c.dimension == self.dimension {
                        let met = &mut self.met;
                        if met.last().is_none_or(|m| (m.x, m.z) != (c.x, c.z)) {
                            met.push(Met {
                                x: c.x,
                                z: c.z,
                                version: false,
                                surface: false,
                                at: u32::MAX,
                                data3d: false,
                            });
                        }
                        let m = met.last_mut().expect("pushed above");
                        if is_version_record(&c) {
                            m.version = true;
                        } else if !m.surface {
                            m.surface = true;
                            let at = self.samples.len() as u32;
                            if samples_of(c.tag, it.value(), &mut self.samples) {
                                m.at = at;
                                m.data3d = c.tag == TAG_DATA3D;
                            }
                        }
                    }
                }
            }
            it.next();
        }
        it.status()?;
        Ok(true)
    }

    /// The index of what the steps read.
    pub fn finish(self) -> ReliefIndex {
        let mut met = self.met;
        // Keys come in byte order (little-endian coordinates): sorted by (x, z) here. A chunk
        // met twice keeps no samples (the map reads it).
        met.sort_by_key(|m| (m.x, m.z));
        let mut index = ReliefIndex {
            dimension: self.dimension,
            sequence: self.sequence,
            chunks: Vec::with_capacity(met.len()),
            at: Vec::with_capacity(met.len()),
            data3d: Vec::with_capacity(met.len()),
            samples: self.samples,
        };
        let mut i = 0;
        while i < met.len() {
            let mut j = i + 1;
            while j < met.len() && (met[j].x, met[j].z) == (met[i].x, met[i].z) {
                j += 1;
            }
            if met[i..j].iter().any(|m| m.version) {
                index.chunks.push((met[i].x, met[i].z));
                let once = j - i == 1;
                index.at.push(if once { met[i].at } else { u32::MAX });
                index.data3d.push(once && met[i].data3d);
            }
            i = j;
        }
        index
    }
}

/// Up to `parts - 1` ascending 8-byte user keys that cut the database's table bytes into
/// about `parts` equal ranges, for passes on several engines (`ReliefPass::with_range`). Every
/// key of a chunk starts with the chunk's 8 bytes (x, z), so any 8-byte key leaves each
/// chunk's records on one side. The cut is an estimate from the live tables' key ranges and
/// sizes alone (no table is opened: in a browser, opening the 160,000-chunk world's 60 tables
/// to read their index blocks took 0.2 s before either engine could start): each table's
/// bytes are spread evenly over its range, read as the big-endian number of its keys' first
/// 8 bytes. A chunk key's first byte is the low byte of its x, so a world's chunks spread
/// over that range, and tables of a large world each hold a narrow part of it. None when
/// there is nothing to share (fewer than `min_bytes` of tables).
pub fn chunk_split_keys(db: &Db, parts: usize, min_bytes: u64) -> Vec<[u8; 8]> {
    // More ranges than this would be smaller than a block of most worlds.
    let parts = parts.min(1 << 16);
    let version = db.version();
    let prefix = |ikey: &[u8]| -> f64 {
        let user = crate::key::extract_user_key(ikey);
        let mut b = [0u8; 8];
        let n = user.len().min(8);
        b[..n].copy_from_slice(&user[..n]);
        u64::from_be_bytes(b) as f64
    };
    // (first, last, bytes) per table.
    let tables: Vec<(f64, f64, f64)> = version
        .files
        .iter()
        .flatten()
        .map(|f| (prefix(&f.smallest), prefix(&f.largest), f.file_size as f64))
        .collect();
    let total: f64 = tables.iter().map(|t| t.2).sum();
    if parts < 2 || tables.is_empty() || total < min_bytes as f64 {
        return Vec::new();
    }
    // The table bytes below p (a table of one prefix counts whole from it).
    let below = |p: f64| -> f64 {
        tables
            .iter()
            .map(|&(lo, hi, bytes)| {
                if p < lo {
                    0.0
                } else if p >= hi {
                    bytes
                } else {
                    bytes * (p - lo) / (hi - lo)
                }
            })
            .sum()
    };
    let mut points: Vec<f64> = tables.iter().flat_map(|t| [t.0, t.1]).collect();
    points.sort_by(f64::total_cmp);
    points.dedup();
    let cdf: Vec<f64> = points.iter().map(|&p| below(p)).collect();
    let mut keys: Vec<[u8; 8]> = Vec::with_capacity(parts - 1);
    for k in 1..parts {
        let target = total * k as f64 / parts as f64;
        // The first point with at least `target` below it; the cut lies between it and the
        // point before, where the bytes below reach `target`.
        let i = cdf.partition_point(|&c| c < target);
        let at = match i {
            0 => points[0],
            i if i >= points.len() => points[points.len() - 1],
            i => {
                let (p0, p1, c0, c1) = (points[i - 1], points[i], cdf[i - 1], cdf[i]);
                p0 + (p1 - p0) * ((target - c0) / (c1 - c0)).clamp(0.0, 1.0)
            }
        };
        // Saturating: a cut past u64's range is its last key.
        let key = (at as u64).to_be_bytes();
        // Ascending, and no empty first range (a cut at 0 cuts nothing).
        if key != [0u8; 8] && keys.last().is_none_or(|last| *last < key) {
            keys.push(key);
        }
    }
    keys
}

/// Whether a user key is one the pass reads: a chunk's Version or surface record.
fn chunk_index_record(key: &[u8]) -> bool {
    matches!(
        record_tag(key),
        Some(
            TAG_VERSION
                | TAG_LEGACY_VERSION
                | TAG_DATA3D
                | TAG_DATA2D
                | TAG_DATA2D_LEGACY
                | TAG_LEGACY_TERRAIN
        )
    )
}

/// The pass's `ReadOptions::lend_filter`: decode workers keep only the entries whose user key
/// `chunk_index_record` takes (`table::readahead::filter_block`).
pub const CHUNK_INDEX_FILTER: LendFilter = LendFilter {
    code: 1,
    keeps: chunk_index_record,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> ReliefIndex {
        let sample = |h: i16| ReliefSample::new(h, h as u8);
        ReliefIndex {
            dimension: 1,
            sequence: 77,
            chunks: vec![(-5, 3), (-5, 4), (2, -9)],
            at: vec![16, u32::MAX, 0],
            data3d: vec![true, false, false],
            samples: (0..32).map(sample).collect(),
        }
    }

    #[test]
    fn pack_round_trips() {
        let i = index();
        let back = ReliefIndex::unpack(&i.pack(), 5).unwrap();
        assert_eq!((back.dimension, back.sequence), (1, 5));
        assert_eq!(back.chunks, i.chunks);
        assert_eq!(back.samples(-5, 3), i.samples(-5, 3));
        assert_eq!(back.samples(-5, 4), None);
        assert_eq!(back.samples(2, -9).unwrap()[15].height(), 15);
        assert_eq!(
            [(-5, 3), (2, -9)].map(|(x, z)| back.chunk(x, z).unwrap().data3d),
            [true, false]
        );
        assert_eq!(back.pack(), i.pack());
    }

    #[test]
    fn a_chunk_in_two_parts_keeps_no_samples() {
        // Parts as passes over overlapping ranges would give them: (2, -9) in both.
        let a = index();
        let sample = |h: i16| ReliefSample::new(h, 200);
        let b = ReliefIndex {
            dimension: 1,
            sequence: 3,
            chunks: vec![(2, -9), (7, 7)],
            at: vec![0, 16],
            data3d: vec![true, true],
            samples: (0..32).map(sample).collect(),
        };
        let mut packed = b.pack();
        packed.extend_from_slice(&a.pack());
        let j = ReliefIndex::unpack_parts(&packed, 1, 9).unwrap();
        assert_eq!(j.chunks, [(-5, 3), (-5, 4), (2, -9), (7, 7)]);
        assert_eq!((j.sequence, j.sampled()), (9, 2));
        assert_eq!(j.samples(2, -9), None);
        assert_eq!(j.samples(-5, 3), a.samples(-5, 3));
        assert_eq!(j.samples(7, 7), b.samples(7, 7));
        assert!(j.chunk(-5, 3).unwrap().data3d && j.chunk(7, 7).unwrap().data3d);
    }

    #[test]
    fn damaged_packs_are_errors() {
        let good = index().pack();
        // Every cut, and every byte changed: an error or a well-formed index, never a panic.
        for n in 0..good.len() {
            assert!(ReliefIndex::unpack(&good[..n], 0).is_err(), "cut at {n}");
        }
        for i in 0..good.len() {
            for flip in [0x01u8, 0x80, 0xFF] {
                let mut b = good.clone();
                b[i] ^= flip;
                if let Ok(r) = ReliefIndex::unpack(&b, 0) {
                    for &(x, z) in &r.chunks {
                        let _ = r.samples(x, z);
                    }
                }
            }
        }
        let mut long = good.clone();
        long.push(0);
        assert!(ReliefIndex::unpack(&long, 0).is_err());
        // A first sample past the samples.
        let mut i = index();
        i.at[0] = 17;
        assert!(ReliefIndex::unpack(&i.pack(), 0).is_err());
        let mut i = index();
        i.chunks.swap(0, 1);
        assert!(ReliefIndex::unpack(&i.pack(), 0).is_err());
        // A flags byte other than 0 or 1 (the first chunk's), and the earlier format.
        let mut b = good.clone();
        b[12 + 12] = 2;
        assert!(ReliefIndex::unpack(&b, 0)
            .unwrap_err()
            .to_string()
            .contains("unknown chunk flags"));
        let mut b = good.clone();
        b[..4].copy_from_slice(b"SRI2");
        assert!(ReliefIndex::unpack(&b, 0).is_err());
    }
}
