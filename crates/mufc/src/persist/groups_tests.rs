//! A saved federation with groups that lies about them is refused: each
//! way of editing the stored groups (then sealing the file again, as
//! anyone can) gives [`MufcError::Persistence`], never a federation whose
//! nodes disagree with its clients.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use seeding_testkit::mixtures::{Mixture, gaussian_clients};

use super::body::SavedTree;
use super::save::sealed;
use crate::{Federation, FederationConfig, MufcError, Topology};

/// Nine clients: three groups of three.
const MIX: Mixture = Mixture {
    clients: 9,
    ..Mixture::SMALL
};

fn tree() -> Federation {
    let data = gaussian_clients("persist-groups", MIX);
    let config = FederationConfig::new(2)
        .topology(Topology::Tree {
            group_size: 3,
            fan_out: 2,
        })
        .seed(3)
        .validate()
        .unwrap();
    Federation::new(data, &config).unwrap()
}

/// The edits a forger may make to the stored groups.
const EDITS: usize = 8;

/// Applies edit `which` to `t` (drawing its details from `rng`).
fn edit(t: &mut SavedTree, which: usize, rng: &mut StdRng) -> &'static str {
    let g = rng.random_range(0..t.groups.len());
    let h = (g + 1 + rng.random_range(0..t.groups.len() - 1)) % t.groups.len();
    match which {
        0 => {
            // Two clients of two groups swapped (sizes kept).
            let (a, b) = (t.groups[g].members[0], t.groups[h].members[0]);
            for group in &mut t.groups {
                for c in group.included.iter_mut().chain(group.members.iter_mut()) {
                    if *c == a {
                        *c = b;
                    } else if *c == b {
                        *c = a;
                    }
                }
            }
            "two clients swapped"
        }
        1 => {
            let bin = rng.random_range(0..t.groups[g].counts.len());
            t.groups[g].counts[bin].1 += 1;
            "a count raised"
        }
        2 => {
            // One point moved between two groups: the root's sum holds.
            let bin = rng.random_range(0..t.groups[g].counts.len());
            let (b, _) = t.groups[g].counts[bin].clone();
            t.groups[g].counts[bin].1 -= 1;
            t.groups[g].counts.retain(|(_, c)| *c > 0);
            let at = t.groups[h].counts.binary_search_by(|(x, _)| x.cmp(&b));
            match at {
                Ok(i) => t.groups[h].counts[i].1 += 1,
                Err(i) => t.groups[h].counts.insert(i, (b, 1)),
            }
            "a point moved between groups"
        }
        3 => {
            let foreign = t.groups[h].members[0];
            t.groups[g].included.push(foreign);
            "another group's client included"
        }
        4 => {
            t.groups[g].rounds += 1 + rng.random_range(0..5u64);
            "a round counter raised"
        }
        5 => {
            t.fan_out = Some(rng.random_range(0..2));
            "a fan-out below 2"
        }
        6 => {
            // A group split below the minimum.
            let c = t.groups[g].members.remove(0);
            t.groups[g].included.retain(|x| *x != c);
            t.groups.push(super::body::SavedGroup {
                members: vec![c],
                rounds: 0,
                included: vec![],
                counts: vec![],
            });
            "a group of one"
        }
        _ => {
            let bin = rng.random_range(0..t.groups[g].counts.len());
            let dup = t.groups[g].counts[bin].clone();
            t.groups[g].counts.insert(bin, dup);
            "a bin repeated"
        }
    }
}

#[test]
fn edited_groups_are_refused() {
    let fed = tree();
    assert!(Federation::from_bytes(&fed.to_bytes().unwrap()).is_ok());
    let mut rng = StdRng::seed_from_u64(7);
    for trial in 0..4 * EDITS {
        let which = if trial < EDITS {
            trial
        } else {
            rng.random_range(0..EDITS)
        };
        let mut repr = fed.repr();
        let what = edit(repr.tree.as_mut().unwrap(), which, &mut rng);
        let bytes = sealed(&repr).unwrap();
        match Federation::from_bytes(&bytes) {
            Err(MufcError::Persistence(m)) => assert!(m.contains("group"), "{what}: {m}"),
            other => panic!("{what} (trial {trial}): {other:?}"),
        }
    }
}

#[test]
fn groups_dropped_from_a_file_whose_configuration_has_them_are_refused() {
    let fed = tree();
    let mut repr = fed.repr();
    repr.tree = None;
    let err = Federation::from_bytes(&sealed(&repr).unwrap()).unwrap_err();
    assert!(
        matches!(&err, MufcError::Persistence(m) if m.contains("no groups")),
        "{err}"
    );
    // And groups added to a flat federation's file: refused too (the
    // clients are not where the counts say).
    let flat = Federation::new(
        gaussian_clients("persist-groups", MIX),
        &FederationConfig::new(2).seed(3).validate().unwrap(),
    )
    .unwrap();
    let mut repr = flat.repr();
    let mut t = fed.repr().tree.unwrap();
    t.groups[0].counts.clear();
    repr.tree = Some(t);
    assert!(matches!(
        Federation::from_bytes(&sealed(&repr).unwrap()),
        Err(MufcError::Persistence(_))
    ));
}

/// The ids of clients that left whole are saved (version 12): loaded,
/// the federation refuses a join that takes one, as before the save. A
/// forged list (out of order, or naming a client still there) is
/// refused.
#[test]
fn the_ids_of_clients_that_left_are_kept_and_a_forged_list_is_refused() {
    let mut fed = Federation::new(
        gaussian_clients("persist-left", MIX),
        &FederationConfig::new(2).seed(3).validate().unwrap(),
    )
    .unwrap();
    let left = crate::ClientId(4);
    fed.remove(&crate::RemovalRequest::clients(vec![left]))
        .unwrap();
    fed.flush().unwrap();
    let repr = fed.repr();
    assert_eq!(repr.left, [left]);
    let mut loaded = Federation::from_bytes(&fed.to_bytes().unwrap()).unwrap();
    let newcomer = gaussian_clients("persist-left-new", MIX).remove(0);
    let err = loaded
        .add(&crate::AdditionRequest::new_client(left, newcomer))
        .unwrap_err();
    assert!(err.to_string().contains("is or was a member"), "{err}");
    assert_eq!(loaded.to_bytes().unwrap(), fed.to_bytes().unwrap());
    let forged = |left: Vec<u64>| {
        let mut repr = fed.repr();
        repr.left = left.into_iter().map(crate::ClientId).collect();
        Federation::from_bytes(&sealed(&repr).unwrap())
    };
    assert!(forged(vec![4]).is_ok());
    for (bad, why) in [
        (vec![4, 4], "strict id order"),
        (vec![4, 3], "strict id order"),
        (vec![2], "client 2 left and is still named"),
        (vec![3, 4], "client 3 left and is still named"),
    ] {
        let err = forged(bad).unwrap_err();
        assert!(
            matches!(&err, MufcError::Persist(crate::PersistError::Corrupt { reason }) if reason.contains(why)),
            "{why}: {err:?}"
        );
    }
}
