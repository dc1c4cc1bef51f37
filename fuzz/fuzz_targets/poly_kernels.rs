#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| field_testkit::fuzz::poly_kernels(data));
