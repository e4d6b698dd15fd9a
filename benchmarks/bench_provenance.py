"""What signing costs a save: an image saved with a C2PA signer against the same save without
one, measured alternately in the same run, printed as a ratio.

    goal: signed save <= 1.10 x unsigned save

Each save is what ``output.save(folder)`` does the first time: the image fetched from the
sandbox into the cache and copied to the folder, its content credentials made (the sidecar
always; with a signer, the manifest embedded too). The signer is an ES256 certificate of a
throwaway CA made here, as a team's own CA would issue it. Measured twice:

- over loopback: the fastest a download gets, so the worst ratio a user could see. c2pa's own
  signing of one image takes about 0.6 ms of native work whatever mediagen does around it, a
  fifth of a 3 ms loopback save;
- over a network link (a relay on loopback with a round trip and a bandwidth, ``_link.py``;
  by default 20 ms and 100 Mbit/s, a fast connection to a service's storage): what a user of
  the service sees.

    python benchmarks/bench_provenance.py [--saves 30] [--model pixel-1] [--rtt 0.02] [--mbit 100]
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

import _browser  # noqa: F401 - puts the tests' helpers on the path
from _link import NetworkLink
from process_helpers import free_port


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


def measure(base_url: str, api_key: str, root: Path, args: argparse.Namespace):
    """Alternated unsigned and signed saves of one image; their times and what was saved."""
    import mediagen
    from mediagen import provenance
    from mediagen.provenance._sidecar import sidecar_of

    root.mkdir()
    chain, key = make_signer_files(root)
    with mediagen.Client(
        api_key=api_key, base_url=base_url, cache_dir=root / "cache",
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
    return times, size, output


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=30, help="saves of each kind")
    parser.add_argument("--model", default="pixel-1")
    parser.add_argument("--rtt", type=float, default=0.020, help="the link's round trip (s)")
    parser.add_argument("--mbit", type=float, default=100.0, help="the link's bandwidth")
    args = parser.parse_args()

    from mediagen_sandbox.testing import running_sandbox

    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        with running_sandbox(speed=0.0) as sandbox:
            tenant = sandbox.new_tenant(balance=100_000)
            found = measure(sandbox.base_url, tenant.api_key, Path(scratch) / "loopback", args)
            rows.append(("loopback (the worst case)", *found))
        port = free_port()
        with (
            NetworkLink(rtt=args.rtt, mbit_per_s=args.mbit) as link,
            running_sandbox(speed=0.0, port=port, args=["--public-url", link.url]) as sandbox,
        ):
            link.target = ("127.0.0.1", port)
            tenant = sandbox.new_tenant(balance=100_000)
            found = measure(link.url, tenant.api_key, Path(scratch) / "link", args)
            rows.append((f"a {args.rtt * 1e3:g} ms, {args.mbit:g} Mbit/s link", *found))
    output = rows[0][3]
    print(f"image: {output.width}x{output.height} {output.content_type}, {rows[0][2]} bytes signed")
    print(f"{'download over':34} {'unsigned save':>16} {'signed save':>14} {'ratio':>6}")
    for name, times, _, _ in rows:
        base, signed = statistics.median(times[False]), statistics.median(times[True])
        print(f"{name:34} {base * 1e3:13.1f} ms {signed * 1e3:11.1f} ms {signed / base:6.2f}")
    print(f"medians of {args.saves} saves each; goal: signed <= 1.10 x unsigned")


if __name__ == "__main__":
    main()
