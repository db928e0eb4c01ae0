//! VersionEdit: one MANIFEST record, the delta between two Versions (LevelDB
//! db/version_edit.cc). Tags: 1 comparator, 2 log number, 3 next file number, 4 last sequence,
//! 5 compact pointer, 6 deleted file, 7 new file, 9 prev log number (8 is retired).

use std::collections::BTreeSet;

use super::version::FileMetaData;
use crate::error::{Error, Result};
use crate::key::{parse_internal_key, SequenceNumber};
use crate::options::config::NUM_LEVELS;
use crate::util::coding::{put_length_prefixed_slice, put_varint32, put_varint64, Decoder};

const TAG_COMPARATOR: u32 = 1;
const TAG_LOG_NUMBER: u32 = 2;
const TAG_NEXT_FILE_NUMBER: u32 = 3;
const TAG_LAST_SEQUENCE: u32 = 4;
const TAG_COMPACT_POINTER: u32 = 5;
const TAG_DELETED_FILE: u32 = 6;
const TAG_NEW_FILE: u32 = 7;
const TAG_PREV_LOG_NUMBER: u32 = 9;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VersionEdit {
    pub comparator: Option<String>,
    pub log_number: Option<u64>,
    pub prev_log_number: Option<u64>,
    pub next_file_number: Option<u64>,
    pub last_sequence: Option<SequenceNumber>,
    pub compact_pointers: Vec<(usize, Vec<u8>)>,
    pub deleted_files: BTreeSet<(usize, u64)>,
    pub new_files: Vec<(usize, FileMetaData)>,
}

impl VersionEdit {
    pub fn add_file(
        &mut self,
        level: usize,
        number: u64,
        size: u64,
        smallest: &[u8],
        largest: &[u8],
    ) {
        self.new_files.push((
            level,
            FileMetaData::new(number, size, smallest.to_vec(), largest.to_vec()),
        ));
    }

    pub fn delete_file(&mut self, level: usize, number: u64) {
        self.deleted_files.insert((level, number));
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut dst = Vec::new();
        if let Some(c) = &self.comparator {
            put_varint32(&mut dst, TAG_COMPARATOR);
            put_length_prefixed_slice(&mut dst, c.as_bytes());
        }
        if let Some(n) = self.log_number {
            put_varint32(&mut dst, TAG_LOG_NUMBER);
            put_varint64(&mut dst, n);
        }
        if let Some(n) = self.prev_log_number {
            put_varint32(&mut dst, TAG_PREV_LOG_NUMBER);
            put_varint64(&mut dst, n);
        }
        if let Some(n) = self.next_file_number {
            put_varint32(&mut dst, TAG_NEXT_FILE_NUMBER);
            put_varint64(&mut dst, n);
        }
        if let Some(n) = self.last_sequence {
            put_varint32(&mut dst, TAG_LAST_SEQUENCE);
            put_varint64(&mut dst, n);
        }
        for (level, key) in &self.compact_pointers {
            put_varint32(&mut dst, TAG_COMPACT_POINTER);
            put_varint32(&mut dst, *level as u32);
            put_length_prefixed_slice(&mut dst, key);
        }
        for &(level, number) in &self.deleted_files {
            put_varint32(&mut dst, TAG_DELETED_FILE);
            put_varint32(&mut dst, level as u32);
            put_varint64(&mut dst, number);
        }
        for (level, f) in &self.new_files {
            put_varint32(&mut dst, TAG_NEW_FILE);
            put_varint32(&mut dst, *level as u32);
            put_varint64(&mut dst, f.number);
            put_varint64(&mut dst, f.file_size);
            put_length_prefixed_slice(&mut dst, &f.smallest);
            put_length_prefixed_slice(&mut dst, &f.largest);
        }
        dst
    }

