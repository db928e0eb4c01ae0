//! Which LevelDB dialect a database is written in: Google's (Snappy id 1, Zstd id 2) or
//! Mojang's Bedrock fork (raw deflate id 4, zlib id 2), detected at open from the database
//! itself, so that writing never produces blocks the database's own readers cannot decode
//! (a Snappy table in a Bedrock world is silently skipped by the game's LevelDB).
//!
//! Signals, strongest first:
//! 1. The codecs of existing tables (the first data block of up to `SAMPLED_TABLES` live
//!    tables): id 4, or id 2 holding a zlib stream, only Mojang's fork writes; id 1, or id 2
//!    holding a Zstd frame, only Google's. A table of each kind (a world damaged by a tool that
//!    wrote Snappy into it) counts as Bedrock: only Mojang's fork reads its raw deflate.
//! 2. A `level.dat` in the folder or the folder above it (a world, or its `db/`).
//! 3. The keys of the logs (a world whose data is all in its log, opened as a bare `db/`):
//!    most of the first keys having Bedrock's shapes (chunk records, `~local_player`,
//!    `actorprefix…`, …) makes it Bedrock; otherwise nothing is concluded from keys.
//! 4. Nothing: an empty database has no dialect yet (the options decide).
//!
//! The MANIFEST's comparator name is the same in both (`leveldb.BytewiseComparator`), so it
//! tells nothing apart.

use crate::compress::CompressionType;
use crate::error::{Error, Result};
use crate::options::{Options, Profile};
use crate::storage::{join, Storage};
use crate::version::{TableCache, Version};

/// Tables whose first data block is sampled.
const SAMPLED_TABLES: usize = 8;

/// The detected dialect and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dialect {
    /// `None` when nothing in the database tells (an empty database without level.dat).
    pub profile: Option<Profile>,
    /// For people: e.g. "tables use raw deflate (id 4); level.dat beside the folder".
    pub reason: String,
}

/// Whether the LevelDB of `profile` decodes blocks written with `codec`.
pub fn readable_by(profile: Profile, codec: CompressionType) -> bool {
    match profile {
        Profile::Google => matches!(
            codec,
            CompressionType::None | CompressionType::Snappy | CompressionType::Zstd
        ),
        Profile::Bedrock => matches!(
            codec,
            CompressionType::None | CompressionType::Zlib | CompressionType::ZlibRaw
        ),
    }
}

fn profile_name(p: Profile) -> &'static str {
    match p {
        Profile::Google => "google",
        Profile::Bedrock => "bedrock",
    }
}

/// Detects the dialect of the database in `dir` whose current state is `version`.
pub fn detect(
    storage: &dyn Storage,
    dir: &str,
    version: &Version,
    table_cache: &TableCache,
    logs: &[String],
) -> Dialect {
    let mut mojang = Vec::new();
    let mut google = Vec::new();
    for (_, f) in version.all_files().take(SAMPLED_TABLES) {
        let Some(kind) = first_block_codec(table_cache, f.number, f.file_size) else {
            continue;
        };
        match kind {
            BlockKind::RawDeflate => mojang.push("raw deflate (id 4)"),
            BlockKind::Zlib => mojang.push("zlib (id 2)"),
            BlockKind::Snappy => google.push("Snappy (id 1)"),
            BlockKind::Zstd => google.push("Zstd (id 2)"),
            BlockKind::Stored => {}
        }
    }
    mojang.dedup();
    google.dedup();
    let level_dat = [join(dir, "level.dat"), join(&parent(dir), "level.dat")]
        .into_iter()
        .find(|p| storage.exists(p));
    let mut reasons = Vec::new();
    let profile = if !mojang.is_empty() {
        reasons.push(format!("tables use {}", mojang.join(", ")));
        if !google.is_empty() {
            reasons.push(format!(
                "some also use {} (written by another tool; only Mojang's LevelDB reads the rest)",
                google.join(", ")
            ));
        }
        Some(Profile::Bedrock)
    } else if !google.is_empty() {
        reasons.push(format!("tables use {}", google.join(", ")));
        Some(Profile::Google)
    } else if level_dat.is_some() {
        Some(Profile::Bedrock)
    } else {
        let (bedrock, sampled) = sample_log_keys(storage, logs);
        if sampled > 0 && bedrock * 2 > sampled {
            reasons.push(format!(
                "{bedrock} of the first {sampled} keys in the log have Bedrock's shapes"
            ));
            Some(Profile::Bedrock)
        } else {
            None
        }
    };
    if let Some(p) = &level_dat {
        reasons.push(format!("a Bedrock level.dat at {p}"));
    }
    if profile.is_none() {
        reasons.push("no table or level.dat tells (an empty database)".to_string());
    }
    Dialect {
        profile,
        reason: reasons.join("; "),
    }
}

