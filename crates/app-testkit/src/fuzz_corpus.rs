//! The list of fuzz targets and their seed corpus.
//!
//! [`TARGETS`] names every target of `fuzz/` with the body its one-line
//! file calls; the corpus replay (`tests/tests/fuzz_corpus.rs` in
//! `mufc-tests`) runs each body over the committed files
//! `fuzz/corpus/<target>/seed-*` and fails on a target without a corpus
//! directory or a directory without a target. [`seed_corpus`] generates
//! those files (a handful of small inputs per target, plus the regression
//! inputs of past findings); `MUFC_WRITE_CORPUS=1 cargo test -p mufc-tests
//! --test integration fuzz_corpus` writes them, and without the variable the same test
//! checks that the committed files are what it generates.
//!
//! Files named `seed-open-*` are open findings in library code: inputs
//! that still crash or hang their target. The replay skips them (they
//! would abort or stall `cargo test`) and `no_finding_is_left_open` fails
//! while any is committed. Once fixed, rename them `seed-regression-*`
//! here and regenerate.

use rand::Rng;
use syndrome_agg::{LinearSketch, RawSketch};

/// A fuzz target: its name (the `[[bin]]` of `fuzz/Cargo.toml` and the
/// corpus directory), the path of its body (what its one-line file
/// calls), and the body.
pub type Target = (&'static str, &'static str, fn(&[u8]));

/// Every fuzz target.
pub const TARGETS: &[Target] = &[
    (
        "field_bytes",
        "field_testkit::fuzz::field_bytes",
        field_testkit::fuzz::field_bytes,
    ),
    ("bm", "field_testkit::fuzz::bm", field_testkit::fuzz::bm),
    (
        "poly_kernels",
        "field_testkit::fuzz::poly_kernels",
        field_testkit::fuzz::poly_kernels,
    ),
    (
        "find_roots",
        "field_testkit::fuzz::find_roots",
        field_testkit::fuzz::find_roots,
    ),
    (
        "sagg_sketch_decode",
        "sagg_testkit::sagg::fuzz::sketch_decode",
        sagg_testkit::sagg::fuzz::sketch_decode,
    ),
    (
        "sagg_partitioned_decode",
        "sagg_testkit::sagg::fuzz::partitioned_decode",
        sagg_testkit::sagg::fuzz::partitioned_decode,
    ),
    (
        "sagg_large_decode",
        "sagg_testkit::sagg::fuzz_large::large_decode",
        sagg_testkit::sagg::fuzz_large::large_decode,
    ),
    (
        "sagg_integer_decode",
        "sagg_testkit::sagg::fuzz::integer_decode",
        sagg_testkit::sagg::fuzz::integer_decode,
    ),
    (
        "sagg_wide_decode",
        "sagg_testkit::sagg::fuzz::wide_decode",
        sagg_testkit::sagg::fuzz::wide_decode,
    ),
    (
        "sagg_frame_parse",
        "sagg_testkit::sagg::fuzz::frame_parse",
        sagg_testkit::sagg::fuzz::frame_parse,
    ),
    (
        "secagg_client_envelope",
        "sum_testkit::secagg::fuzz_client_envelope",
        sum_testkit::secagg::fuzz_client_envelope,
    ),
    (
        "secagg_server_envelope",
        "sum_testkit::secagg::fuzz_server_envelope",
        sum_testkit::secagg::fuzz_server_envelope,
    ),
    (
        "secagg_server_receive",
        "sum_testkit::secagg::fuzz_server_receive",
        sum_testkit::secagg::fuzz_server_receive,
    ),
    (
        "secagg_secret_share",
        "sum_testkit::secagg::fuzz_secret_share",
        sum_testkit::secagg::fuzz_secret_share,
    ),
    (
        "federation_from_bytes",
        "app_testkit::fuzz_apps::federation_from_bytes",
        crate::fuzz_apps::federation_from_bytes,
    ),
    (
        "remote_pairwise",
        "app_testkit::fuzz_remote::pairwise_round",
        crate::fuzz_remote::pairwise_round,
    ),
    (
        "remote_plain",
        "app_testkit::fuzz_remote::plain_round",
        crate::fuzz_remote::plain_round,
    ),
    (
        "parties_snapshot",
        "app_testkit::fuzz_remote::parties_snapshot",
        crate::fuzz_remote::parties_snapshot,
    ),
    (
        "cli_csv",
        "app_testkit::fuzz_apps::csv",
        crate::fuzz_apps::csv,
    ),
    (
        "net_client_message",
        "app_testkit::fuzz_net::client_message",
        crate::fuzz_net::client_message,
    ),
    (
        "net_server_message",
        "app_testkit::fuzz_net::server_message",
        crate::fuzz_net::server_message,
    ),
    (
        "net_federation_file",
        "app_testkit::fuzz_net::federation_file",
        crate::fuzz_net::federation_file,
    ),
    (
        "net_revocation_list",
        "app_testkit::fuzz_net::revocation_list",
        crate::fuzz_net::revocation_list,
    ),
    (
        "cli_npy",
        "app_testkit::fuzz_apps::npy",
        crate::fuzz_apps::npy,
    ),
];

