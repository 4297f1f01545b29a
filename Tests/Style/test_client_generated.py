"""The Swift client's generated code is the services' API as it is now: Client/openapi/openapi.yaml is what
Client/openapi/merge.py makes of the services' descriptions, and every file of Client/TarrareAPI was generated from it
(its first line holds the hash of the description and the generator's settings). When this fails, run
scripts/generate-client and commit what it writes."""

import hashlib
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
OPENAPI = ROOT / "Client" / "openapi"
GENERATED = ROOT / "Client" / "TarrareAPI"


def test_the_merged_description_is_the_services_descriptions_as_they_are(tmp_path):
    fresh = tmp_path / "openapi.yaml"
    subprocess.run([sys.executable, OPENAPI / "merge.py", fresh], check=True, cwd=ROOT)
    assert fresh.read_text() == (OPENAPI / "openapi.yaml").read_text(), \
        "Client/openapi/openapi.yaml is stale: run scripts/generate-client"


def test_every_generated_file_comes_from_the_merged_description_and_settings():
    expected = hashlib.sha256(
        (OPENAPI / "openapi.yaml").read_bytes() + (OPENAPI / "openapi-generator-config.yaml").read_bytes()).hexdigest()
    files = sorted(GENERATED.glob("*.swift"))
    assert {file.name for file in files} >= {"Client.swift", "Types.swift"}, files
    for file in files:
        first = file.read_text().split("\n", 1)[0]
        assert first.endswith(f"from Client/openapi: {expected}"), \
            f"{file.name} was generated from another description: run scripts/generate-client"


def test_no_description_has_a_key_without_a_value():
    # In YAML's flow style a comma ends a value: `{ description: From lat,lon when given. }` is the description
    # "From lat" and a key "lon when given." with no value, which the generator refuses.
    empty = []

    def walk(node, path):
        if isinstance(node, dict):
            for key, value in node.items():
                if value is None:
                    empty.append(f"{path}/{key}")
                walk(value, f"{path}/{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{path}[{index}]")

    for file in sorted(ROOT.glob("Services/**/openapi.yaml")):
        walk(yaml.safe_load(file.read_text()), str(file.relative_to(ROOT)))
    assert not empty, empty
