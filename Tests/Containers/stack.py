"""A compose project of the whole system on the Docker engine, as an operator runs it: its own project name, secrets
made by deploy/make-secrets.sh in a folder of its own, the gateway published on a free loopback port, PostgreSQL
too (for the checks of what every service consumed), a mail server whose inbox the tests read, and everything of it
removed at the end."""

import importlib.util
import json
import os
import random
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SERVICES = ["accounts", "places", "matching", "chat", "notifications", "media"]
PORTS = {"accounts": 8081, "places": 8082, "matching": 8083, "chat": 8084, "notifications": 8085, "media": 8086}


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def eventually(condition, timeout=60.0, interval=0.5, what="the condition"):
    """Calls `condition` until it returns something truthy and returns that; fails naming `what` on time-out."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:.0f} s for {what}; last answer: {result!r}")
        time.sleep(interval)


class Stack:
    """One compose project. `files` are compose files beside docker-compose.yml (an override such as
    deploy/rabbitmq-cluster.yml); the test's own override publishes PostgreSQL on loopback."""

    def __init__(self, name, files=()):
        self.project = f"{name}-{uuid.uuid4().hex[:6]}"
        self.folder = Path(tempfile.mkdtemp(prefix=f"{self.project}-"))
        self.files = [ROOT / "docker-compose.yml", *[ROOT / file for file in files], HERE / "compose.test.yml"]
        self.gateway_port = free_port()
        self.https_port = free_port()
        self.postgres_port = free_port()
        # coturn's listening port, and a small relay range of its own (published as it is), apart from other stacks'.
        self.turn_port = free_port()
        self.turn_tls_port = free_port()
        self.turn_relay = random.randrange(40_000, 48_000, 10)
        subprocess.run([ROOT / "deploy" / "make-secrets.sh", self.folder], check=True, capture_output=True)
        self.secrets = self.folder / "deploy" / "secrets"
        # Where the images come from: the base images deploy/base-images.sh chose, named in the checkout's .env; the
        # services compile on the Swift one, in release, as `docker compose up --build` compiles them for an operator.
        checkout_env = read_env(ROOT / ".env")
        self.env = {
            **os.environ,
            "TARRARE_SECRETS": str(self.secrets),
            "GATEWAY_HTTP_PORT": str(self.gateway_port),
            "GATEWAY_HTTPS_PORT": str(self.https_port),
            "TEST_POSTGRES_PORT": str(self.postgres_port),
            "TURN_PORT": str(self.turn_port),
            "TURN_TLS_PORT": str(self.turn_tls_port),
            "TURN_MIN_PORT": str(self.turn_relay),
            "TURN_MAX_PORT": str(self.turn_relay + 9),
            "TARRARE_TAG": os.environ.get("TARRARE_TAG", "test"),
        }
        for key in ("BASE_IMAGE", "SWIFT_IMAGE"):
            if key in checkout_env and key not in os.environ:
                self.env[key] = checkout_env[key]
        self.passwords = read_env(self.folder / ".env")
        self.gateway = f"http://127.0.0.1:{self.gateway_port}"
        # The mail server's folder (compose.test.yml): its inbox, and its certificate, which accounts trusts.
        self.mail = self.folder / "mail"
        (self.mail / "inbox").mkdir(parents=True)
        mailserver_module().make_certificate(self.mail / "cert.pem", self.mail / "key.pem")
        (self.mail / "cert.pem").chmod(0o644)
        self.env["TEST_MAIL_FOLDER"] = str(self.mail)
        self.env["TEST_MAIL_PASSWORD"] = secrets.token_hex(16)

    def command(self, *arguments):
        """The compose command line of this project with `arguments`."""
        command = ["docker", "compose", "-p", self.project, "--project-directory", ROOT,
                   "--env-file", self.folder / ".env"]
        for file in self.files:
            command += ["-f", file]
        return [*command, *arguments]

    def compose(self, *arguments, check=True, timeout=600):
        answer = subprocess.run(self.command(*arguments), env=self.env, capture_output=True, text=True, timeout=timeout)
        if check and answer.returncode != 0:
            raise AssertionError(f"docker compose {' '.join(map(str, arguments))} failed:\n{answer.stderr[-3000:]}")
        return answer

    def up(self, *arguments):
        """Starts (or changes) the project and waits until every container is healthy."""
        self.compose("up", "-d", "--wait", *arguments, timeout=900)

    def down(self):
        """Removes every container, network and volume of the project, and its secrets."""
        self.compose("down", "--volumes", "--remove-orphans", "--timeout", "5", check=False)
        shutil.rmtree(self.folder, ignore_errors=True)

    def containers(self, service):
        """The names of a service's running containers."""
        answer = self.compose("ps", "--format", "json", service)
        rows = [json.loads(line) for line in answer.stdout.splitlines() if line.strip()]
        return sorted(row["Name"] for row in rows if row.get("State") == "running")

    def exec(self, container, *command, check=True):
        answer = subprocess.run(["docker", "exec", container, *command], capture_output=True, text=True, timeout=120)
        if check and answer.returncode != 0:
            raise AssertionError(f"{' '.join(command)} in {container} failed: {answer.stderr[-2000:]}")
        return answer.stdout

    def metrics(self, container, service):
        """The Prometheus text a replica serves on its own port."""
        return self.exec(container, "curl", "-fsS", f"http://127.0.0.1:{PORTS[service]}/metrics")

    def logs(self, *services):
        return self.compose("logs", "--no-color", *services, check=False).stdout

    def system_env(self):
        """The database URLs of every service as the system tests read them (the passwords of this project's .env)."""
        env = {}
        for service in SERVICES:
            password = self.passwords[f"{service.upper()}_DB_PASSWORD"]
            env[f"{service.upper()}_POSTGRES_URL"] = \
                f"postgres://{service}:{password}@127.0.0.1:{self.postgres_port}/{service}"
        return env

    def system_env_file(self):
        path = self.folder / "system-env.json"
        path.write_text(json.dumps(self.system_env()))
        return path

    def run_system_tests(self, *tests):
        """Runs Tests/System modules against this stack's gateway; returns pytest's output, failing with it."""
        env = {**os.environ, "TARRARE_GATEWAY": self.gateway, "TARRARE_SYSTEM_ENV": str(self.system_env_file()),
               "TARRARE_MAIL_DIR": str(self.mail / "inbox")}
        # NB: scripts/test names the local system's mail server here; this stack's is not a process to stop.
        env.pop("TARRARE_MAIL_SERVER", None)
        answer = subprocess.run(
            ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", *[ROOT / "Tests" / "System" / t for t in tests]],
            env=env, capture_output=True, text=True, timeout=900, cwd=ROOT)
        assert answer.returncode == 0, answer.stdout[-6000:] + answer.stderr[-2000:]
        return answer.stdout


