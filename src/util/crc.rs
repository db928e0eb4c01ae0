//! CRC-32C (Castagnoli) as LevelDB stores it: checksums kept inside data that is itself
//! checksummed are "masked" so that a CRC of a CRC is not degenerate.

/// CRC-32C of `data` (initial 0, the usual `crc32c()`).
#[inline]
pub fn value(data: &[u8]) -> u32 {
    crc32c::crc32c(data)
}

/// Continues `crc` over `data` as if the two inputs were concatenated.
#[inline]
pub fn extend(crc: u32, data: &[u8]) -> u32 {
    crc32c::crc32c_append(crc, data)
}

const MASK_DELTA: u32 = 0xa282_ead8;

/// `((crc >> 15) | (crc << 17)) + 0xa282ead8`, as LevelDB writes it.
#[inline]
pub fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

/// Inverse of [`mask`].
#[inline]
pub fn unmask(masked: u32) -> u32 {
    masked.wrapping_sub(MASK_DELTA).rotate_left(15)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_vectors() {
        // From LevelDB's util/crc32c_test.cc.
        assert_eq!(value(&[0u8; 32]), 0x8a91_36aa);
        assert_eq!(value(&[0xffu8; 32]), 0x62a8_ab43);
        let ascending: Vec<u8> = (0..32).collect();
        assert_eq!(value(&ascending), 0x46dd_794e);
        assert_eq!(value(b"123456789"), 0xe306_9283);
        assert_eq!(extend(value(b"hello "), b"world"), value(b"hello world"));
    }

    #[test]
    fn mask_round_trips_and_changes_the_value() {
        let crc = value(b"foo");
        assert_ne!(mask(crc), crc);
        assert_ne!(mask(mask(crc)), crc);
        assert_eq!(unmask(mask(crc)), crc);
        assert_eq!(unmask(unmask(mask(mask(crc)))), crc);
    }
}
