#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| testkit::secagg::fuzz_secret_share(data));
