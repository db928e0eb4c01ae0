//! Entities and block entities (src/bedrock/entities.rs) against an independent reader on
//! every shared world: Mojang's LevelDB (PyPI amulet-leveldb) and amulet-nbt list them per
//! kind and identifier with their positions (tests/peers/entities.py); Strata's list must
//! match exactly. Deleting entities (by identifier inside a selection; one entity) leaves
//! exactly the others, read back by the same independent reader, and every record that holds
//! no deleted entity byte-identical.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use strata::bedrock::edit::Selection;
use strata::bedrock::entities::{delete_entities, delete_entity, entities, EntityKind};
use strata::bedrock::World;
use strata::{Db, FsStorage, Options, ReadOptions};

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

/// The independent listing of `db_dir` (copied first: LevelDB opens as a writer).
fn peer(db_dir: &Path, dim: i32) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("db");
    copy_tree(db_dir, &copy);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/entities.py");
    let o = Command::new(std::env::var("PYTHON").unwrap_or("python3".into()))
        .arg(script)
        .arg(&copy)
        .arg(dim.to_string())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap().trim().to_string()
}

/// Strata's listing in the peer's JSON shape.
fn ours(db: &Db, dim: i32) -> (String, u64) {
    let list = entities(db, dim).unwrap();
    let mut counts: BTreeMap<&str, BTreeMap<String, u64>> = [
        ("actor", BTreeMap::new()),
        ("block entity", BTreeMap::new()),
        ("entity", BTreeMap::new()),
    ]
    .into();
    let mut pos: BTreeMap<&str, i64> = [("actor", 0), ("block entity", 0), ("entity", 0)].into();
    for e in &list.entities {
        *counts
            .get_mut(e.kind.name())
            .unwrap()
            .entry(e.identifier.clone())
            .or_default() += 1;
        *pos.get_mut(e.kind.name()).unwrap() +=
            e.pos.iter().map(|c| (c * 16.0).floor() as i64).sum::<i64>();
    }
    let obj = |m: &BTreeMap<String, u64>| {
        let parts: Vec<String> = m.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
        format!("{{{}}}", parts.join(", "))
    };
    let json = format!(
        "{{\"counts\": {{\"actor\": {}, \"block entity\": {}, \"entity\": {}}}, \"positions\": {{\"actor\": {}, \"block entity\": {}, \"entity\": {}}}}}",
        obj(&counts["actor"]),
        obj(&counts["block entity"]),
        obj(&counts["entity"]),
        pos["actor"],
        pos["block entity"],
        pos["entity"]
    );
    (json, list.unreadable)
}

fn open_ro(db_dir: &Path) -> Db {
    Db::open_path(db_dir.to_str().unwrap(), Options::bedrock().read_only()).unwrap()
}

#[test]
fn entity_lists_match_an_independent_reader_on_every_world() {
    if common::skip_without_worlds("entity_lists_match_an_independent_reader_on_every_world") {
        return;
    }
    let mut totals = Vec::new();
    for w in common::worlds() {
        let db_dir = common::worlds_dir().join(&w.name).join("db");
        let db = open_ro(&db_dir);
        let mut n = 0;
        for dim in 0..=2 {
            let (json, unreadable) = ours(&db, dim);
            assert_eq!(json, peer(&db_dir, dim), "{} dimension {dim}", w.name);
            assert_eq!(unreadable, 0, "{} dimension {dim}", w.name);
            n += entities(&db, dim).unwrap().entities.len();
        }
        totals.push(format!("{}:{n}", w.name));
    }
    println!("{}", totals.join("\n"));
    // name:entities and block entities over the three dimensions.
    assert_eq!(
        totals,
        [
            "amulet_1_16:217",
            "amulet_1_17_20_caves_and_cliffs:89",
            "amulet_1_17_20_vanilla:18",
            "amulet_1_17_40_superflat:4",
            "amulet_1_17_40_vanilla:144",
            "amulet_1_18_superflat:5",
            "amulet_1_18_updated_superflat:4",
            "amulet_1_18_vanilla:903",
            "bedrock_provider_mctestdb:4",
            "mcpe_0_11_mcedit_testdb:581",
            "minet_testworld:621",
            "rbedrock_example1:73",
            "rbedrock_example2_2022:0",
            "rbedrock_example2_2025:175",
            "rbedrock_example3:23",
            "bds_26_0_featherdev:4003",
        ]
    );
}

