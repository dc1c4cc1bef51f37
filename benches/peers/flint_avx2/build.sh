#!/usr/bin/env bash
# Builds FLINT 3.5.0 with its AVX2 kernels (`fft_small`, the small-prime NTT)
# from the source that the `flint-sys` 0.9.0 crate ships, and the C driver
# `decode_kernels.c` against it. Run by hand, never in CI.
#
#   benches/peers/flint_avx2/build.sh   # builds into target/peers/flint-avx2
#   target/peers/flint-avx2/decode_kernels decode FILE [--repeat R]
#   target/peers/flint-avx2/decode_kernels kernels --n N [--repeat R]
#   benches/peers/decode_kernels.sh     # runs it against ours (see there)
#
# Needs gcc, make, GMP and MPFR headers (Debian: libgmp-dev libmpfr-dev) and
# the crate's source in cargo's registry (`cargo fetch` of a project that
# depends on flint-sys = "=0.9.0"; this script runs that fetch itself).
# The build takes about 15 minutes on 2 cores. Nothing it writes is committed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out="$root/target/peers/flint-avx2"
mkdir -p "$out"

src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/flint-sys-0.9.0/flint-3.5.0 2>/dev/null | head -1 || true)
if [ -z "$src" ]; then
    fetch="$out/fetch"
    mkdir -p "$fetch/src"
    printf '[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\nflint-sys = "=0.9.0"\n' > "$fetch/Cargo.toml"
    echo 'fn main() {}' > "$fetch/src/main.rs"
    (cd "$fetch" && cargo fetch)
    src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/flint-sys-0.9.0/flint-3.5.0 | head -1)
fi

if [ ! -f "$out/install/lib/libflint.a" ]; then
    rm -rf "$out/build"
    cp -r "$src" "$out/build"
    cd "$out/build"
    # --enable-avx2: the fft_small NTT and the vectorised nmod kernels;
    # (FLINT's own CFLAGS: -O3 with -march=native breaks its inline asm.)
    ./configure --prefix="$out/install" --enable-avx2 --disable-shared \
        --enable-static
    make -j"$(nproc)"
    make install
fi

# The driver (decode_kernels.c: `decode FILE` and `kernels --n N`).
gcc -O2 -march=native -Wall -o "$out/decode_kernels" "$here/decode_kernels.c" \
    -I"$out/install/include" "$out/install/lib/libflint.a" -lmpfr -lgmp -lm -lpthread
echo "built $out/decode_kernels"
# fft_small is compiled only with AVX2 (or NEON): the sign that
# --enable-avx2 took. (There is no FLINT_HAVE_AVX2 define.)
grep -E "^#define FLINT_HAVE_FFT_SMALL" "$out/install/include/flint/flint-config.h" \
    || echo "warning: FLINT was built without fft_small" >&2
