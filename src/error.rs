//! The engine's error type. Every failure carries a kind the caller can match on (and that
//! the JS layer maps to `LEVEL_*` codes) plus a human message; corruption names the file and,
//! where known, the byte offset of the damage.

use std::fmt;

/// What went wrong, independent of the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// A key, file or database that does not exist.
    NotFound,
    /// Stored bytes fail a checksum or do not parse.
    Corruption,
    /// The operating system or storage backend failed.
    Io,
    /// The caller passed something the engine cannot accept.
    InvalidArgument,
    /// Another opener holds the database's `LOCK`.
    Locked,
    /// A feature this build or this database cannot provide.
    NotSupported,
    /// The storage backend ran out of space (ENOSPC, browser quota).
    NoSpace,
    /// The engine could not get the memory an operation needs (in wasm, every database of an
    /// instance shares at most 4 GiB): the operation is refused whole and writes nothing, and
    /// the database stays usable once memory is freed (other databases closed).
    OutOfMemory,
    /// An internal invariant did not hold (a bug in Strata): the call is refused instead of
    /// panicking, and nothing it would have written is acknowledged.
    Internal,
}

/// An engine error: kind, message, and for corruption the file and offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    file: Option<String>,
    offset: Option<u64>,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
            file: None,
            offset: None,
        }
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, message)
    }

    pub fn corruption(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Corruption, message)
    }

    pub fn io(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Io, message)
    }

    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidArgument, message)
    }

    pub fn not_supported(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotSupported, message)
    }

    /// A broken internal invariant, reported instead of a panic.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }

    pub fn out_of_memory(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::OutOfMemory, message)
    }

    pub fn locked(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Locked, message)
    }

    /// Attaches the file the error concerns (kept if one is already set).
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        if self.file.is_none() {
            self.file = Some(file.into());
        }
        self
    }

    /// Attaches the byte offset of the damage (kept if one is already set).
    pub fn at_offset(mut self, offset: u64) -> Self {
        if self.offset.is_none() {
            self.offset = Some(offset);
        }
        self
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    pub fn file(&self) -> Option<&str> {
        self.file.as_deref()
    }

    pub fn offset(&self) -> Option<u64> {
        self.offset
    }

    pub fn is_corruption(&self) -> bool {
        self.kind == ErrorKind::Corruption
    }

    pub fn is_not_found(&self) -> bool {
        self.kind == ErrorKind::NotFound
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            ErrorKind::NotFound => "NotFound",
            ErrorKind::Corruption => "Corruption",
            ErrorKind::Io => "IO error",
            ErrorKind::InvalidArgument => "Invalid argument",
            ErrorKind::Locked => "Locked",
            ErrorKind::NotSupported => "Not supported",
            ErrorKind::NoSpace => "No space",
            ErrorKind::OutOfMemory => "Out of memory",
            ErrorKind::Internal => "Internal error",
        };
        write!(f, "{kind}: {}", self.message)?;
        if let Some(file) = &self.file {
            write!(f, " (file {file}")?;
            if let Some(off) = self.offset {
                write!(f, ", offset {off}")?;
            }
            write!(f, ")")?;
        } else if let Some(off) = self.offset {
            write!(f, " (offset {off})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        let kind = match e.kind() {
            std::io::ErrorKind::NotFound => ErrorKind::NotFound,
            std::io::ErrorKind::StorageFull => ErrorKind::NoSpace,
            std::io::ErrorKind::WouldBlock => ErrorKind::Locked,
            _ => ErrorKind::Io,
        };
        Error::new(kind, e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_file_and_offset() {
        let e = Error::corruption("bad block checksum")
            .in_file("000005.ldb")
            .at_offset(4096);
        assert_eq!(
            e.to_string(),
            "Corruption: bad block checksum (file 000005.ldb, offset 4096)"
        );
        assert!(e.is_corruption());
        // The first context wins: inner layers know more precisely.
        let e = e.in_file("other").at_offset(1);
        assert_eq!(e.file(), Some("000005.ldb"));
        assert_eq!(e.offset(), Some(4096));
    }
}
