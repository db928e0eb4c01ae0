//! Internal keys: how a user key, a sequence number and a value type are packed together, and
//! the one order everything in the engine is sorted by.
//!
//! `internal_key = user_key ‖ fixed64_le(sequence << 8 | type)`; type 1 = value, 0 = deletion;
//! sequence < 2^56. Order: user key ascending (bytewise; LevelDB's
//! `leveldb.BytewiseComparator`), then sequence descending, then type descending, so the newest
//! version of a key comes first.
//!
//! Functions here never panic on malformed keys (shorter than 8 bytes): such a key compares as
//! a user key with trailer 0, and `parse_internal_key` reports it as `None`.

use std::cmp::Ordering;

use crate::util::coding::{decode_fixed64, put_fixed64};

pub type SequenceNumber = u64;

/// The largest sequence number that fits in the 56 bits of a trailer.
pub const MAX_SEQUENCE_NUMBER: SequenceNumber = (1 << 56) - 1;

/// The name of the only comparator this engine supports (stored in every MANIFEST).
pub const BYTEWISE_COMPARATOR: &str = "leveldb.BytewiseComparator";

/// What an internal key records about its user key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueType {
    Deletion = 0,
    Value = 1,
}

impl ValueType {
    pub fn from_byte(b: u8) -> Option<Self> {
        match b {
            0 => Some(ValueType::Deletion),
            1 => Some(ValueType::Value),
            _ => None,
        }
    }
}

/// The type used when seeking: `Value` sorts before `Deletion` at the same sequence, so a seek
/// key with the highest type finds every entry at or below its sequence.
pub const VALUE_TYPE_FOR_SEEK: ValueType = ValueType::Value;

#[inline]
pub fn pack_sequence_and_type(seq: SequenceNumber, t: ValueType) -> u64 {
    debug_assert!(seq <= MAX_SEQUENCE_NUMBER);
    (seq << 8) | t as u64
}

/// Appends `user_key ‖ trailer` to `dst`.
pub fn append_internal_key(dst: &mut Vec<u8>, user_key: &[u8], seq: SequenceNumber, t: ValueType) {
    dst.extend_from_slice(user_key);
    put_fixed64(dst, pack_sequence_and_type(seq, t));
}

/// Builds an internal key.
pub fn make_internal_key(user_key: &[u8], seq: SequenceNumber, t: ValueType) -> Vec<u8> {
    let mut k = Vec::with_capacity(user_key.len() + 8);
    append_internal_key(&mut k, user_key, seq, t);
    k
}

/// The parts of a well-formed internal key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParsedInternalKey<'a> {
    pub user_key: &'a [u8],
    pub sequence: SequenceNumber,
    pub value_type: ValueType,
}

/// Splits an internal key; `None` if it is shorter than 8 bytes or its type byte is unknown.
#[inline]
pub fn parse_internal_key(ikey: &[u8]) -> Option<ParsedInternalKey<'_>> {
    let n = ikey.len();
    if n < 8 {
        return None;
    }
    let trailer = decode_fixed64(&ikey[n - 8..]);
    Some(ParsedInternalKey {
        user_key: &ikey[..n - 8],
        sequence: trailer >> 8,
        value_type: ValueType::from_byte(trailer as u8)?,
    })
}

/// The user key part of an internal key (the whole key if it is malformed).
#[inline]
pub fn extract_user_key(ikey: &[u8]) -> &[u8] {
    if ikey.len() >= 8 {
        &ikey[..ikey.len() - 8]
    } else {
        ikey
    }
}

#[inline]
fn trailer(ikey: &[u8]) -> u64 {
    if ikey.len() >= 8 {
        decode_fixed64(&ikey[ikey.len() - 8..])
    } else {
        0
    }
}

/// Bytewise order, as `a.cmp(b)`: keys of up to 32 bytes are compared 8 bytes at a time
/// (big-endian words order as their bytes do) instead of through libc's `memcmp`, whose call
/// costs more than the comparison for short keys (db_bench's readhot spent 25% of its time in
/// it, seeking 16-byte keys in cached blocks); longer ones go to `memcmp`.
#[inline]
pub fn compare_bytes(a: &[u8], b: &[u8]) -> Ordering {
    let n = a.len().min(b.len());
    if n > 32 {
        return a.cmp(b);
    }
    let word = |s: &[u8], i: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&s[i..i + 8]);
        u64::from_be_bytes(w)
    };
    let mut i = 0;
    while i + 8 <= n {
        let (x, y) = (word(a, i), word(b, i));
        if x != y {
            return x.cmp(&y);
        }
        i += 8;
    }
    while i < n {
        if a[i] != b[i] {
            return a[i].cmp(&b[i]);
        }
        i += 1;
    }
    a.len().cmp(&b.len())
}

/// The internal key order: user key ascending, then trailer (sequence, type) descending.
#[inline]
pub fn compare_internal_keys(a: &[u8], b: &[u8]) -> Ordering {
    match compare_bytes(extract_user_key(a), extract_user_key(b)) {
        Ordering::Equal => trailer(b).cmp(&trailer(a)),
        o => o,
    }
}

