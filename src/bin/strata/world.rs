//! `strata world info|map|chunks WORLD` and `strata gen-world OUT_DIR`: Bedrock world commands
//! over `strata::bedrock`. WORLD is a world folder, a bare db folder, or a `.mcworld` file
//! (unpacked into memory first).

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use strata::bedrock::map::{render_map, MapOptions};
use strata::bedrock::mcworld::{self, ImportLimits};
use strata::bedrock::synth::{self, SynthParams};
use strata::bedrock::{keys, World};
use strata::{FsStorage, MemStorage};

use crate::args::Args;
use crate::commands::CliError;

type CliResult = Result<ExitCode, CliError>;

const WORLD_USAGE: &str = "world info WORLD | world map WORLD --out FILE.png [--dimension N] \
     [--scale PIXELS_PER_CHUNK] | world chunks WORLD [--dimension N]";

/// Opens a world folder, a db folder or a `.mcworld` file.
fn open_world(path: &str) -> Result<World, CliError> {
    let p = Path::new(path);
    if p.is_file()
        && p.extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("mcworld"))
    {
        let bytes = std::fs::read(p)
            .map_err(|e| CliError::Engine(strata::Error::io(format!("{path}: {e}"))))?;
        let mem = Arc::new(MemStorage::new());
        mcworld::import(&bytes, &*mem, "world", ImportLimits::default())?;
        return Ok(World::open(mem, "world")?);
    }
    let world = World::open(Arc::new(FsStorage::new()), path)?;
    crate::commands::report_recovery(path, world.db().recovery_info());
    Ok(world)
}

fn dimension(args: &Args) -> Result<i32, CliError> {
    match args.number("dimension")? {
        None => Ok(0),
        Some(d @ 0..=2) => Ok(d as i32),
        Some(d) => Err(CliError::Usage(format!(
            "--dimension must be 0, 1 or 2, not {d}"
        ))),
    }
}

pub fn world(raw: &[String]) -> CliResult {
    let Some((sub, rest)) = raw.split_first() else {
        return Err(CliError::Usage(format!("usage: strata {WORLD_USAGE}")));
    };
    match sub.as_str() {
        "info" => info(rest),
        "map" => map(rest),
        "chunks" => chunks(rest),
        other => Err(CliError::Usage(format!(
            "unknown world command {other:?}; usage: strata {WORLD_USAGE}"
        ))),
    }
}

fn info(raw: &[String]) -> CliResult {
    let args = Args::parse(raw, &[], &[])?;
    let [path] = args.positionals(&["WORLD"])? else {
        unreachable!()
    };
    let world = open_world(path)?;
    match world.level_dat()? {
        Some(dat) => {
            let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
            println!("name          {}", opt(dat.name));
            println!("game version  {}", opt(dat.game_version));
            println!("storage ver.  {}", dat.storage_version);
            println!("seed          {}", opt(dat.seed.map(|s| s.to_string())));
            println!(
                "spawn         {}",
                opt(dat.spawn.map(|(x, y, z)| format!("{x} {y} {z}")))
            );
            println!(
                "game mode     {}",
                opt(dat.game_mode.map(|m| match m {
                    0 => "survival (0)".to_string(),
                    1 => "creative (1)".to_string(),
                    2 => "adventure (2)".to_string(),
                    3 => "spectator (3)".to_string(),
                    m => m.to_string(),
                }))
            );
        }
        None => println!("level.dat     (none)"),
    }
    let summary = keys::summarize(world.db())?;
    println!();
    println!(
        "{:<40} {:>9} {:>11} {:>13}",
        "kind", "count", "key bytes", "value bytes"
    );
    for (label, s) in &summary.by_kind {
        println!(
            "{label:<40} {:>9} {:>11} {:>13}",
            s.count, s.key_bytes, s.value_bytes
        );
    }
    let t = summary.total;
    println!(
        "{:<40} {:>9} {:>11} {:>13}",
        "total", t.count, t.key_bytes, t.value_bytes
    );
    println!();
    for dim in 0..=2 {
        let n = summary.chunks.get(&dim).copied().unwrap_or(0);
        let name = ["overworld", "nether", "end"][dim as usize];
        println!("chunks {name:<10} {n}");
    }
    Ok(ExitCode::SUCCESS)
}

fn chunks(raw: &[String]) -> CliResult {
    let args = Args::parse(raw, &["dimension"], &[])?;
    let [path] = args.positionals(&["WORLD"])? else {
        unreachable!()
    };
    let world = open_world(path)?;
    let n = keys::chunk_positions(world.db(), dimension(&args)?)?.len();
    println!("{n}");
    Ok(ExitCode::SUCCESS)
}

fn map(raw: &[String]) -> CliResult {
    let args = Args::parse(raw, &["out", "dimension", "scale"], &[])?;
    let [path] = args.positionals(&["WORLD"])? else {
        unreachable!()
    };
    let out = args
        .value("out")
        .ok_or_else(|| CliError::Usage("world map needs --out FILE.png".into()))?;
    let start = Instant::now();
    let world = open_world(path)?;
    let options = MapOptions {
        dimension: dimension(&args)?,
        pixels_per_chunk: u32::try_from(args.number("scale")?.unwrap_or(16)).unwrap_or(0),
        ..MapOptions::default()
    };
    let image = render_map(world.db(), &options)?;
    let png = image.to_png()?;
    std::fs::write(out, &png)
        .map_err(|e| CliError::Engine(strata::Error::io(format!("{out}: {e}"))))?;
    println!(
        "{out}: {}×{} px, {} chunks indexed, {} drawn, {} failed, {} without surface data, \
         origin chunk ({}, {}), {} bytes, {:.3} s",
        image.width,
        image.height,
        image.chunks_indexed,
        image.chunks_drawn,
        image.chunks_failed,
        image.chunks_without_surface,
        image.min_chunk.0,
        image.min_chunk.1,
        png.len(),
        start.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

pub fn gen_world(raw: &[String]) -> CliResult {
    let args = Args::parse(raw, &["chunks-x", "chunks-z", "seed"], &[])?;
    let [path] = args.positionals(&["OUT_DIR"])? else {
        unreachable!()
    };
    let d = SynthParams::default();
    let params = SynthParams {
        chunks_x: args.number("chunks-x")?.unwrap_or(d.chunks_x as u64) as u32,
        chunks_z: args.number("chunks-z")?.unwrap_or(d.chunks_z as u64) as u32,
        seed: args.number("seed")?.unwrap_or(d.seed),
    };
    let start = Instant::now();
    let report = synth::generate(Arc::new(FsStorage::new()), path, params)?;
    println!(
        "{path}: {} chunks, {} entries, {:.3} s",
        report.chunks,
        report.entries,
        start.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}
