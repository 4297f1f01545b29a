"""Checks docker-compose.yml where no Docker engine runs: against the Compose schema, and against what the rest of
the repository says — the variables the Swift sources read, the executables of Package.swift, the routes of the
gateway, and the secrets deploy/make-secrets.sh writes.

    python3 -m pytest -q Tests/Compose
"""

import json
import os
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path
from urllib.parse import unquote, urlsplit

import jsonschema
import pytest
import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
COMPOSE_FILE = ROOT / "docker-compose.yml"
GATEWAY_TEMPLATE = ROOT / "gateway" / "routes.conf.template"

# What every service needs in production, and accounts' signing key: the source scan must find at least these.
KNOWN_REQUIRED = {"POSTGRES_URL", "AMQP_URL", "JWT_PUBLIC_KEY"}
KNOWN_REQUIRED_BY_SERVICE = {"accounts": {"JWT_PRIVATE_KEY"}}

SHARED_CONFIGURATION_SOURCES = ROOT / "Shared" / "ServiceKit"
SECRETS_DIRECTORY = "/run/secrets/"


# --- Loading --------------------------------------------------------------------------------------------------


@cache
def compose() -> dict:
    return yaml.safe_load(COMPOSE_FILE.read_text())


def services() -> dict:
    return compose()["services"]


def command(service: dict) -> list[str]:
    value = service.get("command") or []
    return value.split() if isinstance(value, str) else list(value)


def swift_services() -> dict[str, dict]:
    """The compose services that run one of our executables (the image puts them in /app)."""
    return {name: s for name, s in services().items() if command(s)[:1] and command(s)[0].startswith("/app/")}


def executable_of(service: dict) -> str:
    return command(service)[0].removeprefix("/app/")


def environment(service: dict) -> dict[str, str]:
    value = service.get("environment") or {}
    if isinstance(value, list):
        value = dict(item.split("=", 1) if "=" in item else (item, None) for item in value)
    return {key: None if v is None else str(v) for key, v in value.items()}


@cache
def package_manifest() -> str:
    return (ROOT / "Package.swift").read_text()


@cache
def executable_products() -> dict[str, list[str]]:
    """Executable product name -> its targets, as Package.swift declares them."""
    products = {}
    for match in re.finditer(r'\.executable\(\s*name:\s*"([^"]+)"\s*,\s*targets:\s*\[([^\]]*)\]', package_manifest()):
        products[match[1]] = re.findall(r'"([^"]+)"', match[2])
    return products


def target_path(target: str) -> Path:
    manifest = package_manifest()
    start = re.search(r'\.(?:executableTarget|target)\(\s*name:\s*"' + re.escape(target) + '"', manifest)
    assert start, f"Package.swift declares no target {target}"
    following = re.search(r"\.(?:executableTarget|target|testTarget|systemLibrary)\(", manifest[start.end() :])
    declaration = manifest[start.end() : start.end() + following.start() if following else len(manifest)]
    path = re.search(r'path:\s*"([^"]+)"', declaration)
    return ROOT / (path[1] if path else f"Sources/{target}")


# --- What the Swift sources read ------------------------------------------------------------------------------

# `reader.string("NAME")`, `reader.integer("NAME", in: ...)`, `reader.fileOrValue("NAME")`, ...
READ_CALL = re.compile(r'\.(string|integer|bool|double|fileOrValue)\(\s*"([A-Z][A-Z0-9_]*)"')
# `reader.string("NAME", required: isProduction)`
REQUIRED_READ = re.compile(r'\.string\(\s*"([A-Z][A-Z0-9_]*)"\s*,\s*required:\s*([^)]+?)\s*\)')
# `ConfigurationError.missing("NAME")`, also `.missing("NAME (or NAME_FILE)")`
MISSING = re.compile(r'\.missing\(\s*"([A-Z][A-Z0-9_]*)')
# `environment["NAME"]`
SUBSCRIPT = re.compile(r'\benvironment\[\s*"([A-Z][A-Z0-9_]*)"\s*\]')


