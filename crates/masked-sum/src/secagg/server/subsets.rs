//! The `t`-subsets the server tries when one secret's shares disagree
//! and Gao's decoder cannot correct them (docs/threat-model.md S4).

#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::arithmetic_side_effects
)]

/// The `k`-subsets of `0..n` in lexicographic order.
pub(super) struct Subsets {
    n: usize,
    current: Option<Vec<usize>>,
    first: bool,
}

impl Subsets {
    pub(super) fn new(n: usize, k: usize) -> Self {
        Self {
            n,
            current: (k <= n).then(|| (0..k).collect()),
            first: true,
        }
    }

    pub(super) fn next_subset(&mut self) -> Option<&[usize]> {
        if self.first {
            self.first = false;
            return self.current.as_deref();
        }
        let n = self.n;
        let cur = self.current.as_mut()?;
        let k = cur.len();
        // The rightmost position that can still move right.
        let Some(i) = (0..k).rev().find(|&i| {
            cur.get(i)
                .is_some_and(|&v| v < n.saturating_sub(k).saturating_add(i))
        }) else {
            self.current = None;
            return None;
        };
        let mut next = cur.get(i).copied()?.saturating_add(1);
        for slot in cur.iter_mut().skip(i) {
            *slot = next;
            next = next.saturating_add(1);
        }
        self.current.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::Subsets;

    fn all(n: usize, k: usize) -> Vec<Vec<usize>> {
        let mut s = Subsets::new(n, k);
        let mut out = Vec::new();
        while let Some(x) = s.next_subset() {
            out.push(x.to_vec());
        }
        out
    }

    #[test]
    fn every_subset_once_in_order() {
        assert_eq!(
            all(4, 3),
            vec![vec![0, 1, 2], vec![0, 1, 3], vec![0, 2, 3], vec![1, 2, 3]]
        );
        assert_eq!(all(6, 3).len(), 20);
        assert_eq!(all(3, 3), vec![vec![0, 1, 2]]);
        assert_eq!(all(5, 0), vec![Vec::<usize>::new()]);
        assert!(all(2, 3).is_empty());
    }
}
