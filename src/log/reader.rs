//! Reads logical records back from a log file, verifying checksums.
//!
//! Damage policy (what a crash can and cannot explain):
//! - A record cut short by the end of the file is a torn write from a crash: it is dropped
//!   silently, as are zero-filled (preallocated) block tails. (If the stored checksum matches
//!   a shorter payload that is present, the length field is damaged instead: corruption.)
//! - Replaying a write-ahead log a synced writer extended with zeros (its size a block
//!   boundary; `Reader::ending_at_holes`): a hole a power cut left in the zeros (a record with a
//!   lost sector, a fragment whose start lay in zero-filled space) ends the log.
//! - Anything else — a checksum mismatch, a length that runs past its block, an unknown type,
//!   fragments out of order — cannot come from a crash of a correct writer. In `strict` mode
//!   (recovery of a live database) it is a `Corruption` error naming the file and offset; in
//!   skip mode (repair) the damaged bytes are dropped, counted, and reading goes on.

use std::sync::Arc;

use super::{RecordType, BLOCK_SIZE, HEADER_SIZE};
use crate::error::{Error, Result};
use crate::storage::RandomAccessFile;
use crate::util::coding::decode_fixed32;
use crate::util::crc;

/// The smallest unit a disk writes whole: a write torn by a power cut loses whole sectors.
const SECTOR: u64 = 512;

enum Physical {
    /// A fragment at `start..start+len` of the block buffer.
    Record(RecordType, usize, usize),
    Eof,
    /// A damaged or skipped region (already reported if it was damage).
    Bad,
    /// Zero-filled space skipped to the end of its block (`ending_at_holes` only).
    Zeros,
}

/// Sequential reader of logical records.
pub struct Reader {
    file: Arc<dyn RandomAccessFile>,
    name: String,
    verify_checksums: bool,
    strict: bool,
    block: Vec<u8>,
    /// Read position in `block`.
    pos: usize,
    /// File offset of `block[0]`.
    block_start: u64,
    /// File offset where the next block starts.
    next_block: u64,
    eof: bool,
    /// First damage met in strict mode.
    error: Option<Error>,
    dropped_bytes: u64,
    dropped_records: u64,
    last_record_offset: u64,
    end_of_last_record: u64,
    /// A write-ahead log being replayed ends at its first hole (`ending_at_holes`).
    ends_at_holes: bool,
    /// Zero-filled space was skipped since the last record returned.
    after_zeros: bool,
    /// Zero-filled space was skipped just before the last record returned.
    last_after_zeros: bool,
}

impl Reader {
    /// `name` is used in error messages. `strict`: damage is an error (else skipped).
    pub fn new(
        file: Arc<dyn RandomAccessFile>,
        name: impl Into<String>,
        verify_checksums: bool,
        strict: bool,
    ) -> Self {
        Reader {
            file,
            name: name.into(),
            verify_checksums,
            strict,
            block: Vec::with_capacity(BLOCK_SIZE),
            pos: 0,
            block_start: 0,
            next_block: 0,
            eof: false,
            error: None,
            dropped_bytes: 0,
            dropped_records: 0,
            last_record_offset: 0,
            end_of_last_record: 0,
            ends_at_holes: false,
            after_zeros: false,
            last_after_zeros: false,
        }
    }

    /// For replaying a write-ahead log. A synced writer extends its log with zeros ahead of
    /// its records (`storage::fs`), keeping its size a block boundary, and overwriting them
    /// commits no size, so a power cut can keep any subset of the sectors written since the
    /// last sync. For such a file (its size a non-zero multiple of the block size; any other
    /// is read as before, where a zero sector inside a record is data, as in many Bedrock
    /// values), a record with a lost sector (zeros over a whole sector inside it, or over its
    /// start up to its first sector boundary) or a fragment whose start lay in zero-filled
    /// space is where the log ends: what follows is not returned (recovery reports it as the
    /// log's dropped tail) and the replay stays a prefix of the history. Zero-filled space
    /// before a whole record is skipped, as LevelDB does (a peer reopening the log to append,
    /// `reuse_logs`, starts after the zeros); `last_record_after_zeros` says so, and the caller
    /// takes such a record only if it continues the history (its sequence is the next one).
    /// Synced records are never past a hole. Damage without a lost sector is still damage.
    pub fn ending_at_holes(mut self) -> Self {
        self.ends_at_holes = self
            .file
            .size()
            .is_ok_and(|size| size > 0 && size % BLOCK_SIZE as u64 == 0);
        self
    }

    /// Whether zero-filled space was skipped just before the last record returned
    /// (`ending_at_holes`): it continues the log only if it continues the history.
    pub fn last_record_after_zeros(&self) -> bool {
        self.last_after_zeros
    }

