//! Every tunable of the engine in one place, each documented with its default, plus the two
//! dialect profiles: `Options::google()` (what Google's LevelDB writes: Snappy, id 1) and
//! `Options::bedrock()` (Mojang's settings for Minecraft worlds: raw deflate, id 4).

use crate::compress::CompressionType;

/// Level-structure constants (LevelDB's `config` namespace).
pub mod config {
    /// Number of levels.
    pub const NUM_LEVELS: usize = 7;
    /// L0 file count that triggers a compaction (Google's value).
    pub const L0_COMPACTION_TRIGGER: usize = 4;
    /// L0 file count at which writes are slowed by 1 ms each.
    pub const L0_SLOWDOWN_WRITES_TRIGGER: usize = 8;
    /// L0 file count at which writes stop until compaction catches up.
    pub const L0_STOP_WRITES_TRIGGER: usize = 12;
    /// Highest level a fresh memtable flush may be pushed to if it overlaps nothing.
    pub const MAX_MEM_COMPACT_LEVEL: usize = 2;
    /// Bytes read between seek-compaction samples in iterators.
    pub const READ_BYTES_PERIOD: u64 = 1_048_576;
}

/// Which on-disk dialect a database is written in. Reading accepts both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// Google's LevelDB: Snappy (id 1) by default; id 2 means Zstd.
    Google,
    /// Mojang's fork (Minecraft: Bedrock): raw deflate (id 4); id 2 means zlib.
    Bedrock,
}

