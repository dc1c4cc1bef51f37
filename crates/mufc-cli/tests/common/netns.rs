//! Parties in network namespaces of their own, for the fault tests: one
//! namespace per party (`ip netns add`), each joined to a bridge the test
//! creates by a veth pair, with an address of a private /24 chosen per
//! test. A party's link can be cut and healed (a partition), and, where
//! the kernel has `sch_netem`, given delay and loss (`tc qdisc ... netem`).
//! Everything is removed when the value drops. Creating namespaces needs
//! root (CAP_NET_ADMIN); [`Netns::new`] says why not where it cannot.

use std::process::Command;
use std::sync::atomic::{AtomicU8, Ordering};

/// Runs `ip args...` (in namespace `ns` if given): `Err` with what it
/// printed on failure.
fn ip(ns: Option<&str>, args: &[&str]) -> Result<(), String> {
    let mut cmd = Command::new("ip");
    if let Some(ns) = ns {
        cmd.args(["netns", "exec", ns, "ip"]);
    }
    let out = cmd.args(args).output().map_err(|e| format!("ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Which test of this process the namespaces are for (their names and
/// subnet).
static NEXT: AtomicU8 = AtomicU8::new(0);

/// The namespaces of one test.
pub(crate) struct Netns {
    /// Party names, in order: party `i` is `10.<a>.<b>.<i + 1>`.
    parties: Vec<String>,
    prefix: String,
    subnet: String,
}

impl Netns {
    /// A namespace for each of `parties`, joined by a bridge; `Err` with
    /// the reason where namespaces cannot be made (not root, no `ip`).
    pub(crate) fn new(parties: &[&str]) -> Result<Self, String> {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        // Interface names are at most 15 bytes.
        let prefix = format!("m{}{n}", pid % 100_000);
        let subnet = format!("10.{}.{}", 100 + (pid % 100), n);
        let net = Self {
            parties: parties.iter().map(ToString::to_string).collect(),
            prefix,
            subnet,
        };
        ip(None, &["link", "add", &net.bridge(), "type", "bridge"])?;
        ip(None, &["link", "set", &net.bridge(), "up"])?;
        for i in 0..parties.len() {
            let ns = net.ns_at(i);
            let (host, inner) = (net.host_if(i), format!("{}p{i}", net.prefix));
            ip(None, &["netns", "add", &ns])?;
            ip(
                None,
                &["link", "add", &host, "type", "veth", "peer", "name", &inner],
            )?;
            ip(None, &["link", "set", &inner, "netns", &ns])?;
            ip(None, &["link", "set", &host, "master", &net.bridge()])?;
            ip(None, &["link", "set", &host, "up"])?;
            let ns = Some(ns.as_str());
            ip(ns, &["link", "set", "lo", "up"])?;
            ip(ns, &["link", "set", &inner, "name", "eth0"])?;
            ip(
                ns,
                &[
                    "addr",
                    "add",
                    &format!("{}/24", net.addr_at(i)),
                    "dev",
                    "eth0",
                ],
            )?;
            ip(ns, &["link", "set", "eth0", "up"])?;
        }
        Ok(net)
    }

    fn bridge(&self) -> String {
        format!("{}br", self.prefix)
    }

    fn at(&self, party: &str) -> usize {
        self.parties.iter().position(|p| p == party).unwrap()
    }

    fn ns_at(&self, i: usize) -> String {
        format!("{}n{i}", self.prefix)
    }

    fn host_if(&self, i: usize) -> String {
        format!("{}h{i}", self.prefix)
    }

    fn addr_at(&self, i: usize) -> String {
        format!("{}.{}", self.subnet, i + 1)
    }

    /// The namespace of `party`.
    pub(crate) fn ns(&self, party: &str) -> String {
        self.ns_at(self.at(party))
    }

    /// The address of `party`.
    pub(crate) fn addr(&self, party: &str) -> String {
        self.addr_at(self.at(party))
    }

    /// Cuts `party` off the others (its bridge port down): a partition.
    pub(crate) fn cut(&self, party: &str) {
        ip(
            None,
            &["link", "set", &self.host_if(self.at(party)), "down"],
        )
        .unwrap();
    }

    /// Joins `party` to the others again.
    pub(crate) fn heal(&self, party: &str) {
        ip(None, &["link", "set", &self.host_if(self.at(party)), "up"]).unwrap();
    }

    /// Delay and loss on `party`'s link (`tc qdisc replace ... netem`
    /// with `spec`, e.g. `delay 40ms 10ms loss 2%`); `Err` where the
    /// kernel has no netem.
    pub(crate) fn netem(&self, party: &str, spec: &str) -> Result<(), String> {
        let ns = self.ns(party);
        let mut args = vec![
            "netns", "exec", &ns, "tc", "qdisc", "replace", "dev", "eth0",
        ];
        args.extend(["root", "netem"]);
        args.extend(spec.split_whitespace());
        let out = Command::new("ip")
            .args(&args)
            .output()
            .map_err(|e| format!("tc: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
        }
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        for i in 0..self.parties.len() {
            // Deleting a namespace deletes its end of the veth, and with
            // it the host's end.
            let _ = ip(None, &["netns", "del", &self.ns_at(i)]);
            let _ = ip(None, &["link", "del", &self.host_if(i)]);
        }
        let _ = ip(None, &["link", "del", &self.bridge()]);
    }
}
