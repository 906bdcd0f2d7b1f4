"""deploy/: the Kubernetes manifests against the Kubernetes schemas, the compose file against the
compose spec, both offline (the schemas ship inside kubernetes-validate and check-jsonschema),
and what they say about Suture against Suture itself."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
import yaml

from proxy.app import build_app
from proxy.settings import Settings

REPO = Path(__file__).resolve().parents[2]
MANIFESTS = sorted((REPO / "deploy" / "kubernetes").glob("*.yaml"))
# The oldest Kubernetes the sidecar manifest supports (native sidecars are on by default since
# 1.29) and the newest whose schemas kubernetes-validate ships.
KUBERNETES_VERSIONS = ("1.29.0", "latest")


def documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


def routes() -> set[str]:
    return {getattr(route, "path", "") for route in build_app(Settings()).routes}


def containers(doc: dict[str, Any]) -> list[dict[str, Any]]:
    spec = doc["spec"]["template"]["spec"]
    return [*spec.get("initContainers", []), *spec["containers"]]


def suture_containers() -> list[dict[str, Any]]:
    found = []
    for path in MANIFESTS:
        for doc in documents(path):
            if doc["kind"] == "Deployment":
                found += [c for c in containers(doc) if c["name"] == "suture"]
    return found


def test_there_are_manifests() -> None:
    assert {p.name for p in MANIFESTS} >= {"sidecar.yaml", "gateway.yaml"}


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_manifests_validate_against_the_kubernetes_schemas(path: Path, version: str) -> None:
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    if version == "latest":
        version = kubernetes_validate.latest_version()
    for doc in documents(path):
        # strict: an unknown or misspelt field is an error, not silently ignored by the cluster.
        kubernetes_validate.validate(doc, version, strict=True)


def test_a_wrong_field_is_caught() -> None:
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    [deployment] = [d for d in documents(REPO / "deploy/kubernetes/gateway.yaml") if d["kind"] == "Deployment"]
    deployment["spec"]["template"]["spec"]["containers"][0]["readinessprobe"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, kubernetes_validate.latest_version(), strict=True)


def test_probes_ask_real_routes_on_the_default_port() -> None:
    known = routes()
    assert len(suture_containers()) == 2
    for container in suture_containers():
        [port] = container["ports"]
        assert port["containerPort"] == Settings().port
        assert container["readinessProbe"]["httpGet"]["path"] == "/readyz" in known
        assert container["livenessProbe"]["httpGet"]["path"] == "/healthz" in known
        assert container["securityContext"]["runAsNonRoot"] is True
        # The config file sits where the image's CMD reads it.
        assert [m["mountPath"] for m in container["volumeMounts"]] == ["/etc/suture"]


def test_the_native_sidecar_holds_the_agent_back_until_suture_is_ready() -> None:
    """The kubelet starts a pod's next container once a native sidecar's startupProbe has passed;
    its readinessProbe does not hold the agent back, so without a startupProbe the agent's first
    requests could meet a Suture not yet listening."""
    [deployment] = [d for d in documents(REPO / "deploy/kubernetes/sidecar.yaml") if d["kind"] == "Deployment"]
    [suture] = deployment["spec"]["template"]["spec"]["initContainers"]
    assert suture["restartPolicy"] == "Always"
    probe = suture["startupProbe"]
    assert probe["httpGet"] == {"path": "/readyz", "port": "suture"} and "/readyz" in routes()
    # Long enough for a slow node to start Python, short enough to notice a broken image.
    assert 10 <= probe["periodSeconds"] * probe["failureThreshold"] <= 300


def test_config_maps_hold_valid_suture_settings() -> None:
    for path in MANIFESTS:
        for doc in documents(path):
            if doc["kind"] == "ConfigMap":
                Settings(**yaml.safe_load(doc["data"]["suture.yaml"]))  # unknown keys are errors


def test_the_sidecar_agent_points_its_sdks_at_localhost() -> None:
    [deployment] = [d for d in documents(REPO / "deploy/kubernetes/sidecar.yaml") if d["kind"] == "Deployment"]
    [agent] = [c for c in containers(deployment) if c["name"] == "agent"]
    env = {e["name"]: e.get("value") for e in agent["env"]}
    assert env["OPENAI_BASE_URL"] == f"http://localhost:{Settings().port}/v1"
    assert env["ANTHROPIC_BASE_URL"] == f"http://localhost:{Settings().port}"


def test_the_gateway_scales_the_deployment_its_service_selects() -> None:
    docs = {d["kind"]: d for d in documents(REPO / "deploy/kubernetes/gateway.yaml")}
    deployment, service, hpa = docs["Deployment"], docs["Service"], docs["HorizontalPodAutoscaler"]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "suture"}
    assert hpa["spec"]["minReplicas"] >= 2
    grace = yaml.safe_load(docs["ConfigMap"]["data"]["suture.yaml"])["shutdown_grace_seconds"]
    assert deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] > grace


def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((REPO / "deploy" / "docker-compose.yaml").read_text())
    return loaded


def test_compose_validates_against_the_compose_spec() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    pytest.importorskip("check_jsonschema")
    schema = json.loads(files("check_jsonschema.builtin_schemas.vendor").joinpath("compose-spec.json").read_text())
    jsonschema.validators.validator_for(schema)(schema).validate(compose())


def test_compose_builds_this_repository_and_wires_the_agent() -> None:
    services = compose()["services"]
    suture = services["suture"]
    context = (REPO / "deploy" / suture["build"]["context"]).resolve()
    assert (context / suture["build"]["dockerfile"]).is_file() and context == REPO
    for volume in suture["volumes"]:
        source, target, *_ = volume.split(":")
        assert (REPO / "deploy" / source).resolve().is_file()
        assert target == "/etc/suture/suture.yaml"
    Settings(**{k.removeprefix("SUTURE_").lower(): v for k, v in suture["environment"].items()})
    agent = services["agent"]["environment"]
    assert agent["OPENAI_BASE_URL"] == f"http://suture:{Settings().port}/v1"
    assert services["agent"]["depends_on"]["suture"]["condition"] == "service_healthy"
