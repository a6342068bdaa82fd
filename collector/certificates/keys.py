"""The Ed25519 signing key (CERTS.md section 1): its PEM form, key id and JWK.

A key is a PEM PKCS#8 private key (what `openssl genpkey -algorithm ed25519`
writes too). Its id (`kid`) is the first 16 hex characters of the SHA-256
of the 32-byte raw public key; its public half is published as an RFC 8037
JWK in the collector's JWKS.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

KID_CHARS = 16  # CERTS.md section 1


class BadKey(ValueError):
    """Bytes that are not an Ed25519 key in the form expected."""


def kid_of(public_raw: bytes) -> str:
    """The key id of a 32-byte raw public key."""
    return hashlib.sha256(public_raw).hexdigest()[:KID_CHARS]


@dataclass(frozen=True)
class SigningKey:
    """A private key with its public half and id, loaded once."""

    private: Ed25519PrivateKey
    public_raw: bytes
    kid: str

    def sign(self, message: bytes) -> bytes:
        return self.private.sign(message)


def generate() -> SigningKey:
    return _signing_key(Ed25519PrivateKey.generate())


def _signing_key(private: Ed25519PrivateKey) -> SigningKey:
    raw = private.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    return SigningKey(private, raw, kid_of(raw))


def to_pem(key: SigningKey) -> bytes:
    """PEM PKCS#8, unencrypted: the file's mode (0600) protects it."""
    return key.private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def from_pem(data: bytes) -> SigningKey:
    """A key from PEM PKCS#8 bytes; BadKey when they are not an Ed25519 private key."""
    try:
        private = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise BadKey(f"not an unencrypted PEM PKCS#8 private key ({exc})") from None
    if not isinstance(private, Ed25519PrivateKey):
        raise BadKey(f"not an Ed25519 key but {type(private).__name__}")
    return _signing_key(private)


def b64url(data: bytes) -> str:
    """base64url without padding (RFC 7515 section 2), as JWKs spell bytes."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    padded = text + "=" * (-len(text) % 4)
    try:
        return base64.urlsafe_b64decode(padded.encode("ascii"))
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise BadKey("not base64url") from None


def public_from_raw(raw: bytes) -> Ed25519PublicKey:
    if len(raw) != 32:
        raise BadKey(f"an Ed25519 public key has 32 bytes, not {len(raw)}")
    return Ed25519PublicKey.from_public_bytes(raw)


def public_from_jwk(jwk: Any) -> Ed25519PublicKey:
    """An RFC 8037 OKP/Ed25519 JWK's public key; BadKey for anything else."""
    if not isinstance(jwk, dict) or jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519":
        raise BadKey("not an OKP Ed25519 JWK")
    x = jwk.get("x")
    if not isinstance(x, str):
        raise BadKey("the JWK has no x")
    return public_from_raw(unb64url(x))


def verifies(public: Ed25519PublicKey, signature: bytes, message: bytes) -> bool:
    try:
        public.verify(signature, message)
    except InvalidSignature:
        return False
    return True
