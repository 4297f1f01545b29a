#!/usr/bin/env python3
"""Makes the Otaniemi fixtures: a small piece of the bundled Helsinki OpenStreetMap data moved onto Aalto
University's campus at Otaniemi, so that the tests have a second campus with places and streets.

What it cuts: the box lon 24.944-24.952, lat 60.1675-60.1715 of `data/helsinki-centre.osm.pbf` (about 450 m by
450 m around Porthania and the University of Helsinki's main building), whole ways kept (`--strategy
complete_ways`), and of it only the streets and paths (ways with `highway`) and the nodes and ways tagged `amenity`
or `building`; no relations, whose members the cut would leave incomplete.

How it moves it: every node by the same offset, +0.0165 degrees of latitude and -0.120 of longitude, which puts
the centre of the cut on the campus's centre (60.186, 24.828); every node, way and relation id, and every reference
to one, by +10^12. The shapes keep their size (a degree of longitude is 0.05 % shorter there), and the ids, far above
any OpenStreetMap object's, are no real object's and never Helsinki's: a place is keyed by its OpenStreetMap id, so
the same ids would move Helsinki's places to Otaniemi. The script stops when a node lands outside Aalto's box.

What it writes, next to itself:
- `otaniemi.osm.pbf`: the moved extract, for `places import --streets`;
- `otaniemi-places.geojsonseq`: its named places to eat and buildings, exported as a campus exports its own
  (`osmium export --add-unique-id=type_id -f geojsonseq`), for `places import --campus aalto.fi`.

Run it from anywhere with osmium (Debian's osmium-tool) on the PATH: `python3 make-otaniemi.py`. It makes the same
files each time.

The data is © OpenStreetMap contributors, available under the Open Database License 1.0
(https://www.openstreetmap.org/copyright), as data/README.md says; the moved copy is made from it and carries the
same attribution.
"""

import json
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from decimal import Decimal
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parents[2] / "data" / "helsinki-centre.osm.pbf"
STREETS = HERE / "otaniemi.osm.pbf"
PLACES = HERE / "otaniemi-places.geojsonseq"

CUT = "24.944,60.1675,24.952,60.1715"
LATITUDE_OFFSET = Decimal("0.0165")
LONGITUDE_OFFSET = Decimal("-0.120")
ID_OFFSET = 10**12
# Aalto University's box at Otaniemi (Tests/TestSupport/campuses.json): min lat, min lon, max lat, max lon.
AALTO = (Decimal("60.180"), Decimal("24.815"), Decimal("60.192"), Decimal("24.840"))
PLACES_TO_EAT = {"restaurant", "cafe", "fast_food", "pub", "bar", "food_court"}


def osmium(*arguments):
    subprocess.run(["osmium", *arguments], check=True)


def shift(root):
    """Moves every node and every id of the parsed OpenStreetMap XML in place."""
    for bounds in root.iter("bounds"):
        for name, offset in [("minlat", LATITUDE_OFFSET), ("maxlat", LATITUDE_OFFSET),
                             ("minlon", LONGITUDE_OFFSET), ("maxlon", LONGITUDE_OFFSET)]:
            bounds.set(name, str(Decimal(bounds.get(name)) + offset))
    for element in root:
        if element.tag in ("node", "way", "relation"):
            element.set("id", str(int(element.get("id")) + ID_OFFSET))
        if element.tag == "node":
            latitude = Decimal(element.get("lat")) + LATITUDE_OFFSET
            longitude = Decimal(element.get("lon")) + LONGITUDE_OFFSET
            if not (AALTO[0] <= latitude <= AALTO[2] and AALTO[1] <= longitude <= AALTO[3]):
                sys.exit(f"node {element.get('id')} lands at {latitude},{longitude}, outside Aalto's box")
            element.set("lat", str(latitude))
            element.set("lon", str(longitude))
        for reference in element.iter("nd"):
            reference.set("ref", str(int(reference.get("ref")) + ID_OFFSET))
        for member in element.iter("member"):
            member.set("ref", str(int(member.get("ref")) + ID_OFFSET))


def is_place(line):
    """Whether an exported feature is a named place to eat or building, what `places import` keeps."""
    tags = json.loads(line.lstrip("\x1e"))["properties"]
    return "name" in tags and (tags.get("amenity") in PLACES_TO_EAT or tags.get("building", "no") != "no")


def main():
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        osmium("extract", "-b", CUT, "--strategy", "complete_ways", str(SOURCE),
               "-o", str(scratch / "cut.osm.pbf"))
        osmium("tags-filter", str(scratch / "cut.osm.pbf"), "w/highway", "nw/amenity", "nw/building",
               "-o", str(scratch / "kept.osm.pbf"))
        osmium("cat", str(scratch / "kept.osm.pbf"), "-f", "osm,add_metadata=false",
               "-o", str(scratch / "kept.osm"))
        tree = ElementTree.parse(scratch / "kept.osm")
        shift(tree.getroot())
        tree.write(scratch / "moved.osm", encoding="utf-8", xml_declaration=True)
        osmium("cat", str(scratch / "moved.osm"), "-f", "pbf,add_metadata=false", "--overwrite",
               "-o", str(STREETS))
        osmium("export", "--add-unique-id=type_id", "-f", "geojsonseq", str(STREETS),
               "-o", str(scratch / "exported.geojsonseq"))
        with open(scratch / "exported.geojsonseq", encoding="utf-8") as exported:
            places = [line for line in exported if is_place(line)]
        PLACES.write_text("".join(places), encoding="utf-8")
    print(f"wrote {STREETS.name} and {PLACES.name} ({len(places)} places)")


if __name__ == "__main__":
    main()
