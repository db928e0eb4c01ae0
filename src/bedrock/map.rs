//! Top-down maps of a world's dimension (0 Overworld, 1 Nether, 2 End), in layers
//! ([`MapLayer`]): relief (biome colour shaded by height: one record read per chunk, the
//! default), surface (real top blocks), height (a colour ramp), biome (flat colours, with the
//! biomes seen), slime (relief with Bedrock's slime chunks tinted) and cave (the first block at
//! or below a y level).
//!
//! Chunks are indexed from their Version (0x2C) or LegacyVersion (0x76) records. Each chunk
//! costs one record read for its surface: Data3D, else Data2D, else Data2DLegacy, else
//! LegacyTerrain. Columns are coloured by biome (LegacyTerrain: by top block, grass by its
//! stored grass colour) and shaded by the height difference with the column to the north
//! (z - 1): higher is lighter. Pixels with nothing to show stay transparent (alpha 0); every
//! drawn pixel is opaque.
//!
//! Bounds: the image is refused above `MapOptions::max_pixels`; a chunk whose record does not
//! decode is counted in `chunks_failed` and left transparent; storage errors abort the map.
//! For zoomed views, `surface_tile` decodes a chunk's subchunks from the top down for real
//! block colours.

use super::chunk::{decode_data2d, decode_data2d_legacy, decode_data3d};
use super::colours::{biome_colour, block_colour, legacy_block_colour, shade};
use super::keys::{self, chunk_key, chunk_prefix, TAG_SUBCHUNK};
use super::legacy::decode_legacy_terrain;
use super::relief_index::{ReliefIndex, ReliefSample};
use super::subchunk::decode_subchunk;
use crate::error::{Error, Result};
use crate::{Db, ReadOptions};

/// Which picture of the dimension to draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapLayer {
    /// Biome colours shaded by height (Data3D/Data2D; LegacyTerrain: top blocks): one record
    /// read per chunk.
    Relief,
    /// Real top-block colours (each chunk's subchunks from the top down), shaded by height;
    /// chunks without subchunks fall back to relief colours.
    Surface,
    /// The top block's y on a fixed colour ramp (y -64 deep blue … 320 white), not shaded.
    Height,
    /// The biome of each column, flat colours; `MapImage::biomes` counts the columns per biome.
    Biome,
    /// Relief, with slime chunks (`slime::is_slime_chunk`) tinted green.
    Slime,
    /// The first non-air block at or below this y (caves, structures), darker the deeper it is.
    Cave(i32),
}

impl MapLayer {
    /// `relief`, `surface`, `height`, `biome`, `slime` or `cave` (which needs `y`).
    pub fn parse(name: &str, y: Option<i32>) -> Result<MapLayer> {
        Ok(match name {
            "relief" => MapLayer::Relief,
            "surface" => MapLayer::Surface,
            "height" => MapLayer::Height,
            "biome" => MapLayer::Biome,
            "slime" => MapLayer::Slime,
            "cave" => MapLayer::Cave(
                y.ok_or_else(|| Error::invalid_argument("the cave layer needs a y level"))?,
            ),
            other => {
                return Err(Error::invalid_argument(format!(
                    "unknown map layer {other:?} (relief, surface, height, biome, slime, cave)"
                )))
            }
        })
    }

    pub fn name(&self) -> &'static str {
        match self {
            MapLayer::Relief => "relief",
            MapLayer::Surface => "surface",
            MapLayer::Height => "height",
            MapLayer::Biome => "biome",
            MapLayer::Slime => "slime",
            MapLayer::Cave(_) => "cave",
        }
    }
}

