//! Strata: a LevelDB engine, byte-compatible on disk with Google's LevelDB and with Mojang's
//! fork used by Minecraft: Bedrock Edition, for native targets and WebAssembly.
//!
//! # Guide
//!
//! Open (or create) a database, write, read, iterate:
//!
//! ```
//! use strata::db::WriteBatch;
//! use strata::{Db, Options, ReadOptions, WriteOptions};
//!
//! # fn main() -> strata::Result<()> {
//! # let tmp = tempfile::tempdir().unwrap();
//! # let path = tmp.path().join("db");
//! # let path = path.to_str().unwrap();
//! // Google's dialect (Snappy blocks); `Options::bedrock()` writes what Minecraft reads.
//! let db = Db::open_path(path, Options::google().create())?;
//! let w = WriteOptions::default(); // `sync: true` makes a write survive a machine crash
//! db.put(&w, b"apple", b"red")?;
//! let mut batch = WriteBatch::new(); // all or nothing, even across a crash
//! batch.put(b"banana", b"yellow");
//! batch.delete(b"apple");
//! db.write(&w, batch)?;
//!
//! let r = ReadOptions::default();
//! assert_eq!(db.get(&r, b"banana")?, Some(b"yellow".to_vec()));
//! assert_eq!(db.get(&r, b"apple")?, None);
//!
//! let mut it = db.iter(&r); // unpositioned; seek_to_first / seek / seek_to_last
//! it.seek_to_first();
//! while it.valid() {
//!     println!("{:?} = {:?}", it.key(), it.value());
//!     it.next();
//! }
//! it.status()?; // an iterator stops at damage; status says where
//! # Ok(())
//! # }
//! ```
//!
//! Snapshots: reads through a snapshot see the database as it was when it was taken.
//!
//! ```
//! # use strata::{Db, MemStorage, Options, ReadOptions, WriteOptions};
//! # use std::sync::Arc;
//! # fn main() -> strata::Result<()> {
//! # let db = Db::open(Arc::new(MemStorage::new()), "db", Options::google().create())?;
//! # let w = WriteOptions::default();
//! db.put(&w, b"k", b"old")?;
//! let snap = db.snapshot();
//! db.put(&w, b"k", b"new")?;
//! let then = ReadOptions { snapshot: Some(snap.sequence()), ..ReadOptions::default() };
//! assert_eq!(db.get(&then, b"k")?, Some(b"old".to_vec()));
//! drop(snap); // released: compactions may drop what only it could see
//! # Ok(())
//! # }
//! ```
//!
//! A Bedrock world (a folder holding `level.dat` and `db/`, or a bare `db/` folder), read-only:
//!
//! ```no_run
//! use std::sync::Arc;
//! use strata::bedrock::{keys, World};
//! use strata::FsStorage;
//!
//! # fn main() -> strata::Result<()> {
//! let world = World::open(Arc::new(FsStorage::new()), "path/to/world")?;
//! if let Some(dat) = world.level_dat()? {
//!     println!("{dat:?}");
//! }
//! let summary = keys::summarize(world.db())?; // key kinds with counts and bytes
//! println!("{summary:?}");
//! println!("{} overworld chunks", keys::chunk_positions(world.db(), 0)?.len());
//! # Ok(())
//! # }
//! ```
//!
//! More in `examples/` (`cargo run --example quickstart`, `cargo run --example bedrock_world
//! -- [WORLD]`). Errors are [`Error`]s with an [`ErrorKind`]; no call panics on any input.
//!
//! Layering (dependencies point downwards only):
//! `util`, `error`, `options` → `storage`, `compress`, `filter`, `cache` → `log`, `key`,
//! `memtable` (+ `memtable_filter`), `table` → `version` → `db` → `bedrock`; the CLI and the
//! wasm facade sit on top.

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
pub mod memtable_filter;
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
