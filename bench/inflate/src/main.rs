//! Chooses Strata's inflate by measurement (issue 6): reads every zlib (id 2) and raw-deflate
//! (id 4) data block of a world's live tables through Strata's own table reader, then decodes
//! all of them with each candidate, one thread, best of N passes, checking that every decoder
//! produces the same bytes (CRC-32C over all outputs).
//!
//!   cargo run --release --manifest-path bench/inflate/Cargo.toml -- DB_DIR [--passes N] [--json]
//!       [--dump FILE]        (also writes the blocks to FILE for the wasm run)
//!   node bench/inflate/wasi.mjs inflate.wasm --blocks FILE [--passes N] [--json]
//!
//! Candidates: miniz_oxide (what Strata shipped first), zlib-rs (streaming `Inflate`, state
//! reused across blocks; what a pure-Rust native build ships), zune-inflate (whole-buffer
//! libdeflate port; what the wasm build ships), and C libdeflate (libdeflater; what native builds
//! ship by default). Built for wasm32-wasip1 the same program measures every candidate under a
//! wasm runtime; libdeflate is then built with its `freestanding` feature (clang -ffreestanding,
//! malloc from Rust's allocator; the cc crate finds `clang` and `llvm-ar` on PATH by itself):
//!   cargo build --release --target wasm32-wasip1 --manifest-path bench/inflate/Cargo.toml
//! then run target/wasm32-wasip1/release/strata-inflate-bench.wasm with wasi.mjs as above
//! (FILE an absolute path: wasi.mjs preopens `/` only).

use std::time::Instant;

struct Block {
    zlib_header: bool,
    data: Vec<u8>,
}

#[cfg(not(target_arch = "wasm32"))]
fn load_blocks(dir: &str) -> Vec<Block> {
    use strata::{Db, Options};
    let db = Db::open_path(dir, Options::default().read_only()).expect("open database");
    let version = db.version();
    let mut blocks = Vec::new();
    for (_, f) in version.all_files() {
        let table = db
            .table_cache()
            .table(f.number, f.file_size)
            .expect("open table");
        let path = std::path::Path::new(dir).join(table.name());
        let bytes = std::fs::read(&path).expect("read table file");
        for h in table.data_handles().expect("index") {
            let start = h.offset as usize;
            let end = start + h.size as usize;
            match bytes[end] {
                2 if !bytes[start..].starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) => {}
                4 => {}
                _ => continue,
            }
            blocks.push(Block {
                zlib_header: bytes[end] == 2,
                data: bytes[start..end].to_vec(),
            });
        }
    }
    blocks
}

/// Block dump: per block, a header byte (1 = zlib header, 0 = raw), u32 LE length, bytes.
fn write_dump(path: &str, blocks: &[Block]) {
    let mut out = Vec::new();
    for b in blocks {
        out.push(b.zlib_header as u8);
        out.extend_from_slice(&(b.data.len() as u32).to_le_bytes());
        out.extend_from_slice(&b.data);
    }
    std::fs::write(path, out).expect("write block dump");
}

fn read_dump(path: &str) -> Vec<Block> {
    let bytes = std::fs::read(path).expect("read block dump");
    let mut blocks = Vec::new();
    let mut p = 0;
    while p < bytes.len() {
        let n = u32::from_le_bytes(bytes[p + 1..p + 5].try_into().unwrap()) as usize;
        blocks.push(Block {
            zlib_header: bytes[p] == 1,
            data: bytes[p + 5..p + 5 + n].to_vec(),
        });
        p += 5 + n;
    }
    blocks
}

fn miniz(b: &Block) -> Vec<u8> {
    use miniz_oxide::inflate::{decompress_to_vec, decompress_to_vec_zlib};
    if b.zlib_header {
        decompress_to_vec_zlib(&b.data).expect("miniz zlib")
    } else {
        decompress_to_vec(&b.data).expect("miniz raw")
    }
}

struct ZlibRs {
    raw: zlib_rs::Inflate,
    zlib: zlib_rs::Inflate,
    out: Vec<u8>,
}

impl ZlibRs {
    fn new() -> Self {
        ZlibRs {
            raw: zlib_rs::Inflate::new(false, 15),
            zlib: zlib_rs::Inflate::new(true, 15),
            out: Vec::new(),
        }
    }

    fn decode(&mut self, b: &Block) -> &[u8] {
        let (state, header) = if b.zlib_header {
            (&mut self.zlib, true)
        } else {
            (&mut self.raw, false)
        };
        state.reset(header);
        if self.out.len() < (b.data.len() * 4).max(64 << 10) {
            self.out.resize((b.data.len() * 4).max(64 << 10), 0);
        }
        let mut done = 0usize;
        let mut consumed = 0usize;
        loop {
            let before_in = state.total_in();
            let before_out = state.total_out();
            let status = state
                .decompress(
                    &b.data[consumed..],
                    &mut self.out[done..],
                    zlib_rs::InflateFlush::Finish,
                )
                .expect("zlib-rs");
            consumed += (state.total_in() - before_in) as usize;
            done += (state.total_out() - before_out) as usize;
            match status {
                zlib_rs::Status::StreamEnd => break,
                _ => {
                    let n = self.out.len() * 2;
                    self.out.resize(n, 0);
                }
            }
        }
        &self.out[..done]
    }
}