/// What to draw.
#[derive(Clone, Debug)]
pub struct MapOptions {
    pub dimension: i32,
    /// Default [`MapLayer::Relief`].
    pub layer: MapLayer,
    /// Pixels per chunk side: 16 (one per block), 8, 4, 2 or 1. Default 16.
    pub pixels_per_chunk: u32,
    /// Chunks per pixel side (a power of two, default 1; above 1 needs `pixels_per_chunk`
    /// 1): for dimensions whose chunks spread too far for a pixel each (a world with a chunk
    /// visited a million blocks away). A pixel shows the first chunk of its square (in key
    /// order) that has a surface, sampled at its centre column; the others are not read.
    pub chunks_per_pixel: u32,
    /// Largest image accepted (width × height). Default 64 Mi pixels.
    pub max_pixels: u64,
    /// Draw only this chunk rectangle `(x0, z0, x1, z1)`, inclusive: the image covers exactly
    /// it (transparent where there is no chunk), and its figures count only chunks inside.
    /// Bands drawn one by one and stacked give the same pixels as the whole map: the chunk row
    /// north of the rectangle is read for shading (not drawn, not counted). Needs
    /// `chunks_per_pixel` 1.
    pub region: Option<(i32, i32, i32, i32)>,
    /// The dimension's chunks as the caller already knows them (`keys::chunk_positions`),
    /// so that drawing a map in many regions reads the chunk index once, not once per region.
    /// `None`: read from the database.
    pub chunks: Option<Vec<(i32, i32)>>,
    /// Relief samples from the pass that indexed the chunks (`relief_index`), used for the
    /// relief, slime, height and biome layers at up to 4 pixels per chunk or far out, for the
    /// chunks that have them (the others are read). The caller hands them over only while the database is
    /// unchanged since that pass (`ReliefIndex::sequence`); another dimension's are ignored.
    pub relief: Option<std::sync::Arc<ReliefIndex>>,
}

impl Default for MapOptions {
    fn default() -> Self {
        MapOptions {
            dimension: 0,
            layer: MapLayer::Relief,
            pixels_per_chunk: 16,
            chunks_per_pixel: 1,
            max_pixels: 64 << 20,
            region: None,
            chunks: None,
            relief: None,
        }
    }
}

/// An RGBA image, row-major from the north-west corner, and what went into it.
#[derive(Clone, Debug)]
pub struct MapImage {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
    /// Chunk coordinates of the top-left pixel.
    pub min_chunk: (i32, i32),
    pub pixels_per_chunk: u32,
    /// Chunks per pixel side (1 unless the options asked for more).
    pub chunks_per_pixel: u32,
    /// Chunks not read because another chunk of their pixel's square was drawn.
    pub chunks_sampled_out: u64,
    /// Chunks with a Version record in this dimension.
    pub chunks_indexed: u64,
    /// Chunks whose surface record decoded and was drawn.
    pub chunks_drawn: u64,
    /// Chunks with a surface record that did not decode.
    pub chunks_failed: u64,
    /// The first of them (at most [`MAX_FAILED_LISTED`]), in the order read, with why: a chunk
    /// the map cannot draw is named, never silently skipped.
    pub failed_chunks: Vec<(i32, i32, String)>,
    /// Chunks with no surface record at all.
    pub chunks_without_surface: u64,
    pub layer: MapLayer,
    /// Slime chunks among the dimension's chunks (counted for every layer).
    pub slime_chunks: u64,
    /// Lowest and highest top-block y drawn (height layer; `None` for the others or when no
    /// column had one).
    pub height_range: Option<(i32, i32)>,
    /// Biome ids drawn and their column counts, most columns first (biome layer; relief
    /// colours of LegacyTerrain chunks have no biome id and are not counted).
    pub biomes: Vec<(u32, u64)>,
}

impl MapImage {
    /// Pixels with alpha > 0.
    pub fn opaque_pixels(&self) -> u64 {
        self.rgba.chunks_exact(4).filter(|p| p[3] != 0).count() as u64
    }

    /// The image as PNG bytes (native builds).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn to_png(&self) -> Result<Vec<u8>> {
        encode_png(self.width, self.height, &self.rgba)
    }
}