class Reads:
    """The environment variables one executable reads, found in its sources and ServiceKit's."""

    def __init__(self, sources: list[Path]):
        self.kinds: dict[str, set[str]] = {}
        self.required: set[str] = set()
        for source in sources:
            text = source.read_text()
            for kind, name in READ_CALL.findall(text):
                self.kinds.setdefault(name, set()).add(kind)
            for name in SUBSCRIPT.findall(text):
                self.kinds.setdefault(name, set()).add("string")
            for name, condition in REQUIRED_READ.findall(text):
                if condition != "false":
                    self.required.add(name)
            self.required.update(MISSING.findall(text))

    @property
    def files_or_values(self) -> set[str]:
        return {name for name, kinds in self.kinds.items() if "fileOrValue" in kinds}

    @property
    def accepted(self) -> set[str]:
        """Every name that has an effect when set; `X_FILE` stands in for a `fileOrValue("X")`."""
        return set(self.kinds) | {f"{name}_FILE" for name in self.files_or_values}


@cache
def reads(executable: str) -> Reads:
    assert executable in executable_products(), f"Package.swift declares no executable {executable}"
    sources = sorted(SHARED_CONFIGURATION_SOURCES.rglob("*.swift"))
    for target in executable_products()[executable]:
        sources += sorted(target_path(target).rglob("*.swift"))
    return Reads(sources)


# --- The gateway's template -----------------------------------------------------------------------------------


@cache
def gateway_template() -> str:
    return GATEWAY_TEMPLATE.read_text()


def upstream_maps(path: Path) -> dict[str, str]:
    """`$<name>_upstream` -> its value, in one of the gateway's upstream files."""
    return dict(re.findall(r'map "" \$(\w+)_upstream \{ default ([^;]+); \}', path.read_text()))


def template_routes() -> list[tuple[str, str]]:
    """(location, the name of its upstream variable without `_upstream`) for every location that proxies."""
    return [
        (location.strip(), upstream)
        for location, upstream in re.findall(
            r"location\s+([^{]+?)\s*\{[^}]*?proxy_pass\s+http://\$(\w+)_upstream\s*;", gateway_template()
        )
    ]


def template_variables() -> set[str]:
    return set(re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", gateway_template()))


# --- (a) The Compose specification ----------------------------------------------------------------------------


def test_compose_file_follows_the_compose_specification():
    schema = json.loads((HERE / "compose-spec.json").read_text())
    validator = jsonschema.Draft7Validator(schema)

    errors = sorted(validator.iter_errors(compose()), key=lambda e: list(e.absolute_path))

    assert not errors, "\n".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors)


# --- (b) Every variable a service needs is set ----------------------------------------------------------------


def test_the_source_scan_finds_the_known_production_requirements():
    for executable in {executable_of(s) for s in swift_services().values()}:
        expected = KNOWN_REQUIRED | KNOWN_REQUIRED_BY_SERVICE.get(executable, set())

        missing = expected - reads(executable).required

        assert not missing, f"the scan of {executable}'s sources no longer sees {sorted(missing)} as required"


def test_every_swift_service_runs_as_in_production():
    for name, service in swift_services().items():
        env = environment(service)

        assert env.get("ENVIRONMENT") == "production", name
        assert env.get("HTTP_HOST") == "0.0.0.0", f"{name} must listen beyond its own container"
        assert env.get("LOG_FORMAT") == "json", name
        assert env.get("TRUST_FORWARDED_FOR") == "true", f"{name} sits behind the gateway"


def test_every_required_variable_is_set():
    for name, service in swift_services().items():
        executable_reads = reads(executable_of(service))
        env = environment(service)

        for variable in sorted(executable_reads.required):
            names = [variable]
            if variable in executable_reads.files_or_values:
                names.append(f"{variable}_FILE")
            assert any(env.get(n) for n in names), f"{name} needs {' or '.join(names)}"


def test_every_variable_set_is_one_the_service_reads():
    for name, service in swift_services().items():
        unknown = set(environment(service)) - reads(executable_of(service)).accepted

        assert not unknown, f"{name} sets {sorted(unknown)}, which its sources never read (a typo?)"


def test_typed_values_parse():
    for name, service in swift_services().items():
        kinds = reads(executable_of(service)).kinds
        for variable, value in environment(service).items():
            if "integer" in kinds.get(variable, ()):
                assert re.fullmatch(r"\d+", value or ""), f"{name}: {variable}={value!r} is not a whole number"
            if "bool" in kinds.get(variable, ()):
                assert (value or "").lower() in {"1", "true", "yes", "on", "0", "false", "no", "off"}, (
                    f"{name}: {variable}={value!r} is not true or false"
                )


