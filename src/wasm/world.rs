//! The Bedrock world methods of the wasm facade (`crate::bedrock` for js/'s `World`).
//!
//! Invariants: every method answers with one batched result (a whole table as JSON, a whole
//! image, a packed coordinate list), never one call per chunk or record; a world is opened
//! with the Bedrock profile, read-only unless the options say `readOnly: false` (then the
//! edits below work; on a read-only world they are `LEVEL_NOT_SUPPORTED` and write nothing);
//! nothing here parses formats itself — it only calls `crate::bedrock` (edit, nbt_edit,
//! export: the same code as the CLI) and converts results. `.mcworld` archives are unpacked into a named
//! in-memory store (the same stores `Database.open` uses for `mem`), bounded by
//! `ImportLimits`' defaults; `dropMemStore` frees one.

use std::fmt::Write as _;
use std::sync::Arc;

use js_sys::{Object, Uint8Array};
use wasm_bindgen::prelude::*;

use super::{js_err, parse_options, set, storage_for, Database, MEM_STORES};
use crate::bedrock::colours::{biome_colour, biome_name};
use crate::bedrock::edit::{self, EditReport, Selection};
use crate::bedrock::entities;
use crate::bedrock::export;
use crate::bedrock::keys::{self, chunk_prefix, classify, tag_name, KeyKind};
use crate::bedrock::map::{render_map, surface_tile, MapLayer, MapOptions};
use crate::bedrock::mcworld::{self, ImportLimits};
use crate::bedrock::nbt::{self, Tag};
use crate::bedrock::nbt_edit;
use crate::bedrock::relief_index::{chunk_split_keys, relief_index, ReliefIndex, ReliefPass};
use crate::bedrock::{db_dir_of, LevelDat};
use crate::error::Error;
use crate::storage::js_host::StorageHost;
use crate::storage::{self, MemStorage};
use crate::{Db, ReadOptions};

/// Largest map image `renderMap` draws (width × height): 16 Mi pixels, 64 MiB of RGBA.
const MAX_MAP_PIXELS: u64 = 16 << 20;

/// Longest NBT array rendered in full in JSON; longer ones are summarized.
const JSON_MAX_ARRAY: usize = 256;

fn json_string(s: &str) -> String {
    nbt::to_json(&Tag::String(s.to_string()), 0)
}

fn opt_json<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "null".into(), |v| v.to_string())
}

