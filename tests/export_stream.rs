//! The streamed `.mcworld` export (`bedrock::export_stream`): its zip equals the in-memory
//! export's byte for byte on the real worlds, whatever the step budget and the scratch
//! storage; progress is monotone and ends at its totals; a cancelled or failed export (a full
//! disk) leaves no file in its temporary folder and the world untouched; a crash's leftovers
//! are removed by the next export.

mod common;

use std::collections::BTreeMap;
use std::io::Cursor;
use std::path::Path;
use std::sync::Arc;

use strata::bedrock::export;
use strata::bedrock::export_stream::{Phase, StreamedExport, ZIP_NAME};
use strata::error::ErrorKind;
use strata::storage::{FaultStorage, FsStorage, MemStorage, Storage};

/// Every file under `dir` (relative path -> bytes).
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd {
            let e = e.unwrap();
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                walk(base, &p, out);
            } else {
                let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    walk(dir, dir, &mut out);
    out
}

fn in_memory_export(root: &str) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    export::export(
        &FsStorage::new(),
        root,
        Arc::new(MemStorage::new()),
        "export",
        &mut out,
    )
    .unwrap();
    out.into_inner()
}

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

/// Runs an export to the end, checking progress on the way: within a phase `done` never
/// decreases and never passes `total`; each phase ends with done == total; phases come in
/// order. Returns the steps taken.
fn run(e: &mut StreamedExport, budget: u64) -> usize {
    let order = [Phase::Copy, Phase::Compact, Phase::Zip, Phase::Done];
    let mut last = e.progress();
    assert_eq!(last.phase, Phase::Copy);
    assert_eq!(last.done, 0);
    let mut steps = 0;
    loop {
        let finished = e.step(budget).unwrap();
        steps += 1;
        let p = e.progress();
        assert!(p.done <= p.total, "{p:?}");
        if p.phase == last.phase {
            assert!(p.done >= last.done, "{last:?} -> {p:?}");
        } else {
            let (a, b) = (
                order.iter().position(|x| *x == last.phase).unwrap(),
                order.iter().position(|x| *x == p.phase).unwrap(),
            );
            assert!(b > a, "{last:?} -> {p:?}");
            // The copy ends at its total (a compaction's last step starts the zip, and the
            // zip's last step ends the export, within one step).
            if last.phase == Phase::Copy {
                assert_eq!(last.done, last.total, "{last:?} -> {p:?}");
            }
        }
        last = p;
        if finished {
            assert_eq!(p.phase, Phase::Done);
            assert_eq!(p.done, p.total);
            return steps;
        }
        assert!(steps < 1_000_000);
    }
}

