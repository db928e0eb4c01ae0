//! The world editor against Mojang's LevelDB, on every shared world (copies in temp folders):
//! chunk deletion and prune leave exactly the original minus the records of the chosen chunks
//! (computed here independently from the key bytes), read back by Strata and by Mojang's
//! LevelDB (PyPI amulet-leveldb), before and after compaction; entities (`digp` +
//! `actorprefix`) of deleted chunks go, no other does; new tables use ids 0/4 or the world's
//! own. NBT/SNBT round trips are byte-identical on every NBT record and level.dat; an edit of
//! one tag changes exactly that tag for an independent reader (PyPI amulet-nbt).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use strata::bedrock::edit::{apply_edits, Area, ChunkEdit, Selection};
use strata::bedrock::{classify, nbt, nbt_edit, snbt, World};
use strata::{Db, ErrorKind, FsStorage, Options, ReadOptions};

type Entries = BTreeMap<Vec<u8>, Vec<u8>>;

/// Copies a folder tree.
fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let to = dst.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &to);
        } else {
            std::fs::copy(entry.path(), &to).unwrap();
        }
    }
}

fn strata_entries(db_dir: &Path) -> Entries {
    let db = Db::open_path(db_dir.to_str().unwrap(), Options::bedrock().read_only()).unwrap();
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    let mut out = Entries::new();
    while it.valid() {
        out.insert(it.key().to_vec(), it.value().to_vec());
        it.next();
    }
    it.status().unwrap();
    out
}

