//! A minimal zip writer for `.mcworld` export: stored and deflated entries, zip64 when an
//! entry, an offset or the central directory passes 4 GiB. Written here rather than with the
//! `zip` crate's writer, which added ~90 KB of code to the wasm module (the reader stays).
//!
//! Invariants: an entry's sizes are known before its local header is written (stored data
//! comes with its size; deflated data is compressed first, with miniz_oxide's deflater that
//! the engine already links for tables); its CRC-32 is either known first (deflated data; a
//! stored entry begun with `begin_stored`, whose caller read the data once for it: then the
//! output is only appended to, e.g. a storage file) or computed while the data streams and
//! patched into the local header afterwards (`stored`, which needs `Seek`); the bytes are the
//! same either way; names are `/`-separated, flagged
//! UTF-8 when not ASCII; timestamps are the DOS epoch (1980-01-01), so an export of the same
//! files is byte-identical.

use std::io::{Seek, SeekFrom, Write};

use crate::error::{Error, Result};

/// How an entry's data is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Stored,
    /// Raw deflate, level 6.
    Deflated,
}

struct Entry {
    name: String,
    method: Method,
    crc: u32,
    size: u64,
    compressed: u64,
    offset: u64,
}

/// Writes entries one after another, then the central directory on `finish`.
pub struct ZipWriter<W: Write> {
    out: W,
    pos: u64,
    entries: Vec<Entry>,
    /// A stored entry begun by `begin_stored`: (entry, bytes written so far).
    open: Option<(Entry, u64)>,
    /// Sizes and offsets at or above this use zip64 fields (u32::MAX; lowered in tests).
    limit: u64,
}

fn err(e: std::io::Error) -> Error {
    Error::io(format!("mcworld: writing the zip: {e}"))
}

const DOS_DATE: u16 = (1 << 5) | 1; // 1980-01-01

impl<W: Write> ZipWriter<W> {
    pub fn new(out: W) -> Self {
        Self::with_limit(out, u32::MAX as u64)
    }

    #[doc(hidden)]
    pub fn with_limit(out: W, limit: u64) -> Self {
        ZipWriter {
            out,
            pos: 0,
            entries: Vec::new(),
            open: None,
            limit: limit.min(u32::MAX as u64),
        }
    }

    fn put(&mut self, b: &[u8]) -> Result<()> {
        self.out.write_all(b).map_err(err)?;
        self.pos += b.len() as u64;
        Ok(())
    }

    fn flags(name: &str) -> u16 {
        if name.is_ascii() {
            0
        } else {
            1 << 11
        }
    }

    fn method_id(m: Method) -> u16 {
        match m {
            Method::Stored => 0,
            Method::Deflated => 8,
        }
    }

    /// Writes a local header for an entry of known sizes (a CRC of 0 is patched by
    /// `end_entry`).
    fn begin_entry(
        &mut self,
        name: &str,
        method: Method,
        size: u64,
        compressed: u64,
        crc: u32,
    ) -> Result<u64> {
        let offset = self.pos;
        let big = size >= self.limit || compressed >= self.limit;
        let mut h = Vec::with_capacity(30 + name.len() + 20);
        h.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        h.extend_from_slice(&(if big { 45u16 } else { 20 }).to_le_bytes());
        h.extend_from_slice(&Self::flags(name).to_le_bytes());
        h.extend_from_slice(&Self::method_id(method).to_le_bytes());
        h.extend_from_slice(&0u16.to_le_bytes()); // time
        h.extend_from_slice(&DOS_DATE.to_le_bytes());
        h.extend_from_slice(&crc.to_le_bytes());
        let (c32, s32) = if big {
            (u32::MAX, u32::MAX)
        } else {
            (compressed as u32, size as u32)
        };
        h.extend_from_slice(&c32.to_le_bytes());
        h.extend_from_slice(&s32.to_le_bytes());
        h.extend_from_slice(&(name.len() as u16).to_le_bytes());
        h.extend_from_slice(&(if big { 20u16 } else { 0 }).to_le_bytes());
        h.extend_from_slice(name.as_bytes());
        if big {
            h.extend_from_slice(&1u16.to_le_bytes());
            h.extend_from_slice(&16u16.to_le_bytes());
            h.extend_from_slice(&size.to_le_bytes());
            h.extend_from_slice(&compressed.to_le_bytes());
        }
        self.put(&h)?;
        Ok(offset)
    }

