// Loads every chunk of a world with bedrock-provider's WorldProvider (through whatever
// `leveldb-zlib` resolves to), saves one edited column back, reloads it; prints a digest (used by
// js/test/bedrock-provider.test.ts with the real addon and with strata-level's drop-in).
const { LevelDB } = require('leveldb-zlib')
const { WorldProvider } = require('bedrock-provider')
const registry = require('prismarine-registry')('bedrock_1.17.10')
const Block = require('prismarine-block')(registry)
const crypto = require('crypto')

async function main (dir) {
  const db = new LevelDB(dir, { createIfMissing: false })
  await db.open()
  const world = new WorldProvider(db, { dimension: 0, registry })
  const chunks = []
  const before = crypto.createHash('sha256')
  for await (const [k, v] of db.getIterator()) { before.update(k); before.update(v) }
  for await (const [key] of db.getIterator({ values: false })) {
    if (key.length === 9 && (key[8] === 0x2c || key[8] === 0x76)) chunks.push([key.readInt32LE(0), key.readInt32LE(4)])
  }
  const out = { chunks: chunks.length, contentBefore: before.digest('hex').slice(0, 16), digests: [] }
  for (const [x, z] of chunks) {
    const col = await world.load(x, z, true)
    out.digests.push(col ? crypto.createHash('sha256').update(col.toJson()).digest('hex').slice(0, 16) : null)
  }
  // Save: an edited column written back, then read again.
  const [x, z] = chunks[0]
  const col = await world.load(x, z, true)
  col.setBlock({ x: 1, y: 2, z: 1 }, Block.fromStateId(registry.blocksByName.gold_block.defaultState))
  await world.save(x, z, col)
  const again = await world.load(x, z, true)
  out.saved = again.getBlock({ x: 1, y: 2, z: 1 }).name
  out.savedDigest = crypto.createHash('sha256').update(again.toJson()).digest('hex').slice(0, 16)
  // Every entry after the save, hashed in key order (the same bytes in both engines).
  const h = crypto.createHash('sha256')
  let n = 0
  for await (const [k, v] of db.getIterator()) { h.update(k); h.update(v); n++ }
  out.entriesAfterSave = n
  out.contentAfterSave = h.digest('hex').slice(0, 16)
  await db.close()
  console.log(JSON.stringify(out))
}
main(process.argv[2]).catch(e => { console.error(e); process.exit(1) })
