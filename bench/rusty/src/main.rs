//! The scan workload (DESIGN.md §2) run by rusty-leveldb, a peer: open DB_DIR (a copy: the
//! library writes to any folder it opens), iterate every entry in key order, count them and
//! CRC-32C `k0 v0 k1 v1 ...`; print `{"entries":..,"key_bytes":..,"value_bytes":..,
//! "crc32c":..,"seconds":..}` (open + iterate). Mojang's codecs are registered as rusty-leveldb's
//! own MCPE example does it (miniz_oxide): id 2 zlib, id 4 raw deflate.
//!
//!   cargo run --release --manifest-path bench/rusty/Cargo.toml -- DB_DIR

use std::rc::Rc;
use std::time::Instant;

use miniz_oxide::inflate::{decompress_to_vec, decompress_to_vec_zlib};
use rusty_leveldb::compressor::NoneCompressor;
use rusty_leveldb::{Compressor, CompressorList, LdbIterator, Options, Status, StatusCode, DB};

struct Zlib {
    header: bool,
}

impl Compressor for Zlib {
    fn encode(&self, block: Vec<u8>) -> rusty_leveldb::Result<Vec<u8>> {
        Ok(if self.header {
            miniz_oxide::deflate::compress_to_vec_zlib(&block, 6)
        } else {
            miniz_oxide::deflate::compress_to_vec(&block, 6)
        })
    }

    fn decode(&self, block: Vec<u8>) -> rusty_leveldb::Result<Vec<u8>> {
        let out = if self.header {
            decompress_to_vec_zlib(&block)
        } else {
            decompress_to_vec(&block)
        };
        out.map_err(|e| Status::new(StatusCode::CompressionError, &format!("{e:?}")))
    }
}

fn main() {
    let dir = std::env::args().nth(1).expect("usage: strata-rusty-scan DB_DIR");
    let start = Instant::now();
    let mut options = Options::default();
    let mut list = CompressorList::new();
    list.set_with_id(0, NoneCompressor {});
    list.set_with_id(2, Zlib { header: true });
    list.set_with_id(4, Zlib { header: false });
    options.compressor_list = Rc::new(list);
    options.compressor = 4;
    options.create_if_missing = false;
    let mut db = DB::open(&dir, options).expect("open");
    let mut it = db.new_iter().expect("iterator");
    let (mut entries, mut key_bytes, mut value_bytes, mut crc) = (0u64, 0u64, 0u64, 0u32);
    it.seek_to_first();
    while it.valid() {
        let Some((k, v)) = it.current() else {
            break;
        };
        entries += 1;
        key_bytes += k.len() as u64;
        value_bytes += v.len() as u64;
        crc = crc32c::crc32c_append(crc, &k);
        crc = crc32c::crc32c_append(crc, &v);
        if !it.advance() {
            break;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{{\"entries\":{entries},\"key_bytes\":{key_bytes},\"value_bytes\":{value_bytes},\"crc32c\":{crc},\"seconds\":{secs:.4}}}"
    );
}