    pub fn decode(src: &[u8]) -> Result<VersionEdit> {
        let mut edit = VersionEdit::default();
        let mut d = Decoder::new(src);
        let err = |what: &str| Error::corruption(format!("VersionEdit: bad {what}"));
        let level = |d: &mut Decoder| -> Option<usize> {
            let l = d.varint32()? as usize;
            (l < NUM_LEVELS).then_some(l)
        };
        let internal_key = |d: &mut Decoder| -> Option<Vec<u8>> {
            let k = d.length_prefixed()?;
            parse_internal_key(k)?;
            Some(k.to_vec())
        };
        while !d.is_empty() {
            let tag = d.varint32().ok_or_else(|| err("tag"))?;
            match tag {
                TAG_COMPARATOR => {
                    let c = d.length_prefixed().ok_or_else(|| err("comparator name"))?;
                    let c = String::from_utf8(c.to_vec()).map_err(|_| err("comparator name"))?;
                    edit.comparator = Some(c);
                }
                TAG_LOG_NUMBER => {
                    edit.log_number = Some(d.varint64().ok_or_else(|| err("log number"))?)
                }
                TAG_PREV_LOG_NUMBER => {
                    edit.prev_log_number =
                        Some(d.varint64().ok_or_else(|| err("previous log number"))?)
                }
                TAG_NEXT_FILE_NUMBER => {
                    edit.next_file_number =
                        Some(d.varint64().ok_or_else(|| err("next file number"))?)
                }
                TAG_LAST_SEQUENCE => {
                    edit.last_sequence =
                        Some(d.varint64().ok_or_else(|| err("last sequence number"))?)
                }
                TAG_COMPACT_POINTER => {
                    let l = level(&mut d).ok_or_else(|| err("compaction pointer"))?;
                    let k = internal_key(&mut d).ok_or_else(|| err("compaction pointer"))?;
                    edit.compact_pointers.push((l, k));
                }
                TAG_DELETED_FILE => {
                    let l = level(&mut d).ok_or_else(|| err("deleted file entry"))?;
                    let n = d.varint64().ok_or_else(|| err("deleted file entry"))?;
                    edit.deleted_files.insert((l, n));
                }
                TAG_NEW_FILE => {
                    let parse = |d: &mut Decoder| -> Option<(usize, FileMetaData)> {
                        let l = level(d)?;
                        let number = d.varint64()?;
                        let file_size = d.varint64()?;
                        let smallest = internal_key(d)?;
                        let largest = internal_key(d)?;
                        Some((l, FileMetaData::new(number, file_size, smallest, largest)))
                    };
                    let f = parse(&mut d).ok_or_else(|| err("new file entry"))?;
                    edit.new_files.push(f);
                }
                other => return Err(err(&format!("tag {other}"))),
            }
        }
        Ok(edit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{make_internal_key, ValueType};

    #[test]
    fn encode_decode_round_trip() {
        let mut e = VersionEdit {
            comparator: Some("leveldb.BytewiseComparator".into()),
            log_number: Some(900),
            prev_log_number: Some(899),
            next_file_number: Some(1 << 40),
            last_sequence: Some((1 << 56) - 1),
            ..Default::default()
        };
        for i in 0..4u64 {
            e.add_file(
                3,
                300 + i,
                1 << 33,
                &make_internal_key(b"foo", 1 << 50, ValueType::Value),
                &make_internal_key(b"zoo", 2, ValueType::Deletion),
            );
            e.delete_file(4, 700 + i);
            e.compact_pointers
                .push((i as usize, make_internal_key(b"x", 900, ValueType::Value)));
        }
        let enc = e.encode();
        assert_eq!(VersionEdit::decode(&enc).unwrap(), e);
    }

    #[test]
    fn bad_input_is_corruption() {
        for bad in [
            &[99u8][..],                        // unknown tag
            &[2],                               // log number missing
            &[7, 9, 1, 1],                      // level 9
            &[7, 0, 1, 1, 3, b'a', b'b', b'c'], // internal key too short
            &[1, 5, b'a'],                      // comparator name cut short
        ] {
            assert!(
                VersionEdit::decode(bad).unwrap_err().is_corruption(),
                "{bad:?}"
            );
        }
    }
}
