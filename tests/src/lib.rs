//! Cross-crate tests of the MUFC workspace live in `tests/tests/`; this
//! library is empty.
