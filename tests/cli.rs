//! The `strata` binary: exact JSON figures for every world, key syntax, exit codes, and the
//! scan's peak memory on the largest world.

mod common;

use std::process::{Command, Output};

use common::worlds;

fn strata(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(args)
        .output()
        .expect("strata runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn scan_json_matches_the_manifest_for_every_world_folder() {
    if common::skip_without_worlds("scan_json_matches_the_manifest_for_every_world_folder") {
        return;
    }
    for world in worlds() {
        // The world folder itself (level.dat + db/, or a bare folder around db/).
        let dir = common::worlds_dir().join(&world.name);
        let out = strata(&["scan", "--json", dir.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{}: {}",
            world.name,
            String::from_utf8_lossy(&out.stderr)
        );
        let e = &world.expected;
        assert_eq!(
            stdout(&out),
            format!(
                "{{\"entries\":{},\"key_bytes\":{},\"value_bytes\":{},\"crc32c\":{}}}\n",
                e.entries, e.key_bytes, e.value_bytes, e.crc32c
            ),
            "{}",
            world.name
        );
    }
}

#[test]
fn get_takes_text_and_hex_keys() {
    if common::skip_without_worlds("get_takes_text_and_hex_keys") {
        return;
    }
    let world = common::worlds_dir().join("rbedrock_example3");
    let w = world.to_str().unwrap();
    // The Version record of chunk (0, 0): 8 zero bytes then tag 0x2c; its value is one byte.
    // Chunk version 40 = 0x28 = '(': printable values print as text, or as hex on request.
    let out = strata(&["get", w, "0x00000000000000002c"]);
    assert!(out.status.success());
    assert_eq!(stdout(&out), "(\n");
    let out = strata(&["get", "--hex", w, "0x00000000000000002C"]);
    assert_eq!(stdout(&out), "0x28\n");
    let out = strata(&["get", "--hex", w, "~local_player"]);
    assert!(out.status.success());
    assert!(stdout(&out).starts_with("0x0a0000"), "{}", stdout(&out));
    let out = strata(&["get", w, "no such key"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("NotFound"));
    let out = strata(&["get", w, "0xabc"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn dump_lists_keys_and_value_sizes_in_order() {
    if common::skip_without_worlds("dump_lists_keys_and_value_sizes_in_order") {
        return;
    }
    let world = common::worlds_dir().join("rbedrock_example3");
    let out = strata(&["dump", world.to_str().unwrap(), "--limit", "3"]);
    assert!(out.status.success());
    assert_eq!(
        stdout(&out),
        "0x00000000000000002b\t572\n0x00000000000000002c\t1\n0x00000000000000002f00\t3740\n"
    );
    let out = strata(&["dump", world.to_str().unwrap()]);
    assert_eq!(stdout(&out).lines().count(), 376);
    assert!(stdout(&out).contains("~local_player\t"));
}

/// Regression: with its reader gone, `strata info DB | head` panicked ("failed printing to
/// stdout") and `strata dump` read the whole database into the closed pipe, exiting 0; a
/// closed pipe now ends the process by SIGPIPE, as any Unix filter.
#[cfg(unix)]
#[test]
fn a_closed_stdout_pipe_ends_dump_quietly() {
    if common::skip_without_worlds("a_closed_stdout_pipe_ends_dump_quietly") {
        return;
    }
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::ExitStatusExt;
    let world = common::worlds_dir().join("amulet_1_18_vanilla");
    let mut child = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["dump", world.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("0x"), "{first}");
    // The reader is gone: 48,210 more lines meet a closed pipe.
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        out.status.signal(),
        Some(libc_sigpipe()),
        "{:?}",
        out.status
    );
}

/// SIGPIPE's number on every Unix Strata builds for.
#[cfg(unix)]
fn libc_sigpipe() -> i32 {
    13
}

#[test]
fn info_reports_levels_entries_and_compression() {
    if common::skip_without_worlds("info_reports_levels_entries_and_compression") {
        return;
    }
    let world = common::worlds_dir().join("mcpe_0_11_mcedit_testdb");
    let out = strata(&["info", world.to_str().unwrap()]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.contains("manifest     MANIFEST-000106"), "{text}");
    assert!(
        text.contains("level 0      2 files, 188800 bytes"),
        "{text}"
    );
    assert!(
        text.contains("level 2      1 files, 649941 bytes"),
        "{text}"
    );
    assert!(
        text.contains("tables       1076658 bytes, 770 internal entries"),
        "{text}"
    );
    assert!(
        text.contains("compression  ids seen in data blocks: 0,2"),
        "{text}"
    );
}

#[test]
fn verify_passes_intact_worlds_and_names_the_first_bad_block() {
    if common::skip_without_worlds("verify_passes_intact_worlds_and_names_the_first_bad_block") {
        return;
    }
    let world = common::worlds_dir().join("amulet_1_18_vanilla");
    let out = strata(&["verify", world.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out),
        "OK: 8 tables, 523 blocks, 48210 entries, 15735541 bytes; logs and MANIFEST intact\n"
    );
    // Damage one byte of a data block in a copy.
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    common::copy_dir(&world.join("db"), &db);
    let mut tables: Vec<_> = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ldb"))
        .collect();
    tables.sort();
    let victim = &tables[3];
    let mut bytes = std::fs::read(victim).unwrap();
    bytes[100_000] ^= 0x20;
    std::fs::write(victim, &bytes).unwrap();
    let out = strata(&["verify", db.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let name = victim.file_name().unwrap().to_str().unwrap();
    assert!(
        text.starts_with("FAILED: Corruption: block checksum mismatch"),
        "{text}"
    );
    assert!(text.contains(&format!("(file {name}, offset ")), "{text}");
    // The scan stops with the same error rather than returning less.
    let out = strata(&["scan", "--json", db.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains(name));
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(strata(&[]).status.code(), Some(2));
    assert_eq!(strata(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(strata(&["scan"]).status.code(), Some(2));
    assert_eq!(strata(&["scan", "--bogus", "x"]).status.code(), Some(2));
    assert_eq!(
        strata(&["dump", "x", "--limit", "many"]).status.code(),
        Some(2)
    );
    let out = strata(&["scan", "/nonexistent/db"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no database here"));
}

/// Readahead's memory is bounded by decoded bytes (`table::readahead`): this world's tables
/// of blocks that compress 120 to 1 once made 40-block runs and peaks of 40 to 68 MiB, by
/// how far the workers got ahead; bounded, 21 to 27 MiB with both cores busy elsewhere, and
/// 8 MiB without readahead.
#[test]
fn scan_of_the_largest_world_peaks_under_40_mib() {
    if common::skip_without_worlds("scan_of_the_largest_world_peaks_under_40_mib") {
        return;
    }
    let world = worlds()
        .into_iter()
        .max_by_key(|w| w.expected.value_bytes)
        .unwrap();
    assert_eq!(world.name, "bds_26_0_featherdev");
    let out = Command::new("/usr/bin/time")
        .arg("-v")
        .arg(env!("CARGO_BIN_EXE_strata"))
        .args(["scan", "--json", &world.db_path()])
        .output()
        .expect("/usr/bin/time is installed (scripts/setup.sh)");
    assert!(out.status.success());
    let report = String::from_utf8_lossy(&out.stderr);
    let kib: u64 = report
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Maximum resident set size (kbytes): ")
        })
        .expect("time -v reports max RSS")
        .parse()
        .unwrap();
    println!("peak RSS {kib} KiB");
    assert!(kib < 40 * 1024, "peak RSS {kib} KiB");
}

#[test]
fn bench_runs_db_bench_workloads_in_its_format() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("bench");
    let out = strata(&[
        "bench",
        "--num=2000",
        "--benchmarks=fillseq,readrandom,readmissing,seekrandom,readseq,readreverse,fillrandom,overwrite,deleterandom,compact,bulkload_random,mixed",
        &format!("--db={}", db.display()),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    assert!(text.contains("Entries:    2000\n"), "{text}");
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{name:<12} : ")))
            .unwrap_or_else(|| panic!("no {name} line in\n{text}"))
            .to_string()
    };
    assert!(line("fillseq").ends_with(" MB/s"), "{text}");
    assert!(
        line("readrandom").ends_with("(2000 of 2000 found)"),
        "{text}"
    );
    assert!(line("readmissing").ends_with("(0 of 2000 found)"), "{text}");
    assert!(
        line("seekrandom").ends_with("(2000 of 2000 found)"),
        "{text}"
    );
    assert!(line("mixed").contains("reads found)"), "{text}");
    let out = strata(&[
        "bench",
        "--num=500",
        "--benchmarks=fillbatch,readseq",
        "--json",
        &format!("--db={}", db.display()),
    ]);
    let lines: Vec<String> = stdout(&out).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 2);
    assert!(
        lines[1].starts_with("{\"benchmark\":\"readseq\",\"micros_per_op\":"),
        "{}",
        lines[1]
    );
    assert!(lines[1].contains("\"ops\":500,"), "{}", lines[1]);
}

/// RucksDB's suite (bench/rucksdb.sh runs it on LevelDB and RocksDB too): every workload runs,
/// checks itself and prints the fields bench/harness.h prints; a check that fails fails the
/// command.
#[test]
fn bench_runs_rucksdb_workloads_and_checks_them() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("rucks");
    let out = strata(&[
        "bench",
        "--num=2000",
        "--bloom_bits=10",
        "--json",
        "--benchmarks=put_100b,put_1kb,put_10kb,get_memtable,get_sstable,get_not_found,delete,read_write_50_50,concurrent_writes,writes_during_flush",
        "--threads=2",
        &format!("--db={}", db.display()),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 10, "{text}");
    let line = |name: &str| {
        *lines
            .iter()
            .find(|l| l.starts_with(&format!("{{\"benchmark\":\"{name}\",\"micros_per_op\":")))
            .unwrap_or_else(|| panic!("no {name} line in\n{text}"))
    };
    // (workload, ops, found, threads) as the suite defines them for N = 2,000.
    for (name, ops, found, threads) in [
        ("put_100b", 2000, 0, 1),
        ("put_1kb", 200, 0, 1),
        ("put_10kb", 20, 0, 1),
        ("get_memtable", 2000, 2000, 1),
        ("get_sstable", 2000, 2000, 1),
        ("get_not_found", 2000, 0, 1),
        ("delete", 2000, 0, 1),
        ("read_write_50_50", 500, 250, 1),
        ("concurrent_writes", 200, 0, 2),
        ("writes_during_flush", 4096, 0, 1),
    ] {
        let l = line(name);
        assert!(l.contains(&format!(",\"ops\":{ops},")), "{l}");
        assert!(
            l.contains(&format!(
                ",\"found\":{found},\"threads\":{threads},\"latency\":"
            )),
            "{l}"
        );
        if name != "writes_during_flush" {
            assert!(l.ends_with(",\"latency\":null}"), "{l}");
        }
    }
    let l = line("writes_during_flush");
    assert!(l.contains(",\"latency\":{\"ops\":4096,\"p50_us\":"), "{l}");
    for field in ["p99_us", "p999_us", "max_us", "mean_us"] {
        assert!(l.contains(&format!("\"{field}\":")), "{l}");
    }
    let flushes: u64 = l
        .split(",\"flushes\":")
        .nth(1)
        .and_then(|r| r.split(',').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no flushes in {l}"));
    assert!(flushes >= 1, "{l}");
    assert!(l.contains(",\"busy_ops\":"), "{l}");
    assert!(l.contains(",\"latency_busy\":{\"ops\":"), "{l}");

    // --histogram=1 times every op; the text form names the percentiles.
    let out = strata(&[
        "bench",
        "--num=2000",
        "--histogram=1",
        "--benchmarks=get_memtable",
        &format!("--db={}", db.display()),
    ]);
    assert!(out.status.success());
    let text = stdout(&out);
    let l = text
        .lines()
        .find(|l| l.starts_with("get_memtable : "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(l.contains("(2000 of 2000 found) (p50 "), "{l}");
    assert!(l.contains(" us, p99 ") && l.contains(" us, max "), "{l}");

    // The 1,000 keys of get_memtable cannot stay in a 100 KB memtable: the check fails the
    // command.
    let out = strata(&[
        "bench",
        "--num=2000",
        "--write_buffer_size=100000",
        "--benchmarks=get_memtable",
        &format!("--db={}", db.display()),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("get_memtable: check failed: a table was written"),
        "{err}"
    );
}

#[test]
fn every_command_has_a_help_page_and_usage_errors_name_the_command() {
    for cmd in [
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
    ] {
        for how in [vec![cmd, "--help"], vec!["help", cmd]] {
            let o = strata(&how);
            assert!(o.status.success(), "{how:?}");
            let text = stdout(&o);
            assert!(
                text.starts_with(&format!("usage: strata {cmd}")),
                "{how:?}: {text}"
            );
            assert!(text.contains("\nexample: strata "), "{how:?}");
        }
    }
    for sub in [
        "info",
        "map",
        "chunks",
        "nbt",
        "set-nbt",
        "delete-chunks",
        "prune",
        "export",
    ] {
        let o = strata(&["world", sub, "--help"]);
        assert!(o.status.success(), "{sub}");
        assert!(
            stdout(&o).starts_with(&format!("usage: strata world {sub}")),
            "{sub}"
        );
    }
    // A usage error names the command and shows its page; an engine error names it too.
    let o = strata(&["put", "/nonexistent-db"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("strata put: "), "{err}");
    assert!(err.contains("usage: strata put DB_DIR KEY VALUE"), "{err}");
    let o = strata(&["get", "/nonexistent-db", "k"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("strata get: "));
    let o = strata(&["help", "nope"]);
    assert_eq!(o.status.code(), Some(2));
}