/// Encodes RGBA8 pixels as PNG (native builds).
#[cfg(not(target_arch = "wasm32"))]
pub fn encode_png(width: u32, height: u32, rgba: &[u8]) -> Result<Vec<u8>> {
    let fail = |e: png::EncodingError| Error::invalid_argument(format!("png: {e}"));
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, width, height);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc.write_header().map_err(fail)?;
    w.write_image_data(rgba).map_err(fail)?;
    w.finish().map_err(fail)?;
    Ok(out)
}

/// One chunk's columns (`z*16 + x`): height and colour, `None` where nothing is drawn.
pub type Columns = [Option<(i32, [u8; 3])>; 256];

/// Reads one chunk's surface record and colours its columns. `Ok(None)` when the chunk has no
/// surface record; `Err` when a record does not decode or the read fails.
pub fn chunk_columns(db: &Db, dimension: i32, x: i32, z: i32) -> Result<Option<Columns>> {
    let ro = ReadOptions::default();
    let get = |tag| db.get(&ro, &chunk_key(x, z, dimension, tag, None));
    let mut cols: Columns = [None; 256];
    let surface = if let Some(v) = get(keys::TAG_DATA3D)? {
        decode_data3d(&v)?
    } else if let Some(v) = get(keys::TAG_DATA2D)? {
        decode_data2d(&v)?
    } else if let Some(v) = get(keys::TAG_DATA2D_LEGACY)? {
        decode_data2d_legacy(&v)?
    } else if let Some(v) = get(keys::TAG_LEGACY_TERRAIN)? {
        let s = decode_legacy_terrain(&v)?;
        for (i, col) in cols.iter_mut().enumerate() {
            *col = s.tops[i].map(|t| {
                let c = if t.id == 2 {
                    s.grass[i]
                } else {
                    legacy_block_colour(t.id)
                };
                (t.y as i32 + 1, c)
            });
        }
        return Ok(Some(cols));
    } else {
        return Ok(None);
    };
    for (i, col) in cols.iter_mut().enumerate() {
        *col = Some((surface.heights[i] as i32, biome_colour(surface.biomes[i])));
    }
    Ok(Some(cols))
}

/// One drawn column: what shading compares (`height`), the top block's absolute y, its
/// colour, and its biome where the record has one.
#[derive(Clone, Copy)]
struct Column {
    height: i32,
    y: i32,
    colour: [u8; 3],
    biome: Option<u32>,
}

/// The lowest y of a dimension in Data3D worlds (1.18+): -64 in the Overworld.
fn min_y(dimension: i32) -> i32 {
    if dimension == 0 {
        -64
    } else {
        0
    }
}

/// A chunk's columns from its surface record (Data3D, Data2D, Data2DLegacy, LegacyTerrain).
fn surface_columns(
    db: &Db,
    dimension: i32,
    x: i32,
    z: i32,
) -> Result<Option<[Option<Column>; 256]>> {
    let ro = ReadOptions::default();
    let get = |tag| db.get(&ro, &chunk_key(x, z, dimension, tag, None));
    let mut cols: [Option<Column>; 256] = [None; 256];
    let (surface, base) = if let Some(v) = get(keys::TAG_DATA3D)? {
        (decode_data3d(&v)?, min_y(dimension))
    } else if let Some(v) = get(keys::TAG_DATA2D)? {
        (decode_data2d(&v)?, 0)
    } else if let Some(v) = get(keys::TAG_DATA2D_LEGACY)? {
        (decode_data2d_legacy(&v)?, 0)
    } else if let Some(v) = get(keys::TAG_LEGACY_TERRAIN)? {
        let s = decode_legacy_terrain(&v)?;
        for (i, col) in cols.iter_mut().enumerate() {
            *col = s.tops[i].map(|t| {
                let colour = if t.id == 2 {
                    s.grass[i]
                } else {
                    legacy_block_colour(t.id)
                };
                Column {
                    height: t.y as i32 + 1,
                    y: t.y as i32,
                    colour,
                    biome: None,
                }
            });
        }
        return Ok(Some(cols));
    } else {
        return Ok(None);
    };
    for (i, col) in cols.iter_mut().enumerate() {
        let h = surface.heights[i] as i32;
        *col = Some(Column {
            height: h,
            y: h - 1 + base,
            colour: biome_colour(surface.biomes[i]),
            biome: Some(surface.biomes[i]),
        });
    }
    Ok(Some(cols))
}

