//! Strata: a LevelDB engine, byte-compatible on disk with Google's LevelDB and with Mojang's
//! fork used by Minecraft: Bedrock Edition, for native targets and WebAssembly.
//!
//! Layering (dependencies point downwards only):
//! `util`, `error`, `options` → `storage`, `compress`, `filter`, `cache` → `log`, `key`,
//! `memtable`, `table` → `version` → `db` → `bedrock`; the CLI and the wasm facade sit on top.

#![deny(unsafe_code)]

pub mod bedrock;
pub mod cache;
pub mod compaction;
pub mod compress;
pub mod db;
pub mod error;
pub mod filter;
#[doc(hidden)]
pub mod fuzzing;
pub mod iterator;
pub mod key;
pub mod log;
pub mod memtable;
pub mod options;
pub mod storage;
pub mod table;
pub mod util;
pub mod version;
#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use compress::CompressionType;
pub use db::{Db, ScanStats};
pub use error::{Error, ErrorKind, Result};
pub use options::{Options, Profile, ReadOptions, WriteOptions};
#[cfg(not(target_arch = "wasm32"))]
pub use storage::FsStorage;
pub use storage::{MemStorage, Storage};
