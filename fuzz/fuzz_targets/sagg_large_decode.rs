#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| testkit::sagg::fuzz_large::large_decode(data));
