//! Fuzz harness bodies for `syndrome-agg` (docs/threat-model.md M6). Each
//! `fuzz/fuzz_targets/sagg_*.rs` is one line calling a function here, and
//! the crate's tests replay them with [`crate::fuzz::replay`] on stable.
//!
//! Contract checked by every body: no panic, and whatever a decoder accepts
//! re-encodes to exactly its input; sums of at most `t` entries decode to
//! exactly the tracked sum (Bitcoin Core's minisketch harness shape).

use std::collections::BTreeMap;
use syndrome_agg::{LinearSketch, RawSketch};

use field::{Field, FiniteField, Fp64, Mersenne61, Mersenne127};
use num_bigint::BigUint;
use syndrome_agg::partitioned::{PartitionParams, PartitionedSketch};
use syndrome_agg::wide::{WideKeyParams, WideSketch};
use syndrome_agg::wire::Frame;
use syndrome_agg::{
    IntegerParams, IntegerSketch, LinearParams, MaskedSketch, Sketch, SketchParams, SparseVector,
};

/// A cursor over fuzz bytes that yields zeros once they run out.
pub(crate) struct Bytes<'a>(pub(crate) &'a [u8]);

impl Bytes<'_> {
    pub(crate) fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }
    pub(crate) fn u64(&mut self) -> u64 {
        let mut v = [0u8; 8];
        v.iter_mut().for_each(|b| *b = self.byte());
        u64::from_le_bytes(v)
    }
    fn take(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.byte()).collect()
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Up to 64 entries read from the fuzz bytes (keys in `[1, domain]`,
/// signed byte counts) inserted into `sketch`; their sum, the oracle.
fn tracked_sum<F, S>(
    f: &F,
    b: &mut Bytes<'_>,
    domain: &BigUint,
    sketch: &mut S,
) -> SparseVector<BigUint, F::Elem>
where
    F: FiniteField,
    S: RawSketch<Key = BigUint, Count = F::Elem>,
{
    let mut truth = Vec::new();
    while !b.is_empty() && truth.len() < 64 {
        let key = BigUint::from(b.u64()) % domain + 1u32;
        let c = f.from_i64(i64::from(b.byte() as i8));
        sketch.insert(&key, &c).unwrap();
        truth.push((key, c));
    }
    SparseVector::from_sum(f, truth)
}

fn field_decoder<F: FiniteField>(f: F, b: &mut Bytes<'_>) {
    let t = usize::from(b.byte() % 6) + 1;
    let r = usize::from(b.byte() % 3);
    let domain = match b.byte() % 3 {
        0 => BigUint::from(b.byte()) + 1u32,
        1 => f.characteristic() - 1u32,
        _ => BigUint::from(b.u64() | 1) % (f.characteristic() - 1u32) + 1u32,
    };
    let Ok(params) = SketchParams::new(t, domain.clone())
        .with_extra(r)
        .validate(f.clone())
    else {
        return;
    };
    let m = params.num_syndromes();
    if b.byte().is_multiple_of(2) {
        // Raw syndromes: reduced from fuzz bytes.
        let s: Vec<F::Elem> = (0..m).map(|_| f.from_u64(b.u64())).collect();
        let sketch = Sketch::from_elements(&params, s.clone()).unwrap();
        if let Ok(v) = sketch.decode() {
            assert!(v.len() <= t);
            let re = Sketch::encode(&params, v.into_entries()).unwrap();
            assert_eq!(re.elements(), &s[..], "an accepted decode must re-encode");
        }
    } else {
        // Tracked sum of entries added to and subtracted from a sketch.
        let mut sketch = Sketch::new(&params);
        let oracle = tracked_sum(&f, b, &domain, &mut sketch);
        match sketch.decode() {
            // Beyond t + r nonzeros a false accept is possible (about p^-r),
            // but it must still re-encode to the syndromes.
            Ok(v) if oracle.len() > t + r => {
                let re = Sketch::encode(&params, v.into_entries()).unwrap();
                assert_eq!(re.elements(), sketch.elements());
            }
            Ok(v) => assert_eq!(v, oracle),
            Err(e) => assert!(oracle.len() > t, "{} entries failed: {e}", oracle.len()),
        }
    }
}

/// The finite-field decoder on fuzzed syndromes and fuzzed sums, over
/// GF(2^61 - 1), GF(2^127 - 1), GF(27 * 2^59 + 1) and GF(65537).
pub fn sketch_decode(data: &[u8]) {
    let mut b = Bytes(data);
    match b.byte() % 4 {
        0 => field_decoder(Mersenne61, &mut b),
        1 => field_decoder(Mersenne127, &mut b),
        2 => field_decoder(Fp64::proth(), &mut b),
        _ => field_decoder(
            Fp64::new(65_537).unwrap_or_else(|_| unreachable!("65537 is prime")),
            &mut b,
        ),
    }
}

/// The Appendix K integer decoder on fuzzed syndromes and fuzzed sums.
pub fn integer_decode(data: &[u8]) {
    let mut b = Bytes(data);
    let t = usize::from(b.byte() % 4) + 1;
    let r = usize::from(b.byte() % 2);
    let n = u32::from(b.byte()) + 1;
    let max_total = 1000u32;
    let params = IntegerParams::new(t, n, max_total)
        .with_extra(r)
        .validate()
        .unwrap();
    let k = params.ring().bits();
    let m = params.num_syndromes();
    if b.byte().is_multiple_of(2) {
        let w = usize::try_from(k.div_ceil(8)).unwrap();
        let s: Vec<BigUint> = (0..m)
            .map(|_| params.ring().reduce(&BigUint::from_bytes_le(&b.take(w))))
            .collect();
        let sketch = IntegerSketch::from_elements(&params, s.clone()).unwrap();
        if let Ok(v) = sketch.decode() {
            let re = IntegerSketch::from_unsigned(
                &params,
                v.iter()
                    .map(|(k, c)| (k.clone(), u64::try_from(c).unwrap())),
            )
            .unwrap();
            assert_eq!(re.elements(), &s[..], "an accepted decode must re-encode");
        }
    } else {
        let mut truth = BTreeMap::<BigUint, u64>::new();
        let mut total = 0u64;
        while !b.is_empty() {
            let key = BigUint::from(b.byte()) % n + 1u32;
            let c = u64::from(b.byte() % 20) + 1;
            if total + c > u64::from(max_total) {
                break;
            }
            total += c;
            *truth.entry(key).or_default() += c;
        }
        let sketch = IntegerSketch::from_unsigned(&params, truth.clone()).unwrap();
        let want: Vec<(BigUint, BigUint)> = truth
            .into_iter()
            .map(|(k, c)| (k, BigUint::from(c)))
            .collect();
        match sketch.decode() {
            Ok(v) if want.len() > t + r => {
                let re = IntegerSketch::from_unsigned(
                    &params,
                    v.iter()
                        .map(|(k, c)| (k.clone(), u64::try_from(c).unwrap())),
                )
                .unwrap();
                assert_eq!(re.elements(), sketch.elements());
            }
            Ok(v) => assert_eq!(v.into_entries(), want),
            Err(e) => assert!(want.len() > t, "{} entries failed: {e}", want.len()),
        }
    }
}

/// The wide-key decoder: fuzzed keys and counts (tracked), then a fuzzed
/// perturbation; an accepted decode equals the tracked sum, or re-encodes
/// to the perturbed input.
pub fn wide_decode(data: &[u8]) {
    let mut b = Bytes(data);
    let t = usize::from(b.byte() % 4) + 1;
    let params = WideKeyParams::new(t, 40, [b.byte(); 32])
        .with_extra(1)
        .validate(Mersenne61)
        .unwrap();
    let f = Mersenne61;
    let mut truth = BTreeMap::<Vec<u8>, u64>::new();
    let mut sketch = WideSketch::new(&params);
    let entries = usize::from(b.byte() % 8);
    for _ in 0..entries {
        let len = usize::from(b.byte() % 41);
        let key = b.take(len);
        let c = u64::from(b.byte()) + 1;
        sketch.insert(&key, &f.from_u64(c)).unwrap();
        *truth.entry(key).or_default() += c;
    }
    let mut elements = sketch.elements().to_vec();
    let perturb = b.byte();
    if perturb.is_multiple_of(4) && !elements.is_empty() {
        let i = usize::try_from(b.u64() % elements.len() as u64).unwrap();
        elements[i] = f.from_u64(b.u64());
    }
    let perturbed = elements[..] != *sketch.elements();
    let input = WideSketch::from_elements(&params, elements.clone()).unwrap();
    match input.decode() {
        Ok(v) => {
            let mut re = WideSketch::new(&params);
            for (k, c) in &v {
                re.insert(k, c).unwrap();
            }
            assert_eq!(
                re.elements(),
                &elements[..],
                "an accepted decode must re-encode"
            );
            // Within t + r keys (r = 1) the decode is the tracked sum.
            if !perturbed && truth.len() <= t + 1 {
                let want: Vec<(Vec<u8>, u64)> = truth.into_iter().collect();
                assert_eq!(v.into_entries(), want);
            }
        }
        Err(e) => assert!(
            perturbed || truth.len() > t,
            "{} keys failed: {e}",
            truth.len()
        ),
    }
}

/// Message parsing: arbitrary bytes into a frame and a masked sketch; what
/// parses re-serializes to a frame that parses to the same value.
pub fn frame_parse(data: &[u8]) {
    let Ok(frame) = Frame::parse(data, 1 << 16) else {
        return;
    };
    let bytes = frame.to_bytes().unwrap();
    assert_eq!(Frame::parse(&bytes, 1 << 16).unwrap(), frame);
    for t in 1..=2 {
        let params = SketchParams::new(t, 100u32).validate(Mersenne61).unwrap();
        if let Ok(m) = MaskedSketch::<Sketch<_>>::from_frame(&frame, &params) {
            assert_eq!(m.to_frame(), frame);
        }
    }
}

/// The partitioned decoder (`syndrome_agg::partitioned`) over
/// GF(27 * 2^59 + 1) on fuzzed elements (an accepted decode re-encodes to
/// exactly them) and on tracked sums (when no bucket holds more than its
/// capacity the decode is the sum; an error means some bucket does).
pub fn partitioned_decode(data: &[u8]) {
    let mut b = Bytes(data);
    let f = Fp64::proth();
    let t = usize::from(b.byte() % 12) + 1;
    let buckets = usize::from(b.byte() % 4) + 1;
    let r = usize::from(b.byte() % 3);
    let domain = BigUint::from(b.u64() | 1) % (f.characteristic() - 1u32) + 1u32;
    let Ok(params) = PartitionParams::new(t, domain.clone(), [b.byte(); 32])
        .with_buckets(buckets)
        .with_extra(r)
        .validate(f)
    else {
        return;
    };
    let reencode = |v: SparseVector<BigUint, _>| {
        let mut re = PartitionedSketch::new(&params);
        re.insert_many(&v.into_entries()).unwrap();
        re
    };
    if b.byte().is_multiple_of(2) {
        let s: Vec<_> = (0..params.num_elements())
            .map(|_| f.from_u64(b.u64()))
            .collect();
        let sketch = PartitionedSketch::from_elements(&params, s.clone()).unwrap();
        if let Ok(v) = sketch.decode() {
            assert_eq!(
                reencode(v).elements(),
                &s[..],
                "an accepted decode must re-encode"
            );
        }
    } else {
        let mut sketch = PartitionedSketch::new(&params);
        let oracle = tracked_sum(&f, &mut b, &domain, &mut sketch);
        let mut loads = vec![0usize; params.buckets()];
        for (k, _) in oracle.iter() {
            loads[params.bucket_of(k).unwrap()] += 1;
        }
        let fits = loads.iter().all(|&l| l <= params.bucket_capacity());
        match sketch.decode() {
            Ok(v) if fits => assert_eq!(v, oracle),
            Ok(v) => assert_eq!(reencode(v).elements(), sketch.elements()),
            Err(e) => assert!(!fits, "a sum that fits its buckets failed: {e}"),
        }
    }
}
