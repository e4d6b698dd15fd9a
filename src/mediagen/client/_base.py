"""What ``Client`` and ``AsyncClient`` share: settings, resources, caches, journal, budget."""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mediagen._version import __version__
from mediagen.client._config import ClientConfig, _Secret
from mediagen.client._requests import RetryPolicy, gate_for

# The output cache, the journal, batches, budgets and the URL redaction of a repr load when
# first used (see ``_drivers``).
if TYPE_CHECKING:
    from typing_extensions import Unpack

    from mediagen.client._batch import BatchItem, BatchResult
    from mediagen.client._budget import Budget
    from mediagen.client._effects import Flow, JournalSubject
    from mediagen.client._models import Estimate, Generation, GenerationOutput, RateStatus
    from mediagen.local._cache import OutputCache
    from mediagen.local._journal import Journal

log = logging.getLogger("mediagen")

USER_AGENT = f"mediagen-python/{__version__}"


class BaseClient:
    """Settings and resources; the I/O lives in the subclasses (``_run`` / ``_iterate``)."""

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float | None = None,
        max_retries: int | None = None,
        poll_interval: Any = None,
        cache_dir: str | Path | None = None,
        journal: Any = None,
        journal_keep_days: float | None = None,
        validate: bool = True,
        download: bool = True,
        estimate: bool = False,
        rate_limit: float | None = None,
        budget: float | Budget | None = None,
        allow_insecure_http: bool | None = None,
        clock: Callable[[], float] | None = None,
        _config: ClientConfig | None = None,
    ) -> None:
        if _config is None:
            options: dict[str, Any] = {
                "timeout": timeout,
                "max_retries": max_retries,
                "cache_dir": cache_dir,
                "journal": journal,
                "journal_keep_days": journal_keep_days,
                "validate": validate,
                "download": download,
                "estimate": estimate,
                "rate_limit": rate_limit,
                "allow_insecure_http": allow_insecure_http,
            }
            if poll_interval is not None:
                options["poll_interval"] = poll_interval
            _config = ClientConfig.resolve(api_key, base_url, **options)
        self._config = _config
        self._policy = RetryPolicy(
            max_retries=_config.max_retries,
            base_delay=_config.retry_base_delay,
            max_delay=_config.retry_max_delay,
            max_retry_after=_config.max_retry_after,
        )
        self._gate = gate_for(_config.base_url, _config.key_fingerprint, _config.rate_limit)
        # A _Secret: even ``vars(client)`` in a traceback or a debugger shows "***".
        self._auth_headers = {"Authorization": _Secret(f"Bearer {_config.api_key}")}
        #: masked in any server text the client surfaces (errors echoing request headers)
        self._secrets = (_config.api_key,)
        self._sent_requests: dict[str, dict[str, Any]] = {}
        self._sent_lock = threading.Lock()
        self._clock = clock or time.monotonic
        self._models_cache: dict[str, Any] = {}
        if budget is None:
            budget = _config.budget
        if budget is not None:
            from mediagen.client._budget import Budget, credit_limit

            if not isinstance(budget, Budget):
                budget = Budget(credit_limit("budget", budget))
        self._budget: Budget | None = budget

    @functools.cached_property
    def journal(self) -> Journal | None:
        """The request journal (None with ``journal=False``); opened on first use."""
        from mediagen.local._compaction import compact_soon
        from mediagen.local._journal import Journal

        path = self._config.journal_path
        journal = Journal(path) if path is not None else None
        # a journal grown past its size is compacted once per process, on its own thread
        compact_soon(journal, self._config.journal_keep_days)
        return journal

    @functools.cached_property
    def _cache(self) -> OutputCache:
        from mediagen.local._cache import OutputCache

        return OutputCache(self._config.cache_dir)

    # --- public helpers -------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The service's base URL (the key is never part of it)."""
        return self._config.base_url

    @property
    def cache_dir(self) -> Path:
        """Where outputs, the journal and the history store are kept (``MEDIAGEN_CACHE_DIR``)."""
        return self._config.cache_dir

    @property
    def budget(self) -> Budget | None:
        """The client-wide budget (``Client(budget=...)``), if any."""
        return self._budget

    def rate_status(self) -> RateStatus:
        """How this process paces the key's requests now: the pace held, the 429s seen and
        any wait after one (shared by every client of this key in the process)."""
        from mediagen.client._models import RateStatus

        gate = self._gate
        return RateStatus(pace=gate.pace, limited=gate.penalties, held_for=gate.waiting_for)

    def __repr__(self) -> str:
        from mediagen.client._errors import shown_url

        return f"{type(self).__name__}(base_url={shown_url(self._config.base_url)!r})"

    def _save(
        self, generation: Generation[Any], directory: str | Path, timeout: float | None = None
    ) -> Flow[list[Path]]:
        from mediagen.client._transport import save_within

        return save_within(self, generation, directory, timeout)

    def _batch_prepare(
        self,
        requests: Iterable[Mapping[str, Any]],
        kind: str | None,
        concurrency: int,
        show_estimate: bool,
        on_estimate: Callable[[float, list[BatchItem[Any]]], Any] | None,
        max_credits: float | None,
    ) -> Flow[BatchResult[Any]]:
        """The flow quoting a batch (see ``submit_batch``); the driver then submits it."""
        from mediagen.client import _batch

        if concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        if on_estimate is None and show_estimate:
            on_estimate = functools.partial(_print_estimate, self)
        return _batch.prepare(self, list(requests), kind, on_estimate, max_credits)

    def _download_output(
        self, output: GenerationOutput, target: str | Path | None, timeout: float | None = None
    ) -> Any:
        from mediagen.client._effects import within
        from mediagen.client._transport import download_output

        return self._run(within(download_output(self, output, target), timeout))

    # --- what a saved output's content credentials say of its request ----------------------

    #: submits remembered per client, for the credentials of their outputs (oldest forgotten)
    _NOTED_REQUESTS = 4096

    def _note_request(self, generation_id: str, body: dict[str, Any], quote: Any) -> None:
        """The request as sent and its estimate, scrubbed as the journal scrubs: the service
        echoes only part of a request, and never the estimate."""
        from mediagen.local._journal import scrub

        note = {
            "request": scrub(body, self._secrets),
            "estimate": quote.to_dict() if quote is not None else None,
        }
        with self._sent_lock:  # a batch submits from a pool of threads
            noted = self._sent_requests
            noted[generation_id] = note
            while len(noted) > self._NOTED_REQUESTS:  # a dict keeps insertion order
                noted.pop(next(iter(noted)))

    def _noted_request(self, generation_id: str | None) -> dict[str, Any] | None:
        with self._sent_lock:
            return self._sent_requests.get(generation_id) if generation_id else None

    # --- journal --------------------------------------------------------------------------

    def _journal_record(
        self, event: str, *subject: Unpack[JournalSubject], inputs: str | None = None
    ) -> dict[str, Any]:
        """One journal line: ``event`` and its subject (kind, body, key, generation, quote)."""
        from mediagen.client._errors import shown_url

        kind, body, key, generation, quote = subject
        from mediagen.local._journal import make_record

        return make_record(
            event,
            service=shown_url(self._config.base_url),
            key_id=self._config.key_fingerprint,
            kind=kind,
            request=body,
            idempotency_key=key,
            generation=generation,
            estimate=quote.to_dict() if quote is not None else None,
            secrets=self._secrets,
            inputs=inputs,
        )

    def _journal_event(self, event: str, *subject: Unpack[JournalSubject]) -> None:
        if self.journal is None:
            return
        try:
            self.journal.append(self._journal_record(event, *subject))
        except OSError as exc:  # the journal must never break a submit
            log.warning("mediagen: could not write the request journal: %s", exc)

    def _journal_attempt(
        self,
        kind: str,
        body: dict[str, Any],
        key: str,
        quote: Estimate | None,
        inputs: str | None = None,
    ) -> str:
        """Journal a submit about to be sent; the idempotency key to send it with.

        That is ``key``, unless an identical request of this API key is unanswered
        (its answer was lost): then that attempt's key, so the service returns the job it may
        already have made instead of charging again.
        """
        if self.journal is None:
            return key
        try:
            claimed = self.journal.claim_or_append(
                self._journal_record("attempt", kind, body, key, None, quote, inputs=inputs)
            )
        except OSError as exc:
            log.warning("mediagen: could not write the request journal: %s", exc)
            return key
        if claimed is None:
            return key
        log.warning(
            "mediagen: an identical request sent earlier got no answer; sending this one with "
            "its idempotency key %s, so it is charged at most once",
            claimed,
        )
        return claimed

    def _journal_lost_inputs(self, kind: str, inputs: str) -> dict[str, Any] | None:
        """The unanswered attempt of this request as given (local files), if any."""
        found = [r for r in self._journal_unanswered() if r.get("kind") == kind]
        return next((r for r in found if r.get("inputs") == inputs), None)

    def _journal_unanswered(self) -> list[dict[str, Any]]:
        if self.journal is None:
            return []
        # by the key (the account), not the URL's spelling: see Journal.claim_or_append
        return self.journal.unanswered(key_id=self._config.key_fingerprint)

    def _journal_finished(self, gen: Generation[Any]) -> None:
        if self.journal is None or not gen.done or not gen.id:
            return
        try:
            if not self.journal.is_finished(gen.id):
                self._journal_event("finished", gen.type, None, gen.idempotency_key, gen, None)
        except OSError as exc:
            log.warning("mediagen: could not write the request journal: %s", exc)

    def _journal_pending(self) -> list[dict[str, Any]]:
        if self.journal is None:
            return []
        return self.journal.pending(key_id=self._config.key_fingerprint)

    # --- to be provided by the drivers ----------------------------------------------------

    def _run(self, flow: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _iterate(self, flow: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _sync_twin(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError


def _print_estimate(client: BaseClient, total: float, items: list[Any]) -> None:
    from mediagen.client import _batch, _hooks

    # shown to the notebook user on purpose: the price, then what higher layers add (forecasts)
    print(_batch.describe(total, items))
    for line in _hooks.estimate_notes(client, items):
        print(line)
