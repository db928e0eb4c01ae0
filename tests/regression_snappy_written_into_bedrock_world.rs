//! Regression: `strata put DB key value` on a copy of a Bedrock world's bare `db/` folder (no
//! level.dat beside it) opened it with the Google profile and flushed the old log into a table
//! of Snappy (id 1) blocks, which Mojang's LevelDB skips without an error: it then iterated
//! 1,589 of 1,676 entries. The same for `open(path)` in strata-level without a profile.
//!
//! Now a writable open without a profile takes the database's own dialect (its tables'
//! codecs, a level.dat beside it, the shapes of its log's keys): for every shared world's bare
//! `db/`, a write through the CLI and through the Rust API leaves only the world's own codecs
//! (0/4, or 0/2 zlib for the oldest) in every table, and Mojang's LevelDB reads exactly the
//! world's entries plus the new one. A codec the dialect cannot read is refused unless forced.
//! A Google database written by plyvel keeps Snappy and reads back in plyvel.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use strata::{CompressionType, Db, ErrorKind, Options, Profile, ReadOptions, WriteOptions};

fn scan_figures(entries: &[(Vec<u8>, Vec<u8>)]) -> strata::ScanStats {
    let mut s = strata::ScanStats::default();
    for (k, v) in entries {
        s.add(k, v);
    }
    s
}

/// Codec ids of every data block of every live table.
fn table_ids(dir: &Path) -> BTreeSet<u8> {
    let db = Db::open_path(dir.to_str().unwrap(), Options::default().read_only()).unwrap();
    let version = db.version();
    version
        .all_files()
        .flat_map(|(_, f)| db.table_stats(f).unwrap().compression_ids.into_keys())
        .collect()
}

#[test]
fn writes_to_a_bare_bedrock_db_keep_its_codecs_and_read_back_in_mojangs_leveldb() {
    if common::skip_without_worlds(
        "writes_to_a_bare_bedrock_db_keep_its_codecs_and_read_back_in_mojangs_leveldb",
    ) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for world in common::worlds() {
        let name = &world.name;
        let own: BTreeSet<u8> = world
            .compression_ids
            .split(',')
            .filter_map(|s| s.trim().parse().ok())
            .chain([0, 4])
            .collect();

        // The CLI, no profile.
        let cli_dir = tmp.path().join(format!("{name}-cli"));
        common::copy_dir(&world.db_dir(), &cli_dir);
        let o = Command::new(env!("CARGO_BIN_EXE_strata"))
            .args([
                "put",
                cli_dir.to_str().unwrap(),
                "strata-regression",
                "written",
            ])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let info = Command::new(env!("CARGO_BIN_EXE_strata"))
            .args(["info", cli_dir.to_str().unwrap()])
            .output()
            .unwrap();
        let info = String::from_utf8_lossy(&info.stdout).to_string();
        assert!(info.contains("dialect      bedrock"), "{name}: {info}");

        // The Rust API, no profile (what the CLI and the npm package ask for).
        let api_dir = tmp.path().join(format!("{name}-api"));
        common::copy_dir(&world.db_dir(), &api_dir);
        let db = Db::open_path(
            api_dir.to_str().unwrap(),
            Options {
                detect_profile: true,
                ..Options::google()
            },
        )
        .unwrap();
        assert_eq!(db.dialect().profile, Some(Profile::Bedrock), "{name}");
        db.put(&WriteOptions::default(), b"strata-regression", b"written")
            .unwrap();
        db.compact_range(None, None).unwrap();
        drop(db);

        for dir in [&cli_dir, &api_dir] {
            let ids = table_ids(dir);
            assert!(ids.is_subset(&own), "{name}: ids {ids:?}, own {own:?}");
            let entries = common::dump_with_peer("amulet", dir);
            let got = scan_figures(
                &entries
                    .iter()
                    .filter(|(k, _)| k != b"strata-regression")
                    .cloned()
                    .collect::<Vec<_>>(),
            );
            assert_eq!(
                got, world.expected,
                "{name}: Mojang's LevelDB after {dir:?}"
            );
            assert!(
                entries
                    .iter()
                    .any(|(k, v)| k == b"strata-regression" && v == b"written"),
                "{name}"
            );
            assert_eq!(entries.len() as u64, world.expected.entries + 1, "{name}");
        }

        // A foreign codec is refused, unless forced. (With detection, a codec left at the
        // starting profile's default follows the detected dialect; one the caller changed
        // stays, and is refused when the dialect cannot read it.)
        let e = Db::open_path(
            api_dir.to_str().unwrap(),
            Options {
                compression: CompressionType::Zstd,
                detect_profile: true,
                ..Options::google()
            },
        )
        .map(|_| ())
        .expect_err("Zstd into a Bedrock world is refused");
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{name}: {e}");
        assert!(e.to_string().contains("bedrock database"), "{e}");
        let e = Db::open_path(api_dir.to_str().unwrap(), Options::google())
            .map(|_| ())
            .expect_err("an explicit Google profile on a Bedrock world is refused");
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{name}: {e}");
        let db = Db::open_path(
            api_dir.to_str().unwrap(),
            Options {
                allow_foreign_codec: true,
                ..Options::google()
            },
        )
        .unwrap();
        assert_eq!(
            db.get(&ReadOptions::default(), b"strata-regression")
                .unwrap()
                .as_deref(),
            Some(&b"written"[..])
        );
    }
}

#[test]
fn a_google_database_written_by_plyvel_keeps_snappy() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("google");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/google_db.py");
    let o = Command::new(std::env::var("PYTHON").unwrap_or("python3".into()))
        .arg(&script)
        .arg(&dir)
        .args(["snappy", "7", "20000"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let before = common::dump_with_peer("plyvel", &dir).len();
    let o = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["put", dir.to_str().unwrap(), "strata-regression", "written"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let db = Db::open_path(dir.to_str().unwrap(), Options::default().read_only()).unwrap();
    assert_eq!(
        db.dialect().profile,
        Some(Profile::Google),
        "{:?}",
        db.dialect()
    );
    drop(db);
    let db = Db::open_path(
        dir.to_str().unwrap(),
        Options {
            detect_profile: true,
            ..Options::bedrock()
        },
    )
    .unwrap();
    db.compact_range(None, None).unwrap();
    drop(db);
    let ids = table_ids(&dir);
    assert!(ids.is_subset(&BTreeSet::from([0, 1])), "{ids:?}");
    let after = common::dump_with_peer("plyvel", &dir);
    assert_eq!(after.len(), before + 1);
    // Raw deflate into a Google database is refused.
    let e = Db::open_path(dir.to_str().unwrap(), Options::bedrock())
        .map(|_| ())
        .expect_err("raw deflate into a Google database is refused");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}