/// The `cli_npy` input of the shape-overflow finding (second campaign).
const NPY_SHAPE_OVERFLOW: &str = "00934e554d5059010076007b276465736372273a20273c6638272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028313030303030303030302c2031303030313030303030303030302c3029207d2020202020202020202020202020202020202020202020202020202020202020202020202020202020202020f4000000000000002020202020202020202020202020207d000000200a00000000000000000000000000010000";
/// A shape with `444..-444` in it (npyz evaluates it), second campaign.
const NPY_SHAPE_EXPRESSION: &str = "00934e554d5059010076007b276465736372273a20273c6638272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028313032303030313631352c2031382c3030303030303030303434343434343434343434343434342d3434343434343434292c207d2020202020202020202020202020202020202020202020202020616e00";
/// A saved federation with a huge `dim` (raw mode), found by fuzzing.
const OPEN_DIM_OOM: &str = "004d554643464544020200019a9999999999b93f00000000002d431cebe2361a3fac02012d431cebe2361a3fac020001100001010100011400000000000000009a9999999999a93f019a9999999999b93f00000000002d431cebe2361a3fa402012d431cebe2361a3fac020001100001010100011400000000000000009a9900c93800c93800ffffffff0a00000000000000000000000000000000000000d7a3c03f8014ae47000000000000e108";

/// A saved federation that loads but does not reload after `to_bytes`
/// (the reload cannot parse), found by fuzzing.
const OPEN_RESAVE_PARSE: &str = "004d55464346454402020001d9edbfc5259fcc3f00030000002d431cebe2361a3fac02012d431cebe2361a3fac02000e000000000000000000000000000000000000000000000000010000000000000e00000000000000000000000000000066000000000000000000000000ffffffff703df52861bcbfae47e17a843fa530030200010000";

/// A saved federation that loads but does not reload after `to_bytes`
/// (capacity 0), found by fuzzing.
const OPEN_RESAVE_CAPACITY: &str = "004d554643464544020200019a999999b9676f3f01000000002d431cebe232103fac020131431cebe2321a3fac020001100001010100011400000000000000009a9999999999a93f00360000010300000000004b000037000000ffffff1f3636c3be285c8fc2f508bcbfa5703d0a5700000000170000000000f528bcbfa5703d0ad7a3c000000000000000000004000000000000000000003fc3f5285c8fc2c53f313636363636c3bf285c8fc2f528bcbfb81e85eb00004d55";

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn le(v: u64) -> [u8; 8] {
    v.to_le_bytes()
}

