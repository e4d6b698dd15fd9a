"""Run a real sandbox in a subprocess for tests, benchmarks and notebooks.

Every test suite of the project talks to the sandbox through this module::

    from mediagen_sandbox.testing import running_sandbox

    with running_sandbox(speed=0) as sb:          # a fresh temporary data dir, a free port
        tenant = sb.new_tenant(balance=500, plan="pro", discount_percent=10, cap=None)
        httpx.get(f"{sb.base_url}/v1/credits",
                  headers={"Authorization": f"Bearer {tenant.api_key}"})
        sb.admin.set_config(rate_limit_per_second=5)
        sb.kill(); sb.restart()                   # SIGKILL, then start again on the same data

The server is a separate process (``python -m mediagen_sandbox``), so tests exercise the real
HTTP stack over loopback. ``handle.admin`` is an :class:`AdminClient` with one method per admin
endpoint; its results are :class:`Record` objects (attribute and item access).
"""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

READY_TIMEOUT = 60.0


class SandboxError(RuntimeError):
    """The sandbox did not start, or an admin call failed (message carries the Error body)."""


class Record(dict):
    """A JSON object with attribute access (``org.id`` or ``org["id"]``)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __repr__(self) -> str:
        shown = {k: ("***" if k == "api_key" else v) for k, v in self.items()}
        return f"Record({shown!r})"


@dataclass(frozen=True)
class Tenant:
    """A fresh organization with one member and one key (the key bills as that member)."""

    org_id: str
    member_id: str
    key_id: str
    api_key: str

    def __repr__(self) -> str:
        return (
            f"Tenant(org_id={self.org_id!r}, member_id={self.member_id!r}, key_id={self.key_id!r})"
        )

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"}


class AdminClient:
    """The admin API (``X-Admin-Token``) over httpx."""

    def __init__(self, base_url: str, admin_token: str, timeout: float = 60.0) -> None:
        self._http = httpx.Client(
            base_url=base_url, headers={"X-Admin-Token": admin_token}, timeout=timeout
        )

    def close(self) -> None:
        self._http.close()

    def _call(self, method: str, path: str, json: dict | None = None) -> Record:
        response = self._http.request(method, path, json=json)
        if response.status_code >= 400:
            raise SandboxError(f"{method} {path} -> {response.status_code}: {response.text}")
        return Record(response.json())

    # organizations, members, keys
    def create_org(
        self,
        balance: float = 0.0,
        plan: str = "pro",
        discount_percent: float = 0.0,
        name: str = "Organization",
    ) -> Record:
        body = {"balance": balance, "plan": plan, "discount_percent": discount_percent}
        return self._call("POST", "/admin/orgs", {**body, "name": name})

    def get_org(self, org_id: str) -> Record:
        return self._call("GET", f"/admin/orgs/{org_id}")

    def update_org(self, org_id: str, **changes: Any) -> Record:
        """``plan``, ``discount_percent``, ``name``, ``balance`` (set), ``grant`` (add)."""
        return self._call("PATCH", f"/admin/orgs/{org_id}", changes)

    def set_balance(self, org_id: str, balance: float) -> Record:
        return self.update_org(org_id, balance=balance)

    def grant(self, org_id: str, credits: float) -> Record:
        return self.update_org(org_id, grant=credits)

    def set_plan(self, org_id: str, plan: str) -> Record:
        return self.update_org(org_id, plan=plan)

    def set_discount(self, org_id: str, discount_percent: float) -> Record:
        return self.update_org(org_id, discount_percent=discount_percent)

    def create_member(self, org_id: str, cap: float | None = None, name: str = "Member") -> Record:
        return self._call("POST", f"/admin/orgs/{org_id}/members", {"cap": cap, "name": name})

    def get_member(self, member_id: str) -> Record:
        return self._call("GET", f"/admin/members/{member_id}")

    def set_cap(self, member_id: str, cap: float | None) -> Record:
        return self._call("PATCH", f"/admin/members/{member_id}", {"cap": cap})

    def create_key(
        self, member_id: str, expires_at: str | None = None, name: str = "key"
    ) -> Record:
        """Returns the key record; ``.api_key`` is the secret (shown only here)."""
        return self._call(
            "POST", f"/admin/members/{member_id}/keys", {"expires_at": expires_at, "name": name}
        )

    def revoke_key(self, key_id: str) -> Record:
        return self._call("PATCH", f"/admin/keys/{key_id}", {"revoked": True})

    def expire_key(self, key_id: str) -> Record:
        return self._call("PATCH", f"/admin/keys/{key_id}", {"expire_now": True})

    def create_tenant(
        self,
        balance: float = 1000.0,
        plan: str = "pro",
        discount_percent: float = 0.0,
        cap: float | None = None,
    ) -> Tenant:
        org = self.create_org(balance=balance, plan=plan, discount_percent=discount_percent)
        member = self.create_member(org.id, cap=cap)
        key = self.create_key(member.id)
        return Tenant(org.id, member.id, key.id, key.api_key)

    def set_key_rate_limit(
        self, key_id: str, per_second: float | None, burst: int | None = None
    ) -> Record:
        """Give one key a rate limit of its own (``None``: the server's again), leaving every
        other key at the server's."""
        body: dict[str, Any] = {"rate_limit_per_second": per_second}
        if burst is not None:
            body["rate_limit_burst"] = burst
        return self._call("PATCH", f"/admin/keys/{key_id}", body)

    @contextmanager
    def key_rate_limited(
        self, key_id: str, per_second: float, burst: int | None = None
    ) -> Iterator[Record]:
        """One key limited for a block (its bucket full at the start), then the server's
        limit again: a test throttles its own key, not every test's sharing the server."""
        try:
            yield self.set_key_rate_limit(key_id, per_second, burst)
        finally:
            self.set_key_rate_limit(key_id, None)

    def key_requests(self, key_id: str) -> Record:
        """``passed`` and ``limited`` (429): the key's requests that met its rate limit so far,
        from every process that used it."""
        return self._call("GET", f"/admin/keys/{key_id}/requests")

    # runtime settings and faults
    def get_config(self) -> Record:
        return self._call("GET", "/admin/config")

    def set_config(self, **changes: Any) -> Record:
        """Any of: speed, output_url_ttl_seconds, upload_url_ttl_seconds, max_upload_bytes,
        rate_limit_per_second, rate_limit_per_minute, rate_limit_burst, failure_rates
        ({model: probability}), failure_code, drop_next_submits, error_next_requests."""
        return self._call("PATCH", "/admin/config", changes)

    configure = set_config

    @contextmanager
    def config_changed(self, **changes: Any) -> Iterator[Record]:
        """Change settings for a block, then put back the previous values."""
        before = self.get_config()
        try:
            yield self.set_config(**changes)
        finally:
            self.set_config(**{name: before[name] for name in changes if name in before})
            if "rate_limit_per_minute" in changes:
                self.set_config(rate_limit_per_second=before["rate_limit_per_second"])

    # inspection
    def ledger(self, org_id: str) -> Record:
        """Balances plus ``entries``: dicts with seq, kind (grant/reserve/charge/refund),
        amount (credits, positive except negative grants), member_id, generation_id."""
        return self._call("GET", f"/admin/ledger/{org_id}")

    def state(self) -> Record:
        return self._call("GET", "/admin/state")

    def seed_generations(
        self, member_id: str, count: int, org_id: str | None = None, **options: Any
    ) -> Record:
        """Bulk-insert synthetic generations for a member (options: completed_fraction,
        failed_fraction, models, start, interval_seconds, seed)."""
        if org_id is None:
            org_id = self.get_member(member_id).org_id
        return self._call(
            "POST",
            f"/admin/orgs/{org_id}/seed-generations",
            {"member_id": member_id, "count": count, **options},
        )


class SandboxHandle:
    """A running sandbox subprocess; see the module docstring."""

    def __init__(
        self,
        data_dir: Path,
        speed: float,
        port: int,
        env: dict[str, str] | None,
        args: Sequence[str] = (),
    ) -> None:
        self.data_dir = Path(data_dir)
        self.speed = speed
        self.port = port
        self.env = env
        self.args = list(args)  # more options of ``python -m mediagen_sandbox``
        self.process: subprocess.Popen | None = None
        self.base_url = ""
        self.api_key = ""
        self.admin_token = ""
        self.admin: AdminClient | None = None
        self._log_path = self.data_dir / "server.log"

    def __repr__(self) -> str:
        return f"SandboxHandle(base_url={self.base_url!r}, data_dir={str(self.data_dir)!r})"

    @property
    def headers(self) -> dict[str, str]:
        """Authorization headers of the bootstrap key."""
        return {"Authorization": f"Bearer {self.api_key}"}

    def start(self) -> None:
        port = self.port
        if self.base_url and port == 0:
            port = int(self.base_url.rsplit(":", 1)[1])  # restart on the same port
        cmd = [
            sys.executable, "-m", "mediagen_sandbox", "--host", "127.0.0.1",
            "--port", str(port), "--data-dir", str(self.data_dir), "--speed", str(self.speed),
            "--exit-with-stdin", *self.args,
        ]  # fmt: skip
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **(self.env or {})}
        log = open(self._log_path, "ab")  # noqa: SIM115 - lives as long as the process
        # its stdin is a pipe only this process writes to (it never does): when this process
        # ends, however it ends, the pipe closes and the sandbox stops (``--exit-with-stdin``)
        self.process = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            env=env,
            start_new_session=True,
        )
        log.close()
        lines = self._read_ready_lines()
        self.base_url = lines["MEDIAGEN_BASE_URL"]
        self.api_key = lines["MEDIAGEN_API_KEY"]
        self.admin_token = lines["MEDIAGEN_SANDBOX_ADMIN_TOKEN"]
        if self.admin is not None:
            self.admin.close()
        self.admin = AdminClient(self.base_url, self.admin_token)

    def _read_ready_lines(self) -> dict[str, str]:
        assert self.process is not None
        assert self.process.stdout is not None
        wanted = {"MEDIAGEN_BASE_URL", "MEDIAGEN_API_KEY", "MEDIAGEN_SANDBOX_ADMIN_TOKEN"}
        found: dict[str, str] = {}
        deadline = time.monotonic() + READY_TIMEOUT
        buffer = b""
        with selectors.DefaultSelector() as sel:
            sel.register(self.process.stdout, selectors.EVENT_READ)
            while wanted - found.keys():
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.process.poll() is not None:
                    self.kill()
                    raise SandboxError(
                        f"sandbox did not start; see {self._log_path}:\n" + self._log_tail()
                    )
                if not sel.select(timeout=min(remaining, 0.5)):
                    continue
                chunk = os.read(self.process.stdout.fileno(), 4096)
                if not chunk:
                    continue
                buffer += chunk
                *complete, buffer = buffer.split(b"\n")
                for raw in complete:
                    name, _, value = raw.decode().strip().partition("=")
                    if name in wanted:
                        found[name] = value
        return found

    def _log_tail(self) -> str:
        try:
            return self._log_path.read_text(errors="replace")[-3000:]
        except OSError:
            return ""

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM, wait for a clean exit (SIGKILL after ``timeout``)."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        self._reap()

    def kill(self) -> None:
        """SIGKILL the server (and its render workers): a crash, not a shutdown."""
        if self.process is None:
            return
        if self.process.poll() is None:
            with suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
        self._reap()

    def crash(self) -> None:
        """SIGKILL the server process alone, as a crash would: its render workers are not
        signalled (they must notice by themselves). ``start()`` brings it back."""
        if self.process is None:
            return
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
        self._reap()

    def _reap(self) -> None:
        if self.process is not None:
            for pipe in (self.process.stdin, self.process.stdout):
                if pipe is not None:
                    with suppress(OSError):
                        pipe.close()
        self.process = None

    def restart(self) -> None:
        """Stop (if running) and start again on the same data dir and port."""
        self.stop()
        self.start()

    def new_tenant(
        self,
        balance: float = 1000.0,
        plan: str = "pro",
        discount_percent: float = 0.0,
        cap: float | None = None,
    ) -> Tenant:
        assert self.admin is not None
        return self.admin.create_tenant(balance, plan, discount_percent, cap)

    @property
    def returncode(self) -> int | None:
        return None if self.process is None else self.process.poll()


@contextmanager
def running_sandbox(
    data_dir: str | Path | None = None,
    speed: float = 0.0,
    port: int = 0,
    env: dict[str, str] | None = None,
    args: Sequence[str] = (),
) -> Iterator[SandboxHandle]:
    """Start ``python -m mediagen_sandbox`` and yield its handle; stop it on exit.

    ``data_dir=None`` uses a fresh temporary directory, removed afterwards. ``args``: more
    options, such as ``["--http", "h11"]``.
    """
    temporary = data_dir is None
    path = Path(tempfile.mkdtemp(prefix="mediagen-sandbox-")) if temporary else Path(data_dir)
    path.mkdir(parents=True, exist_ok=True)
    handle = SandboxHandle(path, speed, port, env, args)
    try:
        handle.start()
        yield handle
    finally:
        handle.stop()
        if handle.admin is not None:
            handle.admin.close()
        if temporary:
            shutil.rmtree(path, ignore_errors=True)
