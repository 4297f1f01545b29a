"""The Swift code follows the formatter's configuration (`.swift-format` at the root, read by the toolchain's
swift-format): four spaces, 120 columns. Format with `swift format -i -r Package.swift Services Shared Tools Tests Client/TarrareClient` (Client/TarrareAPI is generated)."""

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ["Package.swift", "Services", "Shared", "Tools", "Tests", "Client/TarrareClient"]


def test_the_swift_code_follows_the_formatter_configuration():
    answer = subprocess.run(
        ["swift", "format", "lint", "--strict", "--recursive", "--configuration", ROOT / ".swift-format", *SOURCES],
        cwd=ROOT, capture_output=True, text=True, timeout=300)

    assert answer.returncode == 0 and answer.stderr == "", answer.stderr[-5000:]
