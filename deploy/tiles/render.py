#!/usr/bin/python3
"""Renders the base map's tiles for every campus from an OpenStreetMap extract, so that the web client's maps need no
third-party tile server (DESIGN.md, "Maps without a third-party tile server").

    deploy/tiles/render.py OUTPUT [--pbf data/helsinki-centre.osm.pbf] [--campuses FILE]... [--zooms 13-18]

writes OUTPUT/{z}/{x}/{y}.png (256 px) for each campus's box (`bounds` in Shared/ServiceKit/campuses.json, and in each
further --campuses file, whose campuses override the bundled ones by domain, as the services read CAMPUSES_FILE) where
it overlaps the extract: a campus the extract does not reach gets no tiles. osmium (Debian's osmium-tool) exports the
extract; each feature this script recognises gets a `kind` and goes into one of the GeoJSON layers that style.xml (next
to this file) draws with Mapnik (Debian's python3-mapnik, hence Debian's own Python in the first line). scripts/up runs
it as part of its import, the gateway's image at its build; both serve OUTPUT at /tiles/.
"""

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import mapnik

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TILE_SIZE = 256
# Tiles are rendered in blocks of up to 8 x 8 and cut apart, with a margin drawn around each block: a label near a
# tile's edge is then placed once for both tiles instead of being cut off at the border.
BLOCK = 8
MARGIN_PIXELS = 128
# Half the Earth's circumference in Web Mercator metres: the world's edge in the tiles' projection.
WORLD_EDGE = 20037508.342789244

LAYERS = ("landcover", "water", "buildings", "railways", "roads", "places")
GREEN = {
    "leisure": {"park", "garden", "pitch", "playground", "dog_park", "common", "nature_reserve"},
    "landuse": {"grass", "meadow", "forest", "recreation_ground", "village_green", "cemetery", "allotments"},
    "natural": {"scrub", "heath", "wood", "wetland", "grassland"},
}
WATER = {"natural": {"water"}, "landuse": {"basin", "reservoir", "pond"}, "waterway": {"riverbank", "dock"}}
WATERWAYS = {"river", "stream", "canal"}
ROADS = {
    "major": {"motorway", "trunk", "primary", "motorway_link", "trunk_link", "primary_link"},
    "secondary": {"secondary", "tertiary", "secondary_link", "tertiary_link"},
    "street": {"residential", "unclassified", "living_street", "road"},
    "service": {"service"},
    "pedestrian": {"pedestrian"},
    "path": {"footway", "cycleway", "path", "steps", "bridleway", "track"},
}
RAILWAYS = {"rail": {"rail", "light_rail", "narrow_gauge"}, "tram": {"tram"}}
DISTRICTS = {"suburb", "quarter", "neighbourhood"}


def main():
    arguments = parse_arguments()
    started = time.monotonic()
    extract = extract_box(arguments.pbf)
    campuses = load_campuses(arguments.campuses)
    boxes = {domain: overlap(box, extract) for domain, box in campuses.items()}
    for domain in sorted(domain for domain, box in boxes.items() if box is None):
        print(f"tiles: {domain} lies outside {arguments.pbf.name}; its maps get no tiles", file=sys.stderr)
    boxes = [box for box in boxes.values() if box is not None]
    with tempfile.TemporaryDirectory() as work:
        write_layers(arguments.pbf, Path(work))
        canvas = mapnik.Map(TILE_SIZE, TILE_SIZE)
        mapnik.load_map(canvas, str(HERE / "style.xml"), True, work + "/")
        canvas.buffer_size = MARGIN_PIXELS
        count = sum(render_zoom(canvas, zoom, boxes, arguments.output) for zoom in arguments.zooms)
    print(f"tiles: {count} at zooms {arguments.zooms[0]}-{arguments.zooms[-1]} for {len(boxes)} campus(es) "
          f"in {time.monotonic() - started:.1f} s, in {arguments.output}", file=sys.stderr)


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", type=Path, help="the folder the tiles go into, as {z}/{x}/{y}.png")
    parser.add_argument("--pbf", type=Path, default=ROOT / "data" / "helsinki-centre.osm.pbf")
    parser.add_argument("--campuses", type=Path, action="append", default=[],
                        help="a JSON file of more campuses (CAMPUSES_FILE); may be given more than once")
    parser.add_argument("--zooms", type=zoom_range, default=range(13, 19), help="first-last, e.g. 13-18")
    return parser.parse_args()


def zoom_range(text):
    first, _, last = text.partition("-")
    return range(int(first), int(last or first) + 1)


# --- Where to render --------------------------------------------------------------------------------------------


def load_campuses(extra_files):
    """Each campus's box (west, south, east, north) by domain: the bundled ones, then those of the extra files."""
    campuses = {}
    for path in [ROOT / "Shared" / "ServiceKit" / "campuses.json", *extra_files]:
        for campus in json.loads(path.read_text()):
            bounds = campus["bounds"]
            campuses[campus["domain"].lower()] = (
                bounds["minLongitude"], bounds["minLatitude"], bounds["maxLongitude"], bounds["maxLatitude"])
    return campuses


