//! cargo-fuzz target: `strata::fuzzing::decompress` (must return for any input, never panic).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = strata::fuzzing::decompress(data);
});
