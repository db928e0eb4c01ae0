//! A chunk's surface from its 2D records: Data2D (0x2D: 256 × i16 LE heights, then 256 biome
//! bytes), Data2DLegacy (0x2E: heights, then 256 × u32 with the biome id in the low byte) and
//! Data3D (0x2B: heights, then one biome palette storage per subchunk from the bottom).
//! Columns are indexed `z*16 + x`.
//!
//! Palette storages (shared with SubChunkPrefix): a header byte `bpb<<1 | flag`, then
//! `ceil(4096 / (32/bpb))` u32 LE words holding 4096 indices packed from the low bit, never
//! straddling a word (block index `x*256 + z*16 + y`). Data3D biome storages (flag 1): bpb 0
//! is one u32 id and nothing else; otherwise the words, an i32 palette count and that many u32
//! ids; header 0xFF repeats the storage below. Every size is checked before use; at most
//! `MAX_BIOME_STORAGES` storages are read.

use crate::error::{Error, Result};

/// Heights and biome ids of a chunk's 256 columns (`z*16 + x`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Surface {
    /// The height map as stored: for Data3D, relative to the dimension's bottom (the number of
    /// blocks above it, so y = height - 1 + min_y is the top block).
    pub heights: [i16; 256],
    /// The biome at the top of each column.
    pub biomes: [u32; 256],
}

/// More biome storages than any dimension has subchunks is corruption.
pub const MAX_BIOME_STORAGES: usize = 64;

pub(crate) fn corrupt(what: &str, msg: impl std::fmt::Display) -> Error {
    Error::corruption(format!("{what}: {msg}"))
}

fn heights(v: &[u8], what: &str) -> Result<[i16; 256]> {
    if v.len() < 512 {
        return Err(corrupt(
            what,
            format!("{} bytes, shorter than the height map", v.len()),
        ));
    }
    let mut h = [0i16; 256];
    for (i, c) in v[..512].chunks_exact(2).enumerate() {
        h[i] = i16::from_le_bytes([c[0], c[1]]);
    }
    Ok(h)
}

/// Data2D: heights then 256 biome bytes.
pub fn decode_data2d(v: &[u8]) -> Result<Surface> {
    let heights = heights(v, "Data2D")?;
    if v.len() < 768 {
        return Err(corrupt("Data2D", format!("{} bytes, want 768", v.len())));
    }
    let mut biomes = [0u32; 256];
    for (i, b) in v[512..768].iter().enumerate() {
        biomes[i] = *b as u32;
    }
    Ok(Surface { heights, biomes })
}

/// Data2DLegacy: heights then 256 u32 (biome id in the low byte, a colour above it).
pub fn decode_data2d_legacy(v: &[u8]) -> Result<Surface> {
    let heights = heights(v, "Data2DLegacy")?;
    if v.len() < 512 + 1024 {
        return Err(corrupt(
            "Data2DLegacy",
            format!("{} bytes, want 1536", v.len()),
        ));
    }
    let mut biomes = [0u32; 256];
    for i in 0..256 {
        biomes[i] = v[512 + i * 4] as u32;
    }
    Ok(Surface { heights, biomes })
}

/// The word count of a packed storage of 4096 indices at `bpb` bits each.
pub fn packed_words(bpb: usize) -> Result<usize> {
    if bpb == 0 || bpb > 16 {
        return Err(corrupt("palette storage", format!("{bpb} bits per block")));
    }
    let per_word = 32 / bpb;
    Ok(4096_usize.div_ceil(per_word))
}

/// The index of block `i` (0..4096) in packed words (`words.len() == packed_words(bpb) * 4`).
pub fn packed_index(words: &[u8], bpb: usize, i: usize) -> u32 {
    let per_word = 32 / bpb;
    let w = (i / per_word) * 4;
    let word = u32::from_le_bytes([words[w], words[w + 1], words[w + 2], words[w + 3]]);
    (word >> ((i % per_word) * bpb)) & ((1u32 << bpb) - 1)
}

/// `packed_index` for one storage's many lookups: the division by the indices per word is a
/// multiplication (exact for every i < 4096: the error of the rounded-up reciprocal stays
/// below 1/256, less than any quotient's distance to the next integer).
#[derive(Clone, Copy)]
struct Unpacker {
    bpb: u32,
    per_word: u32,
    reciprocal: u32,
    mask: u32,
}

impl Unpacker {
    fn new(bpb: usize) -> Unpacker {
        let per_word = (32 / bpb.max(1)) as u32;
        Unpacker {
            bpb: bpb as u32,
            per_word,
            reciprocal: (1 << 20) / per_word + 1,
            mask: ((1u64 << bpb) - 1) as u32,
        }
    }

