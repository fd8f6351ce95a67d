"""deploy/k8s parses and says what the sandbox and the trainers need."""

from pathlib import Path

import yaml

DIRECTORY = Path(__file__).resolve().parents[2] / "deploy" / "k8s"


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