    /// Ends the log at a hole (`ending_at_holes`).
    fn end_at_hole(&mut self) {
        self.block.clear();
        self.pos = 0;
        self.eof = true;
    }

    /// Whether the record from file offset `header` to `end` (an offset in the block) holds a
    /// lost sector: zeros over its start up to its first sector boundary, or over a whole
    /// sector from a boundary inside it (clipped to the bytes the block holds).
    fn lost_sector_in(&self, header: u64, end: usize) -> bool {
        let base = self.block_start;
        let zero = |from: u64, to: u64| {
            self.block[(from - base) as usize..(to - base) as usize]
                .iter()
                .all(|&b| b == 0)
        };
        let end_offset = base + end as u64;
        let block_end = base + self.block.len() as u64;
        let first = header.div_ceil(SECTOR) * SECTOR;
        if first > header && zero(header, first.min(end_offset)) {
            return true;
        }
        let mut boundary = first;
        while boundary < end_offset {
            if zero(boundary, (boundary + SECTOR).min(block_end)) {
                return true;
            }
            boundary += SECTOR;
        }
        false
    }

    /// File offset just past the last record returned (0 before the first): whatever lies
    /// beyond it when `read_record` says the log ended was not used (a torn or zero-filled
    /// tail, which recovery reports).
    pub fn end_of_last_record(&self) -> u64 {
        self.end_of_last_record
    }

    /// File offset of the last record returned.
    pub fn last_record_offset(&self) -> u64 {
        self.last_record_offset
    }

    /// Bytes dropped as damage (skip mode).
    pub fn dropped_bytes(&self) -> u64 {
        self.dropped_bytes
    }

    /// Number of damage reports (skip mode).
    pub fn dropped_records(&self) -> u64 {
        self.dropped_records
    }

    fn report(&mut self, bytes: u64, offset: u64, reason: &str) {
        self.dropped_bytes += bytes;
        self.dropped_records += 1;
        if self.strict && self.error.is_none() {
            self.error = Some(
                Error::corruption(format!("log record: {reason}"))
                    .in_file(self.name.clone())
                    .at_offset(offset),
            );
        }
    }

    /// Whether the record at `pos`, which claims `claimed` payload bytes, has a checksum that
    /// matches some shorter payload present in the block.
    fn checksum_matches_a_shorter_payload(&self, masked: u32, claimed: usize) -> bool {
        let want = crc::unmask(masked);
        let start = self.pos + HEADER_SIZE;
        let avail = (self.block.len() - start).min(claimed);
        let mut c = crc::value(&self.block[self.pos + 6..start]);
        if c == want {
            return true;
        }
        for b in &self.block[start..start + avail] {
            c = crc::extend(c, std::slice::from_ref(b));
            if c == want {
                return true;
            }
        }
        false
    }

    /// Reads the next logical record into `record`. `Ok(false)` at the end of the log.
    pub fn read_record(&mut self, record: &mut Vec<u8>) -> Result<bool> {
        record.clear();
        let mut in_fragmented = false;
        let mut record_start = 0u64;
        loop {
            let physical = self.read_physical()?;
            if let Some(e) = self.error.take() {
                return Err(e);
            }
            match physical {
                Physical::Record(t, start, len) => {
                    let offset = self.block_start + start as u64 - HEADER_SIZE as u64;
                    let payload = start..start + len;
                    match t {
                        RecordType::Full => {
                            if in_fragmented && !record.is_empty() {
                                let n = record.len() as u64;
                                self.report(n, record_start, "partial record without end");
                            }
                            if let Some(e) = self.error.take() {
                                return Err(e);
                            }
                            record.clear();
                            record.extend_from_slice(&self.block[payload]);
                            self.last_record_offset = offset;
                            self.end_of_last_record = self.block_start + self.pos as u64;
                            self.last_after_zeros = std::mem::take(&mut self.after_zeros);
                            return Ok(true);
                        }
                        RecordType::First => {
                            if in_fragmented && !record.is_empty() {
                                let n = record.len() as u64;
                                self.report(n, record_start, "partial record without end");
                                if let Some(e) = self.error.take() {
                                    return Err(e);
                                }
                            }
                            record.clear();
                            record.extend_from_slice(&self.block[payload]);
                            in_fragmented = true;
                            record_start = offset;
                        }
                        RecordType::Middle | RecordType::Last => {
                            if !in_fragmented && self.after_zeros {
                                // Its start lay in zero-filled space: a hole.
                                self.end_at_hole();
                                record.clear();
                                return Ok(false);
                            }
                            if !in_fragmented {
                                self.report(
                                    len as u64,
                                    offset,
                                    "missing start of fragmented record",
                                );
                                if let Some(e) = self.error.take() {
                                    return Err(e);
                                }
                                continue;
                            }
                            record.extend_from_slice(&self.block[payload]);
                            if t == RecordType::Last {
                                self.last_record_offset = record_start;
                                self.end_of_last_record = self.block_start + self.pos as u64;
                                self.last_after_zeros = std::mem::take(&mut self.after_zeros);
                                return Ok(true);
                            }
                        }
                        RecordType::Zero => unreachable!("zero records are skipped"),
                    }
                }
                Physical::Eof => {
                    // A fragmented record cut off by the end of the file is a torn write.
                    record.clear();
                    return Ok(false);
                }
                Physical::Bad => {
                    if in_fragmented {
                        // The damage was reported; the partial record goes with it.
                        record.clear();
                        in_fragmented = false;
                    }
                }
                Physical::Zeros => {
                    if in_fragmented {
                        // The rest of a fragmented record lay in zero-filled space: a hole.
                        self.end_at_hole();
                        record.clear();
                        return Ok(false);
                    }
                    self.after_zeros = true;
                }
            }
        }
    }

