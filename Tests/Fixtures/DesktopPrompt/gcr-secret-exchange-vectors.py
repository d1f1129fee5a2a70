#!/usr/bin/python3
"""Produces Tests/Fixtures/DesktopPrompt/gcr-secret-exchange-vectors.json, the known-answer
vectors of the desktop prompter's secret exchange ("sx-aes-1"), by running gcr's own
implementation (libgcr through GObject introspection: Debian's gir1.2-gcr-3 and python3-gi).

For each vector, gcr plays the prompter: it begins an exchange (its public key), receives
Tresor's side (a public key made from a fixed private exponent — the only arithmetic done here,
to put that key into gcr's hands) and sends a password sealed to it. Tresor's test must open
gcr's message with the fixed exponent and find the password. Exponents whose shared secret
starts with a zero byte are skipped: gcr 3.41 hashes that secret without its leading zeros,
gcr 4 with them, and Tresor never keeps such a key pair (docs/SECRET-SERVICE.md).
Run: /usr/bin/python3 Tests/Fixtures/DesktopPrompt/gcr-secret-exchange-vectors.py > …json
"""
import base64
import hashlib
import json

import gi

gi.require_version("Gcr", "3")
from gi.repository import Gcr  # noqa: E402

# RFC 3526 group 5 (1536-bit MODP), what gcr names "ietf-ike-grp-modp-1536".
P = int(
    "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD"
    "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
    "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F"
    "83655D23DCA3AD961C62F356208552BB9ED529077096966D670C354E4ABC9804F1746C08CA237327FFFFFFFFFFFFFFFF", 16)
SIZE = 192


def field(message: str, name: str) -> bytes:
    for line in message.splitlines():
        if line.startswith(name + "="):
            return base64.b64decode(line[len(name) + 1:])
    raise KeyError(name)


def vector(number: int, password: str) -> dict:
    while True:
        # A fixed-looking exponent per vector, from a hash, so that reruns differ only in gcr's side.
        exponent = int.from_bytes(hashlib.sha256(b"tresor sx-aes-1 vector %d" % number).digest(), "big")
        gcr = Gcr.SecretExchange.new(None)
        begun = gcr.begin()
        peer = int.from_bytes(field(begun, "public"), "big")
        if pow(peer, exponent, P).to_bytes(SIZE, "big")[0] != 0:
            break
    ours = pow(2, exponent, P).to_bytes(SIZE, "big")
    assert gcr.receive("[sx-aes-1]\npublic=%s\n" % base64.b64encode(ours).decode())
    sent = gcr.send(password, len(password.encode()))
    return {
        "privateExponent": exponent.to_bytes(32, "big").hex(),
        "begun": begun,
        "sent": sent,
        "password": password,
    }


if __name__ == "__main__":
    passwords = ["hunter22", "", "exactly16bytes!!", "Grüße, 密码 🔑", "x" * 100]
    print(json.dumps({
        "producer": "gcr %d.%d.%d (Gcr.SecretExchange, GObject introspection)" % (
            Gcr.MAJOR_VERSION, Gcr.MINOR_VERSION, Gcr.MICRO_VERSION),
        "vectors": [vector(n, p) for n, p in enumerate(passwords)],
    }, indent=2, ensure_ascii=False))
