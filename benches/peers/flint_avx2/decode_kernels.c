/*
 * FLINT's side of the decode and polynomial-kernel comparison, on
 * word-size nmod_poly, one thread. Peer of
 * crates/syndrome-agg/examples/decode_scale.rs (decode) and
 * crates/field/examples/kernels.rs (kernels). Run by hand, never in CI;
 * built by benches/peers/flint_avx2/build.sh against FLINT 3.5.0 with
 * --enable-avx2, and run by benches/peers/decode_kernels.sh.
 *
 *   decode_kernels decode FILE [--repeat R] [--roots-general]
 *   decode_kernels kernels --n N [--repeat R] [--seed S] [--p P]
 *
 * Output: lines starting with '#' are comments; every other line is
 *
 *   flint decode t=T STEP SECONDS
 *   flint kernels n=N KERNEL SECONDS digest=D
 *
 * where SECONDS is the median over R runs of the wall-clock time
 * (clock_gettime(CLOCK_MONOTONIC)) and D the digest of the result (see
 * digest_vec), the same that the Rust example prints.
 *
 * decode: FILE is what `decode_scale --write FILE` writes: the prime p,
 * t, the 2t syndromes s_1..s_2t, then the t keys (ascending) and their t
 * counts, one decimal integer a line. Steps, each timed alone:
 *
 *   locator  nmod_berlekamp_massey_init/add_points/reduce on s_1..s_2t
 *            (FLINT's Berlekamp-Massey, half-GCD (nmod_poly_hgcd) once
 *            the remainder sequence is long), then nmod_poly_make_monic
 *            of V: the reversed locator M(z) = prod_j (z - x_j);
 *   roots    nmod_poly_find_distinct_nonzero_roots(M): Rabin's splitting
 *            without the squarefree / x^p - x gcd that nmod_poly_roots
 *            does first (M is known to split into distinct nonzero
 *            linear factors); with --roots-general also `roots_general`,
 *            nmod_poly_roots(M, 0) (not part of the total);
 *   counts   Lambda = reverse(M), N = nmod_poly_mullow(Lambda, S, t) with
 *            S = s_1..s_t, Nrev = reverse(N, t), then
 *            nmod_poly_evaluate_nmod_vec_fast of Nrev and of M' at the
 *            roots, and q_j = Nrev(x_j) / M'(x_j) by t nmod_div;
 *   total    the sum of the three, per run (median of the sums).
 *
 * The keys and counts are checked against the file after the timings;
 * the exit status is 1 if they differ.
 *
 * kernels: inputs from the generator that the Rust example shares
 * (gen_vec: splitmix64 from seed + stream * 0x9E3779B97F4A7C15, each
 * output reduced mod p; a zero top coefficient of a polynomial becomes 1):
 *
 *   mul      nmod_poly_mul(A, B), A = stream 1, B = stream 2, n coeffs each
 *   mullow   nmod_poly_mullow(A, B, n)
 *   mulhigh  nmod_poly_mulhigh(A, B, n); digest of coefficients n..2n-2
 *   divrem   nmod_poly_divrem(D, B), D = stream 3 with 2n coeffs;
 *            digest "Q:R"
 *   gcd      nmod_poly_gcd(G U, G V) with G = stream 5 (10 coeffs, made
 *            monic), U = stream 6, V = stream 7 (n - 9 coeffs each), so
 *            the inputs have n coeffs and the gcd is G; the products are
 *            formed outside the timing
 *   evaluate nmod_poly_evaluate_nmod_vec_fast(A, X), X = stream 4, n points
 *
 * The digest of a vector c_0..c_(m-1) is sum_i c_i z^i mod p at
 * z = 1234567 (Horner), so a reordered or wrong coefficient shows.
 */

#define _POSIX_C_SOURCE 199309L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <flint/flint.h>
#include <flint/nmod.h>
#include <flint/nmod_poly.h>
#include <flint/nmod_poly_factor.h>
#include <flint/nmod_vec.h>
#include <flint/ulong_extras.h>

#define P_PROTH UWORD(0xd800000000000001) /* 27 * 2^59 + 1 */
#define DIGEST_POINT UWORD(1234567)
#define GEN_STRIDE UWORD(0x9E3779B97F4A7C15)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