/// Options for opening a database.
#[derive(Clone, Debug)]
pub struct Options {
    /// Create the database if it is missing. Default: false.
    pub create_if_missing: bool,
    /// Fail if the database already exists. Default: false.
    pub error_if_exists: bool,
    /// Open without writing anything to the folder: no LOCK file created, no log replayed
    /// into a table, no MANIFEST written. Writes fail with `NotSupported`. Default: false.
    pub read_only: bool,
    /// Check every block of every live table at open (what `Db::verify` does) and refuse to
    /// open on any damage. (Damage in the logs, the MANIFEST or CURRENT is always refused.)
    /// Default: false.
    pub paranoid_checks: bool,
    /// Dialect for writing. Default: `Profile::Google`.
    pub profile: Profile,
    /// Take the dialect of the database itself at a writable open (`db::dialect`): the codecs
    /// of its tables, a level.dat beside it. When it differs from `profile`, every setting
    /// still at `profile`'s default (codec, block size, cache, level-0 triggers) takes the
    /// detected dialect's default. An empty database keeps `profile`. What the CLI and the npm
    /// package do when no profile is given. Default: false (the profile is as given).
    pub detect_profile: bool,
    /// Allow writing blocks with a codec the database's own dialect cannot read (Snappy or
    /// Zstd into a Bedrock world, raw deflate or zlib into a Google database). Without it such
    /// an open is refused with `InvalidArgument`. Default: false.
    pub allow_foreign_codec: bool,
    /// Codec for new blocks. Default: Snappy (Google), raw deflate (Bedrock).
    pub compression: CompressionType,
    /// Approximate uncompressed size of a data block. Default: 4 KiB (Google), 160 KiB (Bedrock).
    pub block_size: usize,
    /// Keys between restart points in a data block. Default: 16.
    pub block_restart_interval: usize,
    /// Memtable size before it is flushed to an L0 table. Default: 4 MiB.
    pub write_buffer_size: usize,
    /// Target size of a table written by compaction. Default: 2 MiB.
    pub max_file_size: u64,
    /// Bloom filter bits per key; 0 disables filters. Default: 10.
    pub bloom_bits_per_key: u32,
    /// Capacity of the block cache in bytes (uncompressed blocks). Default: 8 MiB (Google),
    /// 40 MiB (Bedrock).
    pub block_cache_capacity: usize,
    /// Number of open tables kept in the table cache. Default: 1000.
    pub max_open_files: usize,
    /// Largest decompressed block the reader accepts; bigger claims are corruption (this is
    /// what stops a decompression bomb). Default: 16 MiB.
    pub max_block_size: usize,
    /// L0 file count that triggers compaction. Default: 4 (Google), 16 (Bedrock).
    pub l0_compaction_trigger: usize,
    /// L0 file count at which writes slow down. Default: 8 (Google), 64 (Bedrock).
    pub l0_slowdown_writes_trigger: usize,
    /// L0 file count at which writes stop. Default: 12 (Google), 64 (Bedrock).
    pub l0_stop_writes_trigger: usize,
    /// Never start size- or seek-triggered compactions (flushes still happen; `compact_range`
    /// still works). For bulk loads. Default: false.
    pub disable_auto_compactions: bool,
    /// Allow compactions triggered by a table's size budget. Default: true.
    pub size_compactions: bool,
    /// Allow compactions triggered by too many point reads through one file (Mojang turns
    /// these off). Default: true.
    pub seek_compactions: bool,
    /// Run flushes and compactions on a background thread. When false (always on wasm),
    /// they run inline in bounded steps from the write path and from `maintenance()`.
    /// Default: true on native targets.
    pub background_thread: bool,
    /// Worker threads that decompress data blocks ahead of readahead iterators (scans), on
    /// top of the thread consuming them, which decodes whatever no worker has started yet.
    /// 0 disables readahead (every block is decoded by the reading thread). Default: the
    /// number of cores (at most 8); always 0 on wasm, which has no threads.
    pub readahead_threads: usize,
    /// Worker threads that compress data blocks while a flush or compaction builds the next
    /// ones, on top of the thread writing the table, which compresses whatever no worker has
    /// started yet. Workers take blocks only while someone waits on that work (a writer
    /// stalled on level 0 or a flush, `compact_range`, `flush`), so they never take a core
    /// from running writers. A table built from the same entries is the same bytes with any
    /// number, and a compaction cuts its outputs at the same keys with any number from 1; 0
    /// compresses every block on the writing thread and writes it as it is cut, as LevelDB
    /// does (a compaction may then cut its outputs at slightly different keys). Default: the number of cores
    /// (at most 8); always 0 on wasm.
    pub compression_threads: usize,
    /// A compaction writes a value whose block holds it alone and reaches `block_size` by
    /// copying the stored block (checksum verified) when it is in the form the table's codec
    /// stores, instead of decompressing it and compressing it again: moving large values costs
    /// a copy, and a block this build compressed is the same bytes either way (another
    /// LevelDB's stays as it compressed it). Off: every block is rebuilt, as LevelDB does.
    /// Default: true.
    pub copy_stored_blocks: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self::google()
    }
}

impl Options {
    /// Google LevelDB's defaults.
    pub fn google() -> Self {
        Options {
            create_if_missing: false,
            error_if_exists: false,
            read_only: false,
            paranoid_checks: false,
            profile: Profile::Google,
            detect_profile: false,
            allow_foreign_codec: false,
            compression: CompressionType::Snappy,
            block_size: 4 * 1024,
            block_restart_interval: 16,
            write_buffer_size: 4 * 1024 * 1024,
            max_file_size: 2 * 1024 * 1024,
            bloom_bits_per_key: 10,
            block_cache_capacity: 8 * 1024 * 1024,
            max_open_files: 1000,
            max_block_size: 16 * 1024 * 1024,
            l0_compaction_trigger: config::L0_COMPACTION_TRIGGER,
            l0_slowdown_writes_trigger: config::L0_SLOWDOWN_WRITES_TRIGGER,
            l0_stop_writes_trigger: config::L0_STOP_WRITES_TRIGGER,
            disable_auto_compactions: false,
            size_compactions: true,
            seek_compactions: true,
            background_thread: cfg!(not(target_arch = "wasm32")),
            readahead_threads: default_readahead_threads(),
            compression_threads: default_readahead_threads(),
            copy_stored_blocks: true,
        }
    }

