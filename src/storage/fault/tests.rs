//! The fault wrapper's own contract: durability per policy, counted failures, crashes, torn
//! appends and running out of space.

use std::sync::Arc;

use super::{DirPolicy, FaultStorage, OpKind};
use crate::error::ErrorKind;
use crate::storage::{read_all, MemStorage, Storage};

fn fault(policy: DirPolicy) -> (MemStorage, FaultStorage) {
    let mem = MemStorage::new();
    let f = FaultStorage::with_policy(Arc::new(mem.clone()), policy);
    f.create_dir_all("d").unwrap();
    (mem, f)
}

fn names(s: &MemStorage) -> Vec<String> {
    let mut n = s.list("d").unwrap_or_default();
    n.sort();
    n
}

#[test]
fn passes_the_storage_conformance_suite() {
    let f = FaultStorage::new(Arc::new(MemStorage::new()));
    crate::storage::conformance::run(&f, "db");
}

#[test]
fn unsynced_appends_are_dropped_and_synced_ones_kept() {
    let (mem, f) = fault(DirPolicy::KeepEntries);
    let mut w = f.create("d/a").unwrap();
    w.append(b"durable").unwrap();
    w.sync().unwrap();
    w.append(b" lost").unwrap();
    assert_eq!(mem.contents("d/a").unwrap(), b"durable lost");
    assert_eq!(f.durable_len("d/a"), Some(7));
    let img = f.crash_image();
    assert_eq!(img.contents("d/a").unwrap(), b"durable");
    // Keep mode: a never-synced new file exists, empty; a rename and a remove stick.
    let mut b = f.create("d/b").unwrap();
    b.append(b"xyz").unwrap();
    crate::storage::write_all(&f, "d/c", b"cc").unwrap();
    f.rename("d/c", "d/e").unwrap();
    f.remove("d/a").unwrap();
    let img = f.crash_image();
    assert_eq!(names(&img), ["b", "e"]);
    assert_eq!(img.contents("d/b").unwrap(), b"");
    assert_eq!(img.contents("d/e").unwrap(), b"cc");
    let c = f.counts();
    assert_eq!(
        [
            c.get(OpKind::Create),
            c.get(OpKind::Append),
            c.get(OpKind::Sync),
            c.get(OpKind::Rename),
            c.get(OpKind::Remove),
            c.get(OpKind::SyncDir)
        ],
        [3, 4, 2, 1, 1, 0]
    );
    assert_eq!(c.total(), 11);
}

#[test]
fn drop_policy_reverts_folders_to_their_last_sync() {
    let (_mem, f) = fault(DirPolicy::DropUnsyncedEntries);
    crate::storage::write_all(&f, "d/CURRENT", b"one").unwrap();
    // Synced contents, but the folder was never synced: the file vanishes.
    assert!(names(&f.crash_image()).is_empty());
    f.sync_dir("d").unwrap();
    assert_eq!(names(&f.crash_image()), ["CURRENT"]);
    // Replace CURRENT by rename and remove another synced file: both undone by a crash.
    crate::storage::write_all(&f, "d/old", b"keep me").unwrap();
    f.sync_dir("d").unwrap();
    crate::storage::write_all(&f, "d/tmp", b"two").unwrap();
    f.rename("d/tmp", "d/CURRENT").unwrap();
    f.remove("d/old").unwrap();
    assert_eq!(read_all(&f, "d/CURRENT").unwrap(), b"two");
    let img = f.crash_image();
    assert_eq!(names(&img), ["CURRENT", "old"]);
    assert_eq!(img.contents("d/CURRENT").unwrap(), b"one");
    assert_eq!(img.contents("d/old").unwrap(), b"keep me");
    f.sync_dir("d").unwrap();
    let img = f.crash_image();
    assert_eq!(names(&img), ["CURRENT"]);
    assert_eq!(img.contents("d/CURRENT").unwrap(), b"two");
}

#[test]
fn files_found_in_a_folder_are_durable_and_synced() {
    let mem = MemStorage::new();
    crate::storage::write_all(&mem, "d/pre", b"existing").unwrap();
    let f = FaultStorage::with_policy(Arc::new(mem.clone()), DirPolicy::DropUnsyncedEntries);
    let mut w = f.append("d/pre").unwrap();
    w.append(b"+more").unwrap();
    let img = f.crash_image();
    assert_eq!(img.contents("d/pre").unwrap(), b"existing");
    w.sync().unwrap();
    assert_eq!(f.crash_image().contents("d/pre").unwrap(), b"existing+more");
}