    /// A stored entry of `size` bytes whose CRC-32 the caller computed: its data follows by
    /// `data` calls, then `end_stored`. Needs no `Seek`.
    pub fn begin_stored(&mut self, name: &str, size: u64, crc: u32) -> Result<()> {
        if self.open.is_some() {
            return Err(Error::invalid_argument("mcworld: an entry is still open"));
        }
        let offset = self.begin_entry(name, Method::Stored, size, size, crc)?;
        let e = Entry {
            name: name.to_string(),
            method: Method::Stored,
            crc,
            size,
            compressed: size,
            offset,
        };
        self.open = Some((e, 0));
        Ok(())
    }

    /// More data of the entry begun by `begin_stored`.
    pub fn data(&mut self, b: &[u8]) -> Result<()> {
        let Some((e, written)) = self.open.as_mut() else {
            return Err(Error::invalid_argument("mcworld: no entry is open"));
        };
        *written += b.len() as u64;
        if *written > e.size {
            return Err(Error::io(format!(
                "mcworld: {}: more than the {} bytes announced",
                e.name, e.size
            )));
        }
        self.put(b)
    }

    /// Ends the entry begun by `begin_stored` (all its bytes written).
    pub fn end_stored(&mut self) -> Result<()> {
        let Some((e, written)) = self.open.take() else {
            return Err(Error::invalid_argument("mcworld: no entry is open"));
        };
        if written != e.size {
            return Err(Error::io(format!(
                "mcworld: {}: {written} bytes written, {} announced",
                e.name, e.size
            )));
        }
        self.entries.push(e);
        Ok(())
    }

    /// A deflated entry holding `data`.
    pub fn deflated(&mut self, name: &str, data: &[u8]) -> Result<()> {
        let crc = crc32fast::hash(data);
        let d = miniz_oxide::deflate::compress_to_vec(data, 6);
        let (size, compressed) = (data.len() as u64, d.len() as u64);
        let offset = self.begin_entry(name, Method::Deflated, size, compressed, crc)?;
        self.put(&d)?;
        self.entries.push(Entry {
            name: name.to_string(),
            method: Method::Deflated,
            crc,
            size,
            compressed,
            offset,
        });
        Ok(())
    }

    /// The output.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }

