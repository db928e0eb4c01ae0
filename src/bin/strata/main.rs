//! `strata`: the command-line front end over the engine's public API.
//!
//! Every DB_DIR may also be a Bedrock world folder (one holding `level.dat` and `db/`).
//! Exit codes: 0 success, 1 the operation failed (corruption, not found, I/O), 2 bad usage.

mod args;
mod bench;
mod commands;
mod help;
mod world;

use std::process::ExitCode;

/// A scan allocates each decoded block on a readahead worker and frees it on the reading
/// thread. glibc's malloc then trims the worker's arena on nearly every free and the pages
/// fault straight back in (sys time 0.7 s → 2.2 s on the 1 GB world), and blocks over its
/// dynamic mmap threshold are mapped and unmapped one by one. Raising both thresholds keeps
/// freed blocks for reuse: sys time back to 0.4–0.7 s, peak RSS ~33 MB (mimalloc, tried
/// instead, kept 100+ MB).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn tune_malloc() {
    // SAFETY: mallopt only sets allocator parameters; called before any other thread exists.
    #[allow(unsafe_code)]
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_malloc() {}

/// A closed pipe on stdout (`strata dump DB | head`) ends the process quietly, as it does any
/// Unix filter: Rust ignores SIGPIPE, and `println!` then panics on the EPIPE write error.
#[cfg(unix)]
fn default_sigpipe() {
    // SAFETY: restores the default action of one signal before any other thread exists.
    #[allow(unsafe_code)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(not(unix))]
fn default_sigpipe() {}

const USAGE: &str = "\
usage: strata <command> [options]      (strata <command> --help: the command's page)

commands:
  scan [--json] [--timing] [--readahead-threads N] DB_DIR
                              read every entry in key order; count and CRC-32C them
                              (N workers decompress ahead; default: cores, 0 = one thread;
                              --timing: open and total seconds as JSON on stderr)
  get DB_DIR KEY              print the value of KEY (text, or 0x-prefixed hex)
  dump DB_DIR [--limit N]     list keys (text or hex) and value sizes in key order
  info DB_DIR                 files per level, sizes, entry counts, compression ids
  verify DB_DIR               read and check every block of every live file
  put DB_DIR KEY VALUE        set KEY to VALUE (creates the database if missing)
  delete DB_DIR KEY           remove KEY
  compact DB_DIR              flush the log and compact every level
  repair DB_DIR               rebuild the MANIFEST from the tables and logs found
  bench [--benchmarks=a,b] [--num=N] [--threads=N] [--json] ...
                              Google's db_bench workloads, flags and output format;
                              RucksDB's suite (put_100b ... writes_during_flush)
  world info WORLD            Bedrock world: level.dat, key kinds, chunks per dimension
  world map WORLD --out F.png [--dimension N] [--scale PIXELS_PER_CHUNK]
                              top-down map (biome colours, height shading) as PNG
  world chunks WORLD [--dimension N]
                              number of chunks having a Version record
  world nbt WORLD KEY         a record (KEY text or 0x-hex; level.dat for the file) as SNBT
  world delete-chunks WORLD --dimension N --area x0,z0:x1,z1[;...] [--out OUT]
                              delete every record and entity of those chunks (one batch)
  world prune WORLD --dimension N --keep x0,z0:x1,z1[;...] [--force] [--out OUT]
                              delete every chunk of dimension N outside the kept rectangles
                              (keeping none is refused without --force)
  world set-nbt WORLD KEY --snbt FILE [--out OUT]
                              replace a record (or level.dat) with SNBT text (FILE - = stdin)
  world export WORLD --out F.mcworld [--in-place]
                              zip the world, compacted on a copy (--in-place: the original)
  gen-world OUT_DIR [--chunks-x N] [--chunks-z N] [--seed S]
                              write a deterministic synthetic Bedrock world

write options: --profile bedrock|google (default: the database's own dialect, detected from
               its tables and a level.dat beside it; `strata info` shows it),
               --compression none|snappy|zlib|zlib-raw, --sync, --force-codec (write a codec
               the database's own dialect cannot read; refused without it)

DB_DIR may be a LevelDB folder or a Bedrock world folder holding level.dat and db/;
WORLD may also be a .mcworld file (unpacked into memory). Editing commands change a world
folder in place unless --out names a new folder or a F.mcworld; a .mcworld input is never
rewritten (--out is required).";

fn main() -> ExitCode {
    tune_malloc();
    default_sigpipe();
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = argv.split_first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    // `strata CMD --help`, `strata world SUB --help`, `strata help [CMD [SUB]]`.
    let sub = (command == "world")
        .then(|| {
            rest.first()
                .filter(|s| !s.starts_with('-'))
                .map(String::as_str)
        })
        .flatten();
    if command == "help" && !rest.is_empty() {
        let sub = rest.get(1).map(String::as_str);
        return match help::page(&rest[0], sub) {
            Some(page) => {
                println!("{page}");
                ExitCode::SUCCESS
            }
            None => {
                eprintln!("strata: no command {:?}\n\n{USAGE}", rest[0]);
                ExitCode::from(2)
            }
        };
    }
    if help::asked(rest) {
        if let Some(page) = help::page(command, sub) {
            println!("{page}");
            return ExitCode::SUCCESS;
        }
    }
    let result = match command.as_str() {
        "scan" => commands::scan(rest),
        "get" => commands::get(rest),
        "dump" => commands::dump(rest),
        "info" => commands::info(rest),
        "verify" => commands::verify(rest),
        "put" => commands::put(rest),
        "delete" => commands::delete(rest),
        "compact" => commands::compact(rest),
        "repair" => commands::repair(rest),
        "bench" => bench::bench(rest),
        "world" => world::world(rest),
        "gen-world" => world::gen_world(rest),
        "help" | "--help" | "-h" => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        other => Err(commands::CliError::Usage(format!(
            "unknown command {other:?}"
        ))),
    };
    // Errors name the command; a usage error shows that command's page (what to type).
    let name = match sub {
        Some(sub) => format!("{command} {sub}"),
        None => command.clone(),
    };
    match result {
        Ok(code) => code,
        Err(commands::CliError::Usage(msg)) => {
            let page = help::page(command, sub).unwrap_or(USAGE);
            eprintln!("strata {name}: {msg}\n\n{page}");
            ExitCode::from(2)
        }
        Err(commands::CliError::Engine(e)) => {
            eprintln!("strata {name}: {e}");
            ExitCode::from(1)
        }
    }
}
