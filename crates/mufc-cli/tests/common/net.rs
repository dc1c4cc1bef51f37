//! Running a federation of `mufc server` and `mufc client` processes on
//! 127.0.0.1 for the multi-process tests: each child's stdout is read line
//! by line into a log the test waits on (with a deadline), and every child
//! is killed when its handle drops, so a failing test stops by itself.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mufc::{Channel, Federation, Masks, NodeId, SecAggOptions};
use mufc_store::Store;
use seeding::Dataset;

/// The longest any wait of these tests takes.
pub(crate) const LIMIT: Duration = Duration::from_secs(60);

/// A child process and the lines it printed.
pub(crate) struct Proc {
    child: Child,
    /// The lines without their time and level ([`unstamped`]).
    lines: Arc<Mutex<Vec<String>>>,
    raw: Arc<Mutex<Vec<String>>>,
    name: String,
}

impl Proc {
    /// Starts `mufc args...` in `dir` with the environment `env`.
    pub(crate) fn start(name: &str, dir: &Path, args: &[String], env: &[(&str, &str)]) -> Self {
        Self::spawn(name, dir, args, env, true, None)
    }

    /// [`Self::start`] inside the network namespace `netns`
    /// (`ip netns exec`, which execs `mufc` itself: the child is `mufc`).
    pub(crate) fn start_in(netns: &str, name: &str, dir: &Path, args: &[String]) -> Self {
        Self::spawn(name, dir, args, &[], true, Some(netns))
    }

    /// [`Self::start`] with the reading end of its stdout closed at once,
    /// as when its output is piped into a reader that exits (`| head`):
    /// only its stderr is logged.
    pub(crate) fn start_with_stdout_closed(name: &str, dir: &Path, args: &[String]) -> Self {
        Self::spawn(name, dir, args, &[], false, None)
    }

