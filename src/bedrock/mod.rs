//! Minecraft: Bedrock Edition worlds on top of the engine (DESIGN §7): NBT, key kinds,
//! level.dat, chunk records (Data2D/Data3D, SubChunkPrefix, LegacyTerrain), top-down maps,
//! `.mcworld` import and a synthetic world generator; and the editor: chunk deletion and
//! pruning (`edit`), NBT as SNBT text (`snbt`, `nbt_edit`), `.mcworld` export (`export`).
//!
//! This module uses only the public API of `crate::db` (open, iter, get, put/write) and the
//! `Storage` trait, so it runs unchanged in WebAssembly over any storage backend. Every decoder
//! takes untrusted bytes: malformed input is an error, never a panic, and allocations are
//! bounded by the input size or by explicit limits.

pub mod chunk;
pub mod colours;
pub mod edit;
pub mod entities;
pub mod export;
pub mod export_stream;
pub mod keys;
pub mod legacy;
pub mod level_dat;
pub mod map;
pub mod mcworld;
pub mod nbt;
pub mod nbt_edit;
pub mod relief_index;
pub mod slime;
pub mod snbt;
pub mod snbt_tree;
pub mod subchunk;
pub mod synth;
pub mod zip_writer;

use std::sync::Arc;

use crate::error::Result;
use crate::storage::{self, Storage};
use crate::{Db, Options};

pub use edit::{EditReport, Selection};
pub use keys::{classify, ChunkKey, KeyKind, KeySummary};
pub use level_dat::LevelDat;

/// An open world: its db and, when present, its level.dat. Opened read-only unless
/// `open_writable`; every edit of a read-only world is `NotSupported` and writes nothing.
pub struct World {
    storage: Arc<dyn Storage>,
    root: String,
    db: Db,
}

impl World {
    /// Opens `root`, either a world folder (holding `db/` and usually `level.dat`) or a bare
    /// LevelDB folder, read-only.
    pub fn open(storage: Arc<dyn Storage>, root: &str) -> Result<World> {
        Self::open_with(storage, root, Options::bedrock().read_only())
    }

    /// Opens `root` for editing (Bedrock profile: new tables are raw deflate, id 4).
    pub fn open_writable(storage: Arc<dyn Storage>, root: &str) -> Result<World> {
        Self::open_with(storage, root, Options::bedrock())
    }

    fn open_with(storage: Arc<dyn Storage>, root: &str, options: Options) -> Result<World> {
        let db_dir = db_dir_of(&*storage, root);
        if !storage.exists(&storage::join(&db_dir, "CURRENT")) {
            return Err(crate::Error::not_found(format!(
                "not a Bedrock world: {root:?} holds no db/CURRENT and no CURRENT"
            )));
        }
        let db = Db::open(storage.clone(), &db_dir, options)?;
        Ok(World {
            storage,
            root: root.to_string(),
            db,
        })
    }

    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.storage
    }

    pub fn root(&self) -> &str {
        &self.root
    }

    pub fn is_writable(&self) -> bool {
        !self.db.options().read_only
    }

    /// Deletes every record of the chunks of `dimension` in `area` (`edit::delete_chunks`).
    pub fn delete_chunks(&self, dimension: i32, area: &Selection) -> Result<EditReport> {
        edit::delete_chunks(&self.db, dimension, area)
    }

    /// Keeps only the chunks of `dimension` in `keep` (`edit::prune`).
    pub fn prune(&self, dimension: i32, keep: &Selection, allow_empty: bool) -> Result<EditReport> {
        edit::prune(&self.db, dimension, keep, allow_empty)
    }

    /// A record's value as SNBT, `None` when absent.
    pub fn snbt(&self, key: &[u8]) -> Result<Option<String>> {
        nbt_edit::record_snbt(&self.db, key)
    }

    /// Stores SNBT `text` as the value of `key`.
    pub fn set_snbt(&self, key: &[u8], text: &str) -> Result<nbt_edit::SetReport> {
        nbt_edit::set_record_snbt(&self.db, key, text)
    }

    /// level.dat as SNBT.
    pub fn level_dat_snbt(&self) -> Result<String> {
        nbt_edit::level_dat_snbt(&*self.storage, &self.root)
    }

    /// Replaces level.dat with SNBT `text` (storage version kept).
    pub fn set_level_dat_snbt(&self, text: &str) -> Result<nbt_edit::SetReport> {
        if !self.is_writable() {
            return Err(nbt_edit::read_only());
        }
        nbt_edit::set_level_dat_snbt(&*self.storage, &self.root, text)
    }

    /// Closes the world (flushing nothing more than the engine's close does).
    pub fn close(self) -> Result<()> {
        self.db.close()
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