/// Mojang's LevelDB reads a copy of `db_dir` (it opens as a writer).
fn mojang_entries(db_dir: &Path) -> Entries {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("db");
    copy_tree(db_dir, &copy);
    let out = tmp.path().join("dump");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/dump_db.py");
    let o = Command::new(std::env::var("PYTHON").unwrap_or("python3".into()))
        .arg(script)
        .arg("amulet")
        .arg(&copy)
        .arg(&out)
        .output()
        .expect("python3 runs");
    assert!(
        o.status.success(),
        "Mojang's LevelDB could not read {} (run scripts/setup.sh): {}",
        db_dir.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    common::read_peer_records(&out, true).into_iter().collect()
}

// ---- the expected deletion, computed from the key bytes (independently of src/bedrock)

const STRING_PREFIXES: [&[u8]; 9] = [
    b"~local_player",
    b"player_",
    b"actorprefix",
    b"VILLAGE_",
    b"map_",
    b"structuretemplate_",
    b"tickingarea_",
    b"digp",
    b"LevelChunkMetaDataDictionary",
];

/// (x, z, dimension, tag, has y byte) of a chunk-shaped key.
fn shape(k: &[u8]) -> Option<(i32, i32, i32, u8, bool)> {
    if STRING_PREFIXES.iter().any(|p| k.starts_with(p)) {
        return None;
    }
    let i = |at: usize| i32::from_le_bytes(k[at..at + 4].try_into().unwrap());
    match k.len() {
        9 | 10 => Some((i(0), i(4), 0, k[8], k.len() == 10)),
        13 | 14 if (1..=2).contains(&i(8)) => Some((i(0), i(4), i(8), k[12], k.len() == 14)),
        _ => None,
    }
}

fn recognised(tag: u8, has_y: bool) -> bool {
    let known = (0x2B..=0x41).contains(&tag) || tag == 0x76 || tag == 0x77;
    known && has_y == (tag == 0x2F)
}

fn digp_of(k: &[u8]) -> Option<(i32, i32, i32)> {
    let rest = k.strip_prefix(b"digp")?;
    let i = |at: usize| i32::from_le_bytes(rest[at..at + 4].try_into().unwrap());
    match rest.len() {
        8 => Some((i(0), i(4), 0)),
        12 => Some((i(0), i(4), i(8))),
        _ => None,
    }
}

/// Chunks (x, z) of `dim`: those with a recognised record or a digp.
fn chunks(entries: &Entries, dim: i32) -> BTreeSet<(i32, i32)> {
    let mut out = BTreeSet::new();
    for k in entries.keys() {
        if let Some((x, z, d, tag, y)) = shape(k) {
            if d == dim && recognised(tag, y) {
                out.insert((x, z));
            }
        }
        if let Some((x, z, d)) = digp_of(k) {
            if d == dim {
                out.insert((x, z));
            }
        }
    }
    out
}

/// The keys the edit must delete: every record of the chunks of `dim` where `doomed`.
fn doomed_keys(
    entries: &Entries,
    dim: i32,
    doomed: impl Fn(i32, i32) -> bool,
) -> (BTreeSet<Vec<u8>>, u64) {
    let existing = chunks(entries, dim);
    let mut keys = BTreeSet::new();
    let mut kept_ids = BTreeSet::new();
    let mut doomed_ids = BTreeSet::new();
    for (k, v) in entries {
        if let Some((x, z, d, _, _)) = shape(k) {
            if d == dim && existing.contains(&(x, z)) && doomed(x, z) {
                keys.insert(k.clone());
            }
        }
        if let Some((x, z, d)) = digp_of(k) {
            let ids = v.chunks_exact(8).map(<[u8]>::to_vec);
            if d == dim && doomed(x, z) {
                keys.insert(k.clone());
                doomed_ids.extend(ids);
            } else {
                kept_ids.extend(ids);
            }
        }
    }
    let mut entities = 0;
    for id in doomed_ids.difference(&kept_ids) {
        let k = [b"actorprefix".as_slice(), id].concat();
        if entries.contains_key(&k) {
            keys.insert(k);
            entities += 1;
        }
    }
    (keys, entities)
}

fn minus(entries: &Entries, keys: &BTreeSet<Vec<u8>>) -> Entries {
    entries
        .iter()
        .filter(|(k, _)| !keys.contains(*k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn assert_entries(got: &Entries, want: &Entries, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: entry count");
    let missing: Vec<_> = want
        .keys()
        .filter(|k| !got.contains_key(*k))
        .take(3)
        .collect();
    let extra: Vec<_> = got
        .keys()
        .filter(|k| !want.contains_key(*k))
        .take(3)
        .collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{what}: missing {missing:x?}, extra {extra:x?}"
    );
    assert!(got == want, "{what}: some value differs");
}

/// The world's folder (or bare db folder) copied into a temp dir; returns (tmp, world root).
fn world_copy(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join(name);
    copy_tree(&common::worlds_dir().join(name), &root);
    (tmp, root)
}

fn open_writable(root: &Path) -> World {
    World::open_writable(Arc::new(FsStorage::new()), root.to_str().unwrap()).unwrap()
}

/// Compacts with Strata, checks every table's block compression ids, returns the contents.
fn compact_and_check_ids(root: &Path, allowed: &BTreeSet<u8>, what: &str) -> Entries {
    let db_dir = root.join("db");
    let db = Db::open_path(db_dir.to_str().unwrap(), Options::bedrock()).unwrap();
    db.compact_range(None, None).unwrap();
    for (_, f) in db.version().all_files() {
        for id in db.table_stats(f).unwrap().compression_ids.keys() {
            assert!(allowed.contains(id), "{what}: a table holds block id {id}");
        }
    }
    db.close().unwrap();
    strata_entries(&db_dir)
}

fn allowed_ids(w: &common::World) -> BTreeSet<u8> {
    let mut ids: BTreeSet<u8> = [0, 4].into();
    ids.extend(
        w.compression_ids
            .split(',')
            .filter_map(|s| s.parse::<u8>().ok()),
    );
    ids
}

/// The dimension an edit of this world works on: the Overworld when it has chunks.
fn edit_dimension(entries: &Entries) -> i32 {
    (0..=2).find(|d| !chunks(entries, *d).is_empty()).unwrap()
}

#[test]
fn delete_chunks_on_every_world_matches_mojang() {
    if common::skip_without_worlds("delete_chunks_on_every_world_matches_mojang") {
        return;
    }
    let mut rows = Vec::new();
    for w in common::worlds() {
        let (_tmp, root) = world_copy(&w.name);
        let db_dir = root.join("db");
        let before = strata_entries(&db_dir);
        assert_eq!(before.len() as u64, w.expected.entries, "{}", w.name);
        let dim = edit_dimension(&before);
        let &(x, z) = chunks(&before, dim).iter().next().unwrap();
        let area = Selection::new(vec![Area::new(x - 1, z - 1, x + 1, z + 1)]);
        let (keys, entities) = doomed_keys(&before, dim, |cx, cz| area.contains(cx, cz));
        let want = minus(&before, &keys);
        let bytes: u64 = keys
            .iter()
            .map(|k| (k.len() + before[k].len()) as u64)
            .sum();
        let level_dat = std::fs::read(root.join("level.dat")).ok();

        let world = open_writable(&root);
        let report = world.delete_chunks(dim, &area).unwrap();
        world.close().unwrap();
        let n_chunks = chunks(&before, dim)
            .iter()
            .filter(|(a, b)| area.contains(*a, *b))
            .count();
        assert_eq!(
            (report.chunks, report.records, report.bytes, report.entities),
            (n_chunks as u64, keys.len() as u64, bytes, entities),
            "{}",
            w.name
        );
        assert_entries(
            &strata_entries(&db_dir),
            &want,
            &format!("{} strata", w.name),
        );
        assert_entries(
            &mojang_entries(&db_dir),
            &want,
            &format!("{} mojang", w.name),
        );
        let compacted = compact_and_check_ids(&root, &allowed_ids(&w), &w.name);
        assert_entries(&compacted, &want, &format!("{} compacted", w.name));
        assert_eq!(
            std::fs::read(root.join("level.dat")).ok(),
            level_dat,
            "{}",
            w.name
        );
        rows.push((
            w.name.clone(),
            dim,
            report.chunks,
            report.records,
            report.entities,
        ));
    }
    let summary: Vec<String> = rows
        .iter()
        .map(|(n, d, c, r, e)| format!("{n}:{d}:{c}:{r}:{e}"))
        .collect();
    println!("{}", summary.join("\n"));
    // Exact figures per world: name:dimension:chunks:records:entities.
    assert_eq!(summary, DELETE_FIGURES, "{summary:#?}");
}

const DELETE_FIGURES: [&str; 16] = [
    "amulet_1_16:0:2:20:0",
    "amulet_1_17_20_caves_and_cliffs:0:2:28:0",
    "amulet_1_17_20_vanilla:0:2:24:0",
    "amulet_1_17_40_superflat:0:5:20:0",
    "amulet_1_17_40_vanilla:0:1:8:0",
    "amulet_1_18_superflat:0:1:6:0",
    "amulet_1_18_updated_superflat:0:5:20:0",
    "amulet_1_18_vanilla:0:1:14:0",
    "bedrock_provider_mctestdb:0:5:25:0",
    "mcpe_0_11_mcedit_testdb:0:4:8:0",
    "minet_testworld:0:1:9:0",
    "rbedrock_example1:0:4:44:0",
    "rbedrock_example2_2022:0:1:12:0",
    "rbedrock_example2_2025:0:3:41:2",
    "rbedrock_example3:0:3:36:2",
    "bds_26_0_featherdev:0:3:52:3",
];

#[test]
fn prune_on_every_world_matches_mojang() {
    if common::skip_without_worlds("prune_on_every_world_matches_mojang") {
        return;
    }
    let mut rows = Vec::new();
    for w in common::worlds() {
        let (_tmp, root) = world_copy(&w.name);
        let db_dir = root.join("db");
        let before = strata_entries(&db_dir);
        let dim = edit_dimension(&before);
        let list: Vec<(i32, i32)> = chunks(&before, dim).into_iter().collect();
        let (mx, mz) = list[list.len() / 2];
        let (lx, lz) = list[list.len() - 1];
        let keep = Selection::parse(&format!(
            "{},{}:{},{};{lx},{lz}",
            mx - 3,
            mz - 3,
            mx + 3,
            mz + 3
        ))
        .unwrap();
        let (keys, entities) = doomed_keys(&before, dim, |cx, cz| !keep.contains(cx, cz));
        let want = minus(&before, &keys);

        let world = open_writable(&root);
        let report = world.prune(dim, &keep, false).unwrap();
        world.close().unwrap();
        assert_eq!(
            (report.records, report.entities),
            (keys.len() as u64, entities),
            "{}",
            w.name
        );
        let kept = chunks(&want, dim);
        assert!(
            kept.iter().all(|(a, b)| keep.contains(*a, *b)),
            "{}",
            w.name
        );
        assert_eq!(report.chunks_left, kept.len() as u64, "{}", w.name);
        assert_entries(
            &strata_entries(&db_dir),
            &want,
            &format!("{} strata", w.name),
        );
        let compacted = compact_and_check_ids(&root, &allowed_ids(&w), &w.name);
        assert_entries(&compacted, &want, &format!("{} compacted", w.name));
        assert_entries(
            &mojang_entries(&db_dir),
            &want,
            &format!("{} mojang", w.name),
        );
        rows.push(format!(
            "{}:{dim}:{}:{}:{}:{}",
            w.name, report.chunks, report.chunks_left, report.records, report.entities
        ));
    }
    println!("{}", rows.join("\n"));
    // name:dimension:chunks deleted:chunks left:records:entities.
    assert_eq!(rows, PRUNE_FIGURES, "{rows:#?}");
}

#[test]
fn staged_edits_apply_in_one_batch_as_if_one_after_another() {
    if common::skip_without_worlds("staged_edits_apply_in_one_batch_as_if_one_after_another") {
        return;
    }
    let mut rows = Vec::new();
    for w in common::worlds() {
        let (_tmp, root) = world_copy(&w.name);
        let db_dir = root.join("db");
        let before = strata_entries(&db_dir);
        // Per dimension with chunks: delete a 5x5 area around the middle chunk, then keep the
        // western half (plus that middle chunk's row, so the keep is never empty).
        let mut edits = Vec::new();
        let mut keys = BTreeSet::new();
        let mut entities = 0;
        for dim in 0..=2 {
            let list: Vec<(i32, i32)> = chunks(&before, dim).into_iter().collect();
            if list.is_empty() {
                continue;
            }
            let (mx, mz) = list[list.len() / 2];
            let xs: Vec<i32> = list.iter().map(|c| c.0).collect();
            let west = xs.iter().min().unwrap()
                + (xs.iter().max().unwrap() - xs.iter().min().unwrap()) / 2;
            let area =
                Selection::parse(&format!("{},{}:{},{}", mx - 2, mz - 2, mx + 2, mz + 2)).unwrap();
            let keep = Selection::parse(&format!("-30000000,-30000000:{west},30000000")).unwrap();
            let (k, e) = doomed_keys(&before, dim, |x, z| {
                area.contains(x, z) || !keep.contains(x, z)
            });
            keys.extend(k);
            entities += e;
            edits.push(ChunkEdit::Delete {
                dimension: dim,
                area,
            });
            edits.push(ChunkEdit::Keep {
                dimension: dim,
                keep,
            });
        }
        let want = minus(&before, &keys);
        let world = open_writable(&root);
        let dry = apply_edits(world.db(), &edits, true).unwrap();
        assert_entries(
            &strata_entries_live(world.db()),
            &before,
            &format!("{} after the dry run", w.name),
        );
        let report = apply_edits(world.db(), &edits, false).unwrap();
        assert_eq!(dry, report, "{}: the dry run's figures", w.name);
        assert_eq!(
            (report.records, report.entities),
            (keys.len() as u64, entities),
            "{}",
            w.name
        );
        world.close().unwrap();
        assert_entries(
            &strata_entries(&db_dir),
            &want,
            &format!("{} strata", w.name),
        );
        if ["amulet_1_16", "rbedrock_example2_2025", "rbedrock_example3"].contains(&w.name.as_str())
        {
            assert_entries(
                &mojang_entries(&db_dir),
                &want,
                &format!("{} mojang", w.name),
            );
        }
        rows.push(format!(
            "{}:{}:{}:{}:{}",
            w.name, report.chunks, report.chunks_left, report.records, report.entities
        ));
    }
    println!("{}", rows.join("\n"));
    // name:chunks deleted:chunks left:records:entities, over every dimension with chunks.
    assert_eq!(rows, STAGED_FIGURES, "{rows:#?}");
    // Bad staged lists: nothing written.
    let (_tmp, root) = world_copy("amulet_1_16");
    let world = open_writable(&root);
    let before = strata_entries_live(world.db());
    assert!(apply_edits(world.db(), &[], false).is_err());
    let empty_keep = ChunkEdit::Keep {
        dimension: 0,
        keep: Selection::parse("900000,900000").unwrap(),
    };
    let delete = ChunkEdit::Delete {
        dimension: 0,
        area: Selection::parse("-5,-5:5,5").unwrap(),
    };
    let err = apply_edits(world.db(), &[delete, empty_keep], false).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert_entries(
        &strata_entries_live(world.db()),
        &before,
        "refused staged edits",
    );
    assert_eq!(
        ChunkEdit::parse("delete 0 1,2:3,4").unwrap(),
        ChunkEdit::Delete {
            dimension: 0,
            area: Selection::parse("1,2:3,4").unwrap()
        }
    );
    assert!(ChunkEdit::parse("keep 3 1,2").is_err());
    assert!(ChunkEdit::parse("erase 0 1,2").is_err());
}

const STAGED_FIGURES: [&str; 16] = [
    "amulet_1_16:204:232:1993:0",
    "amulet_1_17_20_caves_and_cliffs:88:94:1177:0",
    "amulet_1_17_20_vanilla:48:34:509:0",
    "amulet_1_17_40_superflat:48:24:195:0",
    "amulet_1_17_40_vanilla:144:72:1217:0",
    "amulet_1_18_superflat:3:3:17:0",
    "amulet_1_18_updated_superflat:48:24:209:0",
    "amulet_1_18_vanilla:3469:2837:21013:0",
    "bedrock_provider_mctestdb:39:18:197:0",
    "mcpe_0_11_mcedit_testdb:134:122:280:0",
    "minet_testworld:804:473:7171:0",
    "rbedrock_example1:60:45:645:0",
    "rbedrock_example2_2022:1:0:12:0",
    "rbedrock_example2_2025:37:26:680:34",
    "rbedrock_example3:11:13:188:10",
    "bds_26_0_featherdev:528:4766:7520:213",
];

fn strata_entries_live(db: &Db) -> Entries {
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    let mut out = Entries::new();
    while it.valid() {
        out.insert(it.key().to_vec(), it.value().to_vec());
        it.next();
    }
    it.status().unwrap();
    out
}

const PRUNE_FIGURES: [&str; 16] = [
    "amulet_1_16:0:404:32:3865:0",
    "amulet_1_17_20_caves_and_cliffs:0:161:21:2157:0",
    "amulet_1_17_20_vanilla:0:34:48:373:0",
    "amulet_1_17_40_superflat:0:33:39:132:0",
    "amulet_1_17_40_vanilla:0:198:18:1593:0",
    "amulet_1_18_superflat:0:1:5:6:0",
    "amulet_1_18_updated_superflat:0:33:39:132:0",
    "amulet_1_18_vanilla:0:6170:50:46927:0",
    "bedrock_provider_mctestdb:0:11:46:55:0",
    "mcpe_0_11_mcedit_testdb:0:227:29:502:0",
    "minet_testworld:0:1233:44:10769:0",
    "rbedrock_example1:0:55:50:600:0",
    "rbedrock_example2_2022:0:0:1:0:0",
    "rbedrock_example2_2025:0:47:16:860:41",
    "rbedrock_example3:0:9:15:130:3",
    "bds_26_0_featherdev:0:4443:23:74681:1148",
];

#[test]
fn refused_edits_write_nothing() {
    if common::skip_without_worlds("refused_edits_write_nothing") {
        return;
    }
    let (_tmp, root) = world_copy("rbedrock_example3");
    let db_dir = root.join("db");
    let before = strata_entries(&db_dir);
    let files = |dir: &Path| -> BTreeMap<std::ffi::OsString, Vec<u8>> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_type().unwrap().is_file())
            .map(|e| (e.file_name(), std::fs::read(e.path()).unwrap()))
            .collect()
    };
    let (db_files, root_files) = (files(&db_dir), files(&root));
    let ro = World::open(Arc::new(FsStorage::new()), root.to_str().unwrap()).unwrap();
    let all = Selection::parse("-100000,-100000:100000,100000").unwrap();
    for e in [
        ro.delete_chunks(0, &all).unwrap_err(),
        ro.prune(0, &Selection::parse("0,0").unwrap(), true)
            .unwrap_err(),
        ro.set_snbt(b"~local_player", "{}").unwrap_err(),
        ro.set_level_dat_snbt("{}").unwrap_err(),
    ] {
        assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
        assert!(e.to_string().contains("read-only"), "{e}");
    }
    drop(ro);
    // A read-only world's files are untouched, byte for byte.
    assert!(files(&db_dir) == db_files && files(&root) == root_files);
    let world = open_writable(&root);
    let far = Selection::parse("1000000,1000000:1000010,1000010").unwrap();
    let e = world.delete_chunks(0, &far).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(
        e.to_string()
            .contains("no chunk of dimension 0 in the selection 1000000,1000000:1000010,1000010"),
        "{e}"
    );
    let e = world.prune(0, &far, false).unwrap_err();
    assert!(
        e.to_string().contains("pruning would delete every chunk"),
        "{e}"
    );
    assert_eq!(
        world.delete_chunks(5, &far).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    let e = world.set_snbt(b"~local_player", "{a:1,,}").unwrap_err();
    assert_eq!(
        e.to_string(),
        "Invalid argument: snbt: line 1, column 6 (offset 5): expected a name or '}' in a compound, found ','"
    );
    let e = world.set_level_dat_snbt("{LevelName:\"x\"").unwrap_err();
    assert!(e.to_string().contains("expected ',' or '}'"), "{e}");
    world.close().unwrap();
    assert_entries(&strata_entries(&db_dir), &before, "after refused edits");
    let level_dat = std::fs::read(root.join("level.dat")).unwrap();
    assert_eq!(
        level_dat,
        std::fs::read(common::worlds_dir().join("rbedrock_example3/level.dat")).unwrap()
    );
}

#[test]
fn snbt_round_trip_is_byte_identical_on_every_world() {
    if common::skip_without_worlds("snbt_round_trip_is_byte_identical_on_every_world") {
        return;
    }
    let mut rows = Vec::new();
    for w in common::worlds() {
        let root = common::worlds_dir().join(&w.name);
        let entries = strata_entries(&root.join("db"));
        let (mut n, mut refused) = (0, 0);
        for (k, v) in &entries {
            if nbt::read_all(v).is_err() {
                continue;
            }
            // Values that parse as NBT but would not survive the round trip are refused (only
            // binary records that parse by accident); every other one is byte-identical.
            // Also refused: a record holding a string of raw bytes (Tag::String is UTF-8): in
            // bds_26_0_featherdev (1.26) every actor's EntityStorageKeyComponent keeps its
            // 8-byte StorageKey as a string (actors, players, bee nests' occupants).
            let Ok(roots) = nbt_edit::editable_roots(v) else {
                let binary_string = holds_non_utf8_string(v);
                assert!(
                    classify(k).label() == "chunk:SubChunkPrefix" || binary_string,
                    "{} {k:x?} {}",
                    w.name,
                    classify(k).label()
                );
                refused += 1;
                continue;
            };
            let text = snbt::to_snbt(&roots);
            let back = snbt::parse(&text).unwrap_or_else(|e| panic!("{} {k:x?}: {e}", w.name));
            assert!(snbt::encode(&back) == *v, "{} {k:x?}: bytes differ", w.name);
            n += 1;
        }
        let mut level = 0;
        for file in ["level.dat", "level.dat_old"] {
            let Ok(data) = std::fs::read(root.join(file)) else {
                continue;
            };
            let (version, body) = nbt_edit::split_level_dat(&data).unwrap();
            let text = snbt::to_snbt(&nbt::read_all(body).unwrap());
            let again = nbt_edit::encode_level_dat(version, &snbt::parse(&text).unwrap());
            assert!(again == data, "{} {file}: bytes differ", w.name);
            level += 1;
        }
        rows.push(format!("{}:{n}:{refused}:{level}", w.name));
    }
    println!("{}", rows.join("\n"));
    // name:NBT records:refused records:level.dat files.
    assert_eq!(rows, SNBT_FIGURES, "{rows:#?}");
}

/// Whether little-endian NBT `v` (one or more named roots) holds a string tag whose bytes are
/// not UTF-8: a walk of its own, independent of the crate's reader.
fn holds_non_utf8_string(v: &[u8]) -> bool {
    fn walk(v: &[u8], at: &mut usize, tag: u8, depth: usize) -> Option<bool> {
        let take = |at: &mut usize, n: usize| -> Option<&[u8]> {
            let s = v.get(*at..*at + n)?;
            *at += n;
            Some(s)
        };
        let len = |at: &mut usize, n: usize| -> Option<usize> {
            let b = take(at, n)?;
            Some(if n == 2 {
                u16::from_le_bytes([b[0], b[1]]) as usize
            } else {
                i32::from_le_bytes([b[0], b[1], b[2], b[3]]).max(0) as usize
            })
        };
        if depth > 512 {
            return None;
        }
        Some(match tag {
            1 => take(at, 1).map(|_| false)?,
            2 => take(at, 2).map(|_| false)?,
            3 | 5 => take(at, 4).map(|_| false)?,
            4 | 6 => take(at, 8).map(|_| false)?,
            7 => {
                let n = len(at, 4)?;
                take(at, n).map(|_| false)?
            }
            8 => {
                let n = len(at, 2)?;
                std::str::from_utf8(take(at, n)?).is_err()
            }
            9 => {
                let elem = *take(at, 1)?.first()?;
                let n = len(at, 4)?;
                let mut any = false;
                for _ in 0..n {
                    any |= walk(v, at, elem, depth + 1)?;
                }
                any
            }
            10 => {
                let mut any = false;
                loop {
                    let t = *take(at, 1)?.first()?;
                    if t == 0 {
                        break any;
                    }
                    let n = len(at, 2)?;
                    take(at, n)?;
                    any |= walk(v, at, t, depth + 1)?;
                }
            }
            11 => {
                let n = len(at, 4)?;
                take(at, 4 * n).map(|_| false)?
            }
            12 => {
                let n = len(at, 4)?;
                take(at, 8 * n).map(|_| false)?
            }
            _ => return None,
        })
    }
    let mut at = 0;
    let mut any = false;
    while at < v.len() {
        let Some(&t) = v.get(at) else { break };
        at += 1;
        let Some(n) = v
            .get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize)
        else {
            return false;
        };
        at += 2 + n;
        match walk(v, &mut at, t, 0) {
            Some(found) => any |= found,
            None => return false,
        }
    }
    any
}

const SNBT_FIGURES: [&str; 16] = [
    "amulet_1_16:143:0:2",
    "amulet_1_17_20_caves_and_cliffs:59:0:2",
    "amulet_1_17_20_vanilla:19:0:2",
    "amulet_1_17_40_superflat:11:0:2",
    "amulet_1_17_40_vanilla:93:0:2",
    "amulet_1_18_superflat:11:0:2",
    "amulet_1_18_updated_superflat:9:0:2",
    "amulet_1_18_vanilla:748:0:2",
    "bedrock_provider_mctestdb:9:0:0",
    "mcpe_0_11_mcedit_testdb:49:0:2",
    "minet_testworld:427:2:0",
    "rbedrock_example1:44:0:2",
    "rbedrock_example2_2022:9:0:2",
    "rbedrock_example2_2025:96:0:2",
    "rbedrock_example3:26:0:2",
    "bds_26_0_featherdev:2082:1389:2", // 1,389 refused: the records holding a StorageKey string (counted independently)
];

fn nbt_diff(old: &Path, new: &Path, skip: usize) -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/nbt_diff.py");
    let o = Command::new(std::env::var("PYTHON").unwrap_or("python3".into()))
        .arg(script)
        .arg(old)
        .arg(new)
        .arg(skip.to_string())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "amulet-nbt failed (run scripts/setup.sh): {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

/// Replaces the first line of `text` starting (after indentation) with `starts`.
fn replace_line(text: &str, starts: &str, with: &str) -> String {
    let mut done = false;
    text.lines()
        .map(|l| {
            if !done && l.trim_start().starts_with(starts) {
                done = true;
                format!("{}{with}", &l[..l.len() - l.trim_start().len()])
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn an_edit_of_one_tag_changes_exactly_that_tag() {
    if common::skip_without_worlds("an_edit_of_one_tag_changes_exactly_that_tag") {
        return;
    }
    let (tmp, root) = world_copy("amulet_1_18_vanilla");
    let world = open_writable(&root);
    // level.dat: one nested field and one top-level field.
    let text = world.level_dat_snbt().unwrap();
    let edited = replace_line(
        &text,
        "LevelName:",
        "LevelName: \"Edited \\\"by\\\" Strata ✓\",",
    );
    let edited = replace_line(&edited, "RandomSeed:", "RandomSeed: -42L,");
    assert_ne!(edited, text);
    let old = tmp.path().join("level.dat.orig");
    std::fs::copy(root.join("level.dat"), &old).unwrap();
    assert!(world.set_level_dat_snbt(&edited).unwrap().changed);
    assert_eq!(
        nbt_diff(&old, &root.join("level.dat"), 8),
        ["/LevelName", "/RandomSeed"]
    );
    let dat = world.level_dat().unwrap().unwrap();
    assert_eq!(dat.name.as_deref(), Some("Edited \"by\" Strata ✓"));
    assert_eq!((dat.seed, dat.storage_version), (Some(-42), 8));
    // The same text again: nothing written.
    let report = world
        .set_level_dat_snbt(&world.level_dat_snbt().unwrap())
        .unwrap();
    assert!(!report.changed);

    // A db record: the local player's position (a list of floats).
    let key = b"~local_player";
    let before = world
        .db()
        .get(&ReadOptions::default(), key)
        .unwrap()
        .unwrap();
    let text = world.snbt(key).unwrap().unwrap();
    let pos = text.find("Pos: [").unwrap();
    let end = pos + text[pos..].find(']').unwrap();
    let edited = format!("{}Pos: [1.5f, 70.0f, -2.25f{}", &text[..pos], &text[end..]);
    assert!(world.set_snbt(key, &edited).unwrap().changed);
    let after = world
        .db()
        .get(&ReadOptions::default(), key)
        .unwrap()
        .unwrap();
    assert_eq!(after.len(), before.len());
    let (a, b) = (tmp.path().join("a.nbt"), tmp.path().join("b.nbt"));
    std::fs::write(&a, &before).unwrap();
    std::fs::write(&b, &after).unwrap();
    let diff = nbt_diff(&a, &b, 0);
    assert!(
        !diff.is_empty() && diff.iter().all(|p| p.starts_with("/Pos/")),
        "{diff:?}"
    );
    assert!(!world.set_snbt(key, &edited).unwrap().changed);
    world.close().unwrap();
    // Mojang's LevelDB reads the edited record.
    let mojang = mojang_entries(&root.join("db"));
    assert!(mojang[&key.to_vec()] == after);
}

// ---- the CLI: strata world delete-chunks | prune | nbt | set-nbt | export

fn strata(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn unzip(zip: &Path, dest: &Path) -> Vec<String> {
    let o = Command::new("python3")
        .args(["-c", "import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nz.extractall(sys.argv[2])\nprint('\\n'.join(f'{i.filename} {i.compress_type}' for i in z.infolist()))"])
        .arg(zip)
        .arg(dest)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

/// Every file of a tree with its bytes.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        if entry.file_type().unwrap().is_dir() {
            for (k, v) in tree(&entry.path()) {
                out.insert(format!("{name}/{k}"), v);
            }
        } else {
            out.insert(name, std::fs::read(entry.path()).unwrap());
        }
    }
    out
}

#[test]
fn cli_prune_a_mcworld_then_edit_level_dat_then_export() {
    if common::skip_without_worlds("cli_prune_a_mcworld_then_edit_level_dat_then_export") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let t = |n: &str| tmp.path().join(n).to_str().unwrap().to_string();
    let src_zip = common::worlds_dir().join("rbedrock_example3.mcworld");
    let zip_before = std::fs::read(&src_zip).unwrap();
    let before = strata_entries(&common::worlds_dir().join("rbedrock_example3/db"));
    let keep = Selection::parse("-2,-2:2,2").unwrap();
    let (keys, entities) = doomed_keys(&before, 0, |x, z| !keep.contains(x, z));
    let want = minus(&before, &keys);
    assert_eq!((keys.len(), entities), (249, 7));

    // A .mcworld needs --out; it is never rewritten.
    let src = src_zip.to_str().unwrap();
    let (code, _, err) = strata(&[
        "world",
        "prune",
        src,
        "--dimension",
        "0",
        "--keep",
        "-2,-2:2,2",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("is a .mcworld, which is never rewritten"),
        "{err}"
    );
    let (code, out, err) = strata(&[
        "world",
        "prune",
        src,
        "--dimension",
        "0",
        "--keep",
        "-2,-2:2,2",
        "--out",
        &t("p.mcworld"),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(
            "15 chunks and 2 stubs (positions with records but no Version record) of dimension 0 \
             deleted (249 records, 436654 bytes, 7 entities), 7 chunks and 0 stubs left"
        ),
        "{out}"
    );
    assert!(std::fs::read(&src_zip).unwrap() == zip_before);
    let entries = unzip(
        tmp.path().join("p.mcworld").as_path(),
        &tmp.path().join("p"),
    );
    // Tables stored (8 = deflated, 0 = stored), the rest deflated.
    assert!(entries.iter().any(|e| e.ends_with(".ldb 0")), "{entries:?}");
    assert!(entries.contains(&"level.dat 8".to_string()), "{entries:?}");
    assert!(
        entries.contains(&"levelname.txt 8".to_string()),
        "{entries:?}"
    );
    assert_entries(
        &mojang_entries(&tmp.path().join("p/db")),
        &want,
        "pruned .mcworld",
    );

    // level.dat through SNBT: print, edit one field, write into a new .mcworld.
    let (code, text, err) = strata(&["world", "nbt", &t("p.mcworld"), "level.dat"]);
    assert_eq!(code, 0, "{err}");
    let edited = replace_line(&text, "LevelName:", "LevelName: \"Pruned by Strata\",");
    std::fs::write(t("level.snbt"), &edited).unwrap();
    let (code, out, err) = strata(&[
        "world",
        "set-nbt",
        &t("p.mcworld"),
        "level.dat",
        "--snbt",
        &t("level.snbt"),
        "--out",
        &t("e.mcworld"),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("level.dat: written"), "{out}");
    unzip(
        tmp.path().join("e.mcworld").as_path(),
        &tmp.path().join("e"),
    );
    assert_eq!(
        nbt_diff(
            &tmp.path().join("p/level.dat"),
            &tmp.path().join("e/level.dat"),
            8
        ),
        ["/LevelName"]
    );
    let name = Command::new("python3")
        .args(["-c", "import sys, amulet_nbt\nd = open(sys.argv[1], 'rb').read()\nprint(amulet_nbt.load(d[8:], little_endian=True).compound['LevelName'].py_str)"])
        .arg(tmp.path().join("e/level.dat"))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&name.stdout).trim(),
        "Pruned by Strata"
    );
    assert_entries(
        &mojang_entries(&tmp.path().join("e/db")),
        &want,
        "edited .mcworld",
    );

    // Hostile input: nothing written, clear messages.
    std::fs::write(t("bad.snbt"), "{\n  LevelName: \"x\"\n  Other: 1\n}").unwrap();
    let (code, _, err) = strata(&[
        "world",
        "set-nbt",
        &t("p.mcworld"),
        "level.dat",
        "--snbt",
        &t("bad.snbt"),
        "--out",
        &t("x.mcworld"),
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("snbt: line 3, column 3 (offset 21): expected ',' or '}' after a compound entry, found 'O'"),
        "{err}"
    );
    assert!(!tmp.path().join("x.mcworld").exists());
    let (code, _, err) = strata(&[
        "world",
        "delete-chunks",
        &t("p.mcworld"),
        "--dimension",
        "0",
        "--area",
        "0,0:1",
        "--out",
        &t("y"),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("\"1\" is not a corner `x,z`"), "{err}");
    let (code, _, err) = strata(&[
        "world",
        "delete-chunks",
        &t("p.mcworld"),
        "--dimension",
        "0",
        "--area",
        "500,500:600,600",
        "--out",
        &t("y"),
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("no chunk of dimension 0 in the selection 500,500:600,600"),
        "{err}"
    );
}

#[test]
fn cli_delete_in_place_and_export_never_touch_the_original() {
    if common::skip_without_worlds("cli_delete_in_place_and_export_never_touch_the_original") {
        return;
    }
    let (tmp, root) = world_copy("rbedrock_example2_2025");
    let r = root.to_str().unwrap();
    let before = strata_entries(&root.join("db"));
    let area = Selection::parse("0,0:3,3;-4,-4").unwrap();
    let (keys, entities) = doomed_keys(&before, 0, |x, z| area.contains(x, z));
    let want = minus(&before, &keys);
    // An editing command on a folder edits it in place.
    let (code, out, err) = strata(&[
        "world",
        "delete-chunks",
        r,
        "--dimension",
        "0",
        "--area",
        "0,0:3,3;-4,-4",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("({} records, ", keys.len())), "{out}");
    assert!(out.contains(&format!(", {entities} entities)")), "{out}");
    assert_entries(&strata_entries(&root.join("db")), &want, "in place");
    // Export compacts a copy: the folder is untouched, byte for byte.
    let files = tree(&root);
    let zip = tmp.path().join("w.mcworld");
    let (code, out, err) = strata(&["world", "export", r, "--out", zip.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(" files, "), "{out}");
    assert!(tree(&root) == files, "export changed the original");
    assert!(!tmp.path().join("w.mcworld.strata-tmp").exists());
    let names = unzip(&zip, &tmp.path().join("u"));
    let unzipped = tree(&tmp.path().join("u"));
    for f in [
        "level.dat",
        "levelname.txt",
        "world_icon.jpeg",
        "level.dat_old",
    ] {
        assert!(unzipped[f] == files[f], "{f}");
    }
    assert!(names.iter().all(|n| !n.contains("LOCK")), "{names:?}");
    assert_entries(&mojang_entries(&tmp.path().join("u/db")), &want, "exported");
    // The compacted export holds no deleted record: one table per level at most, no data in
    // the log (at most the switch marker a new log opens with: one 12-byte empty batch).
    for (name, bytes) in unzipped.iter().filter(|(k, _)| k.ends_with(".log")) {
        let marker_only =
            bytes.len() == 19 && bytes[4..7] == [12, 0, 1] && bytes[7 + 8..7 + 12] == [0, 0, 0, 0];
        assert!(
            bytes.is_empty() || marker_only,
            "{name}: {} bytes",
            bytes.len()
        );
    }
}

#[test]
fn zip_writer_zip64_and_plain_read_back_in_python_and_strata() {
    if common::skip_without_worlds("zip_writer_zip64_and_plain_read_back_in_python_and_strata") {
        return;
    }
    use strata::bedrock::export;
    use strata::bedrock::mcworld::{self, ImportLimits};
    use strata::bedrock::zip_writer::ZipWriter;
    let src = common::worlds_dir().join("rbedrock_example1");
    let mut files = tree(&src);
    files.retain(|k, _| !k.ends_with("LOCK")); // never zipped
    let tmp = tempfile::tempdir().unwrap();
    for (name, limit) in [("plain", u32::MAX as u64), ("zip64", 0)] {
        let zip = tmp.path().join(format!("{name}.mcworld"));
        let out = std::fs::File::create(&zip).unwrap();
        let report = export::write_zip_with(
            &FsStorage::new(),
            src.to_str().unwrap(),
            ZipWriter::with_limit(out, limit),
        )
        .unwrap();
        assert_eq!(report.files as usize, files.len());
        // Python's zipfile checks every CRC-32 while extracting.
        unzip(&zip, &tmp.path().join(name));
        assert!(tree(&tmp.path().join(name)) == files, "{name}");
        // Strata's own importer (the zip crate's reader) too.
        let mem = strata::MemStorage::new();
        let bytes = std::fs::read(&zip).unwrap();
        let r = mcworld::import(&bytes, &mem, "w", ImportLimits::default()).unwrap();
        assert_eq!(r.files as usize, files.len(), "{name}");
    }
    // Same files, same bytes: the export is deterministic.
    let plain = std::fs::read(tmp.path().join("plain.mcworld")).unwrap();
    let again = tmp.path().join("again.mcworld");
    export::write_zip(
        &FsStorage::new(),
        src.to_str().unwrap(),
        std::fs::File::create(&again).unwrap(),
    )
    .unwrap();
    assert!(std::fs::read(&again).unwrap() == plain);
}

/// Chunks and stubs add up with the map's count: a chunk is a position with a Version or
/// LegacyVersion record (what the map draws and the summary counts); a stub has chunk records
/// but no such record (the game's unfinished border chunks: 3,445 of amulet_1_18_vanilla's
/// positions hold only a FinalizedState and an empty Entity record). A deletion takes both and
/// reports them apart, so "242 of 2,737 chunks selected" on the map is "242 chunks and 122
/// stubs" deleted, never "364 chunks". Figures computed here from the key bytes.
#[test]
fn deleted_chunks_and_stubs_add_up_with_the_maps_count() {
    if common::skip_without_worlds("deleted_chunks_and_stubs_add_up_with_the_maps_count") {
        return;
    }
    let (_tmp, root) = world_copy("amulet_1_18_vanilla");
    let before = strata_entries(&root.join("db"));
    let area = Selection::parse("-10,-10:10,10").unwrap();
    let positions = chunks(&before, 0);
    let versioned: BTreeSet<(i32, i32)> = before
        .keys()
        .filter_map(|k| shape(k))
        .filter(|&(_, _, d, tag, y)| d == 0 && !y && (tag == 0x2C || tag == 0x76))
        .map(|(x, z, ..)| (x, z))
        .collect();
    let inside =
        |s: &BTreeSet<(i32, i32)>| s.iter().filter(|&&(x, z)| area.contains(x, z)).count() as u64;
    let (positions_in, versioned_in) = (inside(&positions), inside(&versioned));
    assert_eq!(
        (positions.len(), versioned.len(), positions_in, versioned_in),
        (6220, 2737, 364, 242)
    );
    let world = open_writable(&root);
    let summary = strata::bedrock::keys::summarize(world.db()).unwrap();
    assert_eq!(
        summary.chunks.get(&0).copied(),
        Some(versioned.len() as u64)
    );
    let staged = apply_edits(
        world.db(),
        &[ChunkEdit::Delete {
            dimension: 0,
            area: area.clone(),
        }],
        true,
    )
    .unwrap();
    let report = world.delete_chunks(0, &area).unwrap();
    assert_eq!(staged, report, "the dry run's figures");
    let stubs_left = (positions.len() - versioned.len()) as u64 - (positions_in - versioned_in);
    assert_eq!(
        (
            report.chunks,
            report.stubs,
            report.chunks_left,
            report.stubs_left
        ),
        (
            positions_in,
            positions_in - versioned_in,
            positions.len() as u64 - positions_in,
            stubs_left
        )
    );
    world.close().unwrap();
    // The CLI names them apart, with the same figures.
    let (_tmp2, root2) = world_copy("amulet_1_18_vanilla");
    let (code, out, err) = strata(&[
        "world",
        "delete-chunks",
        root2.to_str().unwrap(),
        "--dimension",
        "0",
        "--area",
        "-10,-10:10,10",
    ]);
    assert_eq!(code, 0, "{err}");
    let want = format!(
        "242 chunks and 122 stubs (positions with records but no Version record) of dimension 0 \
         deleted ({} records, {} bytes, {} entities), {} chunks and {stubs_left} stubs left",
        report.records,
        report.bytes,
        report.entities,
        versioned.len() as u64 - versioned_in
    );
    assert!(out.contains(&want), "{out}\nwant {want}");
}
