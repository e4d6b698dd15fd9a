"""/openapi.json describes the real error bodies, and a bounded schemathesis run passes."""

from __future__ import annotations

import httpx
import pytest


def test_openapi_declares_error_bodies_and_bearer(sandbox):
    doc = httpx.get(f"{sandbox.base_url}/openapi.json").json()
    assert doc["info"]["version"] == "1.0"
    error = doc["components"]["schemas"]["ErrorBody"]
    assert error["properties"]["error"]
    submit = doc["paths"]["/v1/images"]["post"]
    for status in ("401", "402", "403", "409", "422", "429"):
        ref = submit["responses"][status]["content"]["application/json"]["schema"]["$ref"]
        assert ref.endswith("/ErrorBody")
    assert "Retry-After" in submit["responses"]["429"]["headers"]
    assert submit["security"] == [{"APIKey": []}]
    assert submit["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/ImageRequest"
    )
    assert "HTTPValidationError" not in doc["components"]["schemas"]
    get = doc["paths"]["/v1/generations/{generation_id}"]["get"]
    assert set(get["responses"]) >= {"200", "401", "403", "404", "422", "429"}


@pytest.mark.slow
def test_schemathesis_run_passes(sandbox, tenant_factory, tmp_path):
    """Every phase, stateful included (the document links each submit to its generation and
    the model list to a model): 150 examples per operation, the catalog's example requests,
    default checks, 0 failures. About 40 s on two cores.

    No example database: one in this test's temporary folder would be new every run and gone
    after it, so it could never replay a thing, and keeping one costs a quarter of the run
    (Hypothesis then tracks and shrinks a Pareto front of every operation's examples to save)."""
    import subprocess
    import sys

    tenant = tenant_factory(balance=1_000_000)
    # The document is fetched without the key: an API key outside /v1 is refused (403).
    schema = tmp_path / "openapi.json"
    schema.write_bytes(httpx.get(f"{sandbox.base_url}/openapi.json").content)
    cmd = [
        sys.executable, "-m", "schemathesis.cli", "run", str(schema), "--url", sandbox.base_url,
        "--header", f"Authorization: Bearer {tenant.api_key}",
        "--include-path-regex", "^/v1/",
        "--phases", "examples,coverage,fuzzing,stateful",
        "--max-examples", "150",
        "--checks", "not_a_server_error,status_code_conformance,content_type_conformance,"
        "response_headers_conformance,response_schema_conformance",
        "--seed", "1",
        "--generation-database", "none",
    ]  # fmt: skip
    result = subprocess.run(
        cmd, capture_output=True, text=True, timeout=400, check=False, cwd=tmp_path
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "Stateful" in result.stdout
    assert " 0 covered" not in result.stdout  # the links are followed


def test_openapi_links_submits_to_their_generation(sandbox):
    doc = httpx.get(f"{sandbox.base_url}/openapi.json").json()
    for path in ("/v1/images", "/v1/videos", "/v1/audio"):
        operation = doc["paths"][path]["post"]
        link = operation["responses"]["200"]["links"]["GetGeneration"]
        assert link["parameters"] == {"generation_id": "$response.body#/id"}
        examples = operation["requestBody"]["content"]["application/json"]["examples"]
        assert examples
    assert "413" in doc["paths"]["/v1/images"]["post"]["responses"]
