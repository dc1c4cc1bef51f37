//! The fuzz targets' bodies (`testkit::fuzz`), replayed on stable Rust over
//! deterministic pseudo-random inputs so that CI exercises every target.

#[test]
fn field_bytes() {
    testkit::fuzz::replay("fuzz/field_bytes", 3000, 40, testkit::fuzz::field_bytes);
}

#[test]
fn bm() {
    testkit::fuzz::replay("fuzz/bm", 1500, 160, testkit::fuzz::bm);
}

#[test]
fn find_roots() {
    testkit::fuzz::replay("fuzz/find_roots", 600, 160, testkit::fuzz::find_roots);
}
