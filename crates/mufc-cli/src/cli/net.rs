//! The options of the federation across processes: `mufc server`,
//! `mufc client` and `mufc dealer` (thin layers over `mufc_net`).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{StoreOutput, TopologyArgs};
use mufc::SecAggGraph;

/// How often a party pings its connections (server and client alike).
#[derive(Clone, Debug, Args)]
pub struct KeepaliveArgs {
    /// Seconds between two pings of a connection; a ping unanswered for
    /// four times as long closes it: a peer whose link went down is seen
    /// gone (a client then connects again).
    #[arg(
        allow_negative_numbers = true,
        long = "keepalive",
        value_name = "SECS",
        default_value_t = 30.0
    )]
    pub secs: f64,
}

/// Where a party's certificates are: a directory `mufc certs` wrote, or
/// each file named.
#[derive(Clone, Debug, Args)]
pub struct TlsArgs {
    /// The directory `mufc certs` wrote (`ca.pem`, `server.pem`,
    /// `server-key.pem`, `client-<name>.pem`, `client-<name>-key.pem`).
    #[arg(long, value_name = "DIR")]
    pub certs: Option<PathBuf>,
    /// The federation's authority certificate [default: DIR/ca.pem].
    #[arg(long, value_name = "PEM")]
    pub ca: Option<PathBuf>,
    /// This party's certificate [default: DIR/server.pem, or
    /// DIR/client-NAME.pem].
    #[arg(long, value_name = "PEM")]
    pub cert: Option<PathBuf>,
    /// This party's key [default: DIR/server-key.pem, or
    /// DIR/client-NAME-key.pem].
    #[arg(long, value_name = "PEM")]
    pub key: Option<PathBuf>,
    /// The federation file every party holds (`mufc certs` writes it):
    /// the roster, the smallest grid step and the most points a client
    /// may claim. The server refuses claims beyond it and never resolves
    /// a finer step; a client refuses any round outside it [default:
    /// DIR/federation.json when it exists].
    #[arg(long = "federation-file", value_name = "JSON")]
    pub federation_file: Option<PathBuf>,
}

