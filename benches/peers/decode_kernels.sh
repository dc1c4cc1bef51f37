#!/usr/bin/env bash
# Our polynomial kernels and decode steps against FLINT's (3.5.0, built with
# --enable-avx2), one thread each, alternated in one run. Run by hand, never
# in CI. From anywhere:
#
#   benches/peers/decode_kernels.sh [--repeat R] [--inner K] [--ns "N..."] \
#       [--ts "T..."] [--no-build] [--roots-general] [--ours-bin DIR] > /tmp/peers_run.txt
#
# Builds (nice -n 10) our two examples,
#   cargo build --release -p field --example kernels -p syndrome-agg --example decode_scale
# and the FLINT driver by benches/peers/flint_avx2/build.sh (which also
# builds FLINT into target/peers/flint-avx2 the first time, ~15 minutes).
# Then, every program under nice -n 10, ours with RAYON_NUM_THREADS=1 (the
# `parallel` feature is on in these builds) and FLINT with
# flint_set_num_threads(1):
#
#  * kernels, for each n in --ns (default 10^4 10^5 10^6): R times (default
#    5) `kernels --n N --repeat K` of ours, then of FLINT's driver (K
#    default 3): mul, mullow, mulhigh, divrem, gcd, evaluate over
#    GF(27 * 2^59 + 1); the digests of ours and FLINT's must agree;
#  * decode, for each t in --ts (default 10^3 10^4 10^5): the input file is
#    written once, `decode_scale --field proth --t T --write FILE
#    --no-decode`, into a fresh folder under /tmp; then R times
#    `decode_scale --field proth --t T --repeat 1` (same seed, so the same
#    sketch) and FLINT's `decode FILE --repeat 1` (which checks its
#    answer against the file).
#
# Each kernel runs once untimed before its K timed runs, on both sides
# (the first large allocations of a process are fresh pages, which the
# first timed kernel would otherwise pay alone).
# Each program prints the median of its K (decode: 1) runs; the table
# gives, per line, the median over the R alternations of those, and the
# ratio ours / FLINT (above 1: ours is slower). Ours have no truncated
# product: our mullow and mulhigh are the full poly::mul. Our locator runs
# on 2t + 1 syndromes (decode_scale's default extra check syndrome),
# FLINT's on the 2t of the file. Everything generated goes to /tmp.
# --ours-bin DIR takes our two examples from DIR (built elsewhere, e.g.
# from a snapshot of another tree) instead of building them here.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

repeat=5
inner=3
ns="10000 100000 1000000"
ts="1000 10000 100000"
build=1
roots_general=""
ours_bin=""
while [ $# -gt 0 ]; do
    case "$1" in
        --repeat) repeat=$2; shift 2 ;;
        --inner) inner=$2; shift 2 ;;
        --ns) ns=$2; shift 2 ;;
        --ts) ts=$2; shift 2 ;;
        --no-build) build=0; shift ;;
        --roots-general) roots_general="--roots-general"; shift ;;
        --ours-bin) ours_bin=$2; shift 2 ;;
        -h|--help) sed -n '2,35p' "$0"; exit 0 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done

ours_kernels="${ours_bin:-$root/target/release/examples}/kernels"
ours_decode="${ours_bin:-$root/target/release/examples}/decode_scale"
flint_dir="$root/target/peers/flint-avx2"
flint="$flint_dir/decode_kernels"

if [ "$build" = 1 ]; then
    if [ -z "$ours_bin" ]; then
        (cd "$root" && nice -n 10 cargo build --release -p field --example kernels \
            -p syndrome-agg --example decode_scale) >&2
    fi
    nice -n 10 bash "$here/flint_avx2/build.sh" >&2
fi
for b in "$ours_kernels" "$ours_decode" "$flint"; do
    [ -x "$b" ] || { echo "missing $b (run without --no-build)" >&2; exit 1; }
done

work=$(mktemp -d /tmp/peers_decode_kernels.XXXXXX)
samples="$work/samples.txt"
: > "$samples"
export RAYON_NUM_THREADS=1

echo "# decode_kernels.sh, $(date -u '+%Y-%m-%d %H:%M:%S UTC'), data in $work"
echo "# repeat R = $repeat alternations, kernels --repeat $inner inside each, ns = $ns, ts = $ts"
echo "# cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores; $(uname -sr)"
echo "# cpu flags: $(grep -o -w -m1 'avx2\|avx512f\|avx512ifma\|bmi2\|adx' /proc/cpuinfo | sort -u | tr '\n' ' ')"
echo "# $(rustc --version); $(cargo --version); $(gcc --version | head -1)"
cfg="$flint_dir/install/include/flint/flint-config.h"
echo "# FLINT $(grep -m1 '^#define FLINT_VERSION ' "$flint_dir/install/include/flint/flint.h" | cut -d'"' -f2), config:" \
    "$(grep -E '^#define FLINT_(HAVE_FFT_SMALL|HAVE_ASSEMBLY_[a-z0-9_]+|BITS|WANT_ASSERT|USES_PTHREAD)\b' "$cfg" | sed 's/^#define //' | tr '\n' ';')"
if [ -f "$flint_dir/build/Makefile" ]; then
    echo "# FLINT CFLAGS: $(sed -n 's/^_CFLAGS:=//p' "$flint_dir/build/Makefile")"
fi
echo "# driver: gcc -O2 -march=native; RAYON_NUM_THREADS=$RAYON_NUM_THREADS; nice -n 10"
# What was measured: the commit, and the uncommitted changes of the crates
# (their diff's hash), as built just before.
if [ -n "$ours_bin" ]; then
    echo "# ours: the examples in $ours_bin"
