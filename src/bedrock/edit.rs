//! Chunk deletion and pruning of a Bedrock world's db: every record of the chosen chunks of one
//! dimension, and the entities stored the modern way, go in one atomic `WriteBatch`.
//!
//! What belongs to chunk (x, z) of dimension d (the rule `delete_chunks` and `prune` share):
//! - every key `keys::classify_chunk` recognises as a record of (x, z, d) — every tag of
//!   `keys::tag_name`, SubChunkPrefix with any y byte;
//! - a *chunk-shaped* key of (x, z, d) with a tag byte keys.rs does not know (or a y byte on a
//!   tag that takes none): `x z tag [y]` (9/10 bytes, d = 0) or `x z d tag [y]` (13/14 bytes,
//!   d = 1 or 2), not a string key (`classify` is not Chunk/Other) — but only when (x, z, d)
//!   also has a recognised record or a `digp`. A lone chunk-shaped key on no known chunk is
//!   kept: 9- to 14-byte ASCII keys (`mVillages`, `dimension0`) are chunk-shaped by accident;
//! - its `digp` record (`digp` x z [d when d != 0]) and every `actorprefix` + id record that
//!   digp names, unless a kept chunk's digp names the same id too.
//!
//! Everything else (level data, players, villages, maps, globals, actors no digp names) is
//! never touched. Both operations scan the db once (a consistent iterator), collect the keys,
//! then write ONE batch: either every deletion is durable or none is.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use super::entities::{self, EntityInfo, EntityKind};
use super::keys::{classify, classify_chunk, is_version_record, scan_options, KeyKind};
use crate::db::WriteBatch;
use crate::error::{Error, Result};
use crate::{Db, WriteOptions};

/// One inclusive rectangle of chunk coordinates (normalised: x0 <= x1, z0 <= z1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Area {
    pub x0: i32,
    pub z0: i32,
    pub x1: i32,
    pub z1: i32,
}

impl Area {
    pub fn new(xa: i32, za: i32, xb: i32, zb: i32) -> Area {
        Area {
            x0: xa.min(xb),
            z0: za.min(zb),
            x1: xa.max(xb),
            z1: za.max(zb),
        }
    }

    pub fn contains(&self, x: i32, z: i32) -> bool {
        (self.x0..=self.x1).contains(&x) && (self.z0..=self.z1).contains(&z)
    }
}

/// A union of rectangles, written `x0,z0:x1,z1;x0,z0:x1,z1…` (inclusive chunk coordinates;
/// `x,z` alone is the single chunk).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    pub areas: Vec<Area>,
}

fn bad_selection(text: &str, msg: impl std::fmt::Display) -> Error {
    Error::invalid_argument(format!("selection {text:?}: {msg}"))
}

impl Selection {
    pub fn new(areas: Vec<Area>) -> Selection {
        Selection { areas }
    }

    /// Parses `x0,z0:x1,z1[;…]`. Whitespace around numbers is allowed; empty parts, missing
    /// or extra coordinates and numbers outside i32 are errors naming the part.
    pub fn parse(text: &str) -> Result<Selection> {
        let mut areas = Vec::new();
        for (i, part) in text.split(';').enumerate() {
            let part = part.trim();
            if part.is_empty() {
                if i > 0 && text.trim_end().ends_with(';') {
                    continue; // a trailing ';'
                }
                return Err(bad_selection(text, format!("rectangle {} is empty", i + 1)));
            }
            let corner = |s: &str| -> Result<(i32, i32)> {
                let nums: Vec<&str> = s.split(',').map(str::trim).collect();
                if nums.len() != 2 {
                    return Err(bad_selection(
                        text,
                        format!("{s:?} is not a corner `x,z` (rectangle {})", i + 1),
                    ));
                }
                let n = |v: &str| {
                    v.parse::<i32>().map_err(|_| {
                        bad_selection(
                            text,
                            format!("{v:?} is not a chunk coordinate (a 32-bit integer)"),
                        )
                    })
                };
                Ok((n(nums[0])?, n(nums[1])?))
            };
            let corners: Vec<&str> = part.split(':').collect();
            let area = match corners.as_slice() {
                [a] => {
                    let (x, z) = corner(a)?;
                    Area::new(x, z, x, z)
                }
                [a, b] => {
                    let ((xa, za), (xb, zb)) = (corner(a)?, corner(b)?);
                    Area::new(xa, za, xb, zb)
                }
                _ => {
                    return Err(bad_selection(
                        text,
                        format!("{part:?} has more than two corners"),
                    ))
                }
            };
            areas.push(area);
        }
        if areas.is_empty() {
            return Err(bad_selection(text, "no rectangle"));
        }
        Ok(Selection { areas })
    }

