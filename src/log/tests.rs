//! Log writer/reader round trips and damage handling.

use super::*;
use crate::error::ErrorKind;
use crate::storage::{MemStorage, Storage};
use crate::util::random::Random;

fn write_log(records: &[Vec<u8>]) -> (MemStorage, Vec<u8>) {
    let s = MemStorage::new();
    let mut w = Writer::new(s.create("log").unwrap());
    for r in records {
        w.add_record(r).unwrap();
    }
    w.sync().unwrap();
    let bytes = s.contents("log").unwrap();
    (s, bytes)
}

fn read_back(bytes: &[u8], strict: bool) -> crate::Result<Vec<Vec<u8>>> {
    let s = MemStorage::new();
    crate::storage::write_all(&s, "log", bytes).unwrap();
    let mut r = Reader::new(s.open_random("log").unwrap(), "000001.log", true, strict);
    let mut out = Vec::new();
    let mut rec = Vec::new();
    while r.read_record(&mut rec)? {
        out.push(rec.clone());
    }
    Ok(out)
}

fn sample_records() -> Vec<Vec<u8>> {
    let mut rng = Random::new(99);
    let mut recs = Vec::new();
    for i in 0..200usize {
        let len = match i % 5 {
            0 => 0,
            1 => rng.uniform(100) as usize,
            2 => BLOCK_SIZE - HEADER_SIZE, // exactly one block
            3 => rng.uniform(3 * BLOCK_SIZE as u32) as usize,
            _ => BLOCK_SIZE - HEADER_SIZE - 3, // leaves a trailer shorter than a header
        };
        let mut r = vec![0u8; len];
        rng.fill(&mut r);
        recs.push(r);
    }
    recs
}

#[test]
fn round_trip_across_block_boundaries() {
    let recs = sample_records();
    let (_, bytes) = write_log(&recs);
    assert_eq!(read_back(&bytes, true).unwrap(), recs);
}

#[test]
fn header_layout_matches_leveldb() {
    let (_, bytes) = write_log(&[b"foo".to_vec()]);
    assert_eq!(bytes.len(), HEADER_SIZE + 3);
    let crc = crate::util::crc::mask(crate::util::crc::value(b"\x01foo"));
    assert_eq!(&bytes[..4], &crc.to_le_bytes());
    assert_eq!(&bytes[4..7], &[3, 0, 1]);
}

#[test]
fn torn_tail_is_dropped_silently_at_every_cut() {
    let recs: Vec<Vec<u8>> = (0..6u8).map(|i| vec![i; 20_000]).collect();
    let (_, bytes) = write_log(&recs);
    // Record boundaries: every prefix ending at a boundary yields exactly the records before it.
    let mut ends = Vec::new();
    {
        let s = MemStorage::new();
        let mut w = Writer::new(s.create("log").unwrap());
        for r in &recs {
            w.add_record(r).unwrap();
            ends.push(s.contents("log").unwrap().len());
        }
    }
    for cut in (0..bytes.len()).step_by(997).chain([bytes.len() - 1]) {
        let got = read_back(&bytes[..cut], true).unwrap();
        let complete = ends.iter().filter(|&&e| e <= cut).count();
        assert_eq!(got, recs[..complete].to_vec(), "cut at {cut}");
    }
}

#[test]
fn a_flipped_byte_is_corruption_in_strict_mode_and_skipped_otherwise() {
    let recs: Vec<Vec<u8>> = (0..10u8).map(|i| vec![i; 1000]).collect();
    let (_, bytes) = write_log(&recs);
    // Damage the payload of record 3.
    let mut bad = bytes.clone();
    let off = 3 * (HEADER_SIZE + 1000) + HEADER_SIZE + 10;
    bad[off] ^= 0x40;
    let err = read_back(&bad, true).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corruption);
    assert_eq!(err.file(), Some("000001.log"));
    assert_eq!(err.offset(), Some(3 * (HEADER_SIZE as u64 + 1000)));
    // Skip mode drops the rest of the damaged block (all records share block 0 here).
    assert_eq!(read_back(&bad, false).unwrap(), recs[..3].to_vec());
}