/// The seed corpus of `target`: `(file name, contents)`, names starting
/// with `seed-` (the only corpus files git keeps). Deterministic; empty
/// for a target this function does not know (the replay refuses that).
pub fn seed_corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let mut rng = testdata::rng(&format!("seed-corpus/{target}"));
    let mut random = |len: usize| {
        let mut v = vec![0u8; len];
        rng.fill_bytes(&mut v);
        v
    };
    let seeds: Vec<(&str, Vec<u8>)> = match target {
        "field_bytes" => vec![
            ("m61-one", cat(&[&[0], &le(1)])),
            ("m61-p", cat(&[&[0], &le(field::P61)])),
            ("m127-max", cat(&[&[1], &(field::P127 - 1).to_le_bytes()])),
            ("fp65537", vec![2, 0x00, 0x00, 0x01, 0x00, 0, 0, 0, 0]),
            ("big89", cat(&[&[3], &[0xff; 11], &[0x01]])),
        ],
        "bm" => vec![
            ("gf7-fib", vec![4 << 2, 1, 1, 2, 3, 5, 1, 6, 0, 6, 6, 5, 4]),
            ("m61", cat(&[&[(3 << 2) | 1], &random(64)])),
            ("m127", cat(&[&[(2 << 2) | 2], &random(96)])),
            (
                "rationals",
                vec![(5 << 2) | 3, 1, 2, 4, 8, 16, 32, 64, 0xfe],
            ),
        ],
        "poly_kernels" => vec![
            ("proth-long", vec![0, 0xb0, 0x04, 0x58, 0x02, 1, 2, 3]),
            ("proth-short", vec![4, 3, 0, 17, 0, 9]),
            ("p1e9-multimodular", vec![1, 0x00, 0x02, 0x90, 0x01, 7]),
            ("top-multimodular", vec![2, 0x40, 0x00, 0x41, 0x00, 8]),
            ("m61", vec![3, 0x20, 0x03, 0x21, 0x03, 9]),
            ("empty", vec![0]),
        ],
        "find_roots" => vec![
            ("gf7", vec![1 << 2, 6, 0, 1]),
            ("m61-poly", cat(&[&[1], &random(48)])),
            ("m61-roots", vec![2, 1, 2, 3, 5, 8, 13]),
            ("m61-repeated", vec![2, 7, 7, 9]),
        ],
        "sagg_sketch_decode" => vec![
            ("m61-syndromes", cat(&[&[0, 2, 1, 1, 0], &random(80)])),
            ("m61-sums", cat(&[&[0, 2, 1, 0, 99, 1], &random(45)])),
            ("m127-sums", cat(&[&[1, 3, 0, 1, 1], &random(54)])),
            ("proth-sums", cat(&[&[2, 5, 1, 1, 1], &random(60)])),
            (
                "fp65537",
                cat(&[&[3, 1, 2, 2], &le(1000), &[1], &random(27)]),
            ),
        ],
        "sagg_large_decode" => vec![
            // Shape 0 (the half-GCD, Horner's solve), r = 1, exactly t keys, uncorrupted.
            ("half-gcd-exact", cat(&[&[6, 1], &le(1)])),
            // Shape 1 (the remainder tree), r = 2, t + 1 keys.
            ("tree-over-capacity", cat(&[&[10, 3], &le(2)])),
            // Shape 2 (partitioned), fewer keys, two corruptions.
            (
                "partitioned-corrupted",
                cat(&[&[2, 40], &le(3), &[7, 0], &le(1), &[0, 4], &le(u64::MAX)]),
            ),
        ],
        "sagg_partitioned_decode" => vec![
            (
                "elements",
                cat(&[&[5, 1, 1], &le(u64::MAX), &[3, 0], &random(200)]),
            ),
            (
                "sums",
                cat(&[&[11, 2, 2], &le(1 << 40), &[9, 1], &random(180)]),
            ),
            (
                "overflow",
                cat(&[&[0, 3, 0], &le(7), &[1, 1], &random(150)]),
            ),
        ],
        "sagg_integer_decode" => vec![
            ("syndromes", cat(&[&[1, 1, 20, 0], &random(40)])),
            ("sums", vec![2, 0, 9, 1, 3, 4, 5, 19, 3, 2]),
            ("sums-big", cat(&[&[3, 1, 255, 1], &random(40)])),
        ],
        "sagg_wide_decode" => vec![
            (
                "two-keys",
                cat(&[&[1, 7, 2, 5], b"hello", &[3, 40], &random(40), &[9, 1]]),
            ),
            (
                "perturbed",
                cat(&[&[2, 1, 1, 3], b"abc", &[1, 0], &le(5), &le(77)]),
            ),
            ("empty", vec![0, 0, 0, 1]),
        ],
        "sagg_frame_parse" => {
            let f = field::Mersenne61;
            let ctx = sum_testkit::secagg::context("seed-corpus/frame", 0);
            let masked = |t: usize| {
                let params = syndrome_agg::SketchParams::new(t, 100u32)
                    .validate(f)
                    .unwrap();
                let mut sketch = syndrome_agg::Sketch::new(&params);
                sketch.insert(&num_bigint::BigUint::from(7u8), &3).unwrap();
                syndrome_agg::MaskedSketch::<syndrome_agg::Sketch<_>>::from_parts(
                    &params,
                    4,
                    ctx,
                    sketch.elements().to_vec(),
                )
                .unwrap()
                .to_frame()
                .to_bytes()
                .unwrap()
            };
            vec![
                ("masked-sketch-t1", masked(1)),
                ("masked-sketch-t2", masked(2)),
                ("junk", random(40)),
            ]
        }
        "secagg_client_envelope" => vec![
            ("advertise-keys", vec![0]),
            ("share-keys", vec![1]),
            ("masked-input", vec![2]),
            ("unmasking", vec![3]),
            ("share-keys-flip", vec![1, 60, 0x40]),
            ("unmasking-flip", vec![3, 30, 0x01]),
            // A flipped bit in the masked input, which the server is right
            // to accept (the old oracle called the changed sum a crash).
            ("regression-masked-input-flip", vec![0x02, 0x1d, 0x01]),
            ("client-id", vec![2, 86, 0x01]),
            // Finding of the second campaign: client 2's ShareKeys with a
            // share left out parsed and was accepted, so a holder did not
            // mask with client 2 while client 2 masked with it, and the
            // sum came out wrong. The server now refuses an incomplete set.
            (
                "regression-incomplete-share-keys",
                vec![0x01, 0x93, 0x03, 0x93],
            ),
        ],
        "secagg_server_envelope" => vec![
            ("key-directory", vec![0]),
            ("masking-request", vec![1]),
            ("unmasking-request", vec![2]),
            ("key-directory-flip", vec![0, 20, 0x08]),
            // The client field changed: the client must refuse the message
            // (the old harness looked the client up and panicked).
            ("regression-other-client", vec![2, 0xb6, 0x01]),
        ],
        "secagg_server_receive" => server_receive_seeds(),
        "secagg_secret_share" => {
            let share = syndrome_agg::secagg::shamir::SecretShare::from_bytes(&cat(&[
                &le(3),
                &7u128.to_le_bytes(),
                &0u128.to_le_bytes(),
                &(field::P127 - 1).to_le_bytes(),
            ]))
            .unwrap();
            let mut non_canonical = share.to_bytes().to_vec();
            non_canonical[8..24].copy_from_slice(&field::P127.to_le_bytes());
            vec![
                ("valid", share.to_bytes().to_vec()),
                ("non-canonical", non_canonical),
                ("short", vec![1, 2, 3]),
            ]
        }
        "federation_from_bytes" => {
            let [scma, plain, groups] = crate::fuzz_apps::fresh_federations();
            vec![
                // Selector % 3: raw, whole file mutated, body mutated and
                // sealed again; selector / 3 % 3: the SCMA, plain or
                // grouped file.
                ("scma", vec![1]),
                ("plain", vec![4]),
                ("scma-flip", vec![1, 40, 0x02]),
                ("plain-truncated", vec![4, 9]),
                ("scma-resealed", vec![2]),
                ("scma-resealed-flip", vec![2, 40, 0x02]),
                ("plain-resealed-truncated", vec![5, 9]),
                // The bases of the mutations (see `saved_federations`).
                ("raw-scma", cat(&[&[0], &scma])),
                ("raw-plain", cat(&[&[0], &plain])),
                ("raw-groups", cat(&[&[0], &groups])),
                ("groups-resealed", vec![8]),
                ("groups-resealed-flip", vec![8, 60, 0x04]),
                // A header cut inside its length field (fixed bytes: a
                // fresh save's length varies with its measured times).
                ("raw-header", cat(&[&[0], b"MUFCFED\x04", &[0x10, 0, 0, 0]])),
                // Findings of the campaign of 2026-11-23, in the format of
                // the time (version 2): a saved file whose `dim` was huge
                // aborted the process on allocation (the loader now checks
                // `dim` against the data first), and files that loaded but
                // whose `to_bytes` did not load again. Version 2 is now
                // refused by name; kept as regressions of the loader's
                // first checks.
                ("regression-v2-dim-oom", hex(OPEN_DIM_OOM)),
                ("regression-v2-resave-parse", hex(OPEN_RESAVE_PARSE)),
                ("regression-v2-resave-capacity", hex(OPEN_RESAVE_CAPACITY)),
            ]
        }
        "remote_pairwise" => {
            // The shapes of the three messages (version 1, postcard), with
            // a session and keys no round has: refused, as any stranger's.
            let key = cat(&[&[0, 1, 0, 0], &[7; 32], &[0], &[9; 32]]);
            let masked = cat(&[&[1, 1, 1, 0, 4], b"MUFC"]);
            let directory = cat(&[
                &[2, 1],
                &[7; 32],
                &[0, 3],
                &[0],
                &[9; 32],
                &[1],
                &[9; 32],
                &[2],
                &[9; 32],
            ]);
            vec![
                ("key", key),
                ("masked", masked),
                ("directory", directory),
                ("empty-key", vec![0]),
                ("other-version", vec![2, 2, 0]),
            ]
        }
        "remote_plain" => {
            // A plain message's shape (postcard: session, round, client,
            // dimension, centroids, sizes) with a session no round has,
            // before client 0's own (0) and after it (1).
            let message = cat(&[
                &[7; 32],
                &[0, 0, 2, 2],
                &0.1f64.to_le_bytes(),
                &0.2f64.to_le_bytes(),
                &[1, 3],
            ]);
            vec![
                ("before", cat(&[&[0], &message])),
                ("after", cat(&[&[1], &message])),
                ("empty", vec![0]),
                ("not-finite", cat(&[&[0], &message[..36], &f64::NAN.to_le_bytes()])),
            ]
        }
        "parties_snapshot" => vec![
            // Raw bytes: nothing, and a roster-less prefix.
            ("raw-empty", vec![0]),
            ("raw-short", vec![0, 1, 2, 3]),
            // A real snapshot, unchanged, then with bytes flipped at the
            // start (the configuration), and spread over the body.
            ("real", vec![1]),
            ("real-config", vec![1, 0x01, 0x80, 0x02]),
            ("real-spread", cat(&[&[1], &[0x10; 64]])),
        ],
        "net_client_message" => crate::fuzz_net::client_seeds(),
        "net_server_message" => crate::fuzz_net::server_seeds(),
        "net_federation_file" => vec![
            (
                "defaults",
                br#"{"federation": "hospitals", "roster": ["a", "b", "c"]}"#.to_vec(),
            ),
            (
                "pinned",
                br#"{"federation":"f","roster":["x"],"dim":2,"min_gamma":0.001,"max_client_points":5}"#
                    .to_vec(),
            ),
            ("twice", br#"{"federation":"f","roster":["x","x"]}"#.to_vec()),
            ("unknown-field", br#"{"federation":"f","roster":["x"],"k":3}"#.to_vec()),
            ("not-json", b"roster = [a]".to_vec()),
        ],
        "net_revocation_list" => vec![
            (
                "two",
                cat(&[
                    b"# list\nsha256:",
                    &[b'a'; 64],
                    b" mallory 1700000000\n\nsha256:",
                    &[b'0'; 64],
                    b" eve 1\n",
                ]),
            ),
            ("short-hash", b"sha256:00 mallory 1\n".to_vec()),
            ("no-time", cat(&[b"sha256:", &[b'f'; 64], b" mallory\n"])),
            ("empty", Vec::new()),
        ],
        "cli_csv" => vec![
            ("header", cat(&[&[0], b"x,y\n0.5,1\n-2,3e2\n"])),
            (
                "clients",
                cat(&[&[4], b"alice,1,2\nbob,3,4\n\nalice,5,6\n"]),
            ),
            ("tabs", cat(&[&[0x12], b"1\t2\t3\n4\t5\t6\n"])),
            ("quoted", cat(&[&[9], b"\"a\",\"b\"\n\"1\",x\n"])),
            ("ragged", cat(&[&[0], b"1,2\n3\n"])),
        ],
        "cli_npy" => {
            use crate::fuzz_apps::{npy_bytes, npy_raw};
            let f4: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect();
            vec![
                ("f8", cat(&[&[0], &npy_bytes(2, 2, &[0.5, 1.0, -2.0, 3.0])])),
                (
                    "f8-client",
                    cat(&[&[4], &npy_bytes(3, 2, &[0.0, 1.0, 1.0, 2.0, 0.0, 3.0])]),
                ),
                (
                    "f4-fortran",
                    cat(&[&[0], &npy_raw("<f4", true, "(2, 2)", &f4)]),
                ),
                (
                    "f8-big-endian",
                    cat(&[
                        &[0],
                        &npy_raw(">f8", false, "(1, 1)", &2.5f64.to_be_bytes()),
                    ]),
                ),
                (
                    "huge-shape",
                    cat(&[
                        &[0],
                        &npy_raw("<f8", false, "(1000000000, 1000000000)", &[0; 16]),
                    ]),
                ),
                (
                    "i4",
                    cat(&[&[0], &npy_raw("<i4", false, "(1, 1)", &[1, 0, 0, 0])]),
                ),
                // Finding of the campaign of 2026-11-23: nested braces in
                // the header took time exponential in their depth (about x3
                // per brace) in npyz's header parser (py_literal, a pest
                // grammar): 24 of them hung the loader. The loader now
                // refuses a header nested more than 4 deep before npyz.
                // Finding of the second campaign: a shape whose dimensions
                // multiply past u64 made npyz overflow (a panic with
                // overflow checks); the loader now counts first.
                ("regression-shape-overflow", hex(NPY_SHAPE_OVERFLOW)),
                // The same through a shape npyz evaluates as an expression.
                ("regression-shape-expression", hex(NPY_SHAPE_EXPRESSION)),
                (
                    "regression-nested-braces",
                    cat(&[
                        &[0],
                        &npy_raw("<f8", false, &format!("(1, {}1)", "{".repeat(24)), &[]),
                    ]),
                ),
            ]
        }
        _ => Vec::new(),
    };
    seeds
        .into_iter()
        .map(|(name, bytes)| (format!("seed-{name}"), bytes))
        .collect()
}

/// Honest client messages of every step (the server takes them for the
/// client's own when they arrive first), and a masked input of client 2
/// with other (valid) elements, which the server accepts: the run's sum
/// then moves by exactly the change.
fn server_receive_seeds() -> Vec<(&'static str, Vec<u8>)> {
    let hon = sum_testkit::fuzz_secagg::Honest::get("fuzz-server-receive");
    let mut forged =
        syndrome_agg::secagg::messages::ClientEnvelope::parse(&hon.client_bytes(2, 2), usize::MAX)
            .unwrap();
    if let syndrome_agg::secagg::messages::ClientBody::MaskedInput(mi) = &mut forged.body {
        // GF(101) elements are one byte: add 1 to the first, mod 101.
        mi.elements[0] = (mi.elements[0] + 1) % 101;
    }
    vec![
        ("advertise-keys-1", hon.client_bytes(0, 1)),
        ("share-keys-3", hon.client_bytes(1, 3)),
        ("masked-input-2", hon.client_bytes(2, 2)),
        ("unmasking-1", hon.client_bytes(3, 1)),
        ("forged-masked-input-2", forged.to_bytes().unwrap()),
    ]
}

/// Whether a committed seed file is what [`seed_corpus`] generated: the
/// same bytes, except for the saved federations (their reports hold
/// measured times), which need only load.
pub fn seed_is_current(target: &str, name: &str, committed: &[u8], generated: &[u8]) -> bool {
    if target == "federation_from_bytes"
        && matches!(name, "seed-raw-scma" | "seed-raw-plain" | "seed-raw-groups")
    {
        return committed.split_first().is_some_and(|(&selector, saved)| {
            selector == 0 && ::mufc::Federation::from_bytes(saved).is_ok()
        });
    }
    committed == generated
}
