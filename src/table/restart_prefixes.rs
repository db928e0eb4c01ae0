//! Restart prefixes: a block's restart keys reduced to one `u64` each, so a seek binary-searches
//! a dense array instead of reading a restart offset and then a key at that offset per step.
//! Built for index blocks, where every entry is a restart point (~500 in a 2 MiB table's index)
//! and a point lookup's search of a block that has left the CPU cache cost two cache misses per
//! step: db_bench's readmissing spent 12% of its time on the first byte of restart keys.
//!
//! A restart key's prefix is the 8 bytes of its user key after the bytes shared by every
//! restart key but the last, big-endian, zero-padded. The last is left out of the shared bytes
//! because an index block's last key is a short successor (LevelDB's `FindShortSuccessor`
//! turns `0000000000095238` into `1`) that would otherwise leave nothing shared. A last key
//! without the shared bytes follows every key with them and gets `u64::MAX`. User keys order
//! bytewise, so for sorted restart keys the prefixes never decrease, and a prefix below the
//! target's means a smaller user key, one above it a larger user key: only the restart points
//! whose prefix equals the target's need their keys compared. A target without the shared
//! bytes searches as prefix 0 (it precedes them) or `u64::MAX` (it follows them).
//! `RestartPrefixes::build` refuses keys out of order (a damaged block keeps the plain search
//! and reports its damage there).

use std::cmp::Ordering;

use crate::key::{compare_internal_keys, extract_user_key};

/// One `u64` per restart point, and the user-key bytes all restart keys share.
pub struct RestartPrefixes {
    shared: Box<[u8]>,
    prefixes: Box<[u64]>,
}

/// The 8 bytes of `suffix` from its start, big-endian, zero-padded.
fn prefix_of(suffix: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    let n = suffix.len().min(8);
    w[..n].copy_from_slice(&suffix[..n]);
    u64::from_be_bytes(w)
}

