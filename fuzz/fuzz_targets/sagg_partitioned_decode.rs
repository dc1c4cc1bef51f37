#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| testkit::sagg::fuzz::partitioned_decode(data));
