//! Entities and block entities of a dimension: what and where they are (map markers, the
//! editor's entity list) and deleting entities.
//!
//! Where Bedrock keeps them:
//! - modern actors (1.18.30+): `digp` + chunk x, z [, dimension] lists 8-byte actor ids; each
//!   id's NBT is the record `actorprefix` + id (`identifier` "minecraft:cow", `Pos` floats);
//! - older worlds: the chunk record Entity (tag 0x32), concatenated NBT compounds (`identifier`,
//!   or a numeric `id` in the oldest worlds, and `Pos`);
//! - block entities: the chunk record BlockEntity (tag 0x31), concatenated compounds (`id`
//!   "Chest", `x`, `y`, `z`). They are listed, never deleted here (a block entity belongs to
//!   its block; deleting chunks removes both).
//!
//! Deleting entities writes ONE batch: each doomed actor's `actorprefix` record goes and its
//! id leaves its digp (the digp goes when no id is left); a doomed compound of an Entity
//! record is cut out by its byte range (the other compounds keep their bytes exactly; the
//! record goes when none is left). An unreadable record is reported, never rewritten.

use std::collections::{BTreeMap, BTreeSet};

use super::edit::Selection;
use super::keys::{classify, scan_options, KeyKind};
use super::nbt::{self, Tag};
use crate::db::WriteBatch;
use crate::error::{Error, Result};
use crate::{Db, ReadOptions, WriteOptions};

const TAG_BLOCK_ENTITY: u8 = 0x31;
const TAG_ENTITY: u8 = 0x32;

/// Where an entity is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum EntityKind {
    /// `actorprefix` + id, named by a `digp`.
    Actor,
    /// A compound of a chunk's Entity record (0x32).
    ChunkEntity,
    /// A compound of a chunk's BlockEntity record (0x31).
    BlockEntity,
}

impl EntityKind {
    pub fn name(self) -> &'static str {
        match self {
            EntityKind::Actor => "actor",
            EntityKind::ChunkEntity => "entity",
            EntityKind::BlockEntity => "block entity",
        }
    }
}

/// One entity or block entity.
#[derive(Clone, Debug, PartialEq)]
pub struct EntityInfo {
    pub kind: EntityKind,
    /// The record holding it (`actorprefix…`, or the chunk's Entity/BlockEntity key).
    pub key: Vec<u8>,
    /// Which compound of the record (0 for actors).
    pub root: usize,
    /// `minecraft:cow`, `Chest`, or `id:NN` for a numeric legacy id; `?` when it has none.
    pub identifier: String,
    /// Block coordinates (x, y, z); entities keep their fractional position.
    pub pos: [f64; 3],
    /// The chunk that stores it.
    pub chunk: (i32, i32),
}

/// What listing found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EntityList {
    pub entities: Vec<EntityInfo>,
    /// Records (or actor ids named by a digp) that did not decode or have no position.
    pub unreadable: u64,
}

fn identifier(tag: &Tag, kind: EntityKind) -> String {
    let field = if kind == EntityKind::BlockEntity {
        "id"
    } else {
        "identifier"
    };
    if let Some(s) = tag.get(field).and_then(Tag::as_str) {
        return s.to_string();
    }
    if let Some(n) = tag.get("id").and_then(Tag::as_i64) {
        return format!("id:{}", n & 0xff);
    }
    "?".to_string()
}

fn position(tag: &Tag, kind: EntityKind) -> Option<[f64; 3]> {
    if kind == EntityKind::BlockEntity {
        let c = |n| tag.get(n).and_then(Tag::as_i64).map(|v| v as f64);
        return Some([c("x")?, c("y")?, c("z")?]);
    }
    match tag.get("Pos")? {
        Tag::List(_, items) if items.len() == 3 => {
            let mut p = [0.0; 3];
            for (slot, item) in p.iter_mut().zip(items) {
                *slot = match item {
                    Tag::Float(f) => *f as f64,
                    Tag::Double(d) => *d,
                    _ => return None,
                };
            }
            p.iter().all(|v| v.is_finite()).then_some(p)
        }
        _ => None,
    }
}

/// The byte ranges of a record's concatenated NBT roots and the roots; `None` when any does
/// not decode.
fn roots(value: &[u8]) -> Option<Vec<(std::ops::Range<usize>, Tag)>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < value.len() {
        let start = pos;
        let root = nbt::read_root(value, &mut pos).ok()?;
        if pos <= start {
            return None;
        }
        out.push((start..pos, root.1));
    }
    Some(out)
}