/// A colour on the height ramp: y -64 deep blue, 0 blue, 64 green, 128 yellow, 200 red, 320
/// white (linear between).
pub fn height_colour(y: i32) -> [u8; 3] {
    const STOPS: [(i32, [u8; 3]); 6] = [
        (-64, [20, 24, 110]),
        (0, [40, 110, 220]),
        (64, [60, 170, 70]),
        (128, [230, 210, 60]),
        (200, [200, 60, 40]),
        (320, [255, 255, 255]),
    ];
    let y = y.clamp(STOPS[0].0, STOPS[5].0);
    for w in STOPS.windows(2) {
        let ((y0, c0), (y1, c1)) = (w[0], w[1]);
        if y <= y1 {
            let t = (y - y0) as f32 / (y1 - y0) as f32;
            return [0, 1, 2]
                .map(|k| (c0[k] as f32 + (c1[k] as f32 - c0[k] as f32) * t).round() as u8);
        }
    }
    STOPS[5].1
}

/// A chunk's columns for `layer`: `Ok(None)` when it has nothing to draw.
fn layer_columns(
    db: &Db,
    dimension: i32,
    layer: MapLayer,
    x: i32,
    z: i32,
) -> Result<Option<[Option<Column>; 256]>> {
    match layer {
        MapLayer::Relief | MapLayer::Slime | MapLayer::Biome => {
            surface_columns(db, dimension, x, z)
        }
        MapLayer::Height => Ok(surface_columns(db, dimension, x, z)?.map(|mut cols| {
            for c in cols.iter_mut().flatten() {
                c.colour = height_colour(c.y);
            }
            cols
        })),
        MapLayer::Surface => {
            let tops = chunk_tops(db, dimension, x, z, None)?;
            if tops.names.is_empty() {
                return surface_columns(db, dimension, x, z);
            }
            let colours = tops.colours();
            let mut cols: [Option<Column>; 256] = [None; 256];
            for (c, top) in cols.iter_mut().zip(&tops.cols) {
                *c = top.map(|(y, name)| Column {
                    height: y,
                    y,
                    colour: colours[name as usize],
                    biome: None,
                });
            }
            Ok(Some(cols))
        }
        MapLayer::Cave(level) => {
            let tops = chunk_tops(db, dimension, x, z, Some(level))?;
            if tops.names.is_empty() {
                return Ok(None);
            }
            let colours = tops.colours();
            let mut cols: [Option<Column>; 256] = [None; 256];
            for (c, top) in cols.iter_mut().zip(&tops.cols) {
                *c = top.map(|(y, name)| Column {
                    height: y,
                    y,
                    colour: shade(colours[name as usize], -(level - y).clamp(0, 64) * 2),
                    biome: None,
                });
            }
            Ok(Some(cols))
        }
    }
}

/// Writes drawn pixel `i`: its height (what shading compares) and its colour, tinted green
/// when `slime_tint` (a slime chunk on the slime layer). Every drawn pixel is opaque.
fn put_pixel(
    rgba: &mut [u8],
    heights: &mut [i32],
    i: usize,
    height: i32,
    colour: [u8; 3],
    slime_tint: bool,
) {
    heights[i] = height;
    let c = if slime_tint {
        [0, 1, 2].map(|k| ((colour[k] as u32 * 45 + [40u32, 220, 60][k] * 55) / 100) as u8)
    } else {
        colour
    };
    rgba[i * 4..i * 4 + 4].copy_from_slice(&[c[0], c[1], c[2], 255]);
}

