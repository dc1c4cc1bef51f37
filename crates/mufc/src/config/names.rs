//! The named choices of a configuration: each has the name used on
//! command lines, in reports and in saved files, and a one-line help
//! (`ALL`, `name` and `help` are what a command-line parser needs:
//! `mufc-cli` builds its possible values from them).

use core::fmt;
use core::str::FromStr;

use crate::MufcError;
use crate::error::config_error;

macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident { $( $(#[$vmeta:meta])* $variant:ident => $text:literal | $help:literal, )+ }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        #[derive(serde::Serialize, serde::Deserialize)]
        #[non_exhaustive]
        pub enum $name { $( $(#[$vmeta])* $variant, )+ }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            /// The name used on command lines and in reports.
            pub fn name(self) -> &'static str {
                match self { $(Self::$variant => $text,)+ }
            }

            /// One line on what the value means, for `--help`.
            pub fn help(self) -> &'static str {
                match self { $(Self::$variant => $help,)+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }

        impl FromStr for $name {
            type Err = MufcError;
            fn from_str(s: &str) -> Result<Self, MufcError> {
                Self::ALL
                    .iter()
                    .copied()
                    .find(|v| v.name() == s)
                    .ok_or_else(|| {
                        let names: Vec<&str> = Self::ALL.iter().map(|v| v.name()).collect();
                        config_error(crate::ConfigParam::$name, format!("unknown value {s:?}, expected one of {}", names.join(", ")))
                    })
            }
        }
    };
}

named_enum! {
    /// Where the masks of a secure aggregation round come from.
    ///
    /// Each hides a client's sketch behind a uniformly random vector that
    /// cancels in the sum over the clients of the round, so the decoded
    /// aggregate does not depend on the masking: with no dropouts all three
    /// give the same counts, bit for bit.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::Masking;
    ///
    /// assert_eq!("pairwise".parse::<Masking>()?, Masking::Pairwise);
    /// assert_eq!("secagg".parse::<Masking>()?, Masking::SecAgg);
    /// # Ok::<(), mufc::MufcError>(())
    /// ```
    pub enum Masking {
        /// An offline dealer deals zero-sum masks for every round
        /// (Algorithm 2, line 2: "generated offline"). The default; the
        /// dealing is timed apart, as offline work.
        #[default]
        Dealer => "dealer" | "Zero-sum masks from an offline dealer (Algorithm 2; no dropouts)",
        /// Pairwise masks: every pair of clients agrees on a seed by X25519
        /// and HKDF-SHA256 and expands it with ChaCha20 (no dropouts).
        /// Each client pays one agreement per peer and round.
        Pairwise => "pairwise" | "Pairwise masks from X25519-agreed seeds (no dropouts)",
        /// The dropout-tolerant protocol of Bonawitz et al. 2017 (and
        /// SecAgg+, Bell et al. 2020, with [`SecAggGraph::Harary`]), from
        /// `syndrome_agg::secagg`: all five steps (advertise keys, share
        /// keys, masked input, consistency check, unmasking), double masking (pairwise masks
        /// plus a self-mask) and Shamir sharing of the mask secrets, run
        /// in process for every round. Needs a field: any
        /// [`Scma`](crate::Scma) sketch but the Appendix K integer ring
        /// ([`RingMasks`](crate::RingMasks) has no SecAgg).
        ///
        /// Clients drop out at the rate set by
        /// [`SecAggOptions::dropout`](super::SecAggOptions::dropout): whether client `u` drops in round
        /// `r`, and from which step (advertise keys, share keys, masked
        /// input or unmasking), is a fixed function of
        /// the federation seed, `r` and `u` (so runs reproduce; a failed
        /// round consumes `r`, so a retry draws afresh). A client
        /// that drops before sending its masked input is left out of the
        /// round; one that drops during unmasking is *included* (its
        /// self-mask is rebuilt from its shares, docs/threat-model.md D3). The server
        /// decodes the sum of the included clients only, so its counts
        /// and its model are those of the included clients' data; the
        /// reports list the included clients and the dropped ones with
        /// their step. A round in which too few clients remain fails with
        /// [`MufcError::TooManyDropouts`] and changes nothing but the
        /// round counter.
        ///
        /// Privacy caveat (docs/threat-model.md §2.2): the difference of two rounds'
        /// aggregates contains the whole histogram of every client whose
        /// inclusion changed between them; when that is a single client
        /// and nothing else changed, the server learns its histogram.
        SecAgg => "secagg" | "The dropout-tolerant protocol of Bonawitz et al. 2017 (double masking, Shamir-shared secrets); clients drop at --dropout",
    }
}

named_enum! {
    /// The neighbourhood graph of [`Masking::SecAgg`]: who shares its
    /// secrets with whom.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::SecAggGraph;
    ///
    /// assert_eq!(SecAggGraph::default(), SecAggGraph::Complete);
    /// assert_eq!("harary".parse::<SecAggGraph>()?, SecAggGraph::Harary);
    /// # Ok::<(), mufc::MufcError>(())
    /// ```
    pub enum SecAggGraph {
        /// Every client masks with, and shares its secrets with, every
        /// other (Bonawitz et al. 2017; the default). The threshold is
        /// the least `t` with `2t > n + c` (a server that may lie about
        /// who dropped, docs/threat-model.md S1b), `c = floor(colluding n)`
        /// ([`SecAggOptions::colluding`](super::SecAggOptions::colluding)), and must leave room for
        /// `ceil(dropout n)` dropouts (else the configuration is refused
        /// when the federation is built); a round fails when more than
        /// `n - t` clients drop. The cost is quadratic in the number of
        /// clients.
        #[default]
        Complete => "complete" | "Every client with every other (quadratic cost)",
        /// SecAgg+ (Bell et al. 2020): a Harary graph on a random ring,
        /// of the least even degree that the parameter finder of
        /// `syndrome_agg::secagg::params::ThreatModel` accepts for the
        /// round's number of clients, the dropout rate and the colluding
        /// fraction (security `2^-40`, failure probability `2^-20` given
        /// at most `ceil(dropout n)` dropouts). Small federations get the
        /// complete graph (no smaller degree passes).
        Harary => "harary" | "SecAgg+: a Harary graph of the least degree the parameter finder accepts (security 2^-40, failure 2^-20)",
    }
}

named_enum! {
    /// The points the server builds from the decoded counts (Algorithm 1,
    /// line 6).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::ServerPoints;
    ///
    /// assert_eq!(ServerPoints::default(), ServerPoints::Centers);
    /// assert_eq!("uniform".parse::<ServerPoints>()?, ServerPoints::Uniform);
    /// # Ok::<(), mufc::MufcError>(())
    /// ```
    pub enum ServerPoints {
        /// One point per non-empty bin, at the bin centre, weighted by its
        /// count (Section 4; the default here). A removal that changes one
        /// count changes one weight, and the server's exact K-means updates
        /// at a small fraction of the cost of a fit.
        #[default]
        Centers => "centers" | "Bin centres with weights (Appendix H)",
        /// `q_j` points drawn uniformly inside bin `j` (Appendix H; the
        /// paper's default). Sample `i` of a bin is a fixed function of the
        /// federation seed, the bin and `i`, so the server's data depends
        /// on the counts only and unlearning stays exact; but an update
        /// then costs about a fit on overlapping data (see the crate docs).
        Uniform => "uniform" | "Uniform samples inside each bin (the paper's default)",
    }
}

named_enum! {
    /// What each client runs on its own data (Algorithm 1, line 2).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::ClientTraining;
    ///
    /// assert_eq!("full".parse::<ClientTraining>()?, ClientTraining::Full);
    /// # Ok::<(), mufc::MufcError>(())
    /// ```
    pub enum ClientTraining {
        /// K-means++ seeding only (Algorithm 1, line 2; the default):
        /// unlearning reseeds only when a seed is removed (Algorithm 3).
        #[default]
        Seeding => "seeding" | "K-means++ seeding only (Algorithm 1, line 2)",
        /// Full K-means (seeding then Lloyd, Appendix M.3), with the
        /// exactly unlearnable [`seeding::ExactKMeans`]: a removal updates
        /// the client's model to the fit of its remaining data, bit for
        /// bit, but its centroids (means) move with every removal.
        Full => "full" | "Full K-means: seeding and Lloyd (App. M.3)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for m in Masking::ALL {
            assert_eq!(m.to_string().parse::<Masking>().unwrap(), *m);
        }
        for s in ServerPoints::ALL {
            assert_eq!(s.name().parse::<ServerPoints>().unwrap(), *s);
        }
        for t in ClientTraining::ALL {
            assert_eq!(t.name().parse::<ClientTraining>().unwrap(), *t);
        }
        for g in SecAggGraph::ALL {
            assert_eq!(g.name().parse::<SecAggGraph>().unwrap(), *g);
        }
        let err = "Dealer".parse::<Masking>().unwrap_err();
        assert!(
            err.to_string().contains("dealer, pairwise, secagg"),
            "{err}"
        );
    }
}
