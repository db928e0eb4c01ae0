//! Block codecs, chosen by the block trailer's type byte.
//!
//! | id | Google LevelDB | Mojang (Bedrock) |
//! |----|----------------|------------------|
//! | 0  | none           | none             |
//! | 1  | Snappy         | Snappy           |
//! | 2  | Zstd           | zlib (with header) |
//! | 4  | —              | raw deflate      |
//!
//! Id 2 is ambiguous between the dialects, so the reader decides by the payload: a Zstd frame
//! starts with `28 B5 2F FD`, anything else is treated as zlib. Every decoder is bounded by a
//! limit on the decompressed size, checked before allocation where the format states a size
//! (Snappy, Zstd window) and while inflating where it does not (deflate). The limit is the
//! larger of the caller's (`max_block_size`, 16 MiB by default) and the most the block's codec
//! can make of its stored bytes (`most_from`): LevelDB writes a value of any size as one block,
//! so a table holding a 256 MiB value has a 256 MiB block, and it reads back (it was refused as
//! corruption before). A hostile block therefore costs at most its codec's expansion of bytes
//! that really are in the file (Snappy 22x, deflate 1032x), and an output past the caller's
//! limit is reserved fallibly: out of memory is an `OutOfMemory` error, never an abort.
//!
//! Inflate (ids 2 and 4) uses the decoder measured fastest per target (bench/inflate, decode
//! only, one core), through one code path with the same limit, truncation, trailing-byte and
//! checksum behaviour everywhere: C libdeflate natively by default (1315 MB/s on the 1 GB
//! Bedrock world; zlib-rs 1015, zune-inflate 874, miniz_oxide 570) and always in wasm, there
//! compiled freestanding (clang -ffreestanding, its malloc routed to Rust's allocator; about
//! 800-850 MB/s against zune-inflate's ~600 on amulet_1_18_vanilla's raw-deflate blocks, about
//! even on zlib blocks where Adler-32 dominates, and a smaller module). A pure-Rust native build
//! (`--no-default-features`) uses zlib-rs. Native tests run every inflater of the build side by
//! side.

use crate::error::{Error, Result};

/// Codec of a stored block, as written in its trailer byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompressionType {
    /// id 0: stored as is.
    None,
    /// id 1: Snappy (raw format, no framing).
    Snappy,
    /// id 2 (Mojang): zlib stream with a 2-byte header and Adler-32.
    Zlib,
    /// id 2 (Google, since 2023): a Zstd frame.
    Zstd,
    /// id 4 (Mojang): raw deflate, what Bedrock writes.
    ZlibRaw,
}

impl CompressionType {
    /// The trailer byte written for this codec.
    pub fn id(self) -> u8 {
        match self {
            CompressionType::None => 0,
            CompressionType::Snappy => 1,
            CompressionType::Zlib | CompressionType::Zstd => 2,
            CompressionType::ZlibRaw => 4,
        }
    }

    /// The compression id of the blocks this codec's writer stores: its own id, or 0 for
    /// `None` and for `Zstd`, which this build does not write (`compress`) and so stores raw.
    /// (A writer stores a block raw too when compressing does not pay; that a raw block would
    /// not compress under this codec is not known without trying.)
    pub fn written_id(self) -> u8 {
        match self {
            CompressionType::Zstd => 0,
            other => other.id(),
        }
    }

    /// Whether a block stored with compression id `id` and payload `stored` is in the form this
    /// codec's writer stores blocks (`written_id`; id 2 is zlib, not Zstd, without the Zstd
    /// magic, as `decompress` decides).
    pub fn stored_as(self, id: u8, stored: &[u8]) -> bool {
        id == self.written_id() && (id != 2 || !stored.starts_with(&ZSTD_MAGIC))
    }

    /// Parses a codec name as the CLI and JS options spell it.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "none" => CompressionType::None,
            "snappy" => CompressionType::Snappy,
            "zlib" => CompressionType::Zlib,
            "zstd" => CompressionType::Zstd,
            "zlib-raw" | "deflate" | "raw-deflate" => CompressionType::ZlibRaw,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            CompressionType::None => "none",
            CompressionType::Snappy => "snappy",
            CompressionType::Zlib => "zlib",
            CompressionType::Zstd => "zstd",
            CompressionType::ZlibRaw => "zlib-raw",
        }
    }
}

const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// Decompresses a block payload whose trailer says `id`, refusing output over the larger of
/// `limit` and `most_from(id, input)` bytes. The error is a `Corruption` without file
/// context (the caller adds it), or `OutOfMemory` for an output past `limit` that cannot be
/// allocated.
pub fn decompress(id: u8, input: &[u8], limit: usize) -> Result<Vec<u8>> {
    decompress_within(id, input, limit.max(most_from(id, input)), limit)
}