def mailserver_module():
    """Tests/System/mailserver.py as a module, for its certificate."""
    spec = importlib.util.spec_from_file_location("mailserver", ROOT / "Tests" / "System" / "mailserver.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def system_modules(stack):
    """The system tests' helpers (students, deliveries in the background, the checks of what was consumed), pointed
    at `stack`'s gateway and mail. NB: Tests/System's conftest is imported once per process, so each stack points it
    anew."""
    os.environ["TARRARE_GATEWAY"] = stack.gateway
    os.environ["TARRARE_MAIL_DIR"] = str(stack.mail / "inbox")
    if str(ROOT / "Tests" / "System") not in sys.path:
        sys.path.insert(0, str(ROOT / "Tests" / "System"))
    import conftest as system_conftest
    import traffic
    system_conftest.GATEWAY = stack.gateway
    return system_conftest, traffic


def delivery_pairs(stack, count=4):
    """`count` pairs of an orderer and a deliverer, each at its own restaurant near Porthania, ready for `Traffic`."""
    system_conftest, traffic = system_modules(stack)
    scout = system_conftest.Student("Scout")
    centre = scout.get("/v1/places", q="porthania", kind="building", limit=1).json()["places"][0]
    near = lambda kind: scout.get(
        "/v1/places/nearby", lat=centre["latitude"], lon=centre["longitude"], radius=500, kind=kind, limit=20,
    ).json()["places"]
    restaurants, buildings = near("restaurant"), near("building")
    return [traffic.Pair(index, restaurants[index]["id"], buildings[index]["id"]) for index in range(count)]


def read_env(path):
    values = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if "=" in line and not line.lstrip().startswith("#"):
                key, _, value = line.partition("=")
                values[key.strip()] = value.strip()
    return values


def build_images():
    """Builds every image of both projects the container tests run (the system alone, and on a three-node broker), as
    their fixtures build them: the same files, arguments and context, so that the fixtures' builds find each step done
    in the engine's cache."""
    for files in [(), ("deploy/rabbitmq-cluster.yml",)]:
        stack = Stack("tarrare-images", files=files)
        try:
            # NB: every line of the build, as it comes and with the time it came, into the log: what each step took,
            # and a failing step's own output, which comes before its long command line.
            command = stack.command("--progress", "plain", "build")
            with subprocess.Popen(command, env=stack.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True) as build:
                for line in build.stdout:
                    print(time.strftime("%H:%M:%S"), line, end="", flush=True)
            if build.returncode != 0:
                sys.exit(f"docker compose build failed (exit status {build.returncode}): its output is above")
        finally:
            shutil.rmtree(stack.folder, ignore_errors=True)


if __name__ == "__main__":
    # `python3 Tests/Containers/stack.py build`: scripts/test runs it in the background, long before the container
    # tests, at the lowest CPU weight.
    if sys.argv[1:] != ["build"]:
        sys.exit("usage: stack.py build")
    build_images()
