//! The digest of the records table ([`RecordsDigest`]): which point each
//! record id names. The table has no checksum of its own (a row is three
//! plain values), and a record that names another point than the one it
//! was written for is the worst damage a store can take: `forget` would
//! erase the wrong person's data. Every record's hash is folded into one
//! value kept at the end of the server row (under that row's checksum),
//! updated by each request and checked on opening.

use sha2::{Digest, Sha256};

use crate::record::RecordId;
use mufc::ClientId;
use seeding::PointId;

/// The XOR of the SHA-256 of every record (its id as written, its client
/// and its point). XOR makes it independent of the rows' order and lets a
/// request update it by the records it erases alone. It finds damage and
/// edits; like every checksum of the file, not someone who can rewrite
/// the file and recompute it (docs/threat-model.md §8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RecordsDigest(pub(crate) [u8; 32]);

impl RecordsDigest {
    /// The digest of `records`.
    pub(crate) fn of<'a>(
        records: impl IntoIterator<Item = (&'a RecordId, &'a (ClientId, PointId))>,
    ) -> Self {
        let mut d = Self::default();
        for (r, &(c, p)) in records {
            d.toggle(r, c, p);
        }
        d
    }

    /// Adds record `r` (client `c`, point `p`), or takes it out if it is
    /// in.
    pub(crate) fn toggle(&mut self, r: &RecordId, c: ClientId, p: PointId) {
        let mut h = Sha256::new();
        h.update(b"mufc-record\0");
        // The tag is the id's kind and bytes; the two fixed-size numbers
        // after it make the whole unambiguous.
        r.tag(|b| h.update(b));
        h.update(c.0.to_le_bytes());
        h.update(p.0.to_le_bytes());
        for (a, b) in self.0.iter_mut().zip(h.finalize()) {
            *a ^= b;
        }
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::unwrap_used)]
mod tests {
    use super::RecordsDigest;
    use crate::record::RecordId;
    use mufc::ClientId;
    use seeding::PointId;

    fn id(s: &str) -> RecordId {
        RecordId::parse(s).unwrap_or_else(|e| panic!("{s}: {e:?}"))
    }

    #[test]
    fn the_digest_tells_which_point_each_record_names_in_any_order() {
        let rows = [
            (id("7"), (ClientId(0), PointId(3))),
            (id("P-7"), (ClientId(0), PointId(4))),
            (id("x"), (ClientId(1), PointId(3))),
        ];
        let d = RecordsDigest::of(rows.iter().map(|(r, cp)| (r, cp)));
        let reversed = RecordsDigest::of(rows.iter().rev().map(|(r, cp)| (r, cp)));
        assert_eq!(d, reversed);
        // Two records' points swapped, two records of two clients
        // swapped: both differ.
        let edits = [
            [(0, ClientId(0), PointId(4)), (1, ClientId(0), PointId(3))],
            [(0, ClientId(1), PointId(3)), (2, ClientId(0), PointId(3))],
        ];
        for edit in edits {
            let mut changed = rows.clone();
            for (i, c, p) in edit {
                changed[i].1 = (c, p);
            }
            assert_ne!(RecordsDigest::of(changed.iter().map(|(r, cp)| (r, cp))), d);
        }
        // Taking a record out is toggling it.
        let mut less = d;
        less.toggle(&rows[1].0, ClientId(0), PointId(4));
        assert_eq!(
            less,
            RecordsDigest::of(
                rows.iter()
                    .take(1)
                    .chain(rows.iter().skip(2))
                    .map(|(r, cp)| (r, cp))
            )
        );
    }
}