/// Decompresses refusing any output over `limit` itself (no allowance for what the bytes can
/// make): a decode worker's bound, whose blocks are copied back through allocations that
/// cannot fail softly (`table::readahead::decode_run`).
pub fn decompress_strict(id: u8, input: &[u8], limit: usize) -> Result<Vec<u8>> {
    if id == 0 && input.len() > limit {
        return Err(too_big(input.len() as u64, limit));
    }
    decompress_within(id, input, limit, limit)
}

/// Output up to `floor` is allocated as usual; past it (up to `limit`), fallibly.
fn decompress_within(id: u8, input: &[u8], limit: usize, floor: usize) -> Result<Vec<u8>> {
    match id {
        0 => {
            room_for(input.len(), floor)?;
            Ok(crate::util::buffer_pool::copy_of(input))
        }
        1 => decompress_snappy(input, limit, floor),
        2 if input.starts_with(&ZSTD_MAGIC) => decompress_zstd(input, limit, floor),
        2 => inflate(input, limit, floor, true),
        4 => inflate(input, limit, floor, false),
        other => Err(Error::corruption(format!(
            "unknown block compression type {other}"
        ))),
    }
}

/// Compresses `input` with `kind`. Returns `None` when the codec cannot write (Zstd: this build
/// reads Zstd but writes Google's databases with Snappy).
pub fn compress(kind: CompressionType, input: &[u8], out: &mut Vec<u8>) -> bool {
    out.clear();
    match kind {
        CompressionType::None => {
            out.extend_from_slice(input);
            true
        }
        CompressionType::Snappy => {
            out.resize(snap::raw::max_compress_len(input.len()), 0);
            // One encoder per thread: a new one allocates and zeroes its 32 KiB hash table.
            thread_local! {
                static SNAPPY: std::cell::RefCell<snap::raw::Encoder> =
                    std::cell::RefCell::new(snap::raw::Encoder::new());
            }
            match SNAPPY.with(|e| e.borrow_mut().compress(input, out)) {
                Ok(n) => {
                    out.truncate(n);
                    true
                }
                Err(_) => false,
            }
        }
        CompressionType::Zlib => {
            *out = miniz_oxide::deflate::compress_to_vec_zlib(input, 6);
            true
        }
        CompressionType::ZlibRaw => {
            *out = miniz_oxide::deflate::compress_to_vec(input, 6);
            true
        }
        CompressionType::Zstd => false,
    }
}

/// The most a block payload of codec `id` can decompress to: Snappy emits at most 64 bytes per
/// 3-byte copy (21.3x), deflate 258 bytes per two bits (1032x), a Zstd RLE block 128 KiB from
/// 4 bytes (id 2 is Zstd when the payload starts with its magic, as `decompress` decides). An
/// uncompressed block is its bytes.
pub fn most_from(id: u8, payload: &[u8]) -> usize {
    let ratio = match id {
        0 => 1,
        1 => 22,
        2 if payload.starts_with(&ZSTD_MAGIC) => 32 * 1024,
        2 | 4 => 1032,
        _ => 0,
    };
    payload.len().saturating_mul(ratio)
}

/// Checks that `n` bytes of output can be allocated when `n` is past `floor` (the caller's
/// limit, under which blocks are taken as usual): a large block must not abort the process
/// (or trap a wasm instance) where memory is short.
pub(crate) fn room_for(n: usize, floor: usize) -> Result<()> {
    if n <= floor {
        return Ok(());
    }
    let mut probe: Vec<u8> = Vec::new();
    probe.try_reserve_exact(n).map_err(|_| no_room(n))
}

fn no_room(n: usize) -> Error {
    Error::out_of_memory(format!(
        "a block of {n} bytes could not be allocated to decompress"
    ))
}

/// `n` zeroed bytes to decode into: from the buffer pool up to `floor`, past it allocated
/// fallibly (`OutOfMemory`, not an abort).
fn zeroed(n: usize, floor: usize) -> Result<Vec<u8>> {
    if n <= floor {
        return Ok(crate::util::buffer_pool::take(n));
    }
    let mut out = Vec::new();
    out.try_reserve_exact(n).map_err(|_| no_room(n))?;
    out.resize(n, 0);
    Ok(out)
}

