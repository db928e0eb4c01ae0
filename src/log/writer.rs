//! Appends logical records to a log file, fragmenting them across 32 KiB blocks.
//! Not thread-safe: the write path serializes writers before they reach the log.

use super::{RecordType, BLOCK_SIZE, HEADER_SIZE};
use crate::error::Result;
use crate::storage::WritableFile;
use crate::util::crc;

pub struct Writer {
    dest: Box<dyn WritableFile>,
    /// Offset within the current block.
    block_offset: usize,
    /// Precomputed CRC of each type byte, the start of every record's checksum.
    type_crc: [u32; 5],
}

impl Writer {
    /// A writer for an empty file.
    pub fn new(dest: Box<dyn WritableFile>) -> Self {
        Self::with_length(dest, 0)
    }

    /// A writer appending to a file that already holds `length` bytes of log.
    pub fn with_length(dest: Box<dyn WritableFile>, length: u64) -> Self {
        let mut type_crc = [0u32; 5];
        for (t, c) in type_crc.iter_mut().enumerate() {
            *c = crc::value(&[t as u8]);
        }
        Writer {
            dest,
            block_offset: (length % BLOCK_SIZE as u64) as usize,
            type_crc,
        }
    }

    /// Appends one logical record (not synced; see [`Writer::sync`]).
    pub fn add_record(&mut self, mut data: &[u8]) -> Result<()> {
        let mut begin = true;
        loop {
            let leftover = BLOCK_SIZE - self.block_offset;
            if leftover < HEADER_SIZE {
                if leftover > 0 {
                    self.dest.append(&[0u8; HEADER_SIZE][..leftover])?;
                }
                self.block_offset = 0;
            }
            let avail = BLOCK_SIZE - self.block_offset - HEADER_SIZE;
            let fragment = data.len().min(avail);
            let end = fragment == data.len();
            let t = match (begin, end) {
                (true, true) => RecordType::Full,
                (true, false) => RecordType::First,
                (false, true) => RecordType::Last,
                (false, false) => RecordType::Middle,
            };
            self.emit(t, &data[..fragment])?;
            data = &data[fragment..];
            begin = false;
            if end {
                return Ok(());
            }
        }
    }

    fn emit(&mut self, t: RecordType, payload: &[u8]) -> Result<()> {
        let c = crc::mask(crc::extend(self.type_crc[t as usize], payload));
        let mut header = [0u8; HEADER_SIZE];
        header[..4].copy_from_slice(&c.to_le_bytes());
        header[4..6].copy_from_slice(&(payload.len() as u16).to_le_bytes());
        header[6] = t as u8;
        self.dest.append(&header)?;
        self.dest.append(payload)?;
        self.block_offset += HEADER_SIZE + payload.len();
        Ok(())
    }

    pub fn flush(&mut self) -> Result<()> {
        self.dest.flush()
    }

    pub fn sync(&mut self) -> Result<()> {
        self.dest.sync()
    }

    /// Syncs a log that takes no more records (`WritableFile::sync_final`).
    pub fn sync_final(&mut self) -> Result<()> {
        self.dest.sync_final()
    }
}
