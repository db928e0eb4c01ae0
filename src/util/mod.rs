//! Small shared helpers with no knowledge of the engine: byte coding (varints, fixed-width
//! little-endian integers), masked CRC-32C, LevelDB's hash, a deterministic PRNG, and a
//! per-thread pool of block buffers, short byte strings held inline, named interleaving points for concurrency tests, a cache
//! prefetch hint, and the core count.

pub mod buffer_pool;
pub mod coding;
pub mod crc;
pub mod hash;
pub mod inline_bytes;
pub mod prefetch;
pub mod random;
pub mod sync_point;

/// The cores this process may use, asked once (1 if unknown). `available_parallelism` reads
/// the affinity mask and the cgroup's CPU quota files on each call: about 20 system calls,
/// which every `Options` and so every open paid (kvbench's `open` opens 100 times).
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}