/// Applies the detection to writable `options` (`detect_profile`), and refuses a block codec
/// the database's own dialect cannot read unless `allow_foreign_codec`.
pub fn settle(options: &mut Options, dir: &str, dialect: &Dialect) -> Result<()> {
    if options.read_only {
        return Ok(());
    }
    if options.detect_profile {
        if let Some(p) = dialect.profile {
            options.adopt_profile(p);
        }
    }
    let Some(own) = dialect.profile else {
        return Ok(());
    };
    if !readable_by(own, options.compression) && !options.allow_foreign_codec {
        return Err(Error::invalid_argument(format!(
            "{dir} is a {} database ({}): writing {:?} blocks (id {}) would make it unreadable \
             to its own LevelDB; open it with the {} profile (or no profile), or allow a \
             foreign codec explicitly",
            profile_name(own),
            dialect.reason,
            options.compression,
            options.compression.id(),
            profile_name(own),
        )));
    }
    Ok(())
}

/// Keys sampled from the logs.
const SAMPLED_KEYS: u64 = 200;

/// (keys with Bedrock's shapes, keys sampled) among the first keys of `logs` (paths).
fn sample_log_keys(storage: &dyn Storage, logs: &[String]) -> (u64, u64) {
    let (mut bedrock, mut sampled) = (0, 0);
    let mut record = Vec::new();
    for path in logs {
        let Ok(file) = storage.open_random(path) else {
            continue;
        };
        let mut reader = crate::log::Reader::new(file, String::new(), true, false);
        while sampled < SAMPLED_KEYS {
            match reader.read_record(&mut record) {
                Ok(true) => {}
                _ => break,
            }
            let Ok(batch) = crate::db::WriteBatch::from_contents(std::mem::take(&mut record))
            else {
                break;
            };
            let _ = batch.for_each_key(|key| {
                if sampled < SAMPLED_KEYS {
                    sampled += 1;
                    bedrock += u64::from(has_bedrock_shape(key));
                }
            });
            record = batch.into_contents();
        }
    }
    (bedrock, sampled)
}

/// Whether `key` has the shape of a Bedrock world's key (DESIGN §7): a chunk record key
/// (`x z [dimension] tag [y]` with a known tag byte) or one of the game's string keys.
pub fn has_bedrock_shape(key: &[u8]) -> bool {
    const NAMES: &[&[u8]] = &[
        b"~local_player",
        b"Overworld",
        b"Nether",
        b"TheEnd",
        b"BiomeData",
        b"mobevents",
        b"portals",
        b"scoreboard",
        b"AutonomousEntities",
        b"schedulerWT",
        b"dimension0",
        b"dimension1",
        b"dimension2",
        b"LevelChunkMetaDataDictionary",
        b"game_flatworldlayers",
        b"PosTrackDB-LastId",
        b"SST_SALOG",
        b"SST_WORD",
        b"SST_WORD_",
    ];
    const PREFIXES: &[&[u8]] = &[
        b"actorprefix",
        b"digp",
        b"player_",
        b"map_",
        b"VILLAGE_",
        b"structuretemplate",
        b"tickingarea_",
        b"PosTrackDB-",
    ];
    if NAMES.contains(&key) || PREFIXES.iter().any(|p| key.starts_with(p)) {
        return true;
    }
    let known_tag = |t: u8| (0x2B..=0x41).contains(&t) || t == 0x76 || t == 0x77;
    match key.len() {
        9 => known_tag(key[8]) && key[8] != 0x2F,
        10 => key[8] == 0x2F,
        13 | 14 => {
            let dim = i32::from_le_bytes([key[8], key[9], key[10], key[11]]);
            (dim == 1 || dim == 2)
                && if key.len() == 14 {
                    key[12] == 0x2F
                } else {
                    known_tag(key[12]) && key[12] != 0x2F
                }
        }
        _ => false,
    }
}

