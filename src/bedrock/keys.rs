//! What a Bedrock db key names (DESIGN §7): a chunk record (x, z, dimension, tag byte, and for
//! SubChunkPrefix the subchunk y) or one of the string keys (players, actors, villages, maps,
//! global records). String keys are recognised first: `map_12345` has a chunk key's length.
//!
//! A chunk key is `x i32 LE, z i32 LE, [dimension i32 LE], tag, [y i8]`, 9/10/13/14 bytes;
//! only a known tag byte (and the y byte only for tag 0x2F) makes a key a chunk key, and an
//! explicit dimension must be 0, 1 or 2. Everything else is `KeyKind::Other`.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::Result;
use crate::{Db, ReadOptions};

pub const TAG_DATA3D: u8 = 0x2B;
pub const TAG_VERSION: u8 = 0x2C;
pub const TAG_DATA2D: u8 = 0x2D;
pub const TAG_DATA2D_LEGACY: u8 = 0x2E;
pub const TAG_SUBCHUNK: u8 = 0x2F;
pub const TAG_LEGACY_TERRAIN: u8 = 0x30;
pub const TAG_LEGACY_VERSION: u8 = 0x76;

/// The name of a chunk record tag, `None` for a byte that is not one.
pub fn tag_name(tag: u8) -> Option<&'static str> {
    Some(match tag {
        0x2B => "Data3D",
        0x2C => "Version",
        0x2D => "Data2D",
        0x2E => "Data2DLegacy",
        0x2F => "SubChunkPrefix",
        0x30 => "LegacyTerrain",
        0x31 => "BlockEntity",
        0x32 => "Entity",
        0x33 => "PendingTicks",
        0x34 => "BlockExtraData",
        0x35 => "BiomeState",
        0x36 => "FinalizedState",
        0x37 => "ConversionData",
        0x38 => "BorderBlocks",
        0x39 => "HardcodedSpawners",
        0x3A => "RandomTicks",
        0x3B => "Checksums",
        0x3C => "GenerationSeed",
        0x3D => "GeneratedPreCavesAndCliffsBlending",
        0x3E => "BlendingBiomeHeight",
        0x3F => "MetaDataHash",
        0x40 => "BlendingData",
        0x41 => "ActorDigestVersion",
        0x76 => "LegacyVersion",
        0x77 => "AabbVolumes",
        _ => return None,
    })
}

/// A chunk record's coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ChunkKey {
    pub x: i32,
    pub z: i32,
    /// 0 Overworld (no dimension field in the key), 1 Nether, 2 End.
    pub dimension: i32,
    pub tag: u8,
    /// The subchunk index, for SubChunkPrefix records only.
    pub subchunk: Option<i8>,
}

impl ChunkKey {
    /// The key bytes of this record.
    pub fn encode(&self) -> Vec<u8> {
        let mut k = chunk_prefix(self.x, self.z, self.dimension);
        k.push(self.tag);
        if let Some(y) = self.subchunk {
            k.push(y as u8);
        }
        k
    }
}

/// `x z [dimension]`: the common prefix of a chunk's keys (dimension 0 is not written).
pub fn chunk_prefix(x: i32, z: i32, dimension: i32) -> Vec<u8> {
    let mut k = Vec::with_capacity(14);
    k.extend_from_slice(&x.to_le_bytes());
    k.extend_from_slice(&z.to_le_bytes());
    if dimension != 0 {
        k.extend_from_slice(&dimension.to_le_bytes());
    }
    k
}

/// The key of one chunk record.
pub fn chunk_key(x: i32, z: i32, dimension: i32, tag: u8, subchunk: Option<i8>) -> Vec<u8> {
    ChunkKey {
        x,
        z,
        dimension,
        tag,
        subchunk,
    }
    .encode()
}

/// What a key is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyKind {
    Chunk(ChunkKey),
    /// `~local_player`
    LocalPlayer,
    /// `player_server_*`
    PlayerServer,
    /// `player_*` (other than `player_server_*`)
    Player,
    /// `actorprefix` + 8-byte id
    Actor,
    /// `digp` + x, z [, dimension]: the actor ids of a chunk
    ActorDigest,
    /// `VILLAGE_*`
    Village,
    /// `map_*`
    Map,
    /// `structuretemplate_*`
    StructureTemplate,
    /// `tickingarea_*`
    TickingArea,
    /// A single global record: `portals`, `scoreboard`, `BiomeData`, `Overworld`, …
    Global(&'static str),
    Other,
}

const GLOBALS: [&str; 14] = [
    "portals",
    "scoreboard",
    "mobevents",
    "BiomeData",
    "AutonomousEntities",
    "Overworld",
    "Nether",
    "TheEnd",
    "LevelChunkMetaDataDictionary",
    "schedulerWT",
    "game_flatworldlayers",
    "dimension0",
    "dimension1",
    "dimension2",
];