static int cmp_double(const void * a, const void * b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* The median (the mean of the middle two for an even count); sorts v. */
static double median(double * v, slong n)
{
    qsort(v, (size_t) n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static uint64_t splitmix64(uint64_t * state)
{
    uint64_t z = (*state += UWORD(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UWORD(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UWORD(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* n values of stream `stream` for `seed`, each reduced mod p. */
static void gen_vec(nn_ptr out, slong n, uint64_t seed, uint64_t stream, ulong p)
{
    uint64_t state = seed + stream * GEN_STRIDE;
    for (slong i = 0; i < n; i++)
        out[i] = splitmix64(&state) % p;
}

/* A polynomial of n coefficients from gen_vec; a zero top coefficient
   becomes 1, so the length is exactly n. */
static void gen_poly(nmod_poly_t a, slong n, uint64_t seed, uint64_t stream)
{
    nmod_poly_fit_length(a, n);
    gen_vec(a->coeffs, n, seed, stream, a->mod.n);
    if (a->coeffs[n - 1] == 0)
        a->coeffs[n - 1] = 1;
    a->length = n;
}

static ulong digest_vec(nn_srcptr c, slong len, nmod_t mod)
{
    ulong acc = 0;
    for (slong i = len - 1; i >= 0; i--)
        acc = nmod_add(nmod_mul(acc, DIGEST_POINT, mod), c[i], mod);
    return acc;
}

static ulong digest_poly(const nmod_poly_t a)
{
    return digest_vec(a->coeffs, a->length, a->mod);
}

FLINT_NORETURN static void usage(void)
{
    fprintf(stderr,
        "usage: decode_kernels decode FILE [--repeat R] [--roots-general]\n"
        "       decode_kernels kernels --n N [--repeat R] [--seed S] [--p P]\n");
    exit(2);
}

static ulong parse_u64(const char * flag, const char * v)
{
    char * end;
    if (v == NULL)
    {
        fprintf(stderr, "%s needs a value\n", flag);
        usage();
    }
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno != 0 || *end != '\0' || end == v || v[0] == '-')
    {
        fprintf(stderr, "%s: `%s` is not a non-negative integer\n", flag, v);
        usage();
    }
    return (ulong) x;
}

/* ---------------------------------------------------------------- decode */

typedef struct
{
    ulong p;
    slong t;
    nn_ptr s;      /* 2t syndromes */
    nn_ptr keys;   /* t keys, ascending */
    nn_ptr counts; /* t counts */
} decode_input;

static int read_input(const char * path, decode_input * in)
{
    FILE * fh = fopen(path, "r");
    if (fh == NULL)
    {
        perror(path);
        return 0;
    }
    slong cap = 1024, len = 0;
    ulong * vals = flint_malloc(cap * sizeof(ulong));
    char line[256];
    while (fgets(line, sizeof line, fh) != NULL)
    {
        char * q = line;
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q == '\n' || *q == '\0' || *q == '\r')
            continue;
        char * end;
        errno = 0;
        unsigned long long x = strtoull(q, &end, 10);
        while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
            end++;
        if (errno != 0 || *end != '\0' || q[0] == '-')
        {
            fprintf(stderr, "%s: line %ld is not a decimal integer below 2^64\n",
                path, (long) len + 1);
            fclose(fh);
            return 0;
        }
        if (len == cap)
        {
            cap *= 2;
            vals = flint_realloc(vals, cap * sizeof(ulong));
        }
        vals[len++] = (ulong) x;
    }
    fclose(fh);
    if (len < 2)
    {
        fprintf(stderr, "%s: expected p and t on the first two lines\n", path);
        return 0;
    }
    in->p = vals[0];
    in->t = (slong) vals[1];
    if (in->t < 1 || len != 2 + 4 * in->t)
    {
        fprintf(stderr, "%s: expected 2 + 4t lines for t = %ld, found %ld\n",
            path, (long) in->t, (long) len);
        return 0;
    }
    if (in->p < 3 || !n_is_prime(in->p))
    {
        fprintf(stderr, "%s: p = %lu is not an odd prime below 2^64\n", path, in->p);
        return 0;
    }
    slong t = in->t;
    in->s = _nmod_vec_init(2 * t);
    in->keys = _nmod_vec_init(t);
    in->counts = _nmod_vec_init(t);
    for (slong i = 0; i < 2 * t; i++)
        in->s[i] = vals[2 + i] % in->p;
    for (slong i = 0; i < t; i++)
    {
        in->keys[i] = vals[2 + 2 * t + i];
        in->counts[i] = vals[2 + 3 * t + i];
    }
    flint_free(vals);
    return 1;
}

typedef struct
{
    ulong x, q;
} pair;

static int cmp_pair(const void * a, const void * b)
{
    ulong x = ((const pair *) a)->x, y = ((const pair *) b)->x;
    return (x > y) - (x < y);
}

static int run_decode(int argc, char ** argv)
{
    const char * path = NULL;
    slong repeat = 1;
    int roots_general = 0;
    for (int i = 0; i < argc; i++)
    {
        if (strcmp(argv[i], "--repeat") == 0)
            repeat = (slong) parse_u64("--repeat", i + 1 < argc ? argv[++i] : NULL);
        else if (strcmp(argv[i], "--roots-general") == 0)
            roots_general = 1;
        else if (argv[i][0] == '-' || path != NULL)
            usage();
        else
            path = argv[i];
    }
    if (path == NULL || repeat < 1)
        usage();

    decode_input in;
    if (!read_input(path, &in))
        return 2;
    slong t = in.t;
    ulong p = in.p;
    nmod_t mod;
    nmod_init(&mod, p);
    printf("# FLINT %s, p = %lu, t = %ld, 2t = %ld syndromes, %ld runs, 1 thread\n",
        FLINT_VERSION, p, (long) t, (long) (2 * t), (long) repeat);

    double * tl = flint_malloc(repeat * sizeof(double));
    double * tr = flint_malloc(repeat * sizeof(double));
    double * tg = flint_malloc(repeat * sizeof(double));
    double * tc = flint_malloc(repeat * sizeof(double));
    double * tt = flint_malloc(repeat * sizeof(double));
    nn_ptr roots = _nmod_vec_init(t);
    nn_ptr num = _nmod_vec_init(t);
    nn_ptr den = _nmod_vec_init(t);
    nn_ptr qs = _nmod_vec_init(t);
    int ok = 1;

    for (slong r = 0; r < repeat && ok; r++)
    {
        nmod_berlekamp_massey_t B;
        nmod_poly_t m, lam, s, nl, nrev, dm;
        nmod_poly_init_mod(m, mod);
        nmod_poly_init_mod(lam, mod);
        nmod_poly_init_mod(s, mod);
        nmod_poly_init_mod(nl, mod);
        nmod_poly_init_mod(nrev, mod);
        nmod_poly_init_mod(dm, mod);
        /* S(y) = s_1 + s_2 y + ... + s_t y^(t-1), built outside the timing */
        nmod_poly_fit_length(s, t);
        _nmod_vec_set(s->coeffs, in.s, t);
        s->length = t;
        _nmod_poly_normalise(s);

        double t0 = now();
        nmod_berlekamp_massey_init(B, p);
        nmod_berlekamp_massey_add_points(B, in.s, 2 * t);
        nmod_berlekamp_massey_reduce(B);
        nmod_poly_make_monic(m, nmod_berlekamp_massey_V_poly(B));
        double t1 = now();
        nmod_berlekamp_massey_clear(B);
        tl[r] = t1 - t0;
        if (nmod_poly_degree(m) != t)
        {
            fprintf(stderr, "error: Berlekamp-Massey gave degree %ld, not t = %ld\n",
                (long) nmod_poly_degree(m), (long) t);
            ok = 0;
            break;
        }

        t0 = now();
        int found = nmod_poly_find_distinct_nonzero_roots(roots, m);
        t1 = now();
        tr[r] = t1 - t0;
        if (!found)
        {
            fprintf(stderr, "error: the locator has no %ld distinct nonzero roots\n", (long) t);
            ok = 0;
            break;
        }

        if (roots_general)
        {
            nmod_poly_factor_t fac;
            nmod_poly_factor_init(fac);
            t0 = now();
            nmod_poly_roots(fac, m, 0);
            t1 = now();
            tg[r] = t1 - t0;
            if (fac->num != t)
            {
                fprintf(stderr, "error: nmod_poly_roots found %ld roots, not %ld\n",
                    (long) fac->num, (long) t);
                ok = 0;
            }
            nmod_poly_factor_clear(fac);
            if (!ok)
                break;
        }

        t0 = now();
        /* Lambda(y) = y^t M(1/y): M is monic, so Lambda(0) = 1 */
        nmod_poly_reverse(lam, m, t + 1);
        nmod_poly_mullow(nl, lam, s, t);
        nmod_poly_reverse(nrev, nl, t); /* z^(t-1) N(1/z) */
        nmod_poly_derivative(dm, m);
        nmod_poly_evaluate_nmod_vec_fast(num, nrev, roots, t);
        nmod_poly_evaluate_nmod_vec_fast(den, dm, roots, t);
        for (slong j = 0; j < t; j++)
            qs[j] = nmod_div(num[j], den[j], mod);
        t1 = now();
        tc[r] = t1 - t0;
        tt[r] = tl[r] + tr[r] + tc[r];

        /* the check, outside the timings */
        pair * got = flint_malloc(t * sizeof(pair));
        for (slong j = 0; j < t; j++)
        {
            got[j].x = roots[j];
            got[j].q = qs[j];
        }
        qsort(got, (size_t) t, sizeof(pair), cmp_pair);
        for (slong j = 0; j < t && ok; j++)
        {
            if (got[j].x != in.keys[j] || got[j].q != in.counts[j])
            {
                fprintf(stderr,
                    "error: run %ld: entry %ld is (%lu, %lu), the file has (%lu, %lu)\n",
                    (long) r + 1, (long) j, got[j].x, got[j].q, in.keys[j], in.counts[j]);
                ok = 0;
            }
        }
        flint_free(got);
        printf("# run %ld: locator %.6f roots %.6f counts %.6f total %.6f\n", (long) r + 1,
            tl[r], tr[r], tc[r], tt[r]);
        fflush(stdout);

        nmod_poly_clear(m);
        nmod_poly_clear(lam);
        nmod_poly_clear(s);
        nmod_poly_clear(nl);
        nmod_poly_clear(nrev);
        nmod_poly_clear(dm);
    }
    if (ok)
    {
        printf("flint decode t=%ld locator %.6f\n", (long) t, median(tl, repeat));
        printf("flint decode t=%ld roots %.6f\n", (long) t, median(tr, repeat));
        if (roots_general)
            printf("flint decode t=%ld roots_general %.6f\n", (long) t, median(tg, repeat));
        printf("flint decode t=%ld counts %.6f\n", (long) t, median(tc, repeat));
        printf("flint decode t=%ld total %.6f\n", (long) t, median(tt, repeat));
        printf("# decoded vector equals the file's keys and counts\n");
    }
    _nmod_vec_clear(roots);
    _nmod_vec_clear(num);
    _nmod_vec_clear(den);
    _nmod_vec_clear(qs);
    _nmod_vec_clear(in.s);
    _nmod_vec_clear(in.keys);
    _nmod_vec_clear(in.counts);
    flint_free(tl);
    flint_free(tr);
    flint_free(tg);
    flint_free(tc);
    flint_free(tt);
    return ok ? 0 : 1;
}

/* --------------------------------------------------------------- kernels */

static void report(slong n, const char * kernel, double * times, slong repeat,
    const char * digest)
{
    printf("flint kernels n=%ld %s %.6f digest=%s\n", (long) n, kernel,
        median(times, repeat), digest);
    fflush(stdout);
}

static int run_kernels(int argc, char ** argv)
{
    slong n = 0, repeat = 1;
    uint64_t seed = 1;
    ulong p = P_PROTH;
    for (int i = 0; i < argc; i++)
    {
        const char * v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--n") == 0)
            n = (slong) parse_u64("--n", v), i++;
        else if (strcmp(argv[i], "--repeat") == 0)
            repeat = (slong) parse_u64("--repeat", v), i++;
        else if (strcmp(argv[i], "--seed") == 0)
            seed = parse_u64("--seed", v), i++;
        else if (strcmp(argv[i], "--p") == 0)
            p = parse_u64("--p", v), i++;
        else
            usage();
    }
    if (n < 16 || repeat < 1)
    {
        fprintf(stderr, "--n must be at least 16 and --repeat at least 1\n");
        usage();
    }
    if (p < 3 || !n_is_prime(p))
    {
        fprintf(stderr, "--p must be an odd prime\n");
        return 2;
    }
    nmod_t mod;
    nmod_init(&mod, p);
    printf("# FLINT %s, p = %lu, n = %ld, seed = %lu, %ld runs, 1 thread\n",
        FLINT_VERSION, p, (long) n, (ulong) seed, (long) repeat);

    nmod_poly_t a, b, d, g, u, v, ga, gb, res, q, rm;
    nmod_poly_init_mod(a, mod);
    nmod_poly_init_mod(b, mod);
    nmod_poly_init_mod(d, mod);
    nmod_poly_init_mod(g, mod);
    nmod_poly_init_mod(u, mod);
    nmod_poly_init_mod(v, mod);
    nmod_poly_init_mod(ga, mod);
    nmod_poly_init_mod(gb, mod);
    nmod_poly_init_mod(res, mod);
    nmod_poly_init_mod(q, mod);
    nmod_poly_init_mod(rm, mod);
    gen_poly(a, n, seed, 1);
    gen_poly(b, n, seed, 2);
    gen_poly(d, 2 * n, seed, 3);
    nn_ptr xs = _nmod_vec_init(n);
    nn_ptr ys = _nmod_vec_init(n);
    gen_vec(xs, n, seed, 4, p);
    gen_poly(g, 10, seed, 5);
    g->coeffs[9] = 1;
    gen_poly(u, n - 9, seed, 6);
    gen_poly(v, n - 9, seed, 7);
    nmod_poly_mul(ga, g, u);
    nmod_poly_mul(gb, g, v);

    double * ts = flint_malloc(repeat * sizeof(double));
    char digest[64];
    double t0;

    nmod_poly_mul(res, a, b); /* untimed warm-up, as ours */
    for (slong r = 0; r < repeat; r++)
    {
        t0 = now();
        nmod_poly_mul(res, a, b);
        ts[r] = now() - t0;
    }
    snprintf(digest, sizeof digest, "%lu", digest_poly(res));
    report(n, "mul", ts, repeat, digest);

    nmod_poly_mullow(res, a, b, n); /* untimed warm-up, as ours */
    for (slong r = 0; r < repeat; r++)
    {
        t0 = now();
        nmod_poly_mullow(res, a, b, n);
        ts[r] = now() - t0;
    }
    snprintf(digest, sizeof digest, "%lu", digest_poly(res));
    report(n, "mullow", ts, repeat, digest);

    nmod_poly_mulhigh(res, a, b, n); /* untimed warm-up, as ours */
    for (slong r = 0; r < repeat; r++)
    {
        t0 = now();
        nmod_poly_mulhigh(res, a, b, n);
        ts[r] = now() - t0;
    }
    /* coefficients n..2n-2; those below n are arbitrary */
    snprintf(digest, sizeof digest, "%lu",
        res->length > n ? digest_vec(res->coeffs + n, res->length - n, mod) : UWORD(0));
    report(n, "mulhigh", ts, repeat, digest);

    nmod_poly_divrem(q, rm, d, b); /* untimed warm-up, as ours */
    for (slong r = 0; r < repeat; r++)
    {
        t0 = now();
        nmod_poly_divrem(q, rm, d, b);
        ts[r] = now() - t0;
    }
    snprintf(digest, sizeof digest, "%lu:%lu", digest_poly(q), digest_poly(rm));
    report(n, "divrem", ts, repeat, digest);

    nmod_poly_gcd(res, ga, gb); /* untimed warm-up, as ours */
    for (slong r = 0; r < repeat; r++)
    {
        t0 = now();
        nmod_poly_gcd(res, ga, gb);
        ts[r] = now() - t0;
    }
    snprintf(digest, sizeof digest, "%lu", digest_poly(res));
    report(n, "gcd", ts, repeat, digest);
    if (!nmod_poly_equal(res, g))
        printf("# warning: the gcd is not the planted factor of degree 9\n");

    nmod_poly_evaluate_nmod_vec_fast(ys, a, xs, n); /* untimed warm-up, as ours */
    for (slong r = 0; r < repeat; r++)
    {
        t0 = now();
        nmod_poly_evaluate_nmod_vec_fast(ys, a, xs, n);
        ts[r] = now() - t0;
    }
    snprintf(digest, sizeof digest, "%lu", digest_vec(ys, n, mod));
    report(n, "evaluate", ts, repeat, digest);

    flint_free(ts);
    _nmod_vec_clear(xs);
    _nmod_vec_clear(ys);
    nmod_poly_clear(a);
    nmod_poly_clear(b);
    nmod_poly_clear(d);
    nmod_poly_clear(g);
    nmod_poly_clear(u);
    nmod_poly_clear(v);
    nmod_poly_clear(ga);
    nmod_poly_clear(gb);
    nmod_poly_clear(res);
    nmod_poly_clear(q);
    nmod_poly_clear(rm);
    return 0;
}

int main(int argc, char ** argv)
{
    flint_set_num_threads(1);
    int rc = 2;
    if (argc >= 2 && strcmp(argv[1], "decode") == 0)
        rc = run_decode(argc - 2, argv + 2);
    else if (argc >= 2 && strcmp(argv[1], "kernels") == 0)
        rc = run_kernels(argc - 2, argv + 2);
    else
        usage();
    flint_cleanup_master();
    return rc;
}
