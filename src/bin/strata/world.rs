//! `strata world info|map|chunks|nbt WORLD`, the editing commands `world delete-chunks|prune|
//! set-nbt|export`, and `strata gen-world OUT_DIR`: Bedrock world commands over
//! `strata::bedrock`. WORLD is a world folder, a bare db folder, or a `.mcworld` file
//! (unpacked into memory first).
//!
//! Who gets modified: an editing command on a world FOLDER edits it in place (running it is
//! the request) unless `--out` names somewhere else; a `.mcworld` input is never rewritten and
//! needs `--out` (a folder, or a `.mcworld` file, written compacted). `export` compacts a copy
//! (a scratch folder `OUT.strata-tmp` beside the output, removed afterwards), never the
//! original unless `--in-place`.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use strata::bedrock::edit::{EditReport, Selection};
use strata::bedrock::entities;
use strata::bedrock::export::{self, ExportReport};
use strata::bedrock::map::{render_map, MapLayer, MapOptions};
use strata::bedrock::mcworld::{self, ImportLimits};
use strata::bedrock::nbt_edit::LEVEL_DAT;
use strata::bedrock::relief_index::relief_index;
use strata::bedrock::synth::{self, SynthParams};
use strata::bedrock::{keys, World};
use strata::{FsStorage, MemStorage, Storage};

use crate::args::Args;
use crate::commands::{parse_key, CliError};

type CliResult = Result<ExitCode, CliError>;

const WORLD_USAGE: &str = "world info WORLD | world map WORLD --out FILE.png [--dimension N] \
     [--scale PIXELS_PER_CHUNK] | world chunks WORLD [--dimension N] | world nbt WORLD KEY | \
     world delete-chunks WORLD --dimension N --area x0,z0:x1,z1[;...] [--out OUT] | \
     world prune WORLD --dimension N --keep x0,z0:x1,z1[;...] [--force] [--out OUT] | \
     world set-nbt WORLD KEY --snbt FILE [--out OUT] | \
     world export WORLD --out F.mcworld [--in-place] | world entities WORLD [--dimension N] | \
     world delete-entities WORLD --dimension N --area x0,z0:x1,z1[;...] [--identifier ID] [--out OUT]";

fn is_mcworld(path: &str) -> bool {
    Path::new(path)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("mcworld"))
}

fn io_err(path: &str, e: std::io::Error) -> CliError {
    CliError::Engine(strata::Error::io(format!("{path}: {e}")))
}

/// A scratch folder beside `out` (refused when it exists: it is never someone's data).
struct Scratch(String);