/// Classifies one key.
pub fn classify(key: &[u8]) -> KeyKind {
    if let Some(kind) = classify_string(key) {
        return kind;
    }
    classify_chunk(key).map_or(KeyKind::Other, KeyKind::Chunk)
}

fn classify_string(key: &[u8]) -> Option<KeyKind> {
    let prefixed: [(&[u8], KeyKind); 9] = [
        (b"~local_player", KeyKind::LocalPlayer),
        (b"player_server_", KeyKind::PlayerServer),
        (b"player_", KeyKind::Player),
        (b"actorprefix", KeyKind::Actor),
        (b"VILLAGE_", KeyKind::Village),
        (b"map_", KeyKind::Map),
        (b"structuretemplate_", KeyKind::StructureTemplate),
        (b"tickingarea_", KeyKind::TickingArea),
        (b"digp", KeyKind::ActorDigest),
    ];
    for (prefix, kind) in prefixed {
        if key.starts_with(prefix) {
            // `digp` is followed by 8 or 12 binary bytes; anything else is not a digest.
            if kind == KeyKind::ActorDigest && !matches!(key.len(), 12 | 16) {
                continue;
            }
            return Some(kind);
        }
    }
    GLOBALS
        .iter()
        .find(|g| g.as_bytes() == key)
        .map(|g| KeyKind::Global(g))
}

fn i32_at(key: &[u8], at: usize) -> i32 {
    i32::from_le_bytes([key[at], key[at + 1], key[at + 2], key[at + 3]])
}

/// Parses a chunk key (without the string-key check).
pub fn classify_chunk(key: &[u8]) -> Option<ChunkKey> {
    let (dimension, tag_at) = match key.len() {
        9 | 10 => (0, 8),
        13 | 14 => (i32_at(key, 8), 12),
        _ => return None,
    };
    let tag = key[tag_at];
    tag_name(tag)?;
    if !(0..=2).contains(&dimension) {
        return None;
    }
    let has_y = key.len() == tag_at + 2;
    if has_y != (tag == TAG_SUBCHUNK) {
        return None;
    }
    Some(ChunkKey {
        x: i32_at(key, 0),
        z: i32_at(key, 4),
        dimension,
        tag,
        subchunk: has_y.then(|| key[tag_at + 1] as i8),
    })
}

impl KeyKind {
    /// The row label of a summary: `chunk:<tag name>` for chunk records.
    pub fn label(&self) -> String {
        match self {
            KeyKind::Chunk(c) => format!("chunk:{}", tag_name(c.tag).unwrap_or("?")),
            KeyKind::LocalPlayer => "~local_player".into(),
            KeyKind::PlayerServer => "player_server".into(),
            KeyKind::Player => "player".into(),
            KeyKind::Actor => "actorprefix".into(),
            KeyKind::ActorDigest => "digp".into(),
            KeyKind::Village => "VILLAGE".into(),
            KeyKind::Map => "map".into(),
            KeyKind::StructureTemplate => "structuretemplate".into(),
            KeyKind::TickingArea => "tickingarea".into(),
            KeyKind::Global(name) => (*name).into(),
            KeyKind::Other => "other".into(),
        }
    }
}

/// Count and bytes of a group of entries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KindStats {
    pub count: u64,
    pub key_bytes: u64,
    pub value_bytes: u64,
}

impl KindStats {
    fn add(&mut self, key: usize, value: usize) {
        self.count += 1;
        self.key_bytes += key as u64;
        self.value_bytes += value as u64;
    }
}

/// Every live entry of a world grouped by kind, plus its chunks per dimension.
#[derive(Clone, Debug, Default)]
pub struct KeySummary {
    /// By `KeyKind::label()`.
    pub by_kind: BTreeMap<String, KindStats>,
    pub total: KindStats,
    /// Distinct (x, z) having a Version (0x2C) or LegacyVersion (0x76) record, per dimension.
    pub chunks: BTreeMap<i32, u64>,
}

/// True for a key naming a chunk's Version or LegacyVersion record.
pub fn is_version_record(c: &ChunkKey) -> bool {
    c.tag == TAG_VERSION || c.tag == TAG_LEGACY_VERSION
}