    fn read_physical(&mut self) -> Result<Physical> {
        loop {
            if self.block.len() - self.pos < HEADER_SIZE {
                if self.eof {
                    // A header cut by the end of the file: torn write, dropped silently.
                    return Ok(Physical::Eof);
                }
                // Skip the zero trailer and read the next block.
                self.block_start = self.next_block;
                self.block.resize(BLOCK_SIZE, 0);
                let mut got = 0;
                while got < BLOCK_SIZE {
                    let n = self
                        .file
                        .read_at(self.block_start + got as u64, &mut self.block[got..])
                        .map_err(|e| e.in_file(self.name.clone()))?;
                    if n == 0 {
                        break;
                    }
                    got += n;
                }
                self.block.truncate(got);
                self.pos = 0;
                self.next_block = self.block_start + got as u64;
                if got < BLOCK_SIZE {
                    self.eof = true;
                }
                continue;
            }
            let h = &self.block[self.pos..self.pos + HEADER_SIZE];
            let expected_crc = decode_fixed32(h);
            let len = u16::from_le_bytes([h[4], h[5]]) as usize;
            let type_byte = h[6];
            let header_offset = self.block_start + self.pos as u64;
            let start = self.pos + HEADER_SIZE;
            // Where the block would end if the file were complete.
            let block_room = BLOCK_SIZE - self.pos - HEADER_SIZE;
            if type_byte == RecordType::Zero as u8 && len == 0 && expected_crc == 0 {
                // Preallocated / zero-filled space: skip the rest of the block.
                self.pos = self.block.len();
                if self.ends_at_holes {
                    return Ok(Physical::Zeros);
                }
                return Ok(Physical::Bad);
            }
            if len > block_room {
                let n = (self.block.len() - self.pos) as u64;
                self.pos = self.block.len();
                self.report(n, header_offset, "length runs past the end of its block");
                return Ok(Physical::Bad);
            }
            if start + len > self.block.len() {
                // Cut by the end of the file (only the last block can be short): a torn write,
                // unless the length itself is what is damaged: then the stored checksum
                // matches a shorter payload that is fully present.
                debug_assert!(self.eof);
                let damaged_length = self.verify_checksums
                    && self.checksum_matches_a_shorter_payload(expected_crc, len);
                let n = (self.block.len() - self.pos) as u64;
                self.pos = self.block.len();
                if damaged_length {
                    self.report(n, header_offset, "damaged record length");
                    return Ok(Physical::Bad);
                }
                return Ok(Physical::Eof);
            }
            let end = start + len;
            if self.verify_checksums {
                let actual = crc::value(&self.block[self.pos + 6..end]);
                if crc::unmask(expected_crc) != actual {
                    // The length itself may be damaged, so nothing after it in this block can
                    // be trusted.
                    // (An all-zero header and payload is zero-filled space, taken above.)
                    let n = (self.block.len() - self.pos) as u64;
                    // A power cut's hole in a log extended with zeros (`ending_at_holes`):
                    // the replay ends here, so recovery stays a prefix.
                    if self.ends_at_holes
                        && self.lost_sector_in(header_offset, end)
                        && !self.checksum_matches_a_shorter_payload(expected_crc, len)
                    {
                        self.end_at_hole();
                        return Ok(Physical::Eof);
                    }
                    self.pos = self.block.len();
                    self.report(n, header_offset, "checksum mismatch");
                    return Ok(Physical::Bad);
                }
            }
            self.pos = end;
            match RecordType::from_byte(type_byte) {
                Some(RecordType::Zero) | None => {
                    self.report(
                        (len + HEADER_SIZE) as u64,
                        header_offset,
                        &format!("unknown record type {type_byte}"),
                    );
                    return Ok(Physical::Bad);
                }
                Some(t) => return Ok(Physical::Record(t, start, len)),
            }
        }
    }
}
