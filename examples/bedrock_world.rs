//! A Bedrock world, read-only: level.dat, key kinds, chunks per dimension, a map PNG.
//! `cargo run --example bedrock_world -- WORLD` (a world folder, a bare db/ folder); with no
//! argument it generates a small synthetic world first (`strata::bedrock::synth`).

use std::sync::Arc;

use strata::bedrock::map::{render_map, MapOptions};
use strata::bedrock::synth::{generate, SynthParams};
use strata::bedrock::{keys, World};
use strata::FsStorage;

fn main() -> strata::Result<()> {
    let storage = Arc::new(FsStorage::new());
    let path = match std::env::args().nth(1) {
        Some(p) => p,
        None => {
            let p =
                std::env::temp_dir().join(format!("strata-example-world-{}", std::process::id()));
            let p = p.to_string_lossy().into_owned();
            let report = generate(storage.clone(), &p, SynthParams::default())?;
            println!("generated {p}: {} entries", report.entries);
            p
        }
    };
    let world = World::open(storage, &path)?;
    if let Some(dat) = world.level_dat()? {
        println!("level.dat: {dat:?}");
    }
    let summary = keys::summarize(world.db())?;
    println!("{summary:?}");
    for dim in 0..3 {
        println!(
            "dimension {dim}: {} chunks",
            keys::chunk_positions(world.db(), dim)?.len()
        );
    }
    let map = render_map(
        world.db(),
        &MapOptions {
            pixels_per_chunk: 4,
            ..MapOptions::default()
        },
    )?;
    let out = std::env::temp_dir().join("strata-example-map.png");
    std::fs::write(&out, map.to_png()?).map_err(|e| strata::Error::io(e.to_string()))?;
    println!(
        "map: {}x{} pixels, {} chunks drawn, written to {}",
        map.width,
        map.height,
        map.chunks_drawn,
        out.display()
    );
    Ok(())
}