/// One pass over the whole database.
pub fn summarize(db: &Db) -> Result<KeySummary> {
    let mut summary = KeySummary::default();
    let mut chunks = BTreeSet::new();
    let mut it = db.iter(&scan_options());
    it.seek_to_first();
    while it.valid() {
        let (k, v) = (it.key(), it.value());
        let kind = classify(k);
        if let KeyKind::Chunk(c) = kind {
            if is_version_record(&c) {
                chunks.insert((c.dimension, c.x, c.z));
            }
        }
        summary.total.add(k.len(), v.len());
        summary
            .by_kind
            .entry(kind.label())
            .or_default()
            .add(k.len(), v.len());
        it.next();
    }
    it.status()?;
    for (dim, _, _) in chunks {
        *summary.chunks.entry(dim).or_default() += 1;
    }
    Ok(summary)
}

/// The (x, z) of every chunk of `dimension` having a Version or LegacyVersion record, in
/// ascending (x, z) order.
pub fn chunk_positions(db: &Db, dimension: i32) -> Result<Vec<(i32, i32)>> {
    let mut found = Vec::new();
    let mut it = db.iter(&scan_options());
    it.seek_to_first();
    while it.valid() {
        let k = it.key();
        // Every other key is passed over unparsed (most of a world: subchunks, entities, digests).
        if matches!(record_tag(k), Some(TAG_VERSION | TAG_LEGACY_VERSION)) {
            if let KeyKind::Chunk(c) = classify(k) {
                if c.dimension == dimension && is_version_record(&c) {
                    found.push((c.x, c.z));
                }
            }
        }
        it.next();
    }
    it.status()?;
    // Keys are in byte order (little-endian coordinates), and a chunk may have both a Version
    // and a LegacyVersion record.
    found.sort_unstable();
    found.dedup();
    Ok(found)
}

/// The last byte of a key shaped like a chunk record without a subchunk byte (9 or 13 bytes:
/// Version, Data3D, Data2D, …), read without parsing the key; `None` for other lengths. A
/// cheap filter before `classify` in passes over every key.
pub fn record_tag(k: &[u8]) -> Option<u8> {
    matches!(k.len(), 9 | 13).then(|| k[k.len() - 1])
}

/// Whole-db passes do not fill the block cache, and natively their blocks are decoded ahead of
/// the cursor on the readahead threads (`Options::readahead_threads`). In wasm a pass made in
/// one engine call lends nothing, so its cursor decodes every run itself; the chunk list with
/// relief samples runs in steps (`relief_index::ReliefPass`) so that decode workers can help.
pub(crate) fn scan_options() -> ReadOptions {
    ReadOptions {
        fill_cache: false,
        readahead: true,
        ..ReadOptions::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_string_keys_first() {
        assert_eq!(classify(b"map_12345"), KeyKind::Map);
        assert_eq!(classify(b"~local_player"), KeyKind::LocalPlayer);
        assert_eq!(classify(b"player_server_ab-cd"), KeyKind::PlayerServer);
        assert_eq!(classify(b"player_1234"), KeyKind::Player);
        assert_eq!(classify(b"VILLAGE_x_INFO"), KeyKind::Village);
        assert_eq!(classify(b"BiomeData"), KeyKind::Global("BiomeData"));
        assert_eq!(classify(b"actorprefix\0\0\0\0\0\0\0\x01"), KeyKind::Actor);
        assert_eq!(classify(b"digp\x01\0\0\0\x02\0\0\0"), KeyKind::ActorDigest);
        assert_eq!(classify(b"nonsense"), KeyKind::Other);
    }

    #[test]
    fn classifies_chunk_keys() {
        let k = chunk_key(-3, 7, 0, TAG_VERSION, None);
        assert_eq!(k.len(), 9);
        assert_eq!(
            classify(&k),
            KeyKind::Chunk(ChunkKey {
                x: -3,
                z: 7,
                dimension: 0,
                tag: TAG_VERSION,
                subchunk: None
            })
        );
        let k = chunk_key(1, -1, 2, TAG_SUBCHUNK, Some(-4));
        assert_eq!(k.len(), 14);
        match classify(&k) {
            KeyKind::Chunk(c) => {
                assert_eq!((c.x, c.z, c.dimension, c.subchunk), (1, -1, 2, Some(-4)))
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            classify(&chunk_key(0, 0, 1, TAG_LEGACY_VERSION, None)).label(),
            "chunk:LegacyVersion"
        );
        // A y byte on a non-subchunk tag, an unknown tag, a bad dimension: not chunks.
        assert_eq!(
            classify(&[0, 0, 0, 0, 0, 0, 0, 0, TAG_VERSION, 1]),
            KeyKind::Other
        );
        assert_eq!(classify(&[0, 0, 0, 0, 0, 0, 0, 0, 0x20]), KeyKind::Other);
        assert_eq!(
            classify(&chunk_key(0, 0, 7, TAG_VERSION, None)),
            KeyKind::Other
        );
        assert_eq!(
            classify(&[0, 0, 0, 0, 0, 0, 0, 0, TAG_SUBCHUNK]),
            KeyKind::Other
        );
    }
}
