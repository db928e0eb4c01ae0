//! SubChunkPrefix (tag 0x2F) values, versions 1, 8 and 9: `[1]` one storage; `[8][count]`;
//! `[9][count][y]`; then `count` block storages. A block storage is a header `bpb<<1 | 0`,
//! `ceil(4096 / (32/bpb))` u32 LE words of packed indices (block index `x*256 + z*16 + y`), an
//! i32 palette count and that many NBT compounds `{name, states, version}`. bpb 0 means no
//! words and exactly one palette entry with no count.
//!
//! Bounds: the palette count is checked against the bytes left (an entry takes at least 4);
//! every index must fall inside its palette; the NBT reader's limits apply to each entry.
//! The runtime-id flavour (header bit 0 set) and the pre-1.2 versions are `NotSupported`.

use super::chunk::{corrupt, packed_words, unpack_indices};
use super::nbt::{self, Tag};
use crate::error::{Error, Result};

/// One palette entry.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockState {
    pub name: String,
    /// The `states` compound (empty when missing).
    pub states: Tag,
    pub version: Option<i32>,
}

impl BlockState {
    /// The entry of a palette compound: its first `name` (a string, else ""), first `states`
    /// (an empty compound when missing) and first `version` (an integer in i32's range), moved
    /// out of the tag rather than copied.
    fn from_root(tag: Tag) -> BlockState {
        let (mut name, mut states, mut version) = (None, None, None);
        if let Tag::Compound(entries) = tag {
            for (key, value) in entries {
                let slot = match key.as_str() {
                    "name" => &mut name,
                    "states" => &mut states,
                    "version" => &mut version,
                    _ => continue,
                };
                if slot.is_none() {
                    *slot = Some(value);
                }
            }
        }
        BlockState {
            name: match name {
                Some(Tag::String(s)) => s,
                _ => String::new(),
            },
            states: states.unwrap_or(Tag::Compound(Vec::new())),
            version: version
                .and_then(|t| t.as_i64())
                .and_then(|v| i32::try_from(v).ok()),
        }
    }

    /// True for air (and for an empty name).
    pub fn is_air(&self) -> bool {
        matches!(
            self.name.as_str(),
            "" | "minecraft:air" | "minecraft:cave_air" | "minecraft:void_air"
        )
    }
}

/// 4096 palette indices and their palette.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockStorage {
    pub indices: Vec<u16>,
    pub palette: Vec<BlockState>,
}

impl BlockStorage {
    /// The block at local (x, y, z), each 0..16.
    pub fn block(&self, x: usize, y: usize, z: usize) -> &BlockState {
        &self.palette[self.indices[x * 256 + z * 16 + y] as usize]
    }
}

/// A decoded subchunk: layer 0 holds the blocks, layer 1 (if any) mostly water-logging.
#[derive(Clone, Debug, PartialEq)]
pub struct SubChunk {
    pub version: u8,
    /// The y index stored in version 9.
    pub y: Option<i8>,
    pub layers: Vec<BlockStorage>,
}

struct Cursor<'a> {
    v: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.v.len() - self.pos {
            return Err(corrupt(
                "SubChunkPrefix",
                format!(
                    "needs {n} bytes at offset {}, {} left",
                    self.pos,
                    self.v.len() - self.pos
                ),
            ));
        }
        let s = &self.v[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
}

/// Decodes a SubChunkPrefix value.
pub fn decode_subchunk(v: &[u8]) -> Result<SubChunk> {
    let mut c = Cursor { v, pos: 0 };
    let version = c.u8()?;
    let (count, y) = match version {
        1 => (1, None),
        8 => (c.u8()? as usize, None),
        9 => {
            let n = c.u8()? as usize;
            (n, Some(c.u8()? as i8))
        }
        0 | 2..=7 => {
            return Err(Error::not_supported(format!(
                "SubChunkPrefix version {version} (pre-1.2 layout)"
            )))
        }
        other => return Err(corrupt("SubChunkPrefix", format!("version {other}"))),
    };
    let mut layers = Vec::with_capacity(count.min(4));
    for _ in 0..count {
        layers.push(block_storage(&mut c)?);
    }
    Ok(SubChunk { version, y, layers })
}

fn block_storage(c: &mut Cursor) -> Result<BlockStorage> {
    let header = c.u8()?;
    if header & 1 == 1 {
        return Err(Error::not_supported(
            "SubChunkPrefix storage with runtime ids (network form)",
        ));
    }
    let bpb = (header >> 1) as usize;
    if bpb == 0 {
        let entry = palette_entry(c)?;
        return Ok(BlockStorage {
            indices: vec![0; 4096],
            palette: vec![entry],
        });
    }
    let words = c.take(packed_words(bpb)? * 4)?;
    let n = i32::from_le_bytes(c.take(4)?.try_into().unwrap_or([0; 4]));
    let left = c.v.len() - c.pos;
    if n < 0 || n as usize > left / 4 {
        return Err(corrupt(
            "SubChunkPrefix",
            format!("palette of {n} entries in {left} bytes"),
        ));
    }
    let mut palette = Vec::with_capacity(n as usize);
    for _ in 0..n {
        palette.push(palette_entry(c)?);
    }
    let indices = unpack_indices(words, bpb);
    // One comparison for the whole storage (none when the palette covers every index the
    // width can hold); the error names the first index outside, as a check block by block
    // would. A fold, not `Iterator::max` (whose ties-go-last rule keeps it from vectorizing).
    let covered = bpb < usize::BITS as usize && palette.len() >> bpb != 0;
    if !covered && indices.iter().fold(0, |m, &i| m.max(i)) as usize >= palette.len() {
        let idx = indices
            .iter()
            .find(|&&i| i as usize >= palette.len())
            .copied()
            .unwrap_or_default();
        return Err(corrupt(
            "SubChunkPrefix",
            format!("block index {idx} outside a palette of {}", palette.len()),
        ));
    }
    Ok(BlockStorage { indices, palette })
}