/// What a point lookup found; a value found is in the caller's buffer (`Db::get_into`), so a
/// lookup allocates nothing for keys it passes over or values it copies into reused space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The newest visible entry is a value.
    Found,
    /// The newest visible entry is a deletion.
    Deleted,
    /// No entry for the key at or below the sequence.
    Missing,
}

/// A key for looking up `user_key` as of `sequence`, in the forms the memtable and tables need.
pub struct LookupKey {
    /// varint32(len(internal key)) ‖ internal key: `inline[..len]`, or `heap` when longer
    /// than `LOOKUP_INLINE` (as LevelDB's 200-byte `space_`: a lookup of a usual key
    /// allocates nothing).
    inline: [u8; LOOKUP_INLINE],
    heap: Vec<u8>,
    len: usize,
    key_start: usize,
}

/// The longest lookup key (length prefix and internal key) kept inside a `LookupKey`.
const LOOKUP_INLINE: usize = 128;

impl LookupKey {
    pub fn new(user_key: &[u8], sequence: SequenceNumber) -> Self {
        let ikey_len = user_key.len() + 8;
        let mut prefix = [0u8; 5];
        let key_start = crate::util::coding::encode_varint32(&mut prefix, ikey_len as u32);
        let len = key_start + ikey_len;
        let mut k = LookupKey {
            inline: [0; LOOKUP_INLINE],
            heap: Vec::new(),
            len,
            key_start,
        };
        let data: &mut [u8] = if len <= LOOKUP_INLINE {
            &mut k.inline[..len]
        } else {
            k.heap.resize(len, 0);
            &mut k.heap
        };
        let (head, ikey) = data.split_at_mut(key_start);
        head.copy_from_slice(&prefix[..key_start]);
        let (user, trailer) = ikey.split_at_mut(user_key.len());
        user.copy_from_slice(user_key);
        trailer
            .copy_from_slice(&pack_sequence_and_type(sequence, VALUE_TYPE_FOR_SEEK).to_le_bytes());
        k
    }

    fn data(&self) -> &[u8] {
        if self.len <= LOOKUP_INLINE {
            &self.inline[..self.len]
        } else {
            &self.heap
        }
    }

    /// The memtable's entry-prefix form: length-prefixed internal key.
    pub fn memtable_key(&self) -> &[u8] {
        self.data()
    }

    pub fn internal_key(&self) -> &[u8] {
        &self.data()[self.key_start..]
    }

    pub fn user_key(&self) -> &[u8] {
        &self.data()[self.key_start..self.len - 8]
    }
}

/// The shortest user key `k` with `start <= k < limit` (LevelDB's `FindShortestSeparator` for
/// the bytewise comparator); returns `start` itself when no shorter one exists.
pub fn shortest_separator(start: &[u8], limit: &[u8]) -> Vec<u8> {
    let min_len = start.len().min(limit.len());
    let diff = start
        .iter()
        .zip(limit)
        .position(|(a, b)| a != b)
        .unwrap_or(min_len);
    if diff < min_len {
        let byte = start[diff];
        if byte < 0xff && byte + 1 < limit[diff] {
            let mut sep = start[..=diff].to_vec();
            sep[diff] += 1;
            return sep;
        }
    }
    start.to_vec()
}

/// The shortest user key `>= key` (LevelDB's `FindShortSuccessor`).
pub fn short_successor(key: &[u8]) -> Vec<u8> {
    for (i, &b) in key.iter().enumerate() {
        if b != 0xff {
            let mut succ = key[..=i].to_vec();
            succ[i] += 1;
            return succ;
        }
    }
    key.to_vec()
}

/// The internal-key form of [`shortest_separator`]: if the user key got shorter, it is given
/// the maximal trailer so it still sorts after every entry of `start`'s user key.
pub fn internal_shortest_separator(start: &[u8], limit: &[u8]) -> Vec<u8> {
    let user_start = extract_user_key(start);
    let user_limit = extract_user_key(limit);
    let sep = shortest_separator(user_start, user_limit);
    if sep.len() < user_start.len() && user_start < &sep[..] {
        make_internal_key(&sep, MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK)
    } else {
        start.to_vec()
    }
}

