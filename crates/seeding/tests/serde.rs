//! Persistence: data sets, seeding states, models and quantizers survive a
//! round trip through JSON and postcard, a restored seeding serves removals
//! exactly as the original would, and corrupt input is an error.
#![cfg(feature = "serde")]
#![allow(clippy::unwrap_used)]

use nalgebra::DMatrix;
use seeding::{
    BoxTransform, Dataset, ExpRace, KMeans, KMeansModel, KMeansParams, KMeansPlusPlus, PointId,
    Quantizer, Seeding, SeedingParams, SqEuclidean,
};

fn data() -> Dataset {
    let m = DMatrix::from_fn(3, 80, |r, c| {
        (((c * 31 + r * 17) % 23) as f64 - 11.0) / 25.0
    });
    let ids = (0..80).map(|i| PointId(5 * i + 1)).collect();
    let weights = (0..80).map(|i| 1 + i % 3).collect();
    Dataset::with_weights(m, ids, weights).unwrap()
}

#[test]
fn a_restored_seeding_unlearns_like_the_original() {
    let mut s = KMeansPlusPlus::new(SeedingParams::new(5).validate().unwrap())
        .fit(data(), ExpRace::new(99));
    for bytes in [
        serde_json::to_vec(&s).unwrap(),
        postcard::to_allocvec(&s).unwrap(),
    ] {
        let mut r: Seeding<SqEuclidean, ExpRace> = match bytes.first() {
            Some(b'{') => serde_json::from_slice(&bytes).unwrap(),
            _ => postcard::from_bytes(&bytes).unwrap(),
        };
        assert_eq!(r.seed_ids(), s.seed_ids());
        assert_eq!(r.sizes(), s.sizes());
        assert_eq!(r.data(), s.data());
        let removal = [s.seed_ids()[2], PointId(6), PointId(11)];
        let mut orig = s.clone();
        assert_eq!(
            r.unlearn(&removal).unwrap(),
            orig.unlearn(&removal).unwrap()
        );
        assert_eq!(r.seed_ids(), orig.seed_ids());
        assert_eq!(r.sizes(), orig.sizes());
    }
    s.unlearn(&[PointId(1)]).unwrap();
}

#[test]
fn corrupt_states_are_rejected() {
    let s =
        KMeansPlusPlus::new(SeedingParams::new(3).validate().unwrap()).fit(data(), ExpRace::new(1));
    let mut v: serde_json::Value = serde_json::to_value(&s).unwrap();
    // A seed that is not in the data.
    v["seeds"][1] = serde_json::json!(4);
    assert!(serde_json::from_value::<Seeding>(v.clone()).is_err());
    // A seed duplicated (zero weight the second time).
    let first = v["seeds"][0].clone();
    v["seeds"][1] = first;
    assert!(serde_json::from_value::<Seeding>(v.clone()).is_err());
    // Too few seeds for k.
    let mut w = serde_json::to_value(&s).unwrap();
    w["seeds"] = serde_json::json!([w["seeds"][0]]);
    assert!(serde_json::from_value::<Seeding>(w).is_err());
    // A data set whose coordinates do not match its ids.
    let mut d = serde_json::to_value(data()).unwrap();
    d["coords"].as_array_mut().unwrap().pop();
    assert!(serde_json::from_value::<Dataset>(d).is_err());
    let mut d = serde_json::to_value(data()).unwrap();
    d["ids"][3] = d["ids"][4].clone();
    assert!(serde_json::from_value::<Dataset>(d).is_err());
    let mut d = serde_json::to_value(data()).unwrap();
    d["weights"][0] = serde_json::json!(0);
    assert!(serde_json::from_value::<Dataset>(d).is_err());
    // Garbage bytes never panic.
    let mut rng = testdata::rng("serde-garbage");
    for len in 0..200 {
        let bytes: Vec<u8> = (0..len)
            .map(|_| rand::Rng::next_u32(&mut rng).to_le_bytes()[0])
            .collect();
        let _ = postcard::from_bytes::<Seeding>(&bytes);
        let _ = postcard::from_bytes::<KMeansModel>(&bytes);
        let _ = postcard::from_bytes::<Quantizer>(&bytes);
    }
}

#[test]
fn models_quantizers_and_transforms_round_trip() {
    let d = data();
    let model = KMeans::new(KMeansParams::new(4).validate().unwrap())
        .fit(&d, &mut ExpRace::new(2))
        .unwrap();
    let back: KMeansModel = serde_json::from_str(&serde_json::to_string(&model).unwrap()).unwrap();
    assert_eq!(back, model);
    let mut v = serde_json::to_value(&model).unwrap();
    v["assignment"][0] = serde_json::json!(17);
    assert!(serde_json::from_value::<KMeansModel>(v).is_err());

    let q = Quantizer::with_random_shift(3, 0.07, &mut testdata::rng("serde-q")).unwrap();
    let back: Quantizer = postcard::from_bytes(&postcard::to_allocvec(&q).unwrap()).unwrap();
    assert_eq!(back, q);
    let mut v = serde_json::to_value(&q).unwrap();
    v["gamma"] = serde_json::json!(-1.0);
    assert!(serde_json::from_value::<Quantizer>(v).is_err());

    let t = BoxTransform::fit(&d).unwrap();
    let back: BoxTransform = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
    assert_eq!(back, t);
}
