//! What every message on the wire shares: the format version, and the
//! fixed-width canonical encoding of field elements.

use field::FiniteField;

/// The wire format version this build writes and reads (the protocol's
/// messages and the frames of the crates built on this one).
pub const WIRE_VERSION: u16 = 1;

/// The elements, each in the field's fixed-width canonical little-endian
/// encoding ([`FiniteField::write_bytes`]), concatenated.
///
/// # Example
///
/// ```
/// use field::{Field, Mersenne61};
/// use masked_sum::wire::field_bytes;
///
/// let f = Mersenne61;
/// let bytes = field_bytes(&f, &[f.from_u64(1), f.from_u64(2)]);
/// assert_eq!(bytes.len(), 2 * 8);
/// assert_eq!(bytes[0], 1);
/// ```
pub fn field_bytes<F: FiniteField>(f: &F, elems: &[F::Elem]) -> Vec<u8> {
    let mut out = Vec::with_capacity(elems.len().saturating_mul(f.byte_len()));
    for e in elems {
        f.write_bytes(e, &mut out);
    }
    out
}
