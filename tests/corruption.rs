//! Hostile input: damaged copies of a real world and decompression bombs. Every run ends in
//! either the exact data or a `Corruption` error naming the damaged file; never a panic, a
//! hang, or more than 64 MiB of memory (a block that really decodes to more, as a large value
//! LevelDB wrote does, costs about its own size: what its codec can make of its bytes).
//!
//! One test function runs everything in sequence so the counting allocator below measures
//! only the case at hand.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use common::{worlds, Rng};
use strata::storage::{MemStorage, Storage};
use strata::{Db, ErrorKind, Options};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static LARGEST: AtomicUsize = AtomicUsize::new(0);

fn note_alloc(size: usize) {
    let live = LIVE.fetch_add(size, Ordering::Relaxed) + size;
    PEAK.fetch_max(live, Ordering::Relaxed);
    LARGEST.fetch_max(size, Ordering::Relaxed);
}

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            note_alloc(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            note_alloc(new_size);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const MEMORY_LIMIT: usize = 64 << 20;

/// Runs `f` on a thread with a deadline; returns its result, or fails the test on a panic,
/// a hang, or memory use over the limit.
fn guarded<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    guarded_within(what, MEMORY_LIMIT, f)
}

/// `guarded` with its own memory limit.
fn guarded_within<T: Send + 'static>(
    what: &str,
    limit: usize,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    LARGEST.store(0, Ordering::Relaxed);
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        let r = f();
        let _ = tx.send(());
        r
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(()) => {}
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: hung for 60 s"),
        Err(mpsc::RecvTimeoutError::Disconnected) => {}
    }
    let result = handle.join().unwrap_or_else(|_| panic!("{what}: panicked"));
    let grew = PEAK.load(Ordering::Relaxed).saturating_sub(base);
    let largest = LARGEST.load(Ordering::Relaxed);
    assert!(grew <= limit, "{what}: peak memory grew by {grew} bytes");
    assert!(
        largest <= limit,
        "{what}: one allocation of {largest} bytes"
    );
    result
}

#[derive(Default, Debug)]
struct Outcomes {
    correct: u32,
    corruption: u32,
}

fn flip_bytes_in_each_kind_of_file() {
    let world = worlds()
        .into_iter()
        .find(|w| w.name == "amulet_1_16")
        .unwrap();
    let base = common::load_into_mem(&world.db_dir(), "db");
    let names = base.list("db").unwrap();
    let current = String::from_utf8(base.contents("db/CURRENT").unwrap()).unwrap();
    let manifest = current.trim_end().to_string();
    let pick = |suffix: &str| {
        names
            .iter()
            .find(|n| n.ends_with(suffix) && base.file_size(&format!("db/{n}")).unwrap() > 0)
            .unwrap_or_else(|| panic!("no {suffix} file"))
            .clone()
    };
    let targets = [
        ("table", pick(".ldb")),
        ("log", pick(".log")),
        ("MANIFEST", manifest),
        ("CURRENT", "CURRENT".to_string()),
    ];
    let mut rng = Rng(0xc0ff_ee00_1234_5678);
    for (kind, file) in targets {
        let original = base.contents(&format!("db/{file}")).unwrap();
        let mut outcomes = Outcomes::default();
        for _ in 0..200 {
            let pos = rng.below(original.len() as u64) as usize;
            let xor = 1 + rng.below(255) as u8;
            // A fresh copy of the world with one damaged byte.
            let copy = MemStorage::new();
            copy.create_dir_all("db").unwrap();
            for n in &names {
                let mut data = base.contents(&format!("db/{n}")).unwrap();
                if *n == file {
                    data[pos] ^= xor;
                }
                strata::storage::write_all(&copy, &format!("db/{n}"), &data).unwrap();
            }
            let what = format!("{kind} {file} byte {pos} ^= {xor:#04x}");
            let result = guarded(&what, move || {
                let storage: Arc<dyn Storage> = Arc::new(copy);
                Db::open(storage, "db", Options::default().read_only()).and_then(|db| db.scan())
            });
            match result {
                Ok(stats) => {
                    assert_eq!(stats, world.expected, "{what}: wrong data without an error");
                    outcomes.correct += 1;
                }
                Err(e) => {
                    assert_eq!(e.kind(), ErrorKind::Corruption, "{what}: {e}");
                    assert_eq!(e.file(), Some(file.as_str()), "{what}: {e}");
                    if kind != "CURRENT" {
                        assert!(
                            e.offset().is_some() || e.message().contains("MANIFEST"),
                            "{what}: {e}"
                        );
                    }
                    outcomes.corruption += 1;
                }
            }
        }
        println!("{kind} ({file}, {} bytes): {outcomes:?}", original.len());
        assert_eq!(outcomes.correct + outcomes.corruption, 200);
        assert!(
            outcomes.corruption > 0,
            "{kind}: no damage was ever detected"
        );
    }
}