/// Counts a drawn column for the biome legend or the height layer's range.
fn tally(
    layer: MapLayer,
    col: &Column,
    biomes: &mut std::collections::BTreeMap<u32, u64>,
    range: &mut Option<(i32, i32)>,
) {
    match (layer, col.biome) {
        (MapLayer::Biome, Some(b)) => *biomes.entry(b).or_default() += 1,
        (MapLayer::Height, _) => {
            *range = Some(range.map_or((col.y, col.y), |(lo, hi)| (lo.min(col.y), hi.max(col.y))))
        }
        _ => {}
    }
}

/// Failed chunks named in [`MapImage::failed_chunks`] (the rest are counted).
pub const MAX_FAILED_LISTED: usize = 64;

/// Draws a dimension.
pub fn render_map(db: &Db, options: &MapOptions) -> Result<MapImage> {
    let ppc = options.pixels_per_chunk;
    if ![1, 2, 4, 8, 16].contains(&ppc) {
        return Err(Error::invalid_argument(format!(
            "pixels per chunk must be 1, 2, 4, 8 or 16, not {ppc}"
        )));
    }
    let cpp = options.chunks_per_pixel;
    if !cpp.is_power_of_two() || cpp > 1 << 20 || (cpp > 1 && ppc != 1) {
        return Err(Error::invalid_argument(format!(
            "chunks per pixel must be a power of two up to 2^20 (with 1 pixel per chunk), not {cpp}"
        )));
    }
    let mut chunks = match &options.chunks {
        Some(given) => {
            // In chunk_positions' order, (x, then z): far-out sampling keeps the first chunk
            // of a square in that order, so pixels do not depend on how the caller listed
            // them; and a chunk's records sit under its x in key order, so reads in this order
            // hit the block cache (a band's chunks taken row by row, z first, read 5x
            // slower). Each chunk once.
            let mut c = given.clone();
            c.sort_unstable();
            c.dedup();
            c
        }
        None => keys::chunk_positions(db, options.dimension)?,
    };
    // A region: its chunks, and the row north of it (`context`: read for shading only).
    let mut context = None;
    if let Some((x0, z0, x1, z1)) = options.region {
        if x0 > x1 || z0 > z1 {
            return Err(Error::invalid_argument(format!(
                "map region ({x0}, {z0})..({x1}, {z1}) is empty: x0 <= x1 and z0 <= z1"
            )));
        }
        if cpp > 1 {
            return Err(Error::invalid_argument(
                "a map region needs one chunk or more per pixel (chunks per pixel 1)",
            ));
        }
        context = z0.checked_sub(1);
        let top = context.unwrap_or(z0);
        chunks.retain(|&(x, z)| x >= x0 && x <= x1 && z >= top && z <= z1);
    }
    let (mut min_x, mut min_z, mut max_x, mut max_z) = (i32::MAX, i32::MAX, i32::MIN, i32::MIN);
    for &(x, z) in &chunks {
        (min_x, min_z) = (min_x.min(x), min_z.min(z));
        (max_x, max_z) = (max_x.max(x), max_z.max(z));
    }
    if let Some((x0, z0, x1, z1)) = options.region {
        (min_x, min_z, max_x, max_z) = (x0, context.unwrap_or(z0), x1, z1);
    } else if chunks.is_empty() {
        return Err(Error::not_found(format!(
            "dimension {} has no chunks",
            options.dimension
        )));
    }
    let w_chunks = (max_x as i64 - min_x as i64 + 1) as u64;
    let h_chunks = (max_z as i64 - min_z as i64 + 1) as u64;
    let (width, height) = if cpp > 1 {
        (w_chunks.div_ceil(cpp as u64), h_chunks.div_ceil(cpp as u64))
    } else {
        (w_chunks * ppc as u64, h_chunks * ppc as u64)
    };
    if width.saturating_mul(height) > options.max_pixels {
        return Err(Error::invalid_argument(format!(
            "a {width}×{height} map exceeds {} pixels: use fewer pixels per chunk (or more chunks per pixel)",
            options.max_pixels
        )));
    }
    let (width, height) = (width as usize, height as usize);
    // Heights of drawn pixels (NO_HEIGHT elsewhere); colours go straight into the image.
    const NO_HEIGHT: i32 = i32::MIN;
    let mut heights = vec![NO_HEIGHT; width * height];
    let mut image = MapImage {
        width: width as u32,
        height: height as u32,
        rgba: vec![0u8; width * height * 4],
        min_chunk: (min_x, min_z),
        pixels_per_chunk: ppc,
        chunks_per_pixel: cpp,
        chunks_sampled_out: 0,
        chunks_indexed: chunks.iter().filter(|c| Some(c.1) != context).count() as u64,
        chunks_drawn: 0,
        chunks_failed: 0,
        failed_chunks: Vec::new(),
        chunks_without_surface: 0,
        layer: options.layer,
        slime_chunks: 0,
        height_range: None,
        biomes: Vec::new(),
    };
    let step = (16 / ppc) as usize;
    let layer = options.layer;
    // Samples hold the columns drawn at up to 4 pixels per chunk (or far out): the height-map
    // value and biome of each, all the relief, slime, height and biome layers draw.
    let relief = options.relief.as_deref().filter(|r| {
        r.dimension == options.dimension
            && matches!(
                layer,
                MapLayer::Relief | MapLayer::Slime | MapLayer::Height | MapLayer::Biome
            )
            && (cpp > 1 || ppc <= 4)
    });
    let mut slime = vec![false; chunks.len()];
    let mut biome_counts: std::collections::BTreeMap<u32, u64> = Default::default();
    let mut range: Option<(i32, i32)> = None;
    for (n, &(x, z)) in chunks.iter().enumerate() {
        // The row north of a region: heights for shading, nothing counted.
        let counted = Some(z) != context;
        slime[n] = super::slime::is_slime_chunk(x, z);
        image.slime_chunks += (slime[n] && counted) as u64;
        // Far out (several chunks per pixel): the pixel's first chunk with a surface.
        let pixel = (cpp > 1).then(|| {
            let px = (x as i64 - min_x as i64) as usize / cpp as usize;
            let pz = (z as i64 - min_z as i64) as usize / cpp as usize;
            pz * width + px
        });
        if let Some(i) = pixel {
            if image.rgba[i * 4 + 3] != 0 {
                image.chunks_sampled_out += 1;
                continue;
            }
        }
        if let Some(sampled) = relief.and_then(|r| r.chunk(x, z)) {
            // Every column of a sampled chunk has a surface: drawn like the read columns below
            // (the column `surface_columns` would give, from the sample).
            image.chunks_drawn += counted as u64;
            let tint = layer == MapLayer::Slime && slime[n];
            let samples = sampled.columns;
            let base = if sampled.data3d {
                min_y(options.dimension)
            } else {
                0
            };
            let mut put = |i: usize, s: ReliefSample| {
                let h = s.height() as i32;
                let mut col = Column {
                    height: h,
                    y: h - 1 + base,
                    colour: s.colour(),
                    biome: Some(s.biome() as u32),
                };
                if layer == MapLayer::Height {
                    col.colour = height_colour(col.y);
                }
                put_pixel(
                    &mut image.rgba,
                    &mut heights,
                    i,
                    col.height,
                    col.colour,
                    tint,
                );
                if counted {
                    tally(layer, &col, &mut biome_counts, &mut range);
                }
            };
            match pixel {
                // Far out: the centre column (8, 8).
                Some(i) => put(i, samples[2 * 4 + 2]),
                None => {
                    let px0 = (x as i64 - min_x as i64) as usize * ppc as usize;
                    let pz0 = (z as i64 - min_z as i64) as usize * ppc as usize;
                    for pz in 0..ppc as usize {
                        for px in 0..ppc as usize {
                            let i = (pz0 + pz) * width + px0 + px;
                            put(i, samples[(pz * step / 4) * 4 + px * step / 4]);
                        }
                    }
                }
            }
            continue;
        }
        let cols = match layer_columns(db, options.dimension, layer, x, z) {
            Ok(Some(c)) => c,
            Ok(None) => {
                image.chunks_without_surface += counted as u64;
                continue;
            }
            Err(e) if e.is_corruption() => {
                if counted {
                    image.chunks_failed += 1;
                    if image.failed_chunks.len() < MAX_FAILED_LISTED {
                        image.failed_chunks.push((x, z, e.to_string()));
                    }
                }
                continue;
            }
            Err(e) => return Err(e),
        };
        image.chunks_drawn += counted as u64;
        let tint = layer == MapLayer::Slime && slime[n];
        if let Some(i) = pixel {
            if let Some(col) = cols[8 * 16 + 8].or_else(|| cols.iter().flatten().next().copied()) {
                put_pixel(
                    &mut image.rgba,
                    &mut heights,
                    i,
                    col.height,
                    col.colour,
                    tint,
                );
                tally(layer, &col, &mut biome_counts, &mut range);
            }
            continue;
        }
        let px0 = (x as i64 - min_x as i64) as usize * ppc as usize;
        let pz0 = (z as i64 - min_z as i64) as usize * ppc as usize;
        for pz in 0..ppc as usize {
            for px in 0..ppc as usize {
                if let Some(col) = cols[pz * step * 16 + px * step] {
                    let i = (pz0 + pz) * width + px0 + px;
                    put_pixel(
                        &mut image.rgba,
                        &mut heights,
                        i,
                        col.height,
                        col.colour,
                        tint,
                    );
                    if counted {
                        tally(layer, &col, &mut biome_counts, &mut range);
                    }
                }
            }
        }
    }
    image.height_range = range;
    image.biomes = biome_counts.into_iter().collect();
    image
        .biomes
        .sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    // Shade against the northern neighbour (the pixel row above): not the flat layers, and not
    // caves (shaded by depth instead).
    if matches!(
        layer,
        MapLayer::Relief | MapLayer::Surface | MapLayer::Slime
    ) {
        for i in width..width * height {
            let (h, hn) = (heights[i], heights[i - width]);
            if h == NO_HEIGHT || hn == NO_HEIGHT {
                continue;
            }
            let delta = (h.saturating_sub(hn)).saturating_mul(12).clamp(-48, 48);
            let px = &mut image.rgba[i * 4..i * 4 + 3];
            let c = shade([px[0], px[1], px[2]], delta);
            px.copy_from_slice(&c);
        }
    }
    if let Some(z0) = context.map(|c| c + 1) {
        // The context row's pixels only shaded the region's first row.
        let rows = ppc as usize;
        image.rgba.drain(..rows * width * 4);
        image.height -= rows as u32;
        image.min_chunk.1 = z0;
    }
    Ok(image)
}

