#!/usr/bin/env python3
"""Writes the one description of what the gateway serves, from the services' own: every /v1 path of each, their
components, and an operationId for each operation (the services' descriptions name none), from which the generated
client's method names come. The Swift client is generated from it (scripts/generate-client) as one module, so that an
app has one `Client` for the whole system.

A component two services name alike is kept once when both mean the same; otherwise the later service's is renamed
with its service's name in front (matching's Place becomes MatchingPlace), and its references with it.

    Client/openapi/merge.py [OUTPUT]      (default: Client/openapi/openapi.yaml)
"""

import copy
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
# Service by service, in this order; matching's flows share its core's components, as the service itself serves them.
SERVICES = {
    "Accounts": ["Services/Accounts/openapi.yaml"],
    "Places": ["Services/Places/openapi.yaml"],
    "Matching": [f"Services/Matching/{part}/openapi.yaml" for part in ("Core", "Delivery", "Tutoring", "Exchange", "Rides")],
    "Chat": ["Services/Chat/openapi.yaml"],
    "Notifications": ["Services/Notifications/openapi.yaml"],
    "Media": ["Services/Media/openapi.yaml"],
}
METHODS = ("get", "put", "post", "delete", "patch")


def operation_id(method, path):
    """`post /v1/orders/{id}/take` → postOrdersByIdTake."""
    words = []
    for segment in path.split("/")[2:]:
        name = segment.strip("{}")
        parts = [part for part in re.split(r"[^A-Za-z0-9]+", name) if part]
        words.append(("By" if segment.startswith("{") else "") + "".join(part[0].upper() + part[1:] for part in parts))
    return method + "".join(words)


def renamed_references(node, renames):
    """`node` with every `$ref` to a renamed component pointing at its new name."""
    if isinstance(node, dict):
        result = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value in renames:
                result[key] = renames[value]
            else:
                result[key] = renamed_references(value, renames)
        return result
    if isinstance(node, list):
        return [renamed_references(value, renames) for value in node]
    return node


def merged():
    document = {
        "openapi": "3.1.0",
        "info": {
            "title": "Tarrare",
            "version": "1",
            "description": "Everything the gateway serves, merged by Client/openapi/merge.py from the services' own "
                           "descriptions (Services/*/openapi.yaml): edit those, never this.",
        },
        "paths": {},
        "components": {},
    }
    for service, files in SERVICES.items():
        parts = [yaml.safe_load((ROOT / file).read_text()) for file in files]
        components = {}
        for part in parts:
            for kind, entries in (part.get("components") or {}).items():
                components.setdefault(kind, {}).update(entries)
        # What this service names that another already named otherwise gets this service's name in front.
        renames = {}
        for kind, entries in components.items():
            taken = document["components"].get(kind, {})
            for name, value in entries.items():
                if name in taken and taken[name] != value:
                    renames[f"#/components/{kind}/{name}"] = f"#/components/{kind}/{service}{name}"
        for kind, entries in components.items():
            target = document["components"].setdefault(kind, {})
            for name, value in entries.items():
                new = renames.get(f"#/components/{kind}/{name}", f"#/components/{kind}/{name}").rsplit("/", 1)[1]
                target[new] = renamed_references(copy.deepcopy(value), renames)
        for part in parts:
            for path, item in (part.get("paths") or {}).items():
                if not path.startswith("/v1/"):
                    continue
                if path in document["paths"]:
                    raise SystemExit(f"merge.py: {path} is served by two services")
                item = renamed_references(copy.deepcopy(item), renames)
                for method in METHODS:
                    if method in item:
                        item[method] = {"operationId": operation_id(method, path), **item[method]}
                document["paths"][path] = item
    return document


def main():
    output = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "Client" / "openapi" / "openapi.yaml"
    text = yaml.safe_dump(merged(), sort_keys=False, allow_unicode=True, width=120)
    output.write_text("# Written by Client/openapi/merge.py from Services/*/openapi.yaml: edit those, never this.\n" + text)


if __name__ == "__main__":
    main()