fn entries(db: &Db) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    let mut out = BTreeMap::new();
    while it.valid() {
        out.insert(it.key().to_vec(), it.value().to_vec());
        it.next();
    }
    out
}

#[test]
fn deleting_entities_leaves_exactly_the_others() {
    if common::skip_without_worlds("deleting_entities_leaves_exactly_the_others") {
        return;
    }
    // Modern actors (digp + actorprefix) and legacy Entity records.
    for (name, identifier) in [
        ("rbedrock_example2_2025", "minecraft:zombie"),
        ("amulet_1_16", "minecraft:cow"),
        ("mcpe_0_11_mcedit_testdb", "id:32"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join(name);
        copy_tree(&common::worlds_dir().join(name), &root);
        let db_dir = root.join("db");
        let world =
            World::open_writable(Arc::new(FsStorage::new()), root.to_str().unwrap()).unwrap();
        let db = world.db();
        let before = entities(db, 0).unwrap().entities;
        let before_entries = entries(db);
        let everywhere = Selection::parse("-30000000,-30000000:30000000,30000000").unwrap();
        let n = before.iter().filter(|e| e.identifier == identifier).count() as u64;
        assert!(n > 0, "{name}: no {identifier}");
        let dry = delete_entities(db, 0, &everywhere, Some(identifier), true).unwrap();
        assert_eq!(entries(db), before_entries, "{name}: the dry run wrote");
        let report = delete_entities(db, 0, &everywhere, Some(identifier), false).unwrap();
        assert_eq!((dry, report.entities), (report, n), "{name}");
        // Then one more entity, the first of another identifier (not a block entity).
        let other = entities(db, 0)
            .unwrap()
            .entities
            .into_iter()
            .find(|e| e.kind != EntityKind::BlockEntity)
            .unwrap();
        assert_eq!(
            delete_entity(db, 0, &other.key, other.root)
                .unwrap()
                .entities,
            1
        );
        let after = entities(db, 0).unwrap().entities;
        let mut want: Vec<_> = before
            .iter()
            .filter(|e| e.identifier != identifier)
            .cloned()
            .collect();
        let gone = want
            .iter()
            .position(|e| e.identifier == other.identifier && e.pos == other.pos)
            .unwrap();
        want.remove(gone);
        let key = |e: &strata::bedrock::entities::EntityInfo| {
            (e.kind, e.identifier.clone(), e.pos.map(f64::to_bits))
        };
        let mut got: Vec<_> = after.iter().map(key).collect();
        let mut want: Vec<_> = want.iter().map(key).collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "{name}");
        // Records that held none of the deleted entities are byte-identical.
        let after_entries = entries(db);
        let touched = |k: &[u8]| {
            k.starts_with(b"digp")
                || k.starts_with(b"actorprefix")
                || (matches!(k.len(), 9 | 13) && k[k.len() - 1] == 0x32)
        };
        for (k, v) in &before_entries {
            if !touched(k) {
                assert_eq!(after_entries.get(k), Some(v), "{name}: {k:x?}");
            }
        }
        world.close().unwrap();
        // The independent reader agrees.
        let (json, _) = ours(&open_ro(&db_dir), 0);
        assert_eq!(json, peer(&db_dir, 0), "{name} after deleting");
    }
}