    pub fn contains(&self, x: i32, z: i32) -> bool {
        self.areas.iter().any(|a| a.contains(x, z))
    }
}

impl std::fmt::Display for Selection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, a) in self.areas.iter().enumerate() {
            if i > 0 {
                f.write_str(";")?;
            }
            write!(f, "{},{}:{},{}", a.x0, a.z0, a.x1, a.z1)?;
        }
        Ok(())
    }
}

/// What one edit deleted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EditReport {
    /// Distinct chunk positions (x, z) of the dimension whose records were deleted: the
    /// chunks (positions with a Version or LegacyVersion record, which the map draws and
    /// `keys::summarize` counts) and the stubs among them.
    pub chunks: u64,
    /// Of `chunks`, the positions with no Version or LegacyVersion record: the game's
    /// unfinished border chunks, most often a FinalizedState and an empty Entity record
    /// (3,445 of amulet_1_18_vanilla's 6,306 positions). Not drawn on the map, not counted
    /// as chunks by the summary: `chunks - stubs` is what those count.
    pub stubs: u64,
    /// Records deleted: chunk records, digp records and actorprefix records.
    pub records: u64,
    /// Key + value bytes of those records.
    pub bytes: u64,
    /// Entities deleted: `actorprefix` records, and compounds cut out of legacy Entity records.
    pub entities: u64,
    /// Records rewritten without some of their entities (a `digp` list, an Entity record).
    pub rewritten: u64,
    /// Chunk positions of the dimension left (stubs included, as in `chunks`).
    pub chunks_left: u64,
    /// Of `chunks_left`, the stubs.
    pub stubs_left: u64,
}

/// The dimension of a `digp` key and its (x, z).
fn digest_chunk(key: &[u8]) -> Option<(i32, i32, i32)> {
    let i = |at: usize| i32::from_le_bytes([key[at], key[at + 1], key[at + 2], key[at + 3]]);
    match key.len() {
        12 => Some((i(4), i(8), 0)),
        16 => Some((i(4), i(8), i(12))),
        _ => None,
    }
}

/// (x, z, dimension) of a chunk-shaped key (see the module comment), whatever its tag.
fn chunk_shape(key: &[u8]) -> Option<(i32, i32, i32)> {
    let i = |at: usize| i32::from_le_bytes([key[at], key[at + 1], key[at + 2], key[at + 3]]);
    match key.len() {
        9 | 10 => Some((i(0), i(4), 0)),
        13 | 14 => {
            let d = i(8);
            (1..=2).contains(&d).then(|| (i(0), i(4), d))
        }
        _ => None,
    }
}

/// A chunk's records: key and value length.
type Records = Vec<(Vec<u8>, usize)>;

/// Every record of a dimension, grouped by chunk: one scan.
#[derive(Default)]
struct ChunkIndex {
    /// (x, z) -> (key, value length) of its records (recognised ones and its digp).
    known: BTreeMap<(i32, i32), Records>,
    /// Chunk-shaped keys with unknown tags, by (x, z); attached only to known chunks.
    unknown: BTreeMap<(i32, i32), Records>,
    /// (x, z) -> the digp value of that chunk.
    digests: BTreeMap<(i32, i32), Vec<u8>>,
    /// The positions with a Version or LegacyVersion record (the others in `known` are stubs).
    versioned: BTreeSet<(i32, i32)>,
    /// Every actor id named by a digp of ANY dimension (for "named by a kept chunk" checks).
    all_digests: Vec<((i32, i32, i32), Vec<u8>)>,
    /// Existing actorprefix keys -> value length.
    actors: BTreeMap<Vec<u8>, usize>,
}

impl ChunkIndex {
    /// 1 for a stub (records, but no Version or LegacyVersion record), else 0.
    fn stub(&self, at: &(i32, i32)) -> u64 {
        u64::from(!self.versioned.contains(at))
    }
}

