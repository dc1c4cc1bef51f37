//! The public types can cross threads.

use baselines::*;

fn send_sync<T: Send + Sync + Unpin>() {}

#[test]
fn public_types_are_send_and_sync() {
    send_sync::<KFedParams>();
    send_sync::<ValidKFedParams>();
    send_sync::<KFedRun>();
    send_sync::<LocalClustering>();
    send_sync::<DcParams>();
    send_sync::<ValidDcParams>();
    send_sync::<DcKMeans>();
    send_sync::<Deletion>();
    send_sync::<BaselineError>();
}
