//! LevelDB's byte coding: fixed-width little-endian integers, base-128 varints and
//! length-prefixed slices.
//!
//! Decoders never panic on short or malformed input: they return `None` and the caller turns
//! that into a `Corruption` error with its own context (file, offset).

/// Appends `v` as 4 little-endian bytes.
pub fn put_fixed32(dst: &mut Vec<u8>, v: u32) {
    dst.extend_from_slice(&v.to_le_bytes());
}

/// Appends `v` as 8 little-endian bytes.
pub fn put_fixed64(dst: &mut Vec<u8>, v: u64) {
    dst.extend_from_slice(&v.to_le_bytes());
}

/// Reads a little-endian u32 from the first 4 bytes of `src` (which must hold at least 4).
#[inline]
pub fn decode_fixed32(src: &[u8]) -> u32 {
    u32::from_le_bytes([src[0], src[1], src[2], src[3]])
}

/// Reads a little-endian u64 from the first 8 bytes of `src` (which must hold at least 8).
#[inline]
pub fn decode_fixed64(src: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&src[..8]);
    u64::from_le_bytes(b)
}

/// Appends `v` as a varint (1 to 5 bytes).
pub fn put_varint32(dst: &mut Vec<u8>, v: u32) {
    put_varint64(dst, v as u64)
}

/// Writes `v` as a varint into `dst` (LevelDB's `EncodeVarint32`); returns its length (1 to 5).
pub fn encode_varint32(dst: &mut [u8; 5], mut v: u32) -> usize {
    let mut n = 0;
    while v >= 0x80 {
        dst[n] = (v as u8) | 0x80;
        v >>= 7;
        n += 1;
    }
    dst[n] = v as u8;
    n + 1
}

/// Appends `v` as a varint (1 to 10 bytes).
pub fn put_varint64(dst: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        dst.push((v as u8) | 0x80);
        v >>= 7;
    }
    dst.push(v as u8);
}

/// Number of bytes `put_varint64(v)` writes.
pub fn varint_length(mut v: u64) -> usize {
    let mut len = 1;
    while v >= 0x80 {
        v >>= 7;
        len += 1;
    }
    len
}

/// Appends a varint32 length followed by the bytes of `s`.
pub fn put_length_prefixed_slice(dst: &mut Vec<u8>, s: &[u8]) {
    put_varint32(dst, s.len() as u32);
    dst.extend_from_slice(s);
}

/// Decodes a varint32 at the start of `src`: `(value, bytes consumed)`.
#[inline]
pub fn get_varint32(src: &[u8]) -> Option<(u32, usize)> {
    // Fast path: one byte.
    if let Some(&b) = src.first() {
        if b < 0x80 {
            return Some((b as u32, 1));
        }
    }
    let mut result: u32 = 0;
    for (i, &byte) in src.iter().enumerate().take(5) {
        let shift = 7 * i as u32;
        if byte & 0x80 != 0 {
            result |= ((byte & 0x7f) as u32) << shift;
        } else {
            if i == 4 && byte > 0x0f {
                return None; // overflows 32 bits
            }
            result |= (byte as u32) << shift;
            return Some((result, i + 1));
        }
    }
    None
}

/// Decodes a varint64 at the start of `src`: `(value, bytes consumed)`.
pub fn get_varint64(src: &[u8]) -> Option<(u64, usize)> {
    let mut result: u64 = 0;
    for (i, &byte) in src.iter().enumerate().take(10) {
        let shift = 7 * i as u32;
        if byte & 0x80 != 0 {
            result |= ((byte & 0x7f) as u64) << shift;
        } else {
            if i == 9 && byte > 0x01 {
                return None; // overflows 64 bits
            }
            result |= (byte as u64) << shift;
            return Some((result, i + 1));
        }
    }
    None
}

/// A cursor over a byte slice for decoding records (VersionEdit, WriteBatch).
pub struct Decoder<'a> {
    buf: &'a [u8],
}

impl<'a> Decoder<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Decoder { buf }
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    pub fn remaining(&self) -> &'a [u8] {
        self.buf
    }

    pub fn varint32(&mut self) -> Option<u32> {
        let (v, n) = get_varint32(self.buf)?;
        self.buf = &self.buf[n..];
        Some(v)
    }

    pub fn varint64(&mut self) -> Option<u64> {
        let (v, n) = get_varint64(self.buf)?;
        self.buf = &self.buf[n..];
        Some(v)
    }

    pub fn fixed32(&mut self) -> Option<u32> {
        let b = self.bytes(4)?;
        Some(decode_fixed32(b))
    }

    pub fn fixed64(&mut self) -> Option<u64> {
        let b = self.bytes(8)?;
        Some(decode_fixed64(b))
    }

    pub fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.buf.split_first()?;
        self.buf = rest;
        Some(b)
    }

    pub fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.buf.len() < n {
            return None;
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Some(head)
    }

    pub fn length_prefixed(&mut self) -> Option<&'a [u8]> {
        let n = self.varint32()? as usize;
        self.bytes(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_round_trip_at_every_width() {
        let mut values: Vec<u64> = vec![0, 1, 127, 128, 255, 300, 16383, 16384];
        for shift in 0..64 {
            values.push(1u64 << shift);
            values.push((1u64 << shift) - 1);
        }
        values.push(u64::MAX);
        for &v in &values {
            let mut buf = Vec::new();
            put_varint64(&mut buf, v);
            assert_eq!(buf.len(), varint_length(v));
            assert_eq!(get_varint64(&buf), Some((v, buf.len())));
            if v <= u32::MAX as u64 {
                assert_eq!(get_varint32(&buf), Some((v as u32, buf.len())));
                let mut fixed = [0u8; 5];
                let n = encode_varint32(&mut fixed, v as u32);
                assert_eq!(&fixed[..n], &buf[..], "{v}");
            } else {
                assert_eq!(get_varint32(&buf), None);
            }
        }
    }

    #[test]
    fn truncated_and_overlong_varints_are_rejected() {
        assert_eq!(get_varint32(&[]), None);
        assert_eq!(get_varint32(&[0x80]), None);
        assert_eq!(get_varint32(&[0xff, 0xff, 0xff, 0xff, 0xff, 0x01]), None);
        assert_eq!(get_varint64(&[0xff; 11]), None);
        assert_eq!(get_varint64(&[0x80, 0x80]), None);
    }

    #[test]
    fn fixed_width_is_little_endian() {
        let mut buf = Vec::new();
        put_fixed32(&mut buf, 0x04030201);
        put_fixed64(&mut buf, 0x0c0b0a0908070605);
        assert_eq!(buf, (1u8..=12).collect::<Vec<_>>());
        assert_eq!(decode_fixed32(&buf), 0x04030201);
        assert_eq!(decode_fixed64(&buf[4..]), 0x0c0b0a0908070605);
    }

    #[test]
    fn decoder_stops_at_the_end() {
        let mut buf = Vec::new();
        put_length_prefixed_slice(&mut buf, b"abc");
        let mut d = Decoder::new(&buf);
        assert_eq!(d.length_prefixed(), Some(&b"abc"[..]));
        assert!(d.is_empty());
        assert_eq!(d.byte(), None);
        let mut d = Decoder::new(&[5, b'a']);
        assert_eq!(d.length_prefixed(), None);
    }
}
