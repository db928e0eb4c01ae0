//! `strata <command> --help` (and `strata help <command>`): one page per command and per
//! `world` subcommand, each with what it does, its options and an example. The general usage
//! (`strata --help`) lists them all; usage errors name the command and show its page.

/// The help page of `command` (`world` + `sub` for world subcommands), if there is one.
pub fn page(command: &str, sub: Option<&str>) -> Option<&'static str> {
    Some(match (command, sub) {
        ("scan", _) => {
            "usage: strata scan [--json] [--timing] [--readahead-threads N] DB_DIR

Reads every live entry in key order and prints their count, key and value bytes and the
CRC-32C of key0 value0 key1 value1 ... (what `scan` means in the benchmarks). Blocks are
decompressed ahead on N worker threads (default: the number of cores, at most 8; 0: one
thread). --json prints one JSON line; --timing adds open and total seconds on stderr.

example: strata scan --json ~/worlds/MyWorld"
        }
        ("get", _) => {
            "usage: strata get DB_DIR KEY

Prints the value of KEY (text, or 0x-prefixed hex such as 0x0000000001000000 2c). Exit 1
when the key is absent.

example: strata get ~/worlds/MyWorld/db '~local_player'"
        }
        ("dump", _) => {
            "usage: strata dump DB_DIR [--limit N]

Lists keys (as text when printable, else 0x-hex) and value sizes in key order.

example: strata dump ~/worlds/MyWorld --limit 20"
        }
        ("info", _) => {
            "usage: strata info DB_DIR

Files per level with sizes and entry counts, the compression ids of the blocks, the logs
replayed at open, the dialect (google or bedrock, and why), and anything recovery did not
use (on stderr).

example: strata info ~/worlds/MyWorld"
        }
        ("verify", _) => {
            "usage: strata verify DB_DIR

Reads and checks every block of every live table, the logs and the MANIFEST. Exit 1 on the
first damage, naming the file and offset (`strata repair` salvages what is intact).

example: strata verify ~/worlds/MyWorld"
        }
        ("put", _) => {
            "usage: strata put DB_DIR KEY VALUE [--sync] [--profile bedrock|google]
                  [--compression none|snappy|zlib|zlib-raw] [--force-codec]
                  [--compression-threads N]

Sets KEY to VALUE (text or 0x-hex), creating the database if missing. Writes keep the
database's own dialect unless --profile says otherwise; a codec that dialect cannot read is
refused unless --force-codec. --sync waits for the disk. --compression-threads: workers
compressing table blocks while a compaction or flush is waited on (default: the cores;
0: the background thread alone, and compactions cut their tables where LevelDB does).

example: strata put /tmp/db greeting 'hello world'"
        }
        ("delete", _) => {
            "usage: strata delete DB_DIR KEY [--sync] [write options as for put]

Removes KEY (not an error if absent).

example: strata delete /tmp/db greeting"
        }
        ("compact", _) => {
            "usage: strata compact DB_DIR [write options as for put]

Flushes the log into a table and compacts every level (deleted and overwritten data is
dropped, the folder shrinks).

example: strata compact /tmp/db"
        }
        ("repair", _) => {
            "usage: strata repair DB_DIR

Rebuilds the MANIFEST from every table and log found (and logs an open parked in lost/):
every intact entry is kept; unreadable files go to lost/, counted in the report. For
databases whose MANIFEST or CURRENT is lost or damaged, or that recovery reports on.

example: strata repair ~/worlds/Broken/db"
        }
        ("bench", _) => {
            "usage: strata bench [--benchmarks=a,b,...] [--num=N] [--value_size=N] [--threads=N]
                    [--db=DIR] [--json] ...

Google's db_bench workloads with its flags and output format (fillseq, fillrandom,
overwrite, readrandom, readseq, readreverse, seekrandom, fill100K, bulkload_seq, ...).
bench/db_bench.sh runs the same against Google's LevelDB, RocksDB and SQLite.
RucksDB's suite: put_100b, put_1kb, put_10kb, get_memtable, get_sstable, get_not_found,
delete, read_write_50_50, concurrent_writes (--threads), writes_during_flush (per-put
latency percentiles, flushes during the puts; --histogram=1 times every op of the others);
each checks its own results. bench/rucksdb.sh runs them against LevelDB and RocksDB.

example: strata bench --benchmarks=fillrandom,readrandom --num=200000"
        }
        ("gen-world", _) => {
            "usage: strata gen-world OUT_DIR [--chunks-x N] [--chunks-z N] [--seed S]

Writes a deterministic synthetic Bedrock world (level.dat, levelname.txt, db/) with real
terrain records (SubChunkPrefix, Data3D, Version) the map draws fully.

example: strata gen-world /tmp/demo --chunks-x 32 --chunks-z 32 --seed 7"
        }
        ("world", None) => {
            "usage: strata world <info|map|chunks|nbt|delete-chunks|prune|set-nbt|export> WORLD ...

Bedrock worlds: WORLD is a world folder (level.dat + db/), a bare db/ folder or a .mcworld
file. `strata world <subcommand> --help` for each.

example: strata world info ~/worlds/MyWorld.mcworld"
        }
        ("world", Some("info")) => {
            "usage: strata world info WORLD

level.dat's fields, the key kinds with counts and bytes, chunks per dimension.

example: strata world info ~/worlds/MyWorld"
        }
        ("world", Some("map")) => {
            "usage: strata world map WORLD --out F.png [--dimension N] [--scale PIXELS_PER_CHUNK]
                        [--layer relief|surface|height|biome|slime|cave] [--y Y]
                        [--chunks-per-pixel N] [--region X0,Z0,X1,Z1]

A top-down map of one dimension (0 Overworld, 1 Nether, 2 End) as PNG; --scale 16 draws one
pixel per block. Layers: relief (default: biome colours shaded by height), surface (real top
blocks), height (colour ramp, y -64 blue .. 320 white), biome (flat), slime (relief with
Bedrock's slime chunks tinted green; their number is printed), cave (the first block at or
below --y). --chunks-per-pixel 2, 4, … (with --scale 1) draws worlds whose chunks spread too
far for a pixel each: a pixel shows the first chunk of its square. --region draws only that
chunk rectangle (inclusive; the viewer draws large worlds in such bands, shaded as one map).

example: strata world map ~/worlds/MyWorld --out caves.png --layer cave --y -20 --scale 4"
        }
        ("world", Some("chunks")) => {
            "usage: strata world chunks WORLD [--dimension N]

The number of chunks having a Version record in the dimension (default 0).

example: strata world chunks ~/worlds/MyWorld --dimension 1"
        }
        ("world", Some("nbt")) => {
            "usage: strata world nbt WORLD KEY

A record's NBT as SNBT text (KEY text or 0x-hex; `level.dat` for the level.dat file).

example: strata world nbt ~/worlds/MyWorld level.dat > level.snbt"
        }
        ("world", Some("set-nbt")) => {
            "usage: strata world set-nbt WORLD KEY --snbt FILE [--out OUT]

Replaces a record (or level.dat) with the SNBT text in FILE (- for stdin); tags not changed
are written back byte-identical. Edits a world folder in place unless --out names a new
folder or a F.mcworld; a .mcworld input needs --out.

example: strata world set-nbt ~/worlds/MyWorld level.dat --snbt level.snbt"
        }
        ("world", Some("delete-chunks")) => {
            "usage: strata world delete-chunks WORLD --dimension N --area x0,z0:x1,z1[;...]
                               [--out OUT]

Deletes every record of the chunks in the rectangles (inclusive chunk coordinates) and
their entities (digp + actorprefix), in one atomic batch.

example: strata world delete-chunks ~/worlds/MyWorld --dimension 0 --area -4,-4:3,3"
        }
        ("world", Some("entities")) => {
            "usage: strata world entities WORLD [--dimension N]

Counts the entities (actors: digp + actorprefix; legacy chunk Entity records) and block
entities of a dimension (default 0) per identifier.

example: strata world entities ~/worlds/MyWorld --dimension 1"
        }
        ("world", Some("delete-entities")) => {
            "usage: strata world delete-entities WORLD --dimension N --area x0,z0:x1,z1[;...]
                                 [--identifier ID] [--out OUT]

Deletes the entities (never block entities) stored in the chunks of the rectangles, only
those of --identifier when given (e.g. minecraft:zombie), in one atomic batch: an actor's
record goes and its id leaves the chunk's digp; a legacy Entity record loses that compound.

example: strata world delete-entities ~/worlds/MyWorld --dimension 0 --area -8,-8:8,8 --identifier minecraft:item"
        }
        ("world", Some("prune")) => {
            "usage: strata world prune WORLD --dimension N --keep x0,z0:x1,z1[;...] [--force]
                       [--out OUT]

Deletes every chunk of the dimension outside the kept rectangles (keeping none is refused
without --force); other records (players, level data) stay.

example: strata world prune ~/worlds/MyWorld --dimension 0 --keep -32,-32:31,31 --out small.mcworld"
        }
        ("world", Some("export")) => {
            "usage: strata world export WORLD --out F.mcworld [--in-place]

Zips the world as a .mcworld the game imports, compacted on a copy first (deleted data is
really gone); --in-place compacts the original instead.

example: strata world export ~/worlds/MyWorld --out MyWorld.mcworld"
        }
        _ => return None,
    })
}

/// Whether `args` asks for help (`--help` or `-h` anywhere).
pub fn asked(args: &[String]) -> bool {
    args.iter().any(|a| a == "--help" || a == "-h")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_has_a_page_with_an_example() {
        let commands = [
            "scan",
            "get",
            "dump",
            "info",
            "verify",
            "put",
            "delete",
            "compact",
            "repair",
            "bench",
            "gen-world",
            "world",
        ];
        for c in commands {
            let p = page(c, None).unwrap();
            assert!(p.starts_with(&format!("usage: strata {c}")), "{c}");
            assert!(p.contains("\nexample: strata "), "{c}");
        }
        for s in [
            "info",
            "map",
            "chunks",
            "nbt",
            "set-nbt",
            "delete-chunks",
            "prune",
            "export",
            "entities",
            "delete-entities",
        ] {
            let p = page("world", Some(s)).unwrap();
            assert!(p.starts_with(&format!("usage: strata world {s}")), "{s}");
            assert!(p.contains("\nexample: strata world "), "{s}");
        }
        assert!(page("nope", None).is_none());
    }
}