elif git -C "$root" rev-parse HEAD >/dev/null 2>&1; then
    echo "# tree: HEAD $(git -C "$root" rev-parse --short HEAD); uncommitted in crates/ and Cargo.toml:" \
        "$(git -C "$root" status --short -- crates Cargo.toml | tr '\n' ' ')" \
        "(diff sha256 $(git -C "$root" diff -- crates Cargo.toml | sha256sum | cut -c1-16))"
fi
echo "# load before: $(uptime)"

# `side kind size name seconds` lines for the table.
record() { # side kind size: stdin = a program's output
    local side=$1 kind=$2 size=$3
    while IFS= read -r line; do
        echo "$line"
        case "$line" in
            "#"*) ;;
            "ours kernels "*|"flint kernels "*|"flint decode "*)
                set -- $line
                echo "$1 $2 $size $4 $5" >> "$samples" ;;
            *" s   (median of "*)
                if [ "$side" = ours ] && [ "$kind" = decode ]; then
                    set -- $line
                    echo "ours decode $size $1 $2" >> "$samples"
                fi ;;
        esac
    done
}

status=0
# A program that fails (or prints a wrong answer) is reported, and the
# run goes on; the script then exits 1.
failed() {
    echo "## FAILED: $1"
    status=1
}
for n in $ns; do
    for r in $(seq 1 "$repeat"); do
        echo "## kernels n=$n alternation $r/$repeat: ours"
        nice -n 10 "$ours_kernels" kernels --n "$n" --repeat "$inner" 2>&1 \
            | tee "$work/ours_k_$n.txt" | record ours kernels "$n" || failed "ours kernels n=$n"
        echo "## kernels n=$n alternation $r/$repeat: flint"
        nice -n 10 "$flint" kernels --n "$n" --repeat "$inner" 2>&1 \
            | tee "$work/flint_k_$n.txt" | record flint kernels "$n" || failed "FLINT kernels n=$n"
    done
    # the digests of the last alternation must agree
    if ! diff <(grep '^ours kernels' "$work/ours_k_$n.txt" | awk '{print $4, $6}') \
              <(grep '^flint kernels' "$work/flint_k_$n.txt" | awk '{print $4, $6}'); then
        failed "the digests of ours and FLINT's differ at n=$n (above: < ours, > FLINT)"
    else
        echo "## digests agree at n=$n"
    fi
done

for t in $ts; do
    file="$work/decode_proth_$t.txt"
    echo "## decode t=$t: writing $file"
    nice -n 10 "$ours_decode" --field proth --t "$t" --repeat 1 --write "$file" --no-decode \
        || { failed "writing the decode input t=$t"; continue; }
    for r in $(seq 1 "$repeat"); do
        echo "## decode t=$t alternation $r/$repeat: ours"
        nice -n 10 "$ours_decode" --field proth --t "$t" --repeat 1 2>&1 \
            | record ours decode "$t" || failed "ours decode t=$t"
        echo "## decode t=$t alternation $r/$repeat: flint"
        nice -n 10 "$flint" decode "$file" --repeat 1 $roots_general 2>&1 \
            | record flint decode "$t" || failed "FLINT decode t=$t (exit 1: a wrong answer)"
    done
done

echo "## ours: Transform::forward, 2^20 points (no FLINT peer; see benches/peers/p3_dft)"
nice -n 10 "$ours_kernels" transform --log 20 --repeat "$repeat" 2>&1 || failed "ours transform"

echo "# load after: $(uptime)"
echo
echo "# medians over $repeat alternations (seconds); ratio = ours / FLINT"
printf '%-8s %8s %-24s %12s %12s %8s\n' kind size step ours flint ratio
# median per (side kind size name)
sort -k1,1 -k2,2 -k3,3n -k4,4 -k5,5g "$samples" | awk '
    { key = $1 " " $2 " " $3 " " $4
      if (key != prev && prev != "") flush()
      prev = key; v[++c] = $5 }
    function flush() {
        m = (c % 2) ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2
        print prev, m; c = 0 }
    END { if (prev != "") flush() }' > "$work/medians.txt"
# pairs: kernels by name; decode: locator, roots, counts, loc+roots+counts vs
# total, decode (the full Sketch::decode) vs total
awk '
    { med[$1 " " $2 " " $3 " " $4] = $5
      if (!(($2 " " $3) in seen)) { seen[$2 " " $3] = 1; order[++no] = $2 " " $3 } }
    END {
        nk = split("mul mullow mulhigh divrem gcd evaluate", kern, " ")
        nd = split("locator:locator roots:roots roots:roots_general counts:counts loc+roots+counts:total decode:total", dec, " ")
        for (i = 1; i <= no; i++) {
            split(order[i], ks, " ")
            if (ks[1] == "kernels") {
                for (j = 1; j <= nk; j++) row(ks[1], ks[2], kern[j], kern[j], kern[j])
            } else {
                for (j = 1; j <= nd; j++) {
                    split(dec[j], pr, ":")
                    row(ks[1], ks[2], pr[1] "/" pr[2], pr[1], pr[2])
                }
            }
        }
    }
    function row(kind, size, label, a, b,   o, f) {
        o = "ours " kind " " size " " a; f = "flint " kind " " size " " b
        if (!(o in med) || !(f in med)) return
        printf "%-8s %8s %-24s %12.6f %12.6f %8.2f\n", kind, size, label, med[o], med[f], \
            (med[f] > 0 ? med[o] / med[f] : 0)
    }' "$work/medians.txt" | sort -s -k1,1r -k2,2n
exit "$status"