#[test]
fn damage_in_a_later_block_keeps_earlier_blocks() {
    let recs: Vec<Vec<u8>> = (0..8u8).map(|i| vec![i; 10_000]).collect();
    let (_, bytes) = write_log(&recs);
    let mut bad = bytes.clone();
    bad[BLOCK_SIZE + 100] ^= 1;
    assert!(read_back(&bad, true).unwrap_err().is_corruption());
    let got = read_back(&bad, false).unwrap();
    assert!(got.len() < recs.len());
    // Everything returned is a real record, in order.
    let mut i = 0;
    for g in &got {
        while recs[i] != *g {
            i += 1;
        }
    }
}

#[test]
fn zero_filled_tail_is_not_damage() {
    let recs = vec![b"alpha".to_vec(), b"beta".to_vec()];
    let (_, mut bytes) = write_log(&recs);
    bytes.extend_from_slice(&[0u8; 5000]);
    assert_eq!(read_back(&bytes, true).unwrap(), recs);
}

fn read_back_wal(bytes: &[u8]) -> crate::Result<Vec<Vec<u8>>> {
    let s = MemStorage::new();
    crate::storage::write_all(&s, "log", bytes).unwrap();
    let mut r =
        Reader::new(s.open_random("log").unwrap(), "000001.log", true, true).ending_at_holes();
    let mut out = Vec::new();
    let mut rec = Vec::new();
    while r.read_record(&mut rec)? {
        out.push(rec.clone());
    }
    Ok(out)
}

/// Replaying a write-ahead log (`Reader::ending_at_holes`): a power cut can keep any subset of
/// the sectors a synced writer wrote into its zeros (`storage::fs`) since the last sync. A
/// record with a lost sector, or a fragment whose start lay in zero-filled space, is where the
/// log ends, so the replay stays a prefix. Damage without a lost sector is still corruption,
/// and so is every hole read as a MANIFEST is (no zeros are ever put ahead of one).
#[test]
fn a_replayed_log_ends_at_its_first_hole() {
    let recs: Vec<Vec<u8>> = vec![
        b"first record".to_vec(),
        vec![0x5Au8; 3000],
        vec![0x3Cu8; 40_000],
        vec![0x77u8; 2000],
    ];
    let (_, bytes) = write_log(&recs);
    let mut padded = bytes.clone();
    padded.resize(4 * BLOCK_SIZE, 0);
    assert_eq!(read_back_wal(&padded).unwrap(), recs);
    assert_eq!(read_back(&padded, true).unwrap(), recs);

    // The second record lost a sector in its middle; the records after it reached the disk.
    let second = HEADER_SIZE + recs[0].len();
    let lost = (second + 1000).div_ceil(512) * 512;
    let mut hole = padded.clone();
    hole[lost..lost + 512].fill(0);
    assert_eq!(read_back_wal(&hole).unwrap(), recs[..1].to_vec());
    // A file whose size is not a block boundary was never extended: there, as in a MANIFEST,
    // the same bytes are corruption (a zero sector inside a record is data).
    let err = read_back_wal(&hole[..bytes.len()]).unwrap_err();
    assert!(err.is_corruption());
    let err = read_back(&hole, true).unwrap_err();
    assert!(err.is_corruption());
    assert_eq!(err.offset(), Some(second as u64));

    // The sector holding the fourth record's header lost (with the end of the third, which
    // shares it), the rest of the fourth kept: the log ends after the second record.
    let fourth = bytes.len() - recs[3].len() - HEADER_SIZE;
    let sector = fourth / 512 * 512;
    assert!(
        sector < fourth,
        "the sector also holds the third record's end"
    );
    let mut hole = padded.clone();
    hole[sector..sector + 512].fill(0);
    assert!(hole[sector + 512..bytes.len()].iter().any(|&b| b != 0));
    assert_eq!(read_back_wal(&hole).unwrap(), recs[..2].to_vec());

    // A header across a sector boundary whose first bytes (in the sector before) were lost.
    let third = second + HEADER_SIZE + recs[1].len();
    let (_, shifted) = write_log(&[vec![0x11u8; 512 - 3 - HEADER_SIZE], vec![0x22u8; 900]]);
    assert_eq!(shifted.len(), 512 - 3 + HEADER_SIZE + 900);
    let mut hole = shifted.clone();
    hole.resize(BLOCK_SIZE, 0);
    hole[509..512].fill(0);
    assert_eq!(read_back_wal(&hole).unwrap(), vec![vec![0x11u8; 502]]);

    // A torn last record, its last sectors zeros like the space after it.
    let mut torn = padded.clone();
    torn[(bytes.len() - 700) / 512 * 512..bytes.len()].fill(0);
    assert_eq!(read_back_wal(&torn).unwrap(), recs[..3].to_vec());

    // The third record's first fragment in zero-filled space (lost), its later fragments
    // kept: they cannot be joined, and the log ends after the second record.
    let mut hole = padded.clone();
    hole[third..BLOCK_SIZE].fill(0);
    assert_eq!(read_back_wal(&hole).unwrap(), recs[..2].to_vec());

    // A flipped byte (no lost sector) is corruption.
    let mut bad = padded.clone();
    bad[second + 1500] ^= 1;
    let err = read_back_wal(&bad).unwrap_err();
    assert!(err.is_corruption());
    assert_eq!(err.offset(), Some(second as u64));

    // So is a damaged length, zeros after it or not: the checksum matches the shorter payload.
    let mut bad = bytes[..third].to_vec();
    bad.resize(2 * BLOCK_SIZE, 0);
    bad[second + 4..second + 6].copy_from_slice(&4000u16.to_le_bytes());
    let err = read_back_wal(&bad).unwrap_err();
    assert!(err.is_corruption());
    assert_eq!(err.offset(), Some(second as u64));
}