def extract_box(pbf):
    """The box (west, south, east, north) the extract says it covers, or the box of its data when it says none."""
    for variable in ("header.boxes", "data.bbox"):
        answer = subprocess.run(["osmium", "fileinfo", "--extended", "--get", variable, str(pbf)],
                                check=True, capture_output=True, text=True).stdout
        numbers = answer.replace("(", " ").replace(")", " ").replace(",", " ").split()
        if len(numbers) >= 4:
            return tuple(float(number) for number in numbers[:4])
    raise SystemExit(f"tiles: {pbf} has no data")


def overlap(box, other):
    west, south = max(box[0], other[0]), max(box[1], other[1])
    east, north = min(box[2], other[2]), min(box[3], other[3])
    return (west, south, east, north) if west < east and south < north else None


def tile_of(longitude, latitude, zoom):
    """The (x, y) of the tile holding a point: x from the west, y from the north."""
    scale = 2**zoom
    x = (longitude + 180) / 360 * scale
    y = (1 - math.asinh(math.tan(math.radians(latitude))) / math.pi) / 2 * scale
    return min(int(x), scale - 1), min(int(y), scale - 1)


def tiles_at(zoom, boxes):
    tiles = set()
    for west, south, east, north in boxes:
        (left, top), (right, bottom) = tile_of(west, north, zoom), tile_of(east, south, zoom)
        tiles.update((x, y) for x in range(left, right + 1) for y in range(top, bottom + 1))
    return tiles


# --- The layers -------------------------------------------------------------------------------------------------


def write_layers(pbf, work):
    """Exports the extract with osmium and writes each layer's features, with their `kind` and `name` alone."""
    exported = work / "extract.geojsonseq"
    subprocess.run(["osmium", "export", "--overwrite", "--output-format=geojsonseq", "-o", str(exported), str(pbf)],
                   check=True)
    layers = {name: [] for name in LAYERS}
    with exported.open() as lines:
        for line in lines:
            feature = json.loads(line.lstrip("\x1e"))
            tags, geometry = feature["properties"], feature["geometry"]
            for layer, kind in classify(tags, geometry["type"]):
                properties = {"kind": kind, "name": tags.get("name", "")}
                layers[layer].append({"type": "Feature", "geometry": geometry, "properties": properties})
    for name, features in layers.items():
        (work / f"{name}.geojson").write_text(json.dumps({"type": "FeatureCollection", "features": features}))


def classify(tags, geometry):
    """The (layer, kind) pairs a feature is drawn in: none for most, two for a named square (its area and its name)."""
    area = geometry in ("Polygon", "MultiPolygon")
    line = geometry in ("LineString", "MultiLineString")
    # NB: what runs under ground is not drawn; a passage through a building is.
    underground = tags.get("tunnel") in ("yes", "culvert") or tags.get("location") == "underground"
    found = []
    if area and tagged(tags, GREEN):
        found.append(("landcover", "green"))
    if area and (tags.get("place") == "square" or tags.get("highway") == "pedestrian"):
        found.append(("landcover", "square"))
        if tags.get("name"):
            found.append(("places", "square"))
    if (area and tagged(tags, WATER)) or (line and tags.get("waterway") in WATERWAYS and not underground):
        found.append(("water", "water"))
    if area and tags.get("building", "no") != "no":
        found.append(("buildings", "building"))
    if line and not underground:
        found += [("roads", kind) for kind, values in ROADS.items() if tags.get("highway") in values]
        found += [("railways", kind) for kind, values in RAILWAYS.items() if tags.get("railway") in values]
    if geometry == "Point" and tags.get("place") in DISTRICTS and tags.get("name"):
        found.append(("places", "district"))
    return found


def tagged(tags, table):
    return any(tags.get(key) in values for key, values in table.items())


# --- Rendering --------------------------------------------------------------------------------------------------


def render_zoom(canvas, zoom, boxes, output):
    """Renders every tile of the boxes at `zoom`, block by block; answers how many."""
    blocks = {}
    for x, y in tiles_at(zoom, boxes):
        blocks.setdefault((x // BLOCK, y // BLOCK), []).append((x, y))
    for tiles in blocks.values():
        render_block(canvas, zoom, tiles, output)
    return sum(len(tiles) for tiles in blocks.values())


def render_block(canvas, zoom, tiles, output):
    """Draws the rectangle of tiles holding `tiles` in one image and saves each of `tiles` cut from it."""
    left, top = min(x for x, _ in tiles), min(y for _, y in tiles)
    right, bottom = max(x for x, _ in tiles), max(y for _, y in tiles)
    canvas.resize((right - left + 1) * TILE_SIZE, (bottom - top + 1) * TILE_SIZE)
    tile_metres = 2 * WORLD_EDGE / 2**zoom
    canvas.zoom_to_box(mapnik.Box2d(
        -WORLD_EDGE + left * tile_metres, WORLD_EDGE - (bottom + 1) * tile_metres,
        -WORLD_EDGE + (right + 1) * tile_metres, WORLD_EDGE - top * tile_metres))
    image = mapnik.Image(canvas.width, canvas.height)
    mapnik.render(canvas, image)
    for x, y in tiles:
        path = output / str(zoom) / str(x) / f"{y}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        # A palette of 256 colours: a third of the size of full colour, and the muted map needs few.
        image.view((x - left) * TILE_SIZE, (y - top) * TILE_SIZE, TILE_SIZE, TILE_SIZE).save(str(path), "png256")


if __name__ == "__main__":
    main()
