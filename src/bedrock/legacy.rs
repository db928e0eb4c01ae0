//! LegacyTerrain (tag 0x30, MCPE 0.9–1.0): one 83,200-byte value per chunk holding 16×16×128
//! block ids (index `x*2048 + z*128 + y`), then metadata, sky light and block light nibbles
//! (16,384 bytes each), a 256-byte height map and 256 u32 biome colours (`z*16 + x`; byte 0 the
//! biome id, bytes 1–3 the grass colour R, G, B).
//!
//! The surface is computed from the blocks (the stored height map is often stale): the top
//! non-air block of each column. A value of another size is corruption.

use super::chunk::corrupt;
use crate::error::Result;

pub const LEGACY_TERRAIN_LEN: usize = 32768 + 3 * 16384 + 256 + 1024;
const BIOME_AT: usize = 32768 + 3 * 16384 + 256;

/// The top block of one column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LegacyTop {
    pub y: u8,
    pub id: u8,
    pub meta: u8,
}

/// The surface of a LegacyTerrain chunk (`z*16 + x`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LegacySurface {
    /// `None` for a column of air only.
    pub tops: [Option<LegacyTop>; 256],
    pub biomes: [u8; 256],
    /// Grass colour (R, G, B) per column.
    pub grass: [[u8; 3]; 256],
}

pub fn decode_legacy_terrain(v: &[u8]) -> Result<LegacySurface> {
    if v.len() != LEGACY_TERRAIN_LEN {
        return Err(corrupt(
            "LegacyTerrain",
            format!("{} bytes, want {LEGACY_TERRAIN_LEN}", v.len()),
        ));
    }
    let ids = &v[..32768];
    let meta = &v[32768..49152];
    let mut tops = [None; 256];
    let mut biomes = [0u8; 256];
    let mut grass = [[0u8; 3]; 256];
    for z in 0..16 {
        for x in 0..16 {
            let col = z * 16 + x;
            let base = (x << 11) | (z << 7);
            tops[col] = (0..128).rev().find(|&y| ids[base + y] != 0).map(|y| {
                let i = base + y;
                let m = meta[i >> 1];
                LegacyTop {
                    y: y as u8,
                    id: ids[i],
                    meta: if i & 1 == 0 { m & 0x0F } else { m >> 4 },
                }
            });
            let b = &v[BIOME_AT + col * 4..BIOME_AT + col * 4 + 4];
            biomes[col] = b[0];
            grass[col] = [b[1], b[2], b[3]];
        }
    }
    Ok(LegacySurface {
        tops,
        biomes,
        grass,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_blocks_and_biomes() {
        let mut v = vec![0u8; LEGACY_TERRAIN_LEN];
        let (x, z) = (3usize, 5usize);
        v[(x << 11) | (z << 7) | 10] = 1;
        v[(x << 11) | (z << 7) | 64] = 2;
        let i = (x << 11) | (z << 7) | 64;
        v[32768 + (i >> 1)] = 0x70; // i is even: low nibble 0
        let col = z * 16 + x;
        v[BIOME_AT + col * 4..BIOME_AT + col * 4 + 4].copy_from_slice(&[4, 10, 20, 30]);
        let s = decode_legacy_terrain(&v).unwrap();
        assert_eq!(
            s.tops[col],
            Some(LegacyTop {
                y: 64,
                id: 2,
                meta: 0
            })
        );
        assert_eq!(s.tops[0], None);
        assert_eq!((s.biomes[col], s.grass[col]), (4, [10, 20, 30]));
        assert!(decode_legacy_terrain(&v[1..]).is_err());
    }
}