    /// Index `i` (below 4096) of `words` (a storage's packed words, `biome_storages` checked
    /// their length); one bounds check per read.
    #[inline(always)]
    fn index(&self, words: &[u8], i: usize) -> u32 {
        let i = i as u32;
        let q = (i * self.reciprocal) >> 20;
        let w = q as usize * 4;
        let word = words
            .get(w..w + 4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map_or(0, u32::from_le_bytes);
        (word >> ((i - q * self.per_word) * self.bpb)) & self.mask
    }
}

/// One Data3D biome storage, borrowed from the value.
#[derive(Clone, Copy)]
struct BiomeStorage<'a> {
    bpb: usize,
    unpacker: Unpacker,
    words: &'a [u8],
    /// `count` u32 LE ids (one for bpb 0).
    palette: &'a [u8],
}

impl BiomeStorage<'_> {
    #[inline]
    fn biome(&self, block: usize) -> Result<u32> {
        let idx = if self.bpb == 0 {
            0
        } else {
            self.unpacker.index(self.words, block) as usize
        };
        let at = idx * 4;
        if at + 4 > self.palette.len() {
            return Err(corrupt(
                "Data3D",
                format!(
                    "biome index {idx} outside a palette of {}",
                    self.palette.len() / 4
                ),
            ));
        }
        let p = &self.palette[at..at + 4];
        Ok(u32::from_le_bytes([p[0], p[1], p[2], p[3]]))
    }
}

fn take<'a>(v: &'a [u8], pos: &mut usize, n: usize) -> Result<&'a [u8]> {
    if n > v.len() - *pos {
        return Err(corrupt(
            "Data3D",
            format!(
                "needs {n} bytes at offset {}, {} left",
                *pos,
                v.len() - *pos
            ),
        ));
    }
    let s = &v[*pos..*pos + n];
    *pos += n;
    Ok(s)
}

fn biome_storages(v: &[u8]) -> Result<Vec<BiomeStorage<'_>>> {
    let mut pos = 512;
    // Worlds of 1.18 and later have 24 or 25 (Overworld) storages: room for them at once.
    let mut out: Vec<BiomeStorage> = Vec::with_capacity(32);
    while pos < v.len() {
        if out.len() == MAX_BIOME_STORAGES {
            return Err(corrupt(
                "Data3D",
                format!("more than {MAX_BIOME_STORAGES} storages"),
            ));
        }
        let header = v[pos];
        pos += 1;
        if header == 0xFF {
            let below = *out
                .last()
                .ok_or_else(|| corrupt("Data3D", "the first biome storage repeats nothing"))?;
            out.push(below);
            continue;
        }
        let bpb = (header >> 1) as usize;
        if bpb == 0 {
            let palette = take(v, &mut pos, 4)?;
            out.push(BiomeStorage {
                bpb,
                unpacker: Unpacker::new(0),
                words: &[],
                palette,
            });
            continue;
        }
        let words = take(v, &mut pos, packed_words(bpb)? * 4)?;
        let n = i32::from_le_bytes(take(v, &mut pos, 4)?.try_into().unwrap_or([0; 4]));
        let n = usize::try_from(n).map_err(|_| corrupt("Data3D", "negative palette size"))?;
        let palette = take(v, &mut pos, n.saturating_mul(4))?;
        out.push(BiomeStorage {
            bpb,
            unpacker: Unpacker::new(bpb),
            words,
            palette,
        });
    }
    Ok(out)
}

/// Data3D: heights, then the biome at each column's top block (the storage holding
/// `height - 1`, clamped to the storages present).
pub fn decode_data3d(v: &[u8]) -> Result<Surface> {
    let heights = heights(v, "Data3D")?;
    let storages = biome_storages(v)?;
    if storages.is_empty() {
        return Err(corrupt("Data3D", "no biome storage"));
    }
    let mut biomes = [0u32; 256];
    for (col, b) in biomes.iter_mut().enumerate() {
        let (s, block) = surface_block(&heights, storages.len(), col);
        *b = storages[s].biome(block)?;
    }
    Ok(Surface { heights, biomes })
}

/// Where column `col` (`z * 16 + x`)'s surface biome is: the storage holding `height - 1`
/// (clamped to the `storages` present) and the block's index in it (`x*256 + z*16 + y`).
fn surface_block(heights: &[i16; 256], storages: usize, col: usize) -> (usize, usize) {
    let top = storages as i32 * 16 - 1;
    let y = (heights[col] as i32 - 1).clamp(0, top) as usize;
    (y / 16, (col % 16) * 256 + (col / 16) * 16 + y % 16)
}