#[test]
fn streamed_export_equals_the_in_memory_export_on_every_world() {
    if common::skip_without_worlds("streamed_export_equals_the_in_memory_export_on_every_world") {
        return;
    }
    let mut sizes = BTreeMap::new();
    for w in common::worlds() {
        let root = common::worlds_dir().join(&w.name);
        let before = tree(&root);
        let want = in_memory_export(&s(&root));
        // On disk with a small budget (many steps), and in memory with a large one.
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("export-tmp");
        let fs: Arc<dyn Storage> = Arc::new(FsStorage::new());
        let mut e = StreamedExport::new(fs.clone(), &s(&root), fs.clone(), &s(&dir)).unwrap();
        let steps = run(&mut e, 64 << 10);
        let report = e.report();
        drop(e);
        let left = tree(&dir);
        assert_eq!(
            left.keys().collect::<Vec<_>>(),
            vec![ZIP_NAME],
            "{}",
            w.name
        );
        let got = &left[ZIP_NAME];
        assert!(
            got == &want,
            "{}: {} vs {} bytes",
            w.name,
            got.len(),
            want.len()
        );
        assert!(steps > 3, "{}: {steps} steps", w.name);

        let mem = MemStorage::new();
        let scratch: Arc<dyn Storage> = Arc::new(mem.clone());
        let mut e = StreamedExport::new(fs.clone(), &s(&root), scratch, "tmp/export").unwrap();
        run(&mut e, 64 << 20);
        assert_eq!(e.report(), report, "{}", w.name);
        assert!(
            mem.contents(&format!("tmp/export/{ZIP_NAME}")).unwrap() == want,
            "{}",
            w.name
        );
        drop(e);
        assert!(tree(&root) == before, "{}: the world changed", w.name);
        sizes.insert(
            w.name.clone(),
            (want.len(), report.files, crc32fast::hash(&want)),
        );
    }
    // The zips' sizes, file counts and CRC-32s, equal to the ones the CLI of before the
    // streamed export wrote (`strata world export`, main at 440d60a), but for
    // amulet_1_18_vanilla and rbedrock_example1: their logs are empty, so their opens no
    // longer write MANIFESTs of their own, and the compaction's first edit starts one
    // instead (14 bytes less each; before: 15,757,027 bytes, 0x3cde_6cbf, and 512,576 bytes,
    // 0xa1a8_459b). Since each flush numbers the next switch's log ahead (`State::next_log`),
    // the compaction's table or MANIFEST takes the number after it: the same entries, names
    // one number higher, a MANIFEST that deflates a byte or two differently (before:
    // 1,596,287 0x5499_7662; 15,757,013 0xf175_191a; 650,955 0x8956_a173; 4,117,790
    // 0x057d_dd57; 512,562 0x0fea_ad4e; 39,934 0x7c36_055d).
    for (name, len, files, crc) in [
        ("amulet_1_16", 1_596_286, 9, 0x1871_bd91),
        ("amulet_1_18_vanilla", 15_757_015, 16, 0x8baf_ba38),
        ("mcpe_0_11_mcedit_testdb", 650_954, 8, 0xc55e_bd5c),
        ("minet_testworld", 4_117_789, 5, 0xef50_5f09),
        ("rbedrock_example1", 512_562, 10, 0xc6fc_8591),
        ("rbedrock_example2_2022", 39_934, 9, 0x77e5_abb2),
    ] {
        assert_eq!(sizes[name], (len, files, crc), "{name}");
    }
    assert_eq!(sizes.len(), 16);
}

#[test]
fn cancelling_at_any_phase_leaves_no_file_and_the_world_untouched() {
    if common::skip_without_worlds("cancelling_at_any_phase_leaves_no_file_and_the_world_untouched")
    {
        return;
    }
    let root = common::worlds_dir().join("amulet_1_16");
    let before = tree(&root);
    let fs: Arc<dyn Storage> = Arc::new(FsStorage::new());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("export-tmp");
    let mut seen = Vec::new();
    for stop_after in [0usize, 1, 8, 16, 18, 20, 23, 25, 28] {
        let mut e = StreamedExport::new(fs.clone(), &s(&root), fs.clone(), &s(&dir)).unwrap();
        let mut finished = false;
        for _ in 0..stop_after {
            finished = e.step(256 << 10).unwrap();
        }
        seen.push((e.progress().phase, finished));
        e.cancel().unwrap();
        assert!(
            tree(&dir).is_empty(),
            "after {stop_after} steps: {:?}",
            tree(&dir).keys()
        );
        // A cancelled export refuses further steps.
        assert_eq!(e.step(1).unwrap_err().kind(), ErrorKind::InvalidArgument);
        drop(e);
        assert!(tree(&dir).is_empty());
    }
    // Dropped unfinished: the same.
    let mut e = StreamedExport::new(fs.clone(), &s(&root), fs.clone(), &s(&dir)).unwrap();
    e.step(1 << 20).unwrap();
    drop(e);
    assert!(tree(&dir).is_empty());
    assert!(tree(&root) == before, "the world changed");
    // Every phase was cancelled at least once.
    for phase in [Phase::Copy, Phase::Compact, Phase::Zip] {
        assert!(
            seen.iter().any(|(p, _)| *p == phase),
            "{phase:?} not reached: {seen:?}"
        );
    }
}

