//! WriteBatch: an atomic group of puts and deletes, in the byte form the log stores
//! (LevelDB db/write_batch.cc): `fixed64 sequence ‖ fixed32 count ‖ records`, each record
//! `0x01 varstring key varstring value` (put) or `0x00 varstring key` (delete).

use crate::error::{Error, Result};
use crate::key::{SequenceNumber, ValueType};
use crate::memtable::MemTable;
use crate::util::coding::{
    decode_fixed32, decode_fixed64, put_length_prefixed_slice, varint_length, Decoder,
};

pub const HEADER_SIZE: usize = 12;

/// Receives a batch's operations in order.
pub trait BatchHandler {
    fn put(&mut self, key: &[u8], value: &[u8]);
    fn delete(&mut self, key: &[u8]);
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteBatch {
    rep: Vec<u8>,
}

impl Default for WriteBatch {
    fn default() -> Self {
        Self::new()
    }
}

impl WriteBatch {
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// An empty batch with room for `record_bytes` of records (see [`WriteBatch::put_size`])
    /// before it has to grow.
    pub fn with_capacity(record_bytes: usize) -> Self {
        let mut rep = Vec::with_capacity(HEADER_SIZE + record_bytes);
        rep.resize(HEADER_SIZE, 0);
        WriteBatch { rep }
    }

    /// Bytes a put of `key` and `value` adds to a batch.
    pub fn put_size(key: &[u8], value: &[u8]) -> usize {
        1 + varint_length(key.len() as u64)
            + key.len()
            + varint_length(value.len() as u64)
            + value.len()
    }

    /// Bytes a delete of `key` adds to a batch.
    pub fn delete_size(key: &[u8]) -> usize {
        1 + varint_length(key.len() as u64) + key.len()
    }

    /// Wraps a batch read from a log, checking only that it has a header.
    pub fn from_contents(rep: Vec<u8>) -> Result<Self> {
        if rep.len() < HEADER_SIZE {
            return Err(Error::corruption("log record too small to be a WriteBatch"));
        }
        Ok(WriteBatch { rep })
    }

    pub fn put(&mut self, key: &[u8], value: &[u8]) {
        // One growth for the whole record, not one per field.
        self.rep.reserve(Self::put_size(key, value));
        self.set_count(self.count() + 1);
        self.rep.push(ValueType::Value as u8);
        put_length_prefixed_slice(&mut self.rep, key);
        put_length_prefixed_slice(&mut self.rep, value);
    }

    pub fn delete(&mut self, key: &[u8]) {
        self.rep.reserve(Self::delete_size(key));
        self.set_count(self.count() + 1);
        self.rep.push(ValueType::Deletion as u8);
        put_length_prefixed_slice(&mut self.rep, key);
    }

    pub fn clear(&mut self) {
        self.rep.clear();
        self.rep.resize(HEADER_SIZE, 0);
    }

    /// Appends `other`'s operations to this batch.
    pub fn append(&mut self, other: &WriteBatch) {
        self.set_count(self.count() + other.count());
        self.rep.extend_from_slice(&other.rep[HEADER_SIZE..]);
    }

    pub fn count(&self) -> u32 {
        decode_fixed32(&self.rep[8..])
    }

    fn set_count(&mut self, n: u32) {
        self.rep[8..12].copy_from_slice(&n.to_le_bytes());
    }

    pub fn sequence(&self) -> SequenceNumber {
        decode_fixed64(&self.rep)
    }

    pub fn set_sequence(&mut self, seq: SequenceNumber) {
        self.rep[..8].copy_from_slice(&seq.to_le_bytes());
    }

    /// Gives the encoded bytes back (to reuse the buffer).
    pub fn into_contents(self) -> Vec<u8> {
        self.rep
    }

    /// The encoded batch (what the log stores).
    pub fn contents(&self) -> &[u8] {
        &self.rep
    }

    pub fn approximate_size(&self) -> usize {
        self.rep.len()
    }

    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }

    /// Calls `handler` for each operation; damage is a `Corruption` error.
    pub fn iterate(&self, handler: &mut dyn BatchHandler) -> Result<()> {
        let mut d = Decoder::new(&self.rep[HEADER_SIZE..]);
        let mut found = 0u32;
        while !d.is_empty() {
            found += 1;
            match d.byte() {
                Some(1) => {
                    let k = d.length_prefixed();
                    let v = d.length_prefixed();
                    match (k, v) {
                        (Some(k), Some(v)) => handler.put(k, v),
                        _ => return Err(Error::corruption("bad WriteBatch Put")),
                    }
                }
                Some(0) => match d.length_prefixed() {
                    Some(k) => handler.delete(k),
                    None => return Err(Error::corruption("bad WriteBatch Delete")),
                },
                Some(t) => return Err(Error::corruption(format!("unknown WriteBatch tag {t}"))),
                None => unreachable!("loop checks for remaining bytes"),
            }
        }
        if found != self.count() {
            return Err(Error::corruption(format!(
                "WriteBatch has wrong count: header says {}, holds {found}",
                self.count()
            )));
        }
        Ok(())
    }

    /// Applies the batch to a memtable with consecutive sequence numbers from `sequence()`.
    /// The batch is checked first, so a damaged batch inserts nothing.
    /// Calls `f` with every key the batch puts or deletes, in order.
    pub fn for_each_key(&self, f: impl FnMut(&[u8])) -> Result<()> {
        struct Keys<F>(F);
        impl<F: FnMut(&[u8])> BatchHandler for Keys<F> {
            fn put(&mut self, key: &[u8], _value: &[u8]) {
                (self.0)(key)
            }
            fn delete(&mut self, key: &[u8]) {
                (self.0)(key)
            }
        }
        self.iterate(&mut Keys(f))
    }

