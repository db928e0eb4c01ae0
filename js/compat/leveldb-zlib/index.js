// `leveldb-zlib` for npm overrides: re-exports strata-level's drop-in (LevelDB, Iterator,
// ChainedBatch). CommonJS, as the addon is; strata-level is an ES module without top-level
// await, which Node's require() loads (Node >= 20.19).
module.exports = require('strata-level/leveldb-zlib');
