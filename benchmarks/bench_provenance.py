"""What signing costs a save: an image saved with a C2PA signer against the same save without
one, measured alternately in the same run, printed as a ratio.

    goal: signed save <= 1.10 x unsigned save

Each save is what ``output.save(folder)`` does the first time: the image fetched from the
sandbox (on this machine: the fastest a download gets, so the ratio is the worst a user sees)
into the cache and copied to the folder, its content credentials made (the sidecar always;
with a signer, the manifest embedded too). The signer is
an ES256 certificate of a throwaway CA made here, as a team's own CA would issue it.

    python benchmarks/bench_provenance.py [--saves 30] [--model pixel-1]
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import tempfile
import time
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


def _cert(name, key, issuer, issuer_key, ca):
    now = dt.datetime.now(dt.timezone.utc)
    usage = dict.fromkeys(
        ("content_commitment", "key_encipherment", "data_encipherment", "key_agreement",
         "encipher_only", "decipher_only"), False,
    )  # fmt: skip
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=0 if ca else None), critical=True)
        .add_extension(
            x509.KeyUsage(digital_signature=not ca, key_cert_sign=ca, crl_sign=ca, **usage),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()),
            critical=False,
        )
    )
    if not ca:
        builder = builder.add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.EMAIL_PROTECTION]), critical=False
        )
    return builder.sign(issuer_key, hashes.SHA256())


def make_signer_files(folder: Path) -> tuple[Path, Path]:
    """A chain (leaf + CA) and the leaf's key, written to ``folder``."""
    ca_key, leaf_key = (
        ec.generate_private_key(ec.SECP256R1()),
        ec.generate_private_key(ec.SECP256R1()),
    )
    ca = _cert("bench CA", ca_key, "bench CA", ca_key, ca=True)
    leaf = _cert("bench signer", leaf_key, "bench CA", ca_key, ca=False)
    chain, key = folder / "chain.pem", folder / "signer.key"
    pem = serialization.Encoding.PEM
    chain.write_bytes(leaf.public_bytes(pem) + ca.public_bytes(pem))
    key.write_bytes(
        leaf_key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return chain, key


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=30, help="saves of each kind")
    parser.add_argument("--model", default="pixel-1")
    args = parser.parse_args()

    import mediagen
    from mediagen import provenance
    from mediagen.provenance._sidecar import sidecar_of
    from mediagen_sandbox.testing import running_sandbox

    with running_sandbox(speed=0.0) as sandbox, tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        chain, key = make_signer_files(root)
        tenant = sandbox.new_tenant(balance=100_000)
        with mediagen.Client(
            api_key=tenant.api_key, base_url=sandbox.base_url, cache_dir=root / "cache",
            download=False, poll_interval=(0.02, 0.1),
        ) as client:  # fmt: skip
            generation = client.images.create(model=args.model, prompt="a lighthouse at dusk")
            output = client.generations.wait(generation, timeout=120).outputs[0]
            times: dict[bool, list[float]] = {False: [], True: []}
            size = 0
            for n in range(args.saves * 2 + 2):
                signed = n % 2 == 1
                if signed:
                    provenance.configure(certificate_chain=chain, key=key)
                else:
                    provenance.configure()
                provenance.current_signer()  # made once per configuration, as in a session
                folder = root / f"save-{n}"
                cached = client._cache.path_for(output)  # each save fetches the image anew
                cached.unlink(missing_ok=True)
                sidecar_of(cached).unlink(missing_ok=True)
                started = time.perf_counter()
                saved = output.save(folder)
                elapsed = time.perf_counter() - started
                size = saved.stat().st_size
                if n >= 2:  # the first pair warms the connection and c2pa's library
                    times[signed].append(elapsed)
            provenance.configure()
    base, signed_ = statistics.median(times[False]), statistics.median(times[True])
    print(f"image: {output.width}x{output.height} {output.content_type}, {size} bytes signed")
    print(f"unsigned save: median {base * 1e3:.1f} ms over {len(times[False])}")
    print(f"signed save:   median {signed_ * 1e3:.1f} ms over {len(times[True])}")
    print(f"ratio signed / unsigned: {signed_ / base:.2f} (goal <= 1.10)")


if __name__ == "__main__":
    main()
