//! The options that organise the clients into groups and a tree
//! (`--topology`, `--group-size`, `--fan-out`), shared by the commands
//! that build a federation in one process and by `mufc server`.

use clap::{Args, ValueEnum};

/// How the clients are organised for aggregation.
#[derive(Clone, Debug, Args)]
pub struct TopologyArgs {
    /// How the clients are organised for aggregation: one aggregate of
    /// every client (flat, the paper's), groups of --group-size clients
    /// whose masks cancel inside the group, or a tree of such groups with
    /// --fan-out children per node. With groups a removal involves the
    /// affected groups only, not every client, and every node keeps a
    /// model; the root's is flat MUFC's, bit for bit. The server learns
    /// each group's sum (docs/threat-model.md §11).
    #[arg(long, value_enum, default_value_t = TopologyKind::Flat)]
    pub topology: TopologyKind,
    /// The fewest clients of a group (--topology groups or tree; groups
    /// hold B to 2B - 1 clients); at least --min-clients. `auto`: the
    /// size the dynamic-users paper's ParGen gives for these clients, the
    /// --dropout rate, 5 % colluders and 5 % of a group removed, at 40
    /// bits of security and correctness (often more than half the
    /// clients, or none at all, for small federations).
    #[arg(long, value_name = "B|auto", default_value = "10")]
    pub group_size: GroupSize,
    /// The most children of a node of the tree (--topology tree).
    #[arg(long, value_name = "F", default_value_t = 4)]
    pub fan_out: usize,
}

impl TopologyArgs {
    /// The topology the options name, for a federation of `clients`
    /// clients that plans for the dropout rate `dropout` (both read by
    /// `--group-size auto`).
    ///
    /// ```
    /// use clap::Parser;
    /// use mufc_cli::cli::{Cli, Command};
    ///
    /// let cli = Cli::try_parse_from(["mufc", "run", "--topology", "tree", "--group-size", "4"])
    ///     .unwrap();
    /// let Command::Run(args) = cli.command else { panic!() };
    /// assert_eq!(
    ///     args.fed.layout.topology(100, 0.0).unwrap(),
    ///     mufc::Topology::Tree { group_size: 4, fan_out: 4 }
    /// );
    /// ```
    ///
    /// # Errors
    ///
    /// [`CliError::Mufc`](crate::CliError::Mufc) when `auto` finds no
    /// group size for these clients and rates.
    pub fn topology(
        &self,
        clients: usize,
        dropout: f64,
    ) -> Result<mufc::Topology, crate::CliError> {
        if self.topology == TopologyKind::Flat {
            return Ok(mufc::Topology::Flat);
        }
        let size = self.group_size(clients, dropout)?;
        Ok(match self.topology {
            TopologyKind::Tree => mufc::Topology::Tree {
                group_size: size,
                fan_out: self.fan_out,
            },
            _ => mufc::Topology::Groups { size },
        })
    }

    /// The group size `--group-size` names for `clients` clients and the
    /// dropout rate `dropout`.
    ///
    /// # Errors
    ///
    /// As [`Self::topology`].
    pub fn group_size(&self, clients: usize, dropout: f64) -> Result<usize, crate::CliError> {
        match self.group_size {
            GroupSize::Fixed(b) => Ok(b),
            GroupSize::Auto => Ok(mufc::SecAggOptions::new()
                .dropout(dropout)
                .group_size(clients, AUTO_REMOVAL_RATE)?),
        }
    }
}

/// The fraction of a group `--group-size auto` plans to see removed.
pub const AUTO_REMOVAL_RATE: f64 = 0.05;

/// `--group-size`: a number, or `auto` (ParGen).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupSize {
    /// This many clients at least.
    Fixed(usize),
    /// The dynamic-users paper's ParGen.
    Auto,
}

impl std::str::FromStr for GroupSize {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("auto") {
            return Ok(Self::Auto);
        }
        s.parse()
            .map(Self::Fixed)
            .map_err(|_| format!("{s:?} is neither a number nor `auto`"))
    }
}

impl std::fmt::Display for GroupSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Fixed(b) => write!(f, "{b}"),
            Self::Auto => f.write_str("auto"),
        }
    }
}

/// How the clients are organised (`--topology`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TopologyKind {
    /// One aggregate of every client.
    Flat,
    /// Groups of --group-size clients under one root.
    Groups,
    /// Groups as the leaves of a tree of fan-out --fan-out.
    Tree,
}
