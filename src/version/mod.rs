//! The set of live files and how it changes: file names, VersionEdit records (the MANIFEST's
//! contents), the VersionSet that replays them into a Version, and the table cache.

pub mod filename;
pub mod table_cache;
#[allow(clippy::module_inception)] // LevelDB's class Version
pub mod version;
pub mod version_edit;
pub mod version_set;

pub use table_cache::TableCache;
pub use version::{BusyRange, FileMetaData, Version};
pub use version_edit::VersionEdit;