    fn spawn(
        name: &str,
        dir: &Path,
        args: &[String],
        env: &[(&str, &str)],
        read_stdout: bool,
        netns: Option<&str>,
    ) -> Self {
        let mut cmd = match netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, env!("CARGO_BIN_EXE_mufc")]);
                c
            }
            None => Command::new(env!("CARGO_BIN_EXE_mufc")),
        };
        cmd.args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let stdout = child.stdout.take().unwrap();
        let mut streams =
            vec![Box::new(child.stderr.take().unwrap()) as Box<dyn std::io::Read + Send>];
        if read_stdout {
            streams.push(Box::new(stdout));
        } else {
            drop(stdout);
        }
        for stream in streams {
            let lines = lines.clone();
            let raw = raw.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines() {
                    let Ok(line) = line else { return };
                    lines.lock().unwrap().push(unstamped(&line).to_string());
                    raw.lock().unwrap().push(line);
                }
            });
        }
        Self {
            child,
            lines,
            raw,
            name: name.to_string(),
        }
    }

    /// Every line so far, without its time and level.
    pub(crate) fn log(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    /// Every line so far, as printed.
    pub(crate) fn raw_log(&self) -> Vec<String> {
        self.raw.lock().unwrap().clone()
    }

    /// Waits for a line `want` accepts (after the first `skip` lines) and
    /// returns it; panics with the log at [`LIMIT`].
    pub(crate) fn wait_for_after(&self, skip: usize, want: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            if let Some(l) = self.log().iter().skip(skip).find(|l| want(l)) {
                return l.clone();
            }
            assert!(
                start.elapsed() < LIMIT,
                "{} did not print the line awaited in time; its log:\n{}",
                self.name,
                self.log().join("\n")
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// [`Self::wait_for_after`] from the first line.
    pub(crate) fn wait_for(&self, want: impl Fn(&str) -> bool) -> String {
        self.wait_for_after(0, want)
    }

    /// SIGTERM; returns how long the process took to exit, `None` if it
    /// had not by `limit`.
    pub(crate) fn terminate(&mut self, limit: Duration) -> Option<Duration> {
        self.signal("TERM");
        let start = Instant::now();
        while start.elapsed() < limit {
            if self.child.try_wait().unwrap().is_some() {
                return Some(start.elapsed());
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        None
    }

    /// Whether the process exits by itself within `limit`.
    pub(crate) fn exits_within(&mut self, limit: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < limit {
            if self.child.try_wait().unwrap().is_some() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        false
    }

    /// Sends the signal `name` (`TERM`, `STOP`, `CONT`) through `kill`
    /// (the workspace forbids `unsafe`, and so `libc::kill`).
    pub(crate) fn signal(&self, name: &str) {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill")
            .args([&format!("-{name}"), &pid])
            .status()
            .unwrap();
        assert!(sent.success(), "kill -{name} {pid}");
    }

    /// The process's id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL, and wait for it.
    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `line` without the time and level `mufc server` and `mufc client`
/// put before each event (`2026-11-28T19:05:12.345678Z INFO `), so that
/// the tests match what the line says.
pub(crate) fn unstamped(line: &str) -> &str {
    let mut parts = line.splitn(3, ' ');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(time), Some("ERROR" | "WARN" | "INFO" | "DEBUG" | "TRACE"), Some(rest))
            if time.len() == 27
                && time.ends_with('Z')
                && time.as_bytes().get(10) == Some(&b'T') =>
        {
            rest
        }
        _ => line,
    }
}

/// A port free on 127.0.0.1 now (a restarted server must listen where its
/// clients dial).
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Writes `data` as a CSV without header (every `f64` printed so that it
/// parses back to itself) and returns its path.
pub(crate) fn write_csv(dir: &Path, name: &str, data: &Dataset) -> PathBuf {
    let mut s = String::new();
    for p in 0..data.len() {
        let row: Vec<String> = data.point(p).iter().map(|x| format!("{x:?}")).collect();
        s.push_str(&row.join(","));
        s.push('\n');
    }
    let path = dir.join(format!("{name}.csv"));
    std::fs::write(&path, s).unwrap();
    path
}

/// Gaussian clients' points (`label` seeds them), one per name, each
/// written as `<name>.csv` into `dir`.
pub(crate) fn written_data(dir: &Path, label: &str, names: &[&str]) -> Vec<Dataset> {
    let data = seeding_testkit::mixtures::gaussian_clients(
        label,
        seeding_testkit::mixtures::Mixture::net(names.len()),
    );
    for (name, d) in names.iter().zip(&data) {
        write_csv(dir, name, d);
    }
    data
}

/// `mufc client forget` of `ids` at client `client` (its store
/// `<client>.db` in `dir`), waiting up to `wait` seconds for the
/// acknowledgment: what it printed (it must succeed).
pub(crate) fn forget_waiting(dir: &Path, client: &str, ids: &str, wait: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_mufc"))
        .current_dir(dir)
        .args(["client", "forget", "--store", &format!("{client}.db")])
        .args(["--ids", ids, "--wait", wait])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// [`forget_waiting`] a minute, acknowledged in some round.
pub(crate) fn forget(dir: &Path, client: &str, ids: &str) -> String {
    let text = forget_waiting(dir, client, ids, "60");
    assert!(text.contains("acknowledged in round"), "{text}");
    text
}

/// `mufc certs` for `clients` into `dir/certs` (federation `federation`).
pub(crate) fn certs(dir: &Path, sub: &str, federation: &str, clients: &[&str]) -> PathBuf {
    certs_with(dir, sub, federation, clients, &[])
}

/// [`certs`] with more options of `mufc certs` (`extra`).
pub(crate) fn certs_with(
    dir: &Path,
    sub: &str,
    federation: &str,
    clients: &[&str],
    extra: &[&str],
) -> PathBuf {
    let out = dir.join(sub);
    let status = Command::new(env!("CARGO_BIN_EXE_mufc"))
        .args(["certs", "--out-dir"])
        .arg(&out)
        .args([
            "--federation",
            federation,
            "--clients",
            &clients.join(","),
            "-q",
        ])
        .args(extra)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    out
}

/// The arguments of `mufc server` on `port` with the roster `clients`.
pub(crate) fn server_args(
    port: u16,
    certs: &Path,
    clients: &[&str],
    extra: &[&str],
) -> Vec<String> {
    let mut v: Vec<String> = [
        "server",
        "--listen",
        &format!("127.0.0.1:{port}"),
        "--store",
        "server.db",
        "--clients",
        &clients.join(","),
        "--certs",
        certs.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(extra.iter().map(|s| s.to_string()));
    // Most tests serve one client's removal at a time: the lone-update
    // policy (which holds such a round back for days) is off unless a
    // test sets it (cli_net_policy.rs).
    if !extra.contains(&"--min-updating-clients") {
        v.extend(["--min-updating-clients".to_string(), "1".to_string()]);
    }
    v
}

/// The arguments of `mufc client` `name` on `port`.
pub(crate) fn client_args(port: u16, certs: &Path, name: &str) -> Vec<String> {
    [
        "client",
        "--server",
        &format!("127.0.0.1:{port}"),
        "--data",
        &format!("{name}.csv"),
        "--id",
        name,
        "--store",
        &format!("{name}.db"),
        "--certs",
        certs.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// The model in `dir/server.db` is `Federation::new(data)`'s, with the
/// store's resolved configuration and `dropout` as the server had it:
/// with groups, every node's model (the root's, the groups' and the inner
/// nodes'), bit for bit.
pub(crate) fn assert_model(dir: &Path, data: Vec<Dataset>) {
    let ids = (0..data.len() as u64).map(mufc::ClientId);
    assert_model_of(dir, ids.zip(data).collect());
}

/// [`assert_model`] with each client's id (a client's training depends on
/// it: after a client left, the others keep theirs).
pub(crate) fn assert_model_of(dir: &Path, data: Vec<(mufc::ClientId, Dataset)>) {
    assert_model_with(dir, data, false);
}

/// [`assert_model_of`] in the groups the server holds, less the clients
/// not in `data` (clients joined after training sit in a group the
/// topology would not give them).
pub(crate) fn assert_model_in_groups(dir: &Path, data: Vec<(mufc::ClientId, Dataset)>) {
    assert_model_with(dir, data, true);
}

/// Every model of the server's store equals the in-process federation's
/// on `data`, in the topology's groups or, when `held`, in the store's.
fn assert_model_with(dir: &Path, data: Vec<(mufc::ClientId, Dataset)>, held: bool) {
    let stored = Store::open(dir.join("server.db")).unwrap();
    let stored = stored.federation();
    assert!(stored.clients().is_empty(), "no client point at the server");
    // The in-process federation with the same configuration (no dropout
    // simulated: every process answered).
    let config = stored
        .config()
        .clone()
        .into_builder()
        .channel(Channel::scma(Masks::SecAgg(SecAggOptions::new())))
        .validate()
        .unwrap();
    let fed = match stored.layout().filter(|_| held) {
        Some(layout) => {
            let gone: Vec<mufc::ClientId> = (layout.clients().into_iter())
                .filter(|c| !data.iter().any(|(p, _)| p == c))
                .collect();
            Federation::with_layout(data, &config, layout.without(&gone)).unwrap()
        }
        None => {
            let fed = Federation::with_ids(data, &config).unwrap();
            assert_eq!(stored.layout(), fed.layout());
            fed
        }
    };
    let mut nodes = vec![(stored.server(), fed.server())];
    if let Some(layout) = fed.layout() {
        nodes.extend((0..layout.nodes()).map(|n| {
            let n = NodeId(n);
            (stored.node(n).unwrap(), fed.node(n).unwrap())
        }));
    }
    for (i, (mine, theirs)) in nodes.into_iter().enumerate() {
        assert_eq!(mine.counts(), theirs.counts(), "model {i}");
        assert_eq!(mine.centroids(), theirs.centroids(), "model {i}");
    }
}

/// A federation of processes in `dir`: the server with the roster
/// `roster` and the options `extra`, and a client process for each of
/// `clients` (their data files written beforehand), each with the fault
/// `fault(name)` if any (`mufc_net::fault`).
pub(crate) struct Processes {
    pub(crate) server: Proc,
    pub(crate) clients: Vec<Proc>,
    pub(crate) port: u16,
    pub(crate) certs: PathBuf,
}

impl Processes {
    pub(crate) fn start(
        dir: &Path,
        roster: &[&str],
        clients: &[&str],
        extra: &[&str],
        fault: impl Fn(&str) -> Option<&'static str>,
    ) -> Self {
        let certs = certs(dir, "certs", "hospitals", roster);
        let port = free_port();
        let server = Proc::start(
            "server",
            dir,
            &server_args(port, &certs, roster, extra),
            &[],
        );
        server.wait_for(|l| l.starts_with("listening on"));
        let clients = clients
            .iter()
            .map(|n| {
                let env: Vec<(&str, &str)> = fault(n)
                    .map(|f| (mufc_net::fault::FAULT_ENV, f))
                    .into_iter()
                    .collect();
                Proc::start(n, dir, &client_args(port, &certs, n), &env)
            })
            .collect();
        Self {
            server,
            clients,
            port,
            certs,
        }
    }
}

/// The catch-up tests' four sites.
pub(crate) const FOUR_SITES: [&str; 4] = ["a", "b", "c", "d"];

/// A protocol planned for a quarter of the clients dropping out (one site
/// of four may miss a round), k = 3, and a short join timeout.
pub(crate) const ONE_MAY_DROP: [&str; 6] = ["--k", "3", "--join-timeout", "2", "--dropout", "0.25"];

/// Starts client `name` of `fed` again and waits for the catch-up round
/// `round` that brings it back (committed with clients 0 to 3); the
/// client's process, to keep alive.
pub(crate) fn bring_back(fed: &Processes, dir: &Path, name: &str, round: u64) -> Proc {
    let seen = fed.server.log().len();
    let client = Proc::start(name, dir, &client_args(fed.port, &fed.certs, name), &[]);
    let started = format!("round {round} ");
    fed.server.wait_for_after(seen, |l| {
        l.starts_with(&started) && l.contains(" committed") && l.contains("included 0,1,2,3,")
    });
    client
}