/// The internal-key form of [`short_successor`].
pub fn internal_short_successor(key: &[u8]) -> Vec<u8> {
    let user = extract_user_key(key);
    let succ = short_successor(user);
    if succ.len() < user.len() && user < &succ[..] {
        make_internal_key(&succ, MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK)
    } else {
        key.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::coding::{put_varint32, varint_length};

    #[test]
    fn compare_bytes_is_the_bytewise_order() {
        // Every pair of keys from 0 to 40 bytes, many sharing long prefixes (as numbered keys
        // do), and bytes at both ends of the range: the same order as `[u8]::cmp`.
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut keys: Vec<Vec<u8>> = Vec::new();
        for len in 0..=40usize {
            for _ in 0..6 {
                let fill = [0x00u8, 0x7F, 0x80, 0xFF][(next() % 4) as usize];
                let mut k = vec![fill; len];
                for _ in 0..(next() % 3) {
                    if len > 0 {
                        let at = (next() as usize) % len;
                        k[at] = next() as u8;
                    }
                }
                keys.push(k);
            }
        }
        let mut checked = 0;
        for a in &keys {
            for b in &keys {
                assert_eq!(compare_bytes(a, b), a.cmp(b), "{a:?} {b:?}");
                checked += 1;
            }
        }
        assert_eq!(checked, (41 * 6) * (41 * 6));
    }

    fn ik(k: &[u8], seq: u64, t: ValueType) -> Vec<u8> {
        make_internal_key(k, seq, t)
    }

    #[test]
    fn order_is_user_key_then_newest_first() {
        use ValueType::*;
        let mut keys = vec![
            ik(b"b", 1, Value),
            ik(b"a", 1, Value),
            ik(b"a", 5, Deletion),
            ik(b"a", 5, Value),
            ik(b"", 9, Value),
            ik(b"a\x00", 2, Value),
        ];
        keys.sort_by(|a, b| compare_internal_keys(a, b));
        assert_eq!(
            keys,
            vec![
                ik(b"", 9, Value),
                ik(b"a", 5, Value),
                ik(b"a", 5, Deletion),
                ik(b"a", 1, Value),
                ik(b"a\x00", 2, Value),
                ik(b"b", 1, Value),
            ]
        );
    }

    #[test]
    fn parse_round_trips_and_rejects_malformed() {
        let k = ik(b"hello", 0x00ab_cdef_0123_4567, ValueType::Deletion);
        assert_eq!(k[5..], [0x00, 0x67, 0x45, 0x23, 0x01, 0xef, 0xcd, 0xab]);
        let p = parse_internal_key(&k).unwrap();
        assert_eq!(p.user_key, b"hello");
        assert_eq!(p.sequence, 0x00ab_cdef_0123_4567);
        assert_eq!(p.value_type, ValueType::Deletion);
        assert_eq!(parse_internal_key(b"short"), None);
        let mut bad = k.clone();
        bad[5] = 7;
        assert_eq!(parse_internal_key(&bad), None);
        // Malformed keys still compare without panicking.
        assert_eq!(compare_internal_keys(b"ab", b"ab"), Ordering::Equal);
    }

    #[test]
    fn lookup_key_forms() {
        let lk = LookupKey::new(b"key", 42);
        assert_eq!(lk.user_key(), b"key");
        assert_eq!(lk.internal_key(), &ik(b"key", 42, ValueType::Value)[..]);
        assert_eq!(lk.memtable_key()[0], 11);
        assert_eq!(&lk.memtable_key()[1..], lk.internal_key());
        // Every size on both sides of the inline bound and of the varint's widths (a 1-byte
        // length up to 127, 2 bytes from 128): the same bytes as built in a vector.
        for n in (0..300).chain([16_375, 16_376, 70_000]) {
            let user: Vec<u8> = (0..n).map(|i| (i * 7 + n) as u8).collect();
            let seq = 0x00AB_CDEF_0123_4567 + n as u64;
            let lk = LookupKey::new(&user, seq);
            let mut want = Vec::new();
            put_varint32(&mut want, (n + 8) as u32);
            assert_eq!(want.len(), varint_length(n as u64 + 8));
            let start = want.len();
            append_internal_key(&mut want, &user, seq, VALUE_TYPE_FOR_SEEK);
            assert_eq!(lk.memtable_key(), &want[..], "user key of {n} bytes");
            assert_eq!(lk.internal_key(), &want[start..], "user key of {n} bytes");
            assert_eq!(lk.user_key(), &user[..], "user key of {n} bytes");
        }
    }

    #[test]
    fn separators_match_leveldb() {
        // From LevelDB's db/dbformat_test.cc.
        assert_eq!(shortest_separator(b"foo", b"foo"), b"foo");
        assert_eq!(shortest_separator(b"foo", b"bar"), b"foo");
        assert_eq!(shortest_separator(b"foo", b"hello"), b"g");
        assert_eq!(shortest_separator(b"foo", b"foobar"), b"foo");
        assert_eq!(shortest_separator(b"foobar", b"foo"), b"foobar");
        assert_eq!(shortest_separator(b"abc1xyz", b"abc3"), b"abc2");
        assert_eq!(short_successor(b"foo"), b"g");
        assert_eq!(short_successor(b"\xff\xff"), b"\xff\xff");
        assert_eq!(short_successor(b"\xff\x05"), b"\xff\x06");
        let sep = internal_shortest_separator(
            &ik(b"foo", 100, ValueType::Value),
            &ik(b"hello", 200, ValueType::Value),
        );
        assert_eq!(sep, ik(b"g", MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK));
        assert_eq!(
            internal_short_successor(&ik(b"foo", 100, ValueType::Value)),
            ik(b"g", MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK)
        );
    }
}
