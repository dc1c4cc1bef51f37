//! Memory bounds while parsing a message from outside (docs/threat-model.md
//! O1, O2): every list is allocated at its announced length only after
//! that length has been charged against a budget proportional to the
//! frame's size, so a frame of a few bytes per entry (empty ciphertexts,
//! one-byte ids) cannot make the parser allocate many times its size
//! before the first check.
//!
//! The budget lives in a thread-local set by [`scope`] for the duration of
//! one parse ([`super::messages::Envelope::parse`]); outside a scope (plain
//! `serde` use of the message types) the lists fall back to a cautious
//! pre-allocation.

// Parsers take bytes from outside: no panicking index, unwrap or overflow.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::arithmetic_side_effects
)]

use core::cell::Cell;
use core::fmt;
use core::marker::PhantomData;

use serde::Serializer;
use serde::de::{Deserialize, Deserializer, Error, SeqAccess, Visitor};
use zeroize::Zeroizing;

/// The memory a parse may allocate for its lists, as a multiple of the
/// frame's size: 7/4, so that with the allocations it does not charge
/// (the envelope, error text) the whole parse stays within twice the
/// frame. The largest honest ratio is about 1.5 (revealed shares: 88
/// bytes in memory for 58 on the wire).
pub(crate) const BUDGET_NUM: usize = 7;
/// The denominator of the budget's ratio.
pub(crate) const BUDGET_DEN: usize = 4;
/// The least budget, whatever the frame's size: small honest frames of
/// small ids (one byte on the wire, eight in memory) always fit.
pub(crate) const BUDGET_FLOOR: usize = 64 * 1024;
/// The most entries a list is pre-allocated with outside a budget scope.
const CAUTIOUS: usize = 1024;

thread_local! {
    static BUDGET: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The budget of the current parse while it lives; the previous one (none,
/// normally) is restored on drop.
#[derive(Debug)]
pub(crate) struct Scope {
    previous: Option<usize>,
}

impl Drop for Scope {
    fn drop(&mut self) {
        BUDGET.with(|b| b.set(self.previous));
    }
}

/// Opens a budget for parsing a frame of `frame_len` bytes.
pub(crate) fn scope(frame_len: usize) -> Scope {
    let budget = (frame_len / BUDGET_DEN)
        .saturating_mul(BUDGET_NUM)
        .max(BUDGET_FLOOR);
    Scope {
        previous: BUDGET.with(|b| b.replace(Some(budget))),
    }
}

/// Charges `bytes` against the budget (if one is open).
fn charge<E: Error>(bytes: usize) -> Result<(), E> {
    BUDGET.with(|b| match b.get() {
        None => Ok(()),
        Some(left) => match left.checked_sub(bytes) {
            Some(rest) => {
                b.set(Some(rest));
                Ok(())
            }
            None => Err(E::custom(format!(
                "the message's lists need more memory than {BUDGET_NUM}/{BUDGET_DEN} of its size"
            ))),
        },
    })
}

fn budgeted() -> bool {
    BUDGET.with(|b| b.get().is_some())
}

/// Deserializes a list, charging its announced length (times the size of
/// an entry in memory) before allocating it; for `#[serde(deserialize_with
/// = ...)]` on every list field of the messages.
pub(crate) fn vec<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct ListVisitor<T>(PhantomData<T>);

    impl<'de, T: Deserialize<'de>> Visitor<'de> for ListVisitor<T> {
        type Value = Vec<T>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a list")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let entry = size_of::<T>().max(1);
            let hint = seq.size_hint().unwrap_or(0);
            let capacity = if budgeted() {
                charge::<A::Error>(hint.saturating_mul(entry))?;
                hint
            } else {
                hint.min(CAUTIOUS)
            };
            let mut out = Vec::with_capacity(capacity);
            while let Some(x) = seq.next_element()? {
                if out.len() >= capacity {
                    // More entries than announced (not postcard): charge
                    // each as it comes.
                    charge::<A::Error>(entry)?;
                }
                out.push(x);
            }
            Ok(out)
        }
    }

    d.deserialize_seq(ListVisitor(PhantomData))
}

/// [`vec`] for secret bytes: the list is wiped on drop (and the buffer it
/// is read into holds nothing else).
pub(crate) fn secret_vec<'de, D: Deserializer<'de>>(d: D) -> Result<Zeroizing<Vec<u8>>, D::Error> {
    vec(d).map(Zeroizing::new)
}

/// Serializes secret bytes exactly as a `Vec<u8>` (so the wire format does
/// not change with the wrapper).
pub(crate) fn serialize_secret<S: Serializer>(
    v: &Zeroizing<Vec<u8>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_seq(v.iter())
}