fn index(db: &Db, dimension: i32) -> Result<ChunkIndex> {
    let mut ix = ChunkIndex::default();
    let mut it = db.iter(&scan_options());
    it.seek_to_first();
    while it.valid() {
        let (k, v) = (it.key(), it.value());
        match classify(k) {
            KeyKind::Chunk(c) if c.dimension == dimension => {
                if is_version_record(&c) {
                    ix.versioned.insert((c.x, c.z));
                }
                ix.known
                    .entry((c.x, c.z))
                    .or_default()
                    .push((k.to_vec(), v.len()));
            }
            KeyKind::ActorDigest => {
                if let Some((x, z, d)) = digest_chunk(k) {
                    if d == dimension {
                        ix.known
                            .entry((x, z))
                            .or_default()
                            .push((k.to_vec(), v.len()));
                        ix.digests.insert((x, z), v.to_vec());
                    }
                    ix.all_digests.push(((x, z, d), v.to_vec()));
                }
            }
            KeyKind::Actor => {
                ix.actors.insert(k.to_vec(), v.len());
            }
            KeyKind::Other => {
                if let Some((x, z, d)) = chunk_shape(k) {
                    if d == dimension && classify_chunk(k).is_none() {
                        ix.unknown
                            .entry((x, z))
                            .or_default()
                            .push((k.to_vec(), v.len()));
                    }
                }
            }
            _ => {}
        }
        it.next();
    }
    it.status()?;
    Ok(ix)
}

fn actor_ids(digest: &[u8]) -> impl Iterator<Item = &[u8]> {
    // A trailing partial id (damaged value) names nothing.
    digest.chunks_exact(8)
}

fn actor_key(id: &[u8]) -> Vec<u8> {
    let mut k = b"actorprefix".to_vec();
    k.extend_from_slice(id);
    k
}

/// Deletes every record of the chunks of `dimension` for which `doomed(x, z)` holds (one
/// batch).
fn delete_where(db: &Db, dimension: i32, doomed: impl Fn(i32, i32) -> bool) -> Result<EditReport> {
    check_writable(db, false)?;
    let mut batch = WriteBatch::new();
    let report = delete_doomed(
        db,
        &[dimension],
        |d, x, z| d == dimension && doomed(x, z),
        &mut batch,
    )?;
    write_synced(db, batch)?;
    Ok(report)
}

fn check_writable(db: &Db, dry_run: bool) -> Result<()> {
    if db.options().read_only && !dry_run {
        return Err(Error::not_supported(
            "the world is open read-only: open it writable to edit it",
        ));
    }
    Ok(())
}

fn write_synced(db: &Db, batch: WriteBatch) -> Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    db.write(
        &WriteOptions {
            sync: true,
            ..WriteOptions::default()
        },
        batch,
    )
}

/// Adds to `batch` the deletion of every record of the chunks of `dimensions` for which
/// `doomed(dimension, x, z)` holds: chunk records, their digp, and each actorprefix entity a
/// doomed digp names that no surviving digp (of any dimension) names. `chunks_left` counts
/// the chunks left in `dimensions`.
fn delete_doomed(
    db: &Db,
    dimensions: &[i32],
    doomed: impl Fn(i32, i32, i32) -> bool,
    batch: &mut WriteBatch,
) -> Result<EditReport> {
    for &d in dimensions {
        check_dimension(d)?;
    }
    let mut report = EditReport::default();
    let mut deleted_actors = BTreeSet::new();
    for &dimension in dimensions {
        let ix = index(db, dimension)?;
        let mut kept_ids: HashSet<&[u8]> = HashSet::new();
        for ((x, z, d), v) in &ix.all_digests {
            if !(dimensions.contains(d) && doomed(*d, *x, *z)) {
                kept_ids.extend(actor_ids(v));
            }
        }
        for (&(x, z), records) in &ix.known {
            let stub = ix.stub(&(x, z));
            if !doomed(dimension, x, z) {
                report.chunks_left += 1;
                report.stubs_left += stub;
                continue;
            }
            report.chunks += 1;
            report.stubs += stub;
            let extra = ix.unknown.get(&(x, z)).map(Vec::as_slice).unwrap_or(&[]);
            for (k, vlen) in records.iter().chain(extra) {
                batch.delete(k);
                report.records += 1;
                report.bytes += (k.len() + vlen) as u64;
            }
            if let Some(digest) = ix.digests.get(&(x, z)) {
                for id in actor_ids(digest) {
                    if kept_ids.contains(id) {
                        continue;
                    }
                    let k = actor_key(id);
                    if let Some(vlen) = ix.actors.get(&k) {
                        if deleted_actors.insert(k.clone()) {
                            batch.delete(&k);
                            report.records += 1;
                            report.entities += 1;
                            report.bytes += (k.len() + vlen) as u64;
                        }
                    }
                }
            }
        }
    }
    Ok(report)
}