    /// Bytes written so far.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Writes the central directory and returns the output.
    pub fn finish(mut self) -> Result<W> {
        if self.open.is_some() {
            return Err(Error::invalid_argument("mcworld: an entry is still open"));
        }
        let cd_start = self.pos;
        let entries = std::mem::take(&mut self.entries);
        for e in &entries {
            let mut extra = Vec::new();
            let size32 = if e.size >= self.limit {
                extra.extend_from_slice(&e.size.to_le_bytes());
                u32::MAX
            } else {
                e.size as u32
            };
            let comp32 = if e.compressed >= self.limit {
                extra.extend_from_slice(&e.compressed.to_le_bytes());
                u32::MAX
            } else {
                e.compressed as u32
            };
            let off32 = if e.offset >= self.limit {
                extra.extend_from_slice(&e.offset.to_le_bytes());
                u32::MAX
            } else {
                e.offset as u32
            };
            let zip64 = !extra.is_empty();
            let mut h = Vec::with_capacity(46 + e.name.len() + 28);
            h.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
            h.extend_from_slice(&(if zip64 { 45u16 } else { 20 }).to_le_bytes()); // made by
            h.extend_from_slice(&(if zip64 { 45u16 } else { 20 }).to_le_bytes()); // needed
            h.extend_from_slice(&Self::flags(&e.name).to_le_bytes());
            h.extend_from_slice(&Self::method_id(e.method).to_le_bytes());
            h.extend_from_slice(&0u16.to_le_bytes());
            h.extend_from_slice(&DOS_DATE.to_le_bytes());
            h.extend_from_slice(&e.crc.to_le_bytes());
            h.extend_from_slice(&comp32.to_le_bytes());
            h.extend_from_slice(&size32.to_le_bytes());
            h.extend_from_slice(&(e.name.len() as u16).to_le_bytes());
            let extra_len = if zip64 { 4 + extra.len() } else { 0 };
            h.extend_from_slice(&(extra_len as u16).to_le_bytes());
            h.extend_from_slice(&[0; 6]); // comment len, disk, internal attrs
            h.extend_from_slice(&0u32.to_le_bytes()); // external attrs
            h.extend_from_slice(&off32.to_le_bytes());
            h.extend_from_slice(e.name.as_bytes());
            if zip64 {
                h.extend_from_slice(&1u16.to_le_bytes());
                h.extend_from_slice(&(extra.len() as u16).to_le_bytes());
                h.extend_from_slice(&extra);
            }
            self.put(&h)?;
        }
        let cd_size = self.pos - cd_start;
        let n = entries.len() as u64;
        let zip64 = n >= 0xFFFF || cd_start >= self.limit || cd_size >= self.limit;
        if zip64 {
            let eocd64 = self.pos;
            let mut r = Vec::with_capacity(76);
            r.extend_from_slice(&0x0606_4b50u32.to_le_bytes());
            r.extend_from_slice(&44u64.to_le_bytes());
            r.extend_from_slice(&45u16.to_le_bytes());
            r.extend_from_slice(&45u16.to_le_bytes());
            r.extend_from_slice(&[0; 8]); // disk numbers
            r.extend_from_slice(&n.to_le_bytes());
            r.extend_from_slice(&n.to_le_bytes());
            r.extend_from_slice(&cd_size.to_le_bytes());
            r.extend_from_slice(&cd_start.to_le_bytes());
            r.extend_from_slice(&0x0706_4b50u32.to_le_bytes());
            r.extend_from_slice(&0u32.to_le_bytes());
            r.extend_from_slice(&eocd64.to_le_bytes());
            r.extend_from_slice(&1u32.to_le_bytes());
            self.put(&r)?;
        }
        let mut r = Vec::with_capacity(22);
        r.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
        r.extend_from_slice(&[0; 4]);
        let n16 = if zip64 { 0xFFFF } else { n as u16 };
        r.extend_from_slice(&n16.to_le_bytes());
        r.extend_from_slice(&n16.to_le_bytes());
        let (s32, o32) = if zip64 {
            (u32::MAX, u32::MAX)
        } else {
            (cd_size as u32, cd_start as u32)
        };
        r.extend_from_slice(&s32.to_le_bytes());
        r.extend_from_slice(&o32.to_le_bytes());
        r.extend_from_slice(&0u16.to_le_bytes());
        self.put(&r)?;
        self.out.flush().map_err(err)?;
        Ok(self.out)
    }
}

impl<W: Write + Seek> ZipWriter<W> {
    fn end_entry(&mut self, e: Entry) -> Result<()> {
        let end = self.pos;
        self.out.seek(SeekFrom::Start(e.offset + 14)).map_err(err)?;
        self.out.write_all(&e.crc.to_le_bytes()).map_err(err)?;
        self.out.seek(SeekFrom::Start(end)).map_err(err)?;
        self.entries.push(e);
        Ok(())
    }

    /// A stored entry of `size` bytes, which `fill` writes into the sink it is given.
    pub fn stored(
        &mut self,
        name: &str,
        size: u64,
        fill: impl FnOnce(&mut Sink<'_, W>) -> Result<()>,
    ) -> Result<()> {
        let offset = self.begin_entry(name, Method::Stored, size, size, 0)?;
        let mut sink = Sink {
            zip: self,
            crc: crc32fast::Hasher::new(),
            written: 0,
        };
        fill(&mut sink)?;
        let (written, crc) = (sink.written, sink.crc.finalize());
        if written != size {
            return Err(Error::io(format!(
                "mcworld: {name}: {written} bytes written, {size} announced"
            )));
        }
        self.end_entry(Entry {
            name: name.to_string(),
            method: Method::Stored,
            crc,
            size,
            compressed: size,
            offset,
        })
    }
}

/// Where a stored entry's bytes go (CRC-32 computed on the way).
pub struct Sink<'a, W: Write> {
    zip: &'a mut ZipWriter<W>,
    crc: crc32fast::Hasher,
    written: u64,
}

impl<W: Write> Sink<'_, W> {
    pub fn write(&mut self, data: &[u8]) -> Result<()> {
        self.crc.update(data);
        self.written += data.len() as u64;
        self.zip.put(data)
    }
}