/// Grows `out` (zero-filled) to `n` bytes, fallibly past `floor`.
#[cfg(not(target_arch = "wasm32"))]
fn grow_zeroed(out: &mut Vec<u8>, n: usize, floor: usize) -> Result<()> {
    if out.is_empty() && n <= floor {
        *out = vec![0u8; n]; // a zeroed allocation, as before
        return Ok(());
    }
    if n > floor {
        out.try_reserve_exact(n.saturating_sub(out.len()))
            .map_err(|_| no_room(n))?;
    }
    out.resize(n, 0);
    Ok(())
}

/// The first output buffer for a deflate stream of `input` bytes (which does not say what it
/// inflates to): a guess of `ratio` times the input, but past `floor` (a large value's block)
/// only twice it, so a block that compressed poorly does not ask for eight times its size on a
/// host where that much cannot be had.
fn first_guess(input: usize, ratio: usize, limit: usize, floor: usize) -> usize {
    let guess = input.saturating_mul(ratio).max(4096).min(limit);
    if guess <= floor {
        return guess;
    }
    floor.max(input.saturating_mul(2)).min(limit)
}

/// The next output buffer after `room` was too small: doubled up to `floor`, then half again
/// (memory past the floor may be short, and every retry decodes again from the start).
fn next_room(room: usize, limit: usize, floor: usize) -> usize {
    let next = if room < floor {
        room.saturating_mul(2).min(floor.max(room + 1))
    } else {
        room.saturating_add(room / 2)
    };
    next.max(room + 1).min(limit)
}

fn too_big(claimed: u64, limit: usize) -> Error {
    Error::corruption(format!(
        "block decompresses to {claimed} bytes, over the {limit}-byte limit"
    ))
}

fn decompress_snappy(input: &[u8], limit: usize, floor: usize) -> Result<Vec<u8>> {
    let len = snap::raw::decompress_len(input)
        .map_err(|e| Error::corruption(format!("bad snappy block: {e}")))?;
    if len > limit {
        return Err(too_big(len as u64, limit));
    }
    // Snappy writes all `len` bytes or fails; on failure the buffer is dropped unread.
    let mut out = zeroed(len, floor)?;
    let n = snap::raw::Decoder::new()
        .decompress(input, &mut out)
        .map_err(|e| Error::corruption(format!("bad snappy block: {e}")))?;
    out.truncate(n);
    Ok(out)
}

/// Inflates a zlib (`zlib_header`) or raw deflate block: libdeflate in wasm and in a default
/// native build, zlib-rs in a pure-Rust native build (the module comment has the measurements).
fn inflate(input: &[u8], limit: usize, floor: usize, zlib_header: bool) -> Result<Vec<u8>> {
    #[cfg(any(target_arch = "wasm32", feature = "libdeflate"))]
    return inflate_libdeflate(input, limit, floor, zlib_header);
    #[cfg(not(any(target_arch = "wasm32", feature = "libdeflate")))]
    return inflate_zlib_rs(input, limit, floor, zlib_header);
}

fn past_limit(what: &str, limit: usize) -> Error {
    Error::corruption(format!("{what} block inflates past the {limit}-byte limit"))
}

/// C libdeflate: a whole-buffer decoder that needs the output's room up front. Each thread
/// keeps a decompressor and the size of the largest block so far; a block is decoded
/// straight into a pooled buffer of that size (grown on `InsufficientSpace`, by doubling up to
/// the floor and by half past it, never past `limit`, so a hostile block costs at most three
/// times the limit in work), then shortened to its length: no copy and no zeroed buffer for the data blocks
/// that make up a scan, and a retry only for a block larger than any before it. A
/// block much smaller than the room (an index block, a small value) is copied out at its exact
/// length instead, so that a block kept for long (a table's index) does not pin the room's
/// capacity. Bytes after the end of the stream are ignored, as zlib's `uncompress` does. The
/// same code natively and in wasm (where `thread_local!` is a plain static).
#[cfg(any(target_arch = "wasm32", feature = "libdeflate"))]
fn inflate_libdeflate(
    input: &[u8],
    limit: usize,
    floor: usize,
    zlib_header: bool,
) -> Result<Vec<u8>> {
    use crate::util::buffer_pool;
    use libdeflater::{DecompressionError, Decompressor};
    use std::cell::RefCell;
    thread_local! {
        static STATE: RefCell<Option<(Decompressor, usize)>> = const { RefCell::new(None) };
    }
    let what = if zlib_header { "zlib" } else { "raw deflate" };
    STATE.with(|cell| {
        let mut state = cell.borrow_mut();
        let (decoder, largest) = state.get_or_insert_with(|| (Decompressor::new(), 0));
        // The largest block so far (a scan's data blocks are all about one size), but not
        // more than 64 times the input: one large value must not make every later block
        // take (and, past the pool's bound, zero) a buffer of its size.
        let mut room = match *largest {
            0 => first_guess(input.len(), 8, limit, floor),
            most => most
                .min(input.len().saturating_mul(64))
                .max(4096)
                .min(limit),
        };
        loop {
            let mut out = zeroed(room, floor)?;
            let result = if zlib_header {
                decoder.zlib_decompress(input, &mut out)
            } else {
                decoder.deflate_decompress(input, &mut out)
            };
            match result {
                Ok(n) => {
                    // (A large value's size is not taken for the next blocks' room.)
                    *largest = (*largest).max(n.min(floor));
                    // Past the floor the copy would need memory that may not be there:
                    // such a block is shortened in place.
                    if n < room / 2 && n <= floor {
                        let exact = buffer_pool::copy_of(&out[..n]);
                        buffer_pool::give(out);
                        return Ok(exact);
                    }
                    out.truncate(n);
                    return Ok(out);
                }
                Err(DecompressionError::InsufficientSpace) if room >= limit => {
                    buffer_pool::give(out);
                    return Err(past_limit(what, limit));
                }
                Err(DecompressionError::InsufficientSpace) => {
                    buffer_pool::give(out);
                    room = next_room(room, limit, floor);
                }
                Err(DecompressionError::BadData) => {
                    buffer_pool::give(out);
                    return Err(Error::corruption(format!(
                        "bad {what} block: invalid or truncated stream"
                    )));
                }
            }
        }
    })
}

