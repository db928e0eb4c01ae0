//! Minecraft: Bedrock Edition worlds on top of the engine (DESIGN §7): NBT, key kinds,
//! level.dat, chunk records (Data2D/Data3D, SubChunkPrefix, LegacyTerrain), top-down maps,
//! `.mcworld` import and a synthetic world generator.
//!
//! This module uses only the public API of `crate::db` (open, iter, get, put/write) and the
//! `Storage` trait, so it runs unchanged in WebAssembly over any storage backend. Every decoder
//! takes untrusted bytes: malformed input is an error, never a panic, and allocations are
//! bounded by the input size or by explicit limits.

pub mod chunk;
pub mod colours;
pub mod keys;
pub mod legacy;
pub mod level_dat;
pub mod map;
pub mod mcworld;
pub mod nbt;
pub mod subchunk;
pub mod synth;

use std::sync::Arc;

use crate::error::Result;
use crate::storage::{self, Storage};
use crate::{Db, Options};

pub use keys::{classify, ChunkKey, KeyKind, KeySummary};
pub use level_dat::LevelDat;

/// An open world: its db (read-only) and, when present, its level.dat.
pub struct World {
    storage: Arc<dyn Storage>,
    root: String,
    db: Db,
}

impl World {
    /// Opens `root`, either a world folder (holding `db/` and usually `level.dat`) or a bare
    /// LevelDB folder, read-only.
    pub fn open(storage: Arc<dyn Storage>, root: &str) -> Result<World> {
        let db_dir = db_dir_of(&*storage, root);
        let db = Db::open(storage.clone(), &db_dir, Options::bedrock().read_only())?;
        Ok(World {
            storage,
            root: root.to_string(),
            db,
        })
    }

    pub fn db(&self) -> &Db {
        &self.db
    }

    /// The parsed level.dat, `None` when the world has none (a bare db folder).
    pub fn level_dat(&self) -> Result<Option<LevelDat>> {
        let path = storage::join(&self.root, "level.dat");
        if !self.storage.exists(&path) {
            return Ok(None);
        }
        let data = storage::read_all(&*self.storage, &path)?;
        LevelDat::parse(&data).map(Some)
    }
}

/// The LevelDB folder of a world: `root/db` when `root` has no CURRENT of its own.
pub fn db_dir_of(storage: &dyn Storage, root: &str) -> String {
    let own = storage::join(root, "CURRENT");
    let nested = storage::join(&storage::join(root, "db"), "CURRENT");
    if !storage.exists(&own) && storage.exists(&nested) {
        storage::join(root, "db")
    } else {
        root.to_string()
    }
}
