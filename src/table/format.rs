//! Block handles, the 48-byte footer, and reading one block: its 5-byte trailer (type byte +
//! masked CRC-32C of block ‖ type) is checked and the payload decompressed, bounded.

use crate::compress;
use crate::error::{Error, Result};
use crate::storage::{read_exact_into, RandomAccessFile};
use crate::util::coding::{decode_fixed32, decode_fixed64, get_varint64, put_varint64};
use crate::util::crc;

/// `0xdb4775248b80fb57`, LevelDB's table magic, stored as fixed64 LE at the end of a table.
pub const TABLE_MAGIC: u64 = 0xdb47_7524_8b80_fb57;
/// Two handles of at most 10 + 10 bytes each, padded, plus the magic.
pub const FOOTER_SIZE: usize = 48;
/// Compression type byte + masked CRC.
pub const BLOCK_TRAILER_SIZE: usize = 5;
const MAX_ENCODED_HANDLE: usize = 20;

/// Where a block lives in a table (its size excludes the trailer).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockHandle {
    pub offset: u64,
    pub size: u64,
}

impl BlockHandle {
    pub fn encode_to(&self, dst: &mut Vec<u8>) {
        put_varint64(dst, self.offset);
        put_varint64(dst, self.size);
    }

    /// Decodes a handle at the start of `src`: `(handle, bytes consumed)`.
    pub fn decode(src: &[u8]) -> Option<(BlockHandle, usize)> {
        let (offset, a) = get_varint64(src)?;
        let (size, b) = get_varint64(&src[a..])?;
        Some((BlockHandle { offset, size }, a + b))
    }
}

/// The table footer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Footer {
    pub metaindex: BlockHandle,
    pub index: BlockHandle,
}

impl Footer {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(FOOTER_SIZE);
        self.metaindex.encode_to(&mut out);
        self.index.encode_to(&mut out);
        out.resize(2 * MAX_ENCODED_HANDLE, 0);
        out.extend_from_slice(&TABLE_MAGIC.to_le_bytes());
        out
    }

    pub fn decode(src: &[u8]) -> Result<Footer> {
        if src.len() < FOOTER_SIZE {
            return Err(Error::corruption("table footer is too short"));
        }
        let magic = decode_fixed64(&src[FOOTER_SIZE - 8..]);
        if magic != TABLE_MAGIC {
            return Err(Error::corruption(
                "not an sstable (bad magic number in footer)",
            ));
        }
        let bad = || Error::corruption("bad block handle in table footer");
        let (metaindex, n) = BlockHandle::decode(src).ok_or_else(bad)?;
        let (index, _) = BlockHandle::decode(&src[n..]).ok_or_else(bad)?;
        Ok(Footer { metaindex, index })
    }
}

/// A block as read: uncompressed bytes plus the compression id its trailer named.
pub struct BlockContents {
    pub data: Vec<u8>,
    pub compression_id: u8,
}

/// Reads the block at `handle` with the file's `read_at`, checks its trailer CRC (if
/// `verify`), and decompresses it, refusing more output than the larger of `max_size` and what
/// its codec can make of its bytes (`compress::decompress`). Errors carry
/// the block's offset. (Point reads and user iterators of a memory-mapped table read through
/// the map instead: `Table::block_at`. Bulk readers (scans, compactions, verify, repair) read
/// each block once, and a table's index and filter are read once at open and kept: through the
/// map, they would make pages of the database resident in the process, as the kernel maps
/// ~64 KiB around each touched page.)
pub fn read_block(
    file: &dyn RandomAccessFile,
    file_size: u64,
    handle: BlockHandle,
    verify: bool,
    max_size: usize,
) -> Result<BlockContents> {
    check_handle(handle, file_size, max_size)?;
    let n = handle.size as usize; // check_handle: size + trailer fits in a usize

    // A pooled buffer: an uncompressed block keeps it, a compressed one gives it back.
    let mut raw = crate::util::buffer_pool::take(n + BLOCK_TRAILER_SIZE);
    read_exact_into(file, handle.offset, n + BLOCK_TRAILER_SIZE, &mut raw)?;
    decode_block(raw, verify, max_size).map_err(|e| e.at_offset(handle.offset))
}