impl RestartPrefixes {
    /// Prefixes of `keys`, the block's restart keys (internal keys) in order; `None` if one is
    /// missing (damaged) or they are out of order.
    pub fn build<'a>(keys: impl Iterator<Item = Option<&'a [u8]>>) -> Option<RestartPrefixes> {
        let keys: Vec<&[u8]> = keys.collect::<Option<_>>()?;
        if keys
            .windows(2)
            .any(|w| compare_internal_keys(w[0], w[1]) == Ordering::Greater)
        {
            return None;
        }
        let first = extract_user_key(keys.first()?);
        let sharing = &keys[..keys.len().saturating_sub(1).max(1)];
        let shared_len = sharing.iter().fold(first.len(), |n, k| {
            let u = extract_user_key(k);
            n.min(first.iter().zip(u).take_while(|(a, b)| a == b).count())
        });
        let shared = &first[..shared_len];
        let prefixes = keys
            .iter()
            .map(|k| match extract_user_key(k).strip_prefix(shared) {
                Some(rest) => prefix_of(rest),
                // Only the last key can lack the shared bytes: it follows every key with them.
                None => u64::MAX,
            })
            .collect();
        Some(RestartPrefixes {
            shared: shared.into(),
            prefixes,
        })
    }

    /// The restart points `[lo, hi)` whose keys may hold `target`'s user key: every restart key
    /// before `lo` is smaller than `target` (an internal key), every one from `hi` on larger.
    pub fn candidates(&self, target: &[u8]) -> (usize, usize) {
        let user = extract_user_key(target);
        let p = match user.strip_prefix(&*self.shared) {
            Some(rest) => prefix_of(rest),
            // Without the shared bytes the target precedes or follows every key with them.
            None if user < &*self.shared => 0,
            None => u64::MAX,
        };
        let lo = self.prefixes.partition_point(|&x| x < p);
        let hi = lo + self.prefixes[lo..].partition_point(|&x| x == p);
        (lo, hi)
    }

    /// Heap bytes held.
    pub fn size(&self) -> usize {
        self.shared.len() + 8 * self.prefixes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{make_internal_key, ValueType};

    fn ikey(user: &[u8], seq: u64) -> Vec<u8> {
        make_internal_key(user, seq, ValueType::Value)
    }

    /// The candidates bracket exactly the restart keys a full comparison cannot place.
    fn check(keys: &[Vec<u8>], target: &[u8]) {
        let rp = RestartPrefixes::build(keys.iter().map(|k| Some(k.as_slice()))).unwrap();
        let (lo, hi) = rp.candidates(target);
        assert!(lo <= hi && hi <= keys.len());
        for (i, k) in keys.iter().enumerate() {
            let ord = compare_internal_keys(k, target);
            if i < lo {
                assert_eq!(ord, Ordering::Less, "key {i} before lo {lo}");
            } else if i >= hi {
                assert_eq!(ord, Ordering::Greater, "key {i} from hi {hi}");
            }
        }
    }

    #[test]
    fn candidates_bracket_the_keys_a_comparison_needs() {
        // An index block of db_bench's keys: 16 digits, separators between blocks, and the
        // last key the short successor `1`, which shares nothing with the others.
        let mut keys: Vec<Vec<u8>> = (0..300u64)
            .map(|i| ikey(format!("{:016}", 40_000 + i * 7).as_bytes(), 1000 - i))
            .collect();
        keys.push(ikey(b"1", u64::MAX >> 8));
        let rp = RestartPrefixes::build(keys.iter().map(|k| Some(k.as_slice()))).unwrap();
        assert_eq!(&*rp.shared, b"000000000004");
        assert_eq!(rp.size(), 12 + 8 * 301);
        assert_eq!(rp.prefixes[300], u64::MAX);
        let mut compared = 0;
        for u in 39_990..42_200u64 {
            for seq in [0, 500, 1000, u64::MAX >> 8] {
                let t = ikey(format!("{:016}", u).as_bytes(), seq);
                check(&keys, &t);
                let (lo, hi) = rp.candidates(&t);
                compared += hi - lo;
            }
        }
        // Only a target whose user key is a restart key's has one to compare.
        assert_eq!(compared, 300 * 4);
        // Targets without the shared bytes, shorter than them, empty, and longer keys.
        for t in [
            &b""[..],
            b"0",
            b"00000000000",
            b"000000000000",
            b"1",
            b"10",
            b"/",
            b"0000000000004",
        ] {
            check(&keys, &ikey(t, 5));
        }
        assert_eq!(rp.candidates(&ikey(b"2", 5)), (300, 301));
        assert_eq!(rp.candidates(&ikey(b"1", 5)), (300, 301));
        assert_eq!(rp.candidates(&ikey(b"/", 5)), (0, 0));
        assert_eq!(rp.candidates(&ikey(b"0000000000", 5)), (0, 0));
        // An exact restart key: its own slot, compared in full.
        assert_eq!(rp.candidates(&keys[17]), (17, 18));
    }

    #[test]
    fn equal_prefixes_leave_a_range_to_compare() {
        // Binary keys sharing nothing, equal in their first 8 bytes for runs (Bedrock-like:
        // chunk x and z, then a tag), plus a user key that is a prefix of the next.
        let mut users: Vec<Vec<u8>> = Vec::new();
        for x in [-3i32, 0, 5] {
            for tag in [44u8, 45, 47, 118] {
                let mut k = x.to_le_bytes().to_vec();
                k.extend_from_slice(&7i32.to_le_bytes());
                k.push(tag);
                users.push(k);
            }
        }
        users.sort();
        users.insert(0, vec![0, 0]);
        users.insert(1, vec![0, 0, 0]);
        let keys: Vec<Vec<u8>> = users.iter().map(|u| ikey(u, 9)).collect();
        let rp = RestartPrefixes::build(keys.iter().map(|k| Some(k.as_slice()))).unwrap();
        assert!(rp.shared.is_empty());
        let (lo, hi) = rp.candidates(&keys[3]);
        assert_eq!(hi - lo, 4, "four tags of one chunk share the prefix");
        for u in &users {
            for extra in [&[][..], &[0u8], &[200u8]] {
                let mut t = u.clone();
                t.extend_from_slice(extra);
                for seq in [0, 9, 10] {
                    check(&keys, &ikey(&t, seq));
                }
            }
        }
        for t in [&[][..], &[0u8], &[255u8; 20]] {
            check(&keys, &ikey(t, 1));
        }
    }

    #[test]
    fn keys_out_of_order_or_missing_build_nothing() {
        let a = ikey(b"apple", 1);
        let b = ikey(b"banana", 1);
        assert!(RestartPrefixes::build([Some(&b[..]), Some(&a[..])].into_iter()).is_none());
        assert!(RestartPrefixes::build([Some(&a[..]), None].into_iter()).is_none());
        assert!(RestartPrefixes::build(std::iter::empty()).is_none());
        // Same user key, sequence numbers descending: in order.
        let (a9, a3) = (ikey(b"apple", 9), ikey(b"apple", 3));
        assert!(RestartPrefixes::build([Some(&a9[..]), Some(&a3[..])].into_iter()).is_some());
        assert!(RestartPrefixes::build([Some(&a3[..]), Some(&a9[..])].into_iter()).is_none());
    }
}