def test_file_variables_name_secrets_the_service_mounts():
    declared = compose().get("secrets") or {}
    for name, service in swift_services().items():
        mounted = {}
        for entry in service.get("secrets") or []:
            source = entry if isinstance(entry, str) else entry["source"]
            target = entry if isinstance(entry, str) else entry.get("target", source)
            mounted[target if target.startswith("/") else SECRETS_DIRECTORY + target] = source

        for variable, value in environment(service).items():
            if variable.endswith("_FILE"):
                assert value in mounted, f"{name}: {variable}={value} is not one of its secrets {sorted(mounted)}"
                assert mounted[value] in declared, f"secret {mounted[value]} is not declared"


def test_secrets_live_where_git_ignores_them():
    for name, secret in (interpolate(compose().get("secrets") or {}, {})).items():
        path = Path(secret["file"])

        assert path.parts[:2] == ("deploy", "secrets"), f"secret {name} must be under deploy/secrets/"
        assert_ignored_by_git(path)
    assert_ignored_by_git(Path(".env"))
    assert_ignored_by_git(Path("deploy/secrets/tls/key.pem"))


def assert_ignored_by_git(path: Path):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    result = subprocess.run(["git", "check-ignore", "-q", "--no-index", str(path)], cwd=ROOT)
    assert result.returncode == 0, f"{path} must be in .gitignore"


# --- (c) The gateway routes only to services that exist -------------------------------------------------------


GATEWAY_FILES = ROOT / "gateway"


def test_every_route_goes_to_a_service_at_its_port():
    routes = template_routes()
    assert routes, "no proxying location found in the template"
    in_compose = upstream_maps(GATEWAY_FILES / "upstreams.compose.conf")
    local = upstream_maps(GATEWAY_FILES / "upstreams.local.conf")
    local_groups = set(re.findall(r"^upstream (\w+) \{", (GATEWAY_FILES / "upstreams.local.conf").read_text(), re.M))
    depends_on = services()["gateway"].get("depends_on") or {}

    for location, upstream in routes:
        assert upstream in in_compose, f"location {location}: upstreams.compose.conf does not set ${upstream}_upstream"
        assert local.get(upstream) in local_groups, f"location {location}: scripts/up's ${upstream}_upstream is no group"
        service, port = in_compose[upstream].split(":")
        assert service in services(), f"location {location} proxies to {service}, which is no compose service"
        assert environment(services()[service])["HTTP_PORT"] == port, f"{service} does not listen on {port}"
        # The first requests would fail while a service is not up yet.
        assert depends_on.get(service, {}).get("condition") == "service_healthy", (
            f"the gateway must wait for {service} to be healthy"
        )


def test_every_variable_of_the_template_is_filled_in_both_ways():
    entrypoint = (GATEWAY_FILES / "entrypoint.sh").read_text()
    substituted = set(re.findall(r"\$\{(\w+)\}", re.search(r"envsubst '([^']*)'", entrypoint)[1]))
    scripts_up = (ROOT / "scripts" / "up").read_text()
    for variable in sorted(template_variables()):
        assert variable in substituted, f"the gateway image does not fill in {variable}"
        assert f"\\${{{variable}}}" in scripts_up, f"scripts/up does not fill in {variable}"


def test_gateway_follows_replicas_as_they_come_and_go():
    conf = (GATEWAY_FILES / "upstreams.compose.conf").read_text()
    # Docker's DNS, asked again within seconds: replicas added by `--scale` get traffic without a restart.
    resolver = re.search(r"^resolver 127\.0\.0\.11 valid=(\d+)s", conf, re.M)
    assert resolver and int(resolver[1]) <= 10
    # A name in a variable is looked up at request time; an upstream group's would be looked up once, at start.
    assert not re.search(r"^\s*upstream ", conf, re.M)


def test_gateway_names_no_version_and_logs_no_query():
    template = gateway_template()
    assert re.search(r"^\s*server_tokens off;", template, re.M)
    log_format = re.search(r"log_format gateway ([^;]*);", template, re.S).group(1)
    # $request and $request_uri carry the query, and with it the stream's access_token.
    for leaking in ("$request ", '$request"', "$request_uri", "$args", "$query_string", "$arg_"):
        assert leaking not in log_format, f"the access log would keep {leaking.strip()}"
    assert re.search(r"^\s*access_log \$\{GATEWAY_ACCESS_LOG\} gateway;", template, re.M)


