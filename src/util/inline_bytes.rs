//! A byte string held inline when short: a copy kept per step of a scan (the merged
//! iterator's copy of each child's key, the DB iterator's key to skip) costs neither an
//! allocation nor a call to `memmove`. `Vec::extend_from_slice` of a slice whose length is
//! known only at run time calls `memmove` (a 16- or 24-byte key: the call and its size
//! dispatch cost more than the copy); `copy_short` copies up to 32 bytes with two fixed-size,
//! possibly overlapping moves instead.
//!
//! Invariants: `get` returns exactly the bytes last `set` (empty when new or cleared); a value
//! longer than `N` lives in `spilled`, whose capacity is kept for the next long one.

/// Copies `src` to the start of `dst` (`dst.len() >= src.len()`): at most two fixed-size
/// moves for up to 32 bytes (overlapping when the length is not a power of two), a plain
/// copy beyond.
#[inline(always)]
pub fn copy_short(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    if n > 32 {
        dst[..n].copy_from_slice(src);
    } else if n >= 16 {
        dst[..16].copy_from_slice(&src[..16]);
        dst[n - 16..n].copy_from_slice(&src[n - 16..]);
    } else if n >= 8 {
        dst[..8].copy_from_slice(&src[..8]);
        dst[n - 8..n].copy_from_slice(&src[n - 8..]);
    } else if n >= 4 {
        dst[..4].copy_from_slice(&src[..4]);
        dst[n - 4..n].copy_from_slice(&src[n - 4..]);
    } else {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = *s;
        }
    }
}

/// Up to `N` bytes inline, longer ones in a kept `Vec`.
#[derive(Clone)]
pub struct InlineBytes<const N: usize> {
    len: usize,
    inline: [u8; N],
    spilled: Vec<u8>,
}

impl<const N: usize> Default for InlineBytes<N> {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl<const N: usize> InlineBytes<N> {
    pub const EMPTY: Self = InlineBytes {
        len: 0,
        inline: [0; N],
        spilled: Vec::new(),
    };

    /// Holds a copy of `bytes` from now on.
    #[inline(always)]
    pub fn set(&mut self, bytes: &[u8]) {
        self.len = bytes.len();
        if bytes.len() <= N {
            copy_short(&mut self.inline, bytes);
        } else {
            self.spilled.clear();
            self.spilled.extend_from_slice(bytes);
        }
    }

    /// Holds nothing (an empty string).
    #[inline(always)]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    #[inline(always)]
    pub fn get(&self) -> &[u8] {
        match self.inline.get(..self.len) {
            Some(inline) => inline,
            None => &self.spilled,
        }
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_short_copies_every_length_exactly() {
        let src: Vec<u8> = (1..=80).collect();
        for n in 0..=80 {
            let mut dst = [0xAAu8; 96];
            copy_short(&mut dst, &src[..n]);
            assert_eq!(&dst[..n], &src[..n], "length {n}");
            assert!(
                dst[n..].iter().all(|&b| b == 0xAA),
                "length {n} wrote past its end"
            );
        }
    }

    #[test]
    fn holds_the_last_value_set_inline_or_spilled() {
        let mut b: InlineBytes<24> = InlineBytes::EMPTY;
        assert_eq!(b.get(), b"");
        assert!(b.is_empty());
        let long: Vec<u8> = (0..100).collect();
        for n in [0usize, 1, 7, 16, 24, 25, 100, 3, 24, 60, 0] {
            b.set(&long[..n]);
            assert_eq!(b.get(), &long[..n]);
            assert_eq!(b.is_empty(), n == 0);
        }
        b.set(b"abc");
        b.clear();
        assert_eq!(b.get(), b"");
    }
}
