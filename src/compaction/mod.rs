//! Compaction: choosing what to compact (`pick`, a pure function of a Version and the
//! compaction pointers) and doing it (`run`: merge inputs, drop obsolete versions, write
//! output tables), plus the table writer shared with memtable flushes and repair.

pub mod pick;
pub mod run;

pub use pick::{pick_compaction, range_compaction, Compaction, CompactionLimits};