#[test]
fn the_nth_operation_of_a_kind_fails_once() {
    let (mem, f) = fault(DirPolicy::KeepEntries);
    f.fail_nth(OpKind::Append, 2);
    f.fail_nth(OpKind::Sync, 1);
    f.fail_nth(OpKind::Rename, 1);
    f.fail_nth(OpKind::Remove, 1);
    f.fail_nth(OpKind::Create, 2);
    f.fail_nth(OpKind::SyncDir, 1);
    let mut w = f.create("d/a").unwrap();
    w.append(b"1").unwrap();
    let e = w.append(b"2").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
    assert_eq!(e.file(), Some("a"));
    w.append(b"3").unwrap();
    assert_eq!(mem.contents("d/a").unwrap(), b"13");
    assert_eq!(w.sync().unwrap_err().kind(), ErrorKind::Io);
    assert_eq!(f.durable_len("d/a"), Some(0));
    w.sync().unwrap();
    assert_eq!(f.durable_len("d/a"), Some(2));
    assert_eq!(f.create("d/b").err().unwrap().kind(), ErrorKind::Io);
    assert!(!mem.exists("d/b"));
    assert_eq!(f.rename("d/a", "d/b").unwrap_err().kind(), ErrorKind::Io);
    assert_eq!(f.remove("d/a").unwrap_err().kind(), ErrorKind::Io);
    assert_eq!(f.sync_dir("d").unwrap_err().kind(), ErrorKind::Io);
    assert!(mem.exists("d/a"));
    f.rename("d/a", "d/b").unwrap();
    f.remove("d/b").unwrap();
    f.sync_dir("d").unwrap();
    assert!(names(&mem).is_empty());
}

#[test]
fn a_crash_stops_every_later_operation() {
    let (mem, f) = fault(DirPolicy::KeepEntries);
    f.crash_at(4, None);
    let mut w = f.create("d/a").unwrap(); // 1
    w.append(b"abc").unwrap(); // 2
    w.sync().unwrap(); // 3
    assert_eq!(w.append(b"def").unwrap_err().kind(), ErrorKind::Io); // 4: the crash
    assert!(f.crashed());
    assert!(w.sync().is_err());
    assert!(f.create("d/b").is_err());
    assert!(f.remove("d/a").is_err());
    assert_eq!(mem.contents("d/a").unwrap(), b"abc");
    assert_eq!(f.counts().total(), 4);
    assert_eq!(f.crash_image().contents("d/a").unwrap(), b"abc");
}

#[test]
fn a_torn_append_leaves_its_prefix_and_the_unsynced_tail() {
    let (mem, f) = fault(DirPolicy::KeepEntries);
    f.crash_at(5, Some(2));
    let mut w = f.create("d/a").unwrap(); // 1
    w.append(b"abc").unwrap(); // 2
    w.sync().unwrap(); // 3
    w.append(b"def").unwrap(); // 4 (unsynced)
    assert_eq!(w.append(b"ghi").unwrap_err().kind(), ErrorKind::Io); // 5: torn after 2
    assert!(w.append(b"jkl").is_err());
    assert_eq!(mem.contents("d/a").unwrap(), b"abcdefgh");
    assert_eq!(f.crash_image().contents("d/a").unwrap(), b"abcdefgh");
}

#[test]
fn appends_past_the_space_budget_fail_with_no_space() {
    let (mem, f) = fault(DirPolicy::KeepEntries);
    f.set_space(Some(5));
    let mut w = f.create("d/a").unwrap();
    w.append(b"abc").unwrap();
    let e = w.append(b"def").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoSpace);
    assert_eq!(e.file(), Some("a"));
    w.append(b"de").unwrap();
    assert_eq!(w.append(b"f").unwrap_err().kind(), ErrorKind::NoSpace);
    f.set_space(None);
    w.append(b"f").unwrap();
    assert_eq!(mem.contents("d/a").unwrap(), b"abcdef");
}