/// The (x, z, dimension) of a `digp` key.
fn digp_chunk(key: &[u8]) -> Option<(i32, i32, i32)> {
    let i = |at: usize| i32::from_le_bytes([key[at], key[at + 1], key[at + 2], key[at + 3]]);
    match key.len() {
        12 => Some((i(4), i(8), 0)),
        16 => Some((i(4), i(8), i(12))),
        _ => None,
    }
}

fn actor_key(id: &[u8]) -> Vec<u8> {
    [b"actorprefix".as_slice(), id].concat()
}

/// Every entity and block entity of `dimension`, sorted by kind, chunk, key and root.
pub fn entities(db: &Db, dimension: i32) -> Result<EntityList> {
    let mut list = EntityList::default();
    let mut it = db.iter(&scan_options());
    it.seek_to_first();
    let mut digests: Vec<((i32, i32), Vec<u8>)> = Vec::new();
    while it.valid() {
        let (k, v) = (it.key(), it.value());
        match classify(k) {
            KeyKind::ActorDigest => {
                if let Some((x, z, d)) = digp_chunk(k) {
                    if d == dimension {
                        digests.push(((x, z), v.to_vec()));
                    }
                }
            }
            KeyKind::Chunk(c)
                if c.dimension == dimension
                    && (c.tag == TAG_ENTITY || c.tag == TAG_BLOCK_ENTITY) =>
            {
                let kind = if c.tag == TAG_ENTITY {
                    EntityKind::ChunkEntity
                } else {
                    EntityKind::BlockEntity
                };
                match roots(v) {
                    Some(rs) => {
                        for (i, (_, tag)) in rs.iter().enumerate() {
                            match position(tag, kind) {
                                Some(pos) => list.entities.push(EntityInfo {
                                    kind,
                                    key: k.to_vec(),
                                    root: i,
                                    identifier: identifier(tag, kind),
                                    pos,
                                    chunk: (c.x, c.z),
                                }),
                                None => list.unreadable += 1,
                            }
                        }
                    }
                    None => list.unreadable += 1,
                }
            }
            _ => {}
        }
        it.next();
    }
    it.status()?;
    drop(it);
    let ro = ReadOptions::default();
    for ((x, z), digest) in digests {
        for id in digest.chunks_exact(8) {
            let key = actor_key(id);
            let Some(value) = db.get(&ro, &key)? else {
                continue; // a digp naming a missing actor: nothing to show
            };
            let parsed = nbt::read_all(&value)
                .ok()
                .and_then(|r| r.into_iter().next());
            match parsed
                .as_ref()
                .and_then(|r| position(&r.1, EntityKind::Actor).map(|p| (p, r)))
            {
                Some((pos, r)) => list.entities.push(EntityInfo {
                    kind: EntityKind::Actor,
                    key,
                    root: 0,
                    identifier: identifier(&r.1, EntityKind::Actor),
                    pos,
                    chunk: (x, z),
                }),
                None => list.unreadable += 1,
            }
        }
    }
    list.entities
        .sort_by(|a, b| (a.kind, a.chunk, &a.key, a.root).cmp(&(b.kind, b.chunk, &b.key, b.root)));
    Ok(list)
}

/// What deleting entities did (or, dry, would do).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EntityReport {
    /// Entities deleted.
    pub entities: u64,
    /// Records deleted (actorprefix records, emptied digp and Entity records).
    pub records_deleted: u64,
    /// Records rewritten without some of their ids or compounds.
    pub records_rewritten: u64,
    /// Bytes of keys and values removed.
    pub bytes: u64,
}

/// Deletes the entities (actors and Entity-record compounds, never block entities) of
/// `dimension` whose chunk is in `area` and, when given, whose identifier is `identifier`, in
/// one batch; with `dry_run` only counts.
pub fn delete_entities(
    db: &Db,
    dimension: i32,
    area: &Selection,
    identifier: Option<&str>,
    dry_run: bool,
) -> Result<EntityReport> {
    let list = entities(db, dimension)?;
    let doomed: Vec<&EntityInfo> = list
        .entities
        .iter()
        .filter(|e| e.kind != EntityKind::BlockEntity)
        .filter(|e| area.contains(e.chunk.0, e.chunk.1))
        .filter(|e| identifier.is_none_or(|id| e.identifier == id))
        .collect();
    delete_listed(db, dimension, &doomed, dry_run)
}

