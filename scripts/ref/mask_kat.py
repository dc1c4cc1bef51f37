#!/usr/bin/env python3
"""Independent reference for syndrome-agg's pairwise mask derivation.

Writes crates/masked-sum/tests/vectors/mask_kat.json, the known-answer
vectors that pin the Rust implementation (X25519 -> HKDF-SHA256 -> raw
ChaCha20 keystream -> rejection sampling). Uses only the `cryptography`
package (pip install cryptography), never the Rust code.

Sampling (crate docs, MaskDomain::sample): b = bit length of M - 1,
w = ceil(b / 8); take the next w keystream bytes as a little-endian integer,
clear the bits at position b and above, accept if < M, else discard; the w
bytes are consumed either way.
"""
import hashlib
import json
import pathlib

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives import serialization

PREFIX = b"syndrome-agg/v1/mask"


def info(session: bytes, rnd: int, u: int, v: int) -> bytes:
    lo, hi = min(u, v), max(u, v)
    return PREFIX + session + rnd.to_bytes(8, "little") + lo.to_bytes(8, "little") + hi.to_bytes(8, "little")


def seed(shared: bytes, session: bytes, rnd: int, u: int, v: int) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info(session, rnd, u, v)).derive(shared)


def keystream(key: bytes, n: int) -> bytes:
    # cryptography's ChaCha20 takes a 16-byte "nonce": 4-byte LE counter || 12-byte nonce.
    enc = Cipher(algorithms.ChaCha20(key, bytes(16)), mode=None).encryptor()
    return enc.update(bytes(n))


def sample(key: bytes, modulus: int, count: int):
    b = (modulus - 1).bit_length() if modulus > 1 else 0
    w = (b + 7) // 8
    # Plenty of stream: each candidate is accepted with probability > 1/2.
    ks = keystream(key, w * (4 * count + 64))
    out, pos, rejected = [], 0, 0
    while len(out) < count:
        v = int.from_bytes(ks[pos:pos + w], "little") & ((1 << b) - 1)
        pos += w
        if v < modulus:
            out.append(v)
        else:
            rejected += 1
    return out, rejected


def secret(label: str) -> bytes:
    return hashlib.sha256(b"mask-kat/" + label.encode()).digest()


def public(sk: bytes) -> bytes:
    k = X25519PrivateKey.from_private_bytes(sk)
    return k.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


MODULI = {
    "fp251": 251,
    "mersenne61": (1 << 61) - 1,
    "mersenne127": (1 << 127) - 1,
    "ring2^70": 1 << 70,
    "p256": (1 << 255) + 95,
}


def main():
    cases = []
    session = hashlib.sha256(b"mask-kat/session").digest()
    for i, (name, m) in enumerate(MODULI.items()):
        u, v, rnd = 3 + i, 1000 + 7 * i, i
        sk_u, sk_v = secret(f"u{i}"), secret(f"v{i}")
        shared = X25519PrivateKey.from_private_bytes(sk_u).exchange(X25519PublicKey.from_public_bytes(public(sk_v)))
        s = seed(shared, session, rnd, u, v)
        values, rejected = sample(s, m, 40)
        cases.append({
            "name": name,
            "modulus": str(m),
            "secret_u": sk_u.hex(),
            "secret_v": sk_v.hex(),
            "public_u": public(sk_u).hex(),
            "public_v": public(sk_v).hex(),
            "id_u": u,
            "id_v": v,
            "session": session.hex(),
            "round": rnd,
            "shared": shared.hex(),
            "seed": s.hex(),
            "keystream_prefix": keystream(s, 64).hex(),
            "rejected": rejected,
            "values": [str(x) for x in values],
        })
    out = pathlib.Path(__file__).resolve().parents[2] / "crates/masked-sum/tests/vectors/mask_kat.json"
    out.write_text(json.dumps({"generator": "scripts/ref/mask_kat.py", "cases": cases}, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
