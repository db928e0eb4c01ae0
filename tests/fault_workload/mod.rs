//! The workload shared by the crash-point and I/O-error tests: multi-key batches (every key
//! of a group gets one tag, or is deleted, in one batch), some synced, flushes, compactions
//! and reopens; and the check that a reopened database holds whole batches, passes
//! `Db::verify`, and equals the state after some prefix of the attempted writes that
//! includes every write known durable.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::common::Rng;
use strata::db::WriteBatch;
use strata::storage::{FaultStorage, Storage};
use strata::{Db, Options, ReadOptions, WriteOptions};

pub const KEYS_PER_GROUP: u32 = 3;
pub const GROUPS: u64 = 24;
pub const VALUE_LEN: usize = 150;

#[derive(Clone, Copy, Debug)]
pub enum Step {
    /// Sets every key of `group` to `tag` (or deletes them all) in one batch.
    Write {
        group: u32,
        tag: Option<u32>,
        sync: bool,
    },
    Flush,
    Compact,
    Reopen,
}

pub fn options(background_thread: bool) -> Options {
    Options {
        write_buffer_size: 6 * 1024,
        max_file_size: 8 * 1024,
        block_size: 1024,
        background_thread,
        ..Options::google().create()
    }
}

pub fn plan(steps: usize, seed: u64) -> Vec<Step> {
    let mut rng = Rng(seed);
    let mut out = Vec::with_capacity(steps);
    for i in 0..steps as u32 {
        let r = rng.below(100);
        out.push(match r {
            0..=1 => Step::Flush,
            2 => Step::Compact,
            3 => Step::Reopen,
            _ => Step::Write {
                group: rng.below(GROUPS) as u32,
                tag: (r >= 16).then_some(i),
                sync: rng.below(5) == 0,
            },
        });
    }
    out
}

pub fn key(group: u32, j: u32) -> Vec<u8> {
    format!("g{group:03}-{j}").into_bytes()
}

pub fn value(tag: u32, j: u32) -> Vec<u8> {
    let mut v = format!("{tag:06}:{j}:").into_bytes();
    v.resize(VALUE_LEN, b'a' + (tag % 26) as u8);
    v
}

/// Group → tag after each prefix of the plan's writes (`states[k]`: after `k` writes).
pub fn states(plan: &[Step]) -> Vec<BTreeMap<u32, u32>> {
    let mut s = BTreeMap::new();
    let mut out = vec![s.clone()];
    for step in plan {
        if let Step::Write { group, tag, .. } = *step {
            match tag {
                Some(t) => s.insert(group, t),
                None => s.remove(&group),
            };
            out.push(s.clone());
        }
    }
    out
}

/// How far a run got: writes attempted (the last may have failed) and writes known durable.
#[derive(Debug, Default)]
pub struct Outcome {
    pub attempted: usize,
    pub acknowledged: usize,
    pub durable: usize,
    pub finished: bool,
}

pub fn run(storage: &FaultStorage, plan: &[Step], opts: &Options) -> Outcome {
    let mut out = Outcome::default();
    let open = || Db::open(Arc::new(storage.clone()), "db", opts.clone());
    let Ok(mut db) = open() else {
        return out;
    };
    for step in plan {
        let ok = match *step {
            Step::Write { group, tag, sync } => {
                out.attempted += 1;
                let mut b = WriteBatch::new();
                for j in 0..KEYS_PER_GROUP {
                    match tag {
                        Some(t) => b.put(&key(group, j), &value(t, j)),
                        None => b.delete(&key(group, j)),
                    }
                }
                let ok = db
                    .write(
                        &WriteOptions {
                            sync,
                            ..Default::default()
                        },
                        b,
                    )
                    .is_ok();
                if ok {
                    out.acknowledged = out.attempted;
                    if sync {
                        out.durable = out.attempted;
                    }
                }
                ok
            }
            Step::Flush => db.flush().is_ok(),
            Step::Compact => db.compact_range(None, None).is_ok(),
            Step::Reopen => {
                drop(db);
                match open() {
                    Ok(d) => {
                        db = d;
                        true
                    }
                    Err(_) => return out,
                }
            }
        };
        if !ok {
            return out;
        }
        if !matches!(step, Step::Write { .. }) {
            out.durable = out.attempted;
        }
    }
    out.finished = true;
    out
}

/// Opens a crash image and checks it against the history; returns the prefix it matches.
pub fn check(
    image: Arc<dyn Storage>,
    states: &[BTreeMap<u32, u32>],
    out: &Outcome,
    what: &str,
) -> usize {
    let db = Db::open(image, "db", options(false))
        .unwrap_or_else(|e| panic!("{what}: the crash image does not open: {e}"));
    db.verify()
        .unwrap_or_else(|e| panic!("{what}: verify fails: {e}"));
    let mut seen: BTreeMap<u32, Vec<(u32, u32)>> = BTreeMap::new();
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    while it.valid() {
        let k = std::str::from_utf8(it.key()).unwrap();
        let (g, j) = k[1..].split_once('-').unwrap();
        let (g, j): (u32, u32) = (g.parse().unwrap(), j.parse().unwrap());
        let tag: u32 = std::str::from_utf8(&it.value()[..6])
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(it.value(), value(tag, j), "{what}: value of {k}");
        seen.entry(g).or_default().push((j, tag));
        it.next();
    }
    it.status().unwrap();
    let mut state = BTreeMap::new();
    for (g, entries) in seen {
        let tag = entries[0].1;
        assert_eq!(
            entries,
            (0..KEYS_PER_GROUP).map(|j| (j, tag)).collect::<Vec<_>>(),
            "{what}: group {g} is partly visible"
        );
        state.insert(g, tag);
    }
    (out.durable..=out.attempted)
        .find(|&k| states[k] == state)
        .unwrap_or_else(|| {
            let near = |k: usize| {
                let want = &states[k];
                let diff: Vec<_> = want
                    .keys()
                    .chain(state.keys())
                    .filter(|g| want.get(g) != state.get(g))
                    .map(|g| (g, want.get(g), state.get(g)))
                    .collect();
                format!("vs {k}: (group, expected, seen) {diff:?}")
            };
            panic!(
                "{what}: {}; {}; state is no prefix of the history between {} (durable) and {} \
                 (attempted) writes",
                near(out.durable),
                near(out.attempted),
                out.durable,
                out.attempted
            )
        })
}
