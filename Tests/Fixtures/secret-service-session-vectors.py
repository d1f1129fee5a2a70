#!/usr/bin/env python3
"""Produces the known-answer vectors of Tests/TresorCryptoTests/DiffieHellmanTests.swift and
SecretServiceSessionTests.swift.

The Secret Service's `dh-ietf1024-sha256-aes128-cbc-pkcs7` session: Diffie-Hellman in the
RFC 2409 Second Oakley Group, the shared secret left-padded to the prime's 128 bytes,
HKDF-SHA256 with no salt and empty info to 16 bytes, AES-128-CBC with PKCS#7 padding.

Everything is computed here independently of Tresor: the prime from RFC 2409's formula, not
from its printed hex; the public keys with Python's own integers, the shared secrets both with Python's integers and with pyca/cryptography's DH
(OpenSSL), which must agree; HKDF, PKCS#7 and AES-CBC with pyca/cryptography.
Run: python3 Tests/Fixtures/secret-service-session-vectors.py (needs `cryptography`).
"""
import hashlib

from cryptography.hazmat.primitives import hashes, padding
from cryptography.hazmat.primitives.asymmetric import dh
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

G = 2
SIZE = 128


def pi_floor(shift_bits: int) -> int:
    """floor(pi * 2**shift_bits), by Machin's formula in integers (guard bits absorb rounding)."""
    guard = 64
    one = 1 << (shift_bits + guard)

    def arctan_inv(x: int) -> int:
        total, term, n, sign = 0, one // x, 1, 1
        while term:
            total += sign * (term // n)
            term //= x * x
            n += 2
            sign = -sign
        return total

    return (4 * (4 * arctan_inv(5) - arctan_inv(239))) >> guard


# The Second Oakley Group's prime, from RFC 2409 §6.2's definition
# 2^1024 - 2^960 - 1 + 2^64 * { [2^894 pi] + 129093 } rather than from its printed hex, so that
# these vectors also pin Tresor's copy of the hex.
P = 2**1024 - 2**960 - 1 + 2**64 * (pi_floor(894) + 129093)


def exponent(label: str) -> int:
    return int.from_bytes(hashlib.sha256(label.encode()).digest(), "big")


def be(value: int, size: int | None = None) -> bytes:
    size = size if size is not None else max(1, (value.bit_length() + 7) // 8)
    return value.to_bytes(size, "big")


def shared_with_openssl(x: int, peer: int) -> bytes:
    params = dh.DHParameterNumbers(P, G)
    private = dh.DHPrivateNumbers(x, dh.DHPublicNumbers(pow(G, x, P), params)).private_key()
    return private.exchange(dh.DHPublicNumbers(peer, params).public_key())


def exchange(a: int, b: int) -> dict:
    A, B = pow(G, a, P), pow(G, b, P)
    z = pow(B, a, P)
    assert z == pow(A, b, P)
    for mine, theirs in ((a, B), (b, A)):
        assert int.from_bytes(shared_with_openssl(mine, theirs), "big") == z
    return {"a": a, "b": b, "A": A, "B": B, "Z": z}


def show(name: str, value: bytes) -> None:
    print(f"{name} ({len(value)} bytes): {value.hex()}")


show("prime p (compare with RFC 2409 §6.2's hex)", be(P, SIZE))

# Vector 1: two exponents from fixed labels, taken as they came.
v1 = exchange(exponent("tresor secret-service dh vector a"), exponent("tresor secret-service dh vector b"))

# Vector 2: the first counter n for which b's public key AND the shared secret both start with
# a zero byte, so the vector pins the 127-byte peer key and the 128-byte left padding.
a2 = exponent("tresor secret-service dh vector a")
n = 0
while True:
    b2 = exponent(f"tresor secret-service dh vector short/{n}")
    B2 = pow(G, b2, P)
    if B2 < 2**1016 and pow(B2, a2, P) < 2**1016:
        break
    n += 1
v2 = exchange(a2, b2)
print(f"vector 2 counter: {n}")

for name, v in (("vector 1", v1), ("vector 2", v2)):
    print(f"== {name}")
    show("a", be(v["a"], 32))
    show("b", be(v["b"], 32))
    show("A padded", be(v["A"], SIZE))
    show("B padded", be(v["B"], SIZE))
    show("B minimal", be(v["B"]))
    show("Z padded", be(v["Z"], SIZE))

# End to end on vector 2: session key from the padded secret, then one secret encrypted.
z = be(v2["Z"], SIZE)
key = HKDF(algorithm=hashes.SHA256(), length=16, salt=None, info=b"").derive(z)
unpadded_key = HKDF(algorithm=hashes.SHA256(), length=16, salt=None, info=b"").derive(be(v2["Z"]))
iv = hashlib.sha256(b"tresor secret-service iv").digest()[:16]
secret = b"correct horse battery staple"
padder = padding.PKCS7(128).padder()
padded = padder.update(secret) + padder.finalize()
encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
ciphertext = encryptor.update(padded) + encryptor.finalize()
print("== end to end (vector 2)")
show("session key", key)
show("key from the unpadded secret (must differ)", unpadded_key)
show("iv", iv)
show("secret", secret)
show("ciphertext", ciphertext)
