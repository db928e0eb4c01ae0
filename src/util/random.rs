//! Deterministic pseudo-random numbers for tests, benchmarks and the skiplist: LevelDB's
//! Park–Miller generator (util/random.h), so sequences are reproducible from a printed seed.

/// A simple multiplicative PRNG (period 2^31 - 2). Not for cryptography.
#[derive(Clone, Debug)]
pub struct Random {
    seed: u32,
}

impl Random {
    pub fn new(seed: u32) -> Self {
        let mut s = seed & 0x7fff_ffff;
        if s == 0 || s == 2_147_483_647 {
            s = 1;
        }
        Random { seed: s }
    }

    /// Next value in [1, 2^31 - 2].
    pub fn next_u32(&mut self) -> u32 {
        const M: u64 = 2_147_483_647;
        const A: u64 = 16807;
        let product = self.seed as u64 * A;
        let mut s = ((product >> 31) + (product & M)) as u32;
        if s as u64 > M {
            s -= M as u32;
        }
        self.seed = s;
        s
    }

    /// Uniform in [0, n).
    pub fn uniform(&mut self, n: u32) -> u32 {
        self.next_u32() % n.max(1)
    }

    /// True about once every `n` calls.
    pub fn one_in(&mut self, n: u32) -> bool {
        self.uniform(n) == 0
    }

    /// Picks a "base" in [0, max_log] then a value in [0, 2^base): skewed towards small values.
    pub fn skewed(&mut self, max_log: u32) -> u32 {
        let base = self.uniform(max_log + 1);
        self.uniform(1 << base)
    }

    /// A 64-bit value from two draws.
    pub fn next_u64(&mut self) -> u64 {
        ((self.next_u32() as u64) << 33) ^ ((self.next_u32() as u64) << 11) ^ self.next_u32() as u64
    }

    /// Fills `buf` with random bytes.
    pub fn fill(&mut self, buf: &mut [u8]) {
        for b in buf {
            *b = self.next_u32() as u8;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Random;

    #[test]
    fn sequence_is_reproducible_and_in_range() {
        let mut a = Random::new(301);
        let mut b = Random::new(301);
        for _ in 0..1000 {
            let x = a.next_u32();
            assert_eq!(x, b.next_u32());
            assert!((1..2_147_483_647).contains(&x));
        }
        // Park–Miller with seed 1: the first value is the multiplier itself.
        assert_eq!(Random::new(1).next_u32(), 16807);
        assert_eq!(Random::new(0).next_u32(), 16807);
    }
}
