//! level.dat: an 8-byte header (i32 LE storage version, i32 LE payload length) then one
//! little-endian NBT compound. The summary picks the fields a viewer shows; a field that is
//! missing or of an unexpected type is `None`, never an error. Only a header or NBT that does
//! not parse is an error.

use super::nbt::{self, Tag};
use crate::error::{Error, Result};

/// The fields of level.dat a world summary shows.
#[derive(Clone, Debug, PartialEq)]
pub struct LevelDat {
    /// The header's storage version.
    pub storage_version: i32,
    /// `LevelName`.
    pub name: Option<String>,
    /// `lastOpenedWithVersion` joined with dots (e.g. "1.18.0.25"), else
    /// `MinimumCompatibleClientVersion`.
    pub game_version: Option<String>,
    /// `RandomSeed`.
    pub seed: Option<i64>,
    /// `SpawnX`, `SpawnY`, `SpawnZ`.
    pub spawn: Option<(i32, i32, i32)>,
    /// `GameType` (0 survival, 1 creative, 2 adventure, 3 spectator).
    pub game_mode: Option<i32>,
    /// The whole root compound, for the viewer's tree.
    pub root: Tag,
}

impl LevelDat {
    /// Parses the bytes of a level.dat file.
    pub fn parse(data: &[u8]) -> Result<LevelDat> {
        if data.len() < 8 {
            return Err(Error::corruption(format!(
                "level.dat: {} bytes, shorter than its 8-byte header",
                data.len()
            )));
        }
        let storage_version = i32::from_le_bytes([data[0], data[1], data[2], data[3]]);
        let len = i32::from_le_bytes([data[4], data[5], data[6], data[7]]);
        let body = &data[8..];
        // The length field is advisory: use it when it fits, else the whole rest.
        let body = match usize::try_from(len) {
            Ok(n) if n > 0 && n <= body.len() => &body[..n],
            _ => body,
        };
        let mut pos = 0;
        let (_, root) = nbt::read_root(body, &mut pos)?;
        let int = |name: &str| root.get(name).and_then(Tag::as_i64);
        let int32 = |name: &str| int(name).and_then(|v| i32::try_from(v).ok());
        let spawn = match (int32("SpawnX"), int32("SpawnY"), int32("SpawnZ")) {
            (Some(x), Some(y), Some(z)) => Some((x, y, z)),
            _ => None,
        };
        Ok(LevelDat {
            storage_version,
            name: root
                .get("LevelName")
                .and_then(Tag::as_str)
                .map(String::from),
            game_version: version_list(root.get("lastOpenedWithVersion"))
                .or_else(|| version_list(root.get("MinimumCompatibleClientVersion"))),
            seed: int("RandomSeed"),
            spawn,
            game_mode: int32("GameType"),
            root,
        })
    }
}

fn version_list(tag: Option<&Tag>) -> Option<String> {
    match tag? {
        Tag::List(_, items) if !items.is_empty() => {
            let parts: Option<Vec<String>> = items
                .iter()
                .map(|t| t.as_i64().map(|v| v.to_string()))
                .collect();
            parts.map(|p| p.join("."))
        }
        _ => None,
    }
}

/// The bytes of a level.dat holding `root` (storage version first).
pub fn encode(storage_version: i32, root: &Tag) -> Vec<u8> {
    let mut body = Vec::new();
    nbt::write_root(&mut body, "", root);
    let mut out = Vec::with_capacity(8 + body.len());
    out.extend_from_slice(&storage_version.to_le_bytes());
    out.extend_from_slice(&(body.len() as i32).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_missing_fields() {
        let root = Tag::Compound(vec![
            ("LevelName".into(), Tag::String("Test".into())),
            ("RandomSeed".into(), Tag::Long(-42)),
            ("SpawnX".into(), Tag::Int(1)),
            ("SpawnY".into(), Tag::Int(64)),
            ("SpawnZ".into(), Tag::Int(-1)),
            (
                "lastOpenedWithVersion".into(),
                Tag::List(3, vec![Tag::Int(1), Tag::Int(21), Tag::Int(0)]),
            ),
        ]);
        let dat = LevelDat::parse(&encode(10, &root)).unwrap();
        assert_eq!(dat.storage_version, 10);
        assert_eq!(dat.name.as_deref(), Some("Test"));
        assert_eq!(dat.seed, Some(-42));
        assert_eq!(dat.spawn, Some((1, 64, -1)));
        assert_eq!(dat.game_version.as_deref(), Some("1.21.0"));
        assert_eq!(dat.game_mode, None);
        let empty = LevelDat::parse(&encode(3, &Tag::Compound(vec![]))).unwrap();
        assert_eq!((empty.name, empty.seed, empty.spawn), (None, None, None));
        assert!(LevelDat::parse(&[1, 2, 3]).is_err());
        assert!(LevelDat::parse(&[0; 12]).is_err());
    }
}
