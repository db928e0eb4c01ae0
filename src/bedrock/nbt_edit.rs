//! NBT records and level.dat as SNBT text, read and written back (the editing front of
//! `snbt`): one engine call per record, shared by the CLI, `World` and the wasm facade.
//!
//! Invariants: a text that does not parse writes nothing; a value whose NBT bytes did not
//! change is not rewritten at all; level.dat keeps its 8-byte header's storage version (the
//! length field is recomputed) and is replaced atomically (written beside it, synced, renamed
//! over it); writes need a db opened writable (`NotSupported` otherwise).

use super::level_dat;
use super::nbt;
use super::snbt;
use crate::error::{Error, Result};
use crate::storage::{self, Storage};
use crate::{Db, ReadOptions, WriteOptions};

/// The name under which `level.dat` is addressed where a db key is expected (CLI, npm).
pub const LEVEL_DAT: &str = "level.dat";

/// The SNBT of the value of `key`; `None` when the key is absent; `Corruption` when the
/// value is not NBT, or is not exactly reproducible from text (see `editable_roots`).
pub fn record_snbt(db: &Db, key: &[u8]) -> Result<Option<String>> {
    let Some(v) = db.get(&ReadOptions::default(), key)? else {
        return Ok(None);
    };
    Ok(Some(snbt::to_snbt(&editable_roots(&v)?)))
}

/// The root tags of `data` when writing them again gives exactly `data`. NBT strings are
/// decoded as UTF-8 (lossily); a value holding a string that is not UTF-8 — in practice a
/// binary record that parses as NBT by accident, such as some SubChunkPrefix values — cannot
/// be printed as text and read back unchanged, so it is refused instead of being shown (and
/// then saved) altered.
pub fn editable_roots(data: &[u8]) -> Result<Vec<nbt::Root>> {
    let roots = nbt::read_all(data)?;
    if snbt::encode(&roots) != data {
        return Err(Error::corruption(
            "nbt: this value does not survive NBT -> text -> NBT unchanged (a string that is \
             not UTF-8: probably not an NBT record); not shown as SNBT",
        ));
    }
    Ok(roots)
}

/// What a write of SNBT did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetReport {
    /// False when the new bytes equal the old ones (nothing was written).
    pub changed: bool,
    /// Size of the value written (or kept).
    pub bytes: usize,
}

/// Parses `text` and stores it as the value of `key` (creating the record when absent).
pub fn set_record_snbt(db: &Db, key: &[u8], text: &str) -> Result<SetReport> {
    let bytes = snbt::encode(&snbt::parse(text)?);
    if db.options().read_only {
        return Err(read_only());
    }
    if db.get(&ReadOptions::default(), key)?.as_deref() == Some(&bytes[..]) {
        return Ok(SetReport {
            changed: false,
            bytes: bytes.len(),
        });
    }
    db.put(
        &WriteOptions {
            sync: true,
            ..WriteOptions::default()
        },
        key,
        &bytes,
    )?;
    Ok(SetReport {
        changed: true,
        bytes: bytes.len(),
    })
}

pub(crate) fn read_only() -> Error {
    Error::not_supported("the world is open read-only: open it writable to edit it")
}

/// The storage version and the NBT body of a level.dat file.
pub fn split_level_dat(data: &[u8]) -> Result<(i32, &[u8])> {
    if data.len() < 8 {
        return Err(Error::corruption(format!(
            "level.dat: {} bytes, shorter than its 8-byte header",
            data.len()
        )));
    }
    let version = i32::from_le_bytes([data[0], data[1], data[2], data[3]]);
    Ok((version, &data[8..]))
}

/// level.dat of the world at `root` as SNBT (every root tag of its body).
pub fn level_dat_snbt(storage: &dyn Storage, root: &str) -> Result<String> {
    let path = storage::join(root, LEVEL_DAT);
    if !storage.exists(&path) {
        return Err(Error::not_found(format!(
            "{path}: the world has no level.dat"
        )));
    }
    let data = storage::read_all(storage, &path)?;
    let (_, body) = split_level_dat(&data)?;
    Ok(snbt::to_snbt(&editable_roots(body)?))
}

/// The bytes of a level.dat: header (storage version, body length) and the roots.
pub fn encode_level_dat(storage_version: i32, roots: &[nbt::Root]) -> Vec<u8> {
    let body = snbt::encode(roots);
    let mut out = Vec::with_capacity(8 + body.len());
    out.extend_from_slice(&storage_version.to_le_bytes());
    out.extend_from_slice(&(body.len() as i32).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

/// Replaces level.dat of the world at `root` with `text` (its storage version kept; a world
/// without level.dat gets storage version 10, Bedrock's current one).
pub fn set_level_dat_snbt(storage: &dyn Storage, root: &str, text: &str) -> Result<SetReport> {
    let roots = snbt::parse(text)?;
    let path = storage::join(root, LEVEL_DAT);
    let old = if storage.exists(&path) {
        Some(storage::read_all(storage, &path)?)
    } else {
        None
    };
    let version = match &old {
        Some(d) => split_level_dat(d)?.0,
        None => 10,
    };
    let bytes = encode_level_dat(version, &roots);
    if old.as_deref() == Some(&bytes[..]) {
        return Ok(SetReport {
            changed: false,
            bytes: bytes.len(),
        });
    }
    // Parses as a level.dat before anything is written.
    level_dat::LevelDat::parse(&bytes)?;
    let tmp = storage::join(root, "level.dat.strata-new");
    storage::write_all(storage, &tmp, &bytes)?;
    storage.rename(&tmp, &path)?;
    storage.sync_dir(root)?;
    Ok(SetReport {
        changed: true,
        bytes: bytes.len(),
    })
}
