// The open defaults that both native addons Strata stands in for inherit from leveldown's
// `db_open` (classic-level's binding.cc, leveldb-zlib's bindings.cpp): one table, so the two
// drop-ins cannot drift apart. Both addons also give every open a 10-bit Bloom filter.
export const LEVELDOWN_SIZES = {
  cacheSize: 8 << 20,
  writeBufferSize: 4 << 20,
  blockSize: 4096,
  maxOpenFiles: 1000,
  blockRestartInterval: 16,
  maxFileSize: 2 << 20,
} as const;

export const LEVELDOWN_BLOOM_BITS = 10;