/// Checks that the block at `handle` (with its trailer) lies inside a `file_size`-byte file,
/// and that a block larger than `max_size` (a value of hundreds of MiB is one block) can be
/// allocated: `OutOfMemory` rather than an abort where memory is short.
pub fn check_handle(handle: BlockHandle, file_size: u64, max_size: usize) -> Result<()> {
    let with_trailer = handle.size.checked_add(BLOCK_TRAILER_SIZE as u64);
    let end = with_trailer.and_then(|n| handle.offset.checked_add(n));
    match (end, with_trailer) {
        (Some(end), Some(n)) if end <= file_size => {
            // A 32-bit host (wasm) cannot hold a block of 4 GiB or more at all.
            let n = usize::try_from(n).map_err(|_| {
                Error::out_of_memory(format!(
                    "a block of {n} bytes cannot be held in this host's memory"
                ))
                .at_offset(handle.offset)
            })?;
            crate::compress::room_for(n, max_size).map_err(|e| e.at_offset(handle.offset))
        }
        _ => Err(Error::corruption(format!(
            "block handle (offset {}, size {}) lies outside the {file_size}-byte file",
            handle.offset, handle.size
        ))
        .at_offset(handle.offset)),
    }
}

/// Checks and decompresses `raw` = block bytes ‖ trailer.
pub fn decode_block(mut raw: Vec<u8>, verify: bool, max_size: usize) -> Result<BlockContents> {
    let n = check_trailer(&raw, verify)?;
    let compression_id = raw[n];
    if compression_id == 0 {
        raw.truncate(n);
        return Ok(BlockContents {
            data: raw,
            compression_id,
        });
    }
    let data = compress::decompress(compression_id, &raw[..n], max_size);
    crate::util::buffer_pool::give(raw);
    Ok(BlockContents {
        data: data?,
        compression_id,
    })
}

/// `decode_block` over borrowed bytes (a block inside a larger read).
pub fn decode_block_slice(raw: &[u8], verify: bool, max_size: usize) -> Result<BlockContents> {
    let n = check_trailer(raw, verify)?;
    let compression_id = raw[n];
    let data = compress::decompress(compression_id, &raw[..n], max_size)?;
    Ok(BlockContents {
        data,
        compression_id,
    })
}

/// Verifies the trailer's CRC (if asked); returns the payload length.
pub fn check_trailer(raw: &[u8], verify: bool) -> Result<usize> {
    let n = raw
        .len()
        .checked_sub(BLOCK_TRAILER_SIZE)
        .ok_or_else(|| Error::corruption("block is shorter than its trailer"))?;
    if verify {
        let expected = crc::unmask(decode_fixed32(&raw[n + 1..]));
        let actual = crc::value(&raw[..n + 1]);
        if expected != actual {
            return Err(Error::corruption("block checksum mismatch"));
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footer_round_trip_and_layout() {
        let f = Footer {
            metaindex: BlockHandle {
                offset: 1000,
                size: 30,
            },
            index: BlockHandle {
                offset: 1035,
                size: 300_000,
            },
        };
        let enc = f.encode();
        assert_eq!(enc.len(), FOOTER_SIZE);
        assert_eq!(
            &enc[40..],
            &[0x57, 0xfb, 0x80, 0x8b, 0x24, 0x75, 0x47, 0xdb]
        );
        assert_eq!(Footer::decode(&enc).unwrap(), f);
        let mut bad = enc.clone();
        bad[47] ^= 1;
        assert!(Footer::decode(&bad).unwrap_err().is_corruption());
        assert!(Footer::decode(&enc[1..]).unwrap_err().is_corruption());
    }
}