/// zlib-rs: the output buffer starts at a guess and doubles, never past `limit`; the decoder
/// state (a 32 KiB window) is kept per thread and reset per block. Bytes after the end of the
/// stream are ignored, as zlib's `uncompress` does.
#[cfg(not(target_arch = "wasm32"))]
#[cfg_attr(feature = "libdeflate", allow(dead_code))] // then only tested side by side
fn inflate_zlib_rs(input: &[u8], limit: usize, floor: usize, zlib_header: bool) -> Result<Vec<u8>> {
    use std::cell::RefCell;
    use zlib_rs::{Inflate, InflateFlush, Status};
    thread_local! {
        static STATE: RefCell<[Option<Inflate>; 2]> = const { RefCell::new([None, None]) };
    }
    let what = if zlib_header { "zlib" } else { "raw deflate" };
    STATE.with(|cell| {
        let mut states = cell.borrow_mut();
        let state =
            states[zlib_header as usize].get_or_insert_with(|| Inflate::new(zlib_header, 15));
        state.reset(zlib_header);
        let mut out = Vec::new();
        grow_zeroed(&mut out, first_guess(input.len(), 8, limit, floor), floor)?;
        let (mut consumed, mut produced) = (0usize, 0usize);
        loop {
            let (in_before, out_before) = (state.total_in(), state.total_out());
            let status = state
                .decompress(
                    &input[consumed..],
                    &mut out[produced..],
                    InflateFlush::Finish,
                )
                .map_err(|e| Error::corruption(format!("bad {what} block: {}", e.as_str())))?;
            let took = (state.total_in() - in_before) as usize;
            let gave = (state.total_out() - out_before) as usize;
            consumed += took;
            produced += gave;
            if status == Status::StreamEnd {
                out.truncate(produced);
                return Ok(out);
            }
            if produced == out.len() {
                if out.len() >= limit {
                    return Err(past_limit(what, limit));
                }
                let next = next_room(out.len(), limit, floor);
                grow_zeroed(&mut out, next, floor)?;
            } else if consumed == input.len() || (took == 0 && gave == 0) {
                return Err(Error::corruption(format!(
                    "bad {what} block: stream is truncated"
                )));
            }
        }
    })
}

