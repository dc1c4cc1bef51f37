#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sagg_testkit::sagg::fuzz::wide_decode(data));