/// The top non-air block of each column of a chunk (`z*16 + x`): absolute y and block name,
/// from its SubChunkPrefix records read from the top down. Subchunks that do not decode are
/// skipped.
pub fn surface_blocks(
    db: &Db,
    dimension: i32,
    x: i32,
    z: i32,
) -> Result<Vec<Option<(i32, String)>>> {
    top_blocks(db, dimension, x, z, None)
}

/// Like [`surface_blocks`], but only blocks at or below `below` when given (a cave slice).
pub fn top_blocks(
    db: &Db,
    dimension: i32,
    x: i32,
    z: i32,
    below: Option<i32>,
) -> Result<Vec<Option<(i32, String)>>> {
    let tops = chunk_tops(db, dimension, x, z, below)?;
    Ok(tops
        .cols
        .iter()
        .map(|c| c.map(|(y, n)| (y, tops.names[n as usize].clone())))
        .collect())
}

/// The top non-air block of each column of a chunk (`z*16 + x`): its absolute y and an index
/// into `names` (one name per palette entry that tops a column, not one string per column).
struct ChunkTops {
    cols: [Option<(i32, u16)>; 256],
    names: Vec<String>,
}

impl ChunkTops {
    /// Each name's colour, computed once per name.
    fn colours(&self) -> Vec<[u8; 3]> {
        self.names.iter().map(|n| block_colour(n)).collect()
    }
}