enum BlockKind {
    Stored,
    Snappy,
    Zlib,
    Zstd,
    RawDeflate,
}

/// The codec of a table's first data block, read from its trailer (and, for id 2, from the
/// block's first bytes: a zlib header or the Zstd magic).
fn first_block_codec(table_cache: &TableCache, number: u64, size: u64) -> Option<BlockKind> {
    let table = table_cache.table(number, size).ok()?;
    let handle = *table.data_handles().ok()?.first()?;
    let head = handle.size.min(4) as usize;
    let mut start = vec![0u8; head];
    let mut trailer = [0u8; 1];
    if table.read_raw_at(handle.offset, &mut start).ok()? != head
        || table
            .read_raw_at(handle.offset + handle.size, &mut trailer)
            .ok()?
            != 1
    {
        return None;
    }
    Some(match trailer[0] {
        0 => BlockKind::Stored,
        1 => BlockKind::Snappy,
        4 => BlockKind::RawDeflate,
        2 if start.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]) => BlockKind::Zstd,
        2 if start.len() >= 2
            && start[0] & 0x0F == 8
            && (u16::from(start[0]) << 8 | u16::from(start[1])) % 31 == 0 =>
        {
            BlockKind::Zlib
        }
        _ => return None,
    })
}

/// The folder above `dir` ("" → "..").
fn parent(dir: &str) -> String {
    let trimmed = dir.trim_end_matches('/');
    match trimmed.rfind('/') {
        Some(0) => "/".to_string(),
        Some(i) => trimmed[..i].to_string(),
        None if trimmed.is_empty() || trimmed == "." => "..".to_string(),
        None => ".".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bedrock_key_shapes() {
        let mut chunk = Vec::new();
        chunk.extend_from_slice(&3i32.to_le_bytes());
        chunk.extend_from_slice(&(-7i32).to_le_bytes());
        let mut version = chunk.clone();
        version.push(0x2C);
        assert!(has_bedrock_shape(&version));
        let mut sub = chunk.clone();
        sub.extend_from_slice(&[0x2F, 4]);
        assert!(has_bedrock_shape(&sub));
        let mut nether = chunk.clone();
        nether.extend_from_slice(&1i32.to_le_bytes());
        nether.push(0x2D);
        assert!(has_bedrock_shape(&nether));
        assert!(has_bedrock_shape(b"~local_player"));
        assert!(has_bedrock_shape(
            b"actorprefix\x00\x00\x00\x01\x00\x00\x00\x02"
        ));
        // db_bench's keys, and ordinary text, are not Bedrock's.
        assert!(!has_bedrock_shape(b"0000000000001234"));
        assert!(!has_bedrock_shape(b"key00001"));
        assert!(!has_bedrock_shape(b"abcdefgh\x2c"[..8].as_ref()));
    }

    #[test]
    fn parents() {
        assert_eq!(parent("w/db"), "w");
        assert_eq!(parent("/a/b/db/"), "/a/b");
        assert_eq!(parent("db"), ".");
        assert_eq!(parent("/db"), "/");
    }

    #[test]
    fn codecs_each_dialect_reads() {
        use CompressionType::*;
        for c in [None, Snappy, Zstd] {
            assert!(readable_by(Profile::Google, c));
        }
        for c in [None, Zlib, ZlibRaw] {
            assert!(readable_by(Profile::Bedrock, c));
        }
        assert!(!readable_by(Profile::Bedrock, Snappy));
        assert!(!readable_by(Profile::Bedrock, Zstd));
        assert!(!readable_by(Profile::Google, ZlibRaw));
        assert!(!readable_by(Profile::Google, Zlib));
    }
}