fn palette_entry(c: &mut Cursor) -> Result<BlockState> {
    let (_, tag) = nbt::read_root(c.v, &mut c.pos)?;
    Ok(BlockState::from_root(tag))
}

/// Encodes a version 9 subchunk with one layer.
pub fn encode_subchunk_v9(y: i8, palette: &[&str], indices: &[u16]) -> Vec<u8> {
    let mut out = vec![9, 1, y as u8];
    let entry = |out: &mut Vec<u8>, name: &str| {
        let tag = Tag::Compound(vec![
            ("name".into(), Tag::String(name.into())),
            ("states".into(), Tag::Compound(Vec::new())),
            ("version".into(), Tag::Int(17_959_425)),
        ]);
        nbt::write_root(out, "", &tag);
    };
    if palette.len() == 1 {
        out.push(0);
        entry(&mut out, palette[0]);
        return out;
    }
    let bpb = super::chunk::bits_for(palette.len());
    out.push((bpb as u8) << 1);
    super::chunk::pack_indices(&mut out, bpb, indices);
    out.extend_from_slice(&(palette.len() as i32).to_le_bytes());
    for name in palette {
        entry(&mut out, name);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_v9_and_single_entry() {
        let mut idx = vec![0u16; 4096];
        idx[5 * 256 + 3 * 16 + 7] = 2;
        let v = encode_subchunk_v9(
            -4,
            &["minecraft:air", "minecraft:stone", "minecraft:dirt"],
            &idx,
        );
        let s = decode_subchunk(&v).unwrap();
        assert_eq!((s.version, s.y, s.layers.len()), (9, Some(-4), 1));
        assert_eq!(s.layers[0].block(5, 7, 3).name, "minecraft:dirt");
        assert!(s.layers[0].block(0, 0, 0).is_air());
        assert_eq!(s.layers[0].block(5, 7, 3).version, Some(17_959_425));
        for cut in 0..v.len() {
            assert!(decode_subchunk(&v[..cut]).is_err(), "cut {cut}");
        }
        let one = encode_subchunk_v9(2, &["minecraft:stone"], &idx);
        let s = decode_subchunk(&one).unwrap();
        assert_eq!(s.layers[0].block(15, 15, 15).name, "minecraft:stone");
    }

    #[test]
    fn palette_entries_take_the_first_of_each_field() {
        let entry = |fields: Vec<(&str, Tag)>| {
            BlockState::from_root(Tag::Compound(
                fields
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect(),
            ))
        };
        let s = entry(vec![
            ("version", Tag::Long(i64::MAX)),
            ("name", Tag::String("minecraft:stone".into())),
            ("states", Tag::Compound(vec![("a".into(), Tag::Byte(1))])),
            ("name", Tag::String("minecraft:dirt".into())),
            ("states", Tag::Int(3)),
        ]);
        assert_eq!(
            s,
            BlockState {
                name: "minecraft:stone".into(),
                states: Tag::Compound(vec![("a".into(), Tag::Byte(1))]),
                version: None,
            }
        );
        // A name that is not a string is no name (air), as a missing one; a short version.
        let s = entry(vec![
            ("name", Tag::Int(1)),
            ("name", Tag::String("minecraft:stone".into())),
            ("version", Tag::Short(7)),
        ]);
        assert_eq!(
            (s.name.as_str(), &s.states, s.version, s.is_air()),
            ("", &Tag::Compound(Vec::new()), Some(7), true)
        );
        assert_eq!(BlockState::from_root(Tag::Int(5)).name, "");
    }

    #[test]
    fn hostile_palettes() {
        // An index beyond the palette.
        let mut idx = vec![0u16; 4096];
        idx[0] = 3;
        let v = encode_subchunk_v9(0, &["a", "b", "c"], &idx);
        assert!(decode_subchunk(&v)
            .unwrap_err()
            .message()
            .contains("block index 3 outside a palette of 3"));
        // Two outside, the later one larger: the first is named.
        let mut idx = vec![0u16; 4096];
        idx[4000] = 5;
        idx[4095] = 7;
        let v = encode_subchunk_v9(0, &["a", "b", "c", "d", "e"], &idx);
        assert!(decode_subchunk(&v)
            .unwrap_err()
            .message()
            .contains("block index 5 outside a palette of 5"));
        // A palette count of 2^31-1.
        let mut v = vec![8, 1, 2];
        v.extend(vec![0u8; 4 * 4096 / 32]);
        v.extend_from_slice(&i32::MAX.to_le_bytes());
        assert!(decode_subchunk(&v)
            .unwrap_err()
            .message()
            .contains("palette of"));
        assert!(decode_subchunk(&[0]).is_err());
        assert!(decode_subchunk(&[9, 1, 0, 1]).is_err());
        assert!(decode_subchunk(&[42]).is_err());
    }
}