/// [`top_blocks`] without a string per column: the chunk's SubChunkPrefix records read from
/// the top down, subchunks that do not decode skipped, each palette entry's air test made
/// once per subchunk.
fn chunk_tops(db: &Db, dimension: i32, x: i32, z: i32, below: Option<i32>) -> Result<ChunkTops> {
    let mut prefix = chunk_prefix(x, z, dimension);
    prefix.push(TAG_SUBCHUNK);
    let mut subchunks = Vec::new();
    let mut it = db.iter(&ReadOptions::default());
    it.seek(&prefix);
    while it.valid() && it.key().starts_with(&prefix) {
        if it.key().len() == prefix.len() + 1 {
            let sy = it.key()[prefix.len()] as i8;
            if below.is_none_or(|b| (sy as i32) * 16 <= b) {
                subchunks.push((sy, it.value().to_vec()));
            }
        }
        it.next();
    }
    it.status()?;
    subchunks.sort_by_key(|(y, _)| std::cmp::Reverse(*y));
    let mut tops = ChunkTops {
        cols: [None; 256],
        names: Vec::new(),
    };
    let mut left = 256;
    for (sy, value) in subchunks {
        let Ok(sub) = decode_subchunk(&value) else {
            continue;
        };
        let Some(mut layer) = sub.layers.into_iter().next() else {
            continue;
        };
        let air: Vec<bool> = layer.palette.iter().map(|b| b.is_air()).collect();
        // Each palette entry's index in `names`, once it tops a column.
        let mut named: Vec<Option<u16>> = vec![None; layer.palette.len()];
        // The highest y inside this subchunk that may be looked at.
        let top = below.map_or(15, |b| (b - sy as i32 * 16).clamp(0, 15)) as usize;
        for (col, slot) in tops.cols.iter_mut().enumerate() {
            if slot.is_some() {
                continue;
            }
            let (bx, bz) = (col % 16, col / 16);
            let column = &layer.indices[bx * 256 + bz * 16..][..16];
            let Some(y) = (0..=top).rev().find(|&y| !air[column[y] as usize]) else {
                continue;
            };
            let entry = column[y] as usize;
            let name = *named[entry].get_or_insert_with(|| {
                tops.names
                    .push(std::mem::take(&mut layer.palette[entry].name));
                (tops.names.len() - 1) as u16
            });
            *slot = Some((sy as i32 * 16 + y as i32, name));
            left -= 1;
        }
        if left == 0 {
            break;
        }
    }
    Ok(tops)
}

/// A 16×16 RGBA tile of a chunk's top blocks, shaded by height within the chunk; `None` when
/// the chunk has no block data.
pub fn surface_tile(db: &Db, dimension: i32, x: i32, z: i32) -> Result<Option<Vec<u8>>> {
    let tops = chunk_tops(db, dimension, x, z, None)?;
    if tops.names.is_empty() {
        return Ok(None);
    }
    let colours = tops.colours();
    let mut rgba = vec![0u8; 1024];
    for (i, top) in tops.cols.iter().enumerate() {
        let Some((y, name)) = *top else { continue };
        let north = if i >= 16 { tops.cols[i - 16] } else { None };
        let delta = north.map_or(0, |(yn, _)| ((y - yn) * 12).clamp(-48, 48));
        let c = shade(colours[name as usize], delta);
        rgba[i * 4..i * 4 + 4].copy_from_slice(&[c[0], c[1], c[2], 255]);
    }
    Ok(Some(rgba))
}