def test_gateway_image_renders_the_template_and_alone_is_published():
    gateway = services()["gateway"]
    dockerfile = (GATEWAY_FILES / "Dockerfile").read_text()
    assert re.search(r"^COPY gateway/routes\.conf\.template .*gateway/entrypoint\.sh", dockerfile, re.M)
    assert gateway["build"]["dockerfile"] == "gateway/Dockerfile"
    published = [entry.rsplit(":", 1)[1] for entry in gateway.get("ports") or []]
    assert published == ["8080", "8443"]
    for entry in gateway["ports"]:
        assert entry.startswith("${GATEWAY_BIND:-127.0.0.1}:"), f"{entry}: bind to loopback unless told otherwise"
    # coturn relays calls' media, which does not pass through the gateway: its own ports, one per host, on loopback
    # unless told otherwise, its relay range published as it is (the addresses it hands out are the host's).
    for entry in services()["coturn"]["ports"]:
        assert entry.startswith("${TURN_BIND:-127.0.0.1}:"), f"{entry}: bind to loopback unless told otherwise"
    relay = services()["coturn"]["ports"][-1].removeprefix("${TURN_BIND:-127.0.0.1}:").removesuffix("/udp")
    host, container = relay[: len(relay) // 2], relay[len(relay) // 2 + 1 :]
    assert host == container, f"{relay}: the relay ports are published as they are"
    for name, service in services().items():
        if name not in ("gateway", "coturn"):
            assert "ports" not in service, f"{name} must not publish a port: replicas would clash"
            assert "container_name" not in service, f"{name} must not fix its container name: it could not scale"


def test_gateway_image_serves_the_tiles_it_renders_with_long_caching():
    dockerfile = (GATEWAY_FILES / "Dockerfile").read_text()
    entrypoint = (GATEWAY_FILES / "entrypoint.sh").read_text()
    location = re.search(r"^\s*location ~ \^/tiles/(.*?)^    \}", gateway_template(), re.M | re.S)

    rendered = re.search(r"^RUN /build/deploy/tiles/render\.py (\S+)$", dockerfile, re.M)
    copied = re.search(r"^COPY --from=tiles (\S+) (\S+)$", dockerfile, re.M)
    served = re.search(r"^GATEWAY_TILES_ROOT=(\S+)$", entrypoint, re.M)

    assert rendered and copied and served, "the gateway image renders no tiles, or does not serve them"
    assert copied[1] == rendered[1] and copied[2] == served[1]
    assert location and "alias ${GATEWAY_TILES_ROOT}/$1;" in location[1]
    cache = re.search(r'add_header Cache-Control "public, max-age=(\d+)";', location[1])
    assert cache and int(cache[1]) >= 7 * 24 * 3600, "tiles are cached for long"


# --- (d) Compose runs the executables of Package.swift --------------------------------------------------------


def test_each_swift_service_runs_a_declared_executable():
    assert swift_services(), "no compose service runs an executable of /app"
    for name, service in swift_services().items():
        assert executable_of(service) in executable_products(), (
            f"{name} runs {command(service)[0]}, which is no executable product of Package.swift"
        )
        build = service.get("build") or {}
        assert build.get("context") == "." and build.get("dockerfile", "Dockerfile") == "Dockerfile", (
            f"{name} must be built from the Dockerfile"
        )
        assert set(build.get("args") or {}) == {"BASE_IMAGE", "SWIFT_IMAGE"}, name


def test_each_service_executable_runs_as_a_service():
    servers = {executable_of(s) for s in swift_services().values() if len(command(s)) == 1}
    # Tools (the load generator) are executables too, but not services.
    service_products = {
        name for name, targets in executable_products().items()
        if all(target_path(target).is_relative_to(ROOT / "Services") for target in targets)
    }

    missing = service_products - servers

    assert not missing, f"docker-compose.yml runs no service for {sorted(missing)}"


def test_each_server_is_checked_for_readiness_on_its_port():
    for name, service in swift_services().items():
        if len(command(service)) > 1:
            continue
        port = environment(service)["HTTP_PORT"]

        test = " ".join(service["healthcheck"]["test"])

        assert re.search(rf"https?://(localhost|127\.0\.0\.1):{port}/health/ready\b", test), name


def test_dependencies_wait_until_healthy():
    for name, service in services().items():
        depends_on = service.get("depends_on") or {}
        assert isinstance(depends_on, dict), f"{name}: depends_on needs conditions"
        for dependency, condition in depends_on.items():
            if services()[dependency].get("restart") == "no":
                # A one-shot job (the places import): waited for until it has ended well.
                assert condition.get("condition") == "service_completed_successfully", f"{name} on {dependency}"
                continue
            assert condition.get("condition") == "service_healthy", f"{name} must wait for {dependency} to be healthy"
            assert "healthcheck" in services()[dependency], f"{dependency} has no health check to wait for"


# --- The secrets deploy/make-secrets.sh writes ----------------------------------------------------------------

INTERPOLATION = re.compile(
    r"\$(?:(?P<escaped>\$)|(?P<plain>[A-Za-z_][A-Za-z0-9_]*)"
    r"|\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<operator>:?[-?+])(?P<argument>[^}]*))?\})"
)


def interpolate(value, variables: dict[str, str]):
    """Compose's `${NAME}`, `${NAME:?message}`, `${NAME:-default}` and `$$`, on every string of a parsed file."""
    if isinstance(value, dict):
        return {key: interpolate(item, variables) for key, item in value.items()}
    if isinstance(value, list):
        return [interpolate(item, variables) for item in value]
    if not isinstance(value, str):
        return value

    def replace(match):
        if match["escaped"]:
            return "$"
        name = match["plain"] or match["braced"]
        found, operator = variables.get(name), match["operator"]
        if operator in (":?", "?") and (found is None or (operator == ":?" and found == "")):
            raise AssertionError(f"{name} is not set: {match['argument']}")
        if operator in (":-", "-") and (found is None or (operator == ":-" and found == "")):
            return match["argument"]
        return found or ""

    return INTERPOLATION.sub(replace, value)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """A project directory with what deploy/make-secrets.sh writes, and the .env it wrote."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    directory = tmp_path_factory.mktemp("project")
    subprocess.run([ROOT / "deploy" / "make-secrets.sh", directory], check=True, capture_output=True)
    return directory, read_env(directory / ".env")


def read_env(path: Path) -> dict[str, str]:
    lines = [line for line in path.read_text().splitlines() if line and not line.startswith("#")]
    return dict(line.split("=", 1) for line in lines)


def test_make_secrets_provides_all_that_compose_needs(generated):
    directory, variables = generated

    resolved = interpolate(compose(), variables)

    for secret in resolved["secrets"].values():
        assert (directory / secret["file"]).is_file(), f"make-secrets.sh does not write {secret['file']}"
    schema = json.loads((HERE / "compose-spec.json").read_text())
    jsonschema.validate(resolved, schema, cls=jsonschema.Draft7Validator)


def test_make_secrets_keeps_what_exists(generated):
    directory, variables = generated
    keys = {p.name: p.read_bytes() for p in (directory / "deploy" / "secrets").iterdir()}

    subprocess.run([ROOT / "deploy" / "make-secrets.sh", directory], check=True, capture_output=True)

    assert read_env(directory / ".env") == variables
    assert {p.name: p.read_bytes() for p in (directory / "deploy" / "secrets").iterdir()} == keys


def test_jwt_keys_are_an_ed25519_pair(generated):
    directory, _ = generated
    secrets = directory / "deploy" / "secrets"

    derived = subprocess.run(
        ["openssl", "pkey", "-in", secrets / "jwt-private.pem", "-pubout"], check=True, capture_output=True, text=True
    ).stdout
    text = subprocess.run(
        ["openssl", "pkey", "-pubin", "-in", secrets / "jwt-public.pem", "-text", "-noout"],
        check=True, capture_output=True, text=True,
    ).stdout

    assert derived == (secrets / "jwt-public.pem").read_text()
    assert "ED25519" in text


def test_each_service_connects_as_its_own_user_with_a_password_from_env(generated):
    directory, variables = generated
    definitions = json.loads((directory / "deploy" / "secrets" / "rabbitmq-definitions.json").read_text())
    broker_users = {user["name"]: user for user in definitions["users"]}
    permitted = {(p["user"], p["vhost"]) for p in definitions["permissions"]}

    assert "guest" not in broker_users
    assert {"name": "/"} in definitions["vhosts"]
    for name, service in swift_services().items():
        owner = executable_of(service)
        raw = environment(service)
        env = interpolate(raw, variables)
        database, broker = urlsplit(env["POSTGRES_URL"]), urlsplit(env["AMQP_URL"])

        for variable in ("POSTGRES_URL", "AMQP_URL"):
            assert re.match(r"\w+://[^:@/]+:\$\{", raw[variable]), f"{name}: {variable} holds a literal password"
        assert (database.scheme, database.hostname, database.port) == ("postgres", "postgres", 5432), name
        assert (database.username, database.path) == (owner, f"/{owner}"), f"{name} must use the {owner} database"
        assert database.password == variables[f"{owner.upper()}_DB_PASSWORD"], name
        assert (broker.scheme, broker.hostname, broker.port, unquote(broker.path[1:])) == (
            "amqp", "rabbitmq", 5672, "/"
        ), name
        assert broker.username == owner, name
        assert broker_users[owner]["password"] == broker.password, f"{name}: its broker password is not the user's"
        assert (owner, "/") in permitted, name


def test_rabbitmq_loads_the_definitions_secret():
    rabbitmq = services()["rabbitmq"]
    entrypoint = (ROOT / "deploy" / "rabbitmq" / "entrypoint.sh").read_text()
    targets = [
        SECRETS_DIRECTORY + (entry.get("target", entry["source"]) if isinstance(entry, dict) else entry)
        for entry in rabbitmq["secrets"]
    ]

    loaded = re.search(r"^DEFINITIONS=\$\{RABBITMQ_DEFINITIONS:-(\S+)\}", entrypoint, re.MULTILINE)

    assert loaded and loaded[1] in targets
    assert "/run/secrets/erlang-cookie" in targets


def test_the_cluster_override_gives_every_service_all_three_nodes(generated):
    _, variables = generated
    cluster = yaml.safe_load((ROOT / "deploy" / "rabbitmq-cluster.yml").read_text())
    nodes = cluster["services"]["rabbitmq"]["environment"]["RABBITMQ_CLUSTER_NODES"].split()
    assert nodes == ["rabbit@rabbitmq", "rabbit@rabbitmq-2", "rabbit@rabbitmq-3"]
    for node in nodes[1:]:
        assert cluster["services"][node.removeprefix("rabbit@")]["hostname"] == node.removeprefix("rabbit@")
    for name, service in swift_services().items():
        urls = interpolate(cluster["services"][name]["environment"]["AMQP_URL"], variables).split(",")
        assert [urlsplit(url).hostname for url in urls] == ["rabbitmq", "rabbitmq-2", "rabbitmq-3"], name
        expected = interpolate(environment(service)["AMQP_URL"], variables)
        assert urls[0] == expected, f"{name}: the cluster's first node is the one broker's URL"


def test_postgres_init_creates_each_service_database(generated, tmp_path):
    _, variables = generated
    postgres = interpolate(services()["postgres"], variables)
    init = ROOT / "deploy" / "postgres" / "init.sh"
    assert any(v.startswith("./deploy/postgres/init.sh:/docker-entrypoint-initdb.d/") for v in postgres["volumes"])
    # NB: the image runs an executable init script and sources any other, which would leak its `set -u`.
    assert os.access(init, os.X_OK), "deploy/postgres/init.sh must be executable"
    log = tmp_path / "psql.log"
    fake = tmp_path / "bin" / "psql"
    fake.parent.mkdir()
    fake.write_text('#!/usr/bin/env bash\n{ printf "psql"; printf " %q" "$@"; echo; cat; echo; } >>"$PSQL_LOG"\n')
    fake.chmod(0o755)
    env = {
        "PATH": f"{fake.parent}:{os.environ['PATH']}",
        "PSQL_LOG": str(log),
        "POSTGRES_USER": "postgres",
        **environment(postgres),
    }

    subprocess.run([init], env=env, check=True, stdin=subprocess.DEVNULL, capture_output=True)

    calls = log.read_text()
    for owner in {executable_of(s) for s in swift_services().values()}:
        password = variables[f"{owner.upper()}_DB_PASSWORD"]
        assert f"name={owner} " in calls and f"password={password}" in calls, f"init.sh does not create {owner}"
    places = calls[calls.index("--dbname places\n") :]
    for extension in ("postgis", "pg_trgm", "unaccent", "pgrouting"):
        assert f"CREATE EXTENSION IF NOT EXISTS {extension};" in places
