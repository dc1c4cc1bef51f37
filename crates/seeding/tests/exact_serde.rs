//! Persistence of exact K-means models: a restored model equals the
//! original bit for bit and updates as it would; corrupt input is an
//! error, never a panic.
#![cfg(feature = "serde")]
#![allow(clippy::unwrap_used)]

use nalgebra::DMatrix;
use seeding::{Changes, ExactKMeans, ExactModel, KMeansParams};
use seeding_testkit::exact::{Coords, Points, Step, compare};

fn round_trips(model: &ExactModel) -> Vec<ExactModel> {
    vec![
        serde_json::from_str(&serde_json::to_string(model).unwrap()).unwrap(),
        postcard::from_bytes(&postcard::to_allocvec(model).unwrap()).unwrap(),
    ]
}

#[test]
fn a_restored_model_updates_like_the_original() {
    let mut points = Points::random(3, 120, Coords::Continuous, true, 8);
    let km = ExactKMeans::new(KMeansParams::new(4).restarts(2).validate().unwrap());
    let model = km.fit(&points.dataset(0), 31).unwrap();
    let init = DMatrix::from_fn(3, 3, |r, c| (r + 2 * c) as f64 - 2.0);
    let warm = km.fit_from(&points.dataset(0), init.as_view(), 31).unwrap();
    let changes = points
        .apply(&Step::Reseed(vec![3, 40, 77], 4, 9), model.seeds())
        .unwrap();
    let new = points.dataset(1);
    for original in [model, warm] {
        for mut restored in round_trips(&original) {
            compare(&restored, &original).unwrap();
            let mut orig = original.clone();
            assert_eq!(
                restored.update(&new, &changes).unwrap().iterations(),
                orig.update(&new, &changes).unwrap().iterations()
            );
            compare(&restored, &orig).unwrap();
        }
    }
}

#[test]
fn corrupt_models_are_rejected() {
    let points = Points::random(2, 30, Coords::Fine, false, 3);
    let model = ExactKMeans::new(KMeansParams::new(3).validate().unwrap())
        .fit(&points.dataset(0), 1)
        .unwrap();
    let v = serde_json::to_value(&model).unwrap();
    let mut bad = v.clone();
    bad["params"]["k"] = serde_json::json!(0);
    assert!(serde_json::from_value::<ExactModel>(bad).is_err());
    let mut bad = v.clone();
    bad["params"]["max_iterations"] = serde_json::json!(0);
    assert!(serde_json::from_value::<ExactModel>(bad).is_err());
    let mut bad = v.clone();
    bad["initial"] = serde_json::json!([1.0, 2.0, 3.0]);
    assert!(serde_json::from_value::<ExactModel>(bad).is_err());
    let mut bad = v.clone();
    bad["data"]["coords"][0] = serde_json::json!(1.0e6);
    assert!(serde_json::from_value::<ExactModel>(bad).is_err());
    let mut bad = v;
    bad["data"]["ids"] = serde_json::json!([]);
    assert!(serde_json::from_value::<ExactModel>(bad).is_err());
    let mut rng = testdata::rng("exact-serde-garbage");
    for len in 0..200 {
        let bytes: Vec<u8> = (0..len)
            .map(|_| rand::Rng::next_u32(&mut rng).to_le_bytes()[0])
            .collect();
        let _ = postcard::from_bytes::<ExactModel>(&bytes);
        let _ = postcard::from_bytes::<Changes>(&bytes);
    }
}
