//! Small shared helpers with no knowledge of the engine: byte coding (varints, fixed-width
//! little-endian integers), masked CRC-32C, LevelDB's hash, a deterministic PRNG, and a
//! per-thread pool of block buffers, and named interleaving points for concurrency tests.

pub mod buffer_pool;
pub mod coding;
pub mod crc;
pub mod hash;
pub mod random;
pub mod sync_point;
