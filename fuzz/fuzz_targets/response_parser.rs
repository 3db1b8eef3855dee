//! Feeds arbitrary bytes to the response parser, split in two at a point the input chooses:
//! no panic, no over-consumption, progress always, byte counts within the input.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    rigor_load::parser::fuzz_check(data);
});