fn zune(b: &Block) -> Vec<u8> {
    use zune_inflate::{DeflateDecoder, DeflateOptions};
    let opts = DeflateOptions::default()
        .set_limit(16 << 20)
        .set_confirm_checksum(true);
    let mut d = DeflateDecoder::new_with_options(&b.data, opts);
    if b.zlib_header {
        d.decode_zlib().expect("zune zlib")
    } else {
        d.decode_deflate().expect("zune raw")
    }
}

fn libdeflate(d: &mut libdeflater::Decompressor, out: &mut Vec<u8>, b: &Block) -> usize {
    if out.len() < (b.data.len() * 4).max(64 << 10) {
        out.resize((b.data.len() * 4).max(64 << 10), 0);
    }
    loop {
        let r = if b.zlib_header {
            d.zlib_decompress(&b.data, out)
        } else {
            d.deflate_decompress(&b.data, out)
        };
        match r {
            Ok(n) => return n,
            Err(libdeflater::DecompressionError::InsufficientSpace) => {
                let n = out.len() * 2;
                out.resize(n, 0);
            }
            Err(e) => panic!("libdeflate: {e:?}"),
        }
    }
}

/// Best time of `passes` runs of `f` over every block; returns (seconds, crc of outputs).
fn measure(passes: usize, blocks: &[Block], mut f: impl FnMut(&Block, &mut u32)) -> (f64, u32) {
    let mut best = f64::MAX;
    let mut crc = 0;
    for _ in 0..passes {
        let mut c = 0u32;
        let t = Instant::now();
        for b in blocks {
            f(b, &mut c);
        }
        best = best.min(t.elapsed().as_secs_f64());
        crc = c;
    }
    (best, crc)
}

#[cfg(not(target_arch = "wasm32"))]
fn load(args: &[String]) -> Vec<Block> {
    let mut skip = false;
    for a in args {
        if skip {
            skip = false;
        } else if a == "--passes" || a == "--dump" || a == "--blocks" {
            skip = true;
        } else if !a.starts_with("--") {
            return load_blocks(a);
        }
    }
    eprintln!("usage: inflate-bench DB_DIR [--passes N] [--json] [--dump FILE] | --blocks FILE");
    std::process::exit(2)
}

#[cfg(target_arch = "wasm32")]
fn load(_: &[String]) -> Vec<Block> {
    eprintln!("the wasm build reads a block dump: --blocks FILE");
    std::process::exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let passes = flag("--passes")
        .and_then(|v| v.parse().ok())
        .unwrap_or(3usize);
    let json = args.iter().any(|a| a == "--json");
    let blocks = match flag("--blocks") {
        Some(path) => read_dump(&path),
        None => load(&args),
    };
    if let Some(path) = flag("--dump") {
        write_dump(&path, &blocks);
    }
    let raw_out: u64 = blocks.iter().map(|b| miniz(b).len() as u64).sum();
    let compressed: u64 = blocks.iter().map(|b| b.data.len() as u64).sum();
    let mut rows: Vec<(&str, f64, u32)> = Vec::new();

    let (t, c) = measure(passes, &blocks, |b, c| {
        *c = crc32c::crc32c_append(*c, &miniz(b))
    });
    rows.push(("miniz_oxide", t, c));
    let mut z = ZlibRs::new();
    let (t, c) = measure(passes, &blocks, |b, c| {
        *c = crc32c::crc32c_append(*c, z.decode(b))
    });
    rows.push(("zlib-rs", t, c));
    let (t, c) = measure(passes, &blocks, |b, c| {
        *c = crc32c::crc32c_append(*c, &zune(b))
    });
    rows.push(("zune-inflate", t, c));
    {
        let mut d = libdeflater::Decompressor::new();
        let mut out = Vec::new();
        let (t, c) = measure(passes, &blocks, |b, c| {
            let n = libdeflate(&mut d, &mut out, b);
            *c = crc32c::crc32c_append(*c, &out[..n])
        });
        rows.push(("libdeflate", t, c));
    }

    let reference = rows[0].2;
    for (name, _, c) in &rows {
        assert_eq!(*c, reference, "{name} decoded different bytes");
    }
    let target = if cfg!(target_arch = "wasm32") {
        "wasm32"
    } else {
        "native"
    };
    if json {
        let items: Vec<String> = rows
            .iter()
            .map(|(n, t, _)| {
                format!(
                    "{{\"decoder\":\"{n}\",\"seconds\":{t:.4},\"mb_per_s\":{:.1}}}",
                    raw_out as f64 / 1e6 / t
                )
            })
            .collect();
        println!(
            "{{\"target\":\"{target}\",\"blocks\":{},\"compressed_bytes\":{compressed},\"raw_bytes\":{raw_out},\"crc32c\":{reference},\"decoders\":[{}]}}",
            blocks.len(),
            items.join(",")
        );
    } else {
        println!(
            "{target}: {} blocks, {compressed} compressed bytes -> {raw_out} bytes (crc32c {reference}), best of {passes}",
            blocks.len()
        );
        for (name, t, _) in &rows {
            println!(
                "  {name:<28} {t:>8.3} s  {:>7.1} MB/s out",
                raw_out as f64 / 1e6 / t
            );
        }
    }
}