/// In a log a synced writer extended, whole records after zero-filled space are read on
/// (LevelDB skips such space too, and a peer reopening the log to append writes after it),
/// flagged for the caller.
#[test]
fn records_after_zero_filled_space_are_read_and_flagged() {
    let (_, first) = write_log(&[b"before the zeros".to_vec()]);
    let (_, second) = write_log(&[b"appended after them".to_vec(), b"and more".to_vec()]);
    let mut log = first.clone();
    log.resize(2 * BLOCK_SIZE, 0);
    log.extend_from_slice(&second);
    // Zeros to a block boundary after them: a log a synced writer extended.
    log.resize(3 * BLOCK_SIZE, 0);
    let s = MemStorage::new();
    crate::storage::write_all(&s, "log", &log).unwrap();
    let mut r =
        Reader::new(s.open_random("log").unwrap(), "000001.log", true, true).ending_at_holes();
    let mut rec = Vec::new();
    let mut flags = Vec::new();
    while r.read_record(&mut rec).unwrap() {
        flags.push((rec.clone(), r.last_record_after_zeros()));
    }
    assert_eq!(
        flags,
        vec![
            (b"before the zeros".to_vec(), false),
            (b"appended after them".to_vec(), true),
            (b"and more".to_vec(), false),
        ]
    );
}

#[test]
fn random_damage_never_panics() {
    let recs = sample_records();
    let (_, bytes) = write_log(&recs[..40]);
    let mut rng = Random::new(5);
    for _ in 0..300 {
        let mut bad = bytes.clone();
        for _ in 0..1 + rng.uniform(3) {
            let i = rng.uniform(bad.len() as u32) as usize;
            bad[i] = rng.next_u32() as u8;
        }
        if rng.one_in(3) {
            let cut = rng.uniform(bad.len() as u32) as usize;
            bad.truncate(cut);
        }
        let _ = read_back(&bad, true);
        let _ = read_back(&bad, false).unwrap();
    }
}

#[test]
fn a_damaged_length_in_the_last_record_is_not_mistaken_for_a_torn_write() {
    let recs = vec![b"first record".to_vec(), b"the last record".to_vec()];
    let (_, bytes) = write_log(&recs);
    let last = HEADER_SIZE + recs[0].len();
    let mut bad = bytes.clone();
    bad[last + 4] = 200; // length 15 -> 200, past the end of the file
    let err = read_back(&bad, true).unwrap_err();
    assert!(err.is_corruption());
    assert_eq!(err.offset(), Some(last as u64));
    // A real torn write of the same record is still dropped silently.
    assert_eq!(
        read_back(&bytes[..bytes.len() - 3], true).unwrap(),
        recs[..1].to_vec()
    );
}