/// The memory a Zstd frame asks the decoder for: its window size, or its content size for a
/// single-segment frame. `None` if the header is malformed.
fn zstd_window(input: &[u8]) -> Option<u64> {
    let descriptor = *input.get(4)?;
    let fcs_flag = descriptor >> 6;
    let single_segment = descriptor & 0x20 != 0;
    let dict_id_len = [0usize, 1, 2, 4][(descriptor & 3) as usize];
    let mut pos = 5;
    let mut window = None;
    if !single_segment {
        let wd = *input.get(pos)?;
        pos += 1;
        let exponent = (wd >> 3) as u32;
        let base = 1u64 << (10 + exponent);
        window = Some(base + (base / 8) * (wd & 7) as u64);
    }
    pos += dict_id_len;
    let fcs_len = match fcs_flag {
        0 if single_segment => 1,
        0 => 0,
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let fcs = input.get(pos..pos + fcs_len)?;
    let mut content = 0u64;
    for (i, &b) in fcs.iter().enumerate() {
        content |= (b as u64) << (8 * i);
    }
    if fcs_len == 2 {
        content += 256;
    }
    Some(match window {
        Some(w) if fcs_len > 0 => w.min(content.max(1)),
        Some(w) => w,
        None => content,
    })
}

fn decompress_zstd(input: &[u8], limit: usize, floor: usize) -> Result<Vec<u8>> {
    use std::io::Read;
    let window = zstd_window(input)
        .ok_or_else(|| Error::corruption("bad zstd block: truncated frame header"))?;
    if window > limit as u64 {
        return Err(too_big(window, limit));
    }
    // The decoder's ring buffer takes up to twice the window (a power of two), infallibly.
    room_for((window as usize).saturating_mul(2), floor)?;
    let mut source = input;
    let decoder = ruzstd::decoding::StreamingDecoder::new(&mut source)
        .map_err(|e| Error::corruption(format!("bad zstd block: {e}")))?;
    let bad = |e: std::io::Error| match e.kind() {
        // `read_to_end` reports an allocation it could not make as OutOfMemory.
        std::io::ErrorKind::OutOfMemory => no_room(floor),
        _ => Error::corruption(format!("bad zstd block: {e}")),
    };
    let mut decoder = decoder.take(limit as u64 + 1);
    // Up to the floor as any block: straight into the output.
    let mut out: Vec<u8> = Vec::new();
    (&mut decoder)
        .take(floor as u64)
        .read_to_end(&mut out)
        .map_err(bad)?;
    if out.len() as u64 == floor as u64 {
        // Past it a chunk at a time, the output grown by half (exactly, fallibly) when full:
        // `read_to_end` would grow it by doubling, with allocations that abort.
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            let n = match decoder.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(bad(e)),
            };
            if out.capacity() - out.len() < n {
                // By half, never past the limit (one byte over it is refused below).
                let grow = (out.len() / 2)
                    .max(n)
                    .min((limit + 1).saturating_sub(out.len()).max(n));
                out.try_reserve_exact(grow)
                    .map_err(|_| no_room(out.len() + grow))?;
            }
            out.extend_from_slice(&chunk[..n]);
        }
    }
    if out.len() > limit {
        return Err(Error::corruption(format!(
            "zstd block decompresses past the {limit}-byte limit"
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let mut v = Vec::new();
        for i in 0..5000u32 {
            v.extend_from_slice(format!("key{:06} value {} ", i, i % 7).as_bytes());
        }
        v
    }

    #[test]
    fn every_writable_codec_round_trips() {
        let input = sample();
        for kind in [
            CompressionType::None,
            CompressionType::Snappy,
            CompressionType::Zlib,
            CompressionType::ZlibRaw,
        ] {
            let mut out = Vec::new();
            assert!(compress(kind, &input, &mut out), "{kind:?}");
            if kind != CompressionType::None {
                assert!(out.len() < input.len() / 2, "{kind:?} compresses");
            }
            assert_eq!(decompress(kind.id(), &out, 1 << 20).unwrap(), input);
        }
    }

    #[test]
    fn id_2_decodes_zstd_frames_by_their_magic() {
        let input = sample();
        let frame = ruzstd::encoding::compress_to_vec(
            &input[..],
            ruzstd::encoding::CompressionLevel::Fastest,
        );
        assert_eq!(&frame[..4], &ZSTD_MAGIC);
        assert_eq!(decompress(2, &frame, 1 << 20).unwrap(), input);
        // Under a smaller limit too: the frame's bytes can make this much.
        assert_eq!(decompress(2, &frame, 1000).unwrap(), input);
        // A Zstd frame is not a zlib writer's form, nor (unwritten here) a Zstd writer's.
        let mut zlib = Vec::new();
        assert!(compress(CompressionType::Zlib, &input, &mut zlib));
        assert!(CompressionType::Zlib.stored_as(2, &zlib));
        assert!(!CompressionType::Zlib.stored_as(2, &frame));
        assert!(!CompressionType::Zstd.stored_as(2, &frame));
        assert!(!CompressionType::Zstd.stored_as(2, &zlib));
        assert!(CompressionType::Zstd.stored_as(0, &input));
        assert!(!CompressionType::Snappy.stored_as(0, &input));
    }

    /// Past the floor (a large value's block) the first deflate buffer is twice the stored
    /// bytes, not eight times, and grows by half: a 100 MiB block that compressed poorly does
    /// not ask for 800 MiB. Under the floor, the old guess and doubling stand. Every inflater
    /// then returns exact bytes from a block past the floor that fits its first guess, one
    /// that needs several retries, and one much smaller than its buffer (shortened in place).
    #[test]
    fn deflate_buffers_past_the_floor_grow_gently() {
        const MIB: usize = 1 << 20;
        assert_eq!(
            first_guess(100 * MIB, 8, 1032 * 100 * MIB, 16 * MIB),
            200 * MIB
        );
        assert_eq!(first_guess(MIB, 8, 1032 * MIB, 16 * MIB), 8 * MIB);
        assert_eq!(first_guess(3 * MIB, 8, 1032 * 3 * MIB, 16 * MIB), 16 * MIB);
        assert_eq!(first_guess(100, 8, 103_200, 16 * MIB), 4096);
        assert_eq!(next_room(4 * MIB, usize::MAX, 16 * MIB), 8 * MIB);
        assert_eq!(next_room(12 * MIB, usize::MAX, 16 * MIB), 16 * MIB);
        assert_eq!(next_room(16 * MIB, usize::MAX, 16 * MIB), 24 * MIB);
        assert_eq!(next_room(24 * MIB, 30 * MIB, 16 * MIB), 30 * MIB);
        let mut noise = vec![0u8; 3 * MIB];
        crate::util::random::Random::new(9).fill(&mut noise[..2 * MIB]);
        let zeros = vec![0u8; 6 * MIB];
        for input in [&noise, &zeros] {
            for header in [true, false] {
                let packed = if header {
                    miniz_oxide::deflate::compress_to_vec_zlib(input, 6)
                } else {
                    miniz_oxide::deflate::compress_to_vec(input, 6)
                };
                let limit = packed.len() * 1032;
                let floor = 64 * 1024;
                #[cfg(any(target_arch = "wasm32", feature = "libdeflate"))]
                assert_eq!(
                    inflate_libdeflate(&packed, limit, floor, header).unwrap(),
                    *input
                );
                #[cfg(not(target_arch = "wasm32"))]
                assert_eq!(
                    inflate_zlib_rs(&packed, limit, floor, header).unwrap(),
                    *input
                );
            }
        }
        // Zstd's output grows a chunk at a time past the floor.
        let frame = ruzstd::encoding::compress_to_vec(
            &noise[..],
            ruzstd::encoding::CompressionLevel::Fastest,
        );
        assert_eq!(decompress_zstd(&frame, 4 * MIB, 64 * 1024).unwrap(), noise);
        assert!(decompress_zstd(&frame, 2 * MIB, 64 * 1024)
            .unwrap_err()
            .is_corruption());
    }

    /// A decode worker's bound is the limit itself: no allowance for what the bytes can make.
    #[test]
    fn strict_decompression_refuses_past_the_limit() {
        let zeros = vec![0u8; 2 << 20];
        for kind in [
            CompressionType::None,
            CompressionType::Snappy,
            CompressionType::Zlib,
            CompressionType::ZlibRaw,
        ] {
            let mut out = Vec::new();
            compress(kind, &zeros, &mut out);
            assert_eq!(decompress_strict(kind.id(), &out, 2 << 20).unwrap(), zeros);
            let err = decompress_strict(kind.id(), &out, 1 << 20).unwrap_err();
            assert!(
                err.is_corruption() && err.message().contains("limit"),
                "{kind:?}: {err}"
            );
            // The usual bound takes it.
            assert_eq!(
                decompress(kind.id(), &out, 1 << 20).unwrap(),
                zeros,
                "{kind:?}"
            );
        }
    }

    /// A block is refused only past what its codec can make of its bytes (or the caller's
    /// limit, if larger): 4 MiB of zeros, under a 1 MiB limit, reads back in every codec
    /// (LevelDB writes a large value as one block); claims no stored bytes can back are
    /// corruption, before any allocation.
    #[test]
    fn blocks_are_refused_past_what_their_bytes_can_make() {
        let zeros = vec![0u8; 4 << 20];
        for kind in [
            CompressionType::Snappy,
            CompressionType::Zlib,
            CompressionType::ZlibRaw,
        ] {
            let mut out = Vec::new();
            compress(kind, &zeros, &mut out);
            assert!(most_from(kind.id(), &out) >= zeros.len(), "{kind:?}");
            assert_eq!(
                decompress(kind.id(), &out, 1 << 20).unwrap(),
                zeros,
                "{kind:?}"
            );
        }
        // Zstd (id 2 with its magic, as Google's LevelDB 1.23 writes it) packs zeros past
        // deflate's 1032x: its own bound applies.
        let frame = ruzstd::encoding::compress_to_vec(
            &zeros[..],
            ruzstd::encoding::CompressionLevel::Fastest,
        );
        assert!(
            frame.len() * 1032 < zeros.len(),
            "zstd frame of {} bytes",
            frame.len()
        );
        assert_eq!(decompress(2, &frame, 1 << 20).unwrap(), zeros);
        // A snappy header claiming 2^32-1 bytes from 6, and 100 MiB from 1 KiB + 4.
        let claim = [0xff, 0xff, 0xff, 0xff, 0x0f, 0x00];
        let err = decompress(1, &claim, 1 << 20).unwrap_err();
        assert!(
            err.is_corruption() && err.message().contains("limit"),
            "{err}"
        );
        let mut claim = vec![0x80, 0x80, 0x80, 0x32]; // varint 100 << 20
        claim.resize(1028, 0);
        let err = decompress(1, &claim, 1 << 10).unwrap_err();
        assert_eq!(
            err.message(),
            "block decompresses to 104857600 bytes, over the 22616-byte limit"
        );
        // A zstd frame header asking for a 2 GiB window.
        let frame = [0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xa8, 0, 0, 0];
        assert!(decompress(2, &frame, 1 << 20).unwrap_err().is_corruption());
        // A deflate stream truncated after its first bytes never yields 1032x of anything.
        let mut out = Vec::new();
        compress(CompressionType::ZlibRaw, &zeros, &mut out);
        assert!(decompress(4, &out[..out.len() / 2], 1 << 10)
            .unwrap_err()
            .is_corruption());
    }

    /// Every inflate implementation of this build, as `decompress` would call them for an id.
    type Inflater = fn(&[u8], usize, usize, bool) -> Result<Vec<u8>>;
    const INFLATERS: &[(&str, Inflater)] = &[
        ("zlib-rs", inflate_zlib_rs),
        #[cfg(feature = "libdeflate")]
        ("libdeflate", inflate_libdeflate),
    ];

    /// libdeflate decodes into a buffer as large as the largest block so far: blocks growing,
    /// shrinking and far smaller than that all come back whole, and a small one at its exact
    /// capacity (a table's index block must not pin a data block's room).
    #[cfg(feature = "libdeflate")]
    #[test]
    fn libdeflate_blocks_of_changing_sizes_come_back_exact() {
        let mut rng = crate::util::random::Random::new(5);
        let block = |n: usize, rng: &mut crate::util::random::Random| -> Vec<u8> {
            (0..n)
                .map(|i| b"minecraft:stone"[i % 15] ^ (rng.uniform(4) as u8))
                .collect()
        };
        for kind in [CompressionType::Zlib, CompressionType::ZlibRaw] {
            let z = kind == CompressionType::Zlib;
            for n in [
                150_000, 160_000, 170_000, 155_000, 300, 200_000, 4_000, 165_000, 0,
            ] {
                let raw = block(n, &mut rng);
                let mut packed = Vec::new();
                compress(kind, &raw, &mut packed);
                let out = inflate_libdeflate(&packed, 1 << 20, 1 << 20, z).unwrap();
                assert_eq!(out, raw, "{kind:?} {n}");
                if n < 100_000 {
                    assert!(
                        out.capacity() <= 2 * n.max(4096),
                        "{kind:?} {n}: {}",
                        out.capacity()
                    );
                }
                crate::util::buffer_pool::give(out);
            }
            // 1 MiB of zeros from a ~1 KiB input, then a small block: exact again.
            let zeros = vec![0u8; 1 << 20];
            let mut packed = Vec::new();
            compress(kind, &zeros, &mut packed);
            assert_eq!(
                inflate_libdeflate(&packed, 1 << 20, 1 << 20, z).unwrap(),
                zeros
            );
            let raw = block(1000, &mut rng);
            compress(kind, &raw, &mut packed);
            assert_eq!(
                inflate_libdeflate(&packed, 1 << 20, 1 << 20, z).unwrap(),
                raw
            );
        }
    }

    #[test]
    fn every_inflater_agrees_on_limits_truncation_and_garbage() {
        let input = sample();
        let mut rng = crate::util::random::Random::new(11);
        for &(name, inflate) in INFLATERS {
            for kind in [CompressionType::Zlib, CompressionType::ZlibRaw] {
                let mut out = Vec::new();
                compress(kind, &input, &mut out);
                let z = kind == CompressionType::Zlib;
                assert_eq!(
                    inflate(&out, input.len(), input.len(), z).unwrap(),
                    input,
                    "{name}"
                );
                for limit in [input.len() - 1, 1000, 10, 0] {
                    let err = inflate(&out, limit, limit, z).unwrap_err();
                    assert!(
                        err.message().contains("limit"),
                        "{name} {kind:?} {limit}: {err}"
                    );
                }
                for cut in [0, 1, 2, out.len() / 2, out.len() - 1] {
                    assert!(
                        inflate(&out[..cut], 1 << 20, 1 << 20, z).is_err(),
                        "{name} cut {cut}"
                    );
                }
                let mut padded = out.clone();
                padded.extend_from_slice(&[0xAA; 9]);
                assert_eq!(
                    inflate(&padded, 1 << 20, 1 << 20, z).unwrap(),
                    input,
                    "{name}"
                );
                // An 8 MiB bomb is refused at a 1 MiB limit.
                let zeros = vec![0u8; 8 << 20];
                compress(kind, &zeros, &mut out);
                let err = inflate(&out, 1 << 20, 1 << 20, z).unwrap_err();
                assert!(err.message().contains("limit"), "{name}: {err}");
                // The same block under a limit it fits: far past the first size guess (8x the
                // input), it still decodes whole, and a small block after it stays exact.
                assert_eq!(inflate(&out, 8 << 20, 8 << 20, z).unwrap(), zeros, "{name}");
                let mut small = Vec::new();
                compress(kind, &input, &mut small);
                assert_eq!(
                    inflate(&small, input.len(), input.len(), z).unwrap(),
                    input,
                    "{name}"
                );
                let err = inflate(&small, input.len() - 1, input.len() - 1, z).unwrap_err();
                assert!(err.message().contains("limit"), "{name}: {err}");
            }
            // A damaged zlib checksum is caught.
            let mut out = Vec::new();
            compress(CompressionType::Zlib, &input, &mut out);
            let n = out.len();
            out[n - 1] ^= 1;
            assert!(
                inflate(&out, 1 << 20, 1 << 20, true).is_err(),
                "{name} adler"
            );
            // Random garbage: errors or bounded output, never a panic.
            for len in [1usize, 3, 50, 700] {
                for _ in 0..50 {
                    let mut junk = vec![0u8; len];
                    rng.fill(&mut junk);
                    for z in [false, true] {
                        if let Ok(v) = inflate(&junk, 1 << 16, 1 << 16, z) {
                            assert!(v.len() <= 1 << 16);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn inflate_limits_truncation_and_trailing_bytes() {
        let input = sample();
        for kind in [CompressionType::Zlib, CompressionType::ZlibRaw] {
            let mut out = Vec::new();
            compress(kind, &input, &mut out);
            let id = kind.id();
            // Limits under the block's size do not refuse it: its bytes can make that much
            // (the inflaters' own limits are tested below, every_inflater_agrees_...).
            assert_eq!(decompress(id, &out, input.len()).unwrap(), input);
            assert_eq!(decompress(id, &out, input.len() - 1).unwrap(), input);
            assert_eq!(decompress(id, &out, 10).unwrap(), input);
            assert_eq!(decompress(id, &out, 0).unwrap(), input);
            // Every truncation is corruption.
            for cut in [0, 1, 2, out.len() / 2, out.len() - 1] {
                let err = decompress(id, &out[..cut], 1 << 20).unwrap_err();
                assert!(err.is_corruption(), "{kind:?} cut at {cut}: {err}");
            }
            // Bytes after the end of the stream are ignored (zlib's uncompress does the same).
            let mut padded = out.clone();
            padded.extend_from_slice(&[0xAA; 9]);
            assert_eq!(decompress(id, &padded, 1 << 20).unwrap(), input);
        }
        // One thread's reused decoder state, alternating dialects and a failure in between.
        let mut raw = Vec::new();
        compress(CompressionType::ZlibRaw, &input, &mut raw);
        let mut zlib = Vec::new();
        compress(CompressionType::Zlib, &input, &mut zlib);
        for _ in 0..3 {
            assert_eq!(decompress(4, &raw, 1 << 20).unwrap(), input);
            assert!(decompress(4, &zlib[..40], 1 << 20).is_err());
            assert_eq!(decompress(2, &zlib, 1 << 20).unwrap(), input);
        }
        // The same from several threads at once.
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let (raw, input) = (raw.clone(), input.clone());
                std::thread::spawn(move || {
                    for _ in 0..20 {
                        assert_eq!(decompress(4, &raw, 1 << 20).unwrap(), input);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    }

    #[test]
    fn garbage_is_corruption_not_a_panic() {
        let mut rng = crate::util::random::Random::new(7);
        for id in [0u8, 1, 2, 3, 4, 5, 200] {
            for len in [0usize, 1, 2, 5, 17, 300] {
                let mut junk = vec![0u8; len];
                rng.fill(&mut junk);
                let r = decompress(id, &junk, 1 << 16);
                if let Err(e) = r {
                    assert!(e.is_corruption());
                }
            }
        }
        assert!(decompress(3, b"x", 10).is_err());
    }
}