impl Scratch {
    fn beside(out: &str) -> Result<Scratch, CliError> {
        let dir = format!("{out}.strata-tmp");
        if Path::new(&dir).exists() {
            return Err(CliError::Engine(strata::Error::invalid_argument(format!(
                "{dir} exists (left by an interrupted run?): remove it first"
            ))));
        }
        std::fs::create_dir_all(&dir).map_err(|e| io_err(&dir, e))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes the world at `root` of `storage` as a `.mcworld` at `out` (compacting a scratch copy).
fn export_to(storage: &dyn Storage, root: &str, out: &str) -> Result<ExportReport, CliError> {
    let scratch = Scratch::beside(out)?;
    let copy = format!("{}/world", scratch.0);
    let file = std::fs::File::create(out).map_err(|e| io_err(out, e))?;
    let report = export::export(
        storage,
        root,
        Arc::new(FsStorage::new()),
        &copy,
        std::io::BufWriter::with_capacity(1 << 20, file),
    );
    if report.is_err() {
        let _ = std::fs::remove_file(out);
    }
    Ok(report?)
}

/// Where an editing command works, and what it does with the result.
struct Target {
    storage: Arc<dyn Storage>,
    root: String,
    /// A `.mcworld` to write from the edited world at the end.
    zip_out: Option<String>,
    /// Keeps a scratch folder alive while the world in it is edited.
    _scratch: Option<Scratch>,
}

/// Resolves WORLD and `--out` for an editing command (see the module comment).
fn edit_target(path: &str, out: Option<&str>) -> Result<Target, CliError> {
    let fs: Arc<dyn Storage> = Arc::new(FsStorage::new());
    let from_zip = Path::new(path).is_file() && is_mcworld(path);
    let zip_out = out.filter(|o| is_mcworld(o)).map(String::from);
    if from_zip && out.is_none() {
        return Err(CliError::Usage(format!(
            "{path} is a .mcworld, which is never rewritten: give --out FOLDER or --out F.mcworld"
        )));
    }
    if let Some(o) = out {
        if Path::new(o) == Path::new(path) {
            return Err(CliError::Usage(format!(
                "--out {o} is the input; leave --out away to edit a folder in place"
            )));
        }
        if zip_out.is_none() && Path::new(o).exists() {
            return Err(CliError::Engine(strata::Error::invalid_argument(format!(
                "--out {o} exists: give a new folder"
            ))));
        }
    }
    // The working copy: memory for a .mcworld, the --out folder, a scratch folder, or the
    // folder itself.
    let (storage, root, scratch): (Arc<dyn Storage>, String, Option<Scratch>) = if from_zip {
        let bytes = std::fs::read(path).map_err(|e| io_err(path, e))?;
        let mem = Arc::new(MemStorage::new());
        mcworld::import(&bytes, &*mem, "world", ImportLimits::default())?;
        (mem, "world".into(), None)
    } else if let Some(o) = out {
        let (dest, scratch) = match &zip_out {
            Some(z) => {
                let s = Scratch::beside(&format!("{z}.edit"))?;
                (format!("{}/world", s.0), Some(s))
            }
            None => (o.to_string(), None),
        };
        export::copy_world(&*fs, path, &*fs, &dest)?;
        (fs.clone(), dest, scratch)
    } else {
        (fs.clone(), path.to_string(), None)
    };
    if from_zip {
        if let Some(o) = out.filter(|o| !is_mcworld(o)) {
            // An unpacked copy of the .mcworld in the --out folder, edited there.
            export::copy_world(&*storage, &root, &*fs, o)?;
            return Ok(Target {
                storage: fs,
                root: o.to_string(),
                zip_out: None,
                _scratch: None,
            });
        }
    }
    Ok(Target {
        storage,
        root,
        zip_out,
        _scratch: scratch,
    })
}

impl Target {
    fn open(&self) -> Result<World, CliError> {
        Ok(World::open_writable(self.storage.clone(), &self.root)?)
    }

    /// After the edit: writes the `.mcworld` when one was asked for.
    fn finish(self) -> Result<(), CliError> {
        if let Some(z) = &self.zip_out {
            let r = export_to(&*self.storage, &self.root, z)?;
            println!("{z}: {} files, {} bytes before zipping", r.files, r.bytes);
        }
        Ok(())
    }
}

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

fn required_dimension(args: &Args, command: &str) -> Result<i32, CliError> {
    if args.value("dimension").is_none() {
        return Err(CliError::Usage(format!(
            "world {command} needs --dimension N"
        )));
    }
    dimension(args)
}

fn selection(args: &Args, flag: &str, command: &str) -> Result<Selection, CliError> {
    let text = args.value(flag).ok_or_else(|| {
        CliError::Usage(format!("world {command} needs --{flag} x0,z0:x1,z1[;...]"))
    })?;
    Selection::parse(text).map_err(|e| CliError::Usage(e.to_string()))
}

/// Chunks are positions with a Version record (what the map draws and `world info` counts);
/// stubs, positions with records but none (`EditReport::stubs`), are named apart when there
/// are any.
fn print_edit(what: &str, dim: i32, r: &EditReport, secs: f64) {
    let (chunks, left) = (r.chunks - r.stubs, r.chunks_left - r.stubs_left);
    let any = r.stubs > 0 || r.stubs_left > 0;
    let stubs = |n: u64, what: &str| {
        if any {
            format!(" and {n} stubs{what}")
        } else {
            String::new()
        }
    };
    println!(
        "{what}: {chunks} chunks{} of dimension {dim} deleted ({} records, {} bytes, {} \
         entities), {left} chunks{} left, {secs:.3} s",
        stubs(r.stubs, " (positions with records but no Version record)"),
        r.records,
        r.bytes,
        r.entities,
        stubs(r.stubs_left, "")
    );
}

fn delete_chunks(raw: &[String]) -> CliResult {
    let args = Args::parse(raw, &["dimension", "area", "out"], &[])?;
    let [path] = args.positionals(&["WORLD"])? else {
        unreachable!()
    };
    let dim = required_dimension(&args, "delete-chunks")?;
    let area = selection(&args, "area", "delete-chunks")?;
    let target = edit_target(path, args.value("out"))?;
    let start = Instant::now();
    let world = target.open()?;
    let report = world.delete_chunks(dim, &area)?;
    world.close()?;
    print_edit(path, dim, &report, start.elapsed().as_secs_f64());
    target.finish()?;
    Ok(ExitCode::SUCCESS)
}

fn prune(raw: &[String]) -> CliResult {
    let args = Args::parse(raw, &["dimension", "keep", "out"], &["force"])?;
    let [path] = args.positionals(&["WORLD"])? else {
        unreachable!()
    };
    let dim = required_dimension(&args, "prune")?;
    let keep = selection(&args, "keep", "prune")?;
    let target = edit_target(path, args.value("out"))?;
    let start = Instant::now();
    let world = target.open()?;
    let report = world.prune(dim, &keep, args.has("force"))?;
    world.close()?;
    print_edit(path, dim, &report, start.elapsed().as_secs_f64());
    target.finish()?;
    Ok(ExitCode::SUCCESS)
}

fn entities_cmd(raw: &[String]) -> CliResult {
    let args = Args::parse(raw, &["dimension"], &[])?;
    let [path] = args.positionals(&["WORLD"])? else {
        unreachable!()
    };
    let world = open_world(path)?;
    let dim = dimension(&args)?;
    let list = entities::entities(world.db(), dim)?;
    let mut counts: std::collections::BTreeMap<(&str, &str), u64> = Default::default();
    for e in &list.entities {
        *counts.entry((e.kind.name(), &e.identifier)).or_default() += 1;
    }
    let mut rows: Vec<_> = counts.into_iter().collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    for ((kind, id), n) in rows {
        println!("{n:>8}  {kind:<12}  {id}");
    }
    println!(
        "{} listed in dimension {dim}{}",
        list.entities.len(),
        if list.unreadable > 0 {
            format!(", {} unreadable", list.unreadable)
        } else {
            String::new()
        }
    );
    Ok(ExitCode::SUCCESS)
}

fn delete_entities_cmd(raw: &[String]) -> CliResult {
    let args = Args::parse(raw, &["dimension", "area", "identifier", "out"], &[])?;
    let [path] = args.positionals(&["WORLD"])? else {
        unreachable!()
    };
    let dim = required_dimension(&args, "delete-entities")?;
    let area = selection(&args, "area", "delete-entities")?;
    let target = edit_target(path, args.value("out"))?;
    let start = Instant::now();
    let world = target.open()?;
    let r = entities::delete_entities(world.db(), dim, &area, args.value("identifier"), false)?;
    world.close()?;
    println!(
        "{path}: dimension {dim}: deleted {} entities ({} records deleted, {} rewritten, {} bytes) in {:.3} s",
        r.entities,
        r.records_deleted,
        r.records_rewritten,
        r.bytes,
        start.elapsed().as_secs_f64()
    );
    target.finish()?;
    Ok(ExitCode::SUCCESS)
}

fn nbt(raw: &[String]) -> CliResult {
    let args = Args::parse(raw, &[], &[])?;
    let [path, key] = args.positionals(&["WORLD", "KEY"])? else {
        unreachable!()
    };
    let world = open_world(path)?;
    let text = if key == LEVEL_DAT {
        world.level_dat_snbt()?
    } else {
        match world.snbt(&parse_key(key)?)? {
            Some(t) => t,
            None => {
                return Err(CliError::Engine(strata::Error::not_found(format!(
                    "no record {key} in {path}"
                ))))
            }
        }
    };
    print!("{text}");
    Ok(ExitCode::SUCCESS)
}

fn set_nbt(raw: &[String]) -> CliResult {
    let args = Args::parse(raw, &["snbt", "out"], &[])?;
    let [path, key] = args.positionals(&["WORLD", "KEY"])? else {
        unreachable!()
    };
    let file = args
        .value("snbt")
        .ok_or_else(|| CliError::Usage("world set-nbt needs --snbt FILE (- for stdin)".into()))?;
    let text = if file == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
            .map_err(|e| io_err("stdin", e))?;
        s
    } else {
        std::fs::read_to_string(file).map_err(|e| io_err(file, e))?
    };
    // Parse before anything is copied or opened: a bad text changes nothing anywhere.
    strata::bedrock::snbt::parse(&text)?;
    let key_bytes = if key == LEVEL_DAT {
        None
    } else {
        Some(parse_key(key)?)
    };
    let target = edit_target(path, args.value("out"))?;
    let world = target.open()?;
    let report = match &key_bytes {
        None => world.set_level_dat_snbt(&text)?,
        Some(k) => world.set_snbt(k, &text)?,
    };
    world.close()?;
    println!(
        "{key}: {} ({} bytes)",
        if report.changed {
            "written"
        } else {
            "unchanged, nothing written"
        },
        report.bytes
    );
    target.finish()?;
    Ok(ExitCode::SUCCESS)
}

fn export_cmd(raw: &[String]) -> CliResult {
    let args = Args::parse(raw, &["out"], &["in-place"])?;
    let [path] = args.positionals(&["WORLD"])? else {
        unreachable!()
    };
    let out = args
        .value("out")
        .ok_or_else(|| CliError::Usage("world export needs --out F.mcworld".into()))?;
    let start = Instant::now();
    let from_zip = Path::new(path).is_file() && is_mcworld(path);
    let report = if from_zip {
        let bytes = std::fs::read(path).map_err(|e| io_err(path, e))?;
        let mem = Arc::new(MemStorage::new());
        mcworld::import(&bytes, &*mem, "world", ImportLimits::default())?;
        export_to(&*mem, "world", out)?
    } else if args.has("in-place") {
        let fs: Arc<dyn Storage> = Arc::new(FsStorage::new());
        export::compact(fs.clone(), path)?;
        let file = std::fs::File::create(out).map_err(|e| io_err(out, e))?;
        export::write_zip(&*fs, path, std::io::BufWriter::with_capacity(1 << 20, file))?
    } else {
        export_to(&FsStorage::new(), path, out)?
    };
    let size = std::fs::metadata(out).map_err(|e| io_err(out, e))?.len();
    println!(
        "{out}: {} files, {} bytes compacted, {size} bytes zipped, {:.3} s",
        report.files,
        report.bytes,
        start.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
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
        "nbt" => nbt(rest),
        "delete-chunks" => delete_chunks(rest),
        "prune" => prune(rest),
        "set-nbt" => set_nbt(rest),
        "export" => export_cmd(rest),
        "entities" => entities_cmd(rest),
        "delete-entities" => delete_entities_cmd(rest),
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
    let args = Args::parse(
        raw,
        &[
            "out",
            "dimension",
            "scale",
            "layer",
            "y",
            "chunks-per-pixel",
            "region",
        ],
        &[],
    )?;
    let [path] = args.positionals(&["WORLD"])? else {
        unreachable!()
    };
    let out = args
        .value("out")
        .ok_or_else(|| CliError::Usage("world map needs --out FILE.png".into()))?;
    let start = Instant::now();
    let world = open_world(path)?;
    let y = args
        .value("y")
        .map(|v| {
            v.parse::<i32>().map_err(|_| {
                CliError::Usage(format!("--y takes a block height such as -20, not {v:?}"))
            })
        })
        .transpose()?;
    let layer = MapLayer::parse(args.value("layer").unwrap_or("relief"), y)?;
    let mut options = MapOptions {
        dimension: dimension(&args)?,
        layer,
        pixels_per_chunk: u32::try_from(args.number("scale")?.unwrap_or(16)).unwrap_or(0),
        chunks_per_pixel: u32::try_from(args.number("chunks-per-pixel")?.unwrap_or(1)).unwrap_or(0),
        region: args.value("region").map(parse_region).transpose()?,
        ..MapOptions::default()
    };
    if matches!(
        options.layer,
        MapLayer::Relief | MapLayer::Slime | MapLayer::Height | MapLayer::Biome
    ) && (options.pixels_per_chunk <= 4 || options.chunks_per_pixel > 1)
    {
        // One pass lists the chunks and samples their surface: no second read of the blocks.
        let index = relief_index(world.db(), options.dimension)?;
        options.chunks = Some(index.chunks.clone());
        options.relief = Some(std::sync::Arc::new(index));
    }
    let image = render_map(world.db(), &options)?;
    let png = image.to_png()?;
    std::fs::write(out, &png)
        .map_err(|e| CliError::Engine(strata::Error::io(format!("{out}: {e}"))))?;
    println!(
        "{out}: {} layer, {}×{} px, {} chunks indexed, {} drawn, {} failed, {} without surface data, \
         {} slime chunks, origin chunk ({}, {}), {} bytes, {:.3} s",
        image.layer.name(),
        image.width,
        image.height,
        image.chunks_indexed,
        image.chunks_drawn,
        image.chunks_failed,
        image.chunks_without_surface,
        image.slime_chunks,
        image.min_chunk.0,
        image.min_chunk.1,
        png.len(),
        start.elapsed().as_secs_f64()
    );
    // A chunk that could not be drawn is named (on stderr), never silently skipped.
    for (x, z, why) in &image.failed_chunks {
        eprintln!("chunk {x}, {z}: not drawn: {why}");
    }
    if image.chunks_failed > image.failed_chunks.len() as u64 {
        eprintln!(
            "… and {} more chunks not drawn",
            image.chunks_failed - image.failed_chunks.len() as u64
        );
    }
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

/// `--region X0,Z0,X1,Z1`: a chunk rectangle, inclusive.
fn parse_region(v: &str) -> Result<(i32, i32, i32, i32), CliError> {
    let n: Vec<i32> = v
        .split(',')
        .map(|p| p.trim().parse::<i32>())
        .collect::<Result<_, _>>()
        .map_err(|_| CliError::Usage(format!("--region takes X0,Z0,X1,Z1 in chunks, not {v:?}")))?;
    match n[..] {
        [x0, z0, x1, z1] => Ok((x0, z0, x1, z1)),
        _ => Err(CliError::Usage(format!(
            "--region takes four chunk coordinates X0,Z0,X1,Z1, not {v:?}"
        ))),
    }
}
