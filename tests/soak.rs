//! Soak (not in CI): rounds of the crash-point workload (tests/fault_workload: multi-key group
//! batches, some synced, flushes, compactions, reopens) on a `FaultStorage` over memory, each
//! round crashing at a random storage operation (sometimes tearing an append, sometimes in
//! recovery itself, sometimes after the last step), alternating folder policies and the
//! background thread. The next round starts from the crash image, so the database carries
//! every earlier crash with it. After each crash the image is reopened and checked against
//! the model: it opens, passes `verify`, holds whole batches only, equals a prefix of the
//! round's history that includes every durable write, and `get` agrees with that state.
//!
//! `STRATA_SOAK_SECONDS=1800 cargo test --release --test soak -- --ignored --nocapture`
//! (default 20 s). Prints operations, crashes, reopens and discrepancies; a discrepancy is
//! reported, the round restarts from an empty database, and the test fails at the end.

mod common;
mod fault_workload;

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::Rng;
use fault_workload::{check, key, options, plan, run, states, value, Step, KEYS_PER_GROUP};
use strata::storage::{DirPolicy, FaultStorage, MemStorage, Storage};
use strata::{Db, ReadOptions};

type State = BTreeMap<u32, u32>;

/// The states after each prefix of `plan`'s writes, starting from `initial` (the helper's
/// `states` starts from an empty database).
fn states_from(initial: &State, plan: &[Step]) -> Vec<State> {
    let fresh = states(plan);
    let mut touched = std::collections::BTreeSet::new();
    let mut out = vec![initial.clone()];
    for step in plan {
        if let Step::Write { group, .. } = *step {
            touched.insert(group);
            let s = &fresh[out.len()];
            let mut m = initial.clone();
            for g in &touched {
                match s.get(g) {
                    Some(&t) => m.insert(*g, t),
                    None => m.remove(g),
                };
            }
            out.push(m);
        }
    }
    out
}

/// Steps of `plan` reached by a run that attempted `attempted` writes, and its reopens.
fn steps_reached(plan: &[Step], attempted: usize) -> (u64, u64) {
    let (mut writes, mut steps, mut reopens) = (0, 0, 0);
    for s in plan {
        match s {
            Step::Write { .. } if writes == attempted => break,
            Step::Write { .. } => writes += 1,
            Step::Reopen => reopens += 1,
            _ => {}
        }
        steps += 1;
    }
    (steps, reopens)
}

/// Point reads of every group against the matched state.
fn check_gets(image: Arc<dyn Storage>, state: &State) {
    let db = Db::open(image, "db", options(false)).unwrap();
    for g in 0..fault_workload::GROUPS as u32 {
        for j in 0..KEYS_PER_GROUP {
            let got = db.get(&ReadOptions::default(), &key(g, j)).unwrap();
            assert_eq!(got, state.get(&g).map(|&t| value(t, j)), "get g{g}-{j}");
        }
    }
}

#[derive(Debug, Default)]
struct Totals {
    rounds: u64,
    /// Workload steps run (writes, flushes, compactions, reopens) up to each crash.
    steps: u64,
    /// Batches attempted (each writes or deletes KEYS_PER_GROUP keys).
    writes: u64,
    /// Storage operations performed before the crash.
    storage_ops: u64,
    /// Crash images taken (every round ends in one).
    crashes: u64,
    /// Crashes that hit the run (the rest fell after its last step: a power loss then).
    mid_run: u64,
    /// Images that lost acknowledged, unsynced writes (allowed; shows crashes bite).
    lost_unsynced: u64,
    /// Crashes that tore an append.
    torn: u64,
    /// Crashes during open/recovery (no write of the round reached).
    in_recovery: u64,
    /// Reopens: the workload's own plus one per crash image checked (and its get pass).
    reopens: u64,
    discrepancies: u64,
}

#[test]
#[ignore]
fn soak_random_workloads_with_crashes_against_the_model() {
    let seconds: u64 = std::env::var("STRATA_SOAK_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let seed: u64 = std::env::var("STRATA_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x50a4_0001);
    println!("soak: {seconds} s, STRATA_SEED={seed}");
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let start = Instant::now();
    let mut last_print = Instant::now();
    let mut rng = Rng(seed);
    let mut t = Totals::default();
    let mut image = MemStorage::new();
    let mut state = State::new();
    // Operations of the longest uncrashed round seen, to place crash points.
    let mut max_ops = 2_000u64;
    while Instant::now() < deadline {
        let round = t.rounds;
        t.rounds += 1;
        let policy = if rng.below(2) == 0 {
            DirPolicy::KeepEntries
        } else {
            DirPolicy::DropUnsyncedEntries
        };
        let background = rng.below(4) == 0;
        let steps = 50 + rng.below(400) as usize;
        let plan = plan(steps, rng.next());
        let history = states_from(&state, &plan);
        let storage = FaultStorage::with_policy(Arc::new(image.snapshot()), policy);
        let crash_at = 1 + rng.below(max_ops + max_ops / 10);
        let tear = (rng.below(3) == 0).then(|| rng.below(4096) as usize);
        storage.crash_at(crash_at, tear);
        let out = run(&storage, &plan, &options(background));
        if !storage.crashed() {
            max_ops = max_ops.max(storage.counts().total());
        }
        let (ran, reopens) = steps_reached(&plan, out.attempted);
        t.steps += ran;
        t.reopens += reopens;
        t.writes += out.attempted as u64;
        t.storage_ops += storage.counts().total().min(crash_at);
        t.crashes += 1;
        t.mid_run += u64::from(storage.crashed());
        t.torn += u64::from(storage.crashed() && tear.is_some());
        t.in_recovery += u64::from(storage.crashed() && out.attempted == 0);
        let crashed = storage.crash_image();
        let what = format!(
            "round {round} ({policy:?}, background {background}, {steps} steps, crash at op \
             {crash_at}, tear {tear:?})"
        );
        let verdict = catch_unwind(AssertUnwindSafe(|| {
            let k = check(Arc::new(crashed.snapshot()), &history, &out, &what);
            check_gets(Arc::new(crashed.snapshot()), &history[k]);
            k
        }));
        t.reopens += 2;
        match verdict {
            Ok(k) => {
                t.lost_unsynced += u64::from(k < out.acknowledged);
                state = history[k].clone();
                image = crashed;
            }
            Err(e) => {
                t.discrepancies += 1;
                let msg = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                println!("DISCREPANCY {what}: {msg}");
                state = State::new();
                image = MemStorage::new();
            }
        }
        if last_print.elapsed() > Duration::from_secs(60) {
            last_print = Instant::now();
            println!("{:.0?}: {t:?}", start.elapsed());
        }
    }
    println!("soak done in {:.1?}: {t:?}", start.elapsed());
    println!(
        "operations (batches) {}, steps {}, storage ops {}, crashes {} ({} mid-run, {} torn, {} \
         in recovery, {} lost unsynced writes), reopens {}, discrepancies {}",
        t.writes,
        t.steps,
        t.storage_ops,
        t.crashes,
        t.mid_run,
        t.torn,
        t.in_recovery,
        t.lost_unsynced,
        t.reopens,
        t.discrepancies
    );
    assert_eq!(t.discrepancies, 0);
    assert!(t.rounds > 0);
}