/// A one-block table whose data block is `payload` stored with compression `id`.
fn table_with_block(payload: &[u8], id: u8) -> Vec<u8> {
    use strata::table::block_builder::BlockBuilder;
    use strata::table::format::{BlockHandle, Footer};
    let mut file = Vec::new();
    let put_block = |file: &mut Vec<u8>, bytes: &[u8], id: u8| {
        let h = BlockHandle {
            offset: file.len() as u64,
            size: bytes.len() as u64,
        };
        file.extend_from_slice(bytes);
        let mut typed = bytes.to_vec();
        typed.push(id);
        let crc = strata::util::crc::mask(strata::util::crc::value(&typed));
        file.push(id);
        file.extend_from_slice(&crc.to_le_bytes());
        h
    };
    let data = put_block(&mut file, payload, id);
    let mut meta = BlockBuilder::new(1);
    let metaindex = put_block(&mut file, meta.finish(), 0);
    let mut index = BlockBuilder::new(1);
    let mut hv = Vec::new();
    data.encode_to(&mut hv);
    index.add(
        &strata::key::make_internal_key(b"zzzz", 1, strata::key::ValueType::Value),
        &hv,
    );
    let index = put_block(&mut file, index.finish(), 0);
    file.extend_from_slice(&Footer { metaindex, index }.encode());
    file
}

fn scan_table(bytes: Vec<u8>) -> strata::Result<u64> {
    let mem = MemStorage::new();
    strata::storage::write_all(&mem, "t.ldb", &bytes).unwrap();
    let size = bytes.len() as u64;
    let table = Arc::new(strata::table::Table::open(
        mem.open_random("t.ldb").unwrap(),
        "t.ldb",
        size,
        strata::table::table::TableSettings {
            block_cache: None,
            max_block_size: Options::default().max_block_size,
            verify_checksums: true,
            readahead: None,
        },
    )?);
    use strata::iterator::InternalIterator;
    let mut it = table.iter(strata::ReadOptions::default());
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    it.status()?;
    Ok(n)
}

fn decompression_bombs_are_refused() {
    // Snappy: a header claiming 2 GiB, checksum valid.
    let mut claim = Vec::new();
    strata::util::coding::put_varint32(&mut claim, 1 << 31);
    claim.extend_from_slice(&[0u8; 16]);
    let t = table_with_block(&claim, 1);
    let e = guarded("snappy size claim", move || scan_table(t)).unwrap_err();
    assert!(e.is_corruption() && e.message().contains("limit"), "{e}");
    assert_eq!(e.file(), Some("t.ldb"));
    assert_eq!(e.offset(), Some(0));

    // Raw deflate (id 4) and zlib (id 2): 48 MiB of zeros in ~48 KiB. Deflate cannot make
    // more than 1032 bytes of a byte, and a block this large is what LevelDB writes for one
    // 48 MiB value: it decodes whole (zeros end in a restart count of 0: a block without
    // entries, as LevelDB reads it too), costing about its own size, never three times it.
    let zeros = vec![0u8; 48 << 20];
    for (kind, id) in [
        (strata::CompressionType::ZlibRaw, 4u8),
        (strata::CompressionType::Zlib, 2),
    ] {
        let mut bomb = Vec::new();
        assert!(strata::compress::compress(kind, &zeros, &mut bomb));
        assert!(bomb.len() < 1 << 20);
        assert!(strata::compress::most_from(id, &bomb) >= zeros.len());
        let t = table_with_block(&bomb, id);
        let n = guarded_within("deflate 1000:1", 3 * (48 << 20), move || scan_table(t));
        assert_eq!(n.unwrap(), 0, "{kind:?}");
    }
    drop(zeros);

    // The same builder with an honest small block reads fine (the harness is sound).
    let mut honest = strata::table::block_builder::BlockBuilder::new(16);
    honest.add(
        &strata::key::make_internal_key(b"k", 1, strata::key::ValueType::Value),
        b"v",
    );
    let raw = honest.finish().to_vec();
    let mut packed = Vec::new();
    strata::compress::compress(strata::CompressionType::ZlibRaw, &raw, &mut packed);
    assert_eq!(scan_table(table_with_block(&packed, 4)).unwrap(), 1);
}

#[test]
fn hostile_input_gives_data_or_corruption_never_a_crash() {
    if common::skip_without_worlds("hostile_input_gives_data_or_corruption_never_a_crash") {
        return;
    }
    decompression_bombs_are_refused();
    flip_bytes_in_each_kind_of_file();
}