/// Entity deletions staged with chunk edits (`apply_edits`, the page's undo/redo list) give
/// exactly what applying them one after another gives, in ONE batch: an identifier inside a
/// selection, one entity by key and compound, and a chunk deletion overlapping them (the
/// doomed chunk's entities go with the chunk; none is deleted twice or brought back). A dry
/// run writes nothing and says the same; an entity edit naming no entity is NotFound.
#[test]
fn staged_entity_edits_equal_the_same_edits_one_after_another() {
    use strata::bedrock::edit::{apply_edits, delete_chunks, ChunkEdit};
    if common::skip_without_worlds("staged_entity_edits_equal_the_same_edits_one_after_another") {
        return;
    }
    use strata::bedrock::edit::EditReport;
    // (chunks, stubs): positions deleted and the stubs among them (no Version record); the same
    // pair for the positions left.
    let report =
        |(chunks, stubs), records, bytes, entities, rewritten, (chunks_left, stubs_left)| {
            EditReport {
                chunks,
                stubs,
                records,
                bytes,
                entities,
                rewritten,
                chunks_left,
                stubs_left,
            }
        };
    // What the staged edits delete. Entities counts actorprefix records and compounds cut out
    // of Entity records; a deleted chunk's Entity records go whole, as records.
    for (name, identifier, want) in [
        (
            "rbedrock_example2_2025",
            "minecraft:zombie",
            report((1, 0), 51, 91228, 23, 4, (62, 7)),
        ),
        (
            "amulet_1_16",
            "minecraft:cow",
            report((1, 0), 13, 22012, 2, 1, (435, 0)),
        ),
        (
            "mcpe_0_11_mcedit_testdb",
            "id:32",
            report((1, 0), 5, 85690, 6, 4, (255, 0)),
        ),
    ] {
        let open = |tag: &str| {
            let tmp = tempfile::tempdir().unwrap();
            let root = tmp.path().join(format!("{name}-{tag}"));
            copy_tree(&common::worlds_dir().join(name), &root);
            let w =
                World::open_writable(Arc::new(FsStorage::new()), root.to_str().unwrap()).unwrap();
            (tmp, w)
        };
        let (_a, staged) = open("staged");
        let (_b, stepwise) = open("stepwise");
        let list = entities(staged.db(), 0).unwrap().entities;
        // The chunk of the first entity of `identifier` is deleted as well; another entity
        // (not of `identifier`, not in that chunk) is deleted by key.
        let first = list.iter().find(|e| e.identifier == identifier).unwrap();
        let chunk = Selection::parse(&format!("{},{}", first.chunk.0, first.chunk.1)).unwrap();
        let one = list
            .iter()
            .find(|e| {
                e.kind != EntityKind::BlockEntity
                    && e.identifier != identifier
                    && e.chunk != first.chunk
            })
            .unwrap();
        let everywhere = Selection::parse("-30000000,-30000000:30000000,30000000").unwrap();
        let edits = [
            ChunkEdit::Entities {
                dimension: 0,
                area: everywhere.clone(),
                identifier: Some(identifier.to_string()),
            },
            ChunkEdit::Delete {
                dimension: 0,
                area: chunk.clone(),
            },
            ChunkEdit::Entity {
                dimension: 0,
                key: one.key.clone(),
                root: one.root,
                identifier: Some(one.identifier.clone()),
            },
        ];
        let before = entries(staged.db());
        let dry = apply_edits(staged.db(), &edits, true).unwrap();
        assert_eq!(entries(staged.db()), before, "{name}: the dry run wrote");
        let got = apply_edits(staged.db(), &edits, false).unwrap();
        assert_eq!((dry, got), (want, want), "{name}");
        // One after another: entities of the identifier, the chunk, the one entity.
        let e1 = delete_entities(stepwise.db(), 0, &everywhere, Some(identifier), false).unwrap();
        let c = delete_chunks(stepwise.db(), 0, &chunk).unwrap();
        let e2 = delete_entity(stepwise.db(), 0, &one.key, one.root).unwrap();
        assert_eq!(
            entries(staged.db()),
            entries(stepwise.db()),
            "{name}: staged != one after another"
        );
        println!("{name}: staged {got:?}; one after another {e1:?} {c:?} {e2:?}");
        // An entity edit naming nothing is refused, and writes nothing.
        let gone = [ChunkEdit::Entity {
            dimension: 0,
            key: one.key.clone(),
            root: 9999,
            identifier: None,
        }];
        let now = entries(staged.db());
        let err = apply_edits(staged.db(), &gone, false).unwrap_err();
        assert_eq!(err.kind(), strata::ErrorKind::NotFound, "{name}: {err}");
        assert_eq!(entries(staged.db()), now);
        // An entity staged by position whose compound now holds another entity (its record
        // rewritten meanwhile) is refused, not deleted in its place.
        let other = entities(staged.db(), 0)
            .unwrap()
            .entities
            .into_iter()
            .find(|e| e.kind != EntityKind::BlockEntity)
            .unwrap();
        let moved = [ChunkEdit::Entity {
            dimension: 0,
            key: other.key.clone(),
            root: other.root,
            identifier: Some(format!("{}-not", other.identifier)),
        }];
        let err = apply_edits(staged.db(), &moved, false).unwrap_err();
        assert_eq!(err.kind(), strata::ErrorKind::NotFound, "{name}: {err}");
        assert!(
            err.to_string()
                .contains("its record changed since the edit was staged"),
            "{err}"
        );
        assert_eq!(entries(staged.db()), now);
        staged.close().unwrap();
        stepwise.close().unwrap();
    }
}