#[test]
fn a_full_disk_fails_with_no_space_and_leaves_no_file() {
    if common::skip_without_worlds("a_full_disk_fails_with_no_space_and_leaves_no_file") {
        return;
    }
    let root = common::worlds_dir().join("amulet_1_18_vanilla");
    let before = tree(&root);
    let fs: Arc<dyn Storage> = Arc::new(FsStorage::new());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("export-tmp");
    // Space for a part of the copy (4 MiB), or for the copy but not the whole zip (the
    // world's 15.7 MB are all at its last level: compaction rewrites nothing).
    for (space, at) in [(4u64 << 20, Phase::Copy), (20 << 20, Phase::Zip)] {
        let fault = Arc::new(FaultStorage::new(fs.clone()));
        fault.set_space(Some(space));
        let mut e = StreamedExport::new(fs.clone(), &s(&root), fault.clone(), &s(&dir)).unwrap();
        let err = loop {
            match e.step(1 << 20) {
                Ok(true) => panic!("{space}: the export fit"),
                Ok(false) => {}
                Err(err) => break err,
            }
        };
        assert_eq!(err.kind(), ErrorKind::NoSpace, "{space}: {err}");
        let phase = e.progress().phase;
        assert_eq!(phase, at, "{space}");
        drop(e);
        assert!(
            tree(&dir).is_empty(),
            "{space} ({phase:?}): {:?}",
            tree(&dir).keys()
        );
    }
    assert!(tree(&root) == before, "the world changed");
}

#[test]
fn a_crashed_exports_leftovers_are_removed_by_the_next_one() {
    if common::skip_without_worlds("a_crashed_exports_leftovers_are_removed_by_the_next_one") {
        return;
    }
    let root = common::worlds_dir().join("rbedrock_example3");
    let fs: Arc<dyn Storage> = Arc::new(FsStorage::new());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("export-tmp");
    // A crash mid-zip: a copy, a LOCK, a part of a zip, a stray table.
    for (rel, len) in [
        ("world/level.dat", 10),
        ("world/db/LOCK", 0),
        ("world/db/000009.ldb", 1000),
        ("world/db/lost/deeper.bin", 5),
        (ZIP_NAME, 777),
    ] {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, vec![7u8; len]).unwrap();
    }
    let mut e = StreamedExport::new(fs.clone(), &s(&root), fs.clone(), &s(&dir)).unwrap();
    run(&mut e, 1 << 20);
    drop(e);
    let left = tree(&dir);
    assert_eq!(left.keys().collect::<Vec<_>>(), vec![ZIP_NAME]);
    assert!(left[ZIP_NAME] == in_memory_export(&s(&root)));
}

#[test]
fn finish_to_moves_the_zip_and_empties_the_folder() {
    if common::skip_without_worlds("finish_to_moves_the_zip_and_empties_the_folder") {
        return;
    }
    let root = common::worlds_dir().join("rbedrock_example2_2025");
    let fs: Arc<dyn Storage> = Arc::new(FsStorage::new());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("export-tmp");
    let to = tmp.path().join("out.mcworld");
    let mut e = StreamedExport::new(fs.clone(), &s(&root), fs.clone(), &s(&dir)).unwrap();
    // Refused before the end.
    assert_eq!(
        e.finish_to(&s(&to)).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    run(&mut e, 1 << 20);
    e.finish_to(&s(&to)).unwrap();
    drop(e);
    assert!(tree(&dir).is_empty());
    assert!(std::fs::read(&to).unwrap() == in_memory_export(&s(&root)));
}

#[test]
fn a_temporary_folder_inside_the_world_is_refused() {
    if common::skip_without_worlds("a_temporary_folder_inside_the_world_is_refused") {
        return;
    }
    // On a copy: a wrong answer here would empty the folder named.
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("w");
    common::copy_dir(&common::worlds_dir().join("rbedrock_example3"), &root);
    let before = tree(tmp.path());
    let fs: Arc<dyn Storage> = Arc::new(FsStorage::new());
    for dir in [s(&root.join("tmp")), s(&root), s(tmp.path())] {
        let err = StreamedExport::new(fs.clone(), &s(&root), fs.clone(), &dir)
            .err()
            .unwrap();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{dir}");
    }
    assert!(tree(tmp.path()) == before);
    assert_eq!(before.len(), 4);
}
