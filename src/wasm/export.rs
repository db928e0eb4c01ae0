//! The streamed `.mcworld` export of the wasm facade: `Database.exportBegin(host, dir)` starts
//! a `bedrock::export_stream::StreamedExport` of the open world through temporary folder `dir`
//! of storage `host` (js/ passes an OPFS pool, an IndexedDB store or `node:fs`; none: a named
//! in-memory store), and js/ drives it with `step(budget)` between its own awaits (OPFS opens
//! file handles there; a cancel is seen there).
//!
//! Invariants: one step does a bounded piece of work (`budget` bytes copied or zipped, or one
//! compaction), so wasm memory stays bounded whatever the world's size; the world is only read;
//! `cancel`, a failure, or freeing an unfinished export removes its temporary folder's files;
//! a finished export keeps only the zip (`zipPath`) until `finishTo` moves it or js/ removes it.

use js_sys::Object;
use wasm_bindgen::prelude::*;

use super::{js_err, set, storage_for, Database};
use crate::bedrock::export_stream::StreamedExport;
use crate::storage::js_host::StorageHost;

/// An export in progress (`Database.exportBegin`).
#[wasm_bindgen]
pub struct McworldExport {
    inner: StreamedExport,
}

#[wasm_bindgen]
impl McworldExport {
    /// Does about `budget` bytes of work (at least 1); true once the zip is complete.
    pub fn step(&mut self, budget: f64) -> Result<bool, JsValue> {
        let budget = if budget.is_finite() && budget >= 1.0 {
            budget as u64
        } else {
            1
        };
        self.inner.step(budget).map_err(js_err)
    }

    /// `{ phase: 'copy' | 'compact' | 'zip' | 'done', done, total, files, bytes }`: the
    /// current phase's bytes, and what the zip holds so far.
    pub fn progress(&self) -> JsValue {
        let p = self.inner.progress();
        let r = self.inner.report();
        let obj: JsValue = Object::new().into();
        set(&obj, "phase", JsValue::from_str(p.phase.name()));
        set(&obj, "done", JsValue::from_f64(p.done as f64));
        set(&obj, "total", JsValue::from_f64(p.total as f64));
        set(&obj, "files", JsValue::from_f64(r.files as f64));
        set(&obj, "bytes", JsValue::from_f64(r.bytes as f64));
        obj
    }

    /// The zip's path in the temporary folder's storage.
    #[wasm_bindgen(js_name = zipPath)]
    pub fn zip_path(&self) -> String {
        self.inner.zip_path()
    }

    /// Stops and removes the temporary folder's files (the zip too).
    pub fn cancel(&mut self) -> Result<(), JsValue> {
        self.inner.cancel().map_err(js_err)
    }

    /// Moves the complete zip to `to` (same storage) and empties the temporary folder.
    #[wasm_bindgen(js_name = finishTo)]
    pub fn finish_to(&mut self, to: &str) -> Result<(), JsValue> {
        self.inner.finish_to(to).map_err(js_err)
    }
}

#[wasm_bindgen]
impl Database {
    /// Starts a streamed `.mcworld` export of this world through temporary folder `dir` of
    /// `host` (none: the in-memory store named `dir`); a leftover of a crashed export there is
    /// removed first. Works on read-only worlds.
    #[wasm_bindgen(js_name = exportBegin)]
    pub fn export_begin(
        &self,
        host: Option<StorageHost>,
        dir: &str,
    ) -> Result<McworldExport, JsValue> {
        self.db()?;
        let scratch = storage_for(host, dir);
        let inner =
            StreamedExport::new(self.storage.clone(), &self.root, scratch, dir).map_err(js_err)?;
        Ok(McworldExport { inner })
    }

    /// Bytes of this engine's wasm memory (it only grows: its size is the peak so far).
    #[wasm_bindgen(js_name = memoryBytes)]
    pub fn memory_bytes() -> f64 {
        (core::arch::wasm32::memory_size(0) as f64) * 65536.0
    }
}
