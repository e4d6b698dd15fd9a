"""A certificate authority made for the tests with ``cryptography``, for content credentials.

``make_test_ca(directory)`` writes a root, an intermediate and an ES256 leaf with the extended
key usage C2PA accepts (emailProtection), as ``root.pem``, ``chain.pem`` (leaf + intermediate)
and ``leaf.key``; plus a self-signed leaf (``self_chain.pem`` / ``self.key``) that signs but
reads as untrusted. The leaf's common name is ``mediagen test signer``.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "mediagen tests"),
        ]
    )


def _cert(subject, key, issuer, issuer_key, *, ca: bool, path_len=None):
    now = dt.datetime.now(dt.timezone.utc)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=path_len), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=not ca,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=ca,
                crl_sign=ca,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    )
    if not ca:
        builder = builder.add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.EMAIL_PROTECTION]), critical=False
        )
    # c2pa refuses a certificate without one, a self-signed leaf's included
    builder = builder.add_extension(
        x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()),
        critical=False,
    )
    return builder.sign(issuer_key, hashes.SHA256())


def _pem(cert) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _key_pem(key) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def make_test_ca(root_dir: Path) -> dict[str, Path]:
    """Write the test CA's files into ``root_dir``; their paths by name."""
    root_key = ec.generate_private_key(ec.SECP256R1())
    root = _cert(
        "mediagen test root", root_key, "mediagen test root", root_key, ca=True, path_len=1
    )
    inter_key = ec.generate_private_key(ec.SECP256R1())
    inter = _cert(
        "mediagen test intermediate", inter_key, "mediagen test root", root_key, ca=True, path_len=0
    )
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = _cert(
        "mediagen test signer", leaf_key, "mediagen test intermediate", inter_key, ca=False
    )
    self_key = ec.generate_private_key(ec.SECP256R1())
    self_leaf = _cert("self-made signer", self_key, "self-made signer", self_key, ca=False)
    files = {
        "root.pem": _pem(root),
        "chain.pem": _pem(leaf) + _pem(inter),
        "leaf.key": _key_pem(leaf_key),
        "self_chain.pem": _pem(self_leaf),
        "self.key": _key_pem(self_key),
    }
    paths = {}
    for name, data in files.items():
        (root_dir / name).write_bytes(data)
        paths[name] = root_dir / name
    return paths