/// One staged edit (the page's undo/redo list): delete the chunks of `area`, or keep only the
/// chunks of `keep`, in `dimension`; or delete entities (never block entities): those of
/// `area` (with `identifier`, only those), or the one at compound `root` of record `key`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChunkEdit {
    Delete {
        dimension: i32,
        area: Selection,
    },
    Keep {
        dimension: i32,
        keep: Selection,
    },
    Entities {
        dimension: i32,
        area: Selection,
        identifier: Option<String>,
    },
    Entity {
        dimension: i32,
        key: Vec<u8>,
        root: usize,
        /// The identifier it had when staged: the edit is refused if the compound now holds
        /// another entity (its record was rewritten meanwhile).
        identifier: Option<String>,
    },
}

impl ChunkEdit {
    fn dimension(&self) -> i32 {
        match self {
            ChunkEdit::Delete { dimension, .. }
            | ChunkEdit::Keep { dimension, .. }
            | ChunkEdit::Entities { dimension, .. }
            | ChunkEdit::Entity { dimension, .. } => *dimension,
        }
    }

    fn dooms(&self, dimension: i32, x: i32, z: i32) -> bool {
        match self {
            ChunkEdit::Delete { dimension: d, area } => *d == dimension && area.contains(x, z),
            ChunkEdit::Keep { dimension: d, keep } => *d == dimension && !keep.contains(x, z),
            ChunkEdit::Entities { .. } | ChunkEdit::Entity { .. } => false,
        }
    }

    /// Whether this entity edit deletes entity `e` (of dimension `dimension`).
    fn takes(&self, dimension: i32, e: &EntityInfo) -> bool {
        if e.kind == EntityKind::BlockEntity {
            return false;
        }
        match self {
            ChunkEdit::Entities {
                dimension: d,
                area,
                identifier,
            } => {
                *d == dimension
                    && area.contains(e.chunk.0, e.chunk.1)
                    && identifier.as_deref().is_none_or(|id| e.identifier == id)
            }
            ChunkEdit::Entity {
                dimension: d,
                key,
                root,
                identifier,
            } => {
                *d == dimension
                    && e.key == *key
                    && e.root == *root
                    && identifier.as_deref().is_none_or(|id| e.identifier == id)
            }
            ChunkEdit::Delete { .. } | ChunkEdit::Keep { .. } => false,
        }
    }