/// Deletes one entity: the `root`th compound of record `key` (an Entity record), or the actor
/// whose `actorprefix` record is `key`.
pub fn delete_entity(db: &Db, dimension: i32, key: &[u8], root: usize) -> Result<EntityReport> {
    let list = entities(db, dimension)?;
    let Some(e) = list
        .entities
        .iter()
        .find(|e| e.key == key && e.root == root && e.kind != EntityKind::BlockEntity)
    else {
        return Err(Error::not_found(format!(
            "no entity at compound {root} of key {} in dimension {dimension}",
            hex(key)
        )));
    };
    delete_listed(db, dimension, &[e], false)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn delete_listed(
    db: &Db,
    dimension: i32,
    doomed: &[&EntityInfo],
    dry_run: bool,
) -> Result<EntityReport> {
    if db.options().read_only && !dry_run {
        return Err(Error::not_supported(
            "the world is open read-only: open it writable to edit it",
        ));
    }
    let mut batch = WriteBatch::new();
    let report = delete_into(db, dimension, doomed, &mut batch)?;
    if !dry_run && !batch.is_empty() {
        db.write(
            &WriteOptions {
                sync: true,
                ..WriteOptions::default()
            },
            batch,
        )?;
    }
    Ok(report)
}

/// Adds to `batch` the deletion of the `doomed` entities of `dimension` (listed by
/// [`entities`] from the db as it is): their actorprefix records and their ids out of their
/// chunk's digp, their compounds cut out of Entity records (emptied records deleted).
pub(crate) fn delete_into(
    db: &Db,
    dimension: i32,
    doomed: &[&EntityInfo],
    batch: &mut WriteBatch,
) -> Result<EntityReport> {
    let ro = ReadOptions::default();
    let mut report = EntityReport::default();
    // Actors: their records, and their ids out of the digp of their chunk.
    let mut ids_by_chunk: BTreeMap<(i32, i32), BTreeSet<Vec<u8>>> = BTreeMap::new();
    let mut seen = BTreeSet::new();
    // An actor named by two digp records is listed twice: deleted and counted once.
    for e in doomed
        .iter()
        .filter(|e| e.kind == EntityKind::Actor && seen.insert(e.key.clone()))
    {
        let vlen = db.get(&ro, &e.key)?.map_or(0, |v| v.len());
        batch.delete(&e.key);
        report.entities += 1;
        report.records_deleted += 1;
        report.bytes += (e.key.len() + vlen) as u64;
        ids_by_chunk
            .entry(e.chunk)
            .or_default()
            .insert(e.key[b"actorprefix".len()..].to_vec());
    }
    for ((x, z), ids) in ids_by_chunk {
        let mut key = b"digp".to_vec();
        key.extend_from_slice(&x.to_le_bytes());
        key.extend_from_slice(&z.to_le_bytes());
        if dimension != 0 {
            key.extend_from_slice(&dimension.to_le_bytes());
        }
        let Some(digest) = db.get(&ro, &key)? else {
            continue;
        };
        let kept: Vec<u8> = digest
            .chunks(8)
            .filter(|id| !ids.contains(*id))
            .flatten()
            .copied()
            .collect();
        report.bytes += (digest.len() - kept.len()) as u64;
        if kept.is_empty() {
            batch.delete(&key);
            report.records_deleted += 1;
            report.bytes += key.len() as u64;
        } else {
            batch.put(&key, &kept);
            report.records_rewritten += 1;
        }
    }
    // Entity records: cut the doomed compounds out by their byte ranges.
    let mut roots_by_key: BTreeMap<&[u8], BTreeSet<usize>> = BTreeMap::new();
    for e in doomed.iter().filter(|e| e.kind == EntityKind::ChunkEntity) {
        roots_by_key.entry(&e.key).or_default().insert(e.root);
    }
    for (key, doomed_roots) in roots_by_key {
        let Some(value) = db.get(&ro, key)? else {
            continue;
        };
        let Some(rs) = roots(&value) else {
            return Err(Error::corruption(format!(
                "entity record {} no longer decodes",
                hex(key)
            )));
        };
        let mut kept = Vec::with_capacity(value.len());
        for (i, (range, _)) in rs.iter().enumerate() {
            if doomed_roots.contains(&i) {
                report.entities += 1;
            } else {
                kept.extend_from_slice(&value[range.clone()]);
            }
        }
        report.bytes += (value.len() - kept.len()) as u64;
        if kept.is_empty() {
            batch.delete(key);
            report.records_deleted += 1;
            report.bytes += key.len() as u64;
        } else {
            batch.put(key, &kept);
            report.records_rewritten += 1;
        }
    }
    Ok(report)
}