/// Options of `mufc server`.
#[derive(Clone, Debug, Args)]
pub struct ServerArgs {
    /// Output options (`--json`: one JSON object per event, per line).
    #[command(flatten)]
    pub out: StoreOutput,
    /// TLS options.
    #[command(flatten)]
    pub tls: TlsArgs,
    /// The address to listen on (`127.0.0.1:0`: a free port, printed).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7443")]
    pub listen: String,
    /// The server's store: written after training, resumed from when it
    /// exists (its roster and configuration then win). It never holds a
    /// client's point.
    #[arg(long, value_name = "STORE")]
    pub store: PathBuf,
    /// The clients, comma-separated, in id order (the names of their
    /// certificates). Training waits for all of them.
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub clients: Vec<String>,
    /// The number of clusters K the server finds.
    #[arg(long, default_value_t = 10)]
    pub k: usize,
    /// The clusters each client finds [default: adapted to the points the
    /// clients register, as `mufc run` and `fit` do: max(K, min(ceil(n /
    /// (2 L)), ceil(1000 / L))), a client of n_l points min(that,
    /// ceil(n_l / 2))].
    #[arg(long, value_name = "K")]
    pub client_k: Option<usize>,
    /// Quantization step [default: min(1/sqrt(n d), 1/1024), n the
    /// registered points].
    #[arg(allow_negative_numbers = true, long, value_name = "G")]
    pub gamma: Option<f64>,
    /// The federation's seed (the clients' K-means++ and the server's).
    #[arg(long, default_value_t = 2023)]
    pub seed: u64,
    /// The most points the federation may ever hold, records that arrive
    /// later (`mufc client add`) included: its sums are sized for it at
    /// training, and a round past it fails [default: the points at
    /// training, which leaves no room for records that arrive].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_points: Option<u64>,
    /// The fraction of clients a round must survive losing: sizes the
    /// SecAgg threshold (a real dropout beyond it fails the round and
    /// unmasks nothing).
    #[arg(
        allow_negative_numbers = true,
        long,
        value_name = "RATE",
        default_value_t = 0.0
    )]
    pub dropout: f64,
    /// How the clients mask their sketches: `secagg` (the dropout-tolerant
    /// protocol), `pairwise` (fresh X25519 keys every round, the key
    /// directory relayed by the server; no dropout tolerated, against an
    /// honest-but-curious server only) or `dealer` (a third party, `mufc
    /// dealer`, seals each client a fresh seed every round and gives the
    /// server the correction; no dropout tolerated).
    #[arg(long, value_parser = super::named::named!(mufc::Masking), default_value_t = mufc::Masking::SecAgg)]
    pub masking: mufc::Masking,
    /// The SecAgg neighbourhood graph.
    #[arg(long, value_parser = super::named::named!(SecAggGraph), default_value_t = SecAggGraph::Complete)]
    pub secagg_graph: SecAggGraph,
    /// The fewest clients an aggregate may hold (a group's, with groups).
    #[arg(long, value_name = "M", default_value_t = mufc::DEFAULT_MIN_CLIENTS)]
    pub min_clients: usize,
    /// Groups and trees: each round then runs in one group, and only its
    /// members hear of it.
    #[command(flatten)]
    pub layout: TopologyArgs,
    /// Seconds the server waits for the answers of one protocol step; a
    /// client that has not answered is dropped at that step.
    #[arg(
        allow_negative_numbers = true,
        long,
        value_name = "SECS",
        default_value_t = 30.0
    )]
    pub step_timeout: f64,
    /// Seconds a removal round waits for absent clients of the roster
    /// before it runs without them.
    #[arg(
        allow_negative_numbers = true,
        long,
        value_name = "SECS",
        default_value_t = 60.0
    )]
    pub join_timeout: f64,
    /// The lone-update policy: a removal round runs once the waiting
    /// requests name at least this many clients of the group (1: every
    /// request at once; a round that changes one client's message shows
    /// the server that change).
    #[arg(long, value_name = "M", default_value_t = mufc::DEFAULT_MIN_UPDATING_CLIENTS)]
    pub min_updating_clients: usize,
    /// Seconds a removal request waits for the lone-update policy at
    /// most; then its round runs alone [default: 7 days].
    #[arg(
        allow_negative_numbers = true,
        long,
        value_name = "SECS",
        default_value_t = 604_800.0
    )]
    pub max_defer: f64,
    /// The largest message accepted from a client, in MiB (a round's
    /// largest is a masked sketch: by estimate, not measured, at most 3.2 MB for a thousand clients of
    /// a hundred centroids each).
    #[arg(long, value_name = "MIB", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub max_message_mib: u32,
    /// Connections open at once; one beyond it is closed as soon as it
    /// is accepted.
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,
    /// How often the connections are pinged.
    #[command(flatten)]
    pub keepalive: KeepaliveArgs,
    /// Connections in their TLS handshake at once (each has 10 s); one
    /// beyond it is closed as soon as it is accepted.
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_handshakes: u32,
    /// The revocation list (`mufc certs --revoke` writes it), read again
    /// whenever it changes [default: DIR/revoked.txt].
    #[arg(long, value_name = "FILE")]
    pub revocation_list: Option<PathBuf>,
    /// A client whose name is not on the roster joins the trained
    /// federation with its certificate from the federation's authority
    /// (`mufc certs --clients NAME --join` issues it): it goes on the
    /// roster, and its first round waits for the lone-update policy.
    /// Default: refused. Not with groups or dealt masks yet.
    #[arg(long)]
    pub admit_new_clients: bool,
}

/// Options of `mufc client`.
#[derive(Clone, Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ClientArgs {
    /// `forget`: a request to the running client, through its store.
    #[command(subcommand)]
    pub action: Option<ClientAction>,
    /// Output options (`--json`: one JSON object per event, per line).
    #[command(flatten)]
    pub out: StoreOutput,
    /// TLS options.
    #[command(flatten)]
    pub tls: TlsArgs,
    /// The server, `host:port`.
    #[arg(long, value_name = "ADDR")]
    pub server: Option<String>,
    /// The client's points (CSV or .npy, one per row; the point ids
    /// are the 0-based rows), read once into its store; every coordinate
    /// in [-1/2, 1/2] unless --bounds maps it there.
    #[arg(long, value_name = "PATH")]
    pub data: Option<PathBuf>,
    /// The bounds LO,HI the consortium agreed on for every coordinate:
    /// points are mapped from [LO, HI] into the box.
    #[arg(long, value_name = "LO,HI", allow_hyphen_values = true)]
    pub bounds: Option<super::Bounds>,
    /// The client's name (its certificate's).
    #[arg(long, value_name = "NAME")]
    pub id: Option<String>,
    /// The client's store: created from --data on the first start, then
    /// the source of its points.
    #[arg(long, value_name = "STORE")]
    pub store: Option<PathBuf>,
    /// The largest message accepted from the server, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub max_message_mib: u32,
    /// How often the connections are pinged.
    #[command(flatten)]
    pub keepalive: KeepaliveArgs,
    /// With dealt masks, the client's long-term X25519 secret key (64 hex
    /// digits; the federation file pins its public key and the dealer's)
    /// [default: DIR/client-NAME-mask.key].
    #[arg(long, value_name = "FILE")]
    pub mask_key: Option<PathBuf>,
}

