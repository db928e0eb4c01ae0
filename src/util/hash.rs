//! LevelDB's 32-bit hash (util/hash.cc), a Murmur-like function. The bloom filter's bit
//! positions depend on it, so it must match byte for byte.

/// LevelDB's `Hash(data, n, seed)`.
pub fn hash(data: &[u8], seed: u32) -> u32 {
    const M: u32 = 0xc6a4_a793;
    const R: u32 = 24;
    let mut h = seed ^ (data.len() as u32).wrapping_mul(M);
    let mut chunks = data.chunks_exact(4);
    for w in &mut chunks {
        h = h.wrapping_add(u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
        h = h.wrapping_mul(M);
        h ^= h >> 16;
    }
    let rest = chunks.remainder();
    // The C++ switch falls through from 3 to 2 to 1; bytes are sign-extended chars in the
    // original only on platforms with signed char, but LevelDB casts to uint8_t first.
    if rest.len() == 3 {
        h = h.wrapping_add((rest[2] as u32) << 16);
    }
    if rest.len() >= 2 {
        h = h.wrapping_add((rest[1] as u32) << 8);
    }
    if !rest.is_empty() {
        h = h.wrapping_add(rest[0] as u32);
        h = h.wrapping_mul(M);
        h ^= h >> R;
    }
    h
}

#[cfg(test)]
mod tests {
    use super::hash;

    #[test]
    fn matches_leveldb_hash_test_vectors() {
        // From LevelDB's util/hash_test.cc (SignedUnsignedIssue).
        assert_eq!(hash(&[], 0xbc9f1d34), 0xbc9f1d34);
        assert_eq!(hash(&[0x62], 0xbc9f1d34), 0xef1345c4);
        assert_eq!(hash(&[0xc3, 0x97], 0xbc9f1d34), 0x5b663814);
        assert_eq!(hash(&[0xe2, 0x99, 0xa5], 0xbc9f1d34), 0x323c078f);
        assert_eq!(hash(&[0xe1, 0x80, 0xb9, 0x32], 0xbc9f1d34), 0xed21633a);
        let data: [u8; 48] = [
            0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //
            0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, //
            0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00, //
            0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //
        ];
        assert_eq!(hash(&data, 0x12345678), 0xf333dabb);
    }
}