    /// Mojang's settings for Bedrock worlds (their sample setup): raw deflate, 160 KiB blocks,
    /// bloom 10 bits/key, 40 MiB block cache, 4 MiB write buffer, raised L0 triggers.
    pub fn bedrock() -> Self {
        Options {
            profile: Profile::Bedrock,
            compression: CompressionType::ZlibRaw,
            block_size: 160 * 1024,
            block_cache_capacity: 40 * 1024 * 1024,
            l0_compaction_trigger: 16,
            l0_slowdown_writes_trigger: 64,
            l0_stop_writes_trigger: 64,
            ..Self::google()
        }
    }

    /// The defaults of `profile`.
    pub fn for_profile(profile: Profile) -> Self {
        match profile {
            Profile::Google => Self::google(),
            Profile::Bedrock => Self::bedrock(),
        }
    }

    /// Switches to `profile`: every profile-dependent setting still at the current profile's
    /// default takes `profile`'s default; settings changed by the caller stay.
    pub fn adopt_profile(&mut self, profile: Profile) {
        if self.profile == profile {
            return;
        }
        let (from, to) = (Self::for_profile(self.profile), Self::for_profile(profile));
        macro_rules! follow {
            ($($f:ident),*) => {$(
                if self.$f == from.$f {
                    self.$f = to.$f;
                }
            )*};
        }
        follow!(
            compression,
            block_size,
            block_cache_capacity,
            l0_compaction_trigger,
            l0_slowdown_writes_trigger,
            l0_stop_writes_trigger
        );
        self.profile = profile;
    }

    /// These options with `create_if_missing` set.
    pub fn create(mut self) -> Self {
        self.create_if_missing = true;
        self
    }

    /// These options with `read_only` set.
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }
}

/// The cores, at most 8 (0 on wasm): readahead's and compression's default worker count.
fn default_readahead_threads() -> usize {
    if cfg!(target_arch = "wasm32") {
        return 0;
    }
    crate::util::cores().min(8)
}

/// Options for a read (get, iterator, scan).
#[derive(Clone, Debug)]
pub struct ReadOptions {
    /// Verify every block's checksum as it is read. Default: true (a user's world is precious:
    /// damage is reported, never silently returned).
    pub verify_checksums: bool,
    /// Keep blocks read by this operation in the block cache. Default: true.
    pub fill_cache: bool,
    /// Read as of this sequence number (a snapshot); `None` reads the latest state.
    pub snapshot: Option<u64>,
    /// Decompress data blocks ahead of the cursor on the readahead threads (see
    /// `Options::readahead_threads`), for reads that move forward through many blocks: scans,
    /// exports, compactions. Entries still arrive in order; random seeks get no speculation.
    /// Default: false.
    pub readahead: bool,
    /// Start readahead by itself once an iterator has read `AUTO_READAHEAD_BLOCKS`
    /// consecutive data blocks of a table forward (table::readahead), and from a table's
    /// first block when the file before it in its level was read that way; likewise backward
    /// (runs toward the table's first block, within each table): a scan either way gets its
    /// blocks decoded ahead without asking, seeks and short reads never do. Native pools only
    /// (a wasm host lends runs where it asks for readahead). Default: true.
    pub auto_readahead: bool,
    /// With readahead in wasm: decode workers may hand back only the entries whose user key
    /// this filter keeps (the reader passes over the others unread), so less comes back into
    /// the engine. A hint: blocks the cursor decodes itself keep every entry. Default: none.
    pub lend_filter: Option<crate::table::readahead::LendFilter>,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            verify_checksums: true,
            fill_cache: true,
            snapshot: None,
            readahead: false,
            auto_readahead: true,
            lend_filter: None,
        }
    }
}

/// Options for a write.
#[derive(Clone, Debug, Default)]
pub struct WriteOptions {
    /// Sync the log to stable storage before acknowledging. Default: false.
    pub sync: bool,
    /// Skip the write-ahead log (bulk loads): the write is lost if the process dies before
    /// the memtable is flushed. Default: false.
    pub disable_wal: bool,
}
