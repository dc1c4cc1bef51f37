#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sum_testkit::secagg::fuzz_server_receive(data));
