#!/usr/bin/env python3
"""Makes the dashboard's offline world outline (Sources/LifeSyncAPI/Dashboard/world.json) from
Natural Earth's 1:110m countries (public domain), as the geopandas 0.14.4 wheel carries them:

    pip download --no-deps geopandas==0.14.4 -d /tmp/ne
    unzip -o -q /tmp/ne/geopandas-0.14.4-py3-none-any.whl 'geopandas/datasets/*' -d /tmp/ne
    python3 .ci/world-outline.py /tmp/ne/geopandas/datasets/naturalearth_lowres/naturalearth_lowres.shp \
        > Sources/LifeSyncAPI/Dashboard/world.json

Reads the shapefile's polygon records (ESRI's format: a 100-byte header, then records of type 5),
rounds every point to 0.1 degree, drops points that round onto the one before, and rings left
with fewer than four points. Output: {"source": ..., "rings": [[lon, lat, lon, lat, ...], ...]}."""
import json, struct, sys

def rings(path):
    data = open(path, "rb").read()
    offset = 100
    while offset + 8 <= len(data):
        _, length = struct.unpack(">ii", data[offset:offset + 8])
        record = data[offset + 8:offset + 8 + 2 * length]
        offset += 8 + 2 * length
        if struct.unpack("<i", record[:4])[0] != 5:
            continue
        parts, points = struct.unpack("<ii", record[36:44])
        starts = list(struct.unpack("<%di" % parts, record[44:44 + 4 * parts])) + [points]
        base = 44 + 4 * parts
        for a, b in zip(starts, starts[1:]):
            ring = []
            for i in range(a, b):
                x, y = struct.unpack("<dd", record[base + 16 * i:base + 16 * i + 16])
                point = [round(x, 1), round(y, 1)]
                if not ring or ring[-2:] != point:
                    ring += point
            if len(ring) >= 8:
                yield ring

print(json.dumps({"source": "Natural Earth 1:110m countries (public domain, naturalearthdata.com), rounded to 0.1 degree",
                  "rings": list(rings(sys.argv[1]))}, separators=(",", ":")))