    /// One edit per line of [`apply_edits`]' text: `delete DIM AREAS`, `keep DIM AREAS`,
    /// `entities DIM IDENTIFIER|* AREAS` (`*`: any identifier), `entity DIM KEYHEX ROOT
    /// [IDENTIFIER]`.
    /// AREAS is the rest of the line (spaces inside it are allowed).
    pub fn parse(line: &str) -> Result<ChunkEdit> {
        let bad = || {
            Error::invalid_argument(format!(
                "{line:?} is not an edit: `delete DIMENSION AREAS`, `keep DIMENSION AREAS`, \
                 `entities DIMENSION IDENTIFIER|* AREAS` or `entity DIMENSION KEYHEX ROOT [IDENTIFIER]`"
            ))
        };
        let mut parts = line.trim().splitn(3, char::is_whitespace);
        let (kind, dim, rest) = (parts.next(), parts.next(), parts.next());
        let dimension: i32 = dim.ok_or_else(bad)?.parse().map_err(|_| bad())?;
        check_dimension(dimension)?;
        let rest = rest.ok_or_else(bad)?.trim();
        match kind {
            Some("delete") => Ok(ChunkEdit::Delete {
                dimension,
                area: Selection::parse(rest)?,
            }),
            Some("keep") => Ok(ChunkEdit::Keep {
                dimension,
                keep: Selection::parse(rest)?,
            }),
            Some("entities") => {
                let (id, areas) = rest.split_once(char::is_whitespace).ok_or_else(bad)?;
                Ok(ChunkEdit::Entities {
                    dimension,
                    area: Selection::parse(areas.trim())?,
                    identifier: (id != "*").then(|| id.to_string()),
                })
            }
            Some("entity") => {
                let mut t = rest.split_whitespace();
                let (key, root, identifier, more) = (t.next(), t.next(), t.next(), t.next());
                if more.is_some() {
                    return Err(bad());
                }
                let key = unhex(key.ok_or_else(bad)?).ok_or_else(bad)?;
                let root = root.ok_or_else(bad)?.parse().map_err(|_| bad())?;
                Ok(ChunkEdit::Entity {
                    dimension,
                    key,
                    root,
                    identifier: identifier.map(str::to_string),
                })
            }
            _ => Err(bad()),
        }
    }
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || s.is_empty() {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Applies staged edits as ONE atomic batch (or with `dry_run` only counts what they would
/// delete): a chunk goes when any chunk edit dooms it, an entity when any entity edit takes it
/// and its chunk stays (a doomed chunk's entities go with it), so the result equals applying
/// the edits one after another. A `Keep` whose selection holds no chunk of its dimension is
/// refused (it would empty the dimension), and so is an empty list; an `Entity` edit naming
/// no entity is `NotFound`.
pub fn apply_edits(db: &Db, edits: &[ChunkEdit], dry_run: bool) -> Result<EditReport> {
    if edits.is_empty() {
        return Err(Error::invalid_argument("no edits to apply"));
    }
    check_writable(db, dry_run)?;
    let chunk_edits: Vec<&ChunkEdit> = edits
        .iter()
        .filter(|e| matches!(e, ChunkEdit::Delete { .. } | ChunkEdit::Keep { .. }))
        .collect();
    let entity_edits: Vec<&ChunkEdit> = edits
        .iter()
        .filter(|e| matches!(e, ChunkEdit::Entities { .. } | ChunkEdit::Entity { .. }))
        .collect();
    let dims = |list: &[&ChunkEdit]| {
        let mut d: Vec<i32> = list.iter().map(|e| e.dimension()).collect();
        d.sort_unstable();
        d.dedup();
        d
    };
    let dimensions = dims(&chunk_edits);
    for e in &chunk_edits {
        if let ChunkEdit::Keep { dimension, keep } = e {
            if !chunks_of(db, *dimension)?
                .into_iter()
                .any(|(x, z)| keep.contains(x, z))
            {
                return Err(Error::invalid_argument(format!(
                    "no chunk of dimension {dimension} in the selection {keep}: keeping it \
                     would delete every chunk of the dimension"
                )));
            }
        }
    }
    let doomed = |d, x, z| chunk_edits.iter().any(|e| e.dooms(d, x, z));
    let mut batch = WriteBatch::new();
    let mut report = delete_doomed(db, &dimensions, doomed, &mut batch)?;
    for dimension in dims(&entity_edits) {
        if !dimensions.contains(&dimension) {
            let ix = index(db, dimension)?;
            report.chunks_left += ix.known.len() as u64;
            report.stubs_left += ix.known.keys().map(|p| ix.stub(p)).sum::<u64>();
        }
        let list = entities::entities(db, dimension)?;
        for e in &entity_edits {
            if let ChunkEdit::Entity {
                dimension: d,
                key,
                root,
                identifier,
            } = e
            {
                let found = list.entities.iter().any(|x| e.takes(dimension, x));
                if *d == dimension && !found {
                    let hex = key.iter().map(|b| format!("{b:02x}")).collect::<String>();
                    let what = identifier
                        .as_deref()
                        .map_or(String::new(), |id| format!(" {id}"));
                    return Err(Error::not_found(format!(
                        "no entity{what} at compound {root} of key {hex} in dimension \
                         {dimension} (gone, or its record changed since the edit was staged)"
                    )));
                }
            }
        }
        let taken: Vec<&EntityInfo> = list
            .entities
            .iter()
            .filter(|x| entity_edits.iter().any(|e| e.takes(dimension, x)))
            .filter(|x| !doomed(dimension, x.chunk.0, x.chunk.1))
            .collect();
        let r = entities::delete_into(db, dimension, &taken, &mut batch)?;
        report.entities += r.entities;
        report.records += r.records_deleted;
        report.rewritten += r.records_rewritten;
        report.bytes += r.bytes;
    }
    if !dry_run {
        write_synced(db, batch)?;
    }
    Ok(report)
}

fn check_dimension(dimension: i32) -> Result<()> {
    if (0..=2).contains(&dimension) {
        Ok(())
    } else {
        Err(Error::invalid_argument(format!(
            "dimension must be 0, 1 or 2, not {dimension}"
        )))
    }
}

/// Deletes every record of the chunks of `dimension` inside `area` (see the module comment).
/// A selection holding no chunk of the dimension is an error and writes nothing.
pub fn delete_chunks(db: &Db, dimension: i32, area: &Selection) -> Result<EditReport> {
    let report = delete_where(db, dimension, |x, z| area.contains(x, z))?;
    if report.chunks == 0 {
        return Err(Error::invalid_argument(format!(
            "no chunk of dimension {dimension} in the selection {area}"
        )));
    }
    Ok(report)
}

/// Keeps only the chunks of `dimension` inside `keep`; deletes every other chunk of that
/// dimension (see the module comment). Other dimensions and non-chunk records are kept.
/// Keeping no chunk at all is refused (nothing written) unless `allow_empty`.
pub fn prune(db: &Db, dimension: i32, keep: &Selection, allow_empty: bool) -> Result<EditReport> {
    check_dimension(dimension)?;
    if !allow_empty {
        // Check before writing: a keep-set matching nothing would empty the dimension.
        let ix_keeps = chunks_of(db, dimension)?
            .into_iter()
            .any(|(x, z)| keep.contains(x, z));
        if !ix_keeps {
            return Err(Error::invalid_argument(format!(
                "no chunk of dimension {dimension} in the selection {keep}: pruning would delete \
                 every chunk of the dimension (force it to allow that)"
            )));
        }
    }
    delete_where(db, dimension, |x, z| !keep.contains(x, z))
}

/// Every chunk (x, z) of `dimension` in the sense of this module: having a recognised chunk
/// record or a digp. Ascending.
pub fn chunks_of(db: &Db, dimension: i32) -> Result<Vec<(i32, i32)>> {
    check_dimension(dimension)?;
    Ok(index(db, dimension)?.known.into_keys().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selections_parse_and_refuse_garbage() {
        let s = Selection::parse("1,2:-3,4; 5 , 6 ;7,7:7,7;").unwrap();
        assert_eq!(
            s.areas,
            vec![
                Area::new(-3, 2, 1, 4),
                Area::new(5, 6, 5, 6),
                Area::new(7, 7, 7, 7)
            ]
        );
        assert!(s.contains(-3, 4) && s.contains(0, 3) && s.contains(5, 6));
        assert!(!s.contains(2, 3) && !s.contains(-4, 3));
        assert_eq!(s.to_string(), "-3,2:1,4;5,6:5,6;7,7:7,7");
        for (bad, says) in [
            ("", "rectangle 1 is empty"),
            (";", "rectangle 1 is empty"),
            ("1,2:3", "\"3\" is not a corner"),
            ("1,2,3:4,5", "is not a corner"),
            ("a,2:3,4", "\"a\" is not a chunk coordinate"),
            ("1,2:3,4:5,6", "more than two corners"),
            ("1,2;;3,4", "rectangle 2 is empty"),
            (
                "3000000000,0:1,1",
                "\"3000000000\" is not a chunk coordinate",
            ),
        ] {
            let e = Selection::parse(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }

    #[test]
    fn chunk_shapes() {
        let mut k = 5i32.to_le_bytes().to_vec();
        k.extend_from_slice(&(-2i32).to_le_bytes());
        k.push(0x99);
        assert_eq!(chunk_shape(&k), Some((5, -2, 0)));
        let mut k13 = k[..8].to_vec();
        k13.extend_from_slice(&1i32.to_le_bytes());
        k13.push(0x99);
        assert_eq!(chunk_shape(&k13), Some((5, -2, 1)));
        k13[8] = 3;
        assert_eq!(chunk_shape(&k13), None);
        assert_eq!(
            chunk_shape(b"mVillages"),
            Some((0x6c69_566d, 0x6567_616c, 0))
        );
        assert_eq!(
            digest_chunk(b"digp\x01\0\0\0\xfe\xff\xff\xff"),
            Some((1, -2, 0))
        );
    }
}
