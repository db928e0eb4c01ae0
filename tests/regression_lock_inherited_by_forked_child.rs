//! Regression: a database closed by one thread read as `Locked` to its reopener, now and then,
//! while another thread of the process spawned child processes (seen as a flaky
//! `gen_world_uses_the_bedrock_profile_on_disk` in tests/bedrock.rs, whose neighbours run the
//! CLI). Strata took a `flock` on `LOCK` as well as the POSIX record lock: a `flock` belongs to
//! the open file description, which a forked child shares until it execs, so closing the
//! database did not release it for that window. Unix locks are now POSIX record locks only
//! (what LevelDB takes), which a child never inherits.

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::watchdog::watchdog;
use strata::{Db, Options, ReadOptions, WriteOptions};

#[test]
fn a_closed_database_reopens_while_other_threads_spawn_processes() {
    let spawned = Arc::new(AtomicU64::new(0));
    let progress = {
        let s = spawned.clone();
        move || format!("{} processes spawned", s.load(Ordering::Relaxed))
    };
    watchdog(
        "lock vs fork",
        Duration::from_secs(120),
        progress,
        move || {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("db").to_str().unwrap().to_string();
            let stop = Arc::new(AtomicBool::new(false));
            let spawners: Vec<_> = (0..2)
                .map(|_| {
                    let (stop, spawned) = (stop.clone(), spawned.clone());
                    std::thread::spawn(move || {
                        while !stop.load(Ordering::Relaxed) {
                            let status = std::process::Command::new("true").status().unwrap();
                            assert!(status.success());
                            spawned.fetch_add(1, Ordering::Relaxed);
                        }
                    })
                })
                .collect();
            let mut result = Ok(());
            for i in 0..400u32 {
                let db = match Db::open_path(&path, Options::default().create()) {
                    Ok(db) => db,
                    Err(e) => {
                        result = Err(format!("writable reopen {i}: {e}"));
                        break;
                    }
                };
                db.put(&WriteOptions::default(), &i.to_be_bytes(), b"v")
                    .unwrap();
                drop(db);
                match Db::open_path(&path, Options::default().read_only()) {
                    Ok(db) => assert_eq!(
                        db.get(&ReadOptions::default(), &i.to_be_bytes()).unwrap(),
                        Some(b"v".to_vec())
                    ),
                    Err(e) => {
                        result = Err(format!("read-only reopen {i}: {e}"));
                        break;
                    }
                }
            }
            stop.store(true, Ordering::Relaxed);
            for s in spawners {
                s.join().unwrap();
            }
            assert!(spawned.load(Ordering::Relaxed) > 0);
            result.unwrap();
        },
    );
}