    /// Makes room in `mem` for this whole batch (`MemTable::reserve`), checking it entry by
    /// entry: after it, `insert_into` allocates nothing. The write path calls it before it logs
    /// the batch, so a batch refused for memory leaves neither the log nor the memtable changed.
    pub fn reserve_in(&self, mem: &MemTable) -> Result<()> {
        #[derive(Default)]
        struct Count {
            entries: u64,
            key_bytes: u64,
            value_bytes: u64,
            longest_key: u64,
        }
        impl BatchHandler for Count {
            fn put(&mut self, key: &[u8], value: &[u8]) {
                self.delete(key);
                self.value_bytes += value.len() as u64;
            }
            fn delete(&mut self, key: &[u8]) {
                self.entries += 1;
                self.key_bytes += key.len() as u64;
                self.longest_key = self.longest_key.max(key.len() as u64);
            }
        }
        let mut count = Count::default();
        self.iterate(&mut count)?;
        mem.reserve(
            count.entries,
            count.key_bytes,
            count.value_bytes,
            count.longest_key,
        )
    }

    pub fn insert_into(&self, mem: &MemTable) -> Result<()> {
        // A first pass checks the whole batch and reserves its room, so a bad, oversized or
        // unaffordable batch inserts nothing.
        self.reserve_in(mem)?;
        self.insert_reserved(mem)
    }

    /// Inserts the batch into `mem`, whose room `reserve_in` made (the write path reserves
    /// before it logs, then inserts: one pass each).
    pub fn insert_reserved(&self, mem: &MemTable) -> Result<()> {
        struct Inserter<'a> {
            mem: &'a MemTable,
            seq: SequenceNumber,
        }
        impl BatchHandler for Inserter<'_> {
            fn put(&mut self, key: &[u8], value: &[u8]) {
                self.mem.add(self.seq, ValueType::Value, key, value);
                self.seq += 1;
            }
            fn delete(&mut self, key: &[u8]) {
                self.mem.add(self.seq, ValueType::Deletion, key, b"");
                self.seq += 1;
            }
        }
        self.iterate(&mut Inserter {
            mem,
            seq: self.sequence(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::LookupKey;
    use crate::memtable::MemGet;

    struct Log(Vec<String>);
    impl BatchHandler for Log {
        fn put(&mut self, k: &[u8], v: &[u8]) {
            self.0.push(format!(
                "Put({}, {})",
                String::from_utf8_lossy(k),
                String::from_utf8_lossy(v)
            ));
        }
        fn delete(&mut self, k: &[u8]) {
            self.0
                .push(format!("Delete({})", String::from_utf8_lossy(k)));
        }
    }

    #[test]
    fn encoding_matches_leveldb() {
        let mut b = WriteBatch::new();
        b.put(b"foo", b"bar");
        b.delete(b"box");
        b.put(b"baz", b"boo");
        b.set_sequence(100);
        assert_eq!(b.count(), 3);
        assert_eq!(
            b.contents(),
            &b"\x64\0\0\0\0\0\0\0\x03\0\0\0\x01\x03foo\x03bar\x00\x03box\x01\x03baz\x03boo"[..]
        );
        let mut log = Log(vec![]);
        b.iterate(&mut log).unwrap();
        assert_eq!(log.0, vec!["Put(foo, bar)", "Delete(box)", "Put(baz, boo)"]);
        let mem = MemTable::new();
        b.insert_into(&mem).unwrap();
        assert_eq!(
            mem.get(&LookupKey::new(b"baz", 102)),
            MemGet::Found(b"boo".to_vec())
        );
        assert_eq!(mem.get(&LookupKey::new(b"box", 102)), MemGet::Deleted);
        assert_eq!(mem.get(&LookupKey::new(b"baz", 101)), MemGet::Missing);
    }

    #[test]
    fn damage_is_corruption_and_inserts_nothing() {
        let mut b = WriteBatch::new();
        b.put(b"foo", b"bar");
        b.delete(b"box");
        let good = b.contents().to_vec();
        let mut cut = good.clone();
        cut.truncate(good.len() - 1);
        let mut wrong_count = good.clone();
        wrong_count[8] = 3;
        let mut bad_tag = good.clone();
        bad_tag[12] = 9;
        for bad in [cut, wrong_count, bad_tag] {
            let wb = WriteBatch::from_contents(bad).unwrap();
            let mem = MemTable::new();
            assert!(wb.insert_into(&mem).unwrap_err().is_corruption());
            assert!(mem.is_empty());
        }
        assert!(WriteBatch::from_contents(vec![0; 11]).is_err());
    }

    #[test]
    fn record_sizes_are_exact_and_presized_batches_do_not_grow() {
        let key16 = [b'k'; 16];
        let value = [7u8; 100];
        let long_key = [b'x'; 200]; // a two-byte varint length
        assert_eq!(WriteBatch::put_size(&key16, &value), 1 + 1 + 16 + 1 + 100);
        assert_eq!(WriteBatch::put_size(&long_key, b""), 1 + 2 + 200 + 1);
        assert_eq!(WriteBatch::delete_size(&long_key), 1 + 2 + 200);
        let total = 3 * WriteBatch::put_size(&key16, &value) + WriteBatch::delete_size(&long_key);
        let mut b = WriteBatch::with_capacity(total);
        let room = b.rep.capacity();
        for _ in 0..3 {
            b.put(&key16, &value);
        }
        b.delete(&long_key);
        assert_eq!(b.contents().len(), HEADER_SIZE + total);
        assert_eq!(b.rep.capacity(), room, "a presized batch grew");
        assert_eq!(b.count(), 4);
    }
}