/// Data3D's heights and the biomes of columns `cols` only, failing exactly when (and with the
/// error) `decode_data3d` fails: every column's biome index is still checked against its
/// palette, except in storages whose palette has an entry for every index their width can
/// hold (nothing to check there).
pub fn decode_data3d_at<const N: usize>(
    v: &[u8],
    cols: &[usize; N],
) -> Result<([i16; 256], [u32; N])> {
    let heights = heights(v, "Data3D")?;
    let storages = biome_storages(v)?;
    if storages.is_empty() {
        return Err(corrupt("Data3D", "no biome storage"));
    }
    let block = |col: usize| surface_block(&heights, storages.len(), col);
    let unchecked = |st: &BiomeStorage| st.bpb == 0 || (4usize << st.bpb) <= st.palette.len();
    if !storages.iter().all(unchecked) {
        // Per storage, once: whether its indexes need checking.
        let mut check = [false; MAX_BIOME_STORAGES];
        for (c, st) in check.iter_mut().zip(&storages) {
            *c = !unchecked(st);
        }
        for col in 0..256 {
            let (s, b) = block(col);
            if !check.get(s).copied().unwrap_or(false) {
                continue;
            }
            let st = &storages[s];
            if st.unpacker.index(st.words, b) as usize * 4 + 4 > st.palette.len() {
                st.biome(b)?; // the error, as decode_data3d words it
            }
        }
    }
    let mut biomes = [0u32; N];
    for (out, &col) in biomes.iter_mut().zip(cols) {
        let (s, b) = block(col);
        *out = storages[s].biome(b)?;
    }
    Ok((heights, biomes))
}

/// Encodes a Data3D value: heights, then one biome storage per entry of `storages` (each a
/// palette and 4096 indices, `x*256 + z*16 + y`); `None` repeats the storage below.
pub fn encode_data3d(heights: &[i16; 256], storages: &[Option<(Vec<u32>, Vec<u16>)>]) -> Vec<u8> {
    let mut out = Vec::new();
    for h in heights {
        out.extend_from_slice(&h.to_le_bytes());
    }
    for s in storages {
        match s {
            None => out.push(0xFF),
            Some((palette, _)) if palette.len() == 1 => {
                out.push(1);
                out.extend_from_slice(&palette[0].to_le_bytes());
            }
            Some((palette, indices)) => {
                let bpb = bits_for(palette.len());
                out.push(((bpb as u8) << 1) | 1);
                pack_indices(&mut out, bpb, indices);
                out.extend_from_slice(&(palette.len() as i32).to_le_bytes());
                for id in palette {
                    out.extend_from_slice(&id.to_le_bytes());
                }
            }
        }
    }
    out
}

/// The smallest valid bits-per-block for a palette of `n` entries (1..=6, 8, 16).
pub fn bits_for(n: usize) -> usize {
    let need = (usize::BITS - n.saturating_sub(1).leading_zeros()).max(1) as usize;
    [1, 2, 3, 4, 5, 6, 8, 16]
        .into_iter()
        .find(|&b| b >= need)
        .unwrap_or(16)
}

/// The 4096 indices of packed `words` (`packed_words(bpb)` u32 LE words, bpb 1..=16), word by
/// word: no division per block (`pack_indices` read back).
pub fn unpack_indices(words: &[u8], bpb: usize) -> Vec<u16> {
    let per_word = 32 / bpb;
    let mask = ((1u64 << bpb) - 1) as u32;
    let mut indices = vec![0u16; 4096];
    for (slots, word) in indices.chunks_mut(per_word).zip(words.chunks_exact(4)) {
        let mut word = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
        for slot in slots {
            *slot = (word & mask) as u16;
            word >>= bpb;
        }
    }
    indices
}

