//! The log format shared by the write-ahead log and the MANIFEST (LevelDB doc/log_format.md).
//!
//! A file is a sequence of 32 KiB blocks. Each block holds physical records
//! `masked_crc32c(type ‖ payload): u32 LE, length: u16 LE, type: u8, payload`; a block tail
//! shorter than a header is zero padding. A logical record is one FULL record or a FIRST,
//! any number of MIDDLE, and a LAST record.

pub mod reader;
pub mod writer;

pub use reader::Reader;
pub use writer::Writer;

/// Size of a log block.
pub const BLOCK_SIZE: usize = 32 * 1024;
/// checksum (4) + length (2) + type (1).
pub const HEADER_SIZE: usize = 7;

/// Physical record types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordType {
    /// Preallocated file space (never written by the writer).
    Zero = 0,
    Full = 1,
    First = 2,
    Middle = 3,
    Last = 4,
}

impl RecordType {
    pub fn from_byte(b: u8) -> Option<Self> {
        Some(match b {
            0 => RecordType::Zero,
            1 => RecordType::Full,
            2 => RecordType::First,
            3 => RecordType::Middle,
            4 => RecordType::Last,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests;
