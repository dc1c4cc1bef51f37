//! The times of a request, as its report states them: each client's own
//! training or unlearning, its encoding and masking, and the wall time.

use std::time::{Duration, Instant};

use crate::StageTimes;

/// Adds a round's client-side times (in client order, with each client's
/// own training time) into `times`.
pub(crate) fn client_times(times: &mut StageTimes, own: &[Duration], encode: &[Duration]) {
    for (i, &e) in encode.iter().enumerate() {
        let o = own.get(i).copied().unwrap_or_default();
        times.encode_mask_max = times.encode_mask_max.max(e);
        times.encode_mask_sum += e;
        times.client_round_max = times.client_round_max.max(o + e);
    }
    for &o in own {
        times.client_max = times.client_max.max(o);
        times.client_sum += o;
        times.client_round_max = times.client_round_max.max(o);
    }
}

/// The times of a request that ran no round: the clients' own
/// unlearning (`own`) and the wall time since `wall`.
pub(crate) fn request_times(own: &[Duration], wall: Instant) -> StageTimes {
    let mut times = StageTimes {
        wall: wall.elapsed(),
        ..StageTimes::default()
    };
    client_times(&mut times, own, &[]);
    times
}