/// Appends 4096 indices packed at `bpb` bits, low bits first, never straddling a word.
pub fn pack_indices(out: &mut Vec<u8>, bpb: usize, indices: &[u16]) {
    let per_word = 32 / bpb;
    for chunk in indices.chunks(per_word) {
        let mut word = 0u32;
        for (j, &i) in chunk.iter().enumerate() {
            word |= (i as u32) << (j * bpb);
        }
        out.extend_from_slice(&word.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data3d_at_fails_and_answers_as_data3d() {
        const COLS: [usize; 3] = [0, 136, 255];
        let agree = |v: &[u8], what: &str| {
            let at = decode_data3d_at(v, &COLS);
            match (decode_data3d(v), at) {
                (Ok(s), Ok((h, b))) => {
                    assert_eq!(h, s.heights, "{what}");
                    assert_eq!(b, COLS.map(|c| s.biomes[c]), "{what}");
                }
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{what}"),
                (a, b) => panic!("{what}: {:?} against {:?}", a.is_ok(), b.is_ok()),
            }
        };
        let mut heights = [0i16; 256];
        for (i, h) in heights.iter_mut().enumerate() {
            *h = (i as i16 * 7) % 60;
        }
        // Palettes of 3 entries at 2 bits (index 3 possible: checked) and of 4 (nothing to check).
        let mut idx = vec![0u16; 4096];
        for (i, x) in idx.iter_mut().enumerate() {
            *x = (i % 3) as u16;
        }
        let three = Some((vec![1, 2, 3], idx.clone()));
        let four = Some((vec![4, 5, 6, 7], idx.iter().map(|x| (x + 1) % 4).collect()));
        let one = Some((vec![9], vec![0; 4096]));
        let v = encode_data3d(&heights, &[three.clone(), None, four.clone(), one.clone()]);
        agree(&v, "valid");
        // Index 3 in the 3-entry palette, at column (x 5, z 1) = 21, not a sampled column: the
        // whole check still finds it.
        let y = (heights[21] as usize - 1).min(63);
        let mut bad = idx.clone();
        bad[5 * 256 + 16 + y % 16] = 3;
        let storages = match y / 16 {
            0 => vec![Some((vec![1, 2, 3], bad)), None, four.clone(), one.clone()],
            1 => vec![
                one.clone(),
                Some((vec![1, 2, 3], bad)),
                four.clone(),
                one.clone(),
            ],
            _ => vec![
                one.clone(),
                one.clone(),
                Some((vec![1, 2, 3], bad)),
                one.clone(),
            ],
        };
        let v = encode_data3d(&heights, &storages);
        assert!(decode_data3d(&v).is_err());
        agree(&v, "bad index off the samples");
        agree(&v[..400], "cut in the heights");
        agree(&v[..600], "cut in a storage");
        agree(&encode_data3d(&heights, &[]), "no storage");
    }

    #[test]
    fn unpackers_match_packed_index_for_every_width_and_block() {
        let mut x = 0x9E37_79B9u32;
        for bpb in 1..=16usize {
            let words: Vec<u8> = (0..packed_words(bpb).unwrap() * 4)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    x as u8
                })
                .collect();
            let u = Unpacker::new(bpb);
            for (i, &all) in unpack_indices(&words, bpb).iter().enumerate() {
                let want = packed_index(&words, bpb, i);
                assert_eq!(u.index(&words, i), want, "bpb {bpb} block {i}");
                assert_eq!(all as u32, want, "unpack_indices: bpb {bpb} block {i}");
            }
        }
    }

    #[test]
    fn data3d_round_trip_and_surface_biome() {
        let mut heights = [0i16; 256];
        heights[0] = 20; // top block at y 19: the second storage
        heights[1] = 5; // y 4: first storage
        heights[2] = 0; // clamped to y 0
        heights[3] = 999; // clamped to the top storage
        let mut idx = vec![0u16; 4096];
        idx[256 + 4] = 1; // x 1, z 0, y 4
        let storages = vec![
            Some((vec![7, 9], idx)),
            Some((vec![3], vec![0; 4096])),
            None,
        ];
        let v = encode_data3d(&heights, &storages);
        let s = decode_data3d(&v).unwrap();
        assert_eq!(s.heights, heights);
        assert_eq!(&s.biomes[..4], &[3, 9, 7, 3]);
        // Every truncation is an error, never a panic.
        for cut in 512..v.len() {
            let _ = decode_data3d(&v[..cut]);
        }
        assert!(decode_data3d(&v[..511]).is_err());
        // A first storage that repeats nothing, and a bad bit width.
        let mut bad = v[..512].to_vec();
        bad.push(0xFF);
        assert!(decode_data3d(&bad).is_err());
        let mut bad = v[..512].to_vec();
        bad.push(17 << 1 | 1);
        assert!(decode_data3d(&bad).is_err());
    }

    #[test]
    fn packing_helpers() {
        assert_eq!(bits_for(1), 1);
        assert_eq!(bits_for(2), 1);
        assert_eq!(bits_for(5), 3);
        assert_eq!(bits_for(65), 8);
        assert_eq!(bits_for(300), 16);
        assert_eq!(packed_words(3).unwrap(), 410);
        assert_eq!(packed_words(5).unwrap(), 683);
        let idx: Vec<u16> = (0..4096).map(|i| (i % 7) as u16).collect();
        let mut words = Vec::new();
        pack_indices(&mut words, 3, &idx);
        assert_eq!(words.len(), 410 * 4);
        for i in [0, 9, 10, 11, 4095] {
            assert_eq!(packed_index(&words, 3, i), (i % 7) as u32);
        }
    }

    #[test]
    fn data2d() {
        let mut v = vec![0u8; 768];
        v[0] = 64;
        v[512 + 17] = 21;
        let s = decode_data2d(&v).unwrap();
        assert_eq!((s.heights[0], s.biomes[17]), (64, 21));
        assert!(decode_data2d(&v[..700]).is_err());
    }
}