fn level_dat_json(dat: &LevelDat) -> String {
    format!(
        "{{\"storageVersion\":{},\"name\":{},\"gameVersion\":{},\"seed\":{},\"spawn\":{},\"gameMode\":{},\"root\":{}}}",
        dat.storage_version,
        opt_json(dat.name.as_deref().map(json_string)),
        opt_json(dat.game_version.as_deref().map(json_string)),
        // i64 seeds pass 2^53: a string keeps them exact.
        opt_json(dat.seed.map(|s| json_string(&s.to_string()))),
        opt_json(dat.spawn.map(|(x, y, z)| format!("[{x},{y},{z}]"))),
        opt_json(dat.game_mode),
        nbt::to_json(&dat.root, JSON_MAX_ARRAY),
    )
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn report_json(r: &EditReport) -> String {
    format!(
        "{{\"chunks\":{},\"stubs\":{},\"records\":{},\"bytes\":{},\"entities\":{},\"recordsRewritten\":{},\"chunksLeft\":{},\"stubsLeft\":{}}}",
        r.chunks, r.stubs, r.records, r.bytes, r.entities, r.rewritten, r.chunks_left, r.stubs_left
    )
}

fn check_dimension(dimension: i32) -> Result<(), JsValue> {
    if (0..=2).contains(&dimension) {
        Ok(())
    } else {
        Err(js_err(Error::invalid_argument(format!(
            "dimension must be 0, 1 or 2, not {dimension}"
        ))))
    }
}

impl Database {
    /// The last chunk list's relief samples (or those handed back), while nothing was written
    /// since: any write makes them stale.
    fn fresh_relief(&self) -> Result<Option<Arc<ReliefIndex>>, JsValue> {
        let sequence = self.db()?.last_sequence();
        Ok(self
            .relief
            .borrow()
            .clone()
            .filter(|r| r.sequence == sequence))
    }
}

#[wasm_bindgen]
impl Database {
    /// Opens the Bedrock world in folder `root` of `host` (or of the named in-memory store):
    /// a world folder (`level.dat` + `db/`) or a bare db folder, read-only, Bedrock profile.
    /// A folder holding neither `level.dat`, `db/CURRENT` nor `CURRENT` is `LEVEL_NOT_FOUND`.
    #[wasm_bindgen(js_name = openWorld)]
    pub fn open_world(
        host: Option<StorageHost>,
        root: &str,
        options: &JsValue,
    ) -> Result<Database, JsValue> {
        // Read-only unless `readOnly: false` is given explicitly.
        let writable = js_sys::Reflect::get(options, &JsValue::from_str("readOnly"))
            .ok()
            .and_then(|v| v.as_bool())
            == Some(false);
        let mut opts = parse_options(options)?;
        let bedrock = crate::Options::bedrock();
        opts.compression = bedrock.compression;
        opts.profile = bedrock.profile;
        opts.read_only = !writable;
        opts.create_if_missing = false;
        let storage = storage_for(host, root);
        let has = |p: &str| storage.exists(&storage::join(root, p));
        if !has("level.dat") && !has("db/CURRENT") && !has("CURRENT") {
            return Err(js_err(Error::not_found(format!(
                "not a Bedrock world: {root:?} holds no level.dat and no db/ folder"
            ))));
        }
        let db_dir = db_dir_of(&*storage, root);
        let db = Db::open(storage.clone(), &db_dir, opts).map_err(js_err)?;
        Ok(Database::new(db, storage, root))
    }

    /// The world summary as JSON: `levelDat` (fields and the whole NBT tree; `null` when the
    /// world has none), `levelDatError` (when it does not parse), `kinds` (one row per key
    /// kind: `kind`, `count`, `keyBytes`, `valueBytes`), `total`, and `chunks` (chunks with a
    /// Version record in the Overworld, Nether, End). One pass over the database.
    #[wasm_bindgen(js_name = worldSummary)]
    pub fn world_summary(&self) -> Result<String, JsValue> {
        let db = self.db()?;
        let path = storage::join(&self.root, "level.dat");
        let (dat, dat_err) = if self.storage.exists(&path) {
            match storage::read_all(&*self.storage, &path).and_then(|d| LevelDat::parse(&d)) {
                Ok(d) => (level_dat_json(&d), "null".to_string()),
                Err(e) => ("null".to_string(), json_string(&e.to_string())),
            }
        } else {
            ("null".to_string(), "null".to_string())
        };
        let s = keys::summarize(db).map_err(js_err)?;
        let stats = |k: &keys::KindStats| {
            format!(
                "\"count\":{},\"keyBytes\":{},\"valueBytes\":{}",
                k.count, k.key_bytes, k.value_bytes
            )
        };
        let kinds: Vec<String> = s
            .by_kind
            .iter()
            .map(|(kind, k)| format!("{{\"kind\":{},{}}}", json_string(kind), stats(k)))
            .collect();
        let chunks: Vec<String> = (0..=2)
            .map(|d| s.chunks.get(&d).copied().unwrap_or(0).to_string())
            .collect();
        Ok(format!(
            "{{\"levelDat\":{dat},\"levelDatError\":{dat_err},\"kinds\":[{}],\"total\":{{{}}},\"chunks\":[{}]}}",
            kinds.join(","),
            stats(&s.total),
            chunks.join(",")
        ))
    }

    /// The chunks of `dimension` having a Version record, as `[x0, z0, x1, z1, …]` in
    /// ascending (x, z) order. With `relief_samples`, the same pass samples the chunks'
    /// relief (`relief_index`), kept for the maps drawn next; without, nothing is kept.
    #[wasm_bindgen(js_name = chunkList)]
    pub fn chunk_list(
        &self,
        dimension: i32,
        relief_samples: Option<bool>,
    ) -> Result<Vec<i32>, JsValue> {
        check_dimension(dimension)?;
        let db = self.db()?;
        if relief_samples != Some(true) {
            let list = keys::chunk_positions(db, dimension).map_err(js_err)?;
            return Ok(list.into_iter().flat_map(|(x, z)| [x, z]).collect());
        }
        let index = relief_index(db, dimension).map_err(js_err)?;
        let flat = index.chunks.iter().flat_map(|&(x, z)| [x, z]).collect();
        *self.relief.borrow_mut() = Some(Arc::new(index));
        Ok(flat)
    }

    /// Keys that cut the database into about `parts` ranges of equal table bytes, 8 bytes
    /// each, laid end to end, ascending (`relief_index::chunk_split_keys`): passes over the
    /// ranges (`chunkListPart`) on several engines share the chunk index's pass. Empty when
    /// the tables hold fewer than `min_bytes` (one pass is as quick).
    #[wasm_bindgen(js_name = chunkSplitKeys)]
    pub fn chunk_split_keys(&self, parts: u32, min_bytes: f64) -> Result<Vec<u8>, JsValue> {
        let db = self.db()?;
        // NaN and anything below 1 ask for no minimum; infinity for more than any world holds
        // (the cast saturates).
        let min = if min_bytes.is_nan() || min_bytes <= 0.0 {
            0
        } else {
            min_bytes as u64
        };
        Ok(chunk_split_keys(db, parts.min(1024) as usize, min).concat())
    }

    /// `chunkList(dimension, true)` over the user keys in `[start, end)` only (absent: from
    /// the first, to the last), its index packed (`ReliefIndex::pack`: the chunks whose keys
    /// lie there, with their samples); nothing is kept. Another engine on the same world's
    /// files may take the other ranges; `joinChunkParts` puts the parts together.
    #[wasm_bindgen(js_name = chunkListPart)]
    pub fn chunk_list_part(
        &self,
        dimension: i32,
        start: Option<Vec<u8>>,
        end: Option<Vec<u8>>,
    ) -> Result<Vec<u8>, JsValue> {
        check_dimension(dimension)?;
        let db = self.db()?;
        let mut pass = ReliefPass::with_range(db, dimension, start.as_deref(), end);
        while !pass.step(usize::MAX).map_err(js_err)? {}
        Ok(pass.finish().pack())
    }

    /// Joins the packed parts of `chunkListPart` (of this world's contents as they are now:
    /// the caller's word, as for `setReliefSamples`), laid end to end, into the chunk list
    /// `chunkList(dimension, true)` gives, and keeps their samples as it does. Parts of
    /// another dimension, none, or bytes that are not packed parts are an error.
    #[wasm_bindgen(js_name = joinChunkParts)]
    pub fn join_chunk_parts(&self, dimension: i32, parts: &[u8]) -> Result<Vec<i32>, JsValue> {
        check_dimension(dimension)?;
        let db = self.db()?;
        let index =
            ReliefIndex::unpack_parts(parts, dimension, db.last_sequence()).map_err(js_err)?;
        let flat = index.chunks.iter().flat_map(|&(x, z)| [x, z]).collect();
        *self.relief.borrow_mut() = Some(Arc::new(index));
        Ok(flat)
    }

    /// `chunkList(dimension, true)` in steps (`ChunkListCursor::step`), so that the host can
    /// lend the pass's runs of blocks to decode workers between steps and hand their blocks
    /// back (`lendRuns` / `deliverRun`); `chunkListFinish` gives the list and keeps the
    /// samples, as `chunkList` does. The pass reads the database as it was at this call.
    #[wasm_bindgen(js_name = chunkListCursor)]
    pub fn chunk_list_cursor(&self, dimension: i32) -> Result<ChunkListCursor, JsValue> {
        check_dimension(dimension)?;
        Ok(ChunkListCursor {
            pass: Some(ReliefPass::new(self.db()?, dimension)),
            done: false,
        })
    }

    /// The chunk list of a cursor whose last `step` answered true, as `chunkList` gives it;
    /// its samples are kept as `chunkList` keeps them. The cursor is spent.
    #[wasm_bindgen(js_name = chunkListFinish)]
    pub fn chunk_list_finish(&self, cursor: &mut ChunkListCursor) -> Result<Vec<i32>, JsValue> {
        self.db()?;
        let pass = cursor
            .pass
            .take()
            .ok_or_else(|| js_err(Error::invalid_argument("the chunk list cursor is spent")))?;
        if !cursor.done {
            return Err(js_err(Error::invalid_argument(
                "the chunk list cursor has not finished its steps",
            )));
        }
        let index = pass.finish();
        let flat = index.chunks.iter().flat_map(|&(x, z)| [x, z]).collect();
        *self.relief.borrow_mut() = Some(Arc::new(index));
        Ok(flat)
    }

    /// The relief samples the last `chunkList` of `dimension` with samples took (`ReliefIndex::pack`), while
    /// nothing was written since; `undefined` otherwise. The viewer keeps them with the list.
    #[wasm_bindgen(js_name = reliefSamples)]
    pub fn relief_samples(&self, dimension: i32) -> Result<Option<Vec<u8>>, JsValue> {
        check_dimension(dimension)?;
        Ok(self
            .fresh_relief()?
            .filter(|r| r.dimension == dimension)
            .map(|r| r.pack()))
    }

    /// Hands back samples `reliefSamples` gave for this world's contents as they are now (the
    /// caller's word: the viewer keeps them under the world's content identity), for the maps
    /// drawn next. Bytes that are not packed samples are an error.
    #[wasm_bindgen(js_name = setReliefSamples)]
    pub fn set_relief_samples(&self, packed: &[u8]) -> Result<(), JsValue> {
        let db = self.db()?;
        let index = ReliefIndex::unpack(packed, db.last_sequence()).map_err(js_err)?;
        *self.relief.borrow_mut() = Some(Arc::new(index));
        Ok(())
    }

    /// Bytes that identify the world's database contents (`Db::content_identity`): the page
    /// keeps chunk indexes under their SHA-256, so a world opened again skips the pass.
    #[wasm_bindgen(js_name = contentIdentity)]
    pub fn content_identity(&self) -> Result<Vec<u8>, JsValue> {
        self.db()?.content_identity().map_err(js_err)
    }

    /// A top-down map of `dimension` at `pixels_per_chunk` (1, 2, 4, 8 or 16) as an object:
    /// `width`, `height`, `rgba` (Uint8Array), `minChunkX`, `minChunkZ`, `pixelsPerChunk`,
    /// `chunksIndexed`, `chunksDrawn`, `chunksFailed`, `chunksWithoutSurface`, `layer`,
    /// `slimeChunks`, `heightMin`/`heightMax` (height layer), `biomes` (biome layer: `[id,
    /// name, columns, '#rrggbb']` rows, most columns first). `layer` is `relief` (default), `surface`,
    /// `height`, `biome`, `slime` or `cave` (with `y`). A dimension without chunks gives a 0×0
    /// image.
    #[wasm_bindgen(js_name = renderMap)]
    // Positional arguments are the binding's shape (world.ts passes them in this order).
    #[allow(clippy::too_many_arguments)]
    pub fn render_map(
        &self,
        dimension: i32,
        pixels_per_chunk: u32,
        layer: Option<String>,
        y: Option<i32>,
        chunks_per_pixel: Option<u32>,
        region: Option<Vec<i32>>,
        chunks: Option<Vec<i32>>,
    ) -> Result<JsValue, JsValue> {
        check_dimension(dimension)?;
        let layer = MapLayer::parse(layer.as_deref().unwrap_or("relief"), y).map_err(js_err)?;
        let cpp = chunks_per_pixel.unwrap_or(1);
        let region = match region.as_deref() {
            None => None,
            Some(&[x0, z0, x1, z1]) => Some((x0, z0, x1, z1)),
            Some(_) => {
                return Err(js_err(Error::invalid_argument(
                    "region must be [x0, z0, x1, z1]",
                )))
            }
        };
        let chunks = match chunks {
            None => None,
            Some(flat) if flat.len() % 2 == 0 => Some(
                flat.chunks_exact(2)
                    .map(|c| (c[0], c[1]))
                    .collect::<Vec<_>>(),
            ),
            Some(_) => {
                return Err(js_err(Error::invalid_argument(
                    "chunks must be [x0, z0, x1, z1, ...] pairs",
                )))
            }
        };
        let db = self.db()?;
        let obj: JsValue = Object::new().into();
        let num = |k: &str, v: f64| set(&obj, k, JsValue::from_f64(v));
        // The chunk index is read once here and handed to render_map (which would read it
        // again). A whole map of a dimension without chunks is 0×0 (a region is its own size).
        let chunks = match chunks {
            Some(c) => c,
            None => keys::chunk_positions(db, dimension).map_err(js_err)?,
        };
        if region.is_none() && chunks.is_empty() {
            for k in ["width", "height", "minChunkX", "minChunkZ"] {
                num(k, 0.0);
            }
            num("pixelsPerChunk", pixels_per_chunk as f64);
            for k in [
                "chunksIndexed",
                "chunksDrawn",
                "chunksFailed",
                "chunksWithoutSurface",
                "slimeChunks",
            ] {
                num(k, 0.0);
            }
            set(&obj, "layer", JsValue::from_str(layer.name()));
            set(&obj, "biomes", js_sys::Array::new().into());
            set(&obj, "failedChunks", js_sys::Array::new().into());
            set(&obj, "rgba", Uint8Array::new_with_length(0).into());
            return Ok(obj);
        }
        let image = render_map(
            db,
            &MapOptions {
                dimension,
                layer,
                pixels_per_chunk,
                chunks_per_pixel: cpp,
                max_pixels: MAX_MAP_PIXELS,
                region,
                chunks: Some(chunks),
                relief: self.fresh_relief()?,
            },
        )
        .map_err(js_err)?;
        num("width", image.width as f64);
        num("height", image.height as f64);
        num("minChunkX", image.min_chunk.0 as f64);
        num("minChunkZ", image.min_chunk.1 as f64);
        // Far out, a pixel covers several chunks: pixels per chunk is then a fraction.
        num(
            "pixelsPerChunk",
            image.pixels_per_chunk as f64 / image.chunks_per_pixel as f64,
        );
        num("chunksPerPixel", image.chunks_per_pixel as f64);
        num("chunksSampledOut", image.chunks_sampled_out as f64);
        num("chunksIndexed", image.chunks_indexed as f64);
        num("chunksDrawn", image.chunks_drawn as f64);
        num("chunksFailed", image.chunks_failed as f64);
        num("chunksWithoutSurface", image.chunks_without_surface as f64);
        let failed = js_sys::Array::new();
        for (x, z, why) in &image.failed_chunks {
            let row = js_sys::Array::new();
            row.push(&JsValue::from_f64(*x as f64));
            row.push(&JsValue::from_f64(*z as f64));
            row.push(&JsValue::from_str(why));
            failed.push(&row);
        }
        set(&obj, "failedChunks", failed.into());
        num("slimeChunks", image.slime_chunks as f64);
        set(&obj, "layer", JsValue::from_str(image.layer.name()));
        if let Some((lo, hi)) = image.height_range {
            num("heightMin", lo as f64);
            num("heightMax", hi as f64);
        }
        let biomes = js_sys::Array::new();
        for (id, columns) in &image.biomes {
            let row = js_sys::Array::new();
            row.push(&JsValue::from_f64(*id as f64));
            row.push(&biome_name(*id).map_or(JsValue::NULL, JsValue::from_str));
            row.push(&JsValue::from_f64(*columns as f64));
            let [r, g, b] = biome_colour(*id);
            row.push(&JsValue::from_str(&format!("#{r:02x}{g:02x}{b:02x}")));
            biomes.push(&row);
        }
        set(&obj, "biomes", biomes.into());
        set(&obj, "rgba", Uint8Array::from(&image.rgba[..]).into());
        Ok(obj)
    }

    /// Real block colours of many chunks (for zoomed-in maps): `coords` is `[x0, z0, …]`; the
    /// result packs per chunk `[present u8]` then, when present, a 16×16 RGBA tile (1024
    /// bytes, `z*16 + x`). Chunks without block data are absent.
    #[wasm_bindgen(js_name = surfaceTiles)]
    pub fn surface_tiles(&self, dimension: i32, coords: &[i32]) -> Result<Vec<u8>, JsValue> {
        check_dimension(dimension)?;
        let db = self.db()?;
        let mut out = Vec::new();
        for xz in coords.chunks_exact(2) {
            match surface_tile(db, dimension, xz[0], xz[1]) {
                Ok(Some(tile)) => {
                    out.push(1);
                    out.extend_from_slice(&tile);
                }
                Ok(None) => out.push(0),
                Err(e) if e.is_corruption() => out.push(0),
                Err(e) => return Err(js_err(e)),
            }
        }
        Ok(out)
    }

    /// Every record of chunk (`x`, `z`) in `dimension` as JSON, in key order: per record
    /// `key` (hex), `tag`, `name` (the tag's name), `subchunk` (y or null) and `size`.
    #[wasm_bindgen(js_name = chunkRecords)]
    pub fn chunk_records(&self, dimension: i32, x: i32, z: i32) -> Result<String, JsValue> {
        check_dimension(dimension)?;
        let db = self.db()?;
        // Overworld keys carry no dimension: their 8-byte prefix also starts the keys of the
        // other dimensions at the same (x, z), which the classification filters out.
        let prefix = chunk_prefix(x, z, dimension);
        let mut it = db.iter(&ReadOptions {
            fill_cache: false,
            ..ReadOptions::default()
        });
        it.seek(&prefix);
        let mut rows = Vec::new();
        while it.valid() && it.key().starts_with(&prefix) {
            if let KeyKind::Chunk(c) = classify(it.key()) {
                if c.dimension == dimension {
                    rows.push(format!(
                        "{{\"key\":\"{}\",\"tag\":{},\"name\":{},\"subchunk\":{},\"size\":{}}}",
                        hex(it.key()),
                        c.tag,
                        json_string(tag_name(c.tag).unwrap_or("?")),
                        opt_json(c.subchunk),
                        it.value().len()
                    ));
                }
            }
            it.next();
        }
        it.status().map_err(js_err)?;
        Ok(format!("[{}]", rows.join(",")))
    }

    /// The value of `key` decoded as little-endian NBT, as JSON `[{"name": …, "value": …}]`
    /// (one element per concatenated root); `undefined` when the key is absent; an error
    /// (`LEVEL_CORRUPTION`) when the value is not NBT.
    #[wasm_bindgen(js_name = recordNbt)]
    pub fn record_nbt(&self, key: &[u8]) -> Result<Option<String>, JsValue> {
        let Some(v) = self
            .db()?
            .get(&ReadOptions::default(), key)
            .map_err(js_err)?
        else {
            return Ok(None);
        };
        let roots = nbt::read_all(&v).map_err(js_err)?;
        let parts: Vec<String> = roots
            .iter()
            .map(|(name, tag)| {
                format!(
                    "{{\"name\":{},\"value\":{}}}",
                    json_string(name),
                    nbt::to_json(tag, JSON_MAX_ARRAY)
                )
            })
            .collect();
        Ok(Some(format!("[{}]", parts.join(","))))
    }

    /// Deletes every record (and `digp`/`actorprefix` entity) of the chunks of `dimension`
    /// in `areas` (`x0,z0:x1,z1;…`) in one batch (`bedrock::edit`). JSON `{chunks, records,
    /// bytes, entities, chunksLeft}`. No chunk in the selection: `LEVEL_INVALID_ARGUMENT`.
    #[wasm_bindgen(js_name = deleteChunks)]
    pub fn delete_chunks(&self, dimension: i32, areas: &str) -> Result<String, JsValue> {
        let sel = Selection::parse(areas).map_err(js_err)?;
        edit::delete_chunks(self.db()?, dimension, &sel)
            .map(|r| report_json(&r))
            .map_err(js_err)
    }

    /// Keeps only the chunks of `dimension` in `keep`; keeping none is refused unless
    /// `allow_empty`. JSON as `deleteChunks`.
    #[wasm_bindgen(js_name = pruneChunks)]
    pub fn prune_chunks(
        &self,
        dimension: i32,
        keep: &str,
        allow_empty: bool,
    ) -> Result<String, JsValue> {
        let sel = Selection::parse(keep).map_err(js_err)?;
        edit::prune(self.db()?, dimension, &sel, allow_empty)
            .map(|r| report_json(&r))
            .map_err(js_err)
    }

    /// Applies staged chunk edits, one per line (`delete DIM AREAS` / `keep DIM AREAS`), as ONE
    /// atomic batch, or with `dry_run` only counts what they would delete. JSON as
    /// `deleteChunks`.
    #[wasm_bindgen(js_name = applyEdits)]
    pub fn apply_edits(&self, text: &str, dry_run: bool) -> Result<String, JsValue> {
        let edits = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(edit::ChunkEdit::parse)
            .collect::<crate::error::Result<Vec<_>>>()
            .map_err(js_err)?;
        edit::apply_edits(self.db()?, &edits, dry_run)
            .map(|r| report_json(&r))
            .map_err(js_err)
    }

    /// Entities and block entities of `dimension` as JSON `{unreadable, entities: [{kind
    /// ("actor" | "entity" | "block entity"), key (hex), root, identifier, x, y, z, cx, cz}]}`.
    pub fn entities(&self, dimension: i32) -> Result<String, JsValue> {
        check_dimension(dimension)?;
        let list = entities::entities(self.db()?, dimension).map_err(js_err)?;
        let mut out = format!("{{\"unreadable\":{},\"entities\":[", list.unreadable);
        for (i, e) in list.entities.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let key: String = e.key.iter().map(|b| format!("{b:02x}")).collect();
            out.push_str(&format!(
                "{{\"kind\":\"{}\",\"key\":\"{key}\",\"root\":{},\"identifier\":{},\"x\":{},\"y\":{},\"z\":{},\"cx\":{},\"cz\":{}}}",
                e.kind.name(),
                e.root,
                json_string(&e.identifier),
                e.pos[0],
                e.pos[1],
                e.pos[2],
                e.chunk.0,
                e.chunk.1
            ));
        }
        out.push_str("]}");
        Ok(out)
    }

    /// Deletes the entities (not block entities) of `dimension` in chunk areas `areas`, only
    /// those of `identifier` when given; `dry_run` only counts. JSON `{entities,
    /// recordsDeleted, recordsRewritten, bytes}`.
    #[wasm_bindgen(js_name = deleteEntities)]
    pub fn delete_entities(
        &self,
        dimension: i32,
        areas: &str,
        identifier: Option<String>,
        dry_run: bool,
    ) -> Result<String, JsValue> {
        check_dimension(dimension)?;
        let sel = Selection::parse(areas).map_err(js_err)?;
        entities::delete_entities(self.db()?, dimension, &sel, identifier.as_deref(), dry_run)
            .map(|r| entity_report_json(&r))
            .map_err(js_err)
    }

    /// Deletes one entity: compound `root` of record `key` (an actor's `actorprefix` key with
    /// root 0). JSON as `deleteEntities`.
    #[wasm_bindgen(js_name = deleteEntity)]
    pub fn delete_entity(&self, dimension: i32, key: &[u8], root: u32) -> Result<String, JsValue> {
        check_dimension(dimension)?;
        entities::delete_entity(self.db()?, dimension, key, root as usize)
            .map(|r| entity_report_json(&r))
            .map_err(js_err)
    }

    /// The value of `key` as SNBT text; `undefined` when absent; `LEVEL_CORRUPTION` when it
    /// is not NBT (or would not survive the round trip).
    #[wasm_bindgen(js_name = recordSnbt)]
    pub fn record_snbt(&self, key: &[u8]) -> Result<Option<String>, JsValue> {
        nbt_edit::record_snbt(self.db()?, key).map_err(js_err)
    }

    /// Stores SNBT `text` as the value of `key`. JSON `{changed, bytes}`.
    #[wasm_bindgen(js_name = setRecordSnbt)]
    pub fn set_record_snbt(&self, key: &[u8], text: &str) -> Result<String, JsValue> {
        let r = nbt_edit::set_record_snbt(self.db()?, key, text).map_err(js_err)?;
        Ok(format!(
            "{{\"changed\":{},\"bytes\":{}}}",
            r.changed, r.bytes
        ))
    }

    /// level.dat as SNBT text (`LEVEL_NOT_FOUND` when the world has none).
    #[wasm_bindgen(js_name = levelDatSnbt)]
    pub fn level_dat_snbt(&self) -> Result<String, JsValue> {
        self.db()?;
        nbt_edit::level_dat_snbt(&*self.storage, &self.root).map_err(js_err)
    }

    /// Replaces level.dat with SNBT `text` (its storage version kept). JSON `{changed, bytes}`.
    #[wasm_bindgen(js_name = setLevelDatSnbt)]
    pub fn set_level_dat_snbt(&self, text: &str) -> Result<String, JsValue> {
        if self.db()?.options().read_only {
            return Err(js_err(nbt_edit::read_only()));
        }
        let r = nbt_edit::set_level_dat_snbt(&*self.storage, &self.root, text).map_err(js_err)?;
        Ok(format!(
            "{{\"changed\":{},\"bytes\":{}}}",
            r.changed, r.bytes
        ))
    }

    /// The world as `.mcworld` bytes: its files copied into engine memory, the copy compacted,
    /// zipped (`bedrock::export`). Peak memory: about the world's size for the copy plus the
    /// zip's size, both in the wasm heap, plus the returned bytes on the JS side.
    #[wasm_bindgen(js_name = exportMcworld)]
    pub fn export_mcworld(&self) -> Result<Vec<u8>, JsValue> {
        self.db()?;
        let scratch: std::sync::Arc<dyn crate::storage::Storage> =
            std::sync::Arc::new(MemStorage::new());
        let mut out = std::io::Cursor::new(Vec::new());
        export::export(&*self.storage, &self.root, scratch, "export", &mut out).map_err(js_err)?;
        Ok(out.into_inner())
    }

    /// SNBT `text` as tree JSON for editors (`bedrock::snbt_tree`: every leaf with its exact
    /// literal). Text that does not parse is `LEVEL_INVALID_ARGUMENT` naming line and column.
    #[wasm_bindgen(js_name = snbtTree)]
    pub fn snbt_tree(text: &str) -> Result<String, JsValue> {
        crate::bedrock::snbt_tree::parse_tree_json(text).map_err(js_err)
    }

    /// A synthetic world (`bedrock::synth`: `chunksX` × `chunksZ` chunks, each 1..=1024, of
    /// terrain fixed by `seed`, an integer 0..=2^53) as `.mcworld` bytes, written and zipped in
    /// engine memory: the same keys and values as `strata gen-world` with those parameters.
    /// The viewer's demo world comes from here (scripts/demo-world.sh), so serving the pages
    /// needs no native build.
    #[wasm_bindgen(js_name = synthMcworld)]
    pub fn synth_mcworld(chunks_x: u32, chunks_z: u32, seed: f64) -> Result<Vec<u8>, JsValue> {
        if !(seed >= 0.0 && seed.fract() == 0.0 && seed <= (1u64 << 53) as f64) {
            return Err(super::invalid(
                "synthMcworld: the seed must be an integer from 0 to 2^53",
            ));
        }
        let params = crate::bedrock::synth::SynthParams {
            chunks_x,
            chunks_z,
            seed: seed as u64,
        };
        let mem: Arc<dyn crate::storage::Storage> = Arc::new(MemStorage::new());
        crate::bedrock::synth::generate(mem.clone(), "world", params).map_err(js_err)?;
        let mut out = std::io::Cursor::new(Vec::new());
        export::write_zip(&*mem, "world", &mut out).map_err(js_err)?;
        Ok(out.into_inner())
    }

    /// Unpacks a `.mcworld` (zip bytes) into the in-memory store `name` (replacing it), for
    /// `openWorld(undefined, name)`. Returns JSON `{rootInZip, files, bytes}`. Hostile archives
    /// (zip bombs, unsafe names, no world inside) are refused with `LEVEL_INVALID_ARGUMENT`,
    /// unreadable ones with `LEVEL_CORRUPTION`; nothing is kept on failure.
    #[wasm_bindgen(js_name = importMcworld)]
    pub fn import_mcworld(zip: &[u8], name: &str) -> Result<String, JsValue> {
        let mem = MemStorage::new();
        let report = mcworld::import(zip, &mem, name, ImportLimits::default()).map_err(js_err)?;
        MEM_STORES.with(|m| m.borrow_mut().insert(name.to_string(), mem));
        Ok(format!(
            "{{\"rootInZip\":{},\"files\":{},\"bytes\":{}}}",
            json_string(&report.root_in_zip),
            report.files,
            report.bytes
        ))
    }

    /// Frees the in-memory store `name` (its databases must be closed); true if it existed.
    #[wasm_bindgen(js_name = dropMemStore)]
    pub fn drop_mem_store(name: &str) -> bool {
        MEM_STORES.with(|m| m.borrow_mut().remove(name).is_some())
    }
}

fn entity_report_json(r: &entities::EntityReport) -> String {
    format!(
        "{{\"entities\":{},\"recordsDeleted\":{},\"recordsRewritten\":{},\"bytes\":{}}}",
        r.entities, r.records_deleted, r.records_rewritten, r.bytes
    )
}

/// A chunk index pass in steps (`Database.chunkListCursor`).
#[wasm_bindgen]
pub struct ChunkListCursor {
    pass: Option<ReliefPass>,
    /// The last step reached the end.
    done: bool,
}

#[wasm_bindgen]
impl ChunkListCursor {
    /// Reads on until about `max_bytes` of keys and values were passed; true once the whole
    /// database was (then `Database.chunkListFinish`).
    pub fn step(&mut self, max_bytes: u32) -> Result<bool, JsValue> {
        let pass = self
            .pass
            .as_mut()
            .ok_or_else(|| js_err(Error::invalid_argument("the chunk list cursor is spent")))?;
        self.done = pass.step(max_bytes as usize).map_err(js_err)?;
        Ok(self.done)
    }

    pub fn close(&mut self) {
        self.pass = None;
    }
}
