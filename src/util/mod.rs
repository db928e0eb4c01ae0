//! Small shared helpers with no knowledge of the engine: byte coding (varints, fixed-width
//! little-endian integers), masked CRC-32C, LevelDB's hash, and a deterministic PRNG.

pub mod coding;
pub mod crc;
pub mod hash;
pub mod random;