/// Options of `mufc dealer`.
#[derive(Clone, Debug, Args)]
pub struct DealerArgs {
    /// Output options (`--json`: one JSON object per event, per line).
    #[command(flatten)]
    pub out: StoreOutput,
    /// TLS options (the dealer's certificate: DIR/dealer.pem and
    /// DIR/dealer-key.pem; the federation file, which pins every client's
    /// public key, is required).
    #[command(flatten)]
    pub tls: TlsArgs,
    /// The server, `host:port`.
    #[arg(long, value_name = "ADDR")]
    pub server: String,
    /// The dealer's long-term X25519 secret key (64 hex digits)
    /// [default: DIR/dealer-mask.key].
    #[arg(long, value_name = "FILE")]
    pub mask_key: Option<PathBuf>,
    /// How often the connection is pinged.
    #[command(flatten)]
    pub keepalive: KeepaliveArgs,
}

/// What `mufc client` may do besides running.
#[derive(Clone, Debug, Subcommand)]
pub enum ClientAction {
    /// Ask the running client to forget points: recorded in its store,
    /// applied by it, acknowledged once a round committed at the server.
    Forget(ClientForgetArgs),
    /// Ask the running client to add records (issue 29): recorded in its
    /// store with the records, learned by it, acknowledged once a round
    /// committed at the server; the model is then training's on every
    /// record present.
    Add(ClientAddArgs),
    /// Ask the running client to leave the federation (issue 29): it
    /// forgets every point it holds (its whole removal), and once that
    /// round committed it signs its leave, which the server keeps and
    /// relays so that the members run their rings without it; the client
    /// then stops, and never runs on this store again.
    Leave(ClientLeaveArgs),
}

/// Options of `mufc client leave`.
#[derive(Clone, Debug, Args)]
pub struct ClientLeaveArgs {
    /// Output options.
    #[command(flatten)]
    pub out: StoreOutput,
    /// The client's store.
    #[arg(long, value_name = "STORE")]
    pub store: PathBuf,
    /// Seconds to wait until the server took the leave (0: do not wait;
    /// the running client leaves all the same).
    #[arg(
        allow_negative_numbers = true,
        long,
        value_name = "SECS",
        default_value_t = 120.0
    )]
    pub wait: f64,
}

/// Options of `mufc client add`.
#[derive(Clone, Debug, Args)]
pub struct ClientAddArgs {
    /// Output options.
    #[command(flatten)]
    pub out: StoreOutput,
    /// The client's store.
    #[arg(long, value_name = "STORE")]
    pub store: PathBuf,
    /// The records to add, one per row (CSV or `.npy`), in the units of
    /// the client's data.
    #[arg(long, value_name = "PATH")]
    pub data: PathBuf,
    /// The 0-based column of each record's id (a non-negative integer
    /// the client never held) [default: ids go on from the largest the
    /// client's store has named: rows 0, 1, ... of the file become
    /// `m + 1`, `m + 2`, ...].
    #[arg(long, value_name = "COL")]
    pub id_column: Option<usize>,
    /// The bounds LO,HI the client's data is mapped from into the model's
    /// box, as `mufc client --bounds` [default: the federation file's,
    /// with `--certs` or `--federation-file`; else the records must lie
    /// in the box already].
    #[arg(long, value_name = "LO,HI", allow_hyphen_values = true)]
    pub bounds: Option<super::Bounds>,
    /// Where the federation file is (only it is read).
    #[command(flatten)]
    pub tls: TlsArgs,
    /// Seconds to wait for the acknowledgement (0: do not wait; the
    /// request is served all the same).
    #[arg(
        allow_negative_numbers = true,
        long,
        value_name = "SECS",
        default_value_t = 120.0
    )]
    pub wait: f64,
}

/// Options of `mufc client forget`.
#[derive(Clone, Debug, Args)]
pub struct ClientForgetArgs {
    /// Output options.
    #[command(flatten)]
    pub out: StoreOutput,
    /// The client's store.
    #[arg(long, value_name = "STORE")]
    pub store: PathBuf,
    /// Point ids to forget (0-based rows of the client's data),
    /// comma-separated.
    #[arg(long, value_name = "IDS", value_delimiter = ',', required = true)]
    pub ids: Vec<u64>,
    /// Seconds to wait for the acknowledgement (0: do not wait; the
    /// request is served all the same).
    #[arg(
        allow_negative_numbers = true,
        long,
        value_name = "SECS",
        default_value_t = 120.0
    )]
    pub wait: f64,
}
