//! Public types can cross threads (the `mufc` crate runs clients on rayon).

use seeding::*;

fn send_sync<T: Send + Sync + Unpin>() {}

#[test]
fn public_types_are_send_and_sync() {
    send_sync::<Dataset>();
    send_sync::<PointId>();
    send_sync::<SeedingError>();
    send_sync::<KMeansPlusPlus>();
    send_sync::<KMeansPlusPlus<L1>>();
    send_sync::<Seeding>();
    send_sync::<Seeding<Cosine, RngSampler<rand_chacha::ChaCha8Rng>>>();
    send_sync::<UnlearnReport>();
    send_sync::<UnlearnOutcome>();
    send_sync::<ExpRace>();
    send_sync::<Enumerator>();
    send_sync::<Branch>();
    send_sync::<KMeans>();
    send_sync::<KMeansParams>();
    send_sync::<ValidKMeansParams>();
    send_sync::<SeedingParams>();
    send_sync::<ValidSeedingParams>();
    send_sync::<KMeansModel>();
    send_sync::<Quantizer>();
    send_sync::<BoxTransform>();
    send_sync::<SqEuclidean>();
    send_sync::<ExactKMeans>();
    send_sync::<ExactModel>();
    send_sync::<Changes>();
    send_sync::<UpdateReport>();
    send_sync::<RunReport>();
}
