//! Sorted string tables (LevelDB doc/table_format.md):
//! `[data blocks][meta blocks][metaindex block][index block][footer]`.
//!
//! - `format`: block handles, the footer, reading and checking one block.
//! - `block` / `block_builder`: prefix-compressed entries with restart points.
//! - `restart_prefixes`: restart keys as `u64`s for a cache-friendly seek (index blocks).
//! - `filter_block`: one bloom filter per 2 KiB of data-block offsets.
//! - `table` / `table_builder`: the reader (with its iterator and point lookup) and the writer.
//! - `two_level_iterator`, `merger`: iterator combinators the table and the DB share.
//! - `readahead`: worker threads decoding data blocks ahead of a sequential iterator.
//! - `compress_pool`: worker threads compressing a table writer's data blocks.

pub mod block;
pub mod block_builder;
pub mod compress_pool;
pub mod filter_block;
pub mod format;
pub mod merger;
pub mod readahead;
pub mod restart_prefixes;
#[allow(clippy::module_inception)] // named after LevelDB's table/table.cc
pub mod table;
pub mod table_builder;
pub mod two_level_iterator;

pub use table::Table;
pub use table_builder::TableBuilder;

#[cfg(test)]
mod tests;
